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

// copyUpdate is Kernel.CopyUpdate around a raw copying kernel: it takes as
// many bytes as copy would, and when the buffers overlap it copies first
// (copy is a memmove) and checksums the copy, since a one-pass kernel could
// read bytes it has already overwritten.
func copyUpdate(dst, src []byte, crc uint32, raw func(uint32, []byte, []byte) uint32, update func(uint32, []byte) uint32) uint32 {
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	if overlap(dst, src) {
		copy(dst, src)
		return update(crc, dst)
	}
	return ^raw(^crc, dst, src)
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
	head := int(-uintptr(unsafe.Pointer(unsafe.SliceData(dst))) & 63)
	return copyScalar(crc, dst[:head], src[:head]), dst[head:], src[head:]
}

// Where the copying kernels change method. The same as Update's (see
// kernels_amd64.go): each copying routine does its Update routine's work
// plus one store per load, so it keeps the same place among the others.
const (
	minCopyFold     = minFold
	minCopyYMM      = minYMM
	minCopyZMM      = minZMM
	minCopyFusedZMM = minFusedZMM
	minCopyFusedXMM = minFusedXMM
)

// copyAVX512 is the avx512 kernel's CopyUpdate on raw state.
func copyAVX512(crc uint32, dst, src []byte) uint32 {
	var m int // bytes done by the vector routine; the scalar one takes the rest
	switch n := len(src); {
	case n < minCopyFold:
	case n < minCopyYMM:
		m = n &^ 15
		crc = copyFoldXMM(crc, dst[:m], src[:m])
	case n < minCopyZMM:
		m = n &^ 15
		crc = copyFoldYMM(crc, dst[:m], src[:m])
	case n < minCopyFusedZMM:
		crc, dst, src = alignDst(crc, dst, src)
		m = len(src) &^ 63
		crc = copyFoldZMM(crc, dst[:m], src[:m])
	default:
		crc, dst, src = alignDst(crc, dst, src)
		m = len(src) &^ 7
		iters, extra, s := planFused(m, fuseZVector, fuseZChain, 64)
		crc = copyFusedZMM(crc, dst[:m], src[:m], iters, extra, s)
	}
	return copyScalar(crc, dst[m:], src[m:])
}

// copyCLMUL is the sse42-clmul kernel's CopyUpdate on raw state.
func copyCLMUL(crc uint32, dst, src []byte) uint32 {
	var m int
	switch n := len(src); {
	case n < minCopyFold:
	case n < minCopyFusedXMM:
		m = n &^ 15
		crc = copyFoldXMM(crc, dst[:m], src[:m])
	default:
		crc, dst, src = alignDst(crc, dst, src)
		m = len(src) &^ 7
		iters, extra, s := planFused(m, fuseXVector, fuseXChain, 16)
		crc = copyFusedXMM(crc, dst[:m], src[:m], iters, extra, s)
	}
	return copyScalar(crc, dst[m:], src[m:])
}

func copyUpdateAVX512(dst, src []byte, crc uint32) uint32 {
	return copyUpdate(dst, src, crc, copyAVX512, updateAVX512)
}

func copyUpdateCLMUL(dst, src []byte, crc uint32) uint32 {
	return copyUpdate(dst, src, crc, copyCLMUL, updateCLMUL)
}
