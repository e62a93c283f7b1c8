package index_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/memstore"
)

// TestFreshBooksMatchesMetadata: a book's chunks read from the embedded
// store equal the metadata's, version by version after a re-index, and a
// memory that lacks the book (another process's, not yet reloaded) falls
// back to the metadata.
func TestFreshBooksMatchesMetadata(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	h := openHandle(t, dir)
	f, err := index.NewFollower(ctx, h.Meta, quiet())
	require.NoError(t, err)
	b := builder(h)
	var versions []int
	for _, name := range []string{"a.md", "b.md"} {
		res, err := b.Index(ctx, citebook.BookInput{BookID: "guide", Tenant: "acme", Path: bookFile(t, t.TempDir(), name)})
		require.NoError(t, err)
		versions = append(versions, res.Version)
	}
	empty, err := memstore.Open(ctx, t.TempDir())
	require.NoError(t, err)
	defer empty.Close()
	for _, v := range versions {
		want, err := h.Meta.ChunksAt(ctx, "guide", v)
		require.NoError(t, err)
		require.NotEmpty(t, want)
		mem, err := h.Vectors.(index.ChunkReader).ChunksAt(ctx, "guide", v)
		require.NoError(t, err)
		require.Equal(t, len(want), len(mem), "version %d in memory", v)
		for _, fb := range []index.FreshBooks{{Memory: h.Vectors.(index.ChunkReader), Meta: h.Meta, F: f}, {Memory: empty, Meta: h.Meta, F: f}} {
			got, err := fb.ChunksAt(ctx, "guide", v)
			require.NoError(t, err)
			require.Len(t, got, len(want))
			for i := range want {
				require.Equal(t, want[i].ID, got[i].ID, "version %d chunk %d", v, i)
				require.Equal(t, want[i].Text, got[i].Text)
				require.Equal(t, want[i].ParentID, got[i].ParentID)
				require.Equal(t, want[i].PageStart, got[i].PageStart)
			}
		}
	}
}
