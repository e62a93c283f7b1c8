//go:build !amd64

package memstore

// hasAVX2 is false off amd64: the portable kernel answers.
var hasAVX2 = false

// fusedCodes4 adds w[0]·x0 + w[1]·x1 + w[2]·x2 + w[3]·x3 to acc.
func fusedCodes4(acc []float32, x0, x1, x2, x3 []int8, w []float32) {
	fusedCodesGo(acc, x0, x1, x2, x3, w)
}

// aboveMask sets bit i of mask when scale[i]·(acc[i]+half) ≥ thr.
func aboveMask(acc, scale []float32, half, thr float32, mask []uint64) {
	aboveMaskGo(acc, scale, half, thr, mask)
}
