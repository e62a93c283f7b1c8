package citation_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/citation"
	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/popplerbox"
	"github.com/stretchr/testify/require"
)

func TestBoxesGroupByLineAndPage(t *testing.T) {
	words := []citebook.WordBox{
		{Start: 0, End: 3, Line: 0, Box: citebook.Box{Page: 4, X0: .1, Y0: .80, X1: .15, Y1: .82}},
		{Start: 4, End: 9, Line: 0, Box: citebook.Box{Page: 4, X0: .16, Y0: .80, X1: .25, Y1: .83}},
		{Start: 10, End: 14, Line: 1, Box: citebook.Box{Page: 5, X0: .1, Y0: .10, X1: .2, Y1: .12}, OCR: true},
		{Start: 15, End: 20, Line: 1, Box: citebook.Box{Page: 5, X0: .21, Y0: .10, X1: .3, Y1: .12}, OCR: true},
	}
	tests := []struct {
		name       string
		start, end int
		want       []citebook.Box
		ocr        bool
	}{
		{"one word", 4, 9, []citebook.Box{{Page: 4, X0: .16, Y0: .80, X1: .25, Y1: .83}}, false},
		{"one line", 0, 9, []citebook.Box{{Page: 4, X0: .1, Y0: .80, X1: .25, Y1: .83}}, false},
		{"over the page break", 5, 12, []citebook.Box{{Page: 4, X0: .16, Y0: .80, X1: .25, Y1: .83},
			{Page: 5, X0: .1, Y0: .10, X1: .2, Y1: .12}}, true},
		{"nothing", 30, 40, []citebook.Box{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ocr := citation.Boxes(words, tt.start, tt.end)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.ocr, ocr)
		})
	}
}

// TestQuoteBoxesMatchPoppler draws 20 random quotes of two real books as
// citations and checks that every printed line the quote covers, as poppler
// places its words, is matched by one of the citation's boxes with an IoU of
// at least 0.5.
func TestQuoteBoxesMatchPoppler(t *testing.T) {
	for _, book := range []string{"books/R-intro.pdf", "books/debian-reference.en.pdf"} {
		t.Run(book, func(t *testing.T) {
			file := corpus.Path(t, book)
			doc, err := ingest.ParseFile(context.Background(), file)
			require.NoError(t, err)
			tok, err := ingest.NewTokenizer()
			require.NoError(t, err)
			_, chunks := ingest.Split(doc, "b", tok, ingest.DefaultChunkOptions())
			rng := rand.New(rand.NewPCG(14, 1))
			checked, skipped, lines, worst := 0, 0, 0, 1.0
			for tries := 0; checked < 20 && tries < 400; tries++ {
				c := chunks[rng.IntN(len(chunks))]
				fields := strings.Fields(c.Text)
				if len(fields) < 30 {
					continue
				}
				n := 6 + rng.IntN(20)
				from := rng.IntN(len(fields) - n)
				quote := strings.Join(fields[from:from+n], " ")
				cit, reason := citation.Locate(c, quote)
				if reason != "" {
					continue
				}
				cit.Boxes, _ = citation.Boxes(c.Geometry, cit.CharStart, cit.CharEnd)
				require.NotEmpty(t, cit.Boxes, "no boxes for %q", quote)
				first, last := cit.Boxes[0].Page, cit.Boxes[len(cit.Boxes)-1].Page
				want := popplerbox.Lines(popplerbox.Pages(t, file, first, last), first, cit.Quote)
				if want == nil {
					skipped++ // poppler reads these words differently; not a geometry question
					continue
				}
				checked++
				for _, w := range want {
					best := 0.0
					for _, b := range cit.Boxes {
						best = math.Max(best, popplerbox.IoU(w, b))
					}
					lines++
					worst = math.Min(worst, best)
					require.GreaterOrEqual(t, best, 0.5, "quote %q line %+v: boxes %+v", cit.Quote, w, cit.Boxes)
				}
				// And no box is drawn where poppler prints none of the words.
				for _, b := range cit.Boxes {
					best := 0.0
					for _, w := range want {
						best = math.Max(best, popplerbox.IoU(w, b))
					}
					require.GreaterOrEqual(t, best, 0.5, "quote %q box %+v: lines %+v", cit.Quote, b, want)
				}
			}
			require.Equal(t, 20, checked, "too few quotes poppler could place")
			require.Less(t, skipped, checked, "poppler could not place most quotes")
			t.Logf("%s: %d quotes (%d others poppler reads differently), %d lines, worst IoU %.2f", book, checked, skipped, lines, worst)
		})
	}
}
