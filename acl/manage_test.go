package acl

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/internal/dbtest"
)

// bookMap serves the test library by ID, as the metadata database does.
type bookMap []citebook.Book

func (m bookMap) Book(_ context.Context, id string) (*citebook.Book, error) {
	for _, b := range m {
		if b.ID == id {
			return &b, nil
		}
	}
	return nil, citebook.Errorf(citebook.ENOTFOUND, "book %q not found", id)
}

// newManager opens a manager over a new metadata database at target
// (dbtest.Each gives one of each kind).
func newManager(t testing.TB, target string) *Manager {
	t.Helper()
	db, err := metadb.Open(context.Background(), target)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return NewManager(NewStore(db.SQL()), bookMap(library), parents)
}

// TestManagerAdd: one case per way a grant can be refused, and the ones
// that are stored.
func TestManagerAdd(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, target string) { testManagerAdd(t, newManager(t, target)) })
}

func testManagerAdd(t *testing.T, m *Manager) {
	ctx := context.Background()
	tests := []struct {
		name string
		g    Grant
		code string // "" when stored
	}{
		{"whole book for a user", grant("r-intro", nil, SubjectUser, "alice", Allow), ""},
		{"chapter by its top heading", grant("r-intro", chapter3, SubjectGroup, "interns", Deny), ""},
		{"section by its full path", grant("r-intro", []string{"3 Objects, their modes and attributes", "3.2 Changing the length of an object"}, SubjectUser, "bob", Deny), ""},
		{"heading typed in another case", grant("walden", []string{" the ponds "}, SubjectTenant, "", Allow), ""},
		{"whole book not indexed yet", grant("debref", nil, SubjectGroup, "debian", Allow), ""},
		{"unknown book", grant("nope", nil, SubjectUser, "alice", Allow), citebook.ENOTFOUND},
		{"another tenant's book", grant("r-intro-globex", nil, SubjectUser, "alice", Allow), citebook.ENOTFOUND},
		{"unknown chapter", grant("r-intro", []string{"99 Nothing"}, SubjectUser, "alice", Deny), citebook.ENOTFOUND},
		{"section under the wrong chapter", grant("r-intro", []string{"Preface", "3.2 Changing the length of an object"}, SubjectUser, "alice", Deny), citebook.ENOTFOUND},
		{"chapter of a book not indexed yet", grant("debref", []string{"Preface"}, SubjectUser, "alice", Deny), citebook.ECONFLICT},
		{"malformed effect", grant("r-intro", nil, SubjectUser, "alice", "perhaps"), citebook.EINVALID},
		{"malformed subject kind", grant("r-intro", nil, "everyone", "", Allow), citebook.EINVALID},
		{"user without a name", grant("r-intro", nil, SubjectUser, " ", Allow), citebook.EINVALID},
		{"no tenant", Grant{BookID: "r-intro", SubjectKind: SubjectTenant, Effect: Allow}, citebook.EINVALID},
		{"separator inside a heading", grant("r-intro", []string{"3 Objects\x1fx"}, SubjectUser, "alice", Deny), citebook.EINVALID},
		{"absurdly long subject", grant("r-intro", nil, SubjectUser, strings.Repeat("a", 300), Allow), citebook.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := m.Add(ctx, tt.g)
			require.Equal(t, tt.code, citebook.ErrorCode(err), "%v", err)
			if tt.code == "" {
				require.Positive(t, g.ID)
			}
		})
	}
	all, err := m.List(ctx, "acme", "")
	require.NoError(t, err)
	require.Len(t, all, 5, "only the valid grants were stored")
	onWalden, err := m.List(ctx, "acme", "walden")
	require.NoError(t, err)
	require.Len(t, onWalden, 1)
	other, err := m.List(ctx, "globex", "")
	require.NoError(t, err)
	require.Equal(t, []Grant{}, other)
}

// TestManagerTakesEffectAtOnce: a resolver over the manager sees a grant on
// the very next Filter call, and stops seeing it once removed.
func TestManagerTakesEffectAtOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, target string) { testManagerTakesEffectAtOnce(t, newManager(t, target)) })
}

func testManagerTakesEffectAtOnce(t *testing.T, m *Manager) {
	ctx := context.Background()
	r := NewResolver(libraryLister(library), m, parents)
	bob := citebook.Principal{Tenant: "acme", User: "bob"}
	visible := func() []citebook.BookScope {
		f, err := r.Filter(ctx, bob)
		require.NoError(t, err)
		return f.Books
	}
	require.Equal(t, []citebook.BookScope{sc("r-intro", 2)}, visible())
	g, err := m.Add(ctx, grant("walden", nil, SubjectUser, "bob", Allow))
	require.NoError(t, err)
	require.Equal(t, []citebook.BookScope{sc("r-intro", 2), sc("walden", 1)}, visible())
	d, err := m.Add(ctx, grant("r-intro", nil, SubjectUser, "bob", Deny))
	require.NoError(t, err)
	require.Equal(t, []citebook.BookScope{sc("walden", 1)}, visible())

	require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(m.Remove(ctx, "globex", d.ID)), "another tenant's grant")
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(m.Remove(ctx, "acme", 0)))
	require.NoError(t, m.Remove(ctx, "acme", d.ID))
	require.NoError(t, m.Remove(ctx, "acme", g.ID))
	require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(m.Remove(ctx, "acme", g.ID)), "removed twice")
	require.Equal(t, []citebook.BookScope{sc("r-intro", 2)}, visible())
}

type libraryLister []citebook.Book

func (l libraryLister) Books(_ context.Context, tenant string) ([]citebook.Book, error) {
	var out []citebook.Book
	for _, b := range l {
		if b.Tenant == tenant {
			out = append(out, b)
		}
	}
	return out, nil
}

// FuzzManagerAdd: whatever a caller sends, a stored grant is valid, names a
// book of its own tenant, and a chapter that exists; everything else is
// refused with invalid, not_found or conflict — never stored, never a panic.
func FuzzManagerAdd(f *testing.F) {
	f.Add("acme", "r-intro", "3 Objects, their modes and attributes", "", "user", "alice", "deny")
	f.Add("acme", "walden", "", "", "group", "readers", "allow")
	f.Add("globex", "r-intro", "Preface", "", "tenant", "", "allow")
	f.Add("acme", "debref", "Preface", "x", "user", "bob", "deny")
	f.Add("acme", "r-intro", "3 objects, their modes and attributes", "3.1 intrinsic attributes: mode and length", "tenant", "acme", "deny")
	// On PostgreSQL when one is at hand (its text is stricter than
	// SQLite's: no NUL, no invalid UTF-8), else on SQLite.
	target := filepath.Join(f.TempDir(), "meta.db")
	if os.Getenv(dbtest.Env) != "" {
		target = dbtest.DSN(f)
	}
	m := newManager(f, target)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, tenant, book, h1, h2, kind, subject, effect string) {
		var path []string
		for _, h := range []string{h1, h2} {
			if h != "" {
				path = append(path, h)
			}
		}
		g, err := m.Add(ctx, Grant{Tenant: tenant, BookID: book, Path: path, SubjectKind: SubjectKind(kind), Subject: subject, Effect: Effect(effect)})
		if err != nil {
			require.Contains(t, []string{citebook.EINVALID, citebook.ENOTFOUND, citebook.ECONFLICT}, citebook.ErrorCode(err), "%v", err)
			return
		}
		require.NoError(t, g.Validate())
		b, err := bookMap(library).Book(ctx, g.BookID)
		require.NoError(t, err)
		require.Equal(t, b.Tenant, g.Tenant, "a grant never names another tenant's book")
		if len(g.Path) > 0 {
			found := false
			for _, p := range parents[g.BookID] {
				found = found || HasPrefix(p.HeadingPath, g.Path)
			}
			require.True(t, found, "stored chapter %q exists", g.Path)
		}
		stored, err := m.List(ctx, g.Tenant, g.BookID)
		require.NoError(t, err)
		require.Contains(t, stored, g, "the stored grant reads back unchanged")
	})
}
