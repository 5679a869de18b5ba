package amd64

// Routines are single methods of the kernels, for package cksum to build
// other dispatchers from (its linux implementation mirrors Linux's
// crc32c_arch with them). Each has the semantics of Kernel.Update (finished
// CRC in and out) for every length; a field is nil when this CPU cannot
// run the routine.
type Routines struct {
	// Scalar is one CRC32Q chain, 8 bytes at a time (SSE4.2).
	Scalar func(crc uint32, p []byte) uint32
	// ThreeWay is three CRC32Q chains over the lanes of 3 KiB blocks,
	// merged by PCLMULQDQ, one chain below 200 bytes and after the last
	// block (threeway_amd64.s; SSE4.2 and PCLMULQDQ).
	ThreeWay func(crc uint32, p []byte) uint32
	// FoldZMM is VPCLMULQDQ folding of four zmm accumulators and nothing
	// else (no CRC32Q chains beside it), from 320 bytes; shorter inputs
	// take the ymm, then xmm folding, then one chain (AVX-512 F and VL
	// with VPCLMULQDQ).
	FoldZMM func(crc uint32, p []byte) uint32
	// Combine is Kernel.Combine (PCLMULQDQ).
	Combine func(crcA, crcB uint32, lenB int) uint32
}

// Methods returns the routines this CPU can run.
func Methods() Routines {
	var r Routines
	if cpuInfo.SSE42 {
		r.Scalar = func(crc uint32, p []byte) uint32 { return ^scalar(^crc, p) }
	}
	if hasCLMUL {
		r.ThreeWay = func(crc uint32, p []byte) uint32 { return ^threeway(^crc, p) }
		r.Combine = crc32cCombine
	}
	if hasAVX512 {
		r.FoldZMM = func(crc uint32, p []byte) uint32 {
			c := ^crc
			switch n := len(p); {
			case n >= minFoldZMM:
				c = foldZMM(c, p)
			case n >= minFoldYMM:
				c = foldYMM(c, p)
			case n >= minFoldXMM:
				c = foldXMM(c, p)
			default:
				c = scalar(c, p)
			}
			return ^c
		}
	}
	return r
}
