//go:build ppc64 || ppc64le

#include "textflag.h"

// func ticks() uint64
//
// The time base register (SPR 268), a constant-rate counter (512 MHz on
// POWER8 and later), readable from user mode.
TEXT ·ticks(SB), NOSPLIT|NOFRAME, $0-8
	MOVD SPR(268), R3
	MOVD R3, ret+0(FP)
	RET
