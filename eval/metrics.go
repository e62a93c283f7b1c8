// Package eval measures whether citebook can be trusted on real questions:
// how often the right chunk and page are retrieved, how often a citation is
// right, and how often it refuses when it should.
//
// Definitions (all per question, averaged over the questions they apply to):
//
//   - Ranking: retrieved chunks are ordered by score descending, ties broken
//     by chunk ID ascending (Rank does this), so results are reproducible.
//   - Recall@K (trec_eval "recall_K"): relevant chunks in the top K divided by
//     all relevant chunks of the question.
//   - MRR@K (BEIR): 1/rank of the first relevant chunk within the top K, else 0.
//   - nDCG@K: binary gains, DCG = Σ rel_i / log2(i+1) over ranks i = 1..K,
//     divided by the ideal DCG of min(|relevant|, K) relevant chunks.
//   - Hit rate@K: 1 when any relevant chunk is in the top K.
//   - Page Recall@K: gold (book, physical page) pairs covered by the page
//     ranges of the top-K retrieved children, over all gold pages.
//   - Citation page accuracy: verified citations whose quote lies on a gold
//     page, over all verified citations (questions with page gold only); a
//     quote printed across a page break lies on every page it runs over.
//   - Citation precision and recall, in the ALCE sense with gold-evidence
//     matching in place of NLI: a citation "supports" when it matches the gold
//     evidence (its chunk is a gold chunk, its quote lies on a gold page, or its
//     quote overlaps a gold evidence text). Precision = supporting citations
//     over all citations; recall = answered answerable questions with at least
//     one supporting citation over all answerable questions.
//   - Refusal accuracy: unanswerable questions refused, over all unanswerable.
//   - Answered coverage: answerable questions answered (not refused), over all
//     answerable.
//   - Answers holding the gold answer: answered questions with a gold answer
//     whose answer text holds it word for word (letters and digits only,
//     case folded), over those questions — exact match for span datasets
//     such as CMRC; free-text gold answers (FinanceBench) rarely match.
//   - Context duplication rate: context tokens that repeat an earlier part of
//     the same context (8-token shingles), over all context tokens.
//   - Latency P50/P95: nearest-rank percentiles of per-question wall time.
package eval

import (
	"math"
	"sort"
)

// Ranked is one retrieved chunk as the metrics see it.
type Ranked struct {
	ChunkID   string
	BookID    string
	Score     float64
	PageStart int
	PageEnd   int
}

// Page identifies a physical page of a book, the unit of page-level gold.
type Page struct {
	BookID string `json:"book_id"`
	Page   int    `json:"page"`
}

// Rank orders results by score descending, then chunk ID ascending, so ties
// never depend on map or goroutine order.
func Rank(rs []Ranked) []Ranked {
	out := append([]Ranked(nil), rs...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ChunkID < out[j].ChunkID
	})
	return out
}

func top(rs []Ranked, k int) []Ranked {
	if k < len(rs) {
		return rs[:k]
	}
	return rs
}

// RecallAtK is trec_eval's recall_K; 0 when nothing is relevant.
func RecallAtK(rs []Ranked, relevant map[string]bool, k int) float64 {
	if len(relevant) == 0 {
		return 0
	}
	n := 0
	for _, r := range top(rs, k) {
		if relevant[r.ChunkID] {
			n++
		}
	}
	return float64(n) / float64(len(relevant))
}

// MRRAtK is BEIR's MRR@K.
func MRRAtK(rs []Ranked, relevant map[string]bool, k int) float64 {
	for i, r := range top(rs, k) {
		if relevant[r.ChunkID] {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// NDCGAtK is nDCG@K with binary relevance.
func NDCGAtK(rs []Ranked, relevant map[string]bool, k int) float64 {
	if len(relevant) == 0 {
		return 0
	}
	dcg := 0.0
	for i, r := range top(rs, k) {
		if relevant[r.ChunkID] {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	idcg := 0.0
	for i := 0; i < min(len(relevant), k); i++ {
		idcg += 1 / math.Log2(float64(i+2))
	}
	return dcg / idcg
}

// HitAtK is 1 when any relevant chunk is in the top K.
func HitAtK(rs []Ranked, relevant map[string]bool, k int) float64 {
	if MRRAtK(rs, relevant, k) > 0 {
		return 1
	}
	return 0
}

// PageRecallAtK is the share of gold pages covered by the page ranges of the
// top-K results.
func PageRecallAtK(rs []Ranked, gold []Page, k int) float64 {
	if len(gold) == 0 {
		return 0
	}
	want := map[Page]bool{}
	for _, g := range gold {
		want[g] = true
	}
	got := map[Page]bool{}
	for _, r := range top(rs, k) {
		end := max(r.PageEnd, r.PageStart)
		for p := r.PageStart; p <= end && p > 0; p++ {
			if want[Page{r.BookID, p}] {
				got[Page{r.BookID, p}] = true
			}
		}
	}
	return float64(len(got)) / float64(len(want))
}

// Percentile returns the nearest-rank percentile p (0–100) of xs.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	if rank < 1 {
		rank = 1
	}
	return s[rank-1]
}

// DuplicationRate is the share of tokens in a context (its chunks' token
// lists, in order) that belong to an 8-token shingle already seen earlier in
// the context. A context with no overlap scores 0.
func DuplicationRate(chunks [][]string) float64 {
	const n = 8
	seen := map[string]bool{}
	total, dup := 0, 0
	for _, toks := range chunks {
		total += len(toks)
		covered := make([]bool, len(toks))
		var mine []string
		for i := 0; i+n <= len(toks); i++ {
			key := joinTokens(toks[i : i+n])
			if seen[key] {
				for j := i; j < i+n; j++ {
					covered[j] = true
				}
			}
			mine = append(mine, key)
		}
		for _, c := range covered {
			if c {
				dup++
			}
		}
		for _, k := range mine {
			seen[k] = true
		}
	}
	if total == 0 {
		return 0
	}
	return float64(dup) / float64(total)
}

func joinTokens(ts []string) string {
	n := 0
	for _, t := range ts {
		n += len(t) + 1
	}
	b := make([]byte, 0, n)
	for _, t := range ts {
		b = append(b, t...)
		b = append(b, 0)
	}
	return string(b)
}
