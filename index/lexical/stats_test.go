package lexical

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

// DocFreq counts only the chunks the filter admits: another tenant's book,
// a book outside the scope, a retired chunk and a denied chapter do not
// count, so answerability weighs terms over exactly what is searched.
func TestDocFreqInsideFilter(t *testing.T) {
	ctx := context.Background()
	x := open(t, t.TempDir())
	defer x.Close()
	require.NoError(t, x.Upsert(ctx, []citebook.Chunk{
		{ID: "1", Tenant: "t", BookID: "b", Version: 1, ParentID: "p1", Text: "the whale sails"},
		{ID: "2", Tenant: "t", BookID: "b", Version: 1, ParentID: "p1", Text: "the whale dives"},
		{ID: "3", Tenant: "t", BookID: "b", Version: 1, ParentID: "p2", Text: "whale oil lamps"},
		{ID: "4", Tenant: "t", BookID: "c", Version: 1, ParentID: "p3", Text: "whale of another book"},
		{ID: "5", Tenant: "u", BookID: "b", Version: 1, ParentID: "p4", Text: "whale of another tenant"},
	}))
	require.NoError(t, x.Retire(ctx, "b", []string{"2"}, 2))
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 2}}}
	df, n, err := x.DocFreq(ctx, []string{"whale", "sail", "dive", "oil", "cuda"}, f)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, []int{2, 1, 0, 1, 0}, df)

	f.DenyParents = []string{"p2"}
	df, n, err = x.DocFreq(ctx, []string{"whale", "oil"}, f)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []int{1, 0}, df)

	df, n, err = x.DocFreq(ctx, []string{"whale"}, citebook.Filter{Tenant: "t"})
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, []int{0}, df)
}

// TestDocFreqWholeIndex: a filter admitting every live row takes the
// document frequencies the index keeps; they must equal the counts over the
// postings, also after a removal and while a retired row is outside it.
func TestDocFreqWholeIndex(t *testing.T) {
	ctx := context.Background()
	x := open(t, t.TempDir())
	defer x.Close()
	require.NoError(t, x.Upsert(ctx, []citebook.Chunk{
		{ID: "1", Tenant: "t", BookID: "b", Version: 1, ParentID: "p1", Text: "the whale sails whale"},
		{ID: "2", Tenant: "t", BookID: "b", Version: 1, ParentID: "p1", Text: "the whale dives"},
		{ID: "3", Tenant: "t", BookID: "c", Version: 1, ParentID: "p2", Text: "whale oil lamps"},
	}))
	all := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}, {BookID: "c", Version: 1}}}
	df, n, err := x.DocFreq(ctx, []string{"whale", "sail", "oil", "cuda"}, all)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.Equal(t, []int{3, 1, 1, 0}, df)

	require.NoError(t, x.Delete(ctx, []string{"3"}))
	df, n, err = x.DocFreq(ctx, []string{"whale", "sail", "oil"}, all)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, []int{2, 1, 0}, df)

	require.NoError(t, x.Retire(ctx, "b", []string{"2"}, 2))
	df, n, err = x.DocFreq(ctx, []string{"whale", "dive"}, citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 2}}})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []int{1, 0}, df)
}

// TestScoresIgnoreOtherTenants: BM25's statistics are counted over the
// reader's library, inside its tenant, so what another tenant indexes changes neither a
// hit's score nor the order (it could otherwise be probed through them, and
// an eval's figures would depend on what other sets the library held).
func TestScoresIgnoreOtherTenants(t *testing.T) {
	ctx := context.Background()
	x := open(t, t.TempDir())
	defer x.Close()
	moby := mobyChunks(t, "a")
	require.NoError(t, x.Upsert(ctx, moby[:400]))
	f := citebook.Filter{Tenant: "a", Books: []citebook.BookScope{{BookID: "moby", Version: 1}}}
	queries := []string{"whale oil lamps", "the white whale", "Ahab harpoon line", "Queequeg coffin"}
	search := func() [][]citebook.Hit { return searchEach(t, x, queries, f, f) }
	before := search()
	// Another tenant's copy of the later chapters, where "whale" and "Ahab"
	// are far more common, in a book of the same name.
	other := mobyChunks(t, "b")
	for i := range other {
		other[i].ID = "b-" + other[i].ID
	}
	require.NoError(t, x.Upsert(ctx, other[400:]))
	require.Equal(t, before, search())
	require.NoError(t, x.Delete(ctx, []string{other[500].ID}))
	require.Equal(t, before, search())

	// The library's other books do count (a single book is too small a
	// collection to rank by): the same chapters as a second book of "a" in
	// the reader's library change the first search's scores, so the test
	// sees the statistics.
	more := mobyChunks(t, "a")
	for i := range more {
		more[i].BookID, more[i].ID = "moby2", "a2-"+more[i].ID
	}
	require.NoError(t, x.Upsert(ctx, more[400:]))
	lib := f
	lib.Books = append(lib.Books, citebook.BookScope{BookID: "moby2", Version: 1})
	h, err := x.Search(ctx, queries[0], f, lib, 10)
	require.NoError(t, err)
	require.NotEqual(t, before[0][0].Score, h[0].Score)
}

// TestScoresIgnoreUnreadable: inside one tenant, reader A may read books 1
// and 2, reader B book 1 only. Chunks holding a rare word added to book 2
// leave B's scores for a search of book 1 as they were (B could otherwise
// count them through its hits' scores) and change A's; so does denying
// B a chapter of book 1 while the chunks added to it sit there. A library
// holding the whole tenant scores exactly as the tenant's statistics do.
func TestScoresIgnoreUnreadable(t *testing.T) {
	ctx := context.Background()
	x := open(t, t.TempDir())
	defer x.Close()
	moby := mobyChunks(t, "t")
	require.NoError(t, x.Upsert(ctx, moby[:300]))
	book1 := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "moby", Version: 1}}}
	libA := citebook.Filter{Tenant: "t", Books: append(slices.Clone(book1.Books), citebook.BookScope{BookID: "two", Version: 1})}
	libB := book1
	queries := []string{"whale oil lamps", "Queequeg harpoon", "the white whale and the sea"}
	search := func(lib citebook.Filter) [][]citebook.Hit { return searchEach(t, x, queries, book1, lib) }
	beforeA, beforeB := search(libA), search(libB)
	require.Equal(t, beforeA, beforeB, "book 2 empty: both libraries are the tenant")

	// Book 2 gets chunks holding the queries' words, "harpoon" among them.
	var two []citebook.Chunk
	for i, c := range moby[300:400] {
		c.ID, c.BookID, c.ParentID = fmt.Sprintf("two-%d", i), "two", "two-p"
		c.Text += " harpoon Queequeg lamps"
		two = append(two, c)
	}
	require.NoError(t, x.Upsert(ctx, two))
	require.Equal(t, beforeB, search(libB), "B may not read book 2")
	afterA := search(libA)
	for i := range queries {
		require.NotEqual(t, beforeA[i][0].Score, afterA[i][0].Score, queries[i])
	}

	// A chapter of book 1 denied to B: the same chunks under a parent B
	// may not read change nothing of B's scores either.
	denied := libB
	denied.DenyParents = []string{"secret"}
	deniedBook1 := book1
	deniedBook1.DenyParents = denied.DenyParents
	searchDenied := func() [][]citebook.Hit { return searchEach(t, x, queries, deniedBook1, denied) }
	beforeD := searchDenied()
	for i := range two {
		two[i].ID, two[i].BookID, two[i].ParentID = "secret-"+two[i].ID, "moby", "secret"
	}
	require.NoError(t, x.Upsert(ctx, two))
	require.Equal(t, beforeD, searchDenied())
	require.NotEqual(t, beforeB, search(libB), "book 1's new chunks count where B may read them")

	// A library naming every book of the tenant is the tenant: the very
	// statistics (the "all" path when it is the only tenant).
	x.mu.RLock()
	stats := func(lib citebook.Filter) *bm25Stats { return x.library(lib.Tenant, x.admits.Get(x.view(), &lib)) }
	require.Same(t, x.tenant("t"), stats(libA))
	require.True(t, stats(libA).all)
	require.False(t, stats(libB).all)
	require.Same(t, stats(libB), stats(libB), "counted once until the next write")
	x.mu.RUnlock()

	// The library must be of the filter's tenant and hold rows.
	_, err := x.Search(ctx, "whale", book1, citebook.Filter{Tenant: "u", Books: libA.Books}, 5)
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
	_, err = x.Search(ctx, "whale", book1, citebook.Filter{Tenant: "t"}, 5)
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
}

// FuzzScoresOnlyReadable checks bm25Stats' invariant: a reader's scores
// depend only on the rows of its library. Readable rows (tenant t, books
// b0 and b1 at version 1, chapter p2 denied) are searched in b0; the rows
// added then are all unreadable — another tenant's, book b2's, chapter
// p2's, a later version's — and must leave every hit and score as they
// were. The scores must also be the exhaustive scorer's over the library.
func FuzzScoresOnlyReadable(f *testing.F) {
	f.Add([]byte{0, 0xff, 1, 0x0f, 3, 0xf0, 4, 0x33}, []byte{2, 0xff, 5, 0x01, 7, 0x80})
	f.Add([]byte{0x10, 0x81, 0x21, 0x42, 0x30, 0x24, 0x41, 0x18}, []byte{0x12, 0x81, 0x22, 0x42, 0x35, 0x66})
	f.Add([]byte{0, 1}, []byte{})
	vocab := []string{"whale", "sea", "ship", "ahab", "oil", "lamp", "rare", "harpoon"}
	text := func(b0, b1 byte) string {
		var ws []string
		for i, w := range vocab {
			if b1&(1<<i) != 0 {
				ws = append(ws, w)
			}
		}
		for range int(b0>>4) % 3 {
			ws = append(ws, "sea")
		}
		return strings.Join(append(ws, "and"), " ")
	}
	lib := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b0", Version: 1}, {BookID: "b1", Version: 1}}, DenyParents: []string{"p2"}}
	search := citebook.Filter{Tenant: "t", Books: lib.Books[:1], DenyParents: lib.DenyParents}
	queries := []string{"whale rare", "oil lamp harpoon", "sea", "ahab ship whale oil sea"}
	f.Fuzz(func(t *testing.T, readable, hidden []byte) {
		if len(readable) > 64 || len(hidden) > 64 {
			return
		}
		ctx := context.Background()
		x := open(t, t.TempDir())
		defer x.Close()
		var cs []citebook.Chunk
		for i := 0; i+1 < len(readable); i += 2 {
			b0, b1 := readable[i], readable[i+1]
			cs = append(cs, citebook.Chunk{ID: fmt.Sprintf("r%d", i), Tenant: "t", BookID: fmt.Sprintf("b%d", b0%2),
				Version: 1, ParentID: fmt.Sprintf("p%d", b0/2%2), Text: text(b0, b1)})
		}
		if len(cs) == 0 {
			return
		}
		require.NoError(t, x.Upsert(ctx, cs))
		run := func() [][]citebook.Hit {
			var out [][]citebook.Hit
			for _, q := range queries {
				h, err := x.Search(ctx, q, search, lib, 5)
				require.NoError(t, err)
				want := exhaustive(x, q, search, lib, 5)
				require.Equal(t, len(want), len(h), q)
				for i := range h {
					require.Equal(t, want[i].Chunk.ID, h[i].Chunk.ID, q)
					require.Equal(t, want[i].Score, h[i].Score, q)
					h[i].Ref = citebook.RowRef{}
				}
				out = append(out, h)
			}
			return out
		}
		before := run()
		var more []citebook.Chunk
		for i := 0; i+1 < len(hidden); i += 2 {
			b0, b1 := hidden[i], hidden[i+1]
			c := citebook.Chunk{ID: fmt.Sprintf("h%d", i), Tenant: "t", BookID: fmt.Sprintf("b%d", b0%2),
				Version: 1, ParentID: "p2", Text: text(b0, b1)}
			if why := b0 / 2 % 4; why < 3 && b0&8 != 0 {
				c.ParentID = fmt.Sprintf("p%d", b0/16%2) // a readable chapter, the row unreadable for why
			}
			switch b0 / 2 % 4 {
			case 0:
				c.Tenant = "u"
			case 1:
				c.BookID = "b2"
			case 2:
				c.Version = 2
			} // 3: only the denied chapter keeps it out
			more = append(more, c)
		}
		require.NoError(t, x.Upsert(ctx, more))
		require.Equal(t, before, run())
	})
}

// searchEach runs each query inside f with lib's statistics and returns
// the top ten hits of each (none may be empty).
func searchEach(t *testing.T, x *Index, queries []string, f, lib citebook.Filter) [][]citebook.Hit {
	t.Helper()
	var out [][]citebook.Hit
	for _, q := range queries {
		h, err := x.Search(context.Background(), q, f, lib, 10)
		require.NoError(t, err)
		require.NotEmpty(t, h, q)
		out = append(out, h)
	}
	return out
}
