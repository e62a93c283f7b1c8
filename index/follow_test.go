package index_test

import (
	"context"
	"slices"
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
