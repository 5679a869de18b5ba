package amd64

import (
	"fmt"

	"golang.org/x/sys/cpu"

	"github.com/xlogfs/xlogfs/cksum/crc32c"
)

// Assembly routines. All take and return the raw CRC state (no inversions).

// scalar is one CRC32Q chain (scalar_amd64.s).
//
//go:noescape
func scalar(crc uint32, p []byte) uint32

// foldXMM is 128-bit PCLMULQDQ folding (xmm_amd64.s); len(p) >= 64.
//
//go:noescape
func foldXMM(crc uint32, p []byte) uint32

// foldYMM is 256-bit VPCLMULQDQ folding (ymm_amd64.s); len(p) >= 128.
//
//go:noescape
func foldYMM(crc uint32, p []byte) uint32

// foldZMM is 512-bit VPCLMULQDQ folding (zmm_amd64.s); len(p) >= 320.
//
//go:noescape
func foldZMM(crc uint32, p []byte) uint32

// xpow8n returns x^(8n-33) mod P (shift_amd64.s; for tests).
func xpow8n(n uint64) uint64

// shift returns crc·x^(8n) mod P: a raw state carried over n zero bytes
// (shift_amd64.s: popcount(n) PCLMULQDQ+CRC32Q steps for the constant,
// one more to apply it).
func shift(crc uint32, n uint64) uint32

// What this CPU can run. x/sys/cpu reports AVX-512 only when the OS saves
// the zmm state (XCR0 opmask, ZMM_Hi256 and Hi16_ZMM bits).
var (
	hasCLMUL  = cpu.X86.HasSSE42 && cpu.X86.HasPCLMULQDQ
	hasAVX512 = hasCLMUL && cpu.X86.HasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL &&
		cpu.X86.HasAVX512VPCLMULQDQ
)

// Where each kernel changes method, in bytes. Measured on a Sapphire
// Rapids class Xeon with calls chained through the CRC (each call waits for
// the previous result, as Update(Update(crc, a), b) does), so the latency
// of each method's final reduction counts.
const (
	// Below 64 bytes one CRC32Q chain (8 bytes / 3 cycles) wins: folding
	// and the final shift of the incoming state (SHIFTIN) cost ~20 cycles
	// of latency at the end.
	minFold = 64

	// foldYMM beats foldXMM from 128 bytes. It stays below zmm until 2 KiB:
	// Intel runs 512-bit instructions slowly for ~2 µs after a pause (zmm
	// warm-up). Measured here, a call after 0.3 ms of scalar work took
	// (median) 115 ns on zmm vs 73 on ymm at 512 bytes, 132 vs 65 at
	// 1 KiB, 184 vs 124 at 2 KiB; warm, zmm wins by 2 ns at 512 bytes,
	// 6 ns at 1 KiB, 19 ns at 2 KiB, 41 ns at 4 KiB.
	minYMM = 128
	minZMM = 2048

	// The fused loops need a few hundred cycles to pay for their run-time
	// shift constants and three-way merge: from 8 KiB (zmm) and 1 KiB
	// (xmm) they beat plain folding.
	minFusedZMM = 8192
	minFusedXMM = 1024
)

// updateAVX512 is the avx512 kernel.
func updateAVX512(crc uint32, p []byte) uint32 {
	switch n := len(p); {
	case n < minFold:
		return ^scalar(^crc, p)
	case n < minYMM:
		return ^foldXMM(^crc, p)
	case n < minZMM:
		return ^foldYMM(^crc, p)
	case n < minFusedZMM:
		return ^foldZMM(^crc, p)
	}
	return ^updateFusedZMM(^crc, p)
}

// updateCLMUL is the sse42-clmul kernel.
func updateCLMUL(crc uint32, p []byte) uint32 {
	switch n := len(p); {
	case n < minFold:
		return ^scalar(^crc, p)
	case n < minFusedXMM:
		return ^foldXMM(^crc, p)
	}
	return ^updateFusedXMM(^crc, p)
}

// combine is Kernel.Combine for both kernels. For finished CRCs,
// CRC(A‖B) = CRC(A)·x^(8·len(B)) ⊕ CRC(B) mod P: the inversions of A‖B
// and of B line up and cancel, so the raw-state shift applies unchanged.
func combine(crcA, crcB uint32, lenB int) uint32 {
	if lenB < 0 {
		panic(fmt.Sprintf("amd64: Combine with negative length %d", lenB))
	}
	return shift(crcA, uint64(lenB)) ^ crcB
}

// Kernels lists the kernels this CPU can run, fastest first.
func Kernels() []crc32c.Kernel {
	var ks []crc32c.Kernel
	if hasAVX512 {
		ks = append(ks, crc32c.Kernel{Name: "avx512", Desc: "VPCLMULQDQ zmm folding fused with 3 CRC32Q streams",
			Update: updateAVX512, Combine: combine, CopyUpdate: copyUpdateAVX512})
	}
	if hasCLMUL {
		ks = append(ks, crc32c.Kernel{Name: "sse42-clmul", Desc: "PCLMULQDQ xmm folding fused with 3 CRC32Q streams",
			Update: updateCLMUL, Combine: combine, CopyUpdate: copyUpdateCLMUL})
	}
	return ks
}
