package amd64

import "golang.org/x/sys/cpu"

// Assembly routines. All take and return the raw CRC state (no inversions).
//
//go:noescape
func scalar(crc uint32, p []byte) uint32

// foldXMM needs len(p) >= 64.
//
//go:noescape
func foldXMM(crc uint32, p []byte) uint32

var (
	hasCLMUL  = cpu.X86.HasSSE42 && cpu.X86.HasPCLMULQDQ
	hasAVX512 = hasCLMUL && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VPCLMULQDQ
)

// updateAVX512 is the avx512 kernel.
func updateAVX512(crc uint32, p []byte) uint32 {
	switch {
	case len(p) < 64:
		return ^scalar(^crc, p)
	case len(p) < 320:
		return ^foldXMM(^crc, p)
	}
	if len(p) >= fuseMin {
		return ^updateFusedZMM(^crc, p)
	}
	return ^foldZMM(^crc, p)
}

var fuseMin = 8192

// updateCLMUL is the sse42-clmul kernel.
func updateCLMUL(crc uint32, p []byte) uint32 {
	if len(p) < 64 {
		return ^scalar(^crc, p)
	}
	return ^foldXMM(^crc, p)
}

// Kernels lists the kernels this CPU can run, fastest first.
func Kernels() []Kernel {
	var ks []Kernel
	if hasAVX512 {
		ks = append(ks, Kernel{Name: "avx512", Desc: "VPCLMULQDQ zmm folding fused with CRC32Q streams", Update: updateAVX512})
	}
	if hasCLMUL {
		ks = append(ks, Kernel{Name: "sse42-clmul", Desc: "PCLMULQDQ folding fused with 3 CRC32Q streams", Update: updateCLMUL})
	}
	return ks
}

// foldZMM needs len(p) >= 320.
//
//go:noescape
func foldZMM(crc uint32, p []byte) uint32

// xpow8n returns x^(8n-33) mod P (shift_amd64.s).
func xpow8n(n uint64) uint64

// shift returns crc·x^(8n) mod P: a raw state carried over n zero bytes.
func shift(crc uint32, n uint64) uint32
