// Package index builds and maintains the searchable index of a library:
// embedding chunks in batches, writing them to a vector store and a lexical
// index, recording versions, jobs and batches, and switching a book to a new
// version only once that version is complete. It knows nothing of answering.
package index

import (
	"context"

	"github.com/citebook/citebook"
)

// VectorStore is where chunk vectors live; the embedded store and Milvus both
// implement it and pass the same contract suite (index/storetest).
//
// Versioning: a chunk is visible in versions [Version, Retired). Upsert writes
// chunks of the version being built (invisible to readers of the active
// version because Version is newer); Retire marks chunks the new version no
// longer has so they vanish exactly when the new version becomes active;
// Delete removes them physically afterwards.
type VectorStore interface {
	// Upsert inserts or replaces chunks by ID; vectors[i] belongs to chunks[i].
	Upsert(ctx context.Context, chunks []citebook.Chunk, vectors [][]float32) error
	// Retire sets Retired=version on the given chunks of a book; version 0
	// un-retires them (used when an abandoned build is rolled back).
	Retire(ctx context.Context, bookID string, ids []string, version int) error
	// Delete removes chunks by ID; missing IDs are not an error.
	Delete(ctx context.Context, ids []string) error
	// Search returns the k chunks most similar (cosine) to vec among those the
	// filter matches; the filter is applied during the search, never after.
	Search(ctx context.Context, vec []float32, f citebook.Filter, k int) ([]citebook.Hit, error)
	// IDs lists the IDs of every stored chunk of a book, for reconciliation.
	IDs(ctx context.Context, bookID string) ([]string, error)
	// Get returns stored chunks by ID (without vectors), in no set order.
	Get(ctx context.Context, ids []string) ([]citebook.Chunk, error)
	// Close releases connections and files.
	Close() error
}

// LexicalIndex is the keyword (BM25) side of hybrid retrieval. It follows the
// same versioning and filter rules as VectorStore so both sides always agree
// on what a principal may see.
type LexicalIndex interface {
	// Upsert inserts or replaces chunks by ID.
	Upsert(ctx context.Context, chunks []citebook.Chunk) error
	// Retire sets Retired=version on the given chunks of a book; version 0
	// un-retires them.
	Retire(ctx context.Context, bookID string, ids []string, version int) error
	// Delete removes chunks by ID; missing IDs are not an error.
	Delete(ctx context.Context, ids []string) error
	// Search returns the k best BM25 matches for query among chunks the
	// filter matches, applying the filter during the search. lib is the
	// reader's library (everything it may read in f's tenant, f narrowed
	// from it): BM25's statistics are counted over it alone, so scores
	// reveal nothing of chunks the reader is denied.
	Search(ctx context.Context, query string, f, lib citebook.Filter, k int) ([]citebook.Hit, error)
	// SearchForms is Search with a query term matched in its other forms
	// too, counted as one term (forms: term → its other forms, as terms).
	SearchForms(ctx context.Context, query string, forms map[string][]string, f, lib citebook.Filter, k int) ([]citebook.Hit, error)
	// IDs lists the IDs of every indexed chunk of a book.
	IDs(ctx context.Context, bookID string) ([]string, error)
	// Get returns indexed chunks by ID with their Version and Retired, in
	// no set order; unknown IDs are skipped.
	Get(ctx context.Context, ids []string) ([]citebook.Chunk, error)
	// Close releases files.
	Close() error
}
