package embedded

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/citebook/citebook"
	"github.com/stretchr/testify/require"
)

// sparseVec is shaped like the builtin embedder's vectors: a share of the
// dimensions non-zero, the rest exactly zero.
func sparseVec(r *rand.Rand, dim int, share float64) []float32 {
	v := make([]float32, dim)
	for i := range v {
		if r.Float64() < share {
			v[i] = float32(r.NormFloat64())
		}
	}
	v[r.IntN(dim)] = 1 // never all zero
	return v
}

// TestColumnScanIsExact checks the tile scan against brute force through
// Filter.Match on more rows than one tile, across book, version and parent
// filters, after retirements, deletions and slot reuse — so a row the
// filter refuses can never come back from it and none it admits is missed.
func TestColumnScanIsExact(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	defer s.Close()
	r := rand.New(rand.NewPCG(3, 4))
	const n, dim = 3*tileRows + 123, 64
	cs := make([]citebook.Chunk, n)
	vs := make([][]float32, n)
	for i := range cs {
		cs[i] = chunk(fmt.Sprintf("c%05d", i), "t", fmt.Sprintf("b%d", i%3), 1)
		cs[i].ParentID = fmt.Sprintf("p%d", i%7)
		vs[i] = sparseVec(r, dim, 0.55)
	}
	require.NoError(t, s.Upsert(ctx, cs, vs))
	var retired, deleted []string
	for i := 0; i < n; i += 5 {
		if cs[i].BookID == "b1" {
			retired = append(retired, cs[i].ID)
			cs[i].Retired = 2
		}
	}
	require.NoError(t, s.Retire(ctx, "b1", retired, 2))
	for i := 1; i < n; i += 11 {
		deleted = append(deleted, cs[i].ID)
	}
	require.NoError(t, s.Delete(ctx, deleted))
	// Reuse the freed slots with new rows of another tenant.
	var extra []citebook.Chunk
	var extraV [][]float32
	for i := range 200 {
		extra = append(extra, chunk(fmt.Sprintf("x%03d", i), "other", "b0", 1))
		extraV = append(extraV, sparseVec(r, dim, 0.55))
	}
	require.NoError(t, s.Upsert(ctx, extra, extraV))
	gone := map[string]bool{}
	for _, id := range deleted {
		gone[id] = true
	}
	var liveC []citebook.Chunk
	var liveV [][]float32
	for i := range cs {
		if !gone[cs[i].ID] {
			liveC = append(liveC, cs[i])
			liveV = append(liveV, vs[i])
		}
	}
	liveC = append(liveC, extra...)
	liveV = append(liveV, extraV...)
	require.True(t, s.colsOnly, "sparse vectors keep no row-major copy")
	require.Empty(t, s.vecs)

	all := func(v1 int) citebook.Filter {
		return citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b0", Version: 1}, {BookID: "b1", Version: v1}, {BookID: "b2", Version: 1}}}
	}
	denied := all(1)
	denied.DenyParents = []string{"p3", "p5"}
	filters := map[string]citebook.Filter{"all v1": all(1), "b1 at v2": all(2), "denied parents": denied,
		"one book":    {Tenant: "t", Books: []citebook.BookScope{{BookID: "b2", Version: 1}}},
		"small scope": {Tenant: "other", Books: []citebook.BookScope{{BookID: "b0", Version: 1}}}}
	for name, f := range filters {
		t.Run(name, func(t *testing.T) {
			for qi := range 20 {
				q := sparseVec(r, dim, 0.15)
				if qi%5 == 0 {
					q = randVec(r, dim) // a dense query too
				}
				hits, err := s.Search(ctx, q, f, 10)
				require.NoError(t, err)
				require.Equal(t, bruteForce(liveC, liveV, q, f, 10), ids(hits), "query %d", qi)
				for _, h := range hits {
					require.True(t, f.Match(&h.Chunk))
				}
			}
		})
	}
	// The column path was the one taken.
	f := all(1)
	s.mu.RLock()
	adm := s.admitted(&f)
	s.mu.RUnlock()
	require.True(t, columnCheaper(len(nonzero(sparseVec(r, dim, 0.15))), adm, dim))
}
