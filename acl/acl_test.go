package acl

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

type parentMap map[string][]citebook.Parent

func (m parentMap) Parents(_ context.Context, bookID string, version int) ([]citebook.Parent, error) {
	if version <= 0 {
		return nil, errors.New("no version")
	}
	return m[bookID], nil
}

// library mirrors the corpus: R-intro open to the whole tenant "acme",
// Walden restricted to group "readers", a Debian reference not yet indexed,
// and another tenant's copy of R-intro.
var library = []citebook.Book{
	{ID: "r-intro", Title: "An Introduction to R", Tenant: "acme", Active: 2},
	{ID: "walden", Title: "Walden", Tenant: "acme", Groups: []string{"readers"}, Active: 1},
	{ID: "debref", Title: "Debian Reference", Tenant: "acme", Active: 0},
	{ID: "r-intro-globex", Title: "An Introduction to R", Tenant: "globex", Active: 1},
}

var parents = parentMap{
	"r-intro": {
		{ID: "p-pref", HeadingPath: []string{"Preface"}},
		{ID: "p-3", HeadingPath: []string{"3 Objects, their modes and attributes"}},
		{ID: "p-3-1", HeadingPath: []string{"3 Objects, their modes and attributes", "3.1 Intrinsic attributes: mode and length"}},
		{ID: "p-3-2", HeadingPath: []string{"3 Objects, their modes and attributes", "3.2 Changing the length of an object"}},
		{ID: "p-30", HeadingPath: []string{"30 Objects elsewhere"}},
	},
	"walden": {
		{ID: "w-econ", HeadingPath: []string{"Economy"}},
		{ID: "w-pond", HeadingPath: []string{"The Ponds"}},
	},
}

func grant(book string, path []string, kind SubjectKind, subject string, e Effect) Grant {
	return Grant{Tenant: "acme", BookID: book, Path: path, SubjectKind: kind, Subject: subject, Effect: e}
}

func sc(book string, v int) citebook.BookScope { return citebook.BookScope{BookID: book, Version: v} }

var chapter3 = []string{"3 Objects, their modes and attributes"}

func TestResolve(t *testing.T) {
	alice := citebook.Principal{Tenant: "acme", User: "alice"}
	reader := citebook.Principal{Tenant: "acme", User: "bob", Groups: []string{"readers"}}
	admin := citebook.Principal{Tenant: "acme", User: "root", Admin: true}
	globex := citebook.Principal{Tenant: "globex", User: "alice", Groups: []string{"readers"}, Admin: true}

	tests := []struct {
		name   string
		p      citebook.Principal
		grants []Grant
		books  []citebook.BookScope
		deny   []string
	}{
		{"open books only, never unindexed", alice, nil, []citebook.BookScope{sc("r-intro", 2)}, nil},
		{"group member sees the restricted book", reader, nil, []citebook.BookScope{sc("r-intro", 2), sc("walden", 1)}, nil},
		{"user allow opens a restricted book", alice, []Grant{grant("walden", nil, SubjectUser, "alice", Allow)}, []citebook.BookScope{sc("r-intro", 2), sc("walden", 1)}, nil},
		{"tenant allow opens it to everyone", alice, []Grant{grant("walden", nil, SubjectTenant, "", Allow)}, []citebook.BookScope{sc("r-intro", 2), sc("walden", 1)}, nil},
		{"another user's allow does not", alice, []Grant{grant("walden", nil, SubjectUser, "bob", Allow)}, []citebook.BookScope{sc("r-intro", 2)}, nil},
		{"deny wins over group membership", reader, []Grant{grant("walden", nil, SubjectUser, "bob", Deny)}, []citebook.BookScope{sc("r-intro", 2)}, nil},
		{"deny wins over an allow", alice, []Grant{
			grant("walden", nil, SubjectUser, "alice", Allow),
			grant("walden", nil, SubjectTenant, "", Deny),
		}, []citebook.BookScope{sc("r-intro", 2)}, nil},
		{"chapter deny hides the chapter and its sections only", alice, []Grant{grant("r-intro", chapter3, SubjectTenant, "", Deny)},
			[]citebook.BookScope{sc("r-intro", 2)}, []string{"p-3", "p-3-1", "p-3-2"}},
		{"section deny hides one section", reader, []Grant{grant("r-intro", []string{"3 objects, their modes and attributes ", "3.2 Changing the length of an object"}, SubjectGroup, "readers", Deny)},
			[]citebook.BookScope{sc("r-intro", 2), sc("walden", 1)}, []string{"p-3-2"}},
		{"chapter allow opens only that chapter of a closed book", alice, []Grant{grant("walden", []string{"The Ponds"}, SubjectUser, "alice", Allow)},
			[]citebook.BookScope{sc("r-intro", 2), sc("walden", 1)}, []string{"w-econ"}},
		{"chapter allow beside a chapter deny", alice, []Grant{
			grant("walden", []string{"The Ponds"}, SubjectUser, "alice", Allow),
			grant("walden", []string{"The Ponds"}, SubjectTenant, "", Deny),
		}, []citebook.BookScope{sc("r-intro", 2)}, nil},
		{"admin sees every indexed book of the tenant despite denies", admin, []Grant{grant("r-intro", chapter3, SubjectTenant, "", Deny)},
			[]citebook.BookScope{sc("r-intro", 2), sc("walden", 1)}, nil},
		{"other tenants' books and grants never apply", globex, []Grant{grant("walden", nil, SubjectTenant, "", Allow), grant("r-intro", nil, SubjectUser, "alice", Allow)},
			[]citebook.BookScope{sc("r-intro-globex", 1)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Resolve(context.Background(), tt.p, library, tt.grants, parents)
			require.NoError(t, err)
			require.Equal(t, tt.p.Tenant, f.Tenant)
			require.Equal(t, tt.books, f.Books)
			require.ElementsMatch(t, tt.deny, f.DenyParents)
		})
	}
}

func TestResolveRejectsMissingTenant(t *testing.T) {
	f, err := Resolve(context.Background(), citebook.Principal{User: "alice"}, library, nil, parents)
	require.Equal(t, citebook.EUNAUTHORIZED, citebook.ErrorCode(err))
	require.Empty(t, f.Books)
}

func TestFilterMatchesChunks(t *testing.T) {
	f, err := Resolve(context.Background(), citebook.Principal{Tenant: "acme", User: "alice"}, library,
		[]Grant{grant("r-intro", chapter3, SubjectTenant, "", Deny)}, parents)
	require.NoError(t, err)
	tests := []struct {
		name  string
		chunk citebook.Chunk
		match bool
	}{
		{"active version", citebook.Chunk{Tenant: "acme", BookID: "r-intro", ParentID: "p-pref", Version: 1}, true},
		{"version being built", citebook.Chunk{Tenant: "acme", BookID: "r-intro", ParentID: "p-pref", Version: 3}, false},
		{"retired before the active version", citebook.Chunk{Tenant: "acme", BookID: "r-intro", ParentID: "p-pref", Version: 1, Retired: 2}, false},
		{"denied chapter", citebook.Chunk{Tenant: "acme", BookID: "r-intro", ParentID: "p-3-1", Version: 2}, false},
		{"chapter with a similar prefix", citebook.Chunk{Tenant: "acme", BookID: "r-intro", ParentID: "p-30", Version: 2}, true},
		{"other tenant", citebook.Chunk{Tenant: "globex", BookID: "r-intro", ParentID: "p-pref", Version: 2}, false},
		{"restricted book", citebook.Chunk{Tenant: "acme", BookID: "walden", ParentID: "w-econ", Version: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.match, f.Match(&tt.chunk))
		})
	}
}

func TestNarrow(t *testing.T) {
	f := citebook.Filter{Tenant: "acme", Books: []citebook.BookScope{sc("r-intro", 2)}, DenyParents: []string{"p-3"}}
	require.Equal(t, f, Narrow(f, nil))
	n := Narrow(f, []string{"r-intro", "walden"})
	require.Equal(t, []citebook.BookScope{sc("r-intro", 2)}, n.Books)
	require.Equal(t, []string{"p-3"}, n.DenyParents)
	require.Empty(t, Narrow(f, []string{"walden"}).Books)
}

func TestGrantValidate(t *testing.T) {
	tests := []struct {
		name string
		g    Grant
		ok   bool
	}{
		{"whole book for a group", grant("r-intro", nil, SubjectGroup, "readers", Allow), true},
		{"chapter for the tenant", grant("r-intro", chapter3, SubjectTenant, "", Deny), true},
		{"group without a name", grant("r-intro", nil, SubjectGroup, "", Allow), false},
		{"unknown effect", grant("r-intro", nil, SubjectUser, "alice", "maybe"), false},
		{"unknown subject kind", grant("r-intro", nil, "robot", "r2", Allow), false},
		{"empty heading", grant("r-intro", []string{" "}, SubjectUser, "alice", Allow), false},
		{"no book", grant("", nil, SubjectUser, "alice", Allow), false},
		{"NUL in a subject", grant("r-intro", nil, SubjectUser, "al\x00ice", Allow), false},
		{"invalid UTF-8 in a heading", grant("r-intro", []string{"3 Objects\xff"}, SubjectUser, "alice", Deny), false},
		{"non-ASCII names", grant("r-intro", []string{"第三章"}, SubjectUser, "zoë", Deny), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.g.Validate()
			require.Equal(t, tt.ok, err == nil, "%v", err)
			if err != nil {
				require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
			}
		})
	}
}
