package acl

import (
	"context"
	"database/sql"
	"strings"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/gencache"
)

// pathSep joins heading paths in the grants table; a control character no
// heading contains, so paths round-trip exactly.
const pathSep = "\x1f"

// Store keeps grants in the metadata database (table grants, created by
// migration 0002_acl).
type Store struct {
	db DB
}

// DB is the metadata database as the grants need it: a *sql.DB of SQLite,
// or the store's dialect-aware pool (index/metadb's SQL), which rebinds the
// ? placeholders below for PostgreSQL.
type DB interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// NewStore uses db, which must already be migrated.
func NewStore(db DB) *Store { return &Store{db: db} }

// accessWriter is a DB that writes a grant in one transaction with an
// access change in the library's change log (index/metadb's SQL), which
// servers caching access (Resolver.Cache) read before each question.
type accessWriter interface {
	ExecAccess(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// write runs a statement changing grants: logged as an access change when
// the database can (the metadata database always can; a bare *sql.DB in a
// test cannot, and no Resolver may cache over it).
func (s *Store) write(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if w, ok := s.db.(accessWriter); ok {
		return w.ExecAccess(ctx, query, args...)
	}
	return s.db.ExecContext(ctx, query, args...)
}

// Add records a grant and returns it with its ID; granting the same thing
// twice is not an error.
func (s *Store) Add(ctx context.Context, g Grant) (Grant, error) {
	if err := g.Validate(); err != nil {
		return Grant{}, err
	}
	_, err := s.write(ctx,
		`INSERT INTO grants (tenant, book_id, path, subject_kind, subject, effect) VALUES (?, ?, ?, ?, ?, ?)
		 ON CONFLICT (tenant, book_id, path, subject_kind, subject, effect) DO NOTHING`,
		g.Tenant, g.BookID, strings.Join(g.Path, pathSep), string(g.SubjectKind), g.Subject, string(g.Effect))
	if err != nil {
		return Grant{}, citebook.Wrap(err, citebook.EINTERNAL, "cannot save the grant")
	}
	err = s.db.QueryRowContext(ctx,
		`SELECT id FROM grants WHERE tenant = ? AND book_id = ? AND path = ? AND subject_kind = ? AND subject = ? AND effect = ?`,
		g.Tenant, g.BookID, strings.Join(g.Path, pathSep), string(g.SubjectKind), g.Subject, string(g.Effect)).Scan(&g.ID)
	if err != nil {
		return Grant{}, citebook.Wrap(err, citebook.EINTERNAL, "cannot read the saved grant")
	}
	return g, nil
}

// Delete removes a grant of the tenant; a grant of another tenant is
// reported as not found so IDs do not reveal other tenants' grants.
func (s *Store) Delete(ctx context.Context, tenant string, id int64) error {
	res, err := s.write(ctx, `DELETE FROM grants WHERE tenant = ? AND id = ?`, tenant, id)
	if err != nil {
		return citebook.Wrap(err, citebook.EINTERNAL, "cannot delete the grant")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return citebook.Wrap(err, citebook.EINTERNAL, "cannot delete the grant")
	}
	if n == 0 {
		return citebook.Errorf(citebook.ENOTFOUND, "grant %d not found", id)
	}
	return nil
}

// Grants lists every grant of a tenant.
func (s *Store) Grants(ctx context.Context, tenant string) ([]Grant, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT id, tenant, book_id, path, subject_kind, subject, effect FROM grants WHERE tenant = ? ORDER BY id`, tenant)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot read grants")
	}
	defer rows.Close()
	var out []Grant
	for rows.Next() {
		var g Grant
		var path, kind, effect string
		if err := rows.Scan(&g.ID, &g.Tenant, &g.BookID, &path, &kind, &g.Subject, &effect); err != nil {
			return nil, citebook.Wrap(err, citebook.EINTERNAL, "cannot read grants")
		}
		if path != "" {
			g.Path = strings.Split(path, pathSep)
		}
		g.SubjectKind, g.Effect = SubjectKind(kind), Effect(effect)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot read grants")
	}
	return out, nil
}

// BookLister returns the books of a tenant with their groups and active
// versions.
type BookLister interface {
	Books(ctx context.Context, tenant string) ([]citebook.Book, error)
}

// GrantLister returns the grants of a tenant.
type GrantLister interface {
	Grants(ctx context.Context, tenant string) ([]Grant, error)
}

// Resolver resolves filters from live data, so a grant or a newly completed
// version takes effect on the next question.
type Resolver struct {
	books   BookLister
	grants  GrantLister
	parents ParentLister

	// cache, when set (Cache), keeps each tenant's books and grants by the
	// change log's generation.
	cache *gencache.Cache[string, tenantLists]
}

// tenantLists is one tenant's books and grants.
type tenantLists struct {
	books  []citebook.Book
	grants []Grant
}

// maxCachedTenants bounds the cache; a full cache starts over.
const maxCachedTenants = 4096

// NewResolver reads books, grants and parents from the given sources.
func NewResolver(books BookLister, grants GrantLister, parents ParentLister) *Resolver {
	return &Resolver{books: books, grants: grants, parents: parents}
}

// Cache keeps each tenant's books and grants in memory, read again only
// when the change log's generation moved: reading them from the database
// was a tenth of a search's CPU. gen returns the generation as of the
// question (index.Follower.Generation: the follower syncs unless the
// question already did).
//
// Invariant (internal/gencache's): once a write that changes access has
// returned — a grant added or removed, a book's groups or tenant changed, a
// version activated or deactivated, a book deleted — no question that
// begins afterwards, in any process sharing the metadata, is resolved from
// lists read before it. Every such write logs a change in its own
// transaction (index/metadb: ExecAccess, PutBook, Activate, Deactivate,
// DeleteBook).
func (r *Resolver) Cache(gen func(ctx context.Context) (int64, error)) *Resolver {
	r.cache = gencache.New[string, tenantLists](func(ctx context.Context) (int64, error) {
		g, err := gen(ctx)
		if err != nil {
			return 0, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot read library changes")
		}
		return g, nil
	}, maxCachedTenants)
	return r
}

// Filter returns what p may read right now.
func (r *Resolver) Filter(ctx context.Context, p citebook.Principal) (citebook.Filter, error) {
	if p.Tenant == "" {
		return citebook.Filter{}, citebook.Errorf(citebook.EUNAUTHORIZED, "no tenant given")
	}
	books, grants, err := r.read(ctx, p.Tenant)
	if err != nil {
		return citebook.Filter{}, err
	}
	return Resolve(ctx, p, books, grants, r.parents)
}

// read returns a tenant's books and grants, from the cache when it holds
// them for the current generation. Resolve only reads them, so the cached
// slices are shared.
func (r *Resolver) read(ctx context.Context, tenant string) ([]citebook.Book, []Grant, error) {
	if r.cache == nil {
		l, err := r.list(ctx, tenant)
		return l.books, l.grants, err
	}
	l, err := r.cache.Get(ctx, tenant, func(ctx context.Context) (tenantLists, error) { return r.list(ctx, tenant) })
	return l.books, l.grants, err
}

// list reads a tenant's books and grants from the database.
func (r *Resolver) list(ctx context.Context, tenant string) (tenantLists, error) {
	books, err := r.books.Books(ctx, tenant)
	if err != nil {
		return tenantLists{}, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot list books")
	}
	grants, err := r.grants.Grants(ctx, tenant)
	if err != nil {
		return tenantLists{}, err
	}
	return tenantLists{books: books, grants: grants}, nil
}
