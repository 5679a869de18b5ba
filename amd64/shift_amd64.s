#include "textflag.h"
#include "shift_amd64.h"

// func xpow8n(n uint64) uint64
// x^(8n-33) mod P, the constant that shifts a state over n bytes.
TEXT ·xpow8n(SB), NOSPLIT, $0-16
	MOVQ n+0(FP), CX
	XPOW8NSSE(CX, AX, DX, BX, X0, X1, loop, done)
	MOVQ AX, ret+8(FP)
	RET

// func shift(crc uint32, n uint64) uint32
// crc·x^(8n) mod P: the state crc carried over n more zero bytes, that is
// CRC32Q(0, clmul(crc, x^(8n-33))).
TEXT ·shift(SB), NOSPLIT, $0-20
	MOVQ n+8(FP), CX
	XPOW8NSSE(CX, AX, DX, BX, X0, X1, loop, done)
	MOVL      crc+0(FP), DX
	MOVQ      DX, X0
	MOVQ      AX, X1
	PCLMULQDQ $0x00, X1, X0
	MOVQ      X0, DX
	XORL      AX, AX
	CRC32Q    DX, AX
	MOVL      AX, ret+16(FP)
	RET
