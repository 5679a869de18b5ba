//go:build ppc64 || ppc64le

#include "textflag.h"
#include "vpmsum_ppc64x.h"

// vpmsum (vpmsum_ppc64x.s) copying as it goes: every 16-byte block is
// loaded once with LXVD2X, stored to dst with STXVD2X, and folded from the
// register (CPLOAD). The folding and reduction are vpmsum's, step for step;
// only the loads changed, and the dst pointers (R21, R22) that walk beside
// the src ones (R4, R9). Unaligned loads and stores are fine on POWER8, so
// neither buffer needs aligning.

// func vpmsumCopy(crc uint32, dst, src []byte, t *table) uint32
// len(src) is a non-zero multiple of 16, len(dst) >= len(src), and the two
// do not overlap.
TEXT ·vpmsumCopy(SB), NOSPLIT|NOFRAME, $0-68
	MOVWZ	crc+0(FP), R3
	MOVD	dst_base+8(FP), R21
	MOVD	src_base+32(FP), R4
	MOVD	src_len+40(FP), R5
	MOVD	t+56(FP), R6

	// LVX and LXVD2X only take register indexes.
	MOVD	$16, R14
	MOVD	$32, R15
	MOVD	$48, R16
	MOVD	$64, R17
	MOVD	$80, R18
	MOVD	$96, R19
	MOVD	$112, R20
#ifdef GOARCH_ppc64
	MOVD	$T_BSWAP, R7
	LXVD2X	(R6)(R7), BSWAP
#endif

	VXOR	ZERO, ZERO, ZERO
	VXOR	G, G, G

	// The CRC so far, inverted, is XORed onto the message's first four
	// bytes, which the layout puts in the low word of dw1. VCRC holds it
	// until the first block is loaded, and is zero after.
	NOR	R3, R3, R3
	MOVWZ	R3, R3
	MTVSRD	R3, VCRC              // dw0 = ^crc
	VSLDOI	$8, ZERO, VCRC, VCRC  // {0, ^crc}

	SRD	$4, R5  // R5 = blocks left
	CMP	R5, $8
	BLT	tail

	// Eight accumulators V0-V7 start as the first 128 bytes.
	CPLOAD(R4, R21, R0, V0)
	CPLOAD(R4, R21, R14, V1)
	CPLOAD(R4, R21, R15, V2)
	CPLOAD(R4, R21, R16, V3)
	CPLOAD(R4, R21, R17, V4)
	CPLOAD(R4, R21, R18, V5)
	CPLOAD(R4, R21, R19, V6)
	CPLOAD(R4, R21, R20, V7)
	VXOR	V0, VCRC, V0
	VXOR	VCRC, VCRC, VCRC
	ADD	$128, R4
	ADD	$128, R21
	ADD	$-8, R5

	SRD	$4, R5, R7  // 256-byte iterations
	CMP	R7, $0
	BEQ	fold8
	MOVD	R7, CTR
	ANDCC	$15, R5, R5
	MOVD	$T_LOOP128, R7
	LXVD2X	(R6)(R7), K128
	MOVD	$T_LOOP256, R7
	LXVD2X	(R6)(R7), K256
	ADD	$128, R4, R9
	ADD	$128, R21, R22

	// Each iteration takes 256 bytes, two blocks per accumulator:
	// A = A·x^2048 + D·x^1024 + E, for D the block 128 bytes after A's
	// and E the one 128 bytes after D. D·x^1024 + E does not depend on A,
	// so the only chain from one iteration to the next is one VPMSUMD and
	// one VXOR (6+2 cycles on POWER8), against 16 VPMSUMDs of work at one
	// per cycle: the multiplier never waits on it.
	PCALIGN	$16
loop:
	CPLOAD(R4, R21, R0, V8)
	CPLOAD(R4, R21, R14, V9)
	CPLOAD(R4, R21, R15, V10)
	CPLOAD(R4, R21, R16, V11)
	CPLOAD(R4, R21, R17, V12)
	CPLOAD(R4, R21, R18, V13)
	CPLOAD(R4, R21, R19, V14)
	CPLOAD(R4, R21, R20, V15)
	CPLOAD(R9, R22, R0, V16)
	CPLOAD(R9, R22, R14, V17)
	CPLOAD(R9, R22, R15, V18)
	CPLOAD(R9, R22, R16, V19)
	CPLOAD(R9, R22, R17, V20)
	CPLOAD(R9, R22, R18, V21)
	CPLOAD(R9, R22, R19, V22)
	CPLOAD(R9, R22, R20, V23)

	VPMSUMD	V0, K256, V0
	VPMSUMD	V8, K128, V8
	VPMSUMD	V1, K256, V1
	VPMSUMD	V9, K128, V9
	VPMSUMD	V2, K256, V2
	VPMSUMD	V10, K128, V10
	VPMSUMD	V3, K256, V3
	VPMSUMD	V11, K128, V11
	VPMSUMD	V4, K256, V4
	VPMSUMD	V12, K128, V12
	VPMSUMD	V5, K256, V5
	VPMSUMD	V13, K128, V13
	VPMSUMD	V6, K256, V6
	VPMSUMD	V14, K128, V14
	VPMSUMD	V7, K256, V7
	VPMSUMD	V15, K128, V15

	VXOR	V8, V16, V8
	VXOR	V9, V17, V9
	VXOR	V10, V18, V10
	VXOR	V11, V19, V11
	VXOR	V12, V20, V12
	VXOR	V13, V21, V13
	VXOR	V14, V22, V14
	VXOR	V15, V23, V15
	VXOR	V0, V8, V0
	VXOR	V1, V9, V1
	VXOR	V2, V10, V2
	VXOR	V3, V11, V3
	VXOR	V4, V12, V4
	VXOR	V5, V13, V5
	VXOR	V6, V14, V6
	VXOR	V7, V15, V7

	ADD	$256, R4
	ADD	$256, R9
	ADD	$256, R21
	ADD	$256, R22
	BDNZ	loop

fold8:
	// R5 = m < 16 blocks are left. Accumulator i is 7-i+m blocks before
	// the end: multiply each by its fold[7-i+m] (which also brings in the
	// x^32, see consts.go) and XOR them all into G. The eight VPMSUMDs are
	// independent.
	SLD	$4, R5, R7
	ADD	R6, R7, R7  // &fold[m]
	LXVD2X	(R7)(R20), V8
	LXVD2X	(R7)(R19), V9
	LXVD2X	(R7)(R18), V10
	LXVD2X	(R7)(R17), V11
	LXVD2X	(R7)(R16), V12
	LXVD2X	(R7)(R15), V13
	LXVD2X	(R7)(R14), V14
	LXVD2X	(R7)(R0), V15
	VPMSUMD	V0, V8, V0
	VPMSUMD	V1, V9, V1
	VPMSUMD	V2, V10, V2
	VPMSUMD	V3, V11, V3
	VPMSUMD	V4, V12, V4
	VPMSUMD	V5, V13, V5
	VPMSUMD	V6, V14, V6
	VPMSUMD	V7, V15, V7
	VXOR	V0, V1, V0
	VXOR	V2, V3, V2
	VXOR	V4, V5, V4
	VXOR	V6, V7, V6
	VXOR	V0, V2, V0
	VXOR	V4, V6, V4
	VXOR	V0, V4, G

tail:
	// The last R5 blocks (all of them for inputs under 128 bytes): block
	// j of m is m-1-j blocks before the end, so it takes fold[m-1-j].
	CMP	R5, $0
	BEQ	reduce
	MOVD	R5, CTR
	SLD	$4, R5, R7
	ADD	R6, R7, R7
	ADD	$-16, R7  // &fold[m-1]

tailloop:
	CPLOAD(R4, R21, R0, V8)
	LXVD2X	(R7)(R0), V9
	VXOR	V8, VCRC, V8
	VXOR	VCRC, VCRC, VCRC
	VPMSUMD	V8, V9, V8
	VXOR	G, V8, G
	ADD	$16, R4
	ADD	$16, R21
	ADD	$-16, R7
	BDNZ	tailloop

reduce:
	// G ≡ M·x^32 (mod P) has degree < 96. Fold its top 32 bits down
	// (g2·x^64 lands in dw0), then Barrett-reduce dw0 to 32 bits.
	MOVD	$T_REDUCE, R7
	LXVD2X	(R6)(R7), V8
	MOVD	$T_MU, R7
	LXVD2X	(R6)(R7), V9
	MOVD	$T_POLY, R7
	LXVD2X	(R6)(R7), V10
	MOVD	$T_MASK, R7
	LXVD2X	(R6)(R7), V11

	VPMSUMD	G, V8, V12
	VXOR	V12, G, V12           // dw0 = Y, degree < 64
	VPMSUMD	V12, V9, V13          // Yh·μ: q in dw1's low word
	VAND	V13, V11, V13         // q alone
	VPMSUMD	V13, V10, V13         // q·P: q·P mod x^32 in dw1's high word
	VSLDOI	$8, V13, V13, V13     // ... now in dw0's, beside Yl
	VXOR	V13, V12, V12
	MFVSRD	V12, R3
	SRD	$32, R3
	NOR	R3, R3, R3
	MOVW	R3, ret+64(FP)
	RET
