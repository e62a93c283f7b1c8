package qa

import (
	"context"
	"regexp"
	"sort"
	"strings"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
)

// A reader names the book they ask about — "Why did Thoreau keep three
// chairs?" of Walden, "What did Seltzer and Yigit measure?" of their paper —
// and the book states that name only on its title pages. Searched as a
// word, the name is the question's rarest term: BM25 ranked Walden's title
// and publisher pages first for "Why did Thoreau eventually give up living at
// the pond?", the threshold found no passage holding the question's main
// weight, and answerability refused questions the text answers because no
// passage of it says "Thoreau". Such a name says which book to search (book
// routing reads it from the asked question), not which passage answers, so
// retrieval and the answerability check take the question without it.

// Title pages: a book's first chunks, while short. A paper's first chunk
// of text, its abstract, is long and stays content.
const (
	titleChunks   = 5  // read among a book's first chunks
	titleMaxTerms = 40 // a longer chunk is text, not a title page
	// nameSlack is how many chunks beyond its title pages may hold a name
	// that is still only the book's name (a running head, a dedication).
	nameSlack = 1
)

// titlePages returns the terms of the short chunks among the first of cs
// (sorted by ordinal).
func titlePages(cs []citebook.Chunk) []sectionTerms {
	var out []sectionTerms
	for _, c := range cs[:min(len(cs), titleChunks)] {
		if ts := analysis.Terms(c.Text); len(ts) <= titleMaxTerms {
			out = append(out, sectionTerms{parent: c.ParentID, terms: analysis.TermSet(ts)})
		}
	}
	return out
}

// possessive matches a word with its possessive ("Thoreau's"), the unit a
// book name is cut from the question in.
var possessive = regexp.MustCompile(`[\p{L}\p{N}]+(?:['’]s\b)?`)

// bookNames returns the question with the names of the books in f that
// only their title pages hold (see above) cut out, and those names; the
// question itself and nil when it names none, or when nothing else of it
// would be left to search.
func (p *Pipeline) bookNames(ctx context.Context, question string, f citebook.Filter) (string, []string, error) {
	if p.deps.Stats == nil || p.deps.Books == nil || p.deps.Terms == nil || len(f.Books) == 0 {
		return question, nil, nil
	}
	var names []string
	for _, t := range routeTerms(question) { // each once
		if isWord(t) {
			names = append(names, t)
		}
	}
	if len(names) == 0 {
		return question, nil, nil
	}
	deny := denied(f)
	onTitle := make([]int, len(names))
	for _, b := range f.Books {
		pr, err := p.profile(ctx, b)
		if err != nil {
			return "", nil, err
		}
		for i, t := range names {
			for _, s := range pr.titlePages {
				if s.terms[t] && !deny[s.parent] {
					onTitle[i]++
				}
			}
		}
	}
	var cands []string
	var counts []int
	for i, t := range names {
		if onTitle[i] > 0 {
			cands, counts = append(cands, t), append(counts, onTitle[i])
		}
	}
	if len(cands) == 0 {
		return question, nil, nil
	}
	df, _, err := p.deps.Stats.DocFreq(ctx, cands, f)
	if err != nil || len(df) != len(cands) {
		return question, nil, nil // without statistics the name is searched as a word
	}
	drop := map[string]bool{}
	var found []string
	for i, t := range cands {
		if df[i] <= counts[i]+nameSlack {
			drop[t] = true
			found = append(found, t)
		}
	}
	if len(found) == 0 {
		return question, nil, nil
	}
	out := possessive.ReplaceAllStringFunc(question, func(w string) string {
		ts := p.deps.Terms(w)
		if len(ts) == 0 {
			return w
		}
		for _, t := range ts {
			if t = strings.ToLower(t); !drop[t] && t != "s" {
				return w
			}
		}
		return ""
	})
	out = strings.Join(strings.Fields(out), " ")
	if len(questionTerms(out, p.deps.Terms)) == 0 {
		return question, nil, nil // "Who was Thoreau?" asks about the name itself
	}
	sort.Strings(found)
	return out, found, nil
}
