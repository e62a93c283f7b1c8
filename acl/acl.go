// Package acl decides what a principal may read. It turns books, their group
// lists and explicit grants into a citebook.Filter that stores apply inside
// retrieval, so access is settled before a single chunk is fetched.
package acl

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/citebook/citebook"
)

// SubjectKind says whom a grant is about.
type SubjectKind string

// Subjects a grant can name.
const (
	SubjectUser   SubjectKind = "user"
	SubjectGroup  SubjectKind = "group"
	SubjectTenant SubjectKind = "tenant" // every user of the grant's tenant
)

// Effect is what a grant does; a deny always beats an allow so one grant can
// close a chapter without auditing every group that might open it.
type Effect string

// Grant effects.
const (
	Allow Effect = "allow"
	Deny  Effect = "deny"
)

// Grant opens or closes a book, or one chapter of it, to a subject. Path is
// a heading-path prefix: nil covers the whole book, ["3 Objects"] covers the
// chapter and every section under it. Paths rather than parent IDs keep a
// grant valid across re-indexing.
type Grant struct {
	ID          int64       `json:"id,omitempty"`
	Tenant      string      `json:"tenant"`
	BookID      string      `json:"book_id"`
	Path        []string    `json:"path,omitempty"`
	SubjectKind SubjectKind `json:"subject_kind"`
	Subject     string      `json:"subject,omitempty"`
	Effect      Effect      `json:"effect"`
}

// Validate rejects grants that could never match or would be ambiguous.
func (g *Grant) Validate() error {
	switch {
	case g.Tenant == "":
		return citebook.Errorf(citebook.EINVALID, "grant needs a tenant")
	case g.BookID == "":
		return citebook.Errorf(citebook.EINVALID, "grant needs a book")
	case g.Effect != Allow && g.Effect != Deny:
		return citebook.Errorf(citebook.EINVALID, "grant effect must be allow or deny, not %q", g.Effect)
	}
	switch g.SubjectKind {
	case SubjectUser, SubjectGroup:
		if g.Subject == "" {
			return citebook.Errorf(citebook.EINVALID, "a %s grant needs a subject", g.SubjectKind)
		}
	case SubjectTenant:
	default:
		return citebook.Errorf(citebook.EINVALID, "grant subject kind must be user, group or tenant, not %q", g.SubjectKind)
	}
	if len(g.BookID) > maxName || len(g.Subject) > maxName || len(g.Tenant) > maxName {
		return citebook.Errorf(citebook.EINVALID, "grant names are at most %d bytes", maxName)
	}
	for _, s := range append([]string{g.Tenant, g.BookID, g.Subject}, g.Path...) {
		// What the metadata databases store as given (PostgreSQL's text
		// takes no NUL and no invalid UTF-8).
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			return citebook.Errorf(citebook.EINVALID, "grant names and headings must be UTF-8 text without NUL characters")
		}
	}
	if len(g.Path) > maxDepth {
		return citebook.Errorf(citebook.EINVALID, "grant path is deeper than %d headings", maxDepth)
	}
	for _, h := range g.Path {
		switch {
		case strings.TrimSpace(h) == "":
			return citebook.Errorf(citebook.EINVALID, "grant path has an empty heading")
		case len(h) > maxHeading:
			return citebook.Errorf(citebook.EINVALID, "grant path has a heading longer than %d bytes", maxHeading)
		case strings.Contains(h, pathSep):
			// pathSep joins headings in the table; one inside a heading
			// would split it on the way back.
			return citebook.Errorf(citebook.EINVALID, "grant path has a control character in a heading")
		}
	}
	return nil
}

// Bounds on grant fields: far above any real book ID, name or heading, low
// enough that a grant stays a small row.
const (
	maxName    = 256
	maxDepth   = 16
	maxHeading = 1024
)

// appliesTo reports whether the grant names the principal.
func (g *Grant) appliesTo(p citebook.Principal) bool {
	if g.Tenant != p.Tenant {
		return false
	}
	switch g.SubjectKind {
	case SubjectUser:
		return g.Subject == p.User
	case SubjectGroup:
		return slices.Contains(p.Groups, g.Subject)
	case SubjectTenant:
		return g.Subject == "" || g.Subject == p.Tenant
	}
	return false
}

// ParentLister returns the parents of one version of a book; the resolver
// needs them only for books with chapter grants.
type ParentLister interface {
	Parents(ctx context.Context, bookID string, version int) ([]citebook.Parent, error)
}

// Resolve computes the filter for principal p over books (any tenant; other
// tenants' books are ignored) and grants. A book is visible when it belongs
// to p's tenant, has a completed version, and either lists no groups, lists
// one of p's groups, or has an allow grant for p on the whole book — and no
// whole-book deny applies. A chapter allow on an otherwise closed book opens
// only that chapter. Chapter denies become DenyParents. Admins see every
// completed book of their tenant, grants notwithstanding.
func Resolve(ctx context.Context, p citebook.Principal, books []citebook.Book, grants []Grant, parents ParentLister) (citebook.Filter, error) {
	if p.Tenant == "" {
		return citebook.Filter{}, citebook.Errorf(citebook.EUNAUTHORIZED, "no tenant given")
	}
	f := citebook.Filter{Tenant: p.Tenant, Books: []citebook.BookScope{}}
	byBook := map[string][]Grant{}
	for _, g := range grants {
		if g.appliesTo(p) {
			byBook[g.BookID] = append(byBook[g.BookID], g)
		}
	}
	for _, b := range books {
		if b.Tenant != p.Tenant || b.Active <= 0 {
			continue
		}
		scope := citebook.BookScope{BookID: b.ID, Version: b.Active}
		if p.Admin {
			f.Books = append(f.Books, scope)
			continue
		}
		var bookAllow, bookDeny bool
		var allowPaths, denyPaths [][]string
		for _, g := range byBook[b.ID] {
			switch {
			case len(g.Path) == 0 && g.Effect == Deny:
				bookDeny = true
			case len(g.Path) == 0:
				bookAllow = true
			case g.Effect == Deny:
				denyPaths = append(denyPaths, g.Path)
			default:
				allowPaths = append(allowPaths, g.Path)
			}
		}
		if bookDeny {
			continue
		}
		open := bookAllow || len(b.Groups) == 0 || slices.ContainsFunc(b.Groups, func(g string) bool { return slices.Contains(p.Groups, g) })
		if !open && len(allowPaths) == 0 {
			continue
		}
		if len(denyPaths) == 0 && open {
			f.Books = append(f.Books, scope)
			continue
		}
		if parents == nil {
			return citebook.Filter{}, citebook.Errorf(citebook.EINTERNAL, "chapter grants on book %s need its parents", b.ID)
		}
		ps, err := parents.Parents(ctx, b.ID, b.Active)
		if err != nil {
			return citebook.Filter{}, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot read the chapters of book %s", b.ID)
		}
		shown, denied := 0, []string{}
		for _, par := range ps {
			hidden := slices.ContainsFunc(denyPaths, func(d []string) bool { return HasPrefix(par.HeadingPath, d) })
			if !open && !slices.ContainsFunc(allowPaths, func(a []string) bool { return HasPrefix(par.HeadingPath, a) }) {
				hidden = true
			}
			if hidden {
				denied = append(denied, par.ID)
			} else {
				shown++
			}
		}
		if shown > 0 {
			f.Books = append(f.Books, scope)
			f.DenyParents = append(f.DenyParents, denied...)
		}
	}
	return f, nil
}

// HasPrefix reports whether heading path lies inside the chapter prefix.
// Headings compare with surrounding space trimmed and case folded, since a
// grant is typed by a person while the path comes from the parser.
func HasPrefix(path, prefix []string) bool {
	if len(prefix) == 0 || len(path) < len(prefix) {
		return len(prefix) == 0
	}
	for i, h := range prefix {
		if !strings.EqualFold(strings.TrimSpace(path[i]), strings.TrimSpace(h)) {
			return false
		}
	}
	return true
}

// Narrow restricts a filter to some books, keeping each book's version; a
// book outside the filter stays invisible, so narrowing never widens access.
func Narrow(f citebook.Filter, bookIDs []string) citebook.Filter {
	if len(bookIDs) == 0 {
		return f
	}
	out := citebook.Filter{Tenant: f.Tenant, DenyParents: f.DenyParents, Books: []citebook.BookScope{}}
	for _, b := range f.Books {
		if slices.Contains(bookIDs, b.BookID) {
			out.Books = append(out.Books, b)
		}
	}
	return out
}
