#include "textflag.h"
#include "tail_amd64.h"
#include "fold_amd64.h"
#include "shift_amd64.h"

// 128-bit PCLMULQDQ folding (SSE encoding, so it runs on any CPU with
// PCLMULQDQ). See gf2_amd64.go for why a block H·x^64 + L, d bytes before
// the block it joins, becomes clmul(H, k.lo) ^ clmul(L, k.hi) with
// k = foldConst(d).

// func foldXMM(crc uint32, p []byte) uint32
// Raw state in and out; len(p) >= 64.
//
// Four accumulators each take every fourth 16-byte block, so each folds
// over 64 bytes and the four clmul→xor chains (latency ~5) overlap; the
// loop is then bound by the one PCLMULQDQ per cycle: 8 bytes per cycle.
TEXT ·foldXMM(SB), NOSPLIT, $0-36
	MOVL crc+0(FP), DI        // added at the end (SHIFTIN)
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	MOVQ CX, R10

	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	ADDQ  $64, SI
	SUBQ  $64, CX
	MOVOU ·kX64(SB), X8
	CMPQ  CX, $64
	JB    reduce

loop64:
	FOLD128(X0, X8, X4, 0(SI))
	FOLD128(X1, X8, X5, 16(SI))
	FOLD128(X2, X8, X6, 32(SI))
	FOLD128(X3, X8, X7, 48(SI))
	ADDQ $64, SI
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  loop64

reduce:
	// X0 and X1 are 32 bytes before X2 and X3; then X2 is 16 before X3.
	MOVOU ·kX32(SB), X8
	FOLDINTO(X0, X8, X4, X2)
	FOLDINTO(X1, X8, X5, X3)
	MOVOU ·kX16(SB), X8
	FOLDINTO(X2, X8, X4, X3)

	CMPQ CX, $16
	JB   reduced

loop16:
	FOLD128(X3, X8, X4, 0(SI))
	ADDQ $16, SI
	SUBQ $16, CX
	CMPQ CX, $16
	JAE  loop16

reduced:
	// 128 → 32 bits: CRC32Q(CRC32Q(0, lo), hi), then the last < 16 bytes.
	MOVQ   X3, R8
	PEXTRQ $1, X3, R9
	XORL   AX, AX
	CRC32Q R8, AX
	CRC32Q R9, AX

	TESTQ  $8, CX
	JZ     tail7
	CRC32Q 0(SI), AX
	ADDQ   $8, SI

tail7:
	CRC32TAIL7(SI, CX, AX, tail3, tail1, done)
	SHIFTINSSE(DI, R10, AX, R11, R12, BX, X9, X10, kloop, kdone)
	MOVL AX, ret+32(FP)
	RET
