package memstore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

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
		for _, busy := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s busy=%v", name, busy), func(t *testing.T) {
				if busy {
					// Another scan in flight: this one runs on one worker.
					s.scans.Add(1)
					defer s.scans.Add(-1)
				} else {
					// Every scan alone splits across the workers, however
					// soon after the last one it starts.
					s.scanIdle = 0
					defer func() { s.scanIdle = scanIdle }()
				}
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
	}
	// The column path was the one taken.
	f := all(1)
	s.mu.RLock()
	adm := s.admitted(&f)
	s.mu.RUnlock()
	require.True(t, columnCheaper(len(nonzero(sparseVec(r, dim, 0.15))), adm, dim))
}

// TestCodeKernels: the SIMD kernel adds what the portable loop adds, on
// every block length a tile uses, and a row's coded score stays within the
// bound the scan skips by.
func TestCodeKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{8, 16, 24, 64, 4096} {
		xs := make([][]int8, 4)
		for i := range xs {
			xs[i] = make([]int8, n)
			for j := range xs[i] {
				xs[i][j] = int8(r.IntN(255) - 127)
			}
		}
		w := []float32{float32(r.NormFloat64()), float32(r.NormFloat64()), 0, float32(r.NormFloat64())}
		got, want := make([]float32, n), make([]float32, n)
		for i := range got {
			got[i] = float32(r.NormFloat64())
			want[i] = got[i]
		}
		fusedCodes4(got, xs[0], xs[1], xs[2], xs[3], w)
		fusedCodesGo(want, xs[0], xs[1], xs[2], xs[3], w)
		for i := range got {
			require.InDelta(t, want[i], got[i], 1e-3, "n=%d row %d", n, i)
		}
	}
	// The SIMD mask marks what the portable one marks.
	for _, n := range []int{8, 72, 4096} {
		acc, scale := make([]float32, n), make([]float32, n)
		for i := range acc {
			acc[i], scale[i] = float32(r.NormFloat64()), float32(r.Float64())
		}
		got, want := make([]uint64, (n+63)/64), make([]uint64, (n+63)/64)
		for i := range got {
			got[i], want[i] = ^uint64(0), 0 // stale bits must be cleared
		}
		aboveMask(acc, scale, 0.1, 0.2, got)
		aboveMaskGo(acc, scale, 0.1, 0.2, want)
		require.Equal(t, want, got, "n=%d", n)
		require.NotZero(t, want[0])
	}
	// Coded against exact scores of sparse rows.
	s := &Store{dim: 64}
	const rows = 300
	vs := make([][]float32, rows)
	for i := range vs {
		vs[i] = normalize(sparseVec(r, 64, 0.55))
		s.rows = append(s.rows, row{})
		s.setColumns(int32(i), vs[i])
	}
	defer s.freeVectors()
	q := normalize(sparseVec(r, 64, 0.2))
	nz := nonzero(q)
	for len(nz)%4 != 0 {
		nz = append(nz, nz[0])
	}
	w := make([]float32, len(nz))
	var sumW float32
	for i, j := range nz {
		if i < len(nonzero(q)) {
			w[i] = q[j]
			sumW += abs32(q[j])
		}
	}
	acc := make([]float32, tileRows)
	for i := 0; i < len(nz); i += 4 {
		col := func(j int32) []int8 { return s.codes[0][int(j)*tileRows : int(j)*tileRows+tileRows] }
		fusedCodes4(acc, col(nz[i]), col(nz[i+1]), col(nz[i+2]), col(nz[i+3]), w[i:i+4])
	}
	for i := range rows {
		exact := exactAt(s.cols[0], nz, w, i)
		require.InDelta(t, exact, s.scale[i]*acc[i], float64(s.scale[i]*sumW/2+1e-6), "row %d", i)
	}
	// The integer kernels: within their bound too, and the SIMD ones give
	// what the portable ones give, bit for bit.
	iw := newIntWeights(w)
	require.Positive(t, iw.bound)
	require.Less(t, iw.bound, sumW*0.01, "14-bit weights move a sum little")
	ints := func(add func([]int32, []int8, []int8, []int8, []int8, int32, int32), done func([]int32, int32, float32)) []float32 {
		sums := make([]int32, tileRows)
		col := func(j int32) []int8 { return s.codes[0][int(j)*tileRows : int(j)*tileRows+tileRows] }
		for i := 0; i < len(nz); i += 4 {
			add(sums, col(nz[i]), col(nz[i+1]), col(nz[i+2]), col(nz[i+3]), iw.hi[i/4], iw.lo[i/4])
		}
		done(sums, iw.corr, iw.ws)
		return unsafe.Slice((*float32)(unsafe.Pointer(&sums[0])), len(sums))
	}
	ahead := func(acc []int32, x0, x1, x2, x3 []int8, wh, wl int32) {
		codesAdd(acc, x0, x1, x2, x3, wh, wl, &[4][]int8{x3, x2, x1, x0})
	}
	got := ints(ahead, codesDone)
	if hasVNNI {
		require.Equal(t, ints(codesAddGo, codesDoneGo), got)
	}
	for i := range rows {
		exact := exactAt(s.cols[0], nz, w, i)
		require.InDelta(t, exact, s.scale[i]*got[i], float64(s.scale[i]*(sumW/2+iw.bound)+1e-6), "row %d", i)
	}
	// On random codes and weights of every magnitude, against the exact
	// integer-free sum: the first dimensions' weights far from the others'.
	for _, dims := range []int{4, 40, 384, maxIntDims} {
		code := make([]int8, dims*tileRows)
		for i := range code {
			code[i] = int8(r.IntN(255) - 127)
		}
		ws := make([]float32, dims)
		for i := range ws {
			ws[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(4)-2)))
		}
		iw := newIntWeights(ws)
		sums := make([]int32, tileRows)
		want := make([]int32, tileRows)
		col := func(j int) []int8 { return code[j*tileRows : (j+1)*tileRows] }
		for i := 0; i < dims; i += 4 {
			next := [4][]int8{col(0), col(1), col(2), col(3)}
			codesAdd(sums, col(i), col(i+1), col(i+2), col(i+3), iw.hi[i/4], iw.lo[i/4], &next)
			codesAddGo(want, col(i), col(i+1), col(i+2), col(i+3), iw.hi[i/4], iw.lo[i/4])
		}
		require.Equal(t, want, sums, "dims %d", dims)
		codesDone(sums, iw.corr, iw.ws)
		got := unsafe.Slice((*float32)(unsafe.Pointer(&sums[0])), len(sums))
		for row := range tileRows {
			var ex float64
			for j := range dims {
				ex += float64(ws[j]) * float64(code[j*tileRows+row])
			}
			require.InDelta(t, ex, float64(got[row]), float64(iw.bound)+1e-5*math.Abs(ex)+1e-6, "dims %d row %d", dims, row)
		}
	}
}

// TestColumnScanIsExactPortable runs the exactness test on the kernels
// that machines without AVX-512 VNNI (the AVX2 float kernel) and without
// AVX2 (the portable loop) use.
func TestColumnScanIsExactPortable(t *testing.T) {
	avx2, vnni := hasAVX2, hasVNNI
	defer func() { hasAVX2, hasVNNI = avx2, vnni }()
	if !avx2 && !vnni {
		t.Skip("the portable kernel already ran")
	}
	if vnni {
		hasVNNI = false
		t.Run("float", TestColumnScanIsExact)
	}
	if avx2 {
		hasAVX2, hasVNNI = false, false
		t.Run("portable", TestColumnScanIsExact)
	}
}
