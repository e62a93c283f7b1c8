// Package rowset resolves an access filter (citebook.Filter) to the rows of
// an in-process store it admits, and caches the result per filter until the
// store's next write. The embedded vector store and the lexical index both
// search only the rows resolved here, so this is the one place where the
// access rules meet the in-memory rows.
//
// Invariant (security-critical): a row is in Resolve(src, f) exactly when
// f.Match would accept the chunk the row holds — its tenant and book are
// named by f, it is visible at one of the versions f lists for that book
// ([Version, Retired)), and its parent is not denied. In particular a row
// outside the filter is never admitted. The fuzz test checks this against
// Filter.Match over random rows, filters and writes. A Cache returns what
// Resolve returned for an equal filter (citebook.Filter.Key is unambiguous)
// since the last Invalidate, so a store must call Invalidate on every write
// (upsert, retire, delete) before any reader sees the new rows.
package rowset

import (
	"cmp"
	"sync"

	"github.com/citebook/citebook"
)

// Meta is what admission reads of a row besides its book: the version window
// and the parent, interned by the store.
type Meta struct {
	Version, Retired int
	Parent           int32
}

// Source is a store's rows as the resolver sees them. Callers hold the
// store's lock for reading across a Resolve, so the rows do not change
// under it.
type Source interface {
	// Len bounds the row numbers: every row is in [0, Len).
	Len() int
	// Book lists the live rows of a tenant's book, in any order.
	Book(tenant, bookID string) []int32
	// Meta returns a live row's version window and interned parent.
	Meta(r int32) Meta
	// Parent returns the interned number of a parent ID, if any row has it.
	Parent(id string) (int32, bool)
}

// Set is the rows a filter admits, as a list (grouped by book in the
// filter's order, for scans) and as a bitset (for membership tests).
type Set struct {
	Rows []int32
	Bits []uint64 // row r admitted when Bits[r/64]>>(r%64)&1 == 1
}

// Has reports whether row r is admitted.
func (s *Set) Has(r int32) bool {
	w := int(r) >> 6
	return r >= 0 && w < len(s.Bits) && s.Bits[w]&(1<<(uint(r)&63)) != 0
}

// Len is the number of admitted rows.
func (s *Set) Len() int { return len(s.Rows) }

// Upper is the number of rows in the books f names, an upper bound on what
// it admits that costs one lookup per book; stores use it to pick a search
// path before resolving rows.
func Upper(src Source, f *citebook.Filter) int {
	n := 0
	seen := make(map[string]bool, len(f.Books))
	for _, b := range f.Books {
		if !seen[b.BookID] {
			seen[b.BookID] = true
			n += len(src.Book(f.Tenant, b.BookID))
		}
	}
	return n
}

// Resolve lists the rows f admits. A book listed more than once admits a row
// visible at any of its versions, exactly as Filter.Match does; no row is
// listed twice.
func Resolve(src Source, f *citebook.Filter) *Set {
	var deny map[int32]struct{}
	for _, p := range f.DenyParents {
		if id, ok := src.Parent(p); ok {
			if deny == nil {
				deny = map[int32]struct{}{}
			}
			deny[id] = struct{}{}
		}
	}
	versions := make(map[string][]int, len(f.Books))
	var order []string
	for _, b := range f.Books {
		if _, dup := versions[b.BookID]; !dup {
			order = append(order, b.BookID)
		}
		versions[b.BookID] = append(versions[b.BookID], b.Version)
	}
	set := &Set{Bits: make([]uint64, (src.Len()+63)/64)}
	for _, id := range order {
		vs := versions[id]
		for _, r := range src.Book(f.Tenant, id) {
			m := src.Meta(r)
			if !visible(m, vs) {
				continue
			}
			if _, no := deny[m.Parent]; no {
				continue
			}
			set.Rows = append(set.Rows, r)
			set.Bits[r>>6] |= 1 << (uint(r) & 63)
		}
	}
	return set
}

// visible reports whether the row is visible at any of the versions.
func visible(m Meta, vs []int) bool {
	for _, v := range vs {
		if m.Version <= v && (m.Retired == 0 || m.Retired > v) {
			return true
		}
	}
	return false
}

// Blocks lists, ascending, the blocks of size rows (size a multiple of 64)
// that hold at least one admitted row.
func (s *Set) Blocks(size int) []int32 {
	per := size / 64
	var out []int32
	for b := 0; b*per < len(s.Bits); b++ {
		for _, w := range s.Bits[b*per : min((b+1)*per, len(s.Bits))] {
			if w != 0 {
				out = append(out, int32(b))
				break
			}
		}
	}
	return out
}

// Cache remembers the Set of recent filters (a principal asks many
// questions with one filter). The zero value is ready to use. It is safe for
// concurrent readers; the store calls Invalidate under its write lock on
// every write.
type Cache struct {
	// Size bounds the filters remembered (0 means 16); when full the cache
	// starts over, which is cheap and keeps no stale entry.
	Size int

	mu   sync.Mutex
	sets map[string]*Set
}

// Get returns Resolve(src, f), from the cache when f was resolved since the
// last Invalidate.
func (c *Cache) Get(src Source, f *citebook.Filter) *Set {
	k := f.Key()
	c.mu.Lock()
	set, ok := c.sets[k]
	c.mu.Unlock()
	if ok {
		return set
	}
	set = Resolve(src, f)
	c.mu.Lock()
	if c.sets == nil || len(c.sets) >= cmp.Or(c.Size, 16) {
		c.sets = map[string]*Set{}
	}
	c.sets[k] = set
	c.mu.Unlock()
	return set
}

// Invalidate forgets every cached set; stores call it on every write.
func (c *Cache) Invalidate() {
	c.mu.Lock()
	c.sets = nil
	c.mu.Unlock()
}
