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
	src   ChunkTerms // candidates' terms as indexed (Deps.ChunkTerms); nil: segment
	// salient weighs the question's key terms for the section and
	// coverage features; nil without term statistics.
	salient *salient
}

func (p *Pipeline) queryFeatures(query string) queryFeatures {
	terms := analysis.Terms(query)
	if alone := analysis.StandaloneSymbols(query); len(terms) > 0 {
		// A symbol glued to a word ("#!/bin/sh") is no phrase of the
		// question: its words are (analysis.QueryTerms leaves it out too).
		terms = slices.DeleteFunc(terms, func(t string) bool { return analysis.IsSymbol(t) && !alone[t] })
	}
	qterms := " " + strings.Join(terms, " ") + " "
	f := queryFeatures{src: p.deps.ChunkTerms}
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
		// Sized for the candidates: growing it entry by entry was most of
		// the feature's bytes.
		f.seen = make(map[string]chunkTerms, len(cands))
	}
	// Counted whatever the weights, since seen keeps the counts for the
	// query.
	var pairs [][2]string
	for _, pr := range f.pairs {
		ab := strings.Fields(pr)
		pairs = append(pairs, [2]string{ab[0], ab[1]})
	}
	scan := newPairScan(pairs)
	titles, phrases := len(f.titles) > 0, len(f.phrases) > 0
	// Without titles or phrases only the pairs need a chunk's terms: the
	// index tells at once which candidates lack a term of every pair.
	var maybe []bool
	if !titles && !phrases {
		maybe = scan.possibleAll(f.src, cands, f.seen)
	}
	for i, c := range cands {
		ct, ok := f.seen[c.chunk.ID]
		if !ok {
			switch {
			case maybe == nil:
				ct = analyse(f.src, c.chunk, c.lex, titles, phrases, scan)
			case maybe[i]:
				ct = read(f.src, c.chunk, c.lex, false, false, scan)
			}
			f.seen[c.chunk.ID] = ct
		}
		head, text := ct.head, ct.text
		for _, t := range f.titles {
			if strings.Contains(head, t) {
				c.own += w.Heading
				c.titled = true
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
//
// ref is the chunk's row in src, when a keyword hit gave it (candidate.lex).
func analyse(src ChunkTerms, c *citebook.Chunk, ref citebook.RowRef, head, text bool, scan pairScan) chunkTerms {
	if !head && !text && !scan.possible(src, c, ref) {
		return chunkTerms{} // no pair can be adjacent in it: nothing to read
	}
	return read(src, c, ref, head, text, scan)
}

// read is analyse once the chunk must be read. The variables its callbacks
// capture live on the heap, so declaring them only here keeps the
// candidates analyse skips (most of them) from allocating four each.
func read(src ChunkTerms, c *citebook.Chunk, ref citebook.RowRef, head, text bool, scan pairScan) chunkTerms {
	var (
		ct     chunkTerms
		hb, tb strings.Builder
		nt     int
		pairs  = scan.pairs
		words  = scan.words
		found  = make([]bool, len(pairs))
		prev   = -1 // the previous content term among pairs' terms, -1: none
	)
	// step moves the pair scan over one term: i is its index in words (-1:
	// another term), dropped whether contentRun drops it (asked only for
	// another term after one of words).
	step := func(i int, dropped bool) {
		if i < 0 {
			if prev >= 0 && !dropped {
				prev = -1
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
	if src != nil && src.ChunkTerms(c, ref, words, func(w int, inHead bool, name func() string) {
		// The same terms as segmenting below, read from the index.
		switch {
		case inHead && head:
			hb.WriteString(name())
		case !inHead && text:
			if nt == 0 {
				tb.WriteByte(' ')
			}
			tb.WriteString(name())
			tb.WriteByte(' ')
			nt++
		}
		if len(pairs) > 0 {
			step(w, w < 0 && prev >= 0 && droppedTerm(name()))
		}
	}) {
		if nt == 0 {
			tb.WriteString("  ")
		}
	} else {
		analyseText(c, head, text, len(pairs) > 0, &hb, &tb, &nt, func(t []byte) {
			i := slices.Index(words, string(t))
			step(i, i < 0 && prev >= 0 && (analysis.IsStopword(string(t)) || isCJKStart(t)))
		})
	}
	if head {
		ct.head = hb.String()
	}
	if text {
		ct.text = tb.String()
	}
	return ct
}

// pairScan is the question's term pairs as analyse scans for them: the
// pairs that can be adjacent in a content run (a pair holding a term
// contentRun drops never is) and their terms, each once.
type pairScan struct {
	pairs [][2]string
	words []string
}

func newPairScan(pairs [][2]string) pairScan {
	var s pairScan
	if len(pairs) == 0 {
		return s
	}
	// The pairs' terms are content terms (contentRun of the question), so
	// a term outside them matters only as what follows one: a stop word or
	// CJK term (which contentRun drops) leaves it in place, anything else
	// ends it. Only then is the stop-word set consulted.
	s.pairs = slices.DeleteFunc(slices.Clone(pairs), func(p [2]string) bool {
		return len(contentRun(p[:])) < 2
	})
	for _, p := range s.pairs {
		for _, w := range p {
			if !slices.Contains(s.words, w) {
				s.words = append(s.words, w)
			}
		}
	}
	return s
}

// possible reports whether a chunk may hold one of the pairs adjacent:
// false when there are none, or when the index tells that it
// lacks a term of every pair (src.HoldsAll); true when unsure.
func (s pairScan) possible(src ChunkTerms, c *citebook.Chunk, ref citebook.RowRef) bool {
	if len(s.pairs) == 0 {
		return false
	}
	if src == nil || len(s.words) > 64 {
		return true
	}
	held, ok := src.HoldsAll([]*citebook.Chunk{c}, []citebook.RowRef{ref}, s.words)
	return !ok[0] || s.holdsPair(held[0])
}

// possibleAll is possible for the candidates not in seen, asking the
// index once for all of them (src.HoldsAll): maybe[i] for cands[i] (false
// for those in seen); nil when possible would not ask the index (no pairs,
// no index, more than 64 terms), so analyse decides.
func (s pairScan) possibleAll(src ChunkTerms, cands []*candidate, seen map[string]chunkTerms) []bool {
	if len(s.pairs) == 0 || src == nil || len(s.words) > 64 {
		return nil
	}
	maybe := make([]bool, len(cands))
	ask := make([]*citebook.Chunk, 0, len(cands))
	refs := make([]citebook.RowRef, 0, len(cands))
	at := make([]int, 0, len(cands))
	for i, c := range cands {
		if _, ok := seen[c.chunk.ID]; !ok {
			ask, refs = append(ask, c.chunk), append(refs, c.lex)
			at = append(at, i)
		}
	}
	if len(ask) == 0 {
		return maybe
	}
	held, ok := src.HoldsAll(ask, refs, s.words)
	for j, i := range at {
		maybe[i] = !ok[j] || s.holdsPair(held[j])
	}
	return maybe
}

// holdsPair reports whether held (bit i for words[i]) has both terms of
// one of the pairs.
func (s pairScan) holdsPair(held uint64) bool {
	for _, p := range s.pairs {
		a, b := slices.Index(s.words, p[0]), slices.Index(s.words, p[1])
		if held&(1<<a) != 0 && held&(1<<b) != 0 {
			return true
		}
	}
	return false
}

// analyseText segments a chunk's heading path and text for analyse:
// heading terms squashed into hb when head, text terms padded into tb when
// text (nt counts them), every term to content when pairs.
func analyseText(c *citebook.Chunk, head, text, pairs bool, hb, tb *strings.Builder, nt *int, content func(t []byte)) {
	if head || pairs {
		analysis.EachTerm(strings.Join(c.HeadingPath, " "), func(t []byte) {
			if head {
				hb.Write(t)
			}
			if pairs {
				content(t)
			}
		})
	}
	if text || pairs {
		tb.WriteByte(' ')
		analysis.EachTerm(c.FoundBy(), func(t []byte) {
			if text {
				tb.Write(t)
				tb.WriteByte(' ')
				*nt++
			}
			if pairs {
				content(t)
			}
		})
	}
	if text && *nt == 0 {
		tb.WriteByte(' ')
	}
}

// droppedTerm reports whether contentRun drops t: a stop word or a CJK
// term.
func droppedTerm(t string) bool {
	if analysis.IsStopword(t) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(t)
	return analysis.IsCJK(r)
}

// isCJKStart reports whether t starts with a CJK character.
func isCJKStart(t []byte) bool {
	r, _ := utf8.DecodeRune(t)
	return analysis.IsCJK(r)
}
