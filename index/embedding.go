package index

import (
	"context"
	"sync"

	"github.com/citebook/citebook"
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
// Invariant (as acl.Resolver.Cache's): once SetEmbeddingVersion has
// returned, no question that begins afterwards, in any process sharing the
// metadata, is checked against a version read before it. The write logs a
// change in its own transaction (index/metadb), so the generation a later
// question's sync reads is at least that change's; the cached version is
// stamped with a generation read before it, so a version stamped with the
// generation the question sees was read after every change up to it
// committed.
type EmbeddingCache struct {
	src EmbeddingSource
	gen func(ctx context.Context) (int64, error)

	mu     sync.Mutex
	cached bool
	at     int64 // generation read before v
	v      citebook.EmbeddingVersion
	ok     bool
}

// NewEmbeddingCache reads the version from src, again whenever gen (the
// question's generation: Follower.Generation) differs from the one it was
// read at.
func NewEmbeddingCache(src EmbeddingSource, gen func(ctx context.Context) (int64, error)) *EmbeddingCache {
	return &EmbeddingCache{src: src, gen: gen}
}

// EmbeddingVersion returns the library's embedding version as src does.
func (c *EmbeddingCache) EmbeddingVersion(ctx context.Context) (citebook.EmbeddingVersion, bool, error) {
	gen, err := c.gen(ctx)
	if err != nil {
		return citebook.EmbeddingVersion{}, false, err
	}
	c.mu.Lock()
	if c.cached && c.at == gen {
		v, ok := c.v, c.ok
		c.mu.Unlock()
		return v, ok, nil
	}
	c.mu.Unlock()
	v, ok, err := c.src.EmbeddingVersion(ctx)
	if err != nil {
		return v, ok, err
	}
	c.mu.Lock()
	if !c.cached || c.at <= gen {
		c.cached, c.at, c.v, c.ok = true, gen, v, ok
	}
	c.mu.Unlock()
	return v, ok, nil
}
