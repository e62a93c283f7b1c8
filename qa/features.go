package qa

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
)

// query features: what a question names as phrases, matched against each
// candidate's heading path and text after fusion. BM25 scores words one by
// one; it cannot tell a page titled "Consolidated Statements of Cash Flows"
// from a note that mentions cash three times, nor a row "Purchases of
// property, plant and equipment" from a paragraph holding those words far
// apart.
type queryFeatures struct {
	// phrases are the vocabulary phrases of the groups the question names
	// (its own wording and the other names), as padded term strings.
	phrases []string
	// titles are the squashed titles of the statements the question names
	// (see titleIndex), matched against the squashed heading path.
	titles []string
	// titleQuery searches for the pages of the kinds the question names
	// (their titles as written), so a statement page the question's own
	// words do not reach still becomes a candidate; "" when none.
	titleQuery string
	titled     []citebook.Hit // what titleQuery found
	// seen keeps each chunk's analysed heading and text, since the search
	// of the routed books meets the same chunks again.
	seen map[string]chunkTerms
	// pairs are the question's adjacent content terms ("data frame",
	// "capital expenditure"), matched as adjacent content terms.
	pairs []string
	// salient weighs the question's key terms for the section and
	// coverage features; nil without term statistics.
	salient *salient
}

func (p *Pipeline) queryFeatures(query string) queryFeatures {
	terms := analysis.Terms(query)
	qterms := " " + strings.Join(terms, " ") + " "
	var f queryFeatures
	for _, g := range p.thesaurus {
		named := false
		for _, s := range g {
			if strings.Contains(qterms, s.terms) {
				named = true
				break
			}
		}
		if named {
			for _, s := range g {
				f.phrases = append(f.phrases, s.terms)
			}
		}
	}
	for _, s := range f.phrases {
		f.titles = append(f.titles, strings.ReplaceAll(s, " ", ""))
	}
	f.titles = append(f.titles, p.pageKinds.titles(qterms)...)
	f.titleQuery = strings.Join(p.pageKinds.written(qterms), "; ")
	content := contentRun(terms)
	seen := map[string]bool{}
	for i := 1; i < len(content); i++ {
		pair := " " + content[i-1] + " " + content[i] + " "
		if !seen[pair] {
			seen[pair] = true
			f.pairs = append(f.pairs, pair)
		}
	}
	return f
}

// contentRun drops stop words and CJK terms (whose index terms are already
// character pairs) and keeps the order of the rest.
func contentRun(terms []string) []string {
	out := make([]string, 0, len(terms))
	for _, t := range terms {
		if analysis.IsStopword(t) {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(t); analysis.IsCJK(r) {
			continue
		}
		out = append(out, t)
	}
	return out
}

func (f *queryFeatures) empty() bool {
	return len(f.phrases) == 0 && len(f.titles) == 0 && len(f.pairs) == 0
}

// boost adds the weighted features to each candidate's own evidence: a
// named phrase in its headings (the statement a page is), a named phrase in
// its text (the line item), and the share of the question's adjacent term
// pairs its text holds adjacent too (term proximity).
func boost(f *queryFeatures, cands []*candidate, w Fusion) {
	if f == nil || f.empty() || w.Heading == 0 && w.Phrase == 0 && w.Proximity == 0 {
		return
	}
	if f.seen == nil {
		f.seen = map[string]chunkTerms{}
	}
	// Counted whatever the weights, since seen keeps the counts for the
	// query.
	var pairs [][2]string
	for _, pr := range f.pairs {
		ab := strings.Fields(pr)
		pairs = append(pairs, [2]string{ab[0], ab[1]})
	}
	for _, c := range cands {
		ct, ok := f.seen[c.chunk.ID]
		if !ok {
			ct = analyse(&c.chunk, len(f.titles) > 0, len(f.phrases) > 0, pairs)
			f.seen[c.chunk.ID] = ct
		}
		head, text := ct.head, ct.text
		for _, t := range f.titles {
			if strings.Contains(head, t) {
				c.own += w.Heading
				break
			}
		}
		for _, ph := range f.phrases {
			if strings.Contains(text, ph) {
				c.own += w.Phrase
				break
			}
		}
		if len(f.pairs) > 0 && w.Proximity > 0 {
			c.own += w.Proximity * float64(ct.pairs) / float64(len(f.pairs))
		}
	}
}

// chunkTerms is a chunk as the features read it: its heading path squashed,
// its text's terms padded, and how many of the question's term pairs its
// heading and text content terms (contentRun) hold adjacent.
type chunkTerms struct {
	head, text string
	pairs      int
}

// analyse reads what the question's features need of a chunk (head for
// titles, text for phrases, pairs counted when pairs are given; the others
// stay empty) in one pass over its terms, without term lists or a padded
// string of its content terms: building those was a third of a search's
// CPU. A pair counts when its terms follow each other in the content run,
// as they would appear padded in the run's padded string.
func analyse(c *citebook.Chunk, head, text bool, pairs [][2]string) chunkTerms {
	var (
		ct     chunkTerms
		hb, tb strings.Builder
		nt     int
		found  []bool
		prev   = -1 // the previous content term among pairs' terms, -1: none
	)
	// The pairs' terms are content terms (contentRun of the question), so
	// a term outside them matters only as what follows one: a stop word or
	// CJK term (which contentRun drops) leaves it in place, anything else
	// ends it. Only then is the stop-word set consulted.
	var words []string
	if len(pairs) > 0 {
		// A pair holding a term contentRun drops can never be adjacent in
		// the content run.
		pairs = slices.DeleteFunc(slices.Clone(pairs), func(p [2]string) bool {
			return len(contentRun(p[:])) < 2
		})
		found = make([]bool, len(pairs))
		for _, p := range pairs {
			for _, w := range p {
				if !slices.Contains(words, w) {
					words = append(words, w)
				}
			}
		}
	}
	content := func(t []byte) {
		i := slices.Index(words, string(t))
		if i < 0 {
			if prev >= 0 && !analysis.IsStopword(string(t)) {
				if r, _ := utf8.DecodeRune(t); !analysis.IsCJK(r) {
					prev = -1
				}
			}
			return
		}
		if prev >= 0 {
			for k, p := range pairs {
				if !found[k] && p[0] == words[prev] && p[1] == words[i] {
					found[k] = true
					ct.pairs++
				}
			}
		}
		prev = i
	}
	if head || len(pairs) > 0 {
		analysis.EachTerm(strings.Join(c.HeadingPath, " "), func(t []byte) {
			if head {
				hb.Write(t)
			}
			if len(pairs) > 0 {
				content(t)
			}
		})
	}
	if text || len(pairs) > 0 {
		tb.WriteByte(' ')
		analysis.EachTerm(c.Text, func(t []byte) {
			if text {
				tb.Write(t)
				tb.WriteByte(' ')
				nt++
			}
			if len(pairs) > 0 {
				content(t)
			}
		})
	}
	if head {
		ct.head = hb.String()
	}
	if text {
		if nt == 0 {
			tb.WriteByte(' ')
		}
		ct.text = tb.String()
	}
	return ct
}
