package auth

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/internal/dbtest"
)

// eachStore runs fn on a store over an empty metadata database of each
// kind (SQLite, PostgreSQL), opened the way serve does, so the test runs
// against the shipped migrations of both.
func eachStore(t *testing.T, fn func(t *testing.T, s *Store)) {
	dbtest.Each(t, func(t *testing.T, target string) {
		db, err := metadb.Open(context.Background(), target)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		fn(t, NewStore(db.SQL()))
	})
}

func TestStoreLifecycle(t *testing.T) { eachStore(t, testStoreLifecycle) }

func testStoreLifecycle(t *testing.T, s *Store) {
	ctx := context.Background()

	n, err := s.Active(ctx)
	require.NoError(t, err)
	require.Zero(t, n)

	alice := citebook.Principal{Tenant: "acme", User: "alice", Groups: []string{"eng", "ops"}, Admin: true}
	secret, tok, err := s.Create(ctx, alice)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(secret, tokenPrefix))
	require.Len(t, secret, len(tokenPrefix)+43, "32 random bytes, base64url")
	require.Equal(t, alice, tok.Principal)

	secret2, _, err := s.Create(ctx, citebook.Principal{Tenant: "acme", User: "bob"})
	require.NoError(t, err)
	require.NotEqual(t, secret, secret2)

	got, err := s.Lookup(ctx, secret)
	require.NoError(t, err)
	require.Equal(t, tok.ID, got.ID)
	require.Equal(t, alice, got.Principal)

	// The secret itself is never stored.
	var stored int
	require.NoError(t, s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM api_tokens WHERE hash = ? OR id = ?`, secret, secret).Scan(&stored))
	require.Zero(t, stored)

	for _, bad := range []string{"", "cb_", secret + "x", strings.TrimPrefix(secret, tokenPrefix)} {
		_, err := s.Lookup(ctx, bad)
		require.Equal(t, citebook.EUNAUTHORIZED, citebook.ErrorCode(err), "secret %q", bad)
	}

	require.NoError(t, s.Revoke(ctx, tok.ID))
	require.NoError(t, s.Revoke(ctx, tok.ID), "revoking twice is fine")
	_, err = s.Lookup(ctx, secret)
	require.Equal(t, citebook.EUNAUTHORIZED, citebook.ErrorCode(err))
	require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(s.Revoke(ctx, "nope")))

	list, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.False(t, list[0].Revoked.IsZero() && list[1].Revoked.IsZero())
	n, err = s.Active(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

func TestCreateRejectsIncompletePrincipals(t *testing.T) {
	eachStore(t, testCreateRejectsIncompletePrincipals)
}

func testCreateRejectsIncompletePrincipals(t *testing.T, s *Store) {
	for _, p := range []citebook.Principal{
		{User: "u"},
		{Tenant: "t"},
		{Tenant: "t", User: "u", Groups: []string{"a,b"}},
		{Tenant: "t", User: "u", Groups: []string{""}},
		{Tenant: "t", User: "u\x00"},
		{Tenant: "t\xff", User: "u"},
	} {
		_, _, err := s.Create(context.Background(), p)
		require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err), "%+v", p)
	}
}

// TestAnyIssuedOutlivesRevocation: zero-config mode keys on AnyIssued, which
// stays true once a token was created, even with every token revoked.
func TestAnyIssuedOutlivesRevocation(t *testing.T) { eachStore(t, testAnyIssuedOutlivesRevocation) }

func testAnyIssuedOutlivesRevocation(t *testing.T, s *Store) {
	ctx := context.Background()
	issued, err := s.AnyIssued(ctx)
	require.NoError(t, err)
	require.False(t, issued)
	_, tok, err := s.Create(ctx, citebook.Principal{Tenant: "acme", User: "alice"})
	require.NoError(t, err)
	issued, err = s.AnyIssued(ctx)
	require.NoError(t, err)
	require.True(t, issued)
	require.NoError(t, s.Revoke(ctx, tok.ID))
	issued, err = s.AnyIssued(ctx)
	require.NoError(t, err)
	require.True(t, issued, "revoking every token does not turn zero-config back on")
}
