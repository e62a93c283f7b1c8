package lexical

import (
	"context"
	"testing"

	"github.com/citebook/citebook"
	"github.com/stretchr/testify/require"
)

// TestIndexContextIsSearchedNotShown: a continued table's chunk is found by
// the column years of its index-only context, also after a reopen from the
// snapshot, and the hit's text is still the chunk's own.
func TestIndexContextIsSearchedNotShown(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	x := open(t, dir)
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}
	require.NoError(t, x.Upsert(ctx, []citebook.Chunk{
		{ID: "cont", Tenant: "t", BookID: "b", Version: 1, ParentID: "p", Text: "Long-term debt 13,411 12,096",
			IndexContext: "(Dollars in millions) 2018 2017"},
		{ID: "other", Tenant: "t", BookID: "b", Version: 1, ParentID: "p", Text: "Long-term debt is described in Note 12"},
	}))
	hits, err := x.Search(ctx, "2018", f, f, 5)
	require.NoError(t, err)
	require.Equal(t, []string{"cont"}, ids(hits))
	require.NoError(t, x.Close())

	x = open(t, dir)
	defer x.Close()
	hits, err = x.Search(ctx, "long-term debt 2018", f, f, 5)
	require.NoError(t, err)
	require.Equal(t, "cont", hits[0].Chunk.ID)
	require.Equal(t, "Long-term debt 13,411 12,096", hits[0].Chunk.Text)
	require.Equal(t, "(Dollars in millions) 2018 2017", hits[0].Chunk.IndexContext)
}
