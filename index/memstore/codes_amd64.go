package memstore

import "golang.org/x/sys/cpu"

// hasAVX2 says fusedCodes4 may use the assembly kernel.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// hasVNNI says scanTile may use the integer kernels (codesAdd, codesDone).
var hasVNNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VNNI

// fusedCodes4 adds w[0]·x0 + w[1]·x1 + w[2]·x2 + w[3]·x3 to acc, whose
// length is a multiple of 8 no longer than the columns.
func fusedCodes4(acc []float32, x0, x1, x2, x3 []int8, w []float32) {
	if !hasAVX2 {
		fusedCodesGo(acc, x0, x1, x2, x3, w)
		return
	}
	n := len(acc) &^ 7
	if n == 0 {
		return
	}
	_, _, _, _, _ = x0[n-1], x1[n-1], x2[n-1], x3[n-1], w[3]
	fusedCodesAVX2(&acc[0], &x0[0], &x1[0], &x2[0], &x3[0], n, &w[0])
	if n < len(acc) {
		fusedCodesGo(acc[n:], x0[n:], x1[n:], x2[n:], x3[n:], w)
	}
}

//go:noescape
func fusedCodesAVX2(acc *float32, x0, x1, x2, x3 *int8, n int, w *float32)

// aboveMask sets bit i of mask when scale[i]·(acc[i]+half) ≥ thr (NaN
// never), for len(acc) a multiple of 8 and mask of (len(acc)+63)/64 words.
func aboveMask(acc, scale []float32, half, thr float32, mask []uint64) {
	if !hasAVX2 || len(acc) == 0 {
		aboveMaskGo(acc, scale, half, thr, mask)
		return
	}
	n := len(acc)
	_, _ = scale[n-1], mask[(n-1)/64]
	clear(mask)
	aboveMaskAVX2(&acc[0], &scale[0], n, half, thr, &mask[0])
}

//go:noescape
func aboveMaskAVX2(acc, scale *float32, n int, half, thr float32, mask *uint64)

// codesAdd adds to acc (len a positive multiple of 64, no longer than the
// columns) the four columns' codes times their integer weights, whose high
// and low parts are the signed bytes of wh and wl (intWeights), in the
// interleaved order codesDone undoes; without VNNI in Go (scanTile then
// uses the float kernel). The kernel also prefetches the same rows of the
// four columns in next, the ones the caller adds after these (see
// scanTile).
func codesAdd(acc []int32, x0, x1, x2, x3 []int8, wh, wl int32, next *[4][]int8) {
	if !hasVNNI {
		codesAddGo(acc, x0, x1, x2, x3, wh, wl)
		return
	}
	n := len(acc)
	_, _, _, _ = x0[n-1], x1[n-1], x2[n-1], x3[n-1]
	_, _, _, _ = next[0][n-1], next[1][n-1], next[2][n-1], next[3][n-1]
	codesAddVNNI(&acc[0], &x0[0], &x1[0], &x2[0], &x3[0], n, wh, wl, &next[0][0], &next[1][0], &next[2][0], &next[3][0])
}

// codesDone turns codesAdd's sums into the coded scores, float32 in row
// order in the same memory: (sum − corr)·ws.
func codesDone(acc []int32, corr int32, ws float32) {
	if !hasVNNI {
		codesDoneGo(acc, corr, ws)
		return
	}
	codesDoneVNNI(&acc[0], len(acc), corr, ws)
}

//go:noescape
func codesAddVNNI(acc *int32, x0, x1, x2, x3 *int8, n int, wh, wl int32, p0, p1, p2, p3 *int8)

//go:noescape
func codesDoneVNNI(acc *int32, n int, corr int32, ws float32)
