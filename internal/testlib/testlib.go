// Package testlib is the one fixture tests use to get a real library: it
// opens one exactly as the binary does (internal/library.Open, so the same
// stores, embedder, builder, grants and pipeline wiring) and indexes corpus
// books into it. Tests then differ only in what they index and ask.
//
// Importing it from a package's own (in-package) tests makes a cycle when
// internal/library imports that package (index, qa, acl, ingest); such tests
// live in the external _test package instead.
package testlib

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/library"
	"github.com/citebook/citebook/qa"
)

// Config is the configuration of a fresh test library in dir: the
// defaults (builtin embedder, embedded stores, extractive answerer), with
// nothing read from the environment.
func Config(dir string) library.Config {
	c := library.Defaults()
	c.Data = dir
	return c
}

// Quiet is a logger that drops everything, for libraries whose logs would
// only clutter test output.
func Quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Open opens the library c describes, with a quiet log, and closes it when
// the test ends.
func Open(t testing.TB, c library.Config) *library.Library {
	t.Helper()
	l := OpenShared(t, c)
	t.Cleanup(func() { l.Close() })
	return l
}

// OpenShared is Open for a library several tests share (built once, closed
// by the package's TestMain): the caller closes it.
func OpenShared(t testing.TB, c library.Config) *library.Library {
	t.Helper()
	l, err := library.Open(context.Background(), c, Quiet())
	require.NoError(t, err)
	return l
}

// Index builds the books through the library's builder and requires each
// build to complete.
func Index(t testing.TB, l *library.Library, books ...citebook.BookInput) {
	t.Helper()
	for _, in := range books {
		res, err := l.Builder.Index(context.Background(), in)
		require.NoError(t, err, in.BookID)
		require.Equal(t, string(citebook.JobCompleted), res.Status, in.BookID)
	}
}

// Pipeline is the answering pipeline the library's configuration
// describes, as `citebook ask` and `serve` wire it.
func Pipeline(t testing.TB, l *library.Library) *qa.Pipeline {
	t.Helper()
	p, err := l.Pipeline()
	require.NoError(t, err)
	return p
}

// PipelineWith wires the library's retrieval to the answerer a with opts,
// for tests that script the model or tune the thresholds.
func PipelineWith(t testing.TB, l *library.Library, a qa.Answerer, opts qa.Options) *qa.Pipeline {
	t.Helper()
	deps := l.Deps()
	deps.Answerer = a
	p, err := qa.NewPipeline(deps, opts)
	require.NoError(t, err)
	return p
}
