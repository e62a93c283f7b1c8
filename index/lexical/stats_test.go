package lexical

import (
	"context"
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
// searching tenant's rows, so what another tenant indexes changes neither a
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
	search := func() [][]citebook.Hit {
		var out [][]citebook.Hit
		for _, q := range queries {
			h, err := x.Search(ctx, q, f, 10)
			require.NoError(t, err)
			require.NotEmpty(t, h, q)
			out = append(out, h)
		}
		return out
	}
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

	// The tenant's own other books do count (a single book is too small a
	// collection to rank by): the same chapters as a second book of "a"
	// change the first search's scores, so the test sees the statistics.
	more := mobyChunks(t, "a")
	for i := range more {
		more[i].BookID, more[i].ID = "moby2", "a2-"+more[i].ID
	}
	require.NoError(t, x.Upsert(ctx, more[400:]))
	h, err := x.Search(ctx, queries[0], f, 10)
	require.NoError(t, err)
	require.NotEqual(t, before[0][0].Score, h[0].Score)
}
