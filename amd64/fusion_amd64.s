#include "textflag.h"
#include "tail_amd64.h"
#include "fold_amd64.h"
#include "shift_amd64.h"

// Fusion: VPCLMULQDQ runs on port 5, CRC32Q on port 1, so one loop can fold
// zmm blocks and run CRC32Q chains side by side, each at its own full rate.
// The buffer (64-byte aligned, split by planFused in fusion_amd64.go) is
//
//	V: iters·192 + extra·64 bytes, folded by 3 zmm accumulators
//	A, B: s bytes each, C: s + t bytes, one CRC32Q chain each
//
// Each iteration folds 192 bytes of V (6 VPCLMULQDQ: 6 cycles of port 5;
// 3 accumulators cover the ~4-cycle clmul→ternlog latency) and reads 2
// quadwords of each chain (6 CRC32Q: 6 cycles of port 1; 3 chains cover
// CRC32Q's latency of 3): 240 bytes in 6 cycles, 40 bytes per cycle at
// best, against 32 for folding alone. Measured on this Sapphire Rapids
// class machine: 3 zmm + 3×2 quadwords and 6 zmm + 3×4 both reach ~36.6
// bytes per cycle; 4 zmm + 3×2 (8 clmul cycles for 6 CRC32Q) ~34.7,
// 4 zmm + 3×3 ~33.5. The rate is the same from L2 (256 KiB) and L3
// (64 MiB): the ports, not the loads, are the limit. Afterwards V reduces
// to a state v, and the four states join at the end of the buffer:
//
//	crc = v·x^(8|ABC|) ^ a·x^(8|BC|) ^ b·x^(8|C|) ^ c
//	    = CRC32Q(0, clmul(v, T(8|ABC|)) ^ clmul(a, T(8|BC|)) ^ clmul(b, T(8|C|))) ^ c
//
// with the T constants (x^(8n-33) mod P) computed at run time (XPOW8N);
// they depend on nothing the loop computes, so they overlap with it.

// CHAINS finishes the three chains: R13 more quadwords of each (R13 >= 1),
// then C runs on to the end of the buffer (DI). AX, BX, DX are the states
// of A, B, C; R8, R9, R10 their pointers; CX is clobbered.
#define CHAINS(lrest, l8, l7, l3, l1, ldone) \
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

// func fusedZMM(crc uint32, p []byte, iters, extra, s int) uint32
// Raw state in and out. p is 64-byte aligned, iters >= 1, s >= 16·iters,
// len(p) >= iters·192 + extra·64 + 3·s.
TEXT ·fusedZMM(SB), NOSPLIT, $0-60
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), DI
	ADDQ SI, DI               // DI = end of buffer
	MOVQ iters+32(FP), CX
	MOVQ s+48(FP), R11

	// R8, R9, R10 = starts of A, B, C.
	IMUL3Q $192, CX, R8
	ADDQ   SI, R8
	MOVQ extra+40(FP), R12
	SHLQ $6, R12
	ADDQ R12, R8
	LEAQ (R8)(R11*1), R9
	LEAQ (R9)(R11*1), R10

	// The shift constants depend only on the lengths: compute them first,
	// so they overlap with the loop. X9, X10, X11 = T(8|ABC|), T(8|BC|),
	// T(8|C|).
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
	LEAQ -2(CX)(CX*1), R12
	SUBQ R12, R13

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

	DECQ CX
	JZ   chains

loop:
	FOLDV(Z0, Z8, Z4, 0(SI))
	CRC32Q 0(R8), AX
	CRC32Q 0(R9), BX
	CRC32Q 0(R10), DX
	FOLDV(Z1, Z8, Z5, 64(SI))
	CRC32Q 8(R8), AX
	CRC32Q 8(R9), BX
	CRC32Q 8(R10), DX
	FOLDV(Z2, Z8, Z6, 128(SI))
	ADDQ   $192, SI
	ADDQ   $16, R8
	ADDQ   $16, R9
	ADDQ   $16, R10
	DECQ   CX
	JNZ    loop

chains:
	CHAINS(rest, tail8, tail7, tail3, tail1, reduce)

	// Reduce V: 3 → 1 register, the extra 64-byte blocks, 4 lanes → 1,
	// then CRC32Q twice: v in R12.
	VBROADCASTI32X4 ·kX128(SB), Z7
	VBROADCASTI32X4 ·kX64(SB), Z8
	FOLDVINTO(Z0, Z7, Z4, Z2)
	FOLDVINTO(Z1, Z8, Z5, Z2)
	MOVQ extra+40(FP), CX
	TESTQ CX, CX
	JZ   lanes

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
	XORL          R12, R12
	CRC32Q        CX, R12
	CRC32Q        SI, R12

merge:
	// X12 = clmul(v, T(8|ABC|)) ^ clmul(a, T(8|BC|)) ^ clmul(b, T(8|C|)).
	VMOVQ      R12, X12
	VPCLMULQDQ $0x00, X9, X12, X12
	VMOVQ      AX, X13
	VPCLMULQDQ $0x00, X10, X13, X13
	VMOVQ      BX, X14
	VPCLMULQDQ $0x00, X11, X14, X14
	VPTERNLOGQ $0x96, X14, X13, X12
	VMOVQ      X12, CX
	XORL       AX, AX
	CRC32Q     CX, AX
	XORL       DX, AX
	MOVL       AX, ret+56(FP)
	RET

// func fusedXMM(crc uint32, p []byte, iters, extra, s int) uint32
// The same with 128-bit PCLMULQDQ (SSE encoding) for CPUs without
// AVX-512: V is iters·64 + extra·16 bytes, folded by 4 xmm accumulators
// (8 PCLMULQDQ per iteration), and each iteration reads 3 quadwords of
// each chain (9 CRC32Q): 136 bytes in 9 cycles, against 8 bytes per cycle
// for folding alone (corsix's "v4s3x3"). Measured here: ~15 bytes per
// cycle; 4×2, 5×3, 6×3, 6×4 and 8×4 splits were all slower.
// Raw state in and out. p is 16-byte aligned, iters >= 1, s >= 24·iters,
// len(p) >= iters·64 + extra·16 + 3·s.
TEXT ·fusedXMM(SB), NOSPLIT, $0-60
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), DI
	ADDQ SI, DI               // DI = end of buffer
	MOVQ iters+32(FP), CX
	MOVQ s+48(FP), R11

	// R8, R9, R10 = starts of A, B, C.
	MOVQ CX, R8
	SHLQ $6, R8
	ADDQ SI, R8
	MOVQ extra+40(FP), R12
	SHLQ $4, R12
	ADDQ R12, R8
	LEAQ (R8)(R11*1), R9
	LEAQ (R9)(R11*1), R10

	// X9, X10, X11 = T(8|ABC|), T(8|BC|), T(8|C|).
	MOVQ DI, AX
	SUBQ R8, AX
	XPOW8NSSE(AX, R12, R13, BX, X12, X13, k1loop, k1done)
	MOVQ R12, X9
	MOVQ DI, AX
	SUBQ R9, AX
	XPOW8NSSE(AX, R12, R13, BX, X12, X13, k2loop, k2done)
	MOVQ R12, X10
	MOVQ DI, AX
	SUBQ R10, AX
	XPOW8NSSE(AX, R12, R13, BX, X12, X13, k3loop, k3done)
	MOVQ R12, X11

	// R13 = quadwords of each chain left after the loop's iters-1 rounds.
	MOVQ   R11, R13
	SHRQ   $3, R13
	IMUL3Q $3, CX, R12
	SUBQ   $3, R12
	SUBQ   R12, R13

	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	MOVL  crc+0(FP), AX
	MOVQ  AX, X8              // incoming state into the first 4 bytes
	PXOR  X8, X0
	ADDQ  $64, SI
	MOVOU ·kX64(SB), X12
	XORL  AX, AX
	XORL  BX, BX
	XORL  DX, DX

	DECQ CX
	JZ   chains

loop:
	FOLD128(X0, X12, X8, 0(SI))
	CRC32Q 0(R8), AX
	CRC32Q 0(R9), BX
	CRC32Q 0(R10), DX
	FOLD128(X1, X12, X8, 16(SI))
	CRC32Q 8(R8), AX
	CRC32Q 8(R9), BX
	CRC32Q 8(R10), DX
	FOLD128(X2, X12, X8, 32(SI))
	CRC32Q 16(R8), AX
	CRC32Q 16(R9), BX
	CRC32Q 16(R10), DX
	FOLD128(X3, X12, X8, 48(SI))
	ADDQ   $64, SI
	ADDQ   $24, R8
	ADDQ   $24, R9
	ADDQ   $24, R10
	DECQ   CX
	JNZ    loop

chains:
	CHAINS(rest, tail8, tail7, tail3, tail1, reduce)

	// Reduce V: X0, X1, X2 are 48, 32, 16 bytes before X3 (independent
	// multiplies, only the XORs into X3 chain up), then the extra 16-byte
	// blocks, then CRC32Q twice: v in R12.
	MOVOU ·kX48(SB), X12
	FOLDINTO(X0, X12, X8, X3)
	MOVOU ·kX32(SB), X12
	FOLDINTO(X1, X12, X8, X3)
	MOVOU ·kX16(SB), X12
	FOLDINTO(X2, X12, X8, X3)
	MOVQ  extra+40(FP), CX
	TESTQ CX, CX
	JZ    reduced

extra:
	FOLD128(X3, X12, X8, 0(SI))
	ADDQ $16, SI
	DECQ CX
	JNZ  extra

reduced:
	MOVQ   X3, CX
	PEXTRQ $1, X3, SI
	XORL   R12, R12
	CRC32Q CX, R12
	CRC32Q SI, R12

	// X12 = clmul(v, T(8|ABC|)) ^ clmul(a, T(8|BC|)) ^ clmul(b, T(8|C|)).
	MOVQ      R12, X12
	PCLMULQDQ $0x00, X9, X12
	MOVQ      AX, X13
	PCLMULQDQ $0x00, X10, X13
	MOVQ      BX, X14
	PCLMULQDQ $0x00, X11, X14
	PXOR      X13, X12
	PXOR      X14, X12
	MOVQ      X12, CX
	XORL      AX, AX
	CRC32Q    CX, AX
	XORL      DX, AX
	MOVL      AX, ret+56(FP)
	RET
