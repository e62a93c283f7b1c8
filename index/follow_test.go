package index_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/internal/library"
	"github.com/citebook/citebook/internal/testlib"
)

// openHandle is one process's view of a library directory, opened as the
// binary opens it: its own metadata connection, its own in-memory stores
// over the same files, and its own follower (not running until a test
// runs it).
func openHandle(t *testing.T, dir string) *library.Library {
	t.Helper()
	return testlib.Open(t, testlib.Config(dir))
}

// builder is a builder over the handle's stores with the tests' small chunks.
func builder(h *library.Library) *index.Builder {
	return index.NewBuilder(h.Meta, h.Vectors, h.Lexical, h.Embed, index.BuilderOptions{Chunking: chunking, Logger: quiet()})
}

// TestFollowerReloadsOtherHandlesChanges: a book indexed, re-indexed and
// deleted through one handle (the CLI) reaches the other handle's memory
// (the server) by polling alone, and a handle's own changes cost no reload.
func TestFollowerReloadsOtherHandlesChanges(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	server := openHandle(t, dir)
	cli := openHandle(t, dir)
	go server.Follow.Run(ctx, 100*time.Millisecond)

	build := builder(cli)
	paths := [2]string{bookFile(t, t.TempDir(), "a.md"), bookFile(t, t.TempDir(), "b.md")}
	memory := func() (vec, lex []string) {
		vec, err := server.Vectors.IDs(ctx, "guide")
		require.NoError(t, err)
		lex, err = server.Lexical.IDs(ctx, "guide")
		require.NoError(t, err)
		return vec, lex
	}
	for i, p := range paths {
		t0 := time.Now()
		res, err := build.Index(ctx, citebook.BookInput{BookID: "guide", Tenant: "acme", Path: p})
		require.NoError(t, err)
		want, err := cli.Meta.ChunkIDs(ctx, "guide", res.Version)
		require.NoError(t, err)
		slices.Sort(want)
		require.Eventually(t, func() bool {
			vec, lex := memory()
			return slices.Equal(want, vec) && slices.Equal(want, lex)
		}, 2*time.Second, 10*time.Millisecond, "edition %d reached the server's memory", i)
		t.Logf("edition %d in the other handle's memory %s after the build returned", i, time.Since(t0).Round(time.Millisecond))
	}
	require.NoError(t, build.Delete(ctx, "guide"))
	require.Eventually(t, func() bool { vec, lex := memory(); return len(vec)+len(lex) == 0 },
		2*time.Second, 10*time.Millisecond, "a deletion reaches the server's memory")

	// The server's own change is in its memory already: nothing to reload.
	ch, err := server.Meta.Changes(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"guide"}, ch.Books)
	own := builder(server)
	_, err = own.Index(ctx, citebook.BookInput{BookID: "mine", Tenant: "acme", Path: paths[0]})
	require.NoError(t, err)
	next, err := server.Meta.Changes(ctx, ch.Gen)
	require.NoError(t, err)
	require.Greater(t, next.Gen, ch.Gen)
	require.Empty(t, next.Books, "own changes are not reported back")
	other, err := cli.Meta.Changes(ctx, ch.Gen)
	require.NoError(t, err)
	require.Equal(t, []string{"mine"}, other.Books)
}

// TestSnapshotIgnoresOtherProcessWrites: a store whose file another
// process wrote must not save its memory as a snapshot of the file's
// generation on Close — its memory lacks those writes, and the next start
// would load the snapshot and never see the book.
func TestSnapshotIgnoresOtherProcessWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := testlib.Config(dir)
	server := testlib.OpenShared(t, cfg) // following nothing
	_, err := builder(server).Index(ctx, citebook.BookInput{BookID: "first", Tenant: "acme", Path: bookFile(t, t.TempDir(), "first.md")})
	require.NoError(t, err)

	cli := testlib.OpenShared(t, cfg) // the CLI adds a book meanwhile
	res, err := builder(cli).Index(ctx, citebook.BookInput{BookID: "second", Tenant: "acme", Path: bookFile(t, t.TempDir(), "second.md")})
	require.NoError(t, err)
	require.NoError(t, cli.Close())
	// The server stops last, its memory without the CLI's book.
	require.NoError(t, server.Close())

	after := testlib.Open(t, cfg)
	meta, vec, lex := after.Meta, after.Vectors, after.Lexical
	want, err := meta.ChunkIDs(ctx, "second", res.Version)
	require.NoError(t, err)
	slices.Sort(want)
	got, err := vec.IDs(ctx, "second")
	require.NoError(t, err)
	require.Equal(t, want, got, "vector store after restart")
	got, err = lex.IDs(ctx, "second")
	require.NoError(t, err)
	require.Equal(t, want, got, "lexical index after restart")
}

// scriptedLog is a change log whose generation and chunk rows the test
// sets, counting the lifespan queries.
type scriptedLog struct {
	mu      sync.Mutex
	gen     int64
	spans   map[string][]index.Lifespan
	queries int
}

func (l *scriptedLog) Changes(_ context.Context, since int64) (index.Changes, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return index.Changes{Gen: max(l.gen, since)}, nil
}

func (l *scriptedLog) ChunkLifespans(_ context.Context, ids []string) (map[string][]index.Lifespan, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queries++
	out := map[string][]index.Lifespan{}
	for _, id := range ids {
		if s, ok := l.spans[id]; ok {
			out[id] = slices.Clone(s)
		}
	}
	return out, nil
}

// TestVisibleCachesLifespansUntilTheNextChange: repeated searches over the
// same chunks cost no metadata query, and a logged change (a switch that
// retires a chunk) is honoured by the next search after its sync.
func TestVisibleCachesLifespansUntilTheNextChange(t *testing.T) {
	ctx := context.Background()
	log := &scriptedLog{gen: 7, spans: map[string][]index.Lifespan{
		"a": {{BookID: "b", Version: 1}},
		"b": {{BookID: "b", Version: 1}},
	}}
	f, err := index.NewFollower(ctx, log, quiet())
	require.NoError(t, err)
	hits := []citebook.Hit{{Chunk: citebook.Chunk{ID: "a", BookID: "b"}}, {Chunk: citebook.Chunk{ID: "b", BookID: "b"}},
		{Chunk: citebook.Chunk{ID: "gone", BookID: "b"}}}
	v1 := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}
	v2 := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 2}}}
	ids := func(hs []citebook.Hit) (out []string) {
		for _, h := range hs {
			out = append(out, h.Chunk.ID)
		}
		return out
	}
	search := func(flt citebook.Filter) []string {
		require.NoError(t, f.Sync(ctx))
		got, err := f.Visible(ctx, slices.Clone(hits), flt)
		require.NoError(t, err)
		return ids(got)
	}
	require.Equal(t, []string{"a", "b"}, search(v1))
	require.Equal(t, []string{"a", "b"}, search(v1))
	require.Equal(t, 1, log.queries, "the second search is answered from the cache, the unknown chunk included")

	// Version 2 retires "a" and adds "c"; the switch logs a change.
	log.mu.Lock()
	log.spans["a"] = []index.Lifespan{{BookID: "b", Version: 1, Retired: 2}}
	log.spans["c"] = []index.Lifespan{{BookID: "b", Version: 2}}
	log.gen++
	log.mu.Unlock()
	hits = append(hits, citebook.Hit{Chunk: citebook.Chunk{ID: "c", BookID: "b"}})
	require.Equal(t, []string{"b", "c"}, search(v2))
	require.Equal(t, []string{"a", "b"}, search(v1), "a filter resolved before the switch still sees its version")
	require.Equal(t, 2, log.queries)
}

// TestSyncCoalesces: many concurrent searches share sync queries, and each
// still returns only after a sync that began after it was called.
func TestSyncCoalesces(t *testing.T) {
	ctx := context.Background()
	log := &countingLog{scriptedLog: scriptedLog{gen: 1}}
	f, err := index.NewFollower(ctx, log, quiet())
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			called := log.calls.Load()
			require.NoError(t, f.Sync(ctx))
			require.Greater(t, log.calls.Load(), called, "a sync query began after the call")
		}()
	}
	wg.Wait()
	t.Logf("64 concurrent syncs made %d queries", log.calls.Load()-1)
}

type countingLog struct {
	scriptedLog
	calls atomic.Int64
}

func (l *countingLog) Changes(ctx context.Context, since int64) (index.Changes, error) {
	l.calls.Add(1)
	time.Sleep(time.Millisecond)
	return l.scriptedLog.Changes(ctx, since)
}

// fixedVectors is a vector store returning the same hits for every search.
type fixedVectors struct {
	index.VectorStore
	hits []citebook.Hit
}

func (v fixedVectors) Search(context.Context, []float32, citebook.Filter, int) ([]citebook.Hit, error) {
	return slices.Clone(v.hits), nil
}

// TestBeginSyncsOncePerQuestion: the searches of a question begun with
// Begin share its sync and still drop what a change logged before the
// question began retired; a search outside a question syncs itself.
func TestBeginSyncsOncePerQuestion(t *testing.T) {
	ctx := context.Background()
	log := &countingLog{scriptedLog: scriptedLog{gen: 1, spans: map[string][]index.Lifespan{
		"a": {{BookID: "b", Version: 1}}, "b": {{BookID: "b", Version: 1}}}}}
	f, err := index.NewFollower(ctx, log, quiet())
	require.NoError(t, err)
	vs := index.FreshVectors{VectorStore: fixedVectors{hits: []citebook.Hit{{Chunk: citebook.Chunk{ID: "a", BookID: "b"}},
		{Chunk: citebook.Chunk{ID: "b", BookID: "b"}}}}, F: f}
	v1 := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}
	search := func(ctx context.Context) []string {
		hits, err := vs.Search(ctx, nil, v1, 10)
		require.NoError(t, err)
		var out []string
		for _, h := range hits {
			out = append(out, h.Chunk.ID)
		}
		return out
	}
	calls := log.calls.Load()
	qctx, err := f.Begin(ctx)
	require.NoError(t, err)
	for range 5 {
		require.Equal(t, []string{"a", "b"}, search(qctx))
	}
	require.Equal(t, calls+1, log.calls.Load(), "one sync for the question's five searches")

	// Another process retires "a" (a logged change); the next question
	// sees it, and so does a search outside any question.
	log.mu.Lock()
	log.spans["a"] = []index.Lifespan{{BookID: "b", Version: 1, Retired: 1}}
	log.gen++
	log.mu.Unlock()
	qctx, err = f.Begin(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"b"}, search(qctx))
	calls = log.calls.Load()
	require.Equal(t, []string{"b"}, search(ctx))
	require.Equal(t, calls+1, log.calls.Load(), "a search outside a question syncs")
}

// TestVisibleByRowRef: hits carrying their stores' row handles are checked
// against the lifespans of the chunk they hold, as hits without do: two
// stores' equal row numbers stay apart, a logged change is honoured by the
// next search, and a row that holds another chunk after its store changed
// (a new RowOwner) is not given the old chunk's lifespans; the tables of
// old owners are dropped.
func TestVisibleByRowRef(t *testing.T) {
	ctx := context.Background()
	log := &scriptedLog{gen: 7, spans: map[string][]index.Lifespan{
		"a": {{BookID: "b", Version: 1}},
		"b": {{BookID: "b", Version: 1}},
	}}
	f, err := index.NewFollower(ctx, log, quiet())
	require.NoError(t, err)
	vec, lex := new(citebook.RowOwner), new(citebook.RowOwner)   // two stores
	vec2, lex2 := new(citebook.RowOwner), new(citebook.RowOwner) // after a change
	hit := func(id string, store *citebook.RowOwner, row int32) citebook.Hit {
		return citebook.Hit{Chunk: citebook.Chunk{ID: id, BookID: "b"}, Ref: citebook.RowRef{Owner: store, Row: row}}
	}
	v1 := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}
	v2 := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 2}}}
	search := func(flt citebook.Filter, hits ...citebook.Hit) (out []string) {
		t.Helper()
		require.NoError(t, f.Sync(ctx))
		got, err := f.Visible(ctx, hits, flt)
		require.NoError(t, err)
		for _, h := range got {
			out = append(out, h.Chunk.ID)
		}
		return out
	}
	first := []citebook.Hit{hit("a", vec, 0), hit("b", vec, 1), hit("b", lex, 0), hit("gone", lex, 1)}
	for range 3 {
		require.Equal(t, []string{"a", "b", "b"}, search(v1, first...))
	}
	require.Equal(t, 1, log.queries, "answered from the cache")
	// Row 0 of the vectors holds "gone" after a change, row 1 of the
	// lexical index "a": each is its own chunk, not the row's old one.
	for range 2 {
		require.Equal(t, []string{"a"}, search(v1, hit("gone", vec2, 0), hit("a", lex2, 1)))
	}
	require.Equal(t, []string{"a", "b", "b"}, search(v1, first...), "hits of the old owners")
	// Many changes later the first owners' tables are gone; their hits are
	// checked by chunk ID.
	for i := range 2 * 4 {
		require.Equal(t, []string{"b"}, search(v1, hit("b", new(citebook.RowOwner), int32(i))))
	}
	require.Equal(t, []string{"a", "b", "b"}, search(v1, first...))

	// Version 2 retires "a"; the switch logs a change.
	log.mu.Lock()
	log.spans["a"] = []index.Lifespan{{BookID: "b", Version: 1, Retired: 2}}
	log.gen++
	log.mu.Unlock()
	require.Equal(t, []string{"b", "b"}, search(v2, first...))
	require.Equal(t, []string{"b", "b"}, search(v2, first...))
	require.Equal(t, []string{"a", "b", "b"}, search(v1, first...))
	require.Equal(t, 2, log.queries)
}
