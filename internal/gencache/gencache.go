// Package gencache keeps values read from the metadata database until the
// change log's generation moves: the one rule by which the access lists
// (acl.Resolver.Cache) and the embedding version (index.EmbeddingCache) are
// cached on the search path.
//
// Invariant: once a write that changes a cached value has returned, no
// reader that begins afterwards, in any process sharing the metadata, gets a
// value read before it — provided every such write logs a change in its own
// transaction (index/metadb), so the generation a later reader's sync reads
// is at least that change's. Values are stamped with a generation read
// before them, so a value stamped with the generation the reader sees was
// read after every change up to it committed.
package gencache

import (
	"context"
	"sync"
)

// Cache holds one value per key, each stamped with the generation read
// before it; a full cache starts over.
type Cache[K comparable, V any] struct {
	gen func(ctx context.Context) (int64, error)
	max int

	mu sync.Mutex
	m  map[K]entry[V]
}

type entry[V any] struct {
	gen int64
	v   V
}

// New caches up to size keys (at least one); gen returns the change log's
// generation as of the reader (index.Follower.Generation).
func New[K comparable, V any](gen func(ctx context.Context) (int64, error), size int) *Cache[K, V] {
	return &Cache[K, V]{gen: gen, max: max(1, size), m: map[K]entry[V]{}}
}

// Get returns key's value, from the cache when it was read at the current
// generation and from read otherwise. A failed read is not cached; an error
// from gen is returned as it is.
func (c *Cache[K, V]) Get(ctx context.Context, key K, read func(ctx context.Context) (V, error)) (V, error) {
	gen, err := c.gen(ctx)
	if err != nil {
		var zero V
		return zero, err
	}
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && e.gen == gen {
		return e.v, nil
	}
	v, err := read(ctx)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if e, ok := c.m[key]; !ok || e.gen <= gen {
		if !ok && len(c.m) >= c.max {
			clear(c.m)
		}
		c.m[key] = entry[V]{gen: gen, v: v}
	}
	c.mu.Unlock()
	return v, nil
}
