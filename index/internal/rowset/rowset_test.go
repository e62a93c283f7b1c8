package rowset

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

// table is a Source over chunks, written as the stores write theirs: rows
// are reused after a delete, a book lists its live rows, parents are
// interned. The invariant is checked against Filter.Match on these chunks.
type table struct {
	chunks  []citebook.Chunk
	live    []bool
	books   map[[2]string][]int32
	parents map[string]int32
}

func newTable() *table {
	return &table{books: map[[2]string][]int32{}, parents: map[string]int32{}}
}

func (t *table) Len() int                         { return len(t.chunks) }
func (t *table) Book(tenant, book string) []int32 { return t.books[[2]string{tenant, book}] }
func (t *table) Parent(id string) (int32, bool)   { p, ok := t.parents[id]; return p, ok }
func (t *table) Meta(r int32) Meta {
	c := &t.chunks[r]
	return Meta{Version: c.Version, Retired: c.Retired, Parent: t.parents[c.ParentID]}
}

func (t *table) put(c citebook.Chunk) int32 {
	if _, ok := t.parents[c.ParentID]; !ok {
		t.parents[c.ParentID] = int32(len(t.parents))
	}
	r := int32(slices.Index(t.live, false)) // reuse a deleted row
	if r < 0 {
		r = int32(len(t.chunks))
		t.chunks = append(t.chunks, c)
		t.live = append(t.live, true)
	} else {
		t.chunks[r], t.live[r] = c, true
	}
	k := [2]string{c.Tenant, c.BookID}
	t.books[k] = append(t.books[k], r)
	return r
}

func (t *table) remove(r int32) {
	c := &t.chunks[r]
	k := [2]string{c.Tenant, c.BookID}
	t.books[k] = slices.DeleteFunc(t.books[k], func(x int32) bool { return x == r })
	t.live[r] = false
	t.chunks[r] = citebook.Chunk{}
}

// want is the invariant's right-hand side: the live rows Match accepts.
func (t *table) want(f *citebook.Filter) []int32 {
	var out []int32
	for r := range t.chunks {
		if t.live[r] && f.Match(&t.chunks[r]) {
			out = append(out, int32(r))
		}
	}
	return out
}

// check asserts the invariant for one set: exactly the rows Match accepts,
// none twice, the list and the bitset agreeing, Upper a bound.
func check(t *testing.T, tb *table, f *citebook.Filter, set *Set) {
	t.Helper()
	got := slices.Clone(set.Rows)
	slices.Sort(got)
	require.Equal(t, tb.want(f), nilIfEmpty(got), "filter %s", f.Key())
	require.Len(t, slices.Compact(got), len(set.Rows), "a row listed twice")
	n := 0
	for _, w := range set.Bits {
		n += bits.OnesCount64(w)
	}
	require.Equal(t, len(set.Rows), n, "list and bitset disagree")
	for r := range tb.chunks {
		require.Equal(t, slices.Contains(got, int32(r)), set.Has(int32(r)))
	}
	require.False(t, set.Has(-1))
	require.False(t, set.Has(int32(64*len(set.Bits))))
	require.LessOrEqual(t, set.Len(), Upper(tb, f))
}

func nilIfEmpty(s []int32) []int32 {
	if len(s) == 0 {
		return nil
	}
	return s
}

func chunk(tenant, book, parent string, version, retired int) citebook.Chunk {
	return citebook.Chunk{ID: fmt.Sprint(tenant, book, parent, version, retired, rand.Int()), Tenant: tenant,
		BookID: book, ParentID: parent, Version: version, Retired: retired}
}

func TestResolve(t *testing.T) {
	tb := newTable()
	tb.put(chunk("acme", "b1", "p1", 1, 0))  // row 0: visible from v1
	tb.put(chunk("acme", "b1", "p2", 1, 2))  // row 1: v1 only (retired at 2)
	tb.put(chunk("acme", "b1", "p3", 2, 0))  // row 2: from v2
	tb.put(chunk("acme", "b2", "p1", 1, 0))  // row 3: another book, same parent ID
	tb.put(chunk("other", "b1", "p1", 1, 0)) // row 4: another tenant
	for _, tc := range []struct {
		name string
		f    citebook.Filter
		want []int32
	}{
		{"version 1", citebook.Filter{Tenant: "acme", Books: []citebook.BookScope{{BookID: "b1", Version: 1}}}, []int32{0, 1}},
		{"version 2", citebook.Filter{Tenant: "acme", Books: []citebook.BookScope{{BookID: "b1", Version: 2}}}, []int32{0, 2}},
		{"both versions admit the union", citebook.Filter{Tenant: "acme", Books: []citebook.BookScope{{BookID: "b1", Version: 1}, {BookID: "b1", Version: 2}}}, []int32{0, 1, 2}},
		{"before any version", citebook.Filter{Tenant: "acme", Books: []citebook.BookScope{{BookID: "b1", Version: 0}}}, nil},
		{"denied parent, in every book", citebook.Filter{Tenant: "acme", Books: []citebook.BookScope{{BookID: "b1", Version: 2}, {BookID: "b2", Version: 1}}, DenyParents: []string{"p1"}}, []int32{2}},
		{"unknown denied parent", citebook.Filter{Tenant: "acme", Books: []citebook.BookScope{{BookID: "b2", Version: 1}}, DenyParents: []string{"nope"}}, []int32{3}},
		{"tenant is part of the book", citebook.Filter{Tenant: "other", Books: []citebook.BookScope{{BookID: "b2", Version: 1}}}, nil},
		{"other tenant's own book", citebook.Filter{Tenant: "other", Books: []citebook.BookScope{{BookID: "b1", Version: 9}}}, []int32{4}},
		{"no books", citebook.Filter{Tenant: "acme"}, nil},
		{"empty filter", citebook.Filter{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := Resolve(tb, &tc.f)
			got := slices.Clone(set.Rows)
			slices.Sort(got)
			require.Equal(t, tc.want, nilIfEmpty(got))
			check(t, tb, &tc.f, set)
		})
	}
}

func TestBlocks(t *testing.T) {
	tb := newTable()
	for i := range 300 {
		tb.put(chunk("t", fmt.Sprint("b", i/128), "p", 1, 0))
	}
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b2", Version: 1}}} // rows 256..299
	require.Equal(t, []int32{2}, Resolve(tb, &f).Blocks(128))
	require.Equal(t, []int32{4}, Resolve(tb, &f).Blocks(64))
	f.Books = append(f.Books, citebook.BookScope{BookID: "b0", Version: 1})
	require.Equal(t, []int32{0, 2}, Resolve(tb, &f).Blocks(128))
	require.Empty(t, Resolve(tb, &citebook.Filter{Tenant: "t"}).Blocks(128))
}

func TestCache(t *testing.T) {
	tb := newTable()
	tb.put(chunk("acme", "b1", "p1", 1, 0))
	f := citebook.Filter{Tenant: "acme", Books: []citebook.BookScope{{BookID: "b1", Version: 1}}}
	c := &Cache{Size: 2}
	first := c.Get(tb, &f)
	require.Same(t, first, c.Get(tb, &f), "a second ask is served from the cache")
	g := f
	g.DenyParents = []string{"p1"}
	require.Empty(t, c.Get(tb, &g).Rows, "a filter differing only in its denials is resolved on its own")
	require.Len(t, c.Get(tb, &f).Rows, 1)

	// A write without Invalidate would be missed; with it, it is seen.
	r := tb.put(chunk("acme", "b1", "p2", 1, 0))
	c.Invalidate()
	require.Len(t, c.Get(tb, &f).Rows, 2)
	tb.chunks[r].Retired = 1 // retirement
	c.Invalidate()
	require.Len(t, c.Get(tb, &f).Rows, 1)
	tb.remove(0) // deletion
	c.Invalidate()
	require.Empty(t, c.Get(tb, &f).Rows)

	// Past its size the cache starts over rather than growing.
	for i := range 10 {
		h := f
		h.Books = []citebook.BookScope{{BookID: "b1", Version: i}}
		c.Get(tb, &h)
		require.LessOrEqual(t, len(c.sets), 2)
	}
}

// FuzzResolve plays random writes (put, retire, delete) and cached lookups
// of random filters, invalidating on every write as the stores do, and
// checks every set against Filter.Match: no row outside the filter is ever
// admitted and none inside it is missed.
func FuzzResolve(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte("\x00\x00\x00\x10\x20\x30\x01\x81\x42\x93\xff\x07"))
	f.Fuzz(func(t *testing.T, prog []byte) {
		tenants, books, parents := []string{"a", "b"}, []string{"x", "y", "z"}, []string{"p", "q", "r", "s"}
		pick := func(i int, from []string) string { return from[i%len(from)] }
		tb := newTable()
		c := &Cache{Size: 3}
		for i := 0; i+1 < len(prog); i += 2 {
			op, arg := prog[i], int(prog[i+1])
			switch op % 4 {
			case 0: // put
				tb.put(chunk(pick(arg, tenants), pick(arg>>1, books), pick(arg>>3, parents), 1+arg%3, (arg>>5)%4))
				c.Invalidate()
			case 1: // retire a live row at some version
				if len(tb.chunks) > 0 {
					r := arg % len(tb.chunks)
					if tb.live[r] {
						tb.chunks[r].Retired = 1 + int(op>>2)%4
						c.Invalidate()
					}
				}
			case 2: // delete
				if len(tb.chunks) > 0 && tb.live[arg%len(tb.chunks)] {
					tb.remove(int32(arg % len(tb.chunks)))
					c.Invalidate()
				}
			case 3: // search with a filter built from the bytes
				fl := citebook.Filter{Tenant: pick(arg, tenants)}
				for b := range 3 {
					if op>>(2+b)&1 == 1 {
						fl.Books = append(fl.Books, citebook.BookScope{BookID: books[b], Version: int(op>>5) % 4})
					}
				}
				if arg&0x80 != 0 {
					fl.Books = append(fl.Books, citebook.BookScope{BookID: pick(arg>>2, books), Version: arg % 5})
				}
				for p := range parents {
					if arg>>(3+p)&1 == 1 && arg&1 == 1 {
						fl.DenyParents = append(fl.DenyParents, parents[p])
					}
				}
				check(t, tb, &fl, c.Get(tb, &fl))
			}
		}
	})
}
