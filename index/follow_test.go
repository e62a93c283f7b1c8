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
	"github.com/citebook/citebook/index/embedded"
	"github.com/citebook/citebook/index/lexical"
	"github.com/citebook/citebook/index/sqlite"
)

// handle is one process's view of a library directory: its own metadata
// connection and its own in-memory stores over the same files.
type handle struct {
	meta *sqlite.DB
	vec  *embedded.Store
	lex  *lexical.Index
}

func openHandle(t *testing.T, dir string) *handle {
	t.Helper()
	ctx := context.Background()
	meta, err := sqlite.Open(ctx, filepath.Join(dir, "citebook.db"))
	require.NoError(t, err)
	t.Cleanup(func() { meta.Close() })
	vec, err := embedded.Open(ctx, filepath.Join(dir, "vectors"))
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
