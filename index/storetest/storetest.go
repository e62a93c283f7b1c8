// Package storetest is the contract every index.VectorStore must pass. The
// embedded store and Milvus run the same suite so retrieval, versioning and,
// above all, access filtering behave identically whichever store is deployed.
package storetest

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/internal/corpus"
)

// Dim is the vector dimension the suite writes; open must return a store
// configured for it.
const Dim = 8

// scoreTolerance absorbs float32 rounding and approximate-index noise while
// still telling neighbouring fixture scores (0.01 apart at the closest) apart.
const scoreTolerance = 2e-3

// Run checks store behaviour against the index.VectorStore contract. open is
// called once per subtest and must return an empty store of dimension Dim,
// registering its own cleanup on t.
func Run(t *testing.T, open func(t *testing.T) index.VectorStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s index.VectorStore)
	}{
		{"SearchRanksByCosine", testSearchRanksByCosine},
		{"FilterInsideSearch", testFilterInsideSearch},
		{"UpsertReplacesByID", testUpsertReplacesByID},
		{"UpsertRejectsMismatchedVectors", testUpsertRejectsMismatched},
		{"Retire", testRetire},
		{"Delete", testDelete},
		{"IDs", testIDs},
		{"GetRoundTripsMetadata", testGetRoundTrip},
		{"Escaping", testEscaping},
		{"CorpusTextRoundTrips", testCorpus},
		{"ManyBooksInScope", testManyBooks},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			tc.fn(t, s)
		})
	}
}

// MilvusAddr returns the Milvus server tests run against (MILVUS_ADDR, set
// by scripts/milvus.sh). CI must test the real server, so there a missing
// address fails the test; a developer machine without one skips it.
func MilvusAddr(t testing.TB) string {
	t.Helper()
	addr := os.Getenv("MILVUS_ADDR")
	if addr == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("MILVUS_ADDR is not set; CI must start Milvus (scripts/milvus.sh)")
		}
		t.Skip("MILVUS_ADDR not set; run `make test` or source scripts/milvus.sh")
	}
	return addr
}

// Vector returns a unit vector whose cosine similarity to Axis(0) is sim; the
// rest of its length goes to Axis(1+side%(Dim-1)) so vectors with equal sim
// still differ.
func Vector(sim float64, side int) []float32 {
	v := make([]float32, Dim)
	v[0] = float32(sim)
	v[1+side%(Dim-1)] = float32(math.Sqrt(1 - sim*sim))
	return v
}

// Axis returns the unit vector along dimension i.
func Axis(i int) []float32 {
	v := make([]float32, Dim)
	v[i] = 1
	return v
}

// chunk builds a chunk with every field a store must keep filled in.
func chunk(id, book, tenant, parent string, version, retired int) citebook.Chunk {
	return citebook.Chunk{
		ID:          id,
		BookID:      book,
		Version:     version,
		Retired:     retired,
		ParentID:    parent,
		Ordinal:     len(id),
		HeadingPath: []string{"Part I", "Chapter " + parent},
		PageStart:   3,
		PageEnd:     4,
		CharStart:   100,
		CharEnd:     180,
		Text:        "text of " + id,
		Tokens:      12,
		Language:    "en",
		ContentHash: "sha256:" + id,
		Pages:       []citebook.PageSpan{{Offset: 0, Page: 3, Printed: "1"}, {Offset: 40, Page: 4, Printed: "2"}},
		Tenant:      tenant,
		Groups:      []string{"staff"},
		Embedding:   "test/fixed/" + strconv.Itoa(Dim),
	}
}

// fixture is a stored chunk and its similarity to the query Axis(0).
type fixture struct {
	chunk citebook.Chunk
	sim   float64
}

func upsert(t *testing.T, s index.VectorStore, fx []fixture) map[string]fixture {
	t.Helper()
	chunks := make([]citebook.Chunk, len(fx))
	vecs := make([][]float32, len(fx))
	byID := make(map[string]fixture, len(fx))
	for i, f := range fx {
		chunks[i] = f.chunk
		vecs[i] = Vector(f.sim, i)
		byID[f.chunk.ID] = f
	}
	require.NoError(t, s.Upsert(context.Background(), chunks, vecs))
	return byID
}

func hitIDs(hits []citebook.Hit) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Chunk.ID
	}
	return ids
}

func search(t *testing.T, s index.VectorStore, f citebook.Filter, k int) []citebook.Hit {
	t.Helper()
	hits, err := s.Search(context.Background(), Axis(0), f, k)
	require.NoError(t, err)
	return hits
}

func scope(book string, v int) []citebook.BookScope {
	return []citebook.BookScope{{BookID: book, Version: v}}
}

func testSearchRanksByCosine(t *testing.T, s index.VectorStore) {
	ctx := context.Background()
	near := chunk("near", "b", "t", "p", 1, 0)
	mid := chunk("mid", "b", "t", "p", 1, 0)
	far := chunk("far", "b", "t", "p", 1, 0)
	opposite := chunk("opposite", "b", "t", "p", 1, 0)
	// Lengths differ on purpose: cosine ignores them, inner product would not.
	vecs := [][]float32{
		scale(Vector(0.95, 1), 7),
		scale(Vector(0.5, 2), 0.01),
		Vector(0.1, 3),
		scale(Vector(-0.8, 4), 3),
	}
	require.NoError(t, s.Upsert(ctx, []citebook.Chunk{far, opposite, near, mid}, [][]float32{vecs[2], vecs[3], vecs[0], vecs[1]}))

	hits, err := s.Search(ctx, scale(Axis(0), 0.25), citebook.Filter{Tenant: "t", Books: scope("b", 1)}, 4)
	require.NoError(t, err)
	require.Equal(t, []string{"near", "mid", "far", "opposite"}, hitIDs(hits))
	for i, want := range []float64{0.95, 0.5, 0.1, -0.8} {
		require.InDelta(t, want, hits[i].Score, scoreTolerance, "score of %s", hits[i].Chunk.ID)
	}
	require.Equal(t, near, hits[0].Chunk, "a hit carries the stored chunk")

	hits, err = s.Search(ctx, Axis(3), citebook.Filter{Tenant: "t", Books: scope("b", 1)}, 1)
	require.NoError(t, err)
	require.Equal(t, []string{"mid"}, hitIDs(hits), "the query direction decides the ranking")
}

func scale(v []float32, f float32) []float32 {
	out := make([]float32, len(v))
	for i := range v {
		out[i] = v[i] * f
	}
	return out
}

// filterFixture is one library of two tenants: acme has a versioned book b1
// (a4 retired in version 2, a5 new in 2, a6 new in 3), a second book b2 and a
// book b3 whose only chunk is far from the query; globex has 40 chunks closer
// to the query than anything of acme.
func filterFixture() []fixture {
	fx := []fixture{
		{chunk("a1", "b1", "acme", "p1", 1, 0), 0.90},
		{chunk("a2", "b1", "acme", "p1", 1, 0), 0.80},
		{chunk("a3", "b1", "acme", "p2", 1, 0), 0.70},
		{chunk("a4", "b1", "acme", "p2", 1, 2), 0.60},
		{chunk("a5", "b1", "acme", "p3", 2, 0), 0.50},
		{chunk("a6", "b1", "acme", "p3", 3, 0), 0.40},
		{chunk("b2-1", "b2", "acme", "q1", 1, 0), 0.30},
		{chunk("far", "b3", "acme", "r1", 1, 0), 0.05},
	}
	for i := range 40 {
		fx = append(fx, fixture{chunk("g"+strconv.Itoa(i), "g1", "globex", "gp", 1, 0), 0.99 - float64(i)*0.001})
	}
	return fx
}

func testFilterInsideSearch(t *testing.T, s index.VectorStore) {
	fx := upsert(t, s, filterFixture())
	tests := []struct {
		name string
		f    citebook.Filter
		k    int
		want []string
	}{
		{"version 1 sees chunks retired later", citebook.Filter{Tenant: "acme", Books: scope("b1", 1)}, 10, []string{"a1", "a2", "a3", "a4"}},
		{"version 2 hides retired and adds new", citebook.Filter{Tenant: "acme", Books: scope("b1", 2)}, 10, []string{"a1", "a2", "a3", "a5"}},
		{"version 3", citebook.Filter{Tenant: "acme", Books: scope("b1", 3)}, 10, []string{"a1", "a2", "a3", "a5", "a6"}},
		{"version 0 sees nothing", citebook.Filter{Tenant: "acme", Books: scope("b1", 0)}, 10, nil},
		{"k cuts the ranking", citebook.Filter{Tenant: "acme", Books: scope("b1", 1)}, 2, []string{"a1", "a2"}},
		{"deny parents", citebook.Filter{Tenant: "acme", Books: scope("b1", 3), DenyParents: []string{"p1", "nope"}}, 10, []string{"a3", "a5", "a6"}},
		{"several books at their own versions", citebook.Filter{Tenant: "acme", Books: []citebook.BookScope{{BookID: "b1", Version: 2}, {BookID: "b2", Version: 1}}}, 10, []string{"a1", "a2", "a3", "a5", "b2-1"}},
		{"one match among many of another tenant", citebook.Filter{Tenant: "acme", Books: []citebook.BookScope{{BookID: "g1", Version: 1}, {BookID: "b3", Version: 1}}}, 5, []string{"far"}},
		{"other tenant never sees acme", citebook.Filter{Tenant: "globex", Books: []citebook.BookScope{{BookID: "b1", Version: 3}, {BookID: "b2", Version: 1}, {BookID: "b3", Version: 1}}}, 10, nil},
		{"globex own top 3", citebook.Filter{Tenant: "globex", Books: scope("g1", 1)}, 3, []string{"g0", "g1", "g2"}},
		{"empty filter matches nothing", citebook.Filter{}, 10, nil},
		{"tenant without books matches nothing", citebook.Filter{Tenant: "acme"}, 10, nil},
		{"books without tenant match nothing", citebook.Filter{Books: scope("b1", 3)}, 10, nil},
		{"k larger than matches", citebook.Filter{Tenant: "acme", Books: scope("b2", 1)}, 100, []string{"b2-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits := search(t, s, tc.f, tc.k)
			require.Equal(t, tc.want, nonNil(hitIDs(hits)))
			for _, h := range hits {
				want := fx[h.Chunk.ID]
				require.True(t, tc.f.Match(&h.Chunk), "hit %s does not pass Filter.Match", h.Chunk.ID)
				require.InDelta(t, want.sim, h.Score, scoreTolerance, "score of %s", h.Chunk.ID)
				require.Equal(t, want.chunk, h.Chunk)
			}
		})
	}
}

// nonNil turns an empty list into nil so expectations can say "nothing".
func nonNil(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	return ids
}

func testUpsertReplacesByID(t *testing.T, s index.VectorStore) {
	ctx := context.Background()
	first := chunk("c1", "b", "t", "p", 1, 0)
	other := chunk("c2", "b", "t", "p", 1, 0)
	require.NoError(t, s.Upsert(ctx, []citebook.Chunk{first, other}, [][]float32{Axis(0), Axis(3)}))

	second := first
	second.Text = "replaced text"
	second.Version = 2
	require.NoError(t, s.Upsert(ctx, []citebook.Chunk{second}, [][]float32{Axis(1)}))
	require.NoError(t, s.Upsert(ctx, []citebook.Chunk{second}, [][]float32{Axis(1)}), "upserting the same chunk twice is idempotent")

	ids, err := s.IDs(ctx, "b")
	require.NoError(t, err)
	sort.Strings(ids)
	require.Equal(t, []string{"c1", "c2"}, ids)

	got, err := s.Get(ctx, []string{"c1"})
	require.NoError(t, err)
	require.Equal(t, []citebook.Chunk{second}, got)

	hits, err := s.Search(ctx, Axis(1), citebook.Filter{Tenant: "t", Books: scope("b", 2)}, 1)
	require.NoError(t, err)
	require.Equal(t, []string{"c1"}, hitIDs(hits))
	require.InDelta(t, 1, hits[0].Score, scoreTolerance, "the vector was replaced too")

	hits = search(t, s, citebook.Filter{Tenant: "t", Books: scope("b", 1)}, 5)
	require.Equal(t, []string{"c2"}, hitIDs(hits), "the replaced version-1 row is gone")

	require.NoError(t, s.Upsert(ctx, nil, nil), "an empty batch is fine")
}

func testUpsertRejectsMismatched(t *testing.T, s index.VectorStore) {
	err := s.Upsert(context.Background(), []citebook.Chunk{chunk("c1", "b", "t", "p", 1, 0)}, nil)
	require.Error(t, err)
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
}

func testRetire(t *testing.T, s index.VectorStore) {
	ctx := context.Background()
	upsert(t, s, []fixture{
		{chunk("keep", "b", "t", "p", 1, 0), 0.9},
		{chunk("old", "b", "t", "p", 1, 0), 0.8},
		{chunk("new", "b", "t", "p", 2, 0), 0.7},
		{chunk("other-book", "c", "t", "p", 1, 0), 0.6},
	})
	require.NoError(t, s.Retire(ctx, "b", []string{"old", "missing"}, 2))
	require.NoError(t, s.Retire(ctx, "b", []string{"other-book"}, 2), "retiring another book's chunk is a no-op")
	require.NoError(t, s.Retire(ctx, "b", nil, 2))

	require.Equal(t, []string{"keep", "old"}, hitIDs(search(t, s, citebook.Filter{Tenant: "t", Books: scope("b", 1)}, 10)), "old version still served")
	require.Equal(t, []string{"keep", "new"}, hitIDs(search(t, s, citebook.Filter{Tenant: "t", Books: scope("b", 2)}, 10)), "new version hides retired")
	require.Equal(t, []string{"other-book"}, hitIDs(search(t, s, citebook.Filter{Tenant: "t", Books: scope("c", 5)}, 10)))

	got, err := s.Get(ctx, []string{"old", "other-book"})
	require.NoError(t, err)
	retired := map[string]int{}
	for _, c := range got {
		retired[c.ID] = c.Retired
	}
	require.Equal(t, map[string]int{"old": 2, "other-book": 0}, retired)
}

func testDelete(t *testing.T, s index.VectorStore) {
	ctx := context.Background()
	upsert(t, s, []fixture{
		{chunk("d1", "b", "t", "p", 1, 0), 0.9},
		{chunk("d2", "b", "t", "p", 1, 0), 0.8},
		{chunk("d3", "b", "t", "p", 1, 0), 0.7},
	})
	require.NoError(t, s.Delete(ctx, []string{"d1", "missing", "d3"}))
	require.NoError(t, s.Delete(ctx, []string{"d1"}), "deleting twice is fine")
	require.NoError(t, s.Delete(ctx, nil))

	ids, err := s.IDs(ctx, "b")
	require.NoError(t, err)
	require.Equal(t, []string{"d2"}, ids)
	got, err := s.Get(ctx, []string{"d1", "d3"})
	require.NoError(t, err)
	require.Empty(t, got)
	require.Equal(t, []string{"d2"}, hitIDs(search(t, s, citebook.Filter{Tenant: "t", Books: scope("b", 1)}, 10)))

	// Deleting many at once crosses any batch size a store uses.
	var many []citebook.Chunk
	var vecs [][]float32
	var manyIDs []string
	for i := range 1200 {
		c := chunk("m"+strconv.Itoa(i), "many", "t", "p", 1, 0)
		many = append(many, c)
		vecs = append(vecs, Vector(0.5, i))
		manyIDs = append(manyIDs, c.ID)
	}
	require.NoError(t, s.Upsert(ctx, many, vecs))
	require.NoError(t, s.Delete(ctx, manyIDs))
	ids, err = s.IDs(ctx, "many")
	require.NoError(t, err)
	require.Empty(t, ids)
}

func testIDs(t *testing.T, s index.VectorStore) {
	ctx := context.Background()
	upsert(t, s, []fixture{
		{chunk("x2", "bx", "t", "p", 1, 0), 0.9},
		{chunk("x1", "bx", "t", "p", 2, 3), 0.8},
		{chunk("y1", "by", "t", "p", 1, 0), 0.7},
	})
	ids, err := s.IDs(ctx, "bx")
	require.NoError(t, err)
	sort.Strings(ids)
	require.Equal(t, []string{"x1", "x2"}, ids, "every stored chunk of the book, retired included")

	ids, err = s.IDs(ctx, "unknown")
	require.NoError(t, err)
	require.Empty(t, ids)
}

func testGetRoundTrip(t *testing.T, s index.VectorStore) {
	ctx := context.Background()
	zh := chunk("zh-1", "红楼梦", "租户", "第一回", 1, 0)
	zh.HeadingPath = []string{"第一回", "甄士隐梦幻识通灵 贾雨村风尘怀闺秀"}
	zh.Text = "此开卷第一回也。作者自云：\"曾历过一番梦幻之后\"，故将真事隐去——'通灵'之说。\n\t反斜杠 \\ 与 emoji 📖"
	zh.Language = "zh"
	zh.PrintedStart, zh.PrintedEnd = "iv", "v"
	zh.Pages = []citebook.PageSpan{{Offset: 0, Page: 7, Printed: "iv"}, {Offset: 33, Page: 8, Printed: "v"}}
	zh.Groups = []string{"editors", "读者"}

	bare := citebook.Chunk{ID: "bare", BookID: "b", Version: 1, ParentID: "p", Tenant: "t", Text: "x"}

	long := chunk("long", "b", "t", "p", 1, 0)
	// Just under 60 KB: chunks are paragraph-sized, but a store must not
	// truncate a long one (Milvus VarChar holds at most 65535 bytes).
	long.Text = strings.Repeat("长文本 with \"quotes\" ", 2500)
	long.CharEnd = long.CharStart + len(long.Text)

	want := []citebook.Chunk{zh, bare, long}
	require.NoError(t, s.Upsert(ctx, want, [][]float32{Axis(0), Axis(1), Axis(2)}))

	got, err := s.Get(ctx, []string{"long", "zh-1", "bare", "missing"})
	require.NoError(t, err)
	byID := func(a, b citebook.Chunk) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	}
	slices.SortFunc(got, byID)
	slices.SortFunc(want, byID)
	require.Equal(t, want, got)

	got, err = s.Get(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, got)
}

// hostile values are IDs an attacker controls (book titles become IDs, tenants
// come from sign-up) crafted to break out of a query-language string literal.
var hostile = []string{
	`x" or tenant_id != "a`,
	`x' or tenant_id != 'a`,
	`x\" or tenant_id != \"a`,
	`x\\" or tenant_id != "a`,
	`x") or (tenant_id != "a`,
	`x" || book_id like "%`,
	"x\"\n or tenant_id != \"a",
	`trailing\`,
	"nul\x00byte",
	`"`, `'`, `\`, "\n",
	`中文"引号'`,
}

func testEscaping(t *testing.T, s index.VectorStore) {
	ctx := context.Background()
	victim := chunk("victim", "vbook", "a", "vp", 1, 0)
	fx := []fixture{{victim, 0.99}}
	for i, h := range hostile {
		fx = append(fx, fixture{chunk("id-"+h, h, h, h, 1, 0), 0.5 - float64(i)*0.01})
	}
	upsert(t, s, fx)

	for i, h := range hostile {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			own := citebook.Filter{Tenant: h, Books: scope(h, 1)}
			require.Equal(t, []string{"id-" + h}, hitIDs(search(t, s, own, 10)), "exact values match exactly")

			own.DenyParents = []string{h}
			require.Empty(t, search(t, s, own, 10), "a hostile parent is denied")

			require.Empty(t, search(t, s, citebook.Filter{Tenant: "a", Books: scope(h, 1)}, 10), "hostile book must not widen the tenant")
			require.Empty(t, search(t, s, citebook.Filter{Tenant: h, Books: scope("vbook", 1)}, 10), "hostile tenant must not widen")
			require.Equal(t, []string{"victim"}, hitIDs(search(t, s, citebook.Filter{Tenant: "a", Books: scope("vbook", 1), DenyParents: []string{h}}, 10)), "hostile deny must not narrow others")

			ids, err := s.IDs(ctx, h)
			require.NoError(t, err)
			require.Equal(t, []string{"id-" + h}, ids)

			got, err := s.Get(ctx, []string{h, "id-" + h})
			require.NoError(t, err)
			require.Len(t, got, 1)
			require.Equal(t, "id-"+h, got[0].ID)
			require.Equal(t, h, got[0].BookID)
		})
	}

	// Destructive calls with hostile IDs touch nothing they do not name.
	require.NoError(t, s.Delete(ctx, append([]string{`nope" or chunk_id != "nope`}, hostile...)))
	for _, h := range hostile {
		require.NoError(t, s.Retire(ctx, h, []string{"victim", `nope" or chunk_id != "nope`}, 7))
	}
	got, err := s.Get(ctx, []string{"victim"})
	require.NoError(t, err)
	require.Equal(t, []citebook.Chunk{victim}, got)
	all := 0
	for _, h := range append([]string{"vbook"}, hostile...) {
		ids, err := s.IDs(ctx, h)
		require.NoError(t, err)
		all += len(ids)
	}
	require.Equal(t, len(hostile)+1, all, "no chunk was deleted")
}

// corpusChunks cuts real text into chunks: Moby Dick paragraphs (CRLF, BOM,
// dashes, quotes) and CMRC 2018 contexts (Chinese, full-width punctuation),
// heading paths taken from the chapter lines and questions.
func corpusChunks(t *testing.T) []citebook.Chunk {
	raw, err := os.ReadFile(corpus.Path(t, "books/mobydick.txt"))
	require.NoError(t, err)
	var chunks []citebook.Chunk
	chapter := ""
	for i, para := range strings.Split(string(raw), "\r\n\r\n") {
		if strings.HasPrefix(para, "CHAPTER ") {
			chapter = para
			continue
		}
		if chapter == "" || len(chunks) == 60 {
			continue
		}
		c := chunk("moby-"+strconv.Itoa(i), "mobydick", "t", chapter, 1, 0)
		c.HeadingPath, c.Text = []string{chapter}, para
		chunks = append(chunks, c)
	}

	for _, p := range CMRC(t)[:60] {
		c := chunk(p.ID, "cmrc2018", "t", p.ID, 1, 0)
		c.Text, c.Language = p.Context, "zh"
		c.HeadingPath = append(c.HeadingPath, p.Questions...)
		chunks = append(chunks, c)
	}
	require.Greater(t, len(chunks), 100, "corpus yielded too few chunks")
	return chunks
}

// CMRCParagraph is one article of the CMRC 2018 trial set with the
// questions asked about it: the Chinese retrieval fixture of the index
// tests.
type CMRCParagraph struct {
	ID        string
	Context   string
	Questions []string
}

// CMRC loads the 256 CMRC 2018 trial paragraphs in file order, so every
// Chinese retrieval test reads the corpus the same way.
func CMRC(t testing.TB) []CMRCParagraph {
	t.Helper()
	raw, err := os.ReadFile(corpus.Path(t, "cmrc2018/cmrc2018_trial.json"))
	require.NoError(t, err)
	var ds struct {
		Data []struct {
			Paragraphs []struct {
				ID      string `json:"id"`
				Context string `json:"context"`
				QAs     []struct {
					Question string `json:"question"`
				} `json:"qas"`
			} `json:"paragraphs"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(raw, &ds))
	var out []CMRCParagraph
	for _, d := range ds.Data {
		for _, p := range d.Paragraphs {
			cp := CMRCParagraph{ID: p.ID, Context: p.Context}
			for _, q := range p.QAs {
				cp.Questions = append(cp.Questions, q.Question)
			}
			out = append(out, cp)
		}
	}
	require.Len(t, out, 256, "CMRC 2018 trial set")
	return out
}

// textVector derives a deterministic unit vector from a text, standing in for
// an embedding model.
func textVector(text string) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	seed := h.Sum64()
	v := make([]float32, Dim)
	var norm float64
	for i := range v {
		seed = seed*6364136223846793005 + 1442695040888963407
		v[i] = float32(int64(seed>>11)%2000-1000) / 1000
		norm += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	return v
}

func testCorpus(t *testing.T, s index.VectorStore) {
	ctx := context.Background()
	chunks := corpusChunks(t)
	vecs := make([][]float32, len(chunks))
	ids := make([]string, len(chunks))
	for i, c := range chunks {
		vecs[i], ids[i] = textVector(c.Text), c.ID
	}
	require.NoError(t, s.Upsert(ctx, chunks, vecs))

	got, err := s.Get(ctx, ids)
	require.NoError(t, err)
	want := map[string]citebook.Chunk{}
	for _, c := range chunks {
		want[c.ID] = c
	}
	require.Len(t, got, len(chunks))
	for _, c := range got {
		require.Equal(t, want[c.ID], c)
	}

	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "mobydick", Version: 1}, {BookID: "cmrc2018", Version: 1}}}
	for i := 0; i < len(chunks); i += 17 {
		hits, err := s.Search(ctx, vecs[i], f, 3)
		require.NoError(t, err)
		require.Len(t, hits, 3)
		require.Equal(t, chunks[i].ID, hits[0].Chunk.ID, "a chunk's own vector finds it first")
		require.InDelta(t, 1, hits[0].Score, scoreTolerance)
		require.Equal(t, chunks[i], hits[0].Chunk)
	}
}

// testManyBooks searches a shared library of 300 books at mixed versions, as
// an evaluation over one index or a large tenant does: the filter must stay
// a query the store accepts, and still hide what each book's version hides.
func testManyBooks(t *testing.T, s index.VectorStore) {
	const books = 300
	var fx []fixture
	var sc []citebook.BookScope
	for i := 0; i < books; i++ {
		book := "book-" + strconv.Itoa(i)
		v := 1 + i%3
		fx = append(fx,
			fixture{chunk(book+"-served", book, "t", "p", v, 0), 0.5},
			fixture{chunk(book+"-newer", book, "t", "p", v+1, 0), 0.9})
		sc = append(sc, citebook.BookScope{BookID: book, Version: v})
	}
	upsert(t, s, fx)
	hits := search(t, s, citebook.Filter{Tenant: "t", Books: sc}, 2*books)
	require.Len(t, hits, books, "one served chunk per book")
	for _, h := range hits {
		require.True(t, strings.HasSuffix(h.Chunk.ID, "-served"), "chunk %s is newer than its book's served version", h.Chunk.ID)
	}
}

// FilterCase is one access decision a store or index must apply exactly as
// citebook.Filter.Match does.
type FilterCase struct {
	Name   string
	Filter citebook.Filter
}

// FilterCases are the filter shapes every store and index is checked
// against, over chunks of tenants "t" and "u", books "book" (versions 1 and
// 2) and "other", and a parent "secret"; tests compare results with
// Filter.Match over their own fixtures.
func FilterCases() []FilterCase {
	scope := func(bs ...citebook.BookScope) []citebook.BookScope { return bs }
	return []FilterCase{
		{"zero filter", citebook.Filter{}},
		{"tenant without books", citebook.Filter{Tenant: "t"}},
		{"version 1", citebook.Filter{Tenant: "t", Books: scope(citebook.BookScope{BookID: "book", Version: 1})}},
		{"version 2", citebook.Filter{Tenant: "t", Books: scope(citebook.BookScope{BookID: "book", Version: 2})}},
		{"version 0 sees nothing", citebook.Filter{Tenant: "t", Books: scope(citebook.BookScope{BookID: "book", Version: 0})}},
		{"deny parent", citebook.Filter{Tenant: "t", Books: scope(citebook.BookScope{BookID: "book", Version: 1}), DenyParents: []string{"secret"}}},
		{"two books", citebook.Filter{Tenant: "t", Books: scope(citebook.BookScope{BookID: "book", Version: 2}, citebook.BookScope{BookID: "other", Version: 1})}},
		{"book listed twice", citebook.Filter{Tenant: "t", Books: scope(citebook.BookScope{BookID: "book", Version: 1}, citebook.BookScope{BookID: "book", Version: 2})}},
		{"other tenant", citebook.Filter{Tenant: "u", Books: scope(citebook.BookScope{BookID: "book", Version: 1})}},
		{"unknown tenant", citebook.Filter{Tenant: "nobody", Books: scope(citebook.BookScope{BookID: "book", Version: 9})}},
	}
}
