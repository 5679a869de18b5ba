package amd64

import "unsafe"

// fusedZMM and fusedXMM run the fused loops of fusion_amd64.s over p,
// 64-byte aligned, split as planFused says; fusedVEX that of
// fusionvex_amd64.s.
//
//go:noescape
func fusedZMM(crc uint32, p []byte, iters, extra, s int) uint32

//go:noescape
func fusedXMM(crc uint32, p []byte, iters, extra, s int) uint32

//go:noescape
func fusedVEX(crc uint32, p []byte, iters, extra, s int) uint32

// Bytes per iteration of the fused loops: vector bytes, and bytes of each
// of the 3 CRC32Q chains.
const (
	fuseZVector = 192 // 3 zmm
	fuseZChain  = 16  // 2 quadwords
	fuseXVector = 64  // 4 xmm
	fuseXChain  = 24  // 3 quadwords
	fuseVVector = 96  // 3 ymm
	fuseVChain  = 32  // 4 quadwords
)

// planFused splits n bytes for a fused loop that takes vec bytes of vector
// data and chain bytes of each of 3 chains per iteration: iters
// iterations, then extra more blocks of blk vector bytes, and s bytes per
// chain (a multiple of 8; the last chain also takes the < 24 bytes left).
func planFused(n, vec, chain, blk int) (iters, extra, s int) {
	return planChains(n, vec, chain, blk, 3)
}

// planChains is planFused for k chains: the last takes the < 8k bytes left.
func planChains(n, vec, chain, blk, k int) (iters, extra, s int) {
	iters = n / (vec + k*chain)
	left := n - iters*(vec+k*chain)
	extra = left / blk
	left -= extra * blk
	return iters, extra, iters*chain + left/(8*k)*8
}

// fusedZMM6 is the fused loop of fusion6_amd64.s: 3 zmm accumulators
// beside 6 CRC32Q chains, split by planChains(n, fuseZ6Vector,
// fuseZ6Chain, 64, 6).
//
//go:noescape
func fusedZMM6(crc uint32, p []byte, iters, extra, s int) uint32

const (
	fuseZ6Vector = 192 // 3 zmm
	fuseZ6Chain  = 32  // 4 quadwords of each of 6 chains
)

// updateFusedZMM6 is the six-chain fused path of the avx512 kernel: raw
// state in and out, len(p) >= 63 + fuseZ6Vector + 6*fuseZ6Chain.
func updateFusedZMM6(crc uint32, p []byte) uint32 {
	crc, p = alignHead(crc, p)
	iters, extra, s := planChains(len(p), fuseZ6Vector, fuseZ6Chain, 64, 6)
	return fusedZMM6(crc, p, iters, extra, s)
}

// alignHead runs CRC32 over the bytes before the first 64-byte boundary,
// so the vector loads never split a cache line (Sapphire Rapids pays ~20%
// for unaligned 64-byte loads).
func alignHead(crc uint32, p []byte) (uint32, []byte) {
	if head := int(-uintptr(unsafe.Pointer(unsafe.SliceData(p))) & 63); head != 0 {
		crc, p = scalar(crc, p[:head]), p[head:]
	}
	return crc, p
}

// updateFusedZMM is the fused path of the avx512 kernel: raw state in and
// out, len(p) >= 63 + fuseZVector + 3*fuseZChain.
func updateFusedZMM(crc uint32, p []byte) uint32 {
	crc, p = alignHead(crc, p)
	iters, extra, s := planFused(len(p), fuseZVector, fuseZChain, 64)
	return fusedZMM(crc, p, iters, extra, s)
}

// updateFusedXMM is the fused path of the sse42-clmul kernel: raw state in
// and out, len(p) >= 63 + fuseXVector + 3*fuseXChain.
func updateFusedXMM(crc uint32, p []byte) uint32 {
	crc, p = alignHead(crc, p)
	iters, extra, s := planFused(len(p), fuseXVector, fuseXChain, 16)
	return fusedXMM(crc, p, iters, extra, s)
}

// updateFusedVEX is the fused path of the avx2-vpclmul kernel: raw state in
// and out, len(p) >= 63 + fuseVVector + 3*fuseVChain.
func updateFusedVEX(crc uint32, p []byte) uint32 {
	crc, p = alignHead(crc, p)
	iters, extra, s := planFused(len(p), fuseVVector, fuseVChain, 32)
	return fusedVEX(crc, p, iters, extra, s)
}
