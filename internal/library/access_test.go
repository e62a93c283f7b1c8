package library_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
	"github.com/citebook/citebook/internal/dbtest"
	"github.com/citebook/citebook/internal/testlib"
)

// TestRevokedAccessIsNeverServed checks the invariant of acl.Resolver.Cache
// across processes, on SQLite and PostgreSQL: a server caches each
// tenant's books and grants, while another handle on the same library (the
// CLI, or a second server) adds and removes grants, changes a book's
// groups and deactivates it. Once such a write returns, the server's next
// question never sees the access it took away — not eventually, at once —
// while other questions keep refilling the cache concurrently.
func TestRevokedAccessIsNeverServed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		c := testlib.Config(t.TempDir())
		if strings.HasPrefix(target, "postgres") {
			c.Meta = target
		}
		server := testlib.Open(t, c)
		admin := testlib.Open(t, c)
		book := filepath.Join(t.TempDir(), "staff.md")
		require.NoError(t, os.WriteFile(book, []byte("# Staff handbook\n\nThe vault code changes every Monday.\n"), 0o644))
		in := citebook.BookInput{BookID: "staff", Tenant: "acme", Groups: []string{"staff"}, Path: book}
		testlib.Index(t, admin, in)

		mallory := citebook.Principal{Tenant: "acme", User: "mallory"}
		// sees answers as a question on the server does: it begins (one
		// sync), then resolves the filter under that context.
		sees := func() bool {
			qctx, err := server.Follow.Begin(ctx)
			require.NoError(t, err)
			f, err := server.ACL.Filter(qctx, mallory)
			require.NoError(t, err)
			return slices.ContainsFunc(f.Books, func(b citebook.BookScope) bool { return b.BookID == "staff" })
		}
		require.False(t, sees(), "the book is closed to mallory")

		// Other questions refill the cache at every moment.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if qctx, err := server.Follow.Begin(ctx); err == nil {
						_, _ = server.ACL.Filter(qctx, mallory)
					}
				}
			}()
		}
		defer func() { close(stop); wg.Wait() }()

		for i := range 20 {
			// The other handle grants and revokes; every fourth round the
			// server itself does.
			h := admin
			if i%4 == 3 {
				h = server
			}
			g, err := h.Grants.Add(ctx, acl.Grant{Tenant: "acme", BookID: "staff", SubjectKind: acl.SubjectUser,
				Subject: "mallory", Effect: acl.Allow})
			require.NoError(t, err)
			require.True(t, sees(), "round %d: the grant is seen once added", i)
			require.NoError(t, h.Grants.Remove(ctx, "acme", g.ID))
			require.False(t, sees(), "round %d: a removed grant is never served after the removal returned", i)
		}

		// A book's groups decide too: opened to everyone, then closed again.
		b, err := admin.Meta.Book(ctx, "staff")
		require.NoError(t, err)
		open := *b
		open.Groups = nil
		require.NoError(t, admin.Meta.PutBook(ctx, open))
		require.True(t, sees(), "a book without groups is open")
		require.NoError(t, admin.Meta.PutBook(ctx, *b))
		require.False(t, sees(), "closed again at once")

		// Deactivated, the book is closed to its own staff too.
		staff := citebook.Principal{Tenant: "acme", User: "sam", Groups: []string{"staff"}}
		qctx, err := server.Follow.Begin(ctx)
		require.NoError(t, err)
		f, err := server.ACL.Filter(qctx, staff)
		require.NoError(t, err)
		require.Len(t, f.Books, 1)
		require.NoError(t, admin.Meta.Deactivate(ctx, "staff"))
		qctx, err = server.Follow.Begin(ctx)
		require.NoError(t, err)
		f, err = server.ACL.Filter(qctx, staff)
		require.NoError(t, err)
		require.Empty(t, f.Books, "a deactivated book is closed at once")
	})
}
