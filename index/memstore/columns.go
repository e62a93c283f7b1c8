package memstore

import (
	"math"
	"math/bits"
	"sync"
	"time"
	"unsafe"

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
//
// The scan reads int8 codes, not the floats: each row is also kept as
// round(127·x/max|x|) with its scale max|x|/127, a quarter of the bytes, and
// decoded with AVX2 (VPMOVSXBD, VCVTDQ2PS, FMA) where the CPU has it (the
// Go decoding measured slower than float32 before). A code is within half
// a scale of its float, so a row's coded score is within scale·Σ|w|/2 of
// its exact one. A row whose coded score plus that bound cannot reach the
// k-th best lower bound (coded score minus the bound) is skipped; the rest
// are shortlisted, and after the scan those that reach the k-th best lower
// bound of all tiles are scored exactly from the float columns, with the
// same float32 products and sums in the same order as the float scan (see
// shortlist). The result is the exact top k. Each worker first fills its
// lower bounds with its first tile's best rows by code, so the bound starts
// high. Measured alternatives for reading less: a k-means partition (IVF,
// 256 lists, probing the nearest) kept recall@10 0.925 of the exact top 10
// on the dev questions while scanning 20% of the rows and 0.977 at 51%, so
// the 0.98 gate saves at most half the scan; 4-bit codes leave 3% of the
// rows (3,000 at 100k) within their bound of the 20th best, each needing a
// gather to rescore, where int8 codes leave 25.
const tileRows = 4096

// admitted is a filter's rows (resolved by rowset) in the forms the two
// scans need.
type admitted struct {
	*rowset.Set
	rows  []int32 // Set.Rows: ascending by book, for the row scan
	tiles []int32 // tiles holding at least one admitted row, ascending
}

// setColumns writes row r's vector and its codes into its tile, adding
// tiles as rows grow. Callers hold mu for writing (or are in Open).
func (s *Store) setColumns(r int32, v []float32) {
	s.setColumnsBatch([]int32{r}, [][]float32{v})
}

// setColumnsBatch is setColumns for several rows: column by column, so
// rows next to each other (as a load appends them) are written to the same
// cache lines instead of one line per dimension and row.
func (s *Store) setColumnsBatch(rs []int32, vs [][]float32) {
	inv := make([]float32, len(rs))
	for i, r := range rs {
		t := int(r) / tileRows
		for len(s.cols) <= t {
			s.cols = append(s.cols, s.mem.alloc(s.dim*tileRows))
			s.codes = append(s.codes, s.mem.allocCodes(s.dim*tileRows))
			// Whole tiles of scales, so the kernels read full blocks.
			s.scale = append(s.scale, make([]float32, tileRows)...)
		}
		var m float32
		for _, x := range vs[i] {
			m = max(m, abs32(x))
		}
		s.scale[r] = m / 127
		if m > 0 {
			inv[i] = 127 / m
		}
	}
	// Blocks of 256 rows: their vectors (384 KB at 384 dimensions) stay in
	// cache while each column gets whole cache lines (and pages) of them.
	for b := 0; b < len(rs); b += 256 {
		e := min(b+256, len(rs))
		for j := range s.dim {
			for i := b; i < e; i++ {
				t, o := int(rs[i])/tileRows, j*tileRows+int(rs[i])%tileRows
				x := vs[i][j]
				s.cols[t][o] = x
				s.codes[t][o] = code(x * inv[i])
			}
		}
	}
}

// flushColumns writes the rows put collected while pend.on.
func (s *Store) flushColumns() {
	if len(s.pend.rs) > 0 {
		s.setColumnsBatch(s.pend.rs, s.pend.vs)
	}
	s.pend.rs, s.pend.vs = s.pend.rs[:0], s.pend.vs[:0]
}

// code rounds c (within [-127, 127] by construction) half away from zero,
// without a branch: the signs of a row's components are random.
func code(c float32) int8 {
	half := math.Float32frombits(math.Float32bits(c)&(1<<31) | math.Float32bits(0.5))
	return int8(int32(c + half))
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// allocCodes is alloc for int8 codes.
func (a *arena) allocCodes(n int) []int8 {
	f := a.alloc((n + 3) / 4)
	return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(f))), len(f)*4)[:n]
}

// freeCodes is free for what allocCodes returned.
func (a *arena) freeCodes(c []int8) {
	if cap(c) == 0 {
		return
	}
	a.free(unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(c))), cap(c)/4))
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
	var iw *intWeights
	if hasVNNI && len(idx) <= maxIntDims {
		iw = newIntWeights(w)
	}
	scan := func(tiles []int32) *shortlist {
		sl := &shortlist{lows: make(lowHeap, 0, k), k: k}
		bp := accPool.Get().(*[]float32)
		defer accPool.Put(bp)
		for i, t := range tiles {
			next := -1
			if i+1 < len(tiles) {
				next = int(tiles[i+1])
			}
			s.scanTile(int(t), next, idx, w, iw, a.Bits, *bp, sl)
		}
		return sl
	}
	// Splitting one search across the cores pays only while they would
	// otherwise idle: on bench/load.sh's 100k-chunk library two workers
	// cost 1.15–1.2× the CPU of one (0.44–0.47 against 0.38–0.39 CPU-ms a
	// search at k=20, same run; 1.4–1.5× before rescore merged the parts'
	// floors) for 0.28–0.30 against 0.38–0.39 ms of wall time: the workers
	// are started, joined and merged, and each shortlists more rows. So a
	// search that starts while another is scanning, or less than
	// s.scanIdle after one ended — the store is serving a stream of searches
	// whose other steps keep the cores busy — scans alone; a search on an
	// idle store still uses every core for its latency.
	workers := s.workers
	if s.scans.Add(1) > 1 || time.Since(s.opened) < time.Duration(s.lastScan.Load())+s.scanIdle {
		workers = 1
	}
	defer func() {
		s.lastScan.Store(int64(time.Since(s.opened)))
		s.scans.Add(-1)
	}()
	if len(a.tiles) < 4 || workers < 2 {
		return s.rescore(idx, w, k, scan(a.tiles))
	}
	workers = min(workers, len(a.tiles))
	parts := make([]*shortlist, workers)
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
	return s.rescore(idx, w, k, parts...)
}

// scanIdle is how long after a column scan ended a new one still counts
// as part of a stream of searches (Store.scanIdle; see scoreColumns): at
// 200 searches a second or more each scans alone.
const scanIdle = 5 * time.Millisecond

// shortlist is what a scan of coded scores leaves for exact rescoring:
// every row whose coded score plus its rounding bound (up) reached the
// k-th best lower bound seen when it was scanned, and the k best lower
// bounds themselves (coded score minus the bound).
//
// Rows are rescored once, after the scan, against the k-th best lower
// bound of all tiles: the k rows holding those bounds score at least that
// exactly, so no row whose upper bound falls short can be in the top k.
// Rescoring as the scan went, against the k-th best exact score so far,
// rescored the rows that led early tiles and were overtaken later (~145
// rows a search at k=20 on the dev questions); each exact score gathers
// one float from each of the query's columns, a cache miss apiece.
type shortlist struct {
	lows  lowHeap  // the k best lower bounds, worst on top
	cands []scored // rows that may reach the top k, with their upper bound
	k     int
}

// floor is the k-th best lower bound so far (-Inf until k rows were seen).
func (sl *shortlist) floor() float32 {
	if len(sl.lows) < sl.k {
		return float32(math.Inf(-1))
	}
	return sl.lows[0]
}

// offer adds row r with coded score c and bound b.
func (sl *shortlist) offer(r int32, c, b float32) {
	lo, up := c-b-1e-6, c+b+1e-6
	if up < sl.floor() {
		return
	}
	sl.cands = append(sl.cands, scored{r, up})
	sl.lows.offer(lo, sl.k)
}

// rescore scores exactly the rows of the shortlists that can still reach
// the k-th best lower bound of them all, and returns the k best, best first
// (ties by row, as the float scan orders them).
func (s *Store) rescore(idx []int32, w []float32, k int, parts ...*shortlist) []scored {
	floor := parts[0].floor()
	if len(parts) > 1 {
		// The parts scanned different rows, so the k-th best of all their
		// lower bounds is one too: k rows score at least that exactly. The
		// best part's own floor alone let 1.7× the rows through to exact
		// rescoring (84 against 50 a search on bench/load.sh's 100k-chunk
		// library at k=20), each a cache miss per query dimension.
		var all lowHeap
		for _, sl := range parts {
			for _, lo := range sl.lows {
				all.offer(lo, k)
			}
		}
		if len(all) == k {
			floor = all[0]
		}
	}
	var out []scored
	for _, sl := range parts {
		for _, c := range sl.cands {
			if c.score >= floor {
				out = append(out, scored{c.row, exactAt(s.cols[int(c.row)/tileRows], idx, w, int(c.row)%tileRows)})
			}
		}
	}
	out = sorted(out)
	return out[:min(k, len(out))]
}

// lowHeap is a min-heap of the k best lower bounds.
type lowHeap []float32

// offer keeps v if it is among the k best.
func (h *lowHeap) offer(v float32, k int) {
	l := *h
	if len(l) < k {
		l = append(l, v)
		for i := len(l) - 1; i > 0; {
			p := (i - 1) / 2
			if l[p] <= l[i] {
				break
			}
			l[p], l[i] = l[i], l[p]
			i = p
		}
		*h = l
		return
	}
	if v <= l[0] {
		return
	}
	l[0] = v
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(l) {
			break
		}
		if c+1 < len(l) && l[c+1] < l[c] {
			c++
		}
		if l[i] <= l[c] {
			break
		}
		l[i], l[c] = l[c], l[i]
		i = c
	}
}

// scanTile scores tile t's rows by their codes into acc and offers the
// admitted ones to sl; with iw, by the integer kernels. next is the tile
// the scan reads after t (-1: none), whose first columns the integer
// kernel prefetches while it adds t's last ones.
func (s *Store) scanTile(t, next int, idx []int32, w []float32, iw *intWeights, adm []uint64, acc []float32, sl *shortlist) {
	n := min(tileRows, len(s.rows)-t*tileRows)
	if n <= 0 {
		return
	}
	// The float kernel works in blocks of 8 rows, the integer one in
	// blocks of 64; a tile's columns always have tileRows entries (zero
	// past the last row), and so does acc.
	n8 := (n + 7) &^ 7
	code := s.codes[t]
	var sumW float32
	for i := 0; i < len(idx); i += 4 {
		sumW += abs32(w[i]) + abs32(w[i+1]) + abs32(w[i+2]) + abs32(w[i+3])
	}
	// Half a step per code, with room for float32 rounding in the coded sum.
	half := sumW*(0.5+1e-3) + 1e-6
	if iw != nil {
		n64 := (n + 63) &^ 63
		col := func(code []int8, j int32) []int8 { return code[int(j)*tileRows : int(j)*tileRows+n64] }
		sums := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(acc))), n64)
		clear(sums)
		// Each column of a tile is one 4 KB block, a page the hardware
		// prefetcher learns anew, so the kernel prefetches the next four
		// columns (the next tile's first four after the last) while it
		// reads these: the scan waits on memory, not on arithmetic. It
		// took the kernel's time 3–5% down (32 random columns of 100k
		// rows, with and without, interleaved in one process).
		var ahead [4][]int8
		for i := 0; i < len(idx); i += 4 {
			nc, ni := code, i+4
			if ni == len(idx) {
				nc, ni = code, i // nothing after: these columns again
				if next >= 0 && len(s.codes[next]) > 0 {
					nc, ni = s.codes[next], 0
				}
			}
			for d := range ahead {
				ahead[d] = col(nc, idx[ni+d])
			}
			codesAdd(sums, col(code, idx[i]), col(code, idx[i+1]), col(code, idx[i+2]), col(code, idx[i+3]), iw.hi[i/4], iw.lo[i/4], &ahead)
		}
		codesDone(sums, iw.corr, iw.ws)
		half += iw.bound
		acc = acc[:n8]
	} else {
		acc = acc[:n8]
		clear(acc)
		col := func(j int32) []int8 { return code[int(j)*tileRows : int(j)*tileRows+n8] }
		for i := 0; i < len(idx); i += 4 {
			fusedCodes4(acc, col(idx[i]), col(idx[i+1]), col(idx[i+2]), col(idx[i+3]), w[i:i+4])
		}
	}
	base := t * tileRows
	words := adm[base/64 : (base+n+63)/64]
	scale := s.scale[base : base+n8]
	seeded := len(sl.lows) < sl.k
	if seeded {
		// Fill the lower bounds with this tile's best rows by code first,
		// so the floor starts high instead of at whatever rows come first
		// (which would all be shortlisted). Only the first tile of a scan
		// does this, while fewer than k rows were seen; the loop below then
		// must not count this tile's rows again.
		for wi, word := range words {
			for word != 0 {
				b := bits.TrailingZeros64(word)
				word &= word - 1
				o := wi*64 + b
				sl.lows.offer(scale[o]*acc[o]-scale[o]*half-1e-6, sl.k)
			}
		}
	}
	var mask *[tileRows / 64]uint64
	if len(sl.lows) >= sl.k {
		// Rows whose bound reaches the floor so far, marked with SIMD; the
		// floor only rises, so offer re-checks them.
		mask = maskPool.Get().(*[tileRows / 64]uint64)
		defer maskPool.Put(mask)
		aboveMask(acc, scale, half, sl.floor()-1e-6, mask[:(n8+63)/64])
	}
	for wi, word := range words {
		if mask != nil {
			word &= mask[wi]
		}
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &= word - 1
			o := wi*64 + b
			if c, b := scale[o]*acc[o], scale[o]*half; seeded {
				if c+b+1e-6 >= sl.floor() {
					sl.cands = append(sl.cands, scored{int32(base + o), c + b + 1e-6})
				}
			} else {
				sl.offer(int32(base+o), c, b)
			}
		}
	}
}

// maskPool recycles aboveMask's bitmaps.
var maskPool = sync.Pool{New: func() any { return new([tileRows / 64]uint64) }}

// aboveMaskGo is the portable aboveMask: bit i of mask is set when
// scale[i]·(acc[i]+half) ≥ thr, for len(acc) a multiple of 8.
func aboveMaskGo(acc, scale []float32, half, thr float32, mask []uint64) {
	clear(mask)
	scale = scale[:len(acc)]
	for i, a := range acc {
		if scale[i]*(a+half) >= thr {
			mask[i/64] |= 1 << (i % 64)
		}
	}
}

// exactAt is row o's score from the float columns: the same float32
// products and sums, in the same order, as the float column scan made.
func exactAt(tile []float32, idx []int32, w []float32, o int) float32 {
	var sc float32
	for i := 0; i < len(idx); i += 4 {
		sc += w[i]*tile[int(idx[i])*tileRows+o] + w[i+1]*tile[int(idx[i+1])*tileRows+o] +
			w[i+2]*tile[int(idx[i+2])*tileRows+o] + w[i+3]*tile[int(idx[i+3])*tileRows+o]
	}
	return sc
}

// fusedCodesGo adds w0·x0 + w1·x1 + w2·x2 + w3·x3 to acc; the portable
// version of fusedCodes4.
func fusedCodesGo(acc []float32, x0, x1, x2, x3 []int8, w []float32) {
	x0 = x0[:len(acc)]
	x1 = x1[:len(acc)]
	x2 = x2[:len(acc)]
	x3 = x3[:len(acc)]
	a, b, c, d := w[0], w[1], w[2], w[3]
	for i := range acc {
		acc[i] += a*float32(x0[i]) + b*float32(x1[i]) + c*float32(x2[i]) + d*float32(x3[i])
	}
}

// intWeights are a query's weights as the integer kernels take them,
// where CPUs have AVX-512 VNNI: the float kernel spends a sign extension,
// a conversion and a multiply-add per code, VPDPBUSD adds four codes'
// products at once, exactly, in int32. Each weight w is W = round(w/ws)
// steps of ws = max|w|/16256, split into W = 128·h + l with h and l
// signed bytes (|l| ≤ 64), so a code's product is two byte products.
// Rounding the weights moves a row's coded sum (in code steps) by at most
// 127·Σ|w − ws·W| (bound), which the scan adds to the codes' own half
// step: the shortlist still holds every row of the exact top k, and exact
// rescoring decides it, so results are unchanged (each weight moves at
// most ws/2, which adds at most 127/32512 of max|w| per dimension to the
// codes' half step of |w|/2: about 1%). On bench/load.sh's library a
// vector search took 0.39–0.41 CPU-ms against 0.40–0.56 with the float
// kernel on one worker, 0.50–0.55 against 0.57–0.63 on two (alternated in
// the same runs): the scan mostly waits on memory.
type intWeights struct {
	hi, lo []int32 // per group of four dimensions, four signed bytes each (the first dimension's lowest)
	corr   int32   // 128·ΣW: reading the codes as c+128 (unsigned) adds it to every sum
	ws     float32
	bound  float32
}

// maxIntDims keeps the integer sums inside int32: a row's sum of
// (c+128)·W is at most 255·16256 per dimension.
const maxIntDims = 512

func newIntWeights(w []float32) *intWeights {
	var m float32
	for _, x := range w {
		m = max(m, abs32(x))
	}
	iw := &intWeights{ws: m / 16256}
	var sum int64
	var off float64
	for g := 0; g < len(w); g += 4 {
		var h, l uint32
		for d := range 4 {
			var W int64
			if iw.ws > 0 {
				W = min(max(int64(math.Round(float64(w[g+d])/float64(iw.ws))), -16256), 16256)
			}
			sum += W
			off += math.Abs(float64(w[g+d]) - float64(iw.ws)*float64(W))
			hp := (W + 64) >> 7 // floor division: l = W − 128·h lies in [−64, 63]
			h |= uint32(uint8(int8(hp))) << (8 * d)
			l |= uint32(uint8(int8(W-128*hp))) << (8 * d)
		}
		iw.hi = append(iw.hi, int32(h))
		iw.lo = append(iw.lo, int32(l))
	}
	iw.corr = int32(128 * sum)
	iw.bound = float32(127*off) * (1 + 1e-5)
	return iw
}

// intPos is where codesAdd keeps row i of a block of 64: the rows whose
// four codes one VPDPBUSD reads are the dwords of one 128-bit lane.
func intPos(i int) int {
	lane, q, j := i/16, i%16/4, i%4
	return 16*q + 4*lane + j
}

// codesAddGo is the portable codesAdd, in the same order.
func codesAddGo(acc []int32, x0, x1, x2, x3 []int8, wh, wl int32) {
	xs := [4][]int8{x0, x1, x2, x3}
	var W [4]int32
	for d := range W {
		W[d] = 128*int32(int8(wh>>(8*d))) + int32(int8(wl>>(8*d)))
	}
	for b := 0; b < len(acc); b += 64 {
		for i := range 64 {
			var sum int32
			for d, x := range xs {
				sum += (int32(x[b+i]) + 128) * W[d]
			}
			acc[b+intPos(i)] += sum
		}
	}
}

// codesDoneGo is the portable codesDone.
func codesDoneGo(acc []int32, corr int32, ws float32) {
	f := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(acc))), len(acc))
	var block [64]float32
	for b := 0; b < len(acc); b += 64 {
		for i := range block {
			block[i] = float32(acc[b+intPos(i)]-corr) * ws
		}
		copy(f[b:b+64], block[:])
	}
}

// freeVectors releases both copies of the vectors. Callers hold mu for
// writing, so no scan is reading them.
func (s *Store) freeVectors() {
	s.mem.free(s.vecs)
	for _, t := range s.cols {
		s.mem.free(t)
	}
	for _, c := range s.codes {
		s.mem.freeCodes(c)
	}
	s.vecs, s.cols, s.codes, s.scale = nil, nil, nil, nil
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
