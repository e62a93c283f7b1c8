package qa

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

// TestFuseRewritten: each rewrite's BM25 is normalised by its best hit, a
// chunk takes its best rewrite, and the question's own BM25 keeps its full
// weight; a chunk only a rewrite found is a candidate the threshold judges
// as it judges the expansion's.
func TestFuseRewritten(t *testing.T) {
	hit := func(id string, s float64) citebook.Hit { return citebook.Hit{Chunk: citebook.Chunk{ID: id}, Score: s} }
	lex := []citebook.Hit{hit("a", 10), hit("b", 8)}
	rewritten := [][]citebook.Hit{
		{hit("b", 4), hit("c", 2)}, // b 1, c 0.5
		{hit("c", 9), hit("a", 3)}, // c 1, a 0.33
	}
	got := fuse(0, nil, lex, nil, rewritten, Fusion{Lexical: 1, Rewrite: 0.5, Repeat: 1}, nil)
	scores := map[string]float64{}
	var ids []string
	for _, c := range got {
		scores[c.chunk.ID] = c.fused
		ids = append(ids, c.chunk.ID)
	}
	// a: 1 + 0.5·(1/3); b: 0.8 + 0.5·1; c: 0.5·1.
	require.Equal(t, []string{"b", "a", "c"}, ids)
	require.InDelta(t, 1.3, scores["b"], 1e-12)
	require.InDelta(t, 1+0.5/3, scores["a"], 1e-12)
	require.InDelta(t, 0.5, scores["c"], 1e-12)
	require.Zero(t, got[2].lexRank, "a rewrite does not rank as the question's BM25")

	off := fuse(0, nil, lex, nil, rewritten, Fusion{Lexical: 1, Rewrite: 0, Repeat: 1}, nil)
	require.InDelta(t, 1.0, off[0].fused, 1e-12, "weight 0 adds nothing")
}

// TestCleanRewrites keeps at most two distinct rewrites other than the
// question, each cut to a short query.
func TestCleanRewrites(t *testing.T) {
	long := "word "
	for range 60 {
		long += "word "
	}
	got := cleanRewrites("What is X?", []string{" what is x? ", "", "x definition", "X Definition", long, "third"})
	require.Len(t, got, 2)
	require.Equal(t, "x definition", got[0])
	require.LessOrEqual(t, len([]rune(got[1])), maxRewriteRunes)
	require.NotContains(t, got[1], "…")
}
