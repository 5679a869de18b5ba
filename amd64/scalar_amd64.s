#include "textflag.h"
#include "tail_amd64.h"

// Short inputs: one CRC32 chain. CRC32Q has latency 3 and throughput 1, so
// a single chain runs at 8 bytes per 3 cycles; below a few dozen bytes that
// beats anything that needs a merge at the end. Loads need no alignment.

// func scalar(crc uint32, p []byte) uint32
// crc is the raw state (not inverted), and so is the result.
TEXT ·scalar(SB), NOSPLIT, $0-36
	MOVL crc+0(FP), AX
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX

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
	TESTQ $16, CX
	JZ    tail15
	CRC32Q 0(SI), AX
	CRC32Q 8(SI), AX
	ADDQ   $16, SI

tail15:
	TESTQ $8, CX
	JZ    tail7
	CRC32Q 0(SI), AX
	ADDQ   $8, SI

tail7:
	CRC32TAIL7(SI, CX, AX, tail3, tail1, done)
	MOVL AX, ret+32(FP)
	RET
