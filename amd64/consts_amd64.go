package amd64

import "slices"

// Folding constants, computed once from the slow reference in gf2_amd64.go.
// kXd folds a 128-bit lane d bytes forward (the kernels broadcast it to
// every lane of a ymm or zmm register); kYLanes and kZLanes fold each lane
// of one register to the end of that register (lane j of n moves
// 16·(n-1-j) bytes; the last lane's pair is the identity mod P).
var (
	kX16  = foldConst(16)
	kX32  = foldConst(32)
	kX64  = foldConst(64)
	kX128 = foldConst(128)
	kX192 = foldConst(192)
	kX256 = foldConst(256)

	kX0  = foldConst(0)
	kX48 = foldConst(48)

	kYLanes = [4]uint64(slices.Concat(kX16[:], kX0[:]))
	kZLanes = [8]uint64(slices.Concat(kX48[:], kX32[:], kX16[:], kX0[:]))
)
