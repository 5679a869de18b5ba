package amd64

import "unsafe"

// Copying routines (copy_amd64.s, copyfused_amd64.s): each is an Update
// routine that also stores every byte it loads to dst, at the same offset.
// Raw state in and out; len(dst) >= len(src); the buffers do not overlap.

//go:noescape
func copyScalar(crc uint32, dst, src []byte) uint32

// len(src) >= 64, a multiple of 16.
//
//go:noescape
func copyFoldXMM(crc uint32, dst, src []byte) uint32

// len(src) >= 128, a multiple of 16.
//
//go:noescape
func copyFoldYMM(crc uint32, dst, src []byte) uint32

// len(src) >= 256, a multiple of 64; dst 64-byte aligned.
//
//go:noescape
func copyFoldZMM(crc uint32, dst, src []byte) uint32

// Split by planFused; len(src) a multiple of 8; dst 64-byte aligned.
//
//go:noescape
func copyFusedZMM(crc uint32, dst, src []byte, iters, extra, s int) uint32

// Split by planFused; len(src) a multiple of 8; dst 16-byte aligned.
//
//go:noescape
func copyFusedXMM(crc uint32, dst, src []byte, iters, extra, s int) uint32

// len(src) >= 128, a multiple of 16 (copyvex_amd64.s).
//
//go:noescape
func copyFoldVEX(crc uint32, dst, src []byte) uint32

// Split by planFused; len(src) a multiple of 8; dst 64-byte aligned.
//
//go:noescape
func copyFusedVEX(crc uint32, dst, src []byte, iters, extra, s int) uint32

// copyUpdate is Kernel.CopyUpdate's start for every kernel: it takes as
// many bytes as copy would, and tells whether the buffers overlap, in
// which case the kernel copies first (copy is a memmove) and checksums the
// copy, since a one-pass routine could read bytes it has already
// overwritten. (Each kernel's CopyUpdate calls its routines directly: on
// 64 bytes an indirect call more is a tenth of the time.)
func copyUpdate(dst, src []byte) ([]byte, []byte, bool) {
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	return dst, src, overlap(dst, src)
}

// overlap reports whether a and b share any byte.
func overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// alignDst copies and checksums the bytes before dst's next 64-byte
// boundary with the scalar routine, so the vector stores that follow never
// split a cache line.
func alignDst(crc uint32, dst, src []byte) (uint32, []byte, []byte) {
	if head := int(-uintptr(unsafe.Pointer(unsafe.SliceData(dst))) & 63); head != 0 {
		crc, dst, src = copyScalar(crc, dst[:head], src[:head]), dst[head:], src[head:]
	}
	return crc, dst, src
}

// copyTail runs copyScalar over the bytes a vector routine left, if any
// (a call of an assembly routine costs a few ns even with nothing to do,
// which shows on short inputs).
func copyTail(c uint32, dst, src []byte) uint32 {
	if len(src) == 0 {
		return c
	}
	return copyScalar(c, dst, src)
}

// The copying methods of the kernels' CopyUpdate (kernelDefs lists them):
// each runs a copying routine over what it takes and copyScalar over the
// rest, on raw state; len(dst) == len(src) >= the method's minimum.

// copyVia16 runs a copying routine that takes a multiple of 16 bytes.
func copyVia16(c uint32, dst, src []byte, f func(uint32, []byte, []byte) uint32) uint32 {
	m := len(src) &^ 15
	c = f(c, dst[:m], src[:m])
	return copyTail(c, dst[m:], src[m:])
}

func copyViaXMM(c uint32, dst, src []byte) uint32 { return copyVia16(c, dst, src, copyFoldXMM) }
func copyViaYMM(c uint32, dst, src []byte) uint32 { return copyVia16(c, dst, src, copyFoldYMM) }
func copyViaVEX(c uint32, dst, src []byte) uint32 { return copyVia16(c, dst, src, copyFoldVEX) }

// copyViaZMM aligns dst to 64 bytes, then copyFoldZMM takes whole 64-byte
// blocks.
func copyViaZMM(c uint32, dst, src []byte) uint32 {
	c, dst, src = alignDst(c, dst, src)
	m := len(src) &^ 63
	c = copyFoldZMM(c, dst[:m], src[:m])
	return copyTail(c, dst[m:], src[m:])
}

// copyViaFused aligns dst to 64 bytes, then a fused copying loop takes
// whole quadwords, split by planFused.
func copyViaFused(c uint32, dst, src []byte, f func(uint32, []byte, []byte, int, int, int) uint32, vec, chain, blk int) uint32 {
	c, dst, src = alignDst(c, dst, src)
	m := len(src) &^ 7
	iters, extra, s := planFused(m, vec, chain, blk)
	c = f(c, dst[:m], src[:m], iters, extra, s)
	return copyTail(c, dst[m:], src[m:])
}

func copyViaFusedZMM(c uint32, dst, src []byte) uint32 {
	return copyViaFused(c, dst, src, copyFusedZMM, fuseZVector, fuseZChain, 64)
}

func copyViaFusedXMM(c uint32, dst, src []byte) uint32 {
	return copyViaFused(c, dst, src, copyFusedXMM, fuseXVector, fuseXChain, 16)
}

func copyViaFusedVEX(c uint32, dst, src []byte) uint32 {
	return copyViaFused(c, dst, src, copyFusedVEX, fuseVVector, fuseVChain, 32)
}

// copyAVX512 is the avx512 kernel's CopyUpdate on raw state, dispatched as
// avx512CopyFrom says (the order of kernelDefs' copies).
func copyAVX512(c uint32, dst, src []byte) uint32 {
	switch n, f := len(src), &avx512CopyFrom; {
	case n < f[1]:
		return copyScalar(c, dst, src)
	case n < f[2]:
		copy(dst, src)
		return ^crc32cAVX512(^c, dst)
	case n < f[3]:
		return copyViaXMM(c, dst, src)
	case n < f[4]:
		return copyViaYMM(c, dst, src)
	case n < f[5]:
		return copyViaZMM(c, dst, src)
	}
	return copyViaFusedZMM(c, dst, src)
}

// copyVEX is the avx2-vpclmul kernel's CopyUpdate on raw state.
func copyVEX(c uint32, dst, src []byte) uint32 {
	switch n, f := len(src), &vexCopyFrom; {
	case n < f[1]:
		return copyScalar(c, dst, src)
	case n < f[2]:
		copy(dst, src)
		return ^crc32cVEX(^c, dst)
	case n < f[3]:
		return copyViaVEX(c, dst, src)
	}
	return copyViaFusedVEX(c, dst, src)
}

// copyCLMUL is the sse42-clmul kernel's CopyUpdate on raw state.
func copyCLMUL(c uint32, dst, src []byte) uint32 {
	switch n, f := len(src), &clmulCopyFrom; {
	case n < f[1]:
		return copyScalar(c, dst, src)
	case n < f[2]:
		copy(dst, src)
		return ^crc32cCLMUL(^c, dst)
	case n < f[3]:
		return copyViaXMM(c, dst, src)
	}
	return copyViaFusedXMM(c, dst, src)
}

func crc32cCopyAVX512(dst, src []byte, crc uint32) uint32 {
	dst, src, over := copyUpdate(dst, src)
	if over {
		copy(dst, src)
		return crc32cAVX512(crc, dst)
	}
	return ^copyAVX512(^crc, dst, src)
}

func crc32cCopyVEX(dst, src []byte, crc uint32) uint32 {
	dst, src, over := copyUpdate(dst, src)
	if over {
		copy(dst, src)
		return crc32cVEX(crc, dst)
	}
	return ^copyVEX(^crc, dst, src)
}

func crc32cCopyCLMUL(dst, src []byte, crc uint32) uint32 {
	dst, src, over := copyUpdate(dst, src)
	if over {
		copy(dst, src)
		return crc32cCLMUL(crc, dst)
	}
	return ^copyCLMUL(^crc, dst, src)
}
