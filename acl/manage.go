package acl

import (
	"context"
	"slices"
	"strings"

	"github.com/citebook/citebook"
)

// BookReader loads one book; not_found when it does not exist.
type BookReader interface {
	Book(ctx context.Context, id string) (*citebook.Book, error)
}

// Manager is how people manage grants (the CLI's `grants` command and the
// /v1/grants API): Store plus checks that a grant names something real.
// Resolvers read grants live, so a grant added or removed here applies to
// the next request.
//
// Invariant: Add stores a grant only when it is well formed (Validate), its
// book exists in the grant's tenant, and a chapter path matches at least one
// heading path of the book's active version; a book of another tenant reads
// as not found, exactly like a missing one, so grants cannot probe IDs.
type Manager struct {
	*Store
	books   BookReader
	parents ParentLister
}

// NewManager checks grants against books and the parents of their active
// versions before storing them in store.
func NewManager(store *Store, books BookReader, parents ParentLister) *Manager {
	return &Manager{Store: store, books: books, parents: parents}
}

// Add validates g (malformed: invalid; unknown book or chapter: not_found;
// a chapter of a book not indexed yet: conflict) and stores it. Adding the
// same grant twice returns the existing one.
func (m *Manager) Add(ctx context.Context, g Grant) (Grant, error) {
	g.Tenant, g.BookID, g.Subject = strings.TrimSpace(g.Tenant), strings.TrimSpace(g.BookID), strings.TrimSpace(g.Subject)
	if len(g.Path) == 0 {
		g.Path = nil
	}
	if err := g.Validate(); err != nil {
		return Grant{}, err
	}
	b, err := m.books.Book(ctx, g.BookID)
	switch {
	case citebook.ErrorCode(err) == citebook.ENOTFOUND || (err == nil && b.Tenant != g.Tenant):
		return Grant{}, citebook.Errorf(citebook.ENOTFOUND, "no book %q in tenant %q", g.BookID, g.Tenant)
	case err != nil:
		return Grant{}, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot read book %q", g.BookID)
	}
	if len(g.Path) > 0 {
		if b.Active <= 0 {
			return Grant{}, citebook.Errorf(citebook.ECONFLICT, "book %q has no indexed version yet, so its chapters are not known; grant the whole book or wait for the index", g.BookID)
		}
		ps, err := m.parents.Parents(ctx, b.ID, b.Active)
		if err != nil {
			return Grant{}, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot read the chapters of book %q", g.BookID)
		}
		if !slices.ContainsFunc(ps, func(p citebook.Parent) bool { return HasPrefix(p.HeadingPath, g.Path) }) {
			return Grant{}, citebook.Errorf(citebook.ENOTFOUND, "book %q has no chapter %q", g.BookID, citebook.HeadingString(g.Path))
		}
	}
	return m.Store.Add(ctx, g)
}

// List returns a tenant's grants, only those on bookID when it is not empty.
func (m *Manager) List(ctx context.Context, tenant, bookID string) ([]Grant, error) {
	if strings.TrimSpace(tenant) == "" {
		return nil, citebook.Errorf(citebook.EINVALID, "listing grants needs a tenant")
	}
	gs, err := m.Grants(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := []Grant{}
	for _, g := range gs {
		if bookID == "" || g.BookID == bookID {
			out = append(out, g)
		}
	}
	return out, nil
}

// Remove deletes one grant of the tenant; a grant of another tenant is not
// found.
func (m *Manager) Remove(ctx context.Context, tenant string, id int64) error {
	if id <= 0 {
		return citebook.Errorf(citebook.EINVALID, "grant IDs are positive integers")
	}
	return m.Delete(ctx, tenant, id)
}
