package index_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/lexical"
	"github.com/citebook/citebook/index/memstore"
	"github.com/citebook/citebook/index/sqlite"
)

// handle is one process's view of a library directory: its own metadata
// connection and its own in-memory stores over the same files.
type handle struct {
	meta *sqlite.DB
	vec  *memstore.Store
	lex  *lexical.Index
}

func openHandle(t *testing.T, dir string) *handle {
	t.Helper()
	ctx := context.Background()
	meta, err := sqlite.Open(ctx, filepath.Join(dir, "citebook.db"))
	require.NoError(t, err)
	t.Cleanup(func() { meta.Close() })
	vec, err := memstore.Open(ctx, filepath.Join(dir, "vectors"))
	require.NoError(t, err)
	t.Cleanup(func() { vec.Close() })
	lex, err := lexical.Open(ctx, filepath.Join(dir, "lexical"))
	require.NoError(t, err)
	t.Cleanup(func() { lex.Close() })
	return &handle{meta: meta, vec: vec, lex: lex}
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
	f, err := index.NewFollower(ctx, server.meta, quiet())
	require.NoError(t, err)
	f.Follow(server.vec, server.lex)
	go f.Run(ctx, 100*time.Millisecond)

	emb := newEmbedder(t)
	build := index.NewBuilder(cli.meta, cli.vec, cli.lex, emb, index.BuilderOptions{Chunking: chunking, Logger: quiet()})
	paths := [2]string{bookFile(t, t.TempDir(), "a.md"), bookFile(t, t.TempDir(), "b.md")}
	memory := func() (vec, lex []string) {
		vec, err := server.vec.IDs(ctx, "guide")
		require.NoError(t, err)
		lex, err = server.lex.IDs(ctx, "guide")
		require.NoError(t, err)
		return vec, lex
	}
	for i, p := range paths {
		t0 := time.Now()
		res, err := build.Index(ctx, citebook.BookInput{BookID: "guide", Tenant: "acme", Path: p})
		require.NoError(t, err)
		want, err := cli.meta.ChunkIDs(ctx, "guide", res.Version)
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
	ch, err := server.meta.Changes(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"guide"}, ch.Books)
	own := index.NewBuilder(server.meta, server.vec, server.lex, emb, index.BuilderOptions{Chunking: chunking, Logger: quiet()})
	_, err = own.Index(ctx, citebook.BookInput{BookID: "mine", Tenant: "acme", Path: paths[0]})
	require.NoError(t, err)
	next, err := server.meta.Changes(ctx, ch.Gen)
	require.NoError(t, err)
	require.Greater(t, next.Gen, ch.Gen)
	require.Empty(t, next.Books, "own changes are not reported back")
	other, err := cli.meta.Changes(ctx, ch.Gen)
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
	open := func() (*sqlite.DB, *memstore.Store, *lexical.Index) {
		meta, err := sqlite.Open(ctx, filepath.Join(dir, "citebook.db"))
		require.NoError(t, err)
		vec, err := memstore.Open(ctx, filepath.Join(dir, "vectors"))
		require.NoError(t, err)
		lex, err := lexical.Open(ctx, filepath.Join(dir, "lexical"))
		require.NoError(t, err)
		return meta, vec, lex
	}
	emb := newEmbedder(t)
	sMeta, sVec, sLex := open() // the server, following nothing
	build := index.NewBuilder(sMeta, sVec, sLex, emb, index.BuilderOptions{Chunking: chunking, Logger: quiet()})
	_, err := build.Index(ctx, citebook.BookInput{BookID: "first", Tenant: "acme", Path: bookFile(t, t.TempDir(), "first.md")})
	require.NoError(t, err)

	cMeta, cVec, cLex := open() // the CLI adds a book meanwhile
	cli := index.NewBuilder(cMeta, cVec, cLex, emb, index.BuilderOptions{Chunking: chunking, Logger: quiet()})
	res, err := cli.Index(ctx, citebook.BookInput{BookID: "second", Tenant: "acme", Path: bookFile(t, t.TempDir(), "second.md")})
	require.NoError(t, err)
	require.NoError(t, cLex.Close())
	require.NoError(t, cVec.Close())
	require.NoError(t, cMeta.Close())
	// The server stops last, its memory without the CLI's book.
	require.NoError(t, sLex.Close())
	require.NoError(t, sVec.Close())
	require.NoError(t, sMeta.Close())

	meta, vec, lex := open()
	defer meta.Close()
	defer vec.Close()
	defer lex.Close()
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
