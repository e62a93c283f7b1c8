package qa

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
)

// threshold drops candidates too far from the query. A chunk survives when
//   - its cosine reaches StrongScore (the vectors alone are convincing), or
//   - its cosine reaches the minimum and it shares enough of the query's
//     content terms (see needTerms): a lexical embedder scores a chunk that
//     merely shares "what" and "is" with the question well above zero, so
//     cosine alone cannot tell "what time is dinner today?" from a real
//     question, or
//   - the keyword side ranked it near the top of the whole scope (not only
//     of the books routing searched first), or the keyword side found it
//     and the fusion ranked it near the top (cands come sorted by fused
//     score: its heading, proximity and coverage features weigh more than
//     one more BM25 hit; lshort-zh-cn's page on dashes, fourth by BM25 for
//     "写页码范围…应该用哪一种横线", is first fused), and it holds most of
//     the query's terms, weighed by their rarity in scope (exact names and
//     numbers that embeddings blur; "Debian" in every chunk of the Debian
//     reference is not what makes a chunk about the question), or
//   - the question names a statement or vocabulary phrase that is the
//     chunk's heading ("the cash flow statement": a page titled
//     "Consolidated Statement of Cash Flows"), the keyword side found it
//     and the fusion ranks it near the top: a table's rows hold few of the
//     question's words, so coverage cannot see what its title says, or
//   - the scope is small (every chunk of it was a candidate: one article)
//     and the keyword side ranked it near the top with as many shared terms
//     as a moderate cosine needs: with a handful of chunks, cosine ranks
//     nothing and the answerability check decides.
//
// A table of contents or an index is never kept (isContents), unless the
// question asks about the book's layout.
//
// The strong bar never sits less than strongMargin above the minimum, so
// raising the minimum for a model whose cosines crowd together (e5 scores an
// off-topic question 0.74 against any filing) raises both bars.
//
// weights maps the query's content terms to their IDF in scope (nil: equal
// weights). It returns what survives and what was dropped.
func (p *Pipeline) threshold(query string, cands []*candidate, min float64, small bool, weights map[string]float64) (kept, dropped []*candidate) {
	strong := max(p.opts.StrongScore, min+strongMargin)
	// The words framing what the answer states ("how long", "who wrote")
	// are not what a chunk must share with the question (howWords).
	framing := howWords(query, p.deps.Terms)
	structural := asksStructure.MatchString(query)
	qterms := slices.DeleteFunc(analysis.ContentTerms(p.deps.Terms(query)), func(t string) bool { return framing[t] })
	need := needTerms(len(qterms))
	qidx := make(map[string]int, len(qterms))
	for i, t := range qterms {
		qidx[t] = i
	}
	found := make([]bool, len(qterms))
	// mark notes a query term the index read of a chunk's text, made once
	// for all candidates (a closure per candidate is an allocation each).
	mark := func(w int, head bool, _ func() string) {
		if !head && w >= 0 {
			found[w] = true
		}
	}
	var symbols []int // indexes in qterms
	for _, t := range slices.Sorted(maps.Keys(analysis.StandaloneSymbols(query))) {
		if i, ok := qidx[t]; ok {
			symbols = append(symbols, i)
		}
	}
	for ci, c := range cands {
		var have []bool
		terms := func() []bool {
			if have == nil {
				have = p.present(qterms, qidx, found, mark, c.chunk, c.lex)
			}
			return have
		}
		// A chunk that only the search of the routed books (or of the query
		// as definitions expanded it) found, or found by vectors, must hold
		// most of the question's terms or be close in meaning: a year or a
		// company name alone routes to a book without making its chunks
		// relevant.
		routedOnly := c.seenVec == 0 && c.seenLex == 0 || c.vecRank > 0 && c.seenVec == 0
		switch {
		case c.titled && c.lexRank > 0 && ci < p.opts.LexicalRank:
			// The question names a statement ("the cash flow statement")
			// or a vocabulary phrase, this chunk's headings are that
			// statement, and the fusion ranks it near the top: a table's
			// rows hold few of the question's words ("capital
			// expenditure" is "Purchases of property, plant and
			// equipment" there), so coverage cannot see what its title says.
			// It may be a hit of the routed books alone: the question names
			// the filing ("3M's FY2018 …") as well as the statement.
			kept = append(kept, c)
		case routedOnly && !(c.vecScore >= strong || coverage(terms()) >= p.opts.LexicalCover):
			dropped = append(dropped, c)
		case c.vecRank > 0 && c.vecScore >= strong:
			kept = append(kept, c)
		case c.vecRank > 0 && c.vecScore >= min && matched(terms()) >= need:
			kept = append(kept, c)
		case c.seenLex > 0 && (c.seenLex <= p.opts.LexicalRank || ci < p.opts.LexicalRank) && weightedCoverage(qterms, weights, terms()) >= p.opts.LexicalCover:
			kept = append(kept, c)
		case c.seenLex > 0 && c.seenLex <= p.opts.LexicalRank && len(symbols) > 0 && holdsEvery(symbols, terms()):
			// The question types a symbol on its own ("$$"): it is what
			// the question asks about, and a keyword hit showing it is
			// evidence no weighing of the other words should drop (the
			// answerability check refuses when no passage shows it).
			kept = append(kept, c)
		case small && c.lexRank > 0 && c.lexRank <= p.opts.LexicalRank && matched(terms()) >= need:
			kept = append(kept, c)
		default:
			dropped = append(dropped, c)
		}
	}
	if !structural {
		// Only what would be kept is read for a contents page: most
		// candidates are dropped anyway, and reading them all cost.
		kept = slices.DeleteFunc(kept, func(c *candidate) bool {
			if c.contents = isContents(c.chunk); c.contents {
				dropped = append(dropped, c)
			}
			return c.contents
		})
	}
	if len(kept) > 0 && len(dropped) > 0 {
		kept, dropped = p.keepOrdered(qterms, qidx, found, mark, weights, cands, kept, dropped)
	}
	return kept, dropped
}

// keepOrdered keeps, among the first LexicalRank fused candidates, the
// keyword side's hits of the whole scope that hold at least as much of the
// query's weight as the best chunk the threshold kept. The rules above ask
// a keyword hit for most of the question's weight and a chunk the vectors
// found for two shared terms on a moderate cosine, so the context could
// hold chunks sharing "summer" and "pond" with "why was he locked up in
// jail during his first summer at the pond?" while the keyword side's
// third hit, which holds "jail", "first" and "summer", was dropped: the
// answer then quoted a summer evening on the pond. A chunk ranked above
// what was kept and at least as close to the question must not be.
func (p *Pipeline) keepOrdered(qterms []string, qidx map[string]int, found []bool, mark func(int, bool, func() string), weights map[string]float64, cands, kept, dropped []*candidate) ([]*candidate, []*candidate) {
	// The dropped keyword hits among the first places are read first: most
	// searches have none, and the kept chunks are read only until one
	// holds more than any of them.
	var hits []*candidate
	var covs []float64
	top := 0.0
	for _, c := range cands[:min(len(cands), p.opts.LexicalRank)] {
		if c.seenLex == 0 || c.contents || slices.Contains(kept, c) {
			continue
		}
		w := weightedCoverage(qterms, weights, p.present(qterms, qidx, found, mark, c.chunk, c.lex))
		hits, covs, top = append(hits, c), append(covs, w), max(top, w)
	}
	if len(hits) == 0 {
		return kept, dropped
	}
	best := 0.0
	for _, c := range kept {
		if best = max(best, weightedCoverage(qterms, weights, p.present(qterms, qidx, found, mark, c.chunk, c.lex))); best > top {
			return kept, dropped
		}
	}
	var add []*candidate
	for i, c := range hits {
		if covs[i] >= best {
			add = append(add, c)
		}
	}
	var k, d []*candidate
	for _, c := range cands {
		switch {
		case slices.Contains(add, c) || slices.Contains(kept, c):
			k = append(k, c)
		case slices.Contains(dropped, c):
			d = append(d, c)
		}
	}
	return k, d
}

// present flags in found (scratch of qterms' length; mark flags a term in
// it as ChunkTerms reads it) the query terms
// (qidx: term → index in qterms) among the terms of a chunk's text,
// lower-cased as TermSet does, and returns it. It answers matched and
// coverage like TermSet of the whole text without building a set of every
// term of the chunk (a tenth of a search's CPU), with EachTerm without a
// string per term either, and without a map per candidate; with ChunkTerms
// it reads the terms the lexical index kept.
func (p *Pipeline) present(qterms []string, qidx map[string]int, found []bool, mark func(int, bool, func() string), c *citebook.Chunk, ref citebook.RowRef) []bool {
	clear(found)
	text := c.FoundBy()
	if p.deps.ChunkTerms != nil && p.deps.ChunkTerms.ChunkTerms(c, ref, qterms, mark) {
		return found
	}
	if p.deps.EachTerm != nil {
		// EachTerm's terms are lower-cased already (analysis.Terms').
		p.deps.EachTerm(text, func(t []byte) {
			if i, ok := qidx[string(t)]; ok {
				found[i] = true
			}
		})
		return found
	}
	for _, t := range p.deps.Terms(text) {
		if i, ok := qidx[strings.ToLower(t)]; ok {
			found[i] = true
		}
	}
	return found
}

// strongMargin is the default gap between the minimum and the strong bar.
const strongMargin = 0.25

// needTerms is how many of n query content terms a chunk must contain to
// pass on a moderate cosine: two (or all, when fewer), and a quarter of a
// long question's terms.
func needTerms(n int) int {
	return min(n, max(2, (n+3)/4))
}

// matched counts the query terms a text holds (have[i] for query[i]).
func matched(have []bool) int {
	n := 0
	for _, h := range have {
		if h {
			n++
		}
	}
	return n
}

// coverage is the share of the query terms a text holds.
func coverage(have []bool) float64 {
	if len(have) == 0 {
		return 0
	}
	return float64(matched(have)) / float64(len(have))
}

// weightedCoverage is the share of the query terms' weight a text holds
// (have[i] for query[i]), summed in the query's order so the same question
// always gives the same share; with no weights every query term counts
// one.
func weightedCoverage(query []string, weights map[string]float64, have []bool) float64 {
	if weights == nil {
		return coverage(have)
	}
	total, got := 0.0, 0.0
	for i, q := range query {
		w, ok := weights[q]
		if !ok || slices.Contains(query[:i], q) {
			continue
		}
		total += w
		if have[i] {
			got += w
		}
	}
	if total == 0 {
		return 0
	}
	return got / total
}

// termWeights weighs a query's key terms (content words without question
// fillers such as "actually", which are rare in books and so would weigh
// most) by their IDF in the scope searched, the statistics answerability
// uses; nil when the scope is too small to have statistics or they are
// unavailable.
func (p *Pipeline) termWeights(ctx context.Context, query string, f citebook.Filter) map[string]float64 {
	if p.deps.Stats == nil {
		return nil
	}
	qterms := questionTerms(query, p.deps.Terms)
	if len(qterms) == 0 {
		return nil
	}
	df, n, err := p.deps.Stats.DocFreq(ctx, qterms, f)
	if err != nil || n < minStatsChunks || len(df) != len(qterms) {
		return nil
	}
	straddle := p.straddling(ctx, query, f)
	w := make(map[string]float64, len(qterms))
	for i, t := range qterms {
		if df[i] == 0 && isCJKTerm(t) {
			// No chunk in scope holds this pair, so it tells no chunk
			// from another, and it may be no word at all (面敲 of
			// 后面敲的): weighed by its rarity it outweighed the rest,
			// and the passage that answers "为什么我在 \TeX
			// 后面敲的空格…不见了" held every other term and still fell
			// under the bar. Answerability still counts it against the
			// best passage. An absent English word is a word the asker
			// chose, and stays: "dinner" absent from a filing keeps
			// "what time is dinner served today?" out.
			continue
		}
		w[t] = idf(df[i], n)
		if nd, ok := straddle[t]; ok {
			w[t] = min(w[t], idf(nd, n))
		}
	}
	return w
}

// holdsAll reports whether text holds every one of terms.
func holdsAll(terms []string, text map[string]bool) bool {
	for _, t := range terms {
		if !text[t] {
			return false
		}
	}
	return true
}

// holdsEvery reports whether a text holds every one of the query terms
// at indexes (have[i] for the query's term i), as holdsAll does for a set.
func holdsEvery(indexes []int, have []bool) bool {
	for _, i := range indexes {
		if !have[i] {
			return false
		}
	}
	return true
}
