package eval

import (
	"context"
	"math"
	"strconv"

	"github.com/citebook/citebook/qa"
)

// Signals are the rankings measured from the same trace: the fused ranking
// the pipeline produced, and each retriever alone, so a fusion that loses to
// one of its inputs shows up in the same run instead of in a later one.
var Signals = []Signal{
	{Name: SignalFused, score: func(h qa.TraceHit) float64 { return h.Fused }},
	{Name: SignalBM25, score: func(h qa.TraceHit) float64 { return byRank(h.LexRank) }},
	{Name: SignalVector, score: func(h qa.TraceHit) float64 { return byRank(h.VectorRank) }},
	{Name: SignalReranked, score: func(h qa.TraceHit) float64 { return h.Fused }, ahead: func(h qa.TraceHit) int { return h.RerankRank }},
	{Name: SignalReturned, score: func(h qa.TraceHit) float64 {
		if !h.Kept {
			return math.NaN()
		}
		return h.Fused
	}},
}

// Signal names in reports.
const (
	SignalFused  = "fused"
	SignalBM25   = "bm25_only"
	SignalVector = "vectors_only"
	// SignalReranked is the order the context is taken in: the passages
	// the reranker saw (an endpoint or the model; without one they keep
	// the fused order) in its order, then every other candidate in fused
	// order. It ranks the same candidates as fused, so a gold passage the
	// threshold dropped before the rerank counts against both alike, and
	// the difference between the two is the reranker's alone.
	SignalReranked = "reranked"
	// SignalReturned is the fused order of the candidates that passed the
	// relevance threshold: what Search returns and the context is taken
	// from. Fused ranks every candidate, also those the threshold drops.
	SignalReturned = "returned"
)

// Signal is one way of ranking a trace's candidates; a candidate the signal
// did not find scores NaN and is left out. When ahead is set, the
// candidates it gives a place (1-based) come first, in that order, and
// score orders the rest.
type Signal struct {
	Name  string
	score func(qa.TraceHit) float64
	ahead func(qa.TraceHit) int
}

// byRank turns a 1-based rank into a score (0 = not found).
func byRank(r int) float64 {
	if r <= 0 {
		return math.NaN()
	}
	return -float64(r)
}

// SignalResult is what one ranking of a question scored.
type SignalResult struct {
	RecallAt   []float64 `json:"recall_at"`
	PageRecall []float64 `json:"page_recall_at"`
	HitAt      []float64 `json:"hit_at"`
	MRR        float64   `json:"mrr_at_10"`
}

// SignalSummary averages a signal's results like Summary does.
type SignalSummary struct {
	RecallAtK     map[string]float64 `json:"recall_at_k"`
	PageRecallAtK map[string]float64 `json:"page_recall_at_k"`
	HitAtK        map[string]float64 `json:"hit_at_k"`
	MRRAt10       float64            `json:"mrr_at_10"`
}

// scoreSignals measures every signal of a trace against the gold.
func (h *Harness) scoreSignals(ctx context.Context, hits []qa.TraceHit, q Question, relevant map[string]bool, cc *chunkCache) (map[string]SignalResult, error) {
	out := make(map[string]SignalResult, len(Signals))
	for _, s := range Signals {
		ranked, err := h.rankTrace(ctx, hits, s, cc)
		if err != nil {
			return nil, err
		}
		r := SignalResult{RecallAt: make([]float64, MaxK), PageRecall: make([]float64, MaxK), HitAt: make([]float64, MaxK)}
		for k := 1; k <= MaxK; k++ {
			r.RecallAt[k-1] = RecallAtK(ranked, relevant, k)
			r.PageRecall[k-1] = PageRecallAtK(ranked, q.Gold.Pages, k)
			r.HitAt[k-1] = HitAtK(ranked, relevant, k)
		}
		r.MRR = MRRAtK(ranked, relevant, MaxK)
		out[s.Name] = r
	}
	return out, nil
}

// summarizeSignals averages the signals over the ranked questions (page
// recall over the questions with gold pages).
func summarizeSignals(rs []QuestionResult) map[string]SignalSummary {
	out := map[string]SignalSummary{}
	for _, s := range Signals {
		sum := SignalSummary{RecallAtK: map[string]float64{}, PageRecallAtK: map[string]float64{}, HitAtK: map[string]float64{}}
		var n, pn int
		for i := range rs {
			r := &rs[i]
			sr, ok := r.Signals[s.Name]
			if !ok || !r.ranked() {
				continue
			}
			n++
			for _, k := range Ks {
				sum.RecallAtK[strconv.Itoa(k)] += sr.RecallAt[k-1]
				sum.HitAtK[strconv.Itoa(k)] += sr.HitAt[k-1]
			}
			sum.MRRAt10 += sr.MRR
			if len(r.GoldPages) > 0 {
				pn++
				for _, k := range Ks {
					sum.PageRecallAtK[strconv.Itoa(k)] += sr.PageRecall[k-1]
				}
			}
		}
		for _, k := range Ks {
			key := strconv.Itoa(k)
			sum.RecallAtK[key] = ratio(sum.RecallAtK[key], n)
			sum.HitAtK[key] = ratio(sum.HitAtK[key], n)
			sum.PageRecallAtK[key] = ratio(sum.PageRecallAtK[key], pn)
		}
		sum.MRRAt10 = ratio(sum.MRRAt10, n)
		out[s.Name] = sum
	}
	return out
}
