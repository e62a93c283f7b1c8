package index

import (
	"context"

	"github.com/citebook/citebook"
)

// ChunkReader reads a book's chunks visible in a version, in reading order.
type ChunkReader interface {
	ChunksAt(ctx context.Context, bookID string, version int) ([]citebook.Chunk, error)
}

// BookMeta is the metadata FreshBooks falls back to and checks against.
type BookMeta interface {
	ChunkReader
	Versions(ctx context.Context, bookID string) ([]citebook.Version, error)
}

// FreshBooks reads a book's chunks from an in-memory store (the embedded
// vector store keeps every chunk whole) instead of decoding them from the
// metadata. It syncs first, so memory holds every version the metadata
// served before the call, and takes memory's answer only when it has as
// many chunks as the metadata recorded for the version; otherwise (a reload
// still running, a store that lost rows) the metadata answers.
type FreshBooks struct {
	Memory ChunkReader
	Meta   BookMeta
	F      *Follower
}

// ChunksAt implements qa.BookChunks.
func (b FreshBooks) ChunksAt(ctx context.Context, bookID string, version int) ([]citebook.Chunk, error) {
	if err := b.F.Sync(ctx); err != nil {
		return nil, err
	}
	vs, err := b.Meta.Versions(ctx, bookID)
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		if v.Number != version || v.Status != citebook.VersionCompleted || v.Chunks == 0 {
			continue
		}
		cs, err := b.Memory.ChunksAt(ctx, bookID, version)
		if err == nil && len(cs) == v.Chunks {
			return cs, nil
		}
	}
	return b.Meta.ChunksAt(ctx, bookID, version)
}
