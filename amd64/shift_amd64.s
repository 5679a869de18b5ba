#include "textflag.h"
#include "shift_amd64.h"

// Go-callable forms of the shift_amd64.h macros, so tests can hold the
// code every kernel inlines against the slow reference in gf2_amd64.go.

// func xpow8n(n uint64) uint64
// x^(8n-33) mod P, the constant that shifts a state over n bytes.
TEXT ·xpow8n(SB), NOSPLIT, $0-16
	MOVQ n+0(FP), CX
	XPOW8NSSE(CX, AX, DX, BX, X0, X1, loop, done)
	MOVQ AX, ret+8(FP)
	RET

// func shift(crc uint32, n uint64) uint32
// crc·x^(8n) mod P: the state crc carried over n more zero bytes.
TEXT ·shift(SB), NOSPLIT, $0-20
	MOVL crc+0(FP), DI
	MOVQ n+8(FP), CX
	XORL AX, AX
	SHIFTINSSE(DI, CX, AX, R8, R9, BX, X0, X1, loop, done)
	MOVL AX, ret+16(FP)
	RET
