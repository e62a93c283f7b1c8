package memstore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index/storetest"
	"github.com/stretchr/testify/require"
)

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dir)
	require.NoError(t, err)
	return s
}

func randVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func chunk(id, tenant, book string, version int) citebook.Chunk {
	return citebook.Chunk{ID: id, Tenant: tenant, BookID: book, Version: version, ParentID: book + "/p", Text: "text of " + id}
}

func ids(hits []citebook.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Chunk.ID
	}
	return out
}

func TestPersistsAcrossReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir)
	r := rand.New(rand.NewPCG(1, 2))
	var cs []citebook.Chunk
	var vs [][]float32
	for i := range 50 {
		c := chunk(fmt.Sprintf("c%02d", i), "t1", "b1", 1)
		c.Pages = []citebook.PageSpan{{Offset: 0, Page: i + 1, Printed: fmt.Sprint(i)}}
		cs = append(cs, c)
		vs = append(vs, randVec(r, 16))
	}
	require.NoError(t, s.Upsert(ctx, cs, vs))
	require.NoError(t, s.Retire(ctx, "b1", []string{"c01"}, 2))
	require.NoError(t, s.Delete(ctx, []string{"c02", "missing"}))
	f := citebook.Filter{Tenant: "t1", Books: []citebook.BookScope{{BookID: "b1", Version: 1}}}
	before, err := s.Search(ctx, vs[7], f, 5)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s = open(t, dir)
	defer s.Close()
	require.Equal(t, 16, s.Dimension())
	require.Equal(t, 49, s.Len())
	after, err := s.Search(ctx, vs[7], f, 5)
	require.NoError(t, err)
	require.Equal(t, bare(before), bare(after))
	require.Equal(t, "c07", after[0].Chunk.ID)
	require.InDelta(t, 1.0, after[0].Score, 1e-5)
	got, err := s.Get(ctx, []string{"c01", "c02", "c03"})
	require.NoError(t, err)
	require.Len(t, got, 2)
	for _, c := range got {
		if c.ID == "c01" {
			require.Equal(t, 2, c.Retired)
		} else {
			require.Equal(t, cs[3], c)
		}
	}
	all, err := s.IDs(ctx, "b1")
	require.NoError(t, err)
	require.Len(t, all, 49)
	require.NotContains(t, all, "c02")
}

// A tenant owning one chunk among 10k must still get it: the filter is
// applied during the scan, not to a global top-k.
func TestFilterAppliedDuringSearch(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	defer s.Close()
	r := rand.New(rand.NewPCG(3, 4))
	var cs []citebook.Chunk
	var vs [][]float32
	for i := range 10000 {
		cs = append(cs, chunk(fmt.Sprintf("big-%05d", i), "big", "shared", 1))
		vs = append(vs, randVec(r, 32))
	}
	lone := chunk("lone", "small", "shared", 1)
	cs = append(cs, lone)
	vs = append(vs, randVec(r, 32))
	require.NoError(t, s.Upsert(ctx, cs, vs))

	q := vs[0] // the best global match belongs to the other tenant
	hits, err := s.Search(ctx, q, citebook.Filter{Tenant: "small", Books: []citebook.BookScope{{BookID: "shared", Version: 1}}}, 10)
	require.NoError(t, err)
	require.Equal(t, []string{"lone"}, ids(hits))

	hits, err = s.Search(ctx, q, citebook.Filter{Tenant: "big", Books: []citebook.BookScope{{BookID: "shared", Version: 1}}}, 10)
	require.NoError(t, err)
	require.Len(t, hits, 10)
	require.Equal(t, "big-00000", hits[0].Chunk.ID)
	for i := 1; i < len(hits); i++ {
		require.GreaterOrEqual(t, hits[i-1].Score, hits[i].Score)
	}
	// Exactness: compare with a brute-force ranking through Filter.Match.
	f := citebook.Filter{Tenant: "big", Books: []citebook.BookScope{{BookID: "shared", Version: 1}}}
	want := bruteForce(cs, vs, q, f, 10)
	require.Equal(t, want, ids(hits))
}

func bruteForce(cs []citebook.Chunk, vs [][]float32, q []float32, f citebook.Filter, k int) []string {
	type sc struct {
		id string
		s  float32
	}
	var all []sc
	qn := normalize(q)
	for i := range cs {
		if f.Match(&cs[i]) {
			all = append(all, sc{cs[i].ID, dot(qn, normalize(vs[i]))})
		}
	}
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && all[j].s > all[j-1].s; j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	out := []string{}
	for i := 0; i < len(all) && i < k; i++ {
		out = append(out, all[i].id)
	}
	return out
}

func TestFilterSemantics(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	defer s.Close()
	// v1 built a, b; v2 retired b and added c; parent "secret" holds d.
	a := chunk("a", "t", "book", 1)
	b := chunk("b", "t", "book", 1)
	b.Retired = 2
	c := chunk("c", "t", "book", 2)
	d := chunk("d", "t", "book", 1)
	d.ParentID = "secret"
	other := chunk("o", "t", "other", 1)
	foreign := chunk("x", "u", "book", 1)
	cs := []citebook.Chunk{a, b, c, d, other, foreign}
	vs := [][]float32{{1, 0}, {1, 0.1}, {1, 0.2}, {1, 0.3}, {1, 0.4}, {1, 0.5}}
	require.NoError(t, s.Upsert(ctx, cs, vs))

	tests := storetest.FilterCases()
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			hits, err := s.Search(ctx, []float32{1, 0}, tt.Filter, 10)
			require.NoError(t, err)
			want := bruteForce(cs, vs, []float32{1, 0}, tt.Filter, 10)
			require.Equal(t, want, ids(hits))
		})
	}
	// Spot-check the expectations bruteForce encodes.
	hits, err := s.Search(ctx, []float32{1, 0}, tests[3].Filter, 10)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"a", "c", "d"}, ids(hits))
}

func TestRetireAndDelete(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	defer s.Close()
	cs := []citebook.Chunk{chunk("a", "t", "book", 1), chunk("b", "t", "book", 1), chunk("c", "t", "other", 1)}
	require.NoError(t, s.Upsert(ctx, cs, [][]float32{{1, 0}, {0, 1}, {1, 1}}))
	v1 := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "book", Version: 1}, {BookID: "other", Version: 1}}}
	v2 := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "book", Version: 2}, {BookID: "other", Version: 1}}}

	// Retire is scoped to the book: "c" belongs to another book and stays.
	require.NoError(t, s.Retire(ctx, "book", []string{"a", "c", "zzz"}, 2))
	hits, err := s.Search(ctx, []float32{1, 0}, v1, 10)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"a", "b", "c"}, ids(hits))
	hits, err = s.Search(ctx, []float32{1, 0}, v2, 10)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"b", "c"}, ids(hits))

	require.NoError(t, s.Delete(ctx, []string{"a", "nope"}))
	got, err := s.IDs(ctx, "book")
	require.NoError(t, err)
	require.Equal(t, []string{"b"}, got)

	// Upsert replaces by ID, including moving a chunk's vector.
	require.NoError(t, s.Upsert(ctx, []citebook.Chunk{chunk("b", "t", "book", 1)}, [][]float32{{1, 0}}))
	hits, err = s.Search(ctx, []float32{1, 0}, v2, 1)
	require.NoError(t, err)
	require.Equal(t, "b", hits[0].Chunk.ID)
	require.InDelta(t, 1.0, hits[0].Score, 1e-6)
	require.Equal(t, 2, s.Len())
}

func TestDimensionFixedByFirstUpsert(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir)
	require.NoError(t, s.Upsert(ctx, []citebook.Chunk{chunk("a", "t", "b", 1)}, [][]float32{{1, 2, 3}}))
	err := s.Upsert(ctx, []citebook.Chunk{chunk("b", "t", "b", 1)}, [][]float32{{1, 2}})
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
	_, err = s.Search(ctx, []float32{1, 2}, citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}, 1)
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
	err = s.Upsert(ctx, []citebook.Chunk{chunk("b", "t", "b", 1)}, nil)
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
	require.NoError(t, s.Close())

	s = open(t, dir)
	defer s.Close()
	err = s.Upsert(ctx, []citebook.Chunk{chunk("b", "t", "b", 1)}, [][]float32{{1, 2, 3, 4}})
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
	require.Equal(t, 1, s.Len())
}

func TestClosedStoreIsUnavailable(t *testing.T) {
	s := open(t, t.TempDir())
	require.NoError(t, s.Close())
	_, err := s.Search(context.Background(), []float32{1}, citebook.Filter{}, 1)
	require.Equal(t, citebook.EUNAVAILABLE, citebook.ErrorCode(err))
	err = s.Upsert(context.Background(), []citebook.Chunk{chunk("a", "t", "b", 1)}, [][]float32{{1}})
	require.Equal(t, citebook.EUNAVAILABLE, citebook.ErrorCode(err))
}

// Readers and a writer run together; -race checks the locking.
func TestConcurrentReadersAndWriter(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	defer s.Close()
	r := rand.New(rand.NewPCG(5, 6))
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}
	require.NoError(t, s.Upsert(ctx, []citebook.Chunk{chunk("seed", "t", "b", 1)}, [][]float32{randVec(r, 8)}))
	q := randVec(r, 8)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				hits, err := s.Search(ctx, q, f, 5)
				if err != nil || len(hits) == 0 {
					t.Errorf("reader %d: %d hits, err %v", w, len(hits), err)
					return
				}
			}
		}()
	}
	for i := range 100 {
		c := chunk(fmt.Sprintf("w%d", i), "t", "b", 1)
		require.NoError(t, s.Upsert(ctx, []citebook.Chunk{c}, [][]float32{randVec(r, 8)}))
		if i%3 == 0 {
			require.NoError(t, s.Delete(ctx, []string{c.ID}))
		}
	}
	wg.Wait()
	got, err := s.IDs(ctx, "b")
	require.NoError(t, err)
	require.Len(t, got, 1+100-34)
}

func TestRejectsNonFiniteAndIsolatesCallers(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	defer s.Close()
	c := chunk("a", "t", "b", 1)
	c.HeadingPath = []string{"Part I", "Chapter 1"}
	err := s.Upsert(ctx, []citebook.Chunk{c}, [][]float32{{float32(math.NaN()), 1}})
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
	require.NoError(t, s.Upsert(ctx, []citebook.Chunk{c}, [][]float32{{1, 1}}))
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}
	_, err = s.Search(ctx, []float32{float32(math.Inf(1)), 0}, f, 1)
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))

	c.HeadingPath[0] = "changed by the caller"
	hits, err := s.Search(ctx, []float32{1, 0}, f, 1<<40) // k far beyond the store
	require.NoError(t, err)
	require.Len(t, hits, 1)
	require.Equal(t, "Part I", hits[0].Chunk.HeadingPath[0])
	hits[0].Chunk.HeadingPath[0] = "changed by a reader"
	got, err := s.Get(ctx, []string{"a"})
	require.NoError(t, err)
	require.Equal(t, []string{"Part I", "Chapter 1"}, got[0].HeadingPath)
}

// clustered makes n unit vectors around nc random centres, the way real
// embeddings of one library crowd around its topics (uniform random vectors
// have no neighbourhoods for any index to find).
func clustered(r *rand.Rand, n, nc, dim int, spread float64) [][]float32 {
	return around(r, centres(r, nc, dim), n, spread)
}

func centres(r *rand.Rand, nc, dim int) [][]float32 {
	cs := make([][]float32, nc)
	for i := range cs {
		cs[i] = normalize(randVec(r, dim))
	}
	return cs
}

// around draws n unit vectors, each a random centre plus Gaussian noise of
// norm about spread.
func around(r *rand.Rand, cs [][]float32, n int, spread float64) [][]float32 {
	dim := len(cs[0])
	out := make([][]float32, n)
	for i := range out {
		c := cs[r.IntN(len(cs))]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + float32(spread*r.NormFloat64()/math.Sqrt(float64(dim)))
		}
		out[i] = normalize(v)
	}
	return out
}

// TestGraphRecall builds a graph directly (two goroutines inserting at once,
// as a store does) and checks its walk finds nearly all of the exact top 10
// on clustered and on uniform data, with and without a filter.
func TestGraphRecall(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const n, dim = 3000, 32
	for _, tc := range []struct {
		name string
		vs   [][]float32
	}{
		{"clustered", clustered(r, n, 30, dim, 1)},
		{"uniform", clustered(r, n, n, dim, 0)},
	} {
		name, vs := tc.name, tc.vs
		t.Run(name, func(t *testing.T) {
			g := newGraph(dim, n, 0, 1)
			for i, v := range vs {
				g.rows = append(g.rows, int32(i))
				g.vecs = append(g.vecs, v...)
			}
			require.True(t, g.build(2, nil))
			for _, even := range []bool{false, true} {
				admit := func(r int32) bool { return !even || r%2 == 0 }
				found, total := 0, 0
				for range 50 {
					q := normalize(randVec(r, dim))
					var exact []scored
					for i, v := range vs {
						if admit(int32(i)) {
							exact = append(exact, scored{int32(i), dot(q, v)})
						}
					}
					exact = sorted(exact)[:10]
					got := map[int32]bool{}
					hits := g.search(q, 64, admit)
					for _, h := range hits[:10] {
						require.True(t, admit(g.rows[h.id]), "filtered walk returned row %d", g.rows[h.id])
						got[g.rows[h.id]] = true
					}
					for _, e := range exact {
						total++
						if got[e.row] {
							found++
						}
					}
				}
				recall := float64(found) / float64(total)
				t.Logf("%s filtered=%v recall@10=%.3f", name, even, recall)
				require.GreaterOrEqual(t, recall, 0.95)
			}
		})
	}
}

// TestGraphPathThroughStore covers a scope large enough for the HNSW graph:
// the first search is answered exactly and schedules the build, searches on
// the built graph honour the filter (book, version window, denied parents),
// a retire is seen at once, and a write drops the graph so deleted rows are
// never returned.
func TestGraphPathThroughStore(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	defer s.Close()
	r := rand.New(rand.NewPCG(21, 22))
	const dim = 16
	n := annMin + 2000
	vs := clustered(r, n, 200, dim, 1)
	cs := make([]citebook.Chunk, n)
	for i := range cs {
		cs[i] = chunk(fmt.Sprintf("c%05d", i), "t1", fmt.Sprintf("b%d", i%4), 1)
		cs[i].ParentID = fmt.Sprintf("p%d", i%10)
	}
	require.NoError(t, s.Upsert(ctx, cs, vs))
	require.NoError(t, s.Upsert(ctx, []citebook.Chunk{chunk("other", "t2", "b0", 1)}, [][]float32{vs[0]}))
	f := citebook.Filter{Tenant: "t1", DenyParents: []string{"p3"}}
	for b := range 4 {
		f.Books = append(f.Books, citebook.BookScope{BookID: fmt.Sprintf("b%d", b), Version: 1})
	}
	// Right after a write the tenant is not quiet: no build starts.
	_, err := s.Search(ctx, vs[1], f, 10)
	require.NoError(t, err)
	s.gmu.Lock()
	require.False(t, s.building["t1"], "no build while the tenant is being written")
	s.gmu.Unlock()
	s.mu.Lock()
	s.quiet = 0
	s.mu.Unlock()

	q := vs[17]
	want := bruteForce(cs, vs, q, f, 10)
	hits, err := s.Search(ctx, q, f, 10)
	require.NoError(t, err)
	require.Equal(t, want, ids(hits), "exact answer while the graph is built")
	s.bg.Wait()
	s.mu.RLock()
	g := s.graphs["t1"]
	s.mu.RUnlock()
	require.NotNil(t, g, "graph installed after the first large search")
	require.Equal(t, n, len(g.rows))

	found := 0
	for i := range 30 {
		q := vs[r.IntN(n)]
		hits, err := s.Search(ctx, q, f, 10)
		require.NoError(t, err)
		require.Len(t, hits, 10)
		for _, h := range hits {
			require.True(t, f.Match(&h.Chunk), "query %d returned %s outside the filter", i, h.Chunk.ID)
		}
		want := bruteForce(cs, vs, q, f, 10)
		got := map[string]bool{}
		for _, id := range ids(hits) {
			got[id] = true
		}
		for _, id := range want {
			if got[id] {
				found++
			}
		}
	}
	require.GreaterOrEqual(t, float64(found)/300, 0.95, "recall@10 of the graph walk")

	// A graph whose recall check failed is never walked: answers are exact.
	g.usable = false
	for range 5 {
		q := vs[r.IntN(n)]
		hits, err := s.Search(ctx, q, f, 10)
		require.NoError(t, err)
		require.Equal(t, bruteForce(cs, vs, q, f, 10), ids(hits))
	}
	g.usable = true

	// Retire leaves the graph in place; the walk sees the new window.
	top, err := s.Search(ctx, q, f, 1)
	require.NoError(t, err)
	require.NoError(t, s.Retire(ctx, top[0].Chunk.BookID, []string{top[0].Chunk.ID}, 1))
	s.mu.RLock()
	require.NotNil(t, s.graphs["t1"], "retire keeps the graph")
	s.mu.RUnlock()
	hits, err = s.Search(ctx, q, f, 10)
	require.NoError(t, err)
	require.NotContains(t, ids(hits), top[0].Chunk.ID)

	// Delete drops the graph: answers are exact again and never hold the row.
	second := hits[0].Chunk.ID
	require.NoError(t, s.Delete(ctx, []string{second}))
	s.mu.RLock()
	require.Nil(t, s.graphs["t1"], "a write drops the tenant's graph")
	s.mu.RUnlock()
	hits, err = s.Search(ctx, q, f, 10)
	require.NoError(t, err)
	require.NotContains(t, ids(hits), second)
	require.NotContains(t, ids(hits), top[0].Chunk.ID)
	s.bg.Wait()
	hits, err = s.Search(ctx, q, f, 10)
	require.NoError(t, err)
	require.NotContains(t, ids(hits), second)
	for _, h := range hits {
		require.True(t, f.Match(&h.Chunk))
	}
}

// TestCloseStopsGraphBuild closes the store while a build runs; Close must
// wait for it and nothing may be installed afterwards.
func TestCloseStopsGraphBuild(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	r := rand.New(rand.NewPCG(31, 32))
	n := annMin
	vs := clustered(r, n, 100, 8, 1)
	cs := make([]citebook.Chunk, n)
	for i := range cs {
		cs[i] = chunk(fmt.Sprintf("c%05d", i), "t1", "b1", 1)
	}
	require.NoError(t, s.Upsert(ctx, cs, vs))
	s.quiet = 0
	f := citebook.Filter{Tenant: "t1", Books: []citebook.BookScope{{BookID: "b1", Version: 1}}}
	_, err := s.Search(ctx, vs[0], f, 5)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.Nil(t, s.graphs)
	_, err = s.Search(ctx, vs[0], f, 5)
	require.Error(t, err)
}

// TestCandidateCacheFollowsWrites searches with one filter before and after
// each kind of write: the cached admitted rows must never outlive a write.
func TestCandidateCacheFollowsWrites(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	defer s.Close()
	v := []float32{1, 0}
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}
	search := func() []string {
		hits, err := s.Search(ctx, v, f, 10)
		require.NoError(t, err)
		out := ids(hits)
		sort.Strings(out)
		return out
	}
	require.NoError(t, s.Upsert(ctx, []citebook.Chunk{chunk("seed", "t", "other", 1)}, [][]float32{v}))
	require.Empty(t, search())
	require.NoError(t, s.Upsert(ctx, []citebook.Chunk{chunk("a", "t", "b", 1), chunk("c", "t", "b", 1), chunk("new", "t", "b", 2)}, [][]float32{v, v, v}))
	require.Equal(t, []string{"a", "c"}, search())
	require.NoError(t, s.Retire(ctx, "b", []string{"a"}, 1))
	require.Equal(t, []string{"c"}, search())
	require.NoError(t, s.Retire(ctx, "b", []string{"a"}, 0))
	require.Equal(t, []string{"a", "c"}, search())
	require.NoError(t, s.Delete(ctx, []string{"c"}))
	require.Equal(t, []string{"a"}, search())
}

// bare is hits without their row handles, which name rows of one store as
// it is (a reopened store may number its rows otherwise).
func bare(hits []citebook.Hit) []citebook.Hit {
	out := slices.Clone(hits)
	for i := range out {
		out[i].Ref = citebook.RowRef{}
	}
	return out
}
