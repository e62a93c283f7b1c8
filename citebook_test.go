package citebook_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/citebook/citebook"
)

// Filters that differ must never share a cache key, even when IDs carry the
// characters a naive encoding would use as separators.
func TestFilterKey(t *testing.T) {
	filters := []citebook.Filter{
		{Tenant: "t"},
		{Tenant: "t", Books: []citebook.BookScope{{BookID: "a", Version: 1}}},
		{Tenant: "t", Books: []citebook.BookScope{{BookID: "a", Version: 2}}},
		{Tenant: "t", Books: []citebook.BookScope{{BookID: "a", Version: 1}, {BookID: "b", Version: 1}}},
		{Tenant: "t", Books: []citebook.BookScope{{BookID: `a" v1 book "b`, Version: 1}}},
		{Tenant: "t", Books: []citebook.BookScope{{BookID: "a", Version: 1}}, DenyParents: []string{"p"}},
		{Tenant: `t" book "a`, Books: []citebook.BookScope{{BookID: "x", Version: 1}}},
		{Tenant: "t\x00", Books: []citebook.BookScope{{BookID: "a", Version: 1}}},
	}
	seen := map[string]int{}
	for i, f := range filters {
		k := f.Key()
		if j, ok := seen[k]; ok {
			t.Fatalf("filters %d and %d share the key %q", j, i, k)
		}
		seen[k] = i
		assert.Equal(t, k, f.Key(), "stable")
	}
}
