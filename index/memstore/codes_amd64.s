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
