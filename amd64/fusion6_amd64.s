#include "textflag.h"
#include "tail_amd64.h"
#include "fold_amd64.h"
#include "shift_amd64.h"

// Fusion with six CRC32Q chains: fusion_amd64.s's zmm loop for CPUs that
// run more than one CRC32Q per cycle. With a latency of 3, three chains
// keep one CRC32Q unit busy; AMD's Zen 5 runs about twice that with six
// chains (measured on the machine of doc.go), while its zmm VPCLMULQDQ
// issues every other cycle, so the three-chain loop of fusion_amd64.s
// leaves half its CRC32Q rate unused there. The buffer (64-byte aligned,
// split by planChains with 6 chains) is
//
//	V: iters·192 + extra·64 bytes, folded by 3 zmm accumulators
//	A..E: s bytes each, F: s + t bytes, one CRC32Q chain each
//
// Each iteration folds 192 bytes of V (6 VPCLMULQDQ) and reads 4 quadwords
// of each chain (24 CRC32Q): 384 bytes. The states join at the end:
//
//	crc = CRC32Q(0, clmul(v, T(8|A..F|)) ^ clmul(a, T(8|B..F|)) ^ ... ^ clmul(e, T(8|F|))) ^ f
//
// Chains A, B, C are at R8, R8+s, R8+2s and D, E, F at R9, R9+s, R9+2s
// (R11 = s), their states in AX, BX, DX, R10, R12, R14.

// ROW6 runs one quadword of each chain, at offset off.
#define ROW6(off) \
	CRC32Q off(R8), AX \
	CRC32Q off(R8)(R11*1), BX \
	CRC32Q off(R8)(R11*2), DX \
	CRC32Q off(R9), R10 \
	CRC32Q off(R9)(R11*1), R12 \
	CRC32Q off(R9)(R11*2), R14

// KCONST sets xk = T(8·(DI - start)): the constant that moves a state
// ending at start to the end of the buffer. AX, R13, BX, X3, X7 clobbered.
#define KCONST(start, xk, lloop, ldone) \
	MOVQ  DI, AX \
	SUBQ  start, AX \
	XPOW8N(AX, CX, R13, BX, X3, X7, lloop, ldone) \
	VMOVQ CX, xk

// func fusedZMM6(crc uint32, p []byte, iters, extra, s int) uint32
// Raw state in and out. p is 64-byte aligned, iters >= 1, s >= 32·iters,
// len(p) >= iters·192 + extra·64 + 6·s.
TEXT ·fusedZMM6(SB), NOSPLIT, $0-60
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), DI
	ADDQ SI, DI               // DI = end of buffer
	MOVQ s+48(FP), R11

	// R8 = A = V's end, R9 = D = A + 3s.
	MOVQ   iters+32(FP), CX
	IMUL3Q $192, CX, R8
	ADDQ   SI, R8
	MOVQ   extra+40(FP), R12
	SHLQ   $6, R12
	ADDQ   R12, R8
	LEAQ   (R8)(R11*2), R9
	ADDQ   R11, R9

	// X9..X14 = T(8|A..F|), T(8|B..F|), ..., T(8|F|), first, so they
	// overlap with the loop.
	KCONST(R8, X9, k1loop, k1done)
	LEAQ (R8)(R11*1), R12
	KCONST(R12, X10, k2loop, k2done)
	LEAQ (R8)(R11*2), R12
	KCONST(R12, X11, k3loop, k3done)
	KCONST(R9, X12, k4loop, k4done)
	LEAQ (R9)(R11*1), R12
	KCONST(R12, X13, k5loop, k5done)
	LEAQ (R9)(R11*2), R12
	KCONST(R12, X14, k6loop, k6done)

	// R13 = quadwords of each chain left after the loop's iters-1 rounds.
	MOVQ iters+32(FP), CX
	MOVQ R11, R13
	SHRQ $3, R13
	LEAQ -1(CX), R12
	SHLQ $2, R12
	SUBQ R12, R13

	MOVL      crc+0(FP), AX
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVQ     AX, X4          // incoming state into the first 4 bytes
	VPXORQ    Z4, Z0, Z0
	ADDQ      $192, SI
	VBROADCASTI32X4 ·kX192(SB), Z8
	XORL      AX, AX
	XORL      BX, BX
	XORL      DX, DX
	XORL      R10, R10
	XORL      R12, R12
	XORL      R14, R14

	DECQ CX
	JZ   rest

loop:
	FOLDV(Z0, Z8, Z4, 0(SI))
	ROW6(0)
	FOLDV(Z1, Z8, Z5, 64(SI))
	ROW6(8)
	ROW6(16)
	FOLDV(Z2, Z8, Z6, 128(SI))
	ROW6(24)
	ADDQ $192, SI
	ADDQ $32, R8
	ADDQ $32, R9
	DECQ CX
	JNZ  loop

rest:
	ROW6(0)
	ADDQ $8, R8
	ADDQ $8, R9
	DECQ R13
	JNZ  rest

	// F runs on to the end of the buffer.
	LEAQ (R9)(R11*2), R9
	MOVQ DI, CX
	SUBQ R9, CX
	CMPQ CX, $8
	JB   tail7

tail8:
	CRC32Q 0(R9), R14
	ADDQ   $8, R9
	SUBQ   $8, CX
	CMPQ   CX, $8
	JAE    tail8

tail7:
	CRC32TAIL7(R9, CX, R14, tail3, tail1, reduce)

	// Reduce V: 3 → 1 register, the extra 64-byte blocks, 4 lanes → 1,
	// then CRC32Q twice: v in R8.
	VBROADCASTI32X4 ·kX128(SB), Z7
	VBROADCASTI32X4 ·kX64(SB), Z8
	FOLDVINTO(Z0, Z7, Z4, Z2)
	FOLDVINTO(Z1, Z8, Z5, Z2)
	MOVQ  extra+40(FP), CX
	TESTQ CX, CX
	JZ    lanes

extra:
	FOLDV(Z2, Z8, Z4, 0(SI))
	ADDQ $64, SI
	DECQ CX
	JNZ  extra

lanes:
	VMOVDQU64     ·kZLanes(SB), Z8
	VPCLMULQDQ    $0x00, Z8, Z2, Z4
	VPCLMULQDQ    $0x11, Z8, Z2, Z2
	VPXORQ        Z4, Z2, Z2
	VEXTRACTI64X4 $1, Z2, Y4
	VPXORQ        Y4, Y2, Y2
	VEXTRACTI128  $1, Y2, X4
	VPXOR         X4, X2, X2
	VMOVQ         X2, CX
	VPEXTRQ       $1, X2, SI
	VZEROUPPER
	XORL          R8, R8
	CRC32Q        CX, R8
	CRC32Q        SI, R8

	// X0 = clmul(v, T(8|A..F|)) ^ clmul(a, T(8|B..F|)) ^ ... ^ clmul(e, T(8|F|)).
	VMOVQ      R8, X0
	VPCLMULQDQ $0x00, X9, X0, X0
	VMOVQ      AX, X1
	VPCLMULQDQ $0x00, X10, X1, X1
	VMOVQ      BX, X2
	VPCLMULQDQ $0x00, X11, X2, X2
	VMOVQ      DX, X3
	VPCLMULQDQ $0x00, X12, X3, X3
	VMOVQ      R10, X4
	VPCLMULQDQ $0x00, X13, X4, X4
	VMOVQ      R12, X5
	VPCLMULQDQ $0x00, X14, X5, X5
	VPTERNLOGQ $0x96, X2, X1, X0
	VPTERNLOGQ $0x96, X5, X4, X3
	VPXOR      X3, X0, X0
	VMOVQ      X0, CX
	XORL       AX, AX
	CRC32Q     CX, AX
	XORL       R14, AX
	MOVL       AX, ret+56(FP)
	RET
