package index_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
)

type countingEmbedding struct {
	src   index.EmbeddingSource
	reads atomic.Int64
}

func (c *countingEmbedding) EmbeddingVersion(ctx context.Context) (citebook.EmbeddingVersion, bool, error) {
	c.reads.Add(1)
	return c.src.EmbeddingVersion(ctx)
}

// TestEmbeddingCacheSeesReembedding: the server's cached embedding version
// is read from the database once while nothing changes, and a question
// that begins after another process re-embedded the library (set the
// version) sees the new version.
func TestEmbeddingCacheSeesReembedding(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	server := openHandle(t, dir)
	cli := openHandle(t, dir)
	src := &countingEmbedding{src: server.Meta}
	cache := index.NewEmbeddingCache(src, server.Follow.Generation)

	_, ok, err := cache.EmbeddingVersion(ctx)
	require.NoError(t, err)
	require.False(t, ok, "nothing embedded yet")

	v1 := citebook.EmbeddingVersion{Provider: "builtin", Model: "a", Dimension: 8}
	v2 := citebook.EmbeddingVersion{Provider: "remote", Model: "b", Dimension: 16}
	for _, want := range []citebook.EmbeddingVersion{v1, v2} {
		require.NoError(t, cli.Meta.SetEmbeddingVersion(ctx, want))
		before := src.reads.Load()
		for range 3 {
			q, err := server.Follow.Begin(ctx)
			require.NoError(t, err)
			got, ok, err := cache.EmbeddingVersion(q)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, want, got)
		}
		require.Equal(t, before+1, src.reads.Load(), "read once per change")
	}
}
