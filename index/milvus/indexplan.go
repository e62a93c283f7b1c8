package milvus

import (
	"context"
	"log/slog"
	"math"
	"strconv"

	"github.com/citebook/citebook"
	"github.com/milvus-io/milvus-sdk-go/v2/entity"
)

// Index types the store builds, chosen by collection size (Config.Index
// "auto", the default) or forced by Config.Index. Measured against the real
// Milvus 2.3.5 by BenchmarkIndexTypes on the builtin embedder's vectors
// (README, "Measurements"): FLAT is exact and took 14 ms at 20k chunks but
// 109 ms at 60k; at 60k IVF_FLAT (nprobe a quarter of the lists) kept
// recall@10 0.86 at 8 ms, while HNSW (ef 64) answered in 3.5 ms with recall
// 0.26 and took twice as long to build. So small libraries get exact
// answers and no index build, larger ones IVF_FLAT; HNSW stays available
// for semantic embedding models, on which graphs do far better.
const (
	IndexAuto    = "auto"
	IndexFlat    = string(entity.Flat)
	IndexIVFFlat = string(entity.IvfFlat)
	IndexHNSW    = string(entity.HNSW)

	flatMaxRows = 50_000
)

// planIndex is the index type for a collection of rows rows.
func planIndex(want string, rows int64) (entity.IndexType, error) {
	switch want {
	case "", IndexAuto:
		if rows < flatMaxRows {
			return entity.Flat, nil
		}
		return entity.IvfFlat, nil
	case IndexFlat, IndexIVFFlat, IndexHNSW:
		return entity.IndexType(want), nil
	}
	return "", citebook.Errorf(citebook.EINVALID, "unknown Milvus index type %q (auto, FLAT, IVF_FLAT or HNSW)", want)
}

// ivfLists is IVF_FLAT's nlist for rows rows (4·√n, the usual rule).
func ivfLists(rows int64) int {
	return min(65536, max(16, int(4*math.Sqrt(float64(rows)))))
}

// ivfProbe is how many of the lists a search visits; a quarter, since the
// hashed lexical vectors spread a question's neighbours over many lists.
func ivfProbe(lists int) int { return max(1, lists/4) }

func newIndex(t entity.IndexType, rows int64) (entity.Index, error) {
	switch t {
	case entity.Flat:
		return entity.NewIndexFlat(entity.COSINE)
	case entity.IvfFlat:
		return entity.NewIndexIvfFlat(entity.COSINE, ivfLists(rows))
	default:
		return entity.NewIndexHNSW(entity.COSINE, hnswM, hnswEfConstruction)
	}
}

func (s *Store) searchParam(k int) (entity.SearchParam, error) {
	switch s.index {
	case entity.Flat:
		return entity.NewIndexFlatSearchParam()
	case entity.IvfFlat:
		return entity.NewIndexIvfFlatSearchParam(ivfProbe(s.lists))
	default:
		return entity.NewIndexHNSWSearchParam(max(k, minSearchEf))
	}
}

// ensureIndex builds the planned index on the vector field, replacing an
// index of another type (the collection is released for that, so this
// runs in Open, before the store serves). The plan is made once per Open:
// a library that grows past flatMaxRows switches to HNSW at its next start.
func (s *Store) ensureIndex(ctx context.Context, name string) error {
	rows := int64(0)
	if st, err := s.c.GetCollectionStatistics(ctx, name); err == nil {
		rows, _ = strconv.ParseInt(st["row_count"], 10, 64)
	}
	want, err := planIndex(s.cfg.Index, rows)
	if err != nil {
		return err
	}
	s.index = want
	idx, err := s.c.DescribeIndex(ctx, name, fVector)
	if err == nil && len(idx) > 0 {
		have := idx[0].IndexType()
		if have == want {
			if have == entity.IvfFlat {
				s.lists, _ = strconv.Atoi(idx[0].Params()["nlist"])
				if s.lists == 0 {
					s.lists = ivfLists(rows)
				}
			}
			return nil
		}
		slog.Info("milvus index type changes with the collection's size", "collection", name, "rows", rows, "from", have, "to", want)
		if err := s.c.ReleaseCollection(ctx, name); err != nil {
			return s.wrap(ctx, err, "releasing collection %s to re-index it", name)
		}
		if err := s.c.DropIndex(ctx, name, fVector); err != nil {
			return s.wrap(ctx, err, "dropping the %s index of %s", have, name)
		}
	}
	ix, err := newIndex(want, rows)
	if err != nil {
		return citebook.Wrap(err, citebook.EINTERNAL, "milvus index parameters are invalid")
	}
	s.lists = ivfLists(rows)
	if err := s.c.CreateIndex(ctx, name, fVector, ix, false); err != nil {
		return s.wrap(ctx, err, "indexing collection %s", name)
	}
	return nil
}
