#include "textflag.h"

// func ticks() uint64
//
// The time-stamp counter. LFENCE first, so that the read waits for the
// instructions before it (the work being timed) to finish, and none after
// it starts early: RDTSC alone is not ordered with the code around it.
TEXT ·ticks(SB), NOSPLIT, $0-8
	LFENCE
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET
