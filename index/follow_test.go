package index_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/lexical"
	"github.com/citebook/citebook/index/memstore"
	"github.com/citebook/citebook/index/metadb"
)

// handle is one process's view of a library directory: its own metadata
// connection and its own in-memory stores over the same files.
type handle struct {
	meta *metadb.DB
	vec  *memstore.Store
	lex  *lexical.Index
}

func openHandle(t *testing.T, dir string) *handle {
	t.Helper()
	ctx := context.Background()
	meta, err := metadb.Open(ctx, filepath.Join(dir, "citebook.db"))
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
	open := func() (*metadb.DB, *memstore.Store, *lexical.Index) {
		meta, err := metadb.Open(ctx, filepath.Join(dir, "citebook.db"))
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
