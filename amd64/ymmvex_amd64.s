#include "textflag.h"
#include "tail_amd64.h"
#include "fold_amd64.h"
#include "shift_amd64.h"

// 256-bit VPCLMULQDQ folding in VEX encoding only (AVX2 and VPCLMULQDQ,
// no AVX-512): foldYMM of ymm_amd64.s with FOLDVEX, two VPXORs where
// foldYMM has one VPTERNLOGQ, and no register above 15. This is what the
// CPUs with VPCLMULQDQ and no AVX-512 (AMD Zen 3, Intel's client cores
// since Alder Lake) can run; on AVX-512 CPUs it runs too, which is how its
// tests run on every machine with VPCLMULQDQ. Loads need no alignment.

// func foldVEX(crc uint32, p []byte) uint32
// Raw state in and out; len(p) >= 128.
TEXT ·foldVEX(SB), NOSPLIT, $0-36
	MOVL crc+0(FP), DI        // added at the end (SHIFTIN)
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	MOVQ CX, R10

	// Four accumulators, every fourth 32-byte block each: 128 bytes per
	// round, 8 VPCLMULQDQ.
	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 64(SI), Y2
	VMOVDQU 96(SI), Y3
	ADDQ    $128, SI
	SUBQ    $128, CX
	VBROADCASTI128 ·kX128(SB), Y8
	CMPQ    CX, $128
	JB      reduce

loop128:
	FOLDVEX(Y0, Y8, Y4, 0(SI))
	FOLDVEX(Y1, Y8, Y5, 32(SI))
	FOLDVEX(Y2, Y8, Y6, 64(SI))
	FOLDVEX(Y3, Y8, Y7, 96(SI))
	ADDQ $128, SI
	SUBQ $128, CX
	CMPQ CX, $128
	JAE  loop128

reduce:
	// Y0, Y1 are 64 bytes before Y2, Y3; then Y2 is 32 before Y3.
	VBROADCASTI128 ·kX64(SB), Y8
	FOLDVEXINTO(Y0, Y8, Y4, Y2)
	FOLDVEXINTO(Y1, Y8, Y5, Y3)
	VBROADCASTI128 ·kX32(SB), Y8
	FOLDVEXINTO(Y2, Y8, Y4, Y3)
	CMPQ CX, $32
	JB   lanes

loop32:
	FOLDVEX(Y3, Y8, Y4, 0(SI))
	ADDQ $32, SI
	SUBQ $32, CX
	CMPQ CX, $32
	JAE  loop32

lanes:
	// Lane 0 moves 16 bytes onto lane 1; then one more 16-byte block.
	VMOVDQU      ·kYLanes(SB), Y8
	VPCLMULQDQ   $0x00, Y8, Y3, Y4
	VPCLMULQDQ   $0x11, Y8, Y3, Y3
	VPXOR        Y4, Y3, Y3
	VEXTRACTI128 $1, Y3, X4
	VPXOR        X4, X3, X3
	CMPQ         CX, $16
	JB           reduced
	VMOVDQU      ·kX16(SB), X8
	FOLDVEX(X3, X8, X4, 0(SI))
	ADDQ         $16, SI
	SUBQ         $16, CX

reduced:
	VMOVQ   X3, R8
	VPEXTRQ $1, X3, R9
	VZEROUPPER
	XORL    AX, AX
	CRC32Q  R8, AX
	CRC32Q  R9, AX

	TESTQ  $8, CX
	JZ     tail7
	CRC32Q 0(SI), AX
	ADDQ   $8, SI

tail7:
	CRC32TAIL7(SI, CX, AX, tail3, tail1, done)
	SHIFTIN(DI, R10, AX, R11, R12, BX, X9, X10, kloop, kdone)
	MOVL AX, ret+32(FP)
	RET
