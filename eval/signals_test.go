package eval

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/qa"
)

// pagesOnly is a Library that knows each chunk's page and nothing else.
type pagesOnly map[string]int

func (pagesOnly) Book(context.Context, string) (*citebook.Book, error) { return &citebook.Book{}, nil }
func (pagesOnly) ChunksAt(context.Context, string, int) ([]citebook.Chunk, error) {
	return nil, nil
}
func (l pagesOnly) ChunksByID(_ context.Context, ids []string) ([]citebook.Chunk, error) {
	var out []citebook.Chunk
	for _, id := range ids {
		if p, ok := l[id]; ok {
			out = append(out, citebook.Chunk{ID: id, BookID: "b", PageStart: p, PageEnd: p})
		}
	}
	return out, nil
}

// The reranked signal ranks the candidates fused ranks: a gold passage the
// threshold dropped before the rerank comes after the passages reranked,
// in fused order, instead of vanishing from the ranking.
func TestRerankedRanksFusedCandidates(t *testing.T) {
	hits := []qa.TraceHit{
		{ChunkID: "gold", BookID: "b", Page: 9, Fused: 0.9}, // below the threshold: never reranked
		{ChunkID: "a", BookID: "b", Page: 1, Fused: 0.5, RerankRank: 2},
		{ChunkID: "b", BookID: "b", Page: 2, Fused: 0.4, RerankRank: 1},
		{ChunkID: "c", BookID: "b", Page: 3, Fused: 0.3},
		{ChunkID: "b", BookID: "b", Page: 2, Fused: 0.6, Query: 1}, // b again for a sub-query
	}
	lib := pagesOnly{"gold": 9, "a": 1, "b": 2, "c": 3}
	h := &Harness{}
	q := Question{ID: "q", Answerable: true, Gold: Gold{Pages: []Page{{BookID: "b", Page: 9}}}}
	got, err := h.scoreSignals(context.Background(), hits, q, map[string]bool{"gold": true}, newChunkCache(lib))
	require.NoError(t, err)
	assert.Equal(t, got[SignalFused].RecallAt[MaxK-1], got[SignalReranked].RecallAt[MaxK-1], "same candidates, same recall at depth")
	assert.Equal(t, 1.0, got[SignalFused].PageRecall[0])
	// b and a, as reranked, then gold, the best of the rest by fused score
	assert.Equal(t, []float64{0, 0, 1, 1}, got[SignalReranked].PageRecall[:4])
}
