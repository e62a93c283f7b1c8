package acl

import (
	"context"
	"database/sql"
	"strings"

	"github.com/citebook/citebook"
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

// Add records a grant and returns it with its ID; granting the same thing
// twice is not an error.
func (s *Store) Add(ctx context.Context, g Grant) (Grant, error) {
	if err := g.Validate(); err != nil {
		return Grant{}, err
	}
	_, err := s.db.ExecContext(ctx,
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
	res, err := s.db.ExecContext(ctx, `DELETE FROM grants WHERE tenant = ? AND id = ?`, tenant, id)
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
}

// NewResolver reads books, grants and parents from the given sources.
func NewResolver(books BookLister, grants GrantLister, parents ParentLister) *Resolver {
	return &Resolver{books: books, grants: grants, parents: parents}
}

// Filter returns what p may read right now.
func (r *Resolver) Filter(ctx context.Context, p citebook.Principal) (citebook.Filter, error) {
	if p.Tenant == "" {
		return citebook.Filter{}, citebook.Errorf(citebook.EUNAUTHORIZED, "no tenant given")
	}
	books, err := r.books.Books(ctx, p.Tenant)
	if err != nil {
		return citebook.Filter{}, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot list books")
	}
	grants, err := r.grants.Grants(ctx, p.Tenant)
	if err != nil {
		return citebook.Filter{}, err
	}
	return Resolve(ctx, p, books, grants, r.parents)
}
