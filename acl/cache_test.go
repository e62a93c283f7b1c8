package acl

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

type countingLists struct {
	books  []citebook.Book
	grants []Grant
	reads  int
}

func (c *countingLists) Books(context.Context, string) ([]citebook.Book, error) {
	c.reads++
	return c.books, nil
}

func (c *countingLists) Grants(context.Context, string) ([]Grant, error) { return c.grants, nil }

// TestResolverCacheFollowsGeneration: a tenant's books and grants are read
// once per generation of the change log, per tenant; a new generation
// reads them again, and a generation that cannot be read fails the
// question instead of answering from the cache.
func TestResolverCacheFollowsGeneration(t *testing.T) {
	ctx := context.Background()
	lists := &countingLists{books: []citebook.Book{{ID: "b", Tenant: "acme", Active: 1, Groups: []string{"staff"}}}}
	gen, genErr := int64(5), error(nil)
	r := NewResolver(lists, lists, nil).Cache(func(context.Context) (int64, error) { return gen, genErr })
	mallory := citebook.Principal{Tenant: "acme", User: "mallory"}
	for range 3 {
		f, err := r.Filter(ctx, mallory)
		require.NoError(t, err)
		require.Empty(t, f.Books)
	}
	require.Equal(t, 1, lists.reads, "one read for the generation")
	_, err := r.Filter(ctx, citebook.Principal{Tenant: "globex", User: "bob"})
	require.NoError(t, err)
	require.Equal(t, 2, lists.reads, "tenants are cached apart")

	lists.grants = []Grant{{Tenant: "acme", BookID: "b", SubjectKind: SubjectUser, Subject: "mallory", Effect: Allow}}
	gen++
	f, err := r.Filter(ctx, mallory)
	require.NoError(t, err)
	require.Len(t, f.Books, 1, "the grant logged at the new generation is seen")
	require.Equal(t, 3, lists.reads)

	genErr = errors.New("change log unreachable")
	_, err = r.Filter(ctx, mallory)
	require.Equal(t, citebook.EUNAVAILABLE, citebook.ErrorCode(err))
}
