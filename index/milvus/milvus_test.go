package milvus

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/storetest"
)

// milvusAddr returns the server `make test` started (scripts/milvus.sh). CI
// must have one; a developer without it skips.
func milvusAddr(t *testing.T) string {
	t.Helper()
	return storetest.MilvusAddr(t)
}

var collections atomic.Int64

// openFresh opens a store on a collection no other test uses and drops it
// when the test ends.
func openFresh(t *testing.T, addr string, dim int, timeout time.Duration) *Store {
	t.Helper()
	name := fmt.Sprintf("citebook_test_%d_%d_%d", os.Getpid(), time.Now().UnixNano(), collections.Add(1))
	s, err := Open(context.Background(), Config{Addr: addr, Collection: name, Dim: dim, Timeout: timeout})
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := s.Drop(context.Background()); err != nil {
			t.Logf("dropping %s: %v", name, err)
		}
		s.Close()
	})
	return s
}

func TestContract(t *testing.T) {
	addr := milvusAddr(t)
	storetest.Run(t, func(t *testing.T) index.VectorStore {
		return openFresh(t, addr, storetest.Dim, 0)
	})
}

func TestOpen(t *testing.T) {
	addr := milvusAddr(t)
	ctx := context.Background()
	s := openFresh(t, addr, storetest.Dim, 0)

	again, err := Open(ctx, Config{Addr: addr, Collection: s.cfg.Collection, Dim: storetest.Dim})
	require.NoError(t, err, "reopening an existing collection")
	require.NoError(t, again.Close())

	_, err = Open(ctx, Config{Addr: addr, Collection: s.cfg.Collection, Dim: storetest.Dim * 2})
	require.Equal(t, citebook.ECONFLICT, citebook.ErrorCode(err), "a collection of another dimension is not reused: %v", err)

	tests := []struct {
		name string
		cfg  Config
		code string
	}{
		{"no address", Config{Collection: "c", Dim: 8}, citebook.EINVALID},
		{"bad collection name", Config{Addr: addr, Collection: `x"; drop`, Dim: 8}, citebook.EINVALID},
		{"no dimension", Config{Addr: addr, Collection: "c"}, citebook.EINVALID},
		{"nobody listening", Config{Addr: "127.0.0.1:1", Collection: "c", Dim: 8, DialTimeout: 2 * time.Second}, citebook.EUNAVAILABLE},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := Open(ctx, tc.cfg)
			require.Equal(t, tc.code, citebook.ErrorCode(err), "%v", err)
			require.Less(t, time.Since(start), 10*time.Second)
		})
	}
}

func TestUpsertLimits(t *testing.T) {
	s := openFresh(t, milvusAddr(t), storetest.Dim, 0)
	ctx := context.Background()
	vec := storetest.Axis(0)
	long := citebook.Chunk{ID: "long", BookID: "b", Tenant: "t", Text: string(make([]byte, maxLongLen+1))}
	tests := []struct {
		name  string
		chunk citebook.Chunk
		vec   []float32
		code  string
	}{
		{"wrong dimension", citebook.Chunk{ID: "c"}, []float32{1, 2}, citebook.EINVALID},
		{"id too long", citebook.Chunk{ID: string(make([]byte, maxIDLen+1))}, vec, citebook.EINVALID},
		{"invalid utf-8 book", citebook.Chunk{ID: "c", BookID: "\xff"}, vec, citebook.EINVALID},
		{"text past the VarChar limit", long, vec, citebook.ETOOLARGE},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Upsert(ctx, []citebook.Chunk{tc.chunk}, [][]float32{tc.vec})
			require.Equal(t, tc.code, citebook.ErrorCode(err), "%v", err)
		})
	}
	_, err := s.Search(ctx, []float32{1}, citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}, 3)
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
}
