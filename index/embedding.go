package index

import (
	"context"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/gencache"
)

// EmbeddingSource reads the library's embedding version (index/metadb.DB).
type EmbeddingSource interface {
	EmbeddingVersion(ctx context.Context) (v citebook.EmbeddingVersion, ok bool, err error)
}

// EmbeddingCache keeps the library's embedding version in memory, read
// again only when the change log's generation moved: every search checks
// the query embedder against it, and reading it from the database was over
// a percent of a search's CPU, for a value that changes only when the
// library is re-embedded.
//
// Invariant (internal/gencache's): once SetEmbeddingVersion has returned,
// no question that begins afterwards, in any process sharing the metadata,
// is checked against a version read before it; the write logs a change in
// its own transaction (index/metadb).
type EmbeddingCache struct {
	src   EmbeddingSource
	cache *gencache.Cache[struct{}, embedding]
}

type embedding struct {
	v  citebook.EmbeddingVersion
	ok bool
}

// NewEmbeddingCache reads the version from src, again whenever gen (the
// question's generation: Follower.Generation) differs from the one it was
// read at.
func NewEmbeddingCache(src EmbeddingSource, gen func(ctx context.Context) (int64, error)) *EmbeddingCache {
	return &EmbeddingCache{src: src, cache: gencache.New[struct{}, embedding](gen, 1)}
}

// EmbeddingVersion returns the library's embedding version as src does.
func (c *EmbeddingCache) EmbeddingVersion(ctx context.Context) (citebook.EmbeddingVersion, bool, error) {
	e, err := c.cache.Get(ctx, struct{}{}, func(ctx context.Context) (embedding, error) {
		v, ok, err := c.src.EmbeddingVersion(ctx)
		return embedding{v, ok}, err
	})
	return e.v, e.ok, err
}
