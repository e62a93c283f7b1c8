package acl

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/internal/dbtest"
)

func TestStoreAndResolver(t *testing.T) { dbtest.Each(t, testStoreAndResolver) }

func testStoreAndResolver(t *testing.T, target string) {
	ctx := context.Background()
	db, err := metadb.Open(ctx, target)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	for _, b := range library {
		b.Created = time.Now()
		require.NoError(t, db.PutBook(ctx, b))
	}
	st := NewStore(db.SQL())

	g, err := st.Add(ctx, grant("walden", nil, SubjectUser, "alice", Allow))
	require.NoError(t, err)
	require.NotZero(t, g.ID)
	again, err := st.Add(ctx, grant("walden", nil, SubjectUser, "alice", Allow))
	require.NoError(t, err)
	require.Equal(t, g.ID, again.ID, "granting twice is idempotent")
	_, err = st.Add(ctx, grant("walden", []string{"Economy", "Part 1"}, SubjectGroup, "readers", Deny))
	require.NoError(t, err)
	_, err = st.Add(ctx, Grant{Tenant: "acme", BookID: "walden", SubjectKind: SubjectGroup, Effect: Allow})
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))

	gs, err := st.Grants(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, gs, 2)
	require.Equal(t, []string{"Economy", "Part 1"}, gs[1].Path)
	require.Nil(t, gs[0].Path)
	other, err := st.Grants(ctx, "globex")
	require.NoError(t, err)
	require.Empty(t, other)

	// Books come from the metadata database; with no completed version yet
	// nothing is visible, so activation is what opens a book.
	r := NewResolver(db, st, db)
	f, err := r.Filter(ctx, citebook.Principal{Tenant: "acme", User: "alice"})
	require.NoError(t, err)
	require.Equal(t, []citebook.BookScope{}, f.Books)

	require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(st.Delete(ctx, "globex", g.ID)), "another tenant cannot delete it")
	require.NoError(t, st.Delete(ctx, "acme", g.ID))
	gs, err = st.Grants(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, gs, 1)
}
