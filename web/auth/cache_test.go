package auth

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index/metadb"
)

// TestCachedRevocationWithinTTL: a cached token is refused once CacheTTL
// has passed after its revocation, a new token works at once (failures
// are not cached), and the cache answers repeated requests without the
// database.
func TestCachedRevocationWithinTTL(t *testing.T) {
	ctx := context.Background()
	db, err := metadb.Open(ctx, filepath.Join(t.TempDir(), "meta.db"))
	require.NoError(t, err)
	defer db.Close()
	s := NewStore(db.SQL())
	c := NewCached(s)
	clock := time.Unix(1_000_000, 0)
	c.now = func() time.Time { return clock }

	issued, err := c.AnyIssued(ctx)
	require.NoError(t, err)
	require.False(t, issued)

	alice := citebook.Principal{Tenant: "acme", User: "alice", Groups: []string{"eng"}}
	_, _, err = c.Verify(ctx, "cb_unknown")
	require.Equal(t, citebook.EUNAUTHORIZED, citebook.ErrorCode(err))
	secret, tok, err := s.Create(ctx, alice)
	require.NoError(t, err)
	key, p, err := c.Verify(ctx, secret)
	require.NoError(t, err, "a token created after a failed lookup works at once")
	require.Equal(t, tok.ID, key)
	require.Equal(t, alice, p)
	p.Groups[0] = "changed"

	issued, err = c.AnyIssued(ctx)
	require.NoError(t, err)
	require.True(t, issued)

	require.NoError(t, s.Revoke(ctx, tok.ID))
	clock = clock.Add(CacheTTL / 2)
	_, p, err = c.Verify(ctx, secret)
	require.NoError(t, err, "within the TTL the cached answer stands")
	require.Equal(t, alice, p, "callers cannot change the cached principal")
	clock = clock.Add(CacheTTL / 2)
	_, _, err = c.Verify(ctx, secret)
	require.Equal(t, citebook.EUNAUTHORIZED, citebook.ErrorCode(err), "revoked once the TTL has passed")
	_, _, err = c.Verify(ctx, secret)
	require.Equal(t, citebook.EUNAUTHORIZED, citebook.ErrorCode(err))
}
