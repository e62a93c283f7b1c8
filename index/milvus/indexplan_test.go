package milvus

import (
	"context"
	"fmt"
	"testing"

	"github.com/milvus-io/milvus-sdk-go/v2/entity"
	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

func TestPlanIndex(t *testing.T) {
	for _, c := range []struct {
		want string
		rows int64
		got  entity.IndexType
	}{
		{"", 0, entity.Flat}, {IndexAuto, flatMaxRows - 1, entity.Flat}, {IndexAuto, flatMaxRows, entity.IvfFlat},
		{IndexHNSW, 10, entity.HNSW}, {IndexFlat, 1e6, entity.Flat}, {IndexIVFFlat, 10, entity.IvfFlat},
	} {
		got, err := planIndex(c.want, c.rows)
		require.NoError(t, err)
		require.Equal(t, c.got, got, "%q at %d rows", c.want, c.rows)
	}
	_, err := planIndex("DISKANN", 10)
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
	require.Equal(t, 16, ivfLists(1))
	require.Equal(t, 1264, ivfLists(100_000))
}

// TestIndexTypeChangesAtOpen reopens one collection with each index type:
// the index is replaced, and searches answer the same nearest chunk.
func TestIndexTypeChangesAtOpen(t *testing.T) {
	addr := milvusAddr(t)
	ctx := context.Background()
	s := openFresh(t, addr, 8, 0)
	var cs []citebook.Chunk
	var vs [][]float32
	for i := range 64 {
		cs = append(cs, citebook.Chunk{ID: fmt.Sprintf("c%02d", i), BookID: "b", Version: 1, ParentID: "p", Tenant: "t", Text: "x"})
		v := make([]float32, 8)
		v[i%8], v[(i/8)%8] = 1, float32(i%5)+0.5
		vs = append(vs, v)
	}
	require.NoError(t, s.Upsert(ctx, cs, vs))
	require.Equal(t, entity.Flat, s.index, "a small collection gets FLAT")
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}
	for _, ix := range []string{IndexHNSW, IndexIVFFlat, IndexAuto} {
		r, err := Open(ctx, Config{Addr: addr, Collection: s.cfg.Collection, Dim: 8, Index: ix})
		require.NoError(t, err, ix)
		want, _ := planIndex(ix, 64)
		require.Equal(t, want, r.index)
		have, err := r.c.DescribeIndex(ctx, s.cfg.Collection, fVector)
		require.NoError(t, err)
		require.Equal(t, want, have[0].IndexType())
		hits, err := r.Search(ctx, vs[13], f, 3)
		require.NoError(t, err, ix)
		require.NotEmpty(t, hits)
		require.Equal(t, "c13", hits[0].Chunk.ID, ix)
		r.Close()
	}
}
