#include "textflag.h"
#include "tail_amd64.h"

// Three CRC32Q streams, no vector folding: the method of Linux's
// crc32c_x86_3way (lib/crc/x86/crc32c-3way.S) and of Go's hash/crc32, for
// CPUs where carry-less multiplication is slow next to CRC32Q, or inputs too
// short for folding to pay. CRC32Q has a latency of 3 cycles and issues
// every cycle, so one chain uses a third of the unit; three independent
// chains over three lanes of a block use all of it.
//
// A block of 3L quadwords is split into lanes A, B, C of L quadwords each
// (L = 128, 3 KiB blocks, while that much is left; else the whole rest in
// one block). Chain a starts from the incoming state, b and c from zero.
// Before the last quadword q of C, a is moved to the end of the block by
// a carry-less multiply with T(8·16L) and b with T(8·8L) (gf2_amd64.go:
// CRC32Q(0, clmul(s, T(8n))) = s·x^(8n)), and since CRC32Q is linear in
// its data, XORing both products into q before the last CRC32Q adds them
// in: crc = CRC32Q(c, q ^ clmul(a, T(8·16L)) ^ clmul(b, T(8·8L))). The two
// constants for every L are kThree[L] (consts_amd64.go). Below threeMin
// bytes, and after the last block, one chain runs alone.

// threeMin must match consts_amd64.go's.
#define threeMin 200
#define threeBlock 3072

// func threeway(crc uint32, p []byte) uint32
// Raw state in and out; any length.
TEXT ·threeway(SB), NOSPLIT, $0-36
	MOVL crc+0(FP), AX
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	CMPQ CX, $threeMin
	JB   single

	// Align the lanes to 8 bytes: CRC32B, W, L as the low bits of -SI say.
	MOVQ  SI, DX
	NEGQ  DX
	ANDQ  $7, DX
	SUBQ  DX, CX
	TESTQ $1, DX
	JZ    head2
	CRC32B 0(SI), AX
	INCQ  SI

head2:
	TESTQ $2, DX
	JZ    head4
	CRC32W 0(SI), AX
	ADDQ  $2, SI

head4:
	TESTQ $4, DX
	JZ    block
	CRC32L 0(SI), AX
	ADDQ  $4, SI

block:
	// R11 = L, quadwords per lane: 128, or CX/24 (CX·2731 >> 16 is
	// CX/24 rounded down for every CX < 3072).
	MOVQ   $128, R11
	CMPQ   CX, $threeBlock
	JAE    lanes
	IMUL3Q $2731, CX, R11
	SHRQ   $16, R11

lanes:
	MOVQ R11, R10
	SHLQ $3, R10              // R10 = bytes per lane
	XORL R8, R8               // b
	XORL R9, R9               // c
	LEAQ -1(R11), DX          // quadwords before the last one of each lane
	CMPQ DX, $4
	JB   loop1

loop4:
	CRC32Q 0(SI), AX
	CRC32Q 0(SI)(R10*1), R8
	CRC32Q 0(SI)(R10*2), R9
	CRC32Q 8(SI), AX
	CRC32Q 8(SI)(R10*1), R8
	CRC32Q 8(SI)(R10*2), R9
	CRC32Q 16(SI), AX
	CRC32Q 16(SI)(R10*1), R8
	CRC32Q 16(SI)(R10*2), R9
	CRC32Q 24(SI), AX
	CRC32Q 24(SI)(R10*1), R8
	CRC32Q 24(SI)(R10*2), R9
	ADDQ   $32, SI
	SUBQ   $4, DX
	CMPQ   DX, $4
	JAE    loop4

loop1:
	TESTQ  DX, DX
	JZ     last
	CRC32Q 0(SI), AX
	CRC32Q 0(SI)(R10*1), R8
	CRC32Q 0(SI)(R10*2), R9
	ADDQ   $8, SI
	DECQ   DX
	JMP    loop1

last:
	CRC32Q 0(SI), AX
	CRC32Q 0(SI)(R10*1), R8

	// The last quadword of C gets a and b moved to the block's end.
	LEAQ      ·kThree(SB), BX
	MOVQ      R11, DX
	SHLQ      $4, DX
	MOVOU     (BX)(DX*1), X0      // T(8·16L), T(8·8L)
	MOVQ      AX, X1
	PCLMULQDQ $0x00, X0, X1
	MOVQ      R8, X2
	PCLMULQDQ $0x10, X0, X2
	PXOR      X2, X1
	MOVQ      X1, DX
	XORQ      0(SI)(R10*2), DX
	MOVL      R9, AX
	CRC32Q    DX, AX

	LEAQ 8(SI)(R10*2), SI     // the block's end
	LEAQ (R10)(R10*2), DX
	SUBQ DX, CX
	CMPQ CX, $threeMin
	JAE  block

single:
	// One chain over what is left (< threeMin bytes).
	CMPQ CX, $32
	JB   tail31

loop32:
	CRC32Q 0(SI), AX
	CRC32Q 8(SI), AX
	CRC32Q 16(SI), AX
	CRC32Q 24(SI), AX
	ADDQ   $32, SI
	SUBQ   $32, CX
	CMPQ   CX, $32
	JAE    loop32

tail31:
	TESTQ  $16, CX
	JZ     tail15
	CRC32Q 0(SI), AX
	CRC32Q 8(SI), AX
	ADDQ   $16, SI

tail15:
	TESTQ  $8, CX
	JZ     tail7
	CRC32Q 0(SI), AX
	ADDQ   $8, SI

tail7:
	CRC32TAIL7(SI, CX, AX, tail3, tail1, done)
	MOVL AX, ret+32(FP)
	RET
