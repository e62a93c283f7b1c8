package qa_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/index/lexical"
	"github.com/citebook/citebook/qa"
)

// recordedLexical records every keyword search the pipeline makes, with
// the statistics library it passes and the hits it got.
type recordedLexical struct {
	qa.LexicalSearcher
	mu    sync.Mutex
	calls []lexCall
}

type lexCall struct {
	query  string
	forms  map[string][]string
	f, lib citebook.Filter
	k      int
	hits   []citebook.Hit
}

func (r *recordedLexical) Search(ctx context.Context, q string, f, lib citebook.Filter, k int) ([]citebook.Hit, error) {
	return r.SearchForms(ctx, q, nil, f, lib, k)
}

func (r *recordedLexical) SearchForms(ctx context.Context, q string, forms map[string][]string, f, lib citebook.Filter, k int) ([]citebook.Hit, error) {
	hits, err := r.LexicalSearcher.SearchForms(ctx, q, forms, f, lib, k)
	r.mu.Lock()
	r.calls = append(r.calls, lexCall{q, forms, f, lib, k, hits})
	r.mu.Unlock()
	return hits, err
}

// TestScoresIgnoreDeniedChapter: mallory is denied a chapter of R-intro
// (DenyParents). Every BM25 search the pipeline makes for her is scored
// with her library's statistics, so each gives exactly the hits and scores
// of an index holding only what she may read: the denied chapter changes
// nothing in them (it does in alice's, who may read it).
func TestScoresIgnoreDeniedChapter(t *testing.T) {
	lib := shared(t)
	ctx := context.Background()
	rec := &recordedLexical{}
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{}, func(d *qa.Deps) {
		rec.LexicalSearcher = d.Lexical
		d.Lexical = rec
	})
	library, err := lib.Deps().Access.Filter(ctx, mallory)
	require.NoError(t, err)
	require.NotEmpty(t, library.DenyParents)

	// An index of the chunks mallory may read, and nothing else.
	var readable []citebook.Chunk
	for _, c := range lib.chunks(t, bookR) {
		if !acl.HasPrefix(c.HeadingPath, lib.denied) {
			readable = append(readable, c)
		}
	}
	only, err := lexical.Open(ctx, t.TempDir())
	require.NoError(t, err)
	defer only.Close()
	require.NoError(t, only.Upsert(ctx, readable))

	for _, q := range []string{"What are the modes and attributes of objects?", "How do I remove objects from the workspace?"} {
		_, err := p.Search(ctx, mallory, qa.Request{Question: q, BookIDs: []string{bookR}})
		require.NoError(t, err)
	}
	require.NotEmpty(t, rec.calls)
	aliceLib, err := lib.Deps().Access.Filter(ctx, alice)
	require.NoError(t, err)
	differs := false
	for _, c := range rec.calls {
		require.Equal(t, library, c.lib, "searched with mallory's library's statistics")
		want, err := only.SearchForms(ctx, c.query, c.forms, c.f, c.lib, c.k)
		require.NoError(t, err)
		require.Equal(t, len(want), len(c.hits), c.query)
		for i := range want {
			require.Equal(t, want[i].Chunk.ID, c.hits[i].Chunk.ID, "%q rank %d", c.query, i)
			require.Equal(t, want[i].Score, c.hits[i].Score, "%q rank %d", c.query, i)
		}
		a, err := rec.LexicalSearcher.SearchForms(ctx, c.query, c.forms, c.f, aliceLib, c.k)
		require.NoError(t, err)
		if len(a) > 0 && len(c.hits) > 0 && a[0].Score != c.hits[0].Score {
			differs = true
		}
	}
	require.True(t, differs, "the denied chapter counts in alice's statistics")
}
