#include "textflag.h"
#include "tail_amd64.h"
#include "fold_amd64.h"
#include "shift_amd64.h"

// 512-bit VPCLMULQDQ folding: the 128-bit fold of xmm_amd64.s done on
// four lanes at once. On Sapphire Rapids a zmm VPCLMULQDQ issues once per
// cycle on port 5, so one zmm accumulator folds 64 bytes in 2 cycles and
// four independent accumulators (latency of clmul→ternlog ≈ 4) keep port 5
// busy: 32 bytes per cycle. VPTERNLOGQ $0x96 is a three-way XOR, so the two
// products and the next 64 bytes of data cost one instruction.

// func foldZMM(crc uint32, p []byte) uint32
// Raw state in and out; len(p) >= 320, so at least 256 bytes remain after
// the up to 63 bytes that align the vector loads to 64 (Sapphire Rapids
// pays ~20% for unaligned 64-byte loads).
TEXT ·foldZMM(SB), NOSPLIT, $0-36
	MOVL crc+0(FP), DI        // added at the end (SHIFTIN)
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	MOVQ CX, R10
	XORL AX, AX

	// Head: BX = -SI mod 64 bytes with CRC32B/W/L, then CRC32Q.
	MOVQ  SI, BX
	NEGQ  BX
	ANDQ  $63, BX
	SUBQ  BX, CX
	TESTQ $1, BX
	JZ    head2
	CRC32B 0(SI), AX
	INCQ  SI

head2:
	TESTQ $2, BX
	JZ    head4
	CRC32W 0(SI), AX
	ADDQ  $2, SI

head4:
	TESTQ $4, BX
	JZ    head8
	CRC32L 0(SI), AX
	ADDQ  $4, SI

head8:
	SHRQ $3, BX
	JZ   aligned

headloop:
	CRC32Q 0(SI), AX
	ADDQ   $8, SI
	DECQ   BX
	JNZ    headloop

aligned:
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VMOVQ     AX, X4             // the head's state into the first 4 bytes
	VPXORQ    Z4, Z0, Z0
	ADDQ      $256, SI
	SUBQ      $256, CX
	VBROADCASTI32X4 ·kX256(SB), Z8
	CMPQ      CX, $256
	JB        reduce

loop256:
	FOLDV(Z0, Z8, Z4, 0(SI))
	FOLDV(Z1, Z8, Z5, 64(SI))
	FOLDV(Z2, Z8, Z6, 128(SI))
	FOLDV(Z3, Z8, Z7, 192(SI))
	ADDQ $256, SI
	SUBQ $256, CX
	CMPQ CX, $256
	JAE  loop256

reduce:
	// Z0, Z1 are 128 bytes before Z2, Z3; then Z2 is 64 before Z3.
	VBROADCASTI32X4 ·kX128(SB), Z8
	FOLDVINTO(Z0, Z8, Z4, Z2)
	FOLDVINTO(Z1, Z8, Z5, Z3)
	VBROADCASTI32X4 ·kX64(SB), Z8
	FOLDVINTO(Z2, Z8, Z4, Z3)
	CMPQ CX, $64
	JB   lanes

loop64:
	FOLDV(Z3, Z8, Z4, 0(SI))
	ADDQ $64, SI
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  loop64

lanes:
	// Lane j moves 16·(3-j) bytes to the last lane; then XOR the lanes.
	VMOVDQU64     ·kZLanes(SB), Z8
	VPCLMULQDQ    $0x00, Z8, Z3, Z4
	VPCLMULQDQ    $0x11, Z8, Z3, Z3
	VPXORQ        Z4, Z3, Z3
	VEXTRACTI64X4 $1, Z3, Y4
	VPXORQ        Y4, Y3, Y3
	VEXTRACTI128  $1, Y3, X4
	VPXOR         X4, X3, X3
	VMOVQ         X3, R8
	VPEXTRQ       $1, X3, R9
	VZEROUPPER
	XORL          AX, AX
	CRC32Q        R8, AX
	CRC32Q        R9, AX

	// The last < 64 bytes continue the chain.
	TESTQ  $32, CX
	JZ     tail31
	CRC32Q 0(SI), AX
	CRC32Q 8(SI), AX
	CRC32Q 16(SI), AX
	CRC32Q 24(SI), AX
	ADDQ   $32, SI

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
	SHIFTIN(DI, R10, AX, R11, R12, BX, X9, X10, kloop, kdone)
	MOVL AX, ret+32(FP)
	RET
