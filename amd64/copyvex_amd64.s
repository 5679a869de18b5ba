#include "textflag.h"
#include "fold_amd64.h"
#include "shift_amd64.h"
#include "copy_amd64.h"

// The avx2-vpclmul kernel's copying routines: foldVEX (ymmvex_amd64.s) and
// fusedVEX (fusionvex_amd64.s) with every load also stored to dst, as
// copy_amd64.s and copyfused_amd64.s do for the other kernels. VEX encoded,
// registers 0-15 only. DI = dst - src throughout.

// func copyFoldVEX(crc uint32, dst, src []byte) uint32
// foldVEX, copying; len(src) >= 128 and a multiple of 16.
TEXT ·copyFoldVEX(SB), NOSPLIT, $0-60
	MOVL crc+0(FP), AX
	MOVQ dst_base+8(FP), DI
	MOVQ src_base+32(FP), SI
	MOVQ src_len+40(FP), CX
	SUBQ SI, DI

	CPLOAD(VMOVDQU, 0, Y0)
	CPLOAD(VMOVDQU, 32, Y1)
	CPLOAD(VMOVDQU, 64, Y2)
	CPLOAD(VMOVDQU, 96, Y3)
	VMOVQ AX, X4
	VPXOR Y4, Y0, Y0
	ADDQ  $128, SI
	SUBQ  $128, CX
	VBROADCASTI128 ·kX128(SB), Y8
	CMPQ  CX, $128
	JB    reduce

loop128:
	CPLOAD(VMOVDQU, 0, Y9)
	FOLDVEX(Y0, Y8, Y4, Y9)
	CPLOAD(VMOVDQU, 32, Y10)
	FOLDVEX(Y1, Y8, Y5, Y10)
	CPLOAD(VMOVDQU, 64, Y11)
	FOLDVEX(Y2, Y8, Y6, Y11)
	CPLOAD(VMOVDQU, 96, Y12)
	FOLDVEX(Y3, Y8, Y7, Y12)
	ADDQ $128, SI
	SUBQ $128, CX
	CMPQ CX, $128
	JAE  loop128

reduce:
	VBROADCASTI128 ·kX64(SB), Y8
	FOLDVEXINTO(Y0, Y8, Y4, Y2)
	FOLDVEXINTO(Y1, Y8, Y5, Y3)
	VBROADCASTI128 ·kX32(SB), Y8
	FOLDVEXINTO(Y2, Y8, Y4, Y3)
	CMPQ CX, $32
	JB   lanes

loop32:
	CPLOAD(VMOVDQU, 0, Y9)
	FOLDVEX(Y3, Y8, Y4, Y9)
	ADDQ $32, SI
	SUBQ $32, CX
	CMPQ CX, $32
	JAE  loop32

lanes:
	VMOVDQU      ·kYLanes(SB), Y8
	VPCLMULQDQ   $0x00, Y8, Y3, Y4
	VPCLMULQDQ   $0x11, Y8, Y3, Y3
	VPXOR        Y4, Y3, Y3
	VEXTRACTI128 $1, Y3, X4
	VPXOR        X4, X3, X3
	TESTQ        CX, CX
	JZ           reduced
	VMOVDQU      ·kX16(SB), X8
	CPLOAD(VMOVDQU, 0, X9)
	FOLDVEX(X3, X8, X4, X9)

reduced:
	VMOVQ   X3, R8
	VPEXTRQ $1, X3, R9
	VZEROUPPER
	XORL    AX, AX
	CRC32Q  R8, AX
	CRC32Q  R9, AX
	MOVL    AX, ret+56(FP)
	RET

// CPCHAINSVEX finishes the three chains, copying: R13 more quadwords of
// each (R13 >= 1), then C runs on to R11. AX, BX, DX are the states of A,
// B, C; R8, R9, R10 their pointers; R12 is clobbered.
#define CPCHAINSVEX(lrest, l8, ldone) \
lrest: \
	CPQ(R8, 0, R12, AX) \
	CPQ(R9, 0, R12, BX) \
	CPQ(R10, 0, R12, DX) \
	ADDQ $8, R8 \
	ADDQ $8, R9 \
	ADDQ $8, R10 \
	DECQ R13 \
	JNZ  lrest \
	CMPQ R10, R11 \
	JAE  ldone \
l8: \
	CPQ(R10, 0, R12, DX) \
	ADDQ $8, R10 \
	CMPQ R10, R11 \
	JB   l8 \
ldone:

// CPROW3 copies one quadword of each chain, at offset off, into its chain.
#define CPROW3(off) \
	CPQ(R8, off, R12, AX) \
	CPQ(R9, off, R12, BX) \
	CPQ(R10, off, R12, DX)

// func copyFusedVEX(crc uint32, dst, src []byte, iters, extra, s int) uint32
// fusedVEX, copying. Raw state in and out. dst is 64-byte aligned,
// iters >= 1, s >= 32·iters, len(src) = iters·96 + extra·32 + 3·s + t with
// 0 <= t < 24 and t a multiple of 8.
TEXT ·copyFusedVEX(SB), NOSPLIT, $0-84
	MOVQ src_base+32(FP), SI
	MOVQ src_len+40(FP), R11
	ADDQ SI, R11              // R11 = end of src
	MOVQ iters+56(FP), CX
	MOVQ s+72(FP), DI         // s, until DI becomes dst - src

	// R8, R9, R10 = starts of A, B, C.
	IMUL3Q $96, CX, R8
	ADDQ   SI, R8
	MOVQ   extra+64(FP), R12
	SHLQ   $5, R12
	ADDQ   R12, R8
	LEAQ   (R8)(DI*1), R9
	LEAQ   (R9)(DI*1), R10

	// X9, X10, X11 = T(8|ABC|), T(8|BC|), T(8|C|).
	MOVQ R11, AX
	SUBQ R8, AX
	XPOW8N(AX, R12, R13, BX, X12, X13, k1loop, k1done)
	VMOVQ R12, X9
	MOVQ R11, AX
	SUBQ R9, AX
	XPOW8N(AX, R12, R13, BX, X12, X13, k2loop, k2done)
	VMOVQ R12, X10
	MOVQ R11, AX
	SUBQ R10, AX
	XPOW8N(AX, R12, R13, BX, X12, X13, k3loop, k3done)
	VMOVQ R12, X11

	// R13 = quadwords of each chain left after the loop's iters-1 rounds.
	MOVQ DI, R13
	SHRQ $3, R13
	LEAQ -1(CX), R12
	SHLQ $2, R12
	SUBQ R12, R13

	MOVQ dst_base+8(FP), DI
	SUBQ SI, DI               // DI = dst - src

	MOVL crc+0(FP), AX
	CPLOAD(VMOVDQU, 0, Y0)
	CPLOAD(VMOVDQU, 32, Y1)
	CPLOAD(VMOVDQU, 64, Y2)
	VMOVQ AX, X4              // incoming state into the first 4 bytes
	VPXOR Y4, Y0, Y0
	ADDQ  $96, SI
	VBROADCASTI128 ·kX96(SB), Y8
	XORL  AX, AX
	XORL  BX, BX
	XORL  DX, DX

	DECQ CX
	JZ   chains

loop:
	CPLOAD(VMOVDQU, 0, Y4)
	FOLDVEX(Y0, Y8, Y7, Y4)
	CPROW3(0)
	CPLOAD(VMOVDQU, 32, Y5)
	FOLDVEX(Y1, Y8, Y7, Y5)
	CPROW3(8)
	CPROW3(16)
	CPLOAD(VMOVDQU, 64, Y6)
	FOLDVEX(Y2, Y8, Y7, Y6)
	CPROW3(24)
	ADDQ $96, SI
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, R10
	DECQ CX
	JNZ  loop

chains:
	CPCHAINSVEX(rest, tail8, reduce)

	// Reduce V: Y0 and Y1 are 64 and 32 bytes before Y2, the extra
	// 32-byte blocks, 2 lanes → 1, then CRC32Q twice: v in R12.
	VBROADCASTI128 ·kX64(SB), Y7
	VBROADCASTI128 ·kX32(SB), Y8
	FOLDVEXINTO(Y0, Y7, Y4, Y2)
	FOLDVEXINTO(Y1, Y8, Y5, Y2)
	MOVQ  extra+64(FP), CX
	TESTQ CX, CX
	JZ    lanes

extra:
	CPLOAD(VMOVDQU, 0, Y6)
	FOLDVEX(Y2, Y8, Y4, Y6)
	ADDQ $32, SI
	DECQ CX
	JNZ  extra

lanes:
	VMOVDQU      ·kYLanes(SB), Y8
	VPCLMULQDQ   $0x00, Y8, Y2, Y4
	VPCLMULQDQ   $0x11, Y8, Y2, Y2
	VPXOR        Y4, Y2, Y2
	VEXTRACTI128 $1, Y2, X4
	VPXOR        X4, X2, X2
	VMOVQ        X2, CX
	VPEXTRQ      $1, X2, SI
	VZEROUPPER
	XORL         R12, R12
	CRC32Q       CX, R12
	CRC32Q       SI, R12

	// X12 = clmul(v, T(8|ABC|)) ^ clmul(a, T(8|BC|)) ^ clmul(b, T(8|C|)).
	VMOVQ      R12, X12
	VPCLMULQDQ $0x00, X9, X12, X12
	VMOVQ      AX, X13
	VPCLMULQDQ $0x00, X10, X13, X13
	VMOVQ      BX, X14
	VPCLMULQDQ $0x00, X11, X14, X14
	VPXOR      X13, X12, X12
	VPXOR      X14, X12, X12
	VMOVQ      X12, CX
	XORL       AX, AX
	CRC32Q     CX, AX
	XORL       DX, AX
	MOVL       AX, ret+80(FP)
	RET
