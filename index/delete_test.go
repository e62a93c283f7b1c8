package index_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
)

// testDelete removes one of two books: the other is untouched, the deleted
// one is gone from the metadata and both stores, and a second delete is a
// not-found error rather than a silent success.
func testDelete(t *testing.T, e *env) {
	ctx := context.Background()
	b := e.builder(index.BuilderOptions{BatchSize: 16})
	for _, id := range []string{"keep", "drop"} {
		_, err := b.Index(ctx, index.BookInput{BookID: id, Tenant: "acme", Path: writeBook(t, e.dir, id+".md", same)})
		require.NoError(t, err)
	}
	keepMeta, keepVec, keepLex := e.stored(t, "keep")
	require.NotEmpty(t, keepMeta)

	require.NoError(t, b.Delete(ctx, "drop"))
	_, err := e.meta.Book(ctx, "drop")
	require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(err))
	vec, err := e.vec.IDs(ctx, "drop")
	require.NoError(t, err)
	require.Empty(t, vec)
	lex, err := e.lex.IDs(ctx, "drop")
	require.NoError(t, err)
	require.Empty(t, lex)

	m, v, l := e.stored(t, "keep")
	require.Equal(t, keepMeta, m)
	require.Equal(t, keepVec, v)
	require.Equal(t, keepLex, l)

	require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(b.Delete(ctx, "drop")))
}
