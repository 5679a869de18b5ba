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
	kX96  = foldConst(96)
	kX128 = foldConst(128)
	kX192 = foldConst(192)
	kX256 = foldConst(256)

	kX0  = foldConst(0)
	kX48 = foldConst(48)

	kYLanes = [4]uint64(slices.Concat(kX16[:], kX0[:]))
	kZLanes = [8]uint64(slices.Concat(kX48[:], kX32[:], kX16[:], kX0[:]))
)

// threeway_amd64.s's sizes: below threeMin bytes one chain; blocks of up to
// threeBlock bytes, 3 lanes of threeMaxLane quadwords.
const (
	threeMin     = 200
	threeBlock   = 3072
	threeMaxLane = threeBlock / 24
)

// kThree[L] moves the states of lanes A and B of a block of 3 lanes of L
// quadwords to the block's end: T(8·16L) for A (16L bytes after it), T(8·8L)
// for B. T(128L) = T(128(L-1))·x^128, one multiplication per entry.
var kThree = func() (t [threeMaxLane + 1][2]uint64) {
	a, b := xpow(-33), xpow(-33)
	x128, x64 := xpow(128), xpow(64)
	for l := 1; l <= threeMaxLane; l++ {
		a, b = mulmod(a, x128), mulmod(b, x64)
		t[l] = [2]uint64{uint64(a), uint64(b)}
	}
	return
}()
