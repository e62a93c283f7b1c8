package qa_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/qa"
)

// countingLibrary is the real metadata DB counting Neighbours calls, or
// failing them when fail is set.
type countingLibrary struct {
	*metadb.DB
	calls, ids int
	fail       bool
}

func (c *countingLibrary) Neighbours(ctx context.Context, ids []string, n int) (map[string][]citebook.Chunk, error) {
	c.calls++
	c.ids += len(ids)
	if c.fail {
		return nil, errors.New("store down")
	}
	return c.DB.Neighbours(ctx, ids, n)
}

// TestExpandIsOneLookupPerQuestion checks that expansion asks the store
// once for all retrieved chunks, and that a failed lookup still answers
// from the chunks alone.
func TestExpandIsOneLookupPerQuestion(t *testing.T) {
	lib := shared(t)
	ctx := context.Background()
	for _, fail := range []bool{false, true} {
		meta := &countingLibrary{DB: lib.Meta, fail: fail}
		p, err := qa.NewPipeline(qa.Deps{
			Embedder: lib.Embed, Vectors: lib.Vectors, Lexical: lib.Lexical, Library: meta,
			Access: acl.NewResolver(lib.Meta, lib.Grants, lib.Meta), Answerer: qa.NewExtractive(analysis.Terms),
			Terms: analysis.Terms,
		}, qa.Options{})
		require.NoError(t, err)
		a, err := p.Ask(ctx, alice, qa.Request{Question: "How do I change the length of an object?"}, nil)
		require.NoError(t, err)
		require.False(t, a.Refused, "fail=%v", fail)
		require.Equal(t, 1, meta.calls, "one store round trip for the question's chunks (fail=%v)", fail)
		require.Greater(t, meta.ids, 1, "the one call carries every retrieved chunk")
	}
}
