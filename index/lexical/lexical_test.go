package lexical

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/internal/rowset"
	"github.com/citebook/citebook/index/storetest"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/stretchr/testify/require"
)

var _ index.LexicalIndex = (*Index)(nil)

func open(t *testing.T, dir string) *Index {
	t.Helper()
	x, err := Open(context.Background(), dir)
	require.NoError(t, err)
	return x
}

func ids(hits []citebook.Hit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, h.Chunk.ID)
	}
	return out
}

// mobyChunks splits Moby Dick (BOM, CRLF) into paragraph chunks.
func mobyChunks(t testing.TB, tenant string) []citebook.Chunk {
	raw, err := os.ReadFile(corpus.Path(t, "books/mobydick.txt"))
	require.NoError(t, err)
	text := strings.ReplaceAll(strings.TrimPrefix(string(raw), "\ufeff"), "\r\n", "\n")
	var cs []citebook.Chunk
	for i, p := range strings.Split(text, "\n\n") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		cs = append(cs, citebook.Chunk{
			ID: fmt.Sprintf("moby-%05d", i), Tenant: tenant, BookID: "moby", Version: 1,
			ParentID: fmt.Sprintf("moby-p%d", i/20), Text: p,
		})
	}
	return cs
}

func TestSearchMobyDick(t *testing.T) {
	ctx := context.Background()
	x := open(t, t.TempDir())
	defer x.Close()
	cs := mobyChunks(t, "t")
	require.NoError(t, x.Upsert(ctx, cs))
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "moby", Version: 1}}}

	// Each query must find a paragraph containing the passage within the
	// top five.
	tests := []struct {
		query, passage string
	}{
		{"Call me Ishmael", "Call me Ishmael"},
		{"the Spouter-Inn", "Spouter-Inn"},
		{"CHAPTER 135. The Chase.--Third Day.", "CHAPTER 135. The Chase.--Third Day."},
		{"Queequeg's tomahawk pipe", "tomahawk-pipe"},
		{"WHALES", "whale"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			hits, err := x.Search(ctx, tt.query, f, f, 5)
			require.NoError(t, err)
			require.NotEmpty(t, hits)
			found := false
			for i, h := range hits {
				found = found || strings.Contains(strings.ToLower(h.Chunk.Text), strings.ToLower(tt.passage))
				if i > 0 {
					require.GreaterOrEqual(t, hits[i-1].Score, h.Score)
				}
			}
			require.True(t, found, "no hit contains %q", tt.passage)
		})
	}

	// FTS5 syntax in a query is read as words: it neither errors nor
	// changes what matches.
	for q, words := range map[string]string{
		`Ishmael" OR "whale`:         "ishmael or whale",
		`NEAR(whale ship)`:           "near whale ship",
		`terms:zzzunknownword*`:      "terms zzzunknownword",
		`-whale ^ship`:               "whale ship",
		`"`:                          "",
		`AND OR NOT (`:               "and or not",
		`{terms}: whale NOT harpoon`: "terms whale not harpoon",
	} {
		got, err := x.Search(ctx, q, f, f, 5)
		require.NoError(t, err, q)
		want, err := x.Search(ctx, words, f, f, 5)
		require.NoError(t, err)
		require.Equal(t, ids(want), ids(got), q)
	}
	// A sibilant plural and its singular are one term: each finds the
	// paragraphs printing the other ("boxes" was "boxe" until 2026-12-03).
	for plural, singular := range map[string]string{"boxes": "box", "branches": "branch", "lashes": "lash", "matches": "match"} {
		got, err := x.Search(ctx, plural, f, f, 50)
		require.NoError(t, err)
		want, err := x.Search(ctx, singular, f, f, 50)
		require.NoError(t, err)
		require.Equal(t, ids(want), ids(got), plural)
		both := map[string]bool{}
		for _, h := range got {
			for _, w := range strings.FieldsFunc(strings.ToLower(h.Chunk.Text), func(r rune) bool { return r < 'a' || r > 'z' }) {
				both[w] = true
			}
		}
		require.True(t, both[plural] && both[singular], "%s: hits print both forms", plural)
	}

	hits, err := x.Search(ctx, "Ishmael", f, f, 1<<40) // k far beyond the index
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	hits, err = x.Search(ctx, "  ... ", f, f, 5)
	require.NoError(t, err)
	require.Empty(t, hits)
}

// TestSearchCMRC checks Chinese retrieval: each CMRC 2018 question must find
// its own article among 256 in the top 5.
func TestSearchCMRC(t *testing.T) {
	ctx := context.Background()
	x := open(t, t.TempDir())
	defer x.Close()
	var cs []citebook.Chunk
	type qa struct{ q, id string }
	var qas []qa
	for _, p := range storetest.CMRC(t) {
		cs = append(cs, citebook.Chunk{ID: p.ID, Tenant: "t", BookID: "cmrc", Version: 1, ParentID: p.ID, Text: p.Context, Language: "zh"})
		for _, q := range p.Questions {
			qas = append(qas, qa{q, p.ID})
		}
	}
	require.Len(t, cs, 256)
	require.NoError(t, x.Upsert(ctx, cs))
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "cmrc", Version: 1}}}
	found := 0
	for _, q := range qas {
		hits, err := x.Search(ctx, q.q, f, f, 5)
		require.NoError(t, err)
		for _, h := range hits {
			if h.Chunk.ID == q.id {
				found++
				break
			}
		}
	}
	recall := float64(found) / float64(len(qas))
	t.Logf("CMRC recall@5 = %.3f over %d questions", recall, len(qas))
	require.GreaterOrEqual(t, recall, 0.85)
}

func TestFilterSemantics(t *testing.T) {
	ctx := context.Background()
	x := open(t, t.TempDir())
	defer x.Close()
	mk := func(id, tenant, book string, version, retired int, parent string) citebook.Chunk {
		return citebook.Chunk{ID: id, Tenant: tenant, BookID: book, Version: version, Retired: retired, ParentID: parent, Text: "the whale " + id}
	}
	cs := []citebook.Chunk{
		mk("a", "t", "book", 1, 0, "p"),
		mk("b", "t", "book", 1, 2, "p"),
		mk("c", "t", "book", 2, 0, "p"),
		mk("d", "t", "book", 1, 0, "secret"),
		mk("o", "t", "other", 1, 0, "p"),
		mk("x", "u", "book", 1, 0, "p"),
	}
	require.NoError(t, x.Upsert(ctx, cs))
	tests := storetest.FilterCases()
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			hits, err := x.Search(ctx, "whale", tt.Filter, tt.Filter, 10)
			require.NoError(t, err)
			want := []string{}
			for i := range cs {
				if tt.Filter.Match(&cs[i]) {
					want = append(want, cs[i].ID)
				}
			}
			require.ElementsMatch(t, want, ids(hits))
		})
	}
}

func TestPersistReplaceRetireDelete(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	x := open(t, dir)
	f1 := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}
	f2 := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 2}}}
	require.NoError(t, x.Upsert(ctx, []citebook.Chunk{
		{ID: "1", Tenant: "t", BookID: "b", Version: 1, ParentID: "p", Text: "pequod sails", HeadingPath: []string{"Chapter One"}},
		{ID: "2", Tenant: "t", BookID: "b", Version: 1, ParentID: "p", Text: "ahab limps"},
		{ID: "3", Tenant: "t", BookID: "b", Version: 1, ParentID: "p", Text: "starbuck doubts"},
	}))
	require.NoError(t, x.Close())

	x = open(t, dir)
	defer x.Close()
	hits, err := x.Search(ctx, "pequod", f1, f1, 5)
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, ids(hits))
	hits, err = x.Search(ctx, "chapter one", f1, f1, 5)
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, ids(hits), "headings are searchable")

	// Replacing a chunk replaces its terms.
	require.NoError(t, x.Upsert(ctx, []citebook.Chunk{{ID: "1", Tenant: "t", BookID: "b", Version: 1, ParentID: "p", Text: "rachel searches"}}))
	hits, err = x.Search(ctx, "pequod", f1, f1, 5)
	require.NoError(t, err)
	require.Empty(t, hits)
	hits, err = x.Search(ctx, "rachel", f1, f1, 5)
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, ids(hits))

	require.NoError(t, x.Retire(ctx, "b", []string{"2"}, 2))
	require.NoError(t, x.Retire(ctx, "other", []string{"3"}, 2))
	hits, err = x.Search(ctx, "ahab starbuck", f2, f2, 5)
	require.NoError(t, err)
	require.Equal(t, []string{"3"}, ids(hits))
	hits, err = x.Search(ctx, "ahab", f1, f1, 5)
	require.NoError(t, err)
	require.Equal(t, 2, hits[0].Chunk.Retired)

	require.NoError(t, x.Delete(ctx, []string{"3", "missing"}))
	got, err := x.IDs(ctx, "b")
	require.NoError(t, err)
	require.Equal(t, []string{"1", "2"}, got)
	hits, err = x.Search(ctx, "starbuck", f1, f1, 5)
	require.NoError(t, err)
	require.Empty(t, hits)

	// Get returns what is stored with its lifespan, and skips deleted and
	// unknown IDs, so the builder can check a version before serving it.
	cs, err := x.Get(ctx, []string{"2", "3", "1", "missing"})
	require.NoError(t, err)
	require.Len(t, cs, 2)
	slices.SortFunc(cs, func(a, b citebook.Chunk) int { return strings.Compare(a.ID, b.ID) })
	require.Equal(t, "rachel searches", cs[0].Text)
	require.True(t, cs[0].VisibleIn(2))
	require.Equal(t, 2, cs[1].Retired)
	require.False(t, cs[1].VisibleIn(2))
	require.True(t, cs[1].VisibleIn(1))
}

// Deleting and replacing most of a book compacts the postings; ranking and
// statistics must come out as if the survivors had been indexed alone.
func TestCompactionKeepsRanking(t *testing.T) {
	ctx := context.Background()
	cs := mobyChunks(t, "t")
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "moby", Version: 1}}}
	keep := cs[:len(cs)/3]

	fresh := open(t, t.TempDir())
	defer fresh.Close()
	require.NoError(t, fresh.Upsert(ctx, keep))

	x := open(t, t.TempDir())
	defer x.Close()
	require.NoError(t, x.Upsert(ctx, cs))
	require.NoError(t, x.Upsert(ctx, keep)) // replaced rows become garbage too
	var gone []string
	for _, c := range cs[len(cs)/3:] {
		gone = append(gone, c.ID)
	}
	require.NoError(t, x.Delete(ctx, gone))
	require.Equal(t, len(keep), x.Len())
	x.mu.RLock()
	rows := len(x.rows)
	x.mu.RUnlock()
	require.Equal(t, len(keep), rows, "deleted rows were compacted away")

	for _, q := range []string{"whale", "Call me Ishmael", "Queequeg harpoon", "Nantucket"} {
		want, err := fresh.Search(ctx, q, f, f, 10)
		require.NoError(t, err)
		got, err := x.Search(ctx, q, f, f, 10)
		require.NoError(t, err)
		require.Equal(t, ids(want), ids(got), q)
		for i := range want {
			require.InDelta(t, want[i].Score, got[i].Score, 1e-9)
		}
	}
}

func TestConcurrentReadersAndWriter(t *testing.T) {
	ctx := context.Background()
	x := open(t, t.TempDir())
	defer x.Close()
	cs := mobyChunks(t, "t")[:400]
	require.NoError(t, x.Upsert(ctx, cs[:200]))
	// A second tenant, so searches count their tenant's statistics
	// (tenantStats) while the writer empties them.
	other := mobyChunks(t, "u")[400:450]
	for i := range other {
		other[i].ID = "u-" + other[i].ID
	}
	require.NoError(t, x.Upsert(ctx, other))
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "moby", Version: 1}}}
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if _, err := x.Search(ctx, "the whale ship", f, f, 5); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 200; i < 400; i += 20 {
		require.NoError(t, x.Upsert(ctx, cs[i:i+20]))
		require.NoError(t, x.Delete(ctx, []string{cs[i-200].ID}))
	}
	close(done)
	for range 4 {
		require.NoError(t, <-errs)
	}
	require.Equal(t, 440, x.Len())
}

func TestClosedIndexIsUnavailable(t *testing.T) {
	x := open(t, t.TempDir())
	require.NoError(t, x.Close())
	_, err := x.Search(context.Background(), "whale", citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}, citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}, 3)
	require.Equal(t, citebook.EUNAVAILABLE, citebook.ErrorCode(err))
	err = x.Upsert(context.Background(), []citebook.Chunk{{ID: "a"}})
	require.Equal(t, citebook.EUNAVAILABLE, citebook.ErrorCode(err))
}

// Reopening rebuilds the in-memory index (in batches, in parallel); results
// must be identical to before the restart.
func TestReopenRebuildsSameIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	x := open(t, dir)
	var all []citebook.Chunk
	for _, tenant := range []string{"t1", "t2", "t3", "t4"} {
		for _, c := range mobyChunks(t, tenant) {
			c.ID = tenant + c.ID
			all = append(all, c)
		}
	}
	require.Greater(t, len(all), 2*4096)
	require.NoError(t, x.Upsert(ctx, all))
	require.NoError(t, x.Retire(ctx, "moby", []string{"t2moby-00100"}, 2))
	f := citebook.Filter{Tenant: "t2", Books: []citebook.BookScope{{BookID: "moby", Version: 2}}}
	queries := []string{"white whale", "Ishmael Queequeg", "Nantucket"}
	var before [][]citebook.Hit
	for _, q := range queries {
		hits, err := x.Search(ctx, q, f, f, 10)
		require.NoError(t, err)
		before = append(before, hits)
	}
	require.NoError(t, x.Close())

	x = open(t, dir)
	defer x.Close()
	require.Equal(t, len(all), x.Len())
	for i, q := range queries {
		hits, err := x.Search(ctx, q, f, f, 10)
		require.NoError(t, err)
		require.Equal(t, before[i], hits, q)
	}
}

// exhaustive is the plain BM25 scorer topK replaced: every posting of every
// query term summed in query order, then the k best by score and chunk ID,
// with the collection statistics (rows, their average length, each term's
// document frequency) counted over the rows lib admits, the reader's
// library.
func exhaustive(x *Index, query string, f, lib citebook.Filter, k int) []citebook.Hit {
	x.mu.RLock()
	defer x.mu.RUnlock()
	hits := []citebook.Hit{}
	allowed := rowset.Resolve(x.view(), &f)
	if allowed.Len() == 0 {
		return hits
	}
	// Collection statistics over the library's rows only (bm25Stats),
	// resolved as Filter.Match admits them.
	inLib := map[int32]bool{}
	var total float64
	for r := range x.rows {
		if x.meta[r].parent >= 0 && lib.Match(&x.rows[r].chunk) {
			inLib[int32(r)] = true
			total += float64(x.rows[r].length)
		}
	}
	n := float64(len(inLib))
	avgdl := total / n
	scores := map[int32]float64{}
	for _, t := range analysis.QueryTerms(query) {
		id, ok := x.terms[t]
		if !ok {
			continue
		}
		var df float64
		for _, p := range x.postings[id] {
			if inLib[p.row] {
				df++
			}
		}
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range x.postings[id] {
			if !allowed.Has(p.row) {
				continue
			}
			tf := float64(p.tf)
			dl := float64(x.rows[p.row].length)
			scores[p.row] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/avgdl))
		}
	}
	type scoredID struct {
		row   int32
		score float64
		id    string
	}
	var all []scoredID
	for r, s := range scores {
		all = append(all, scoredID{r, s, x.rows[r].chunk.ID})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].id < all[j].id
	})
	for _, c := range all[:min(k, len(all))] {
		hits = append(hits, citebook.Hit{Chunk: x.rows[c.row].chunk, Score: c.score})
	}
	return hits
}

// TestPrunedMatchesExhaustive runs random queries drawn from Moby Dick's own
// words (rare and common, one to seven terms) under several filters and k,
// and requires the pruned search to return exactly what the exhaustive
// scorer does: same chunks, same order, bit-identical scores.
func TestPrunedMatchesExhaustive(t *testing.T) {
	ctx := context.Background()
	x := open(t, t.TempDir())
	defer x.Close()
	paras := mobyChunks(t, "")
	for tn := range 2 {
		for bk := range 3 {
			cs := make([]citebook.Chunk, len(paras))
			for i, p := range paras {
				p.ID = fmt.Sprintf("t%d-b%d-%s", tn, bk, p.ID)
				p.Tenant = fmt.Sprintf("t%d", tn)
				p.BookID = fmt.Sprintf("b%d", bk)
				cs[i] = p
			}
			require.NoError(t, x.Upsert(ctx, cs))
		}
	}
	// Replaced and deleted rows leave dead postings behind, which the
	// bounds and lookups must cope with.
	require.NoError(t, x.Delete(ctx, []string{"t0-b0-moby-00100", "t0-b1-moby-00200"}))
	require.NoError(t, x.Upsert(ctx, []citebook.Chunk{{ID: "t0-b0-moby-00300", Tenant: "t0", BookID: "b0", Version: 1, ParentID: "x", Text: "whale whale whale ahab"}}))

	var words []string
	for _, p := range paras {
		words = append(words, analysis.Terms(p.Text)...)
	}
	r := rand.New(rand.NewPCG(8, 9))
	// Each filter with the library it is narrowed from: a whole tenant
	// (the tenant's statistics), and libraries denied a book or chapters
	// (statistics of their own).
	all0 := citebook.Filter{Tenant: "t0", Books: []citebook.BookScope{{BookID: "b0", Version: 1}, {BookID: "b1", Version: 1}, {BookID: "b2", Version: 1}}}
	all1 := citebook.Filter{Tenant: "t1", Books: all0.Books}
	denied := citebook.Filter{Tenant: "t0", Books: []citebook.BookScope{{BookID: "b0", Version: 1}, {BookID: "b2", Version: 1}}, DenyParents: []string{"moby-p3", "moby-p40", "x"}}
	filters := []struct{ f, lib citebook.Filter }{
		{all0, all0},
		{citebook.Filter{Tenant: "t1", Books: []citebook.BookScope{{BookID: "b1", Version: 1}}}, all1},
		{denied, denied},
		{citebook.Filter{Tenant: "t0", Books: []citebook.BookScope{{BookID: "b2", Version: 1}}, DenyParents: denied.DenyParents}, denied},
		{citebook.Filter{Tenant: "t1", Books: []citebook.BookScope{{BookID: "b0", Version: 1}}}, citebook.Filter{Tenant: "t1", Books: all0.Books[:2]}},
	}
	for i := range 400 {
		n := 1 + r.IntN(7)
		q := make([]string, n)
		for j := range q {
			q[j] = words[r.IntN(len(words))]
		}
		query := strings.Join(q, " ")
		f, lib := filters[i%len(filters)].f, filters[i%len(filters)].lib
		k := []int{1, 3, 10, 50}[r.IntN(4)]
		got, err := x.Search(ctx, query, f, lib, k)
		require.NoError(t, err)
		want := exhaustive(x, query, f, lib, k)
		require.Equal(t, len(want), len(got), "query %q k=%d", query, k)
		for j := range want {
			require.Equal(t, want[j].Chunk.ID, got[j].Chunk.ID, "query %q k=%d rank %d", query, k, j)
			require.Equal(t, want[j].Score, got[j].Score, "query %q k=%d rank %d", query, k, j)
		}
	}
}

func TestKth(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var tmp []float64
	for range 200 {
		n := 1 + r.IntN(40)
		scores := make([]float64, n)
		rows := make([]int32, n)
		for i := range scores {
			scores[i] = float64(r.IntN(8)) // many ties
			rows[i] = int32(i)
		}
		k := 1 + r.IntN(n)
		sorted := slices.Clone(scores)
		sort.Sort(sort.Reverse(sort.Float64Slice(sorted)))
		require.Equal(t, sorted[k-1], kth(scores, rows, k, &tmp))
	}
}

// TestAdmissionCacheFollowsWrites searches with one filter before and after
// each kind of write: the cached admission of the filter must never outlive
// the write.
func TestAdmissionCacheFollowsWrites(t *testing.T) {
	ctx := context.Background()
	x := open(t, t.TempDir())
	defer x.Close()
	c := func(id string, v int) citebook.Chunk {
		return citebook.Chunk{ID: id, Tenant: "t", BookID: "b", Version: v, ParentID: "p-" + id, Text: "the white whale " + id}
	}
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}
	search := func() []string {
		hits, err := x.Search(ctx, "whale", f, f, 10)
		require.NoError(t, err)
		s := ids(hits)
		sort.Strings(s)
		return s
	}
	require.Empty(t, search())
	require.NoError(t, x.Upsert(ctx, []citebook.Chunk{c("a", 1), c("b", 1), c("new", 2)}))
	require.Equal(t, []string{"a", "b"}, search())
	require.NoError(t, x.Retire(ctx, "b", []string{"a"}, 1))
	require.Equal(t, []string{"b"}, search())
	require.NoError(t, x.Retire(ctx, "b", []string{"a"}, 0))
	require.Equal(t, []string{"a", "b"}, search())
	require.NoError(t, x.Delete(ctx, []string{"b"}))
	require.Equal(t, []string{"a"}, search())
	f.DenyParents = []string{"p-a"}
	require.Empty(t, search())
}

// TestCursorSeek walks random posting lists with ascending rows, some held
// and some not, and checks every answer against a linear lookup.
func TestCursorSeek(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		var ps []posting
		for row := int32(r.IntN(3)); row < 2000; row += 1 + int32(r.IntN(1+r.IntN(60))) {
			ps = append(ps, posting{row, 1 + int32(r.IntN(5))})
		}
		c := cursor{ps: ps}
		for q := int32(r.IntN(5)); q < 2100; q += 1 + int32(r.IntN(1+r.IntN(200))) {
			want, wok := posting{}, false
			for _, p := range ps {
				if p.row == q {
					want, wok = p, true
				}
			}
			got, ok := c.seek(q)
			require.Equal(t, wok, ok, "row %d", q)
			require.Equal(t, want, got, "row %d", q)
		}
	}
}

// TestIDKeyOrder: ordering by idKey, then by ID where keys tie, is the
// strings' own order, for IDs sharing prefixes, shorter than a key, with
// NUL and high bytes.
func TestIDKeyOrder(t *testing.T) {
	ids := []string{"", "a", "ab", "ab\x00", "ab\x00\x01", "abcdefgh", "abcdefgh0", "abcdefgi", "abcdefg", "\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\x00",
		"5e924e7bf9f20a41", "5e924e7bf9f20a40", "5e924e7c", "b", "ab\x01"}
	byKey := slices.Clone(ids)
	slices.SortFunc(byKey, func(a, b string) int {
		if c := cmp.Compare(idKey(a), idKey(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	want := slices.Clone(ids)
	slices.Sort(want)
	require.Equal(t, want, byKey)
}

// TestSearchHitsAreCopies: a hit is its chunk as indexed (Chunk.Clone: no
// geometry, nil slices kept nil, empty ones empty), and changing a hit's
// slices changes neither the index nor the other hits.
func TestSearchHitsAreCopies(t *testing.T) {
	ctx := context.Background()
	x := open(t, t.TempDir())
	defer x.Close()
	var cs []citebook.Chunk
	for i := range 6 {
		c := citebook.Chunk{ID: fmt.Sprintf("c%d", i), Tenant: "t", BookID: "b", Version: 1, ParentID: "p",
			Text: fmt.Sprintf("whales and ships, part %d", i)}
		switch i % 3 {
		case 0:
			c.HeadingPath = []string{"Part", fmt.Sprintf("Chapter %d", i)}
			c.Pages = []citebook.PageSpan{{Offset: 0, Page: i + 1}, {Offset: 5, Page: i + 2, Printed: "iv"}}
			c.Groups = []string{"staff"}
		case 1:
			c.HeadingPath = []string{}
			c.Geometry = []citebook.WordBox{{}}
		}
		cs = append(cs, c)
	}
	require.NoError(t, x.Upsert(ctx, cs))
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}
	hits, err := x.Search(ctx, "whales ships", f, f, 10)
	require.NoError(t, err)
	require.Len(t, hits, len(cs))
	want := map[string]citebook.Chunk{}
	for _, c := range cs {
		want[c.ID] = c.Clone()
	}
	for _, h := range hits {
		require.Equal(t, want[h.Chunk.ID], h.Chunk)
		require.Equal(t, want[h.Chunk.ID].HeadingPath == nil, h.Chunk.HeadingPath == nil, h.Chunk.ID)
	}
	for i := len(hits) - 1; i >= 0; i-- { // backwards: an append reaching the next hit would overwrite its change
		c := &hits[i].Chunk
		if len(c.HeadingPath) > 0 {
			c.HeadingPath[0] = "changed"
			c.Pages[0].Page = 99
			c.Groups[0] = "changed"
		}
		c.HeadingPath = append(c.HeadingPath, "appended")
		c.Pages = append(c.Pages, citebook.PageSpan{Page: 77})
		c.Groups = append(c.Groups, "appended")
	}
	again, err := x.Search(ctx, "whales ships", f, f, 10)
	require.NoError(t, err)
	for _, h := range again {
		require.Equal(t, want[h.Chunk.ID], h.Chunk)
	}
	for _, h := range hits {
		w := want[h.Chunk.ID]
		require.Len(t, h.Chunk.HeadingPath, len(w.HeadingPath)+1, "each hit's own append only")
		require.Len(t, h.Chunk.Pages, len(w.Pages)+1)
		if len(w.HeadingPath) > 0 {
			require.Equal(t, "changed", h.Chunk.HeadingPath[0], h.Chunk.ID)
			require.Equal(t, 99, h.Chunk.Pages[0].Page, h.Chunk.ID)
			require.Equal(t, "changed", h.Chunk.Groups[0], h.Chunk.ID)
		}
	}
}

// TestSearchForms checks that a term's forms count as the term: searching
// Moby Dick for "live" with its forms ranks and scores every paragraph as
// plain BM25 does over a copy of the book whose forms were rewritten to
// "live" (the same lengths, so the same BM25), at every depth the pruning
// cuts at, under a filter that denies parents and after a deletion. A term
// whose forms hold more postings than the index merges is searched as
// itself: its forms change nothing.
func TestSearchForms(t *testing.T) {
	ctx := context.Background()
	forms := map[string][]string{"live": {"lived", "living", "lives"}, "whale": {"whaling", "whaled"}, "nonesuch": {"zzzunknown"}}
	word := regexp.MustCompile(`(?i)\b(lived|living|lives|whaling|whaled)\b`)
	root := map[string]string{"lived": "live", "living": "live", "lives": "live", "whaling": "whale", "whaled": "whale"}
	x, rewritten := open(t, t.TempDir()), open(t, t.TempDir())
	defer x.Close()
	defer rewritten.Close()
	cs := mobyChunks(t, "t")
	require.NoError(t, x.Upsert(ctx, cs))
	for i := range cs {
		cs[i].Text = word.ReplaceAllStringFunc(cs[i].Text, func(w string) string { return root[strings.ToLower(w)] })
	}
	require.NoError(t, rewritten.Upsert(ctx, cs))
	for _, ix := range []*Index{x, rewritten} {
		require.NoError(t, ix.Delete(ctx, []string{"moby-00120"}))
	}
	filters := []citebook.Filter{
		{Tenant: "t", Books: []citebook.BookScope{{BookID: "moby", Version: 1}}},
		{Tenant: "t", Books: []citebook.BookScope{{BookID: "moby", Version: 1}}, DenyParents: []string{"moby-p3", "moby-p40"}},
	}
	for _, q := range []string{"live", "where did they live", "the whale lives", "a whale voyage", "live nonesuch", "Ishmael"} {
		for _, f := range filters {
			for _, k := range []int{1, 3, 10, 200} {
				got, err := x.SearchForms(ctx, q, forms, f, f, k)
				require.NoError(t, err)
				want, err := rewritten.Search(ctx, word.ReplaceAllStringFunc(q, func(w string) string { return root[strings.ToLower(w)] }), f, f, k)
				require.NoError(t, err)
				require.Equal(t, ids(want), ids(got), "%q k=%d", q, k)
				for i := range want {
					require.InDelta(t, want[i].Score, got[i].Score, 1e-9, "%q k=%d rank %d", q, k, i)
				}
			}
		}
	}
	x.mergeMax = 500 // "whale" and its forms are in more paragraphs, "live" and its in fewer
	got, err := x.SearchForms(ctx, "whale", forms, filters[0], filters[0], 50)
	require.NoError(t, err)
	want, err := x.Search(ctx, "whale", filters[0], filters[0], 50)
	require.NoError(t, err)
	require.Equal(t, want, got, "a term beyond the merge bound is searched as itself")
	got, err = x.SearchForms(ctx, "live", forms, filters[0], filters[0], 50)
	require.NoError(t, err)
	want, err = rewritten.Search(ctx, "live", filters[0], filters[0], 50)
	require.NoError(t, err)
	require.Equal(t, ids(want), ids(got), "a term within it is merged")
	// Without forms SearchForms is Search.
	got, err = x.SearchForms(ctx, "whale ship", nil, filters[0], filters[0], 10)
	require.NoError(t, err)
	want, err = x.Search(ctx, "whale ship", filters[0], filters[0], 10)
	require.NoError(t, err)
	require.Equal(t, want, got)
}
