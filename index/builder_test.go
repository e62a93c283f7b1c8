package index_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/embedder"
	"github.com/citebook/citebook/index/lexical"
	"github.com/citebook/citebook/index/memstore"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/dbtest"
)

// chunking gives the small test books enough chunks for several batches.
var chunking = ingest.ChunkOptions{MinTokens: 20, MaxTokens: 60}

// newEmbedder returns the builtin embedder the tests index with.
func newEmbedder(t testing.TB) index.Embedder {
	t.Helper()
	e, err := embedder.New(embedder.Config{Provider: "builtin"})
	require.NoError(t, err)
	return e
}

// storeFactory opens an empty vector store for one test; the suite runs
// against every store implementation.
type storeFactory func(t *testing.T, dim int) index.VectorStore

func TestBuilderEmbedded(t *testing.T) {
	runBuilderSuite(t, func(t *testing.T, _ int) index.VectorStore {
		s, err := memstore.Open(context.Background(), t.TempDir())
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestBuilderPostgres runs the suite with its metadata on PostgreSQL (the
// embedded vector store beside it): the builder behaves the same on either
// database. Required in CI, skipped locally without CITEBOOK_TEST_POSTGRES.
func TestBuilderPostgres(t *testing.T) {
	runSuite(t, func(t *testing.T, _ int) index.VectorStore {
		s, err := memstore.Open(context.Background(), t.TempDir())
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}, func(t *testing.T, _ string) string { return dbtest.DSN(t) })
}

// env is one library under test: real metadata DB, vector store, lexical
// index and builtin embedder.
type env struct {
	meta *metadb.DB
	vec  index.VectorStore
	lex  index.LexicalIndex
	emb  *flakyEmbedder
	dir  string
}

// metaTarget names the metadata database of a test's library in dir.
type metaTarget func(t *testing.T, dir string) string

func sqliteIn(_ *testing.T, dir string) string { return filepath.Join(dir, "citebook.db") }

func newEnv(t *testing.T, newStore storeFactory) *env { return newEnvOn(t, newStore, sqliteIn) }

func newEnvOn(t *testing.T, newStore storeFactory, target metaTarget) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	meta, err := metadb.Open(ctx, target(t, dir))
	require.NoError(t, err)
	t.Cleanup(func() { meta.Close() })
	lex, err := lexical.Open(ctx, filepath.Join(dir, "lexical"))
	require.NoError(t, err)
	t.Cleanup(func() { lex.Close() })
	emb := &flakyEmbedder{inner: newEmbedder(t), failAfter: -1}
	return &env{meta: meta, vec: newStore(t, emb.Version().Dimension), lex: lex, emb: emb, dir: dir}
}

// queue is the library's shared job queue.
func (e *env) queue() index.Queue { return e.meta }

func (e *env) builder(opt index.BuilderOptions) *index.Builder {
	opt.Chunking = chunking
	if opt.BatchSize == 0 {
		opt.BatchSize = 4
	}
	opt.RetryDelay = time.Millisecond
	return index.NewBuilder(e.meta, e.vec, e.lex, e.emb, opt)
}

// flakyEmbedder wraps the builtin embedder: it fails every call after the
// first failAfter calls (never when negative), counts embedded texts and
// can claim another model version.
type flakyEmbedder struct {
	inner     index.Embedder
	mu        sync.Mutex
	calls     int
	failAfter int
	texts     int
	version   *citebook.EmbeddingVersion
}

func (f *flakyEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	f.calls++
	fail := f.failAfter >= 0 && f.calls > f.failAfter
	if !fail {
		f.texts += len(texts)
	}
	f.mu.Unlock()
	if fail {
		return nil, errors.New("connection refused: embedder down")
	}
	return f.inner.EmbedDocuments(ctx, texts)
}

func (f *flakyEmbedder) Version() citebook.EmbeddingVersion {
	if f.version != nil {
		return *f.version
	}
	return f.inner.Version()
}

// reset clears the counters and sets when to fail.
func (f *flakyEmbedder) reset(failAfter int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls, f.texts, f.failAfter = 0, 0, failAfter
}

func (f *flakyEmbedder) embedded() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.texts
}

// chunkIDs parses and splits a file the way the builder does.
func chunkIDs(t *testing.T, path, bookID string) []string {
	t.Helper()
	doc, err := ingest.ParseFile(context.Background(), path)
	require.NoError(t, err)
	tok, err := ingest.NewTokenizer()
	require.NoError(t, err)
	_, cs := ingest.Split(doc, bookID, tok, chunking)
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	slices.Sort(ids)
	return ids
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func sorted(ids []string, err error) func(t *testing.T) []string {
	return func(t *testing.T) []string {
		require.NoError(t, err)
		ids = slices.Clone(ids)
		slices.Sort(ids)
		return ids
	}
}

// stored returns the sorted IDs the metadata (served version), the vector
// store and the lexical index hold for a book.
func (e *env) stored(t *testing.T, bookID string) (meta, vec, lex []string) {
	t.Helper()
	ctx := context.Background()
	b, err := e.meta.Book(ctx, bookID)
	require.NoError(t, err)
	meta = sorted(e.meta.ChunkIDs(ctx, bookID, b.Active))(t)
	vec = sorted(e.vec.IDs(ctx, bookID))(t)
	lex = sorted(e.lex.IDs(ctx, bookID))(t)
	return meta, vec, lex
}

// visible returns the sorted IDs a reader of version v of the book finds
// through each store's filtered search.
func (e *env) visible(t *testing.T, tenant, bookID string, v int, query string) (vec, lex []string) {
	t.Helper()
	ctx := context.Background()
	f := citebook.Filter{Tenant: tenant, Books: []citebook.BookScope{{BookID: bookID, Version: v}}}
	qv, err := e.emb.inner.EmbedDocuments(ctx, []string{query})
	require.NoError(t, err)
	hits, err := e.vec.Search(ctx, qv[0], f, 10000)
	require.NoError(t, err)
	for _, h := range hits {
		vec = append(vec, h.Chunk.ID)
	}
	lh, err := e.lex.Search(ctx, query, f, f, 10000)
	require.NoError(t, err)
	for _, h := range lh {
		lex = append(lex, h.Chunk.ID)
	}
	slices.Sort(vec)
	slices.Sort(lex)
	return vec, lex
}

// writeBook writes a variant of the Markdown fixture into dir.
func writeBook(t *testing.T, dir, name string, edit func(string) string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "field-guide.md"))
	require.NoError(t, err)
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(edit(string(src))), 0o644))
	return p
}

func same(s string) string { return s }

// secondEdition changes one paragraph and drops the last two sections, so
// the new version is shorter than the first.
func secondEdition(s string) string {
	s = strings.Replace(s, "within the last three days", "within the last four days", 1)
	return s[:strings.Index(s, "## Winter Preparation")]
}

// revised changes every paragraph.
func revised(s string) string {
	return strings.ReplaceAll(s, ".\n", ". Revised for the second edition.\n")
}

func runBuilderSuite(t *testing.T, newStore storeFactory) { runSuite(t, newStore, sqliteIn) }

func runSuite(t *testing.T, newStore storeFactory, target metaTarget) {
	tests := []struct {
		name string
		fn   func(t *testing.T, e *env)
	}{
		{"Idempotent", testIdempotent},
		{"ChangedBook", testChangedBook},
		{"AtomicSwitch", testAtomicSwitch},
		{"FailureAndResume", testFailureAndResume},
		{"RebuildAfterFailure", testRebuildAfterFailure},
		{"VerifyRepair", testVerifyRepair},
		{"EmbeddingVersion", testEmbeddingVersion},
		{"AccessChange", testAccessChange},
		{"Delete", testDelete},
		{"ParsingRevision", testParsingRevision},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newEnvOn(t, newStore, target)) })
	}
}

// testParsingRevision: an unchanged file is parsed again once the parsing
// rules change (ingest.Revision), kept unchanged when its chunks come out
// the same, and rebuilt when they do not.
func testParsingRevision(t *testing.T, e *env) {
	ctx := context.Background()
	md := writeBook(t, e.dir, "guide.md", same)
	in := index.BookInput{BookID: "guide", Tenant: "acme", Path: md}
	parsed := 0
	builder := func(revision string, edit func(*ingest.Document)) *index.Builder {
		return e.builder(index.BuilderOptions{Revision: revision, Parse: func(ctx context.Context, path string) (*ingest.Document, error) {
			parsed++
			doc, err := ingest.ParseFile(ctx, path)
			if err == nil && edit != nil {
				edit(doc)
			}
			return doc, err
		}})
	}
	first, err := builder("r1", nil).Index(ctx, in)
	require.NoError(t, err)
	require.Equal(t, "completed", first.Status)
	require.Equal(t, 1, parsed)

	_, err = builder("r1", nil).Index(ctx, in)
	require.NoError(t, err)
	require.Equal(t, 1, parsed, "same bytes, same rules: not parsed again")

	e.emb.reset(-1)
	same, err := builder("r2", nil).Index(ctx, in)
	require.NoError(t, err)
	require.Equal(t, 2, parsed, "new rules: parsed again")
	require.True(t, same.Unchanged, "same chunks under the new rules")
	require.Zero(t, e.emb.embedded())
	_, err = builder("r2", nil).Index(ctx, in)
	require.NoError(t, err)
	require.Equal(t, 2, parsed, "the new rules' hash was recorded")

	// Rules that drop the last section give other chunks: a new version.
	changed, err := builder("r3", func(d *ingest.Document) { d.Sections = d.Sections[:len(d.Sections)-1] }).Index(ctx, in)
	require.NoError(t, err)
	require.Equal(t, 3, parsed)
	require.Equal(t, "completed", changed.Status)
	require.Equal(t, 2, changed.Version)
}

func testIdempotent(t *testing.T, e *env) {
	ctx := context.Background()
	b := e.builder(index.BuilderOptions{BatchSize: 16})
	pdf := corpus.Path(t, "books/dtc-paper.pdf")
	md := writeBook(t, e.dir, "guide.md", same)
	want := chunkIDs(t, pdf, "dtc")

	for _, in := range []index.BookInput{
		{BookID: "dtc", Tenant: "acme", Path: pdf},
		{BookID: "guide", Tenant: "acme", Path: md},
	} {
		first, err := b.Index(ctx, in)
		require.NoError(t, err)
		require.Equal(t, "completed", first.Status)
		require.Equal(t, 1, first.Version)
		require.NotZero(t, first.JobID)
		require.Equal(t, first.Chunks, first.Embedded)
		require.Equal(t, first.Chunks, first.Upserted)

		e.emb.reset(-1)
		second, err := b.Index(ctx, in)
		require.NoError(t, err)
		require.Equal(t, &index.JobResult{BookID: in.BookID, Version: 1, Status: "unchanged", Chunks: first.Chunks, Unchanged: true}, second)
		require.Zero(t, e.emb.embedded())
		vs, err := e.meta.Versions(ctx, in.BookID)
		require.NoError(t, err)
		require.Len(t, vs, 1, "an unchanged book writes no version")
	}
	meta, vec, lex := e.stored(t, "dtc")
	require.Equal(t, want, meta)
	require.Equal(t, want, vec)
	require.Equal(t, want, lex)
	book, err := e.meta.Book(ctx, "dtc")
	require.NoError(t, err)
	require.Equal(t, citebook.FormatPDF, book.Format)
	require.Equal(t, 7, book.Pages)

	// Different bytes, same content: parsed, found unchanged, not embedded.
	touched := writeBook(t, e.dir, "guide.md", func(s string) string { return s + "\n\n\n" })
	res, err := b.Index(ctx, index.BookInput{BookID: "guide", Tenant: "acme", Path: touched})
	require.NoError(t, err)
	require.True(t, res.Unchanged)
	require.Zero(t, e.emb.embedded())
}

func testChangedBook(t *testing.T, e *env) {
	ctx := context.Background()
	b := e.builder(index.BuilderOptions{})
	v1 := writeBook(t, e.dir, "v1.md", same)
	v2 := writeBook(t, e.dir, "v2.md", secondEdition)
	ids1, ids2 := chunkIDs(t, v1, "guide"), chunkIDs(t, v2, "guide")
	added, removed := minus(ids2, ids1), minus(ids1, ids2)
	require.NotEmpty(t, added)
	require.NotEmpty(t, removed)
	t.Logf("version 1: %d chunks, version 2: %d (%d new, %d removed)", len(ids1), len(ids2), len(added), len(removed))

	_, err := b.Index(ctx, index.BookInput{BookID: "guide", Tenant: "acme", Path: v1})
	require.NoError(t, err)
	e.emb.reset(-1)
	res, err := b.Index(ctx, index.BookInput{BookID: "guide", Tenant: "acme", Path: v2})
	require.NoError(t, err)
	require.Equal(t, "completed", res.Status)
	require.Equal(t, 2, res.Version)
	require.Equal(t, len(ids2), res.Chunks)
	require.Equal(t, len(added), res.Embedded, "only changed chunks are embedded")
	require.Equal(t, len(added), res.Upserted)
	require.Equal(t, len(added), e.emb.embedded())
	require.Equal(t, len(removed), res.Deleted)

	meta, vec, lex := e.stored(t, "guide")
	require.Equal(t, ids2, meta)
	require.Equal(t, ids2, vec, "no tail of version 1 left in the vector store")
	require.Equal(t, ids2, lex, "no tail of version 1 left in the lexical index")
	sv, sl := e.visible(t, "acme", "guide", 2, "eggs queen laying days")
	require.Equal(t, ids2, sv)
	require.Subset(t, ids2, sl)
	got, err := e.vec.Get(ctx, ids2)
	require.NoError(t, err)
	for _, c := range got {
		require.True(t, c.VisibleIn(2), "chunk %s version %d retired %d", c.ID, c.Version, c.Retired)
	}
	cs, err := e.meta.ChunksByID(ctx, ids2)
	require.NoError(t, err)
	require.Len(t, cs, len(ids2))
}

// hookMeta runs a check just before the real Activate.
type hookMeta struct {
	index.Meta
	before func(bookID string, version int)
}

func (h hookMeta) Activate(ctx context.Context, bookID string, version int) error {
	h.before(bookID, version)
	return h.Meta.Activate(ctx, bookID, version)
}

func testAtomicSwitch(t *testing.T, e *env) {
	ctx := context.Background()
	v1 := writeBook(t, e.dir, "v1.md", same)
	v2 := writeBook(t, e.dir, "v2.md", secondEdition)
	ids1, ids2 := chunkIDs(t, v1, "guide"), chunkIDs(t, v2, "guide")
	_, err := e.builder(index.BuilderOptions{}).Index(ctx, index.BookInput{BookID: "guide", Tenant: "acme", Path: v1})
	require.NoError(t, err)

	checked := false
	hooked := index.NewBuilder(hookMeta{Meta: e.meta, before: func(bookID string, version int) {
		checked = true
		require.Equal(t, 2, version)
		book, err := e.meta.Book(ctx, bookID)
		require.NoError(t, err)
		require.Equal(t, 1, book.Active)
		vec, lex := e.visible(t, "acme", bookID, book.Active, "four days winter records")
		require.Equal(t, ids1, vec, "readers of the active version see exactly version 1 until the switch")
		require.Subset(t, ids1, lex)
		for _, id := range minus(ids2, ids1) {
			require.NotContains(t, lex, id)
		}
		served, err := e.meta.ChunkIDs(ctx, bookID, book.Active)
		require.NoError(t, err)
		require.ElementsMatch(t, ids1, served)
	}}, e.vec, e.lex, e.emb, index.BuilderOptions{Chunking: chunking, BatchSize: 4})
	_, err = hooked.Index(ctx, index.BookInput{BookID: "guide", Tenant: "acme", Path: v2})
	require.NoError(t, err)
	require.True(t, checked)

	vec, _ := e.visible(t, "acme", "guide", 2, "four days")
	require.Equal(t, ids2, vec)
}

func testFailureAndResume(t *testing.T, e *env) {
	ctx := context.Background()
	b := e.builder(index.BuilderOptions{BatchSize: 4, Attempts: 2})
	v1 := writeBook(t, e.dir, "v1.md", same)
	v2 := writeBook(t, e.dir, "v2.md", revised)
	ids1, ids2 := chunkIDs(t, v1, "guide"), chunkIDs(t, v2, "guide")
	added := minus(ids2, ids1)
	require.Greater(t, len(added), 8, "the revision needs at least three batches")
	_, err := b.Index(ctx, index.BookInput{BookID: "guide", Tenant: "acme", Path: v1})
	require.NoError(t, err)

	e.emb.reset(1) // batch 1 embeds, batch 2 fails
	in := index.BookInput{BookID: "guide", Tenant: "acme", Path: v2}
	res, err := b.Index(ctx, in)
	require.Error(t, err)
	require.Equal(t, citebook.EUNAVAILABLE, citebook.ErrorCode(err))
	require.Equal(t, "failed", res.Status)
	require.Equal(t, 2, res.Version)
	require.Equal(t, 4, res.Embedded)

	book, err := e.meta.Book(ctx, "guide")
	require.NoError(t, err)
	require.Equal(t, 1, book.Active, "the previous version stays served")
	vs, err := e.meta.Versions(ctx, "guide")
	require.NoError(t, err)
	require.Equal(t, citebook.VersionFailed, vs[1].Status)
	require.Contains(t, vs[1].Error, "embedder down")
	vec, _ := e.visible(t, "acme", "guide", 1, "bees")
	require.Equal(t, ids1, vec)

	jobs, err := e.meta.Jobs(ctx, "guide")
	require.NoError(t, err)
	require.Equal(t, index.JobFailed, jobs[0].Status)
	require.Contains(t, jobs[0].Error, "embedder down")
	batches, err := e.meta.Batches(ctx, jobs[0].ID)
	require.NoError(t, err)
	require.Equal(t, (len(added)+3)/4, len(batches))
	require.Equal(t, index.BatchDone, batches[0].Status)
	require.Equal(t, 1, batches[0].Attempts)
	require.Equal(t, index.BatchFailed, batches[1].Status)
	require.Equal(t, 2, batches[1].Attempts)
	require.Contains(t, batches[1].Error, "embedder down")
	require.Equal(t, index.BatchPending, batches[2].Status)

	e.emb.reset(-1)
	in.Resume = true
	res, err = b.Index(ctx, in)
	require.NoError(t, err)
	require.Equal(t, "completed", res.Status)
	require.Equal(t, 2, res.Version, "resume finishes the failed version")
	require.Equal(t, len(added)-4, res.Embedded, "batch 1 is not embedded again")
	require.Equal(t, len(added)-4, e.emb.embedded())
	meta, vecIDs, lex := e.stored(t, "guide")
	require.Equal(t, ids2, meta)
	require.Equal(t, ids2, vecIDs)
	require.Equal(t, ids2, lex)
}

func testRebuildAfterFailure(t *testing.T, e *env) {
	ctx := context.Background()
	b := e.builder(index.BuilderOptions{BatchSize: 4, Attempts: 1})
	v1 := writeBook(t, e.dir, "v1.md", same)
	v2 := writeBook(t, e.dir, "v2.md", revised)
	v3 := writeBook(t, e.dir, "v3.md", secondEdition)
	ids3 := chunkIDs(t, v3, "guide")
	_, err := b.Index(ctx, index.BookInput{BookID: "guide", Tenant: "acme", Path: v1})
	require.NoError(t, err)
	e.emb.reset(2)
	_, err = b.Index(ctx, index.BookInput{BookID: "guide", Tenant: "acme", Path: v2})
	require.Error(t, err)

	// A different edition cannot resume the failed build: it is abandoned
	// and what it wrote is removed.
	e.emb.reset(-1)
	res, err := b.Index(ctx, index.BookInput{BookID: "guide", Tenant: "acme", Path: v3, Resume: true})
	require.NoError(t, err)
	require.Equal(t, 3, res.Version)
	meta, vec, lex := e.stored(t, "guide")
	require.Equal(t, ids3, meta)
	require.Equal(t, ids3, vec, "chunks of the failed build are gone")
	require.Equal(t, ids3, lex)
	sv, _ := e.visible(t, "acme", "guide", 3, "bees")
	require.Equal(t, ids3, sv)
}

func testVerifyRepair(t *testing.T, e *env) {
	ctx := context.Background()
	b := e.builder(index.BuilderOptions{BatchSize: 32})
	pdf := corpus.Path(t, "books/dtc-paper.pdf")
	_, err := b.Index(ctx, index.BookInput{BookID: "dtc", Tenant: "acme", Path: pdf})
	require.NoError(t, err)
	want, _, _ := e.stored(t, "dtc")
	require.Greater(t, len(want), 4)

	rep, err := b.Verify(ctx, "dtc", false)
	require.NoError(t, err)
	require.True(t, rep.OK())
	require.Equal(t, len(want), rep.Expected)

	lost := []string{want[0], want[3]}
	require.NoError(t, e.vec.Delete(ctx, lost))
	require.NoError(t, e.lex.Delete(ctx, want[1:2]))
	stray := citebook.Chunk{ID: "stray", BookID: "dtc", Tenant: "acme", Version: 1, ParentID: "p", Text: "stray text"}
	sv, err := e.emb.EmbedDocuments(ctx, []string{stray.Text})
	require.NoError(t, err)
	require.NoError(t, e.vec.Upsert(ctx, []citebook.Chunk{stray}, sv))

	rep, err = b.Verify(ctx, "dtc", false)
	require.NoError(t, err)
	require.False(t, rep.OK())
	require.Equal(t, index.Drift{Missing: lost, Extra: []string{"stray"}}, rep.Vector)
	require.Equal(t, index.Drift{Missing: want[1:2]}, rep.Lexical)
	require.False(t, rep.Repaired)

	rep, err = b.Verify(ctx, "dtc", true)
	require.NoError(t, err)
	require.True(t, rep.Repaired)
	rep, err = b.Verify(ctx, "dtc", false)
	require.NoError(t, err)
	require.True(t, rep.OK(), "%+v", rep)
	_, vec, lex := e.stored(t, "dtc")
	require.Equal(t, want, vec)
	require.Equal(t, want, lex)
	vis, _ := e.visible(t, "acme", "dtc", 1, "device tree")
	require.Equal(t, want, vis)
}

func testEmbeddingVersion(t *testing.T, e *env) {
	ctx := context.Background()
	md := writeBook(t, e.dir, "guide.md", same)
	in := index.BookInput{BookID: "guide", Tenant: "acme", Path: md}
	first, err := e.builder(index.BuilderOptions{}).Index(ctx, in)
	require.NoError(t, err)

	other := e.emb.inner.Version()
	other.Model += "-v2"
	e.emb.version = &other
	_, err = e.builder(index.BuilderOptions{}).Index(ctx, in)
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
	require.Contains(t, citebook.ErrorMessage(err), "reembed")

	e.emb.reset(-1)
	res, err := e.builder(index.BuilderOptions{Reembed: true}).Index(ctx, in)
	require.NoError(t, err)
	require.Equal(t, 2, res.Version)
	require.Equal(t, first.Chunks, res.Embedded, "every chunk is embedded again")
	lib, ok, err := e.meta.EmbeddingVersion(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, other, lib)
	res, err = e.builder(index.BuilderOptions{}).Index(ctx, in)
	require.NoError(t, err)
	require.True(t, res.Unchanged)
}

func testAccessChange(t *testing.T, e *env) {
	ctx := context.Background()
	b := e.builder(index.BuilderOptions{})
	md := writeBook(t, e.dir, "guide.md", same)
	first, err := b.Index(ctx, index.BookInput{BookID: "guide", Tenant: "acme", Path: md})
	require.NoError(t, err)

	res, err := b.Index(ctx, index.BookInput{BookID: "guide", Tenant: "acme", Path: md, Groups: []string{"keepers", "admins"}})
	require.NoError(t, err)
	require.Equal(t, 2, res.Version)
	require.Equal(t, first.Chunks, res.Upserted, "new groups are written to every chunk")
	require.Zero(t, res.Deleted)
	ids, vec, _ := e.stored(t, "guide")
	require.Equal(t, ids, vec)
	got, err := e.vec.Get(ctx, ids)
	require.NoError(t, err)
	for _, c := range got {
		require.Equal(t, []string{"admins", "keepers"}, c.Groups)
	}
	same, err := b.Index(ctx, index.BookInput{BookID: "guide", Tenant: "acme", Path: md, Groups: []string{"admins", "keepers"}})
	require.NoError(t, err)
	require.True(t, same.Unchanged, "group order is not a change")

	_, err = b.Index(ctx, index.BookInput{BookID: "guide", Tenant: "other", Path: md})
	require.Equal(t, citebook.ECONFLICT, citebook.ErrorCode(err))
}
