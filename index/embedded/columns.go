package embedded

import (
	"container/heap"
	"math/bits"
	"runtime"
	"sync"

	"github.com/citebook/citebook/index/internal/rowset"
)

// The column scan answers sparse queries over large scopes exactly while
// reading a fraction of the vectors.
//
// The builtin embedder hashes a text's words and trigrams into 384 signed
// buckets: a chunk fills about 55% of them but a question only 20–60 (30 on
// average over the dev sets' 1,240 questions). A cosine only needs the
// dimensions where the query is non-zero, so the store also keeps every
// vector dimension-major, in tiles of tileRows rows: tile t holds dimension
// j of row r at cols[t][j*tileRows + r%tileRows]. Scoring a tile adds the
// query's non-zero dimensions, four at a time, into one accumulator per row
// that stays in L1 — for the dev questions 8% of the multiply-adds and of
// the memory the row-major scan reads, with the same float32 products, so
// the result is the exact top k (only the order of the additions differs).
// Measured alternatives: sign bits + Hamming distance reached recall@10 0.16
// with a 800-row shortlist on the dev questions (the zero buckets carry no
// sign), int8 codes decoded in Go were slower than float32 (no SIMD for the
// conversion), and vek's SIMD multiply-then-add in two passes and gonum's
// SSE axpy were 1.5× and 1.25× slower than the fused loop below. Dense queries (every dimension non-zero, as
// remote embedding models give) cost more here than row by row, so they keep
// the row scan or the graph.
const tileRows = 4096

// admitted is a filter's rows (resolved by rowset) in the forms the two
// scans need.
type admitted struct {
	*rowset.Set
	rows  []int32 // Set.Rows: ascending by book, for the row scan
	tiles []int32 // tiles holding at least one admitted row, ascending
}

// setColumns writes row r's vector into its tile, adding tiles as rows
// grow. Callers hold mu for writing (or are in Open).
func (s *Store) setColumns(r int32, v []float32) {
	t, o := int(r)/tileRows, int(r)%tileRows
	for len(s.cols) <= t {
		s.cols = append(s.cols, s.mem.alloc(s.dim*tileRows))
	}
	tile := s.cols[t]
	for j, x := range v {
		tile[j*tileRows+o] = x
	}
}

// nonzero lists the dimensions where q is not zero.
func nonzero(q []float32) []int32 {
	var nz []int32
	for j, x := range q {
		if x != 0 {
			nz = append(nz, int32(j))
		}
	}
	return nz
}

// columnCheaper reports whether scoring nz's columns over the admitted
// tiles does fewer multiply-adds than scoring every admitted row; measured
// per multiply-add, the two cost the same (0.47 ns on the development
// machine) although the row scan is SIMD, because it waits on memory.
func columnCheaper(nz int, a *admitted, dim int) bool {
	padded := (nz + 3) &^ 3
	return padded*len(a.tiles)*tileRows < len(a.rows)*dim
}

// accPool recycles the per-tile accumulators.
var accPool = sync.Pool{New: func() any { b := make([]float32, tileRows); return &b }}

// scoreColumns ranks the admitted rows by cosine using only q's non-zero
// dimensions nz, best first.
func (s *Store) scoreColumns(q []float32, nz []int32, a *admitted, k int) []scored {
	// Padding to a multiple of four repeats the first dimension with weight
	// 0, which leaves every sum unchanged.
	idx := make([]int32, (len(nz)+3)&^3)
	w := make([]float32, len(idx))
	for i := range idx {
		if i < len(nz) {
			idx[i], w[i] = nz[i], q[nz[i]]
		} else {
			idx[i] = nz[0] // weight 0
		}
	}
	scan := func(tiles []int32) minHeap {
		h := make(minHeap, 0, k)
		bp := accPool.Get().(*[]float32)
		defer accPool.Put(bp)
		for _, t := range tiles {
			s.scanTile(int(t), idx, w, a.Bits, *bp, &h, k)
		}
		return h
	}
	workers := runtime.GOMAXPROCS(0)
	if len(a.tiles) < 4 || workers < 2 {
		return sorted(scan(a.tiles))
	}
	workers = min(workers, len(a.tiles))
	parts := make([]minHeap, workers)
	var wg sync.WaitGroup
	for wk := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Tiles are dealt round-robin so every worker gets full ones.
			var mine []int32
			for i := wk; i < len(a.tiles); i += workers {
				mine = append(mine, a.tiles[i])
			}
			parts[wk] = scan(mine)
		}()
	}
	wg.Wait()
	all := parts[0]
	for _, p := range parts[1:] {
		all = append(all, p...)
	}
	all = sorted(all)
	return all[:min(k, len(all))]
}

// scanTile scores tile t's rows into acc and offers the admitted ones to h.
func (s *Store) scanTile(t int, idx []int32, w []float32, adm []uint64, acc []float32, h *minHeap, k int) {
	n := min(tileRows, len(s.rows)-t*tileRows)
	if n <= 0 {
		return
	}
	acc = acc[:n]
	clear(acc)
	tile := s.cols[t]
	col := func(j int32) []float32 { return tile[int(j)*tileRows : int(j)*tileRows+n] }
	for i := 0; i < len(idx); i += 4 {
		fused4(acc, col(idx[i]), col(idx[i+1]), col(idx[i+2]), col(idx[i+3]), w[i], w[i+1], w[i+2], w[i+3])
	}
	base := t * tileRows
	words := adm[base/64 : (base+n+63)/64]
	for wi, word := range words {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &= word - 1
			o := wi*64 + b
			r, sc := int32(base+o), acc[o]
			if len(*h) < k {
				heap.Push(h, scored{r, sc})
			} else if top := (*h)[0]; sc > top.score || (sc == top.score && r < top.row) {
				(*h)[0] = scored{r, sc}
				heap.Fix(h, 0)
			}
		}
	}
}

// fused4 adds a·x0 + b·x1 + c·x2 + d·x3 to acc. Four columns per pass keep
// the accumulator's loads and stores to a quarter; measured faster than
// vek's SIMD MulNumber + Add in two passes over the same data.
func fused4(acc, x0, x1, x2, x3 []float32, a, b, c, d float32) {
	x0 = x0[:len(acc)]
	x1 = x1[:len(acc)]
	x2 = x2[:len(acc)]
	x3 = x3[:len(acc)]
	for i := range acc {
		acc[i] += a*x0[i] + b*x1[i] + c*x2[i] + d*x3[i]
	}
}

// freeVectors releases both copies of the vectors. Callers hold mu for
// writing, so no scan is reading them.
func (s *Store) freeVectors() {
	s.mem.free(s.vecs)
	for _, t := range s.cols {
		s.mem.free(t)
	}
	s.vecs, s.cols = nil, nil
}

// sparseShare is the share of exactly-zero components from which a vector
// counts as sparse. A store whose first vector is sparse (the builtin
// embedder's chunks leave ~45% of their buckets empty; dense embedding
// models none) keeps its vectors dimension-major only: every search is then
// a column scan over the admitted tiles, which at 100k rows costs the same
// as the row scan even for a dense query (both ≈0.5 ns per multiply-add,
// the row scan waiting on memory), and the row-major copy — 150 MB per 100k
// chunks — is not kept. No graph is built for such a store.
const sparseShare = 0.25

func sparse(v []float32) bool {
	zeros := 0
	for _, x := range v {
		if x == 0 {
			zeros++
		}
	}
	return float64(zeros) >= sparseShare*float64(len(v))
}

// rowVec returns row r's vector: a view of the row-major copy, or gathered
// from the tiles into buf when the store keeps only those. Callers hold mu.
func (s *Store) rowVec(r int32, buf []float32) []float32 {
	if !s.colsOnly {
		off := int(r) * s.dim
		return s.vecs[off : off+s.dim]
	}
	if cap(buf) < s.dim {
		buf = make([]float32, s.dim)
	}
	buf = buf[:s.dim]
	tile, o := s.cols[int(r)/tileRows], int(r)%tileRows
	for j := range buf {
		buf[j] = tile[j*tileRows+o]
	}
	return buf
}
