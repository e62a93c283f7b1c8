package qa

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

// shelf is metadata for routing tests: book titles and the text of each
// book's first chunk (its cover page).
type shelf struct {
	Library
	titles, covers map[string]string
}

// adder returns a function that shelves a book with its title and cover
// page and puts it in the filter's scope.
func (s shelf) adder(f *citebook.Filter) func(id, title, cover string) {
	return func(id, title, cover string) {
		s.titles[id], s.covers[id] = title, cover
		f.Books = append(f.Books, citebook.BookScope{BookID: id, Version: 1})
	}
}

func (s shelf) Book(_ context.Context, id string) (*citebook.Book, error) {
	return &citebook.Book{ID: id, Title: s.titles[id]}, nil
}

func (s shelf) ChunksAt(_ context.Context, id string, _ int) ([]citebook.Chunk, error) {
	return []citebook.Chunk{
		{ID: id + "-1", BookID: id, ParentID: id + "/cover", PageStart: 1, Text: s.covers[id]},
		{ID: id + "-9", BookID: id, ParentID: id + "/secret", PageStart: 9, Ordinal: 9, Text: "Project Bluebird (PBB) is confidential."},
	}, nil
}

func TestRouteBooksByMetadata(t *testing.T) {
	s := shelf{titles: map[string]string{}, covers: map[string]string{}}
	var f citebook.Filter
	add := s.adder(&f)
	boiler := "UNITED STATES SECURITIES AND EXCHANGE COMMISSION FORM 10-K ANNUAL REPORT PURSUANT TO SECTION 13 "
	add("BESTBUY_2017_10K", "BESTBUY_2017_10K", boiler+"For the fiscal year ended January 28, 2017. BBY")
	add("3M_2018_10K", "3M_2018_10K", boiler+"For the fiscal year ended December 31, 2018. 3M COMPANY")
	add("3M_2022_10K", "3M_2022_10K", boiler+"For the fiscal year ended December 31, 2022. 3M COMPANY")
	add("AMAZON_2017_10K", "AMAZON_2017_10K", boiler+"For the fiscal year ended December 31, 2017. AMAZON.COM, INC.")
	add("BOEING_2018_10K", "BOEING_2018_10K", boiler+"For the fiscal year ended December 31, 2018. The Boeing Company")
	add("annual", "Annual report", boiler+"For the fiscal year ended June 30, 2019. Pfizer Inc.")
	add("R-intro", "An Introduction to R", "Notes on R: A Programming Environment for Data Analysis and Graphics")
	p := &Pipeline{deps: Deps{Library: s, Books: s}}

	for _, tc := range []struct {
		q      string
		routed []string
	}{
		{"What is the FY2018 capital expenditure amount (in USD millions) for 3M?", []string{"3M_2018_10K"}},
		{"How did 3M's revenue change?", []string{"3M_2018_10K", "3M_2022_10K"}},
		{"What was Pfizer's revenue in fiscal 2019?", []string{"annual"}}, // named on the cover only
		{"How do I write a function in R?", []string{"R-intro"}},
		{"What was Best Buy's revenue growth?", []string{"BESTBUY_2017_10K"}}, // the title joins the name's words
		{"What is the revenue?", nil},                                         // names no book
	} {
		t.Run(tc.q, func(t *testing.T) {
			scores, _, err := p.route(context.Background(), tc.q, f)
			require.NoError(t, err)
			require.Len(t, scores, len(f.Books), "every book is listed with its score")
			var got []string
			for _, s := range scores {
				if s.Routed {
					got = append(got, s.BookID)
				}
			}
			require.Equal(t, tc.routed, got, "%+v", scores)
			for i := 1; i < len(scores); i++ {
				require.GreaterOrEqual(t, scores[i-1].Score, scores[i].Score, "best first")
			}
			rf, ok := routedFilter(f, scores)
			require.Equal(t, len(tc.routed) > 0, ok)
			if ok {
				require.Len(t, rf.Books, len(tc.routed))
			}
		})
	}

	// A reader denied a section is neither routed by its text nor shown
	// its definitions: profiles are cached for every reader of a book.
	deny := f
	deny.DenyParents = []string{"annual/cover", "annual/secret"}
	scores, _, err := p.route(context.Background(), "What was Pfizer's revenue in fiscal 2019?", deny)
	require.NoError(t, err)
	for _, s := range scores {
		require.False(t, s.Routed && s.BookID == "annual", "%+v", scores)
		if s.BookID == "annual" {
			require.Empty(t, s.Period, "nor shown the period its denied cover states")
		} else if s.BookID == "3M_2018_10K" {
			require.Equal(t, "10-K FY2018 2018-12-31", s.Period)
		}
	}
	defs, err := p.scopeDefinitions(context.Background(), f)
	require.NoError(t, err)
	require.Equal(t, "project bluebird", defs["pbb"].long)
	annual := citebook.Filter{Books: []citebook.BookScope{{BookID: "annual", Version: 1}}, DenyParents: deny.DenyParents}
	defs, err = p.scopeDefinitions(context.Background(), annual)
	require.NoError(t, err)
	require.NotContains(t, defs, "pbb")

	// A scope of one or two books has nothing to route.
	scores, _, err = p.route(context.Background(), "3M 2018", citebook.Filter{Books: f.Books[:2]})
	require.NoError(t, err)
	require.Nil(t, scores)
}

// Merging keeps a chunk once with its better score, lifts the routed books'
// chunks and reports the whole scope's ranks in the trace.
func TestMergeRouted(t *testing.T) {
	c := func(id, book string, fused float64, lexRank int) *candidate {
		return &candidate{chunk: &citebook.Chunk{ID: id, BookID: book}, fused: fused, lexRank: lexRank, seenLex: lexRank}
	}
	all := []*candidate{c("x1", "x", 0.9, 1), c("a1", "a", 0.5, 2)}
	routed := []*candidate{c("a1", "a", 1.0, 1), c("a2", "a", 0.7, 2)}
	scores := []BookScore{{BookID: "a", Score: 4, Routed: true}, {BookID: "x", Score: 1}}
	got := merge(all, routed, scores, 0.5)
	var ids []string
	for _, c := range got {
		ids = append(ids, c.chunk.ID)
	}
	require.Equal(t, []string{"a1", "a2", "x1"}, ids)
	require.InDelta(t, 1.5, got[0].fused, 1e-12)
	require.Equal(t, 2, got[0].seenLex, "the trace shows the rank in the whole scope")
	require.Equal(t, 0, got[1].seenLex, "found only in the routed books")
}

// Routing reads the names a question writes, not its ordinary words (the
// capitalised first word of a sentence passes, as a name could open it).
func TestRouteTerms(t *testing.T) {
	require.Equal(t, []string{"among", "best", "buy", "fy2023", "fy", "2023", "bestbuy"},
		routeTerms("Among operations, investing, and financing activities, which brought in the most cash flow for Best Buy in FY2023?"))
	require.Equal(t, []string{"3m", "fy2018"}, routeTerms("What is 3M's FY2018 capital expenditure?")[:2])
	require.Empty(t, routeTerms("how do i reshape a data frame?"))
	require.Contains(t, routeTerms("《红楼梦》的作者是谁？"), "红楼")
}

// TestCover: a book's cover is its first page; without pages, its first two
// chunks — or all of it when it is no longer than a cover (a short article
// whose third paragraph names what a question routes by).
func TestCover(t *testing.T) {
	chunk := func(ord, page, size int) citebook.Chunk {
		text := make([]byte, size)
		for i := range text {
			text[i] = 'x'
		}
		return citebook.Chunk{ID: string(rune('a' + ord)), Ordinal: ord, PageStart: page, Text: string(text)}
	}
	ids := func(cs []citebook.Chunk) string {
		out := ""
		for _, c := range cs {
			out += c.ID
		}
		return out
	}
	for _, c := range []struct {
		name   string
		chunks []citebook.Chunk
		want   string
	}{
		{"paged", []citebook.Chunk{chunk(2, 2, 100), chunk(0, 1, 100), chunk(1, 1, 100)}, "ab"},
		{"short, no pages", []citebook.Chunk{chunk(0, 0, 300), chunk(1, 0, 300), chunk(2, 0, 300)}, "abc"},
		{"long, no pages", []citebook.Chunk{chunk(0, 0, 3000), chunk(1, 0, 3000), chunk(2, 0, 3000)}, "ab"},
	} {
		require.Equal(t, c.want, ids(cover(c.chunks)), c.name)
	}
}
