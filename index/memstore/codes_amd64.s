#include "textflag.h"

// func fusedCodesAVX2(acc *float32, x0, x1, x2, x3 *int8, n int, w *float32)
// acc[i] += w[0]*x0[i] + w[1]*x1[i] + w[2]*x2[i] + w[3]*x3[i] for i < n,
// n a positive multiple of 8: eight rows per step, each int8 sign-extended
// to int32, converted to float32 and fused-multiply-added.
TEXT ·fusedCodesAVX2(SB), NOSPLIT, $0-56
	MOVQ acc+0(FP), DI
	MOVQ x0+8(FP), R8
	MOVQ x1+16(FP), R9
	MOVQ x2+24(FP), R10
	MOVQ x3+32(FP), R11
	MOVQ n+40(FP), CX
	MOVQ w+48(FP), AX
	VBROADCASTSS 0(AX), Y8
	VBROADCASTSS 4(AX), Y9
	VBROADCASTSS 8(AX), Y10
	VBROADCASTSS 12(AX), Y11
	XORQ SI, SI

loop:
	VPMOVSXBD (R8)(SI*1), Y0
	VPMOVSXBD (R9)(SI*1), Y1
	VPMOVSXBD (R10)(SI*1), Y2
	VPMOVSXBD (R11)(SI*1), Y3
	VCVTDQ2PS Y0, Y0
	VCVTDQ2PS Y1, Y1
	VCVTDQ2PS Y2, Y2
	VCVTDQ2PS Y3, Y3
	VMOVUPS (DI)(SI*4), Y4
	VFMADD231PS Y8, Y0, Y4
	VFMADD231PS Y9, Y1, Y4
	VFMADD231PS Y10, Y2, Y4
	VFMADD231PS Y11, Y3, Y4
	VMOVUPS Y4, (DI)(SI*4)
	ADDQ $8, SI
	CMPQ SI, CX
	JLT  loop
	VZEROUPPER
	RET

// func aboveMaskAVX2(acc, scale *float32, n int, half, thr float32, mask *uint64)
// Byte i/8 of mask gets the rows i..i+7 whose scale·(acc+half) ≥ thr (the
// bytes of a little-endian uint64 are its bits in order); n a positive
// multiple of 8.
TEXT ·aboveMaskAVX2(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), SI
	MOVQ scale+8(FP), DX
	MOVQ n+16(FP), CX
	VBROADCASTSS half+24(FP), Y1
	VBROADCASTSS thr+28(FP), Y2
	MOVQ mask+32(FP), DI
	XORQ AX, AX
	XORQ BX, BX

mloop:
	VMOVUPS (SI)(AX*4), Y0
	VADDPS Y1, Y0, Y0
	VMULPS (DX)(AX*4), Y0, Y0
	VCMPPS $0x0D, Y2, Y0, Y3
	VMOVMSKPS Y3, R8
	MOVB R8, (DI)(BX*1)
	ADDQ $8, AX
	INCQ BX
	CMPQ AX, CX
	JLT  mloop
	VZEROUPPER
	RET

// func codesAddVNNI(acc *int32, x0, x1, x2, x3 *int8, n int, wh, wl int32, p0, p1, p2, p3 *int8)
// Adds to acc, for the rows i < n (a positive multiple of 64), the four
// codes' products with their integer weights W = 128·h + l, whose high
// parts h are the signed bytes of wh (x0's lowest) and low parts l those
// of wl. A code c is read as the unsigned byte c+128 (VPDPBUSD multiplies
// unsigned by signed bytes), which adds 128·ΣW to every sum (the caller
// takes it off, codesDoneVNNI). The four columns' bytes are interleaved
// into one dword per row, so one VPDPBUSD adds the four products of 16
// rows: acc keeps each block of 64 rows in that interleaved order, dword
// 16q+4l+j of the block holding row 16l+4q+j. Alongside, it prefetches
// the same rows of p0..p3 (the next four columns the caller adds).
TEXT ·codesAddVNNI(SB), NOSPLIT, $0-88
	MOVQ acc+0(FP), DI
	MOVQ p1+64(FP), BX
	MOVQ p2+72(FP), R12
	MOVQ p3+80(FP), R13
	MOVQ x0+8(FP), R8
	MOVQ x1+16(FP), R9
	MOVQ x2+24(FP), R10
	MOVQ x3+32(FP), R11
	MOVQ n+40(FP), CX
	MOVL wh+48(FP), AX
	VPBROADCASTD AX, Z20
	MOVL wl+52(FP), AX
	VPBROADCASTD AX, Z21
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z31
	MOVQ p0+56(FP), AX
	XORQ SI, SI
	MOVQ DI, DX

aloop:
	PREFETCHT0 (AX)(SI*1)
	PREFETCHT0 (BX)(SI*1)
	PREFETCHT0 (R12)(SI*1)
	PREFETCHT0 (R13)(SI*1)
	VPXORD (R8)(SI*1), Z31, Z8
	VPXORD (R9)(SI*1), Z31, Z9
	VPXORD (R10)(SI*1), Z31, Z10
	VPXORD (R11)(SI*1), Z31, Z11
	VPUNPCKLBW Z9, Z8, Z12
	VPUNPCKHBW Z9, Z8, Z13
	VPUNPCKLBW Z11, Z10, Z14
	VPUNPCKHBW Z11, Z10, Z15
	VPUNPCKLWD Z14, Z12, Z16
	VPUNPCKHWD Z14, Z12, Z17
	VPUNPCKLWD Z15, Z13, Z18
	VPUNPCKHWD Z15, Z13, Z19
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPDPBUSD Z20, Z16, Z0
	VPDPBUSD Z20, Z17, Z1
	VPDPBUSD Z20, Z18, Z2
	VPDPBUSD Z20, Z19, Z3
	VPSLLD $7, Z0, Z0
	VPSLLD $7, Z1, Z1
	VPSLLD $7, Z2, Z2
	VPSLLD $7, Z3, Z3
	VPADDD 0(DX), Z0, Z0
	VPADDD 64(DX), Z1, Z1
	VPADDD 128(DX), Z2, Z2
	VPADDD 192(DX), Z3, Z3
	VPDPBUSD Z21, Z16, Z0
	VPDPBUSD Z21, Z17, Z1
	VPDPBUSD Z21, Z18, Z2
	VPDPBUSD Z21, Z19, Z3
	VMOVDQU32 Z0, 0(DX)
	VMOVDQU32 Z1, 64(DX)
	VMOVDQU32 Z2, 128(DX)
	VMOVDQU32 Z3, 192(DX)
	ADDQ $256, DX
	ADDQ $64, SI
	CMPQ SI, CX
	JLT  aloop
	VZEROUPPER
	RET

// func codesDoneVNNI(acc *int32, n int, corr int32, ws float32)
// Turns codesAddVNNI's sums for the rows i < n (a positive multiple of 64)
// into float32 in row order, in place: (sum − corr)·ws (corr negated
// and added).
TEXT ·codesDoneVNNI(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), DI
	MOVQ n+8(FP), CX
	MOVL corr+16(FP), AX
	NEGL AX
	VPBROADCASTD AX, Z30
	VBROADCASTSS ws+20(FP), Z29
	XORQ SI, SI

dloop:
	VPADDD 0(DI), Z30, Z0
	VPADDD 64(DI), Z30, Z1
	VPADDD 128(DI), Z30, Z2
	VPADDD 192(DI), Z30, Z3
	VCVTDQ2PS Z0, Z0
	VCVTDQ2PS Z1, Z1
	VCVTDQ2PS Z2, Z2
	VCVTDQ2PS Z3, Z3
	VMULPS Z29, Z0, Z0
	VMULPS Z29, Z1, Z1
	VMULPS Z29, Z2, Z2
	VMULPS Z29, Z3, Z3
	// Lane l of Zq holds rows 16l+4q..16l+4q+3: transpose the 4×4 lanes.
	VSHUFI64X2 $0x44, Z1, Z0, Z8
	VSHUFI64X2 $0x44, Z3, Z2, Z9
	VSHUFI64X2 $0xEE, Z1, Z0, Z10
	VSHUFI64X2 $0xEE, Z3, Z2, Z11
	VSHUFI64X2 $0x88, Z9, Z8, Z12
	VSHUFI64X2 $0xDD, Z9, Z8, Z13
	VSHUFI64X2 $0x88, Z11, Z10, Z14
	VSHUFI64X2 $0xDD, Z11, Z10, Z15
	VMOVUPS Z12, 0(DI)
	VMOVUPS Z13, 64(DI)
	VMOVUPS Z14, 128(DI)
	VMOVUPS Z15, 192(DI)
	ADDQ $256, DI
	ADDQ $64, SI
	CMPQ SI, CX
	JLT  dloop
	VZEROUPPER
	RET
