package qa

import (
	"slices"
	"sort"
	"strings"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
)

// salient is a question's key terms (questionTerms, without fillers) with
// their IDF in the scope searched: what the section and coverage features
// weigh. BM25 scores a chunk by its words' frequencies; it cannot see that
// a passage holding four of the question's four rare words beats one
// repeating two of them, nor that the section a chunk sits in is titled
// with the question's words ("Assignments within functions" for "if I
// assign to a variable inside a function").
type salient struct {
	terms   []string
	weights []float64
	total   float64
	first   [256]bool // the terms' first bytes: other chunk terms match none
	starts  []uint16  // the terms' analysis.TermStart, each once: likewise
	// src reads a chunk's terms by sentence from the lexical index
	// (Deps.ChunkTerms); nil: segment its text.
	src ChunkTerms
	// seen caches each chunk's feature values for the query, since the
	// search of the routed books meets the same chunks again.
	seen map[string]salientScore
	// sets, have and mark are windowCoverage's scratch, kept for the
	// query's candidates: allocating them for each was a third of the
	// feature's allocations.
	sets, have []bool
	mark       func(w, sent int, name func() string)
}

type salientScore struct{ section, cover float64 }

// newSalient keeps the weighted terms in the question's order (so sums are
// reproducible); nil when the scope has no statistics (a short article:
// every term looks common, and its ranking needs no help).
func newSalient(query string, weights map[string]float64, terms func(string) []string, src ChunkTerms) *salient {
	if len(weights) == 0 {
		return nil
	}
	s := &salient{seen: map[string]salientScore{}, src: src, starts: []uint16{}}
	for _, t := range questionTerms(query, terms) {
		w, ok := weights[t]
		if !ok || containsTerm(s.terms, t) {
			continue
		}
		s.terms = append(s.terms, t)
		s.first[t[0]] = true
		if st := analysis.TermStart(t); !slices.Contains(s.starts, st) {
			s.starts = append(s.starts, st)
		}
		s.weights = append(s.weights, w)
		s.total += w
	}
	if s.total == 0 {
		return nil
	}
	return s
}

func containsTerm(ts []string, t string) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// sameWord matches a question term against a chunk term: equal, or one a
// prefix of the other sharing at least min(5, shorter) letters with a
// shorter side of four or more letters, for words of Latin letters only
// ("assign" and "assignments", "fail" and "failure"; the index's own
// stemming only folds plurals). Numbers, identifiers with digits and CJK
// terms (character pairs) match exactly.
func sameWord(q, t string) bool {
	if q == t {
		return true
	}
	a, b := q, t
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) < 4 || !isLetters(a) || !isLetters(b) {
		return false
	}
	n := min(5, len(a))
	return a[:n] == b[:n] && (len(a) >= 5 || strings.HasPrefix(b, a))
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// score computes a chunk's section and coverage values once per query,
// each only when it has a weight.
func (s *salient) score(c *citebook.Chunk, ref citebook.RowRef, w Fusion) salientScore {
	if v, ok := s.seen[c.ID]; ok {
		return v
	}
	var v salientScore
	if w.Section != 0 {
		v.section = s.sectionMatch(c.HeadingPath)
	}
	if w.Cover != 0 {
		v.cover = s.windowCoverage(c, ref)
	}
	s.seen[c.ID] = v
	return v
}

// sectionMatch is the IDF-weighted share of the key terms named in the
// chunk's heading path; a term in the innermost heading counts fully, one
// level up half, and so on: the innermost title says what the passage is
// about, a chapter title only where it sits.
func (s *salient) sectionMatch(path []string) float64 {
	if len(path) == 0 {
		return 0
	}
	found := make([]float64, len(s.terms))
	f := 1.0
	for i := len(path) - 1; i >= 0; i-- {
		analysis.EachTerm(path[i], func(t []byte) {
			for k, q := range s.terms {
				if found[k] < f && sameWord(q, string(t)) {
					found[k] = f
				}
			}
		})
		f /= 2
	}
	got := 0.0
	for k, x := range found {
		got += x * s.weights[k]
	}
	return got / s.total
}

// boostSalient adds the weighted section match and key-term coverage to
// each candidate's own evidence.
func boostSalient(s *salient, cands []*candidate, w Fusion) {
	if s == nil || w.Section == 0 && w.Cover == 0 {
		return
	}
	head := cands
	if n := salientHead; len(cands) > n {
		head = slices.Clone(cands)
		sort.SliceStable(head, func(i, j int) bool { return head[i].own > head[j].own })
		head = head[:n]
	}
	for _, c := range head {
		v := s.score(c.chunk, c.lex, w)
		c.own += w.Section*v.section + w.Cover*v.cover
	}
}

// salientHead is how many candidates, best first by their evidence so
// far, the salient features rescore: they decide the first places, and
// reading every sentence of the 80–160 candidates of a search cost a
// third more CPU than the rest of it (FinanceBench, shared index).
// books-dev, CMRC and FinanceBench rank the same with 20 as with all
// candidates.
const salientHead = 20

// coverSpan is the window of windowCoverage in sentences. Whole-chunk
// coverage (any span) and windows of three sentences ranked worse on
// books-dev than one or two (page recall@1 0.714 / 0.743 against 0.771 at
// weight 0.15), since a long chunk that mentions every word somewhere is
// what BM25 already favours.
const coverSpan = 2

// windowCoverage is the best IDF-weighted share of the key terms that a
// window of up to coverSpan consecutive sentences holds, each term counted
// once however often it repeats: words that answer a question together
// stand together (the passage-level evidence of Callan, "Passage-level
// evidence in document retrieval", 1994), while BM25 rewards a chunk that
// repeats two of them far apart.
//
// With src the terms and sentence boundaries are read from the lexical
// index (ChunkTerms.ChunkSentences), which gives what segmenting each
// sentence of analysis.Sentences gives; otherwise the text is segmented.
func (s *salient) windowCoverage(c *citebook.Chunk, ref citebook.RowRef) float64 {
	n := len(s.terms)
	// sets holds each sentence's found terms, n flags a sentence; a
	// sentence after the last one with a term adds nothing to any window.
	if s.mark == nil {
		s.mark = func(w, sent int, name func() string) {
			for len(s.sets) < (sent+1)*n {
				s.sets = append(s.sets, make([]bool, n)...)
			}
			if t := name(); len(t) > 0 && s.first[t[0]] {
				s.match(s.sets[sent*n:(sent+1)*n], t)
			}
		}
	}
	s.sets = s.sets[:0]
	// The index hands over only the terms starting like a key term (the
	// others match none); sets then ends at the last sentence holding one,
	// which the windows below do not miss: they add nothing after it.
	if s.src == nil || !s.src.ChunkSentences(c, ref, s.terms, s.starts, s.mark) {
		sents := analysis.Sentences(c.Text)
		s.sets = append(s.sets[:0], make([]bool, len(sents)*n)...)
		for i, x := range sents {
			analysis.EachTerm(x, func(t []byte) {
				if len(t) > 0 && s.first[t[0]] {
					s.match(s.sets[i*n:(i+1)*n], string(t))
				}
			})
		}
	}
	sets := s.sets
	best := 0.0
	if len(s.have) < n {
		s.have = make([]bool, n)
	}
	have := s.have[:n]
	for i := 0; i < len(sets)/max(n, 1); i++ {
		clear(have)
		for j := i; j < min(len(sets)/n, i+coverSpan); j++ {
			got := 0.0
			for k := range have {
				have[k] = have[k] || sets[j*n+k]
				if have[k] {
					got += s.weights[k]
				}
			}
			best = max(best, got/s.total)
		}
	}
	return best
}

// match flags in found the key terms that name the chunk term t.
func (s *salient) match(found []bool, t string) {
	for k, q := range s.terms {
		if !found[k] && q[0] == t[0] && sameWord(q, t) {
			found[k] = true
		}
	}
}
