package amd64

import "unsafe"

// fusedZMM runs the fused loop of fusion_amd64.s over p, 64-byte aligned,
// split as planFused says.
//
//go:noescape
func fusedZMM(crc uint32, p []byte, iters, extra, s int) uint32

// Bytes per iteration of the fused zmm loop: 3 zmm blocks, 2 quadwords
// from each of the 3 CRC32Q chains.
const (
	fuseZVector = 192
	fuseZChain  = 16
)

// planFused splits n bytes for a fused loop that takes vec bytes of vector
// data and chain bytes of each of 3 chains per iteration: iters
// iterations, then extra more blocks of blk vector bytes, and s bytes per
// chain (a multiple of 8; the last chain also takes the < 24 bytes left).
func planFused(n, vec, chain, blk int) (iters, extra, s int) {
	iters = n / (vec + 3*chain)
	left := n - iters*(vec+3*chain)
	extra = left / blk
	left -= extra * blk
	return iters, extra, iters*chain + left/24*8
}

// updateFusedZMM is the fused path of the avx512 kernel: raw state in and
// out, len(p) >= 63 + fuseZVector + 3*fuseZChain.
func updateFusedZMM(crc uint32, p []byte) uint32 {
	head := int(-uintptr(unsafe.Pointer(unsafe.SliceData(p))) & 63)
	crc = scalar(crc, p[:head])
	p = p[head:]
	iters, extra, s := planFused(len(p), fuseZVector, fuseZChain, 64)
	return fusedZMM(crc, p, iters, extra, s)
}
