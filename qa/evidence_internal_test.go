package qa

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
)

// TestEvidenceOrder: passages move as a whole (a neighbour with its
// primary), by their best window, keeping their Rank (the answerer's rank
// discount); without weights the context is left as it is.
func TestEvidenceOrder(t *testing.T) {
	e := NewExtractive(analysis.Terms)
	ctxOf := func(id, text string, rank int, primary bool) ContextChunk {
		return ContextChunk{Chunk: citebook.Chunk{ID: id, Text: text}, Rank: rank, Retrieved: rank, Primary: primary}
	}
	chunks := []ContextChunk{
		ctxOf("a", "Every package in the archive has a maintainer. The archive is mirrored worldwide and updated daily.", 1, true),
		ctxOf("b1", "This section describes the configuration files read at start-up by the system.", 2, false),
		ctxOf("b2", "To keep a package at its installed version, mark it with apt-mark hold before you upgrade.", 2, true),
		ctxOf("c", "Nothing in this paragraph concerns the question at all, it talks about fonts and colours.", 3, true),
	}
	w := map[string]float64{"keep": 2, "package": 1, "installed": 2, "version": 2, "upgrade": 2}
	q := "How do I keep a package at its installed version when I upgrade?"
	got := e.evidenceOrder(q, chunks, Evidence{Weights: w}, nil)
	var ids []string
	var ranks []int
	for _, c := range got {
		ids = append(ids, c.Chunk.ID)
		ranks = append(ranks, c.Rank)
	}
	require.Equal(t, []string{"b1", "b2", "a", "c"}, ids)
	require.Equal(t, []int{2, 2, 1, 3}, ranks)
	require.Equal(t, chunks, e.evidenceOrder(q, chunks, Evidence{}, nil))
	require.Equal(t, "a", chunks[0].Chunk.ID, "the context given is not reordered in place")
}

// TestEvidenceOrderLead: a passage holding more of the question moves
// above the first one only when retrieval put them close (Lead): one fused
// at 0.6 of the first stays below it, one at 0.98 moves up, and so does one
// a reranker moved up, whatever its fused share.
func TestEvidenceOrderLead(t *testing.T) {
	e := NewExtractive(analysis.Terms)
	w := map[string]float64{}
	for _, t := range analysis.Terms("lint lint tool shell scripts mistakes mistakes") {
		w[t]++
	}
	q := "Is there a lint tool that checks my shell scripts for mistakes?"
	first := ContextChunk{Chunk: citebook.Chunk{ID: "row", Text: "shellcheck: lint tool for shell scripts."}, Rank: 1, Retrieved: 1, Primary: true, Lead: 1}
	other := func(rank, retrieved int, lead float64) ContextChunk {
		return ContextChunk{Chunk: citebook.Chunk{ID: "prose", Text: "Learn from shell mistakes: a lint tool helps, and shell scripts often fail."}, Rank: rank, Retrieved: retrieved, Primary: true, Lead: lead}
	}
	for _, c := range []struct {
		second ContextChunk
		want   string
	}{
		{other(2, 2, 0.6), "row"},
		{other(2, 2, 0.98), "prose"},
		{other(2, 2, 0), "prose"}, // unknown: the rank step alone
	} {
		got := e.evidenceOrder(q, []ContextChunk{first, c.second}, Evidence{Weights: w}, nil)
		require.Equal(t, c.want, got[0].Chunk.ID, "lead %v", c.second.Lead)
	}
	// A reranker put the prose first: its fused share no longer counts.
	reranked := []ContextChunk{other(1, 2, 0.6), {Chunk: first.Chunk, Rank: 2, Retrieved: 1, Primary: true, Lead: 1}}
	require.Equal(t, "prose", e.evidenceOrder(q, reranked, Evidence{Weights: w}, nil)[0].Chunk.ID)
}
