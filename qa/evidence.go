package qa

import (
	"cmp"
	"slices"

	"github.com/citebook/citebook/analysis"
)

// The builtin reranker orders the passages by their evidence: each
// passage's best window of up to three sentences, scored as the extractive
// answerer scores the passage it quotes (the IDF-weighted key terms it
// holds, the answer type and the definition asked for, discounted by its
// fused rank, so retrieval stays the prior and decides between equals).
// Fusion ranks whole chunks; the page that answers is the one with a few
// sentences that hold the question together. Measured before it was built,
// over the answered questions: the passage the extractive answer quoted
// lay on a gold page more often than the fused first (books-dev 29 against
// 23 of 32, the held-out books 17 against 13 of 22, FinanceBench 22
// against 14 of 44 in book scope, 22 against 17 of 52 shared). A
// configured reranker (a cross-encoder, the language model) replaces it.

// evidenceOrder returns the context with its passages (runs of chunks
// sharing a Rank, as assemble made them) ordered by their best window's
// score, best first, ties in rank order; passages without a window holding
// enough of the question keep their order after the others. Which passages
// are in the context does not change, so neither does the answerability
// judged on them, and each keeps its Rank: renumbered, a passage moved up
// would lose its rank discount and the extractive answer, which scores
// windows the same way, could quote another than the best (FinanceBench:
// four answers moved off their gold page when ranks were renumbered).
//
// uc, when not nil, is the context as the answerability check segmented it
// (with these aliases and the terms e segments with); nil segments anew.
func (e *Extractive) evidenceOrder(question string, chunks []ContextChunk, ev Evidence, uc *unitCache) []ContextChunk {
	if len(ev.Weights) == 0 || len(chunks) < 2 {
		return chunks
	}
	if uc == nil {
		uc = newUnitCache(e.terms, ev.Aliases)
	}
	all, n := e.sentences(chunks, uc)
	if n == 0 {
		return chunks
	}
	kind, def, alone := askedType(question), whatIsAsked(question), analysis.StandaloneSymbols(question)
	score := map[int]float64{}
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].c.Rank == all[i].c.Rank {
			j++
		}
		_, _, _, s := e.bestPassage(all[i:j], ev.Weights, true, kind, def, alone)
		score[all[i].c.Rank] = max(score[all[i].c.Rank], s)
		i = j
	}
	out := slices.Clone(chunks)
	slices.SortStableFunc(out, func(a, b ContextChunk) int {
		if c := cmp.Compare(score[b.Rank], score[a.Rank]); c != 0 {
			return c
		}
		return cmp.Compare(a.Rank, b.Rank)
	})
	return out
}
