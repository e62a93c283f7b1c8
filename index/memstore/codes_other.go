//go:build !amd64

package memstore

// hasAVX2 and hasVNNI are false off amd64: the portable kernel answers.
var hasAVX2, hasVNNI = false, false

// fusedCodes4 adds w[0]·x0 + w[1]·x1 + w[2]·x2 + w[3]·x3 to acc.
func fusedCodes4(acc []float32, x0, x1, x2, x3 []int8, w []float32) {
	fusedCodesGo(acc, x0, x1, x2, x3, w)
}

// aboveMask sets bit i of mask when scale[i]·(acc[i]+half) ≥ thr.
func aboveMask(acc, scale []float32, half, thr float32, mask []uint64) {
	aboveMaskGo(acc, scale, half, thr, mask)
}

// codesAdd is the portable codesAdd of amd64.
func codesAdd(acc []int32, x0, x1, x2, x3 []int8, wh, wl int32, _ *[4][]int8) {
	codesAddGo(acc, x0, x1, x2, x3, wh, wl)
}

// codesDone is the portable codesDone of amd64.
func codesDone(acc []int32, corr int32, ws float32) {
	codesDoneGo(acc, corr, ws)
}
