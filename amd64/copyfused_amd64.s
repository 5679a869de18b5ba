#include "textflag.h"
#include "fold_amd64.h"
#include "shift_amd64.h"
#include "copy_amd64.h"

// The fused loops of fusion_amd64.s, copying: the vector region V is
// copied by the zmm (or xmm) loads and their stores, and each CRC32Q chain
// loads its quadword into a general register, runs it into the chain from
// there and stores it. The split, the shift constants and the final merge
// are those of fusion_amd64.s; only the copy is new. len(src) is a
// multiple of 8 (copy_amd64.go takes the last 0-7 bytes), so chain C ends
// on a whole quadword. DI = dst - src throughout the loop, R11 = the end
// of src.

// CPCHAINS finishes the three chains, copying: R13 more quadwords of each
// (R13 >= 1), then C runs on to R11. AX, BX, DX are the states of A, B, C;
// R8, R9, R10 their pointers; R12 is clobbered.
#define CPCHAINS(lrest, l8, ldone) \
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

// func copyFusedZMM(crc uint32, dst, src []byte, iters, extra, s int) uint32
// fusedZMM, copying. Raw state in and out. dst is 64-byte aligned,
// iters >= 1, s >= 16·iters, len(src) = iters·192 + extra·64 + 3·s + t
// with 0 <= t < 24 and t a multiple of 8.
TEXT ·copyFusedZMM(SB), NOSPLIT, $0-84
	MOVQ src_base+32(FP), SI
	MOVQ src_len+40(FP), R11
	ADDQ SI, R11              // R11 = end of src
	MOVQ iters+56(FP), CX
	MOVQ s+72(FP), DI         // s, until DI becomes dst - src

	// R8, R9, R10 = starts of A, B, C.
	IMUL3Q $192, CX, R8
	ADDQ   SI, R8
	MOVQ   extra+64(FP), R12
	SHLQ   $6, R12
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
	LEAQ -2(CX)(CX*1), R12
	SUBQ R12, R13

	MOVQ dst_base+8(FP), DI
	SUBQ SI, DI               // DI = dst - src

	MOVL crc+0(FP), AX
	CPLOAD(VMOVDQU64, 0, Z0)
	CPLOAD(VMOVDQU64, 64, Z1)
	CPLOAD(VMOVDQU64, 128, Z2)
	VMOVQ  AX, X4             // incoming state into the first 4 bytes
	VPXORQ Z4, Z0, Z0
	ADDQ   $192, SI
	VBROADCASTI32X4 ·kX192(SB), Z8
	XORL   AX, AX
	XORL   BX, BX
	XORL   DX, DX

	DECQ CX
	JZ   chains

loop:
	CPLOAD(VMOVDQU64, 0, Z4)
	FOLDV(Z0, Z8, Z16, Z4)
	CPQ(R8, 0, R12, AX)
	CPQ(R9, 0, R12, BX)
	CPQ(R10, 0, R12, DX)
	CPLOAD(VMOVDQU64, 64, Z5)
	FOLDV(Z1, Z8, Z17, Z5)
	CPQ(R8, 8, R12, AX)
	CPQ(R9, 8, R12, BX)
	CPQ(R10, 8, R12, DX)
	CPLOAD(VMOVDQU64, 128, Z6)
	FOLDV(Z2, Z8, Z18, Z6)
	ADDQ $192, SI
	ADDQ $16, R8
	ADDQ $16, R9
	ADDQ $16, R10
	DECQ CX
	JNZ  loop

chains:
	CPCHAINS(rest, tail8, reduce)

	// Reduce V: 3 → 1 register, the extra 64-byte blocks, 4 lanes → 1,
	// then CRC32Q twice: v in R12.
	VBROADCASTI32X4 ·kX128(SB), Z7
	VBROADCASTI32X4 ·kX64(SB), Z8
	FOLDVINTO(Z0, Z7, Z4, Z2)
	FOLDVINTO(Z1, Z8, Z5, Z2)
	MOVQ  extra+64(FP), CX
	TESTQ CX, CX
	JZ    lanes

extra:
	CPLOAD(VMOVDQU64, 0, Z6)
	FOLDV(Z2, Z8, Z4, Z6)
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
	MOVL       AX, ret+80(FP)
	RET

// func copyFusedXMM(crc uint32, dst, src []byte, iters, extra, s int) uint32
// fusedXMM, copying. Raw state in and out. dst is 16-byte aligned,
// iters >= 1, s >= 24·iters, len(src) = iters·64 + extra·16 + 3·s + t with
// 0 <= t < 16 and t a multiple of 8.
TEXT ·copyFusedXMM(SB), NOSPLIT, $0-84
	MOVQ src_base+32(FP), SI
	MOVQ src_len+40(FP), R11
	ADDQ SI, R11              // R11 = end of src
	MOVQ iters+56(FP), CX
	MOVQ s+72(FP), DI         // s, until DI becomes dst - src

	// R8, R9, R10 = starts of A, B, C.
	MOVQ CX, R8
	SHLQ $6, R8
	ADDQ SI, R8
	MOVQ extra+64(FP), R12
	SHLQ $4, R12
	ADDQ R12, R8
	LEAQ (R8)(DI*1), R9
	LEAQ (R9)(DI*1), R10

	// X9, X10, X11 = T(8|ABC|), T(8|BC|), T(8|C|).
	MOVQ R11, AX
	SUBQ R8, AX
	XPOW8NSSE(AX, R12, R13, BX, X12, X13, k1loop, k1done)
	MOVQ R12, X9
	MOVQ R11, AX
	SUBQ R9, AX
	XPOW8NSSE(AX, R12, R13, BX, X12, X13, k2loop, k2done)
	MOVQ R12, X10
	MOVQ R11, AX
	SUBQ R10, AX
	XPOW8NSSE(AX, R12, R13, BX, X12, X13, k3loop, k3done)
	MOVQ R12, X11

	// R13 = quadwords of each chain left after the loop's iters-1 rounds.
	MOVQ   DI, R13
	SHRQ   $3, R13
	IMUL3Q $3, CX, R12
	SUBQ   $3, R12
	SUBQ   R12, R13

	MOVQ dst_base+8(FP), DI
	SUBQ SI, DI               // DI = dst - src

	CPLOAD(MOVOU, 0, X0)
	CPLOAD(MOVOU, 16, X1)
	CPLOAD(MOVOU, 32, X2)
	CPLOAD(MOVOU, 48, X3)
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
	CPFOLD128(X0, X12, X8, X4, 0)
	CPQ(R8, 0, R12, AX)
	CPQ(R9, 0, R12, BX)
	CPQ(R10, 0, R12, DX)
	CPFOLD128(X1, X12, X8, X5, 16)
	CPQ(R8, 8, R12, AX)
	CPQ(R9, 8, R12, BX)
	CPQ(R10, 8, R12, DX)
	CPFOLD128(X2, X12, X8, X6, 32)
	CPQ(R8, 16, R12, AX)
	CPQ(R9, 16, R12, BX)
	CPQ(R10, 16, R12, DX)
	CPFOLD128(X3, X12, X8, X7, 48)
	ADDQ $64, SI
	ADDQ $24, R8
	ADDQ $24, R9
	ADDQ $24, R10
	DECQ CX
	JNZ  loop

chains:
	CPCHAINS(rest, tail8, reduce)

	// Reduce V: X0, X1, X2 are 48, 32, 16 bytes before X3, then the
	// extra 16-byte blocks, then CRC32Q twice: v in R12.
	MOVOU ·kX48(SB), X12
	FOLDINTO(X0, X12, X8, X3)
	MOVOU ·kX32(SB), X12
	FOLDINTO(X1, X12, X8, X3)
	MOVOU ·kX16(SB), X12
	FOLDINTO(X2, X12, X8, X3)
	MOVQ  extra+64(FP), CX
	TESTQ CX, CX
	JZ    reduced

extra:
	CPFOLD128(X3, X12, X8, X4, 0)
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
	MOVL      AX, ret+80(FP)
	RET
