#include "textflag.h"
#include "tail_amd64.h"
#include "fold_amd64.h"
#include "shift_amd64.h"

// The fused loop of fusion_amd64.s for CPUs with VPCLMULQDQ and AVX2 but no
// AVX-512: ymm folding (FOLDVEX, VEX encoded, registers 0-15) beside three
// CRC32Q chains, one loop for both. The split is planFused's:
//
//	V: iters·96 + extra·32 bytes, folded by 3 ymm accumulators
//	A, B: s bytes each, C: s + t bytes, one CRC32Q chain each
//
// Each iteration folds 96 bytes of V (6 VPCLMULQDQ) and reads 4 quadwords
// of each chain (12 CRC32Q): 192 bytes. The split is set for a ymm
// VPCLMULQDQ every other cycle (what the Zen 5 class machine of doc.go
// does) and a CRC32Q every cycle with a latency of 3 (the classic x86
// rate; Zen 5 does more): 12 cycles of each unit per iteration, 16 bytes
// per cycle at best against 8 for either alone. After the loop V reduces to a state v and the four states join at
// the end of the buffer as in fusion_amd64.s:
//
//	crc = CRC32Q(0, clmul(v, T(8|ABC|)) ^ clmul(a, T(8|BC|)) ^ clmul(b, T(8|C|))) ^ c

// CHAINSVEX finishes the three chains: R13 more quadwords of each
// (R13 >= 1), then C runs on to the end of the buffer (DI). AX, BX, DX
// are the states of A, B, C; R8, R9, R10 their pointers; CX is clobbered.
#define CHAINSVEX(lrest, l8, l7, l3, l1, ldone) \
lrest: \
	CRC32Q 0(R8), AX \
	CRC32Q 0(R9), BX \
	CRC32Q 0(R10), DX \
	ADDQ   $8, R8 \
	ADDQ   $8, R9 \
	ADDQ   $8, R10 \
	DECQ   R13 \
	JNZ    lrest \
	MOVQ   DI, CX \
	SUBQ   R10, CX \
	CMPQ   CX, $8 \
	JB     l7 \
l8: \
	CRC32Q 0(R10), DX \
	ADDQ   $8, R10 \
	SUBQ   $8, CX \
	CMPQ   CX, $8 \
	JAE    l8 \
l7: \
	CRC32TAIL7(R10, CX, DX, l3, l1, ldone)

// ROW3 runs one quadword of each chain, at offset off.
#define ROW3(off) \
	CRC32Q off(R8), AX \
	CRC32Q off(R9), BX \
	CRC32Q off(R10), DX

// func fusedVEX(crc uint32, p []byte, iters, extra, s int) uint32
// Raw state in and out. p is 64-byte aligned, iters >= 1, s >= 32·iters,
// len(p) >= iters·96 + extra·32 + 3·s.
TEXT ·fusedVEX(SB), NOSPLIT, $0-60
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), DI
	ADDQ SI, DI               // DI = end of buffer
	MOVQ iters+32(FP), CX
	MOVQ s+48(FP), R11

	// R8, R9, R10 = starts of A, B, C.
	IMUL3Q $96, CX, R8
	ADDQ   SI, R8
	MOVQ   extra+40(FP), R12
	SHLQ   $5, R12
	ADDQ   R12, R8
	LEAQ   (R8)(R11*1), R9
	LEAQ   (R9)(R11*1), R10

	// X9, X10, X11 = T(8|ABC|), T(8|BC|), T(8|C|), computed first so
	// they overlap with the loop.
	MOVQ DI, AX
	SUBQ R8, AX
	XPOW8N(AX, R12, R13, BX, X12, X13, k1loop, k1done)
	VMOVQ R12, X9
	MOVQ DI, AX
	SUBQ R9, AX
	XPOW8N(AX, R12, R13, BX, X12, X13, k2loop, k2done)
	VMOVQ R12, X10
	MOVQ DI, AX
	SUBQ R10, AX
	XPOW8N(AX, R12, R13, BX, X12, X13, k3loop, k3done)
	VMOVQ R12, X11
	MOVL crc+0(FP), AX

	// R13 = quadwords of each chain left after the loop's iters-1 rounds.
	MOVQ R11, R13
	SHRQ $3, R13
	LEAQ -1(CX), R12
	SHLQ $2, R12
	SUBQ R12, R13

	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 64(SI), Y2
	VMOVQ   AX, X4            // incoming state into the first 4 bytes
	VPXOR   Y4, Y0, Y0
	ADDQ    $96, SI
	VBROADCASTI128 ·kX96(SB), Y8
	XORL    AX, AX
	XORL    BX, BX
	XORL    DX, DX

	DECQ CX
	JZ   chains

loop:
	FOLDVEX(Y0, Y8, Y4, 0(SI))
	ROW3(0)
	FOLDVEX(Y1, Y8, Y5, 32(SI))
	ROW3(8)
	ROW3(16)
	FOLDVEX(Y2, Y8, Y6, 64(SI))
	ROW3(24)
	ADDQ $96, SI
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, R10
	DECQ CX
	JNZ  loop

chains:
	CHAINSVEX(rest, tail8, tail7, tail3, tail1, reduce)

	// Reduce V: Y0 and Y1 are 64 and 32 bytes before Y2, then the extra
	// 32-byte blocks, 2 lanes → 1, then CRC32Q twice: v in R12.
	VBROADCASTI128 ·kX64(SB), Y7
	VBROADCASTI128 ·kX32(SB), Y8
	FOLDVEXINTO(Y0, Y7, Y4, Y2)
	FOLDVEXINTO(Y1, Y8, Y5, Y2)
	MOVQ  extra+40(FP), CX
	TESTQ CX, CX
	JZ    lanes

extra:
	FOLDVEX(Y2, Y8, Y4, 0(SI))
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
	MOVL       AX, ret+56(FP)
	RET
