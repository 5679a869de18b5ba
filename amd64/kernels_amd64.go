package amd64

import (
	"fmt"
	"strings"
	"sync"

	"github.com/xlogfs/xlogfs/cksum/crc32c"
)

// Assembly routines. All take and return the raw CRC state (no inversions).

// scalar is one CRC32Q chain (scalar_amd64.s).
//
//go:noescape
func scalar(crc uint32, p []byte) uint32

// threeway is three CRC32Q chains merged by PCLMULQDQ, the method of
// Linux's crc32c_x86_3way and of hash/crc32 (threeway_amd64.s); any length.
//
//go:noescape
func threeway(crc uint32, p []byte) uint32

// foldXMM is 128-bit PCLMULQDQ folding (xmm_amd64.s); len(p) >= 64.
//
//go:noescape
func foldXMM(crc uint32, p []byte) uint32

// foldYMM is 256-bit VPCLMULQDQ folding with AVX-512VL's VPTERNLOGQ
// (ymm_amd64.s); len(p) >= 128.
//
//go:noescape
func foldYMM(crc uint32, p []byte) uint32

// foldVEX is 256-bit VPCLMULQDQ folding in VEX encoding, for AVX2 without
// AVX-512 (ymmvex_amd64.s); len(p) >= 128.
//
//go:noescape
func foldVEX(crc uint32, p []byte) uint32

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

// What this CPU can run (cpu_amd64.go reads CPUID; x/sys/cpu reports AVX2
// and AVX-512 only when the OS saves the ymm and zmm state).
var (
	hasCLMUL = cpuInfo.SSE42 && cpuInfo.PCLMULQDQ
	// VEX-encoded VPCLMULQDQ on ymm registers needs the VPCLMULQDQ CPUID
	// bit and AVX (here AVX2, which the kernel's other instructions need).
	hasVEX    = hasCLMUL && cpuInfo.AVX2 && cpuInfo.VPCLMULQDQ
	hasAVX512 = hasVEX && cpuInfo.AVX512F && cpuInfo.AVX512VL
)

// A method is one routine a kernel dispatches to, by input length: raw
// state in and out, inputs of min bytes or more.
type method struct {
	name string
	min  int
	f    func(uint32, []byte) uint32
}

// A copyMethod is one copying routine: raw state in and out, len(dst) ==
// len(src) >= min, the buffers apart.
type copyMethod struct {
	name string
	min  int
	f    func(uint32, []byte, []byte) uint32
}

// The shortest inputs of the routines that need a minimum (after the
// head that aligns the fused loops and the copying zmm loads).
const (
	minFoldXMM  = 64
	minFoldYMM  = 128
	minFoldZMM  = 320
	minFusedZMM = 63 + fuseZVector + 3*fuseZChain
	minFusedZ6  = 63 + fuseZ6Vector + 6*fuseZ6Chain
	minFusedXMM = 63 + fuseXVector + 3*fuseXChain
	minFusedVEX = 63 + fuseVVector + 3*fuseVChain

	minCopyZMM      = 63 + 256
	minCopyFusedZMM = 63 + 7 + fuseZVector + 3*fuseZChain
	minCopyFusedXMM = 63 + 7 + fuseXVector + 3*fuseXChain
	minCopyFusedVEX = 63 + 7 + fuseVVector + 3*fuseVChain
)

// The kernels' dispatch: from[i] is the first input length the kernel's
// method i takes (from[0] = 0; a method whose from equals the next one's is
// not used). Each kernel's methods are listed in kernelDefs in the order
// of these arrays. The calibration (calibrate_amd64.go) sets them once, at
// the first call of Kernels; until then, and if it cannot run, they hold
// the default plans of defaults.
var (
	avx512From               [7]int
	avx512CopyFrom           [6]int
	vexFrom, vexCopyFrom     [4]int
	clmulFrom, clmulCopyFrom [4]int
)

// crc32cAVX512 is the avx512 kernel.
func crc32cAVX512(crc uint32, p []byte) uint32 {
	c, n, f := ^crc, len(p), &avx512From
	switch {
	case n < f[1]:
		c = scalar(c, p)
	case n < f[2]:
		c = threeway(c, p)
	case n < f[3]:
		c = foldXMM(c, p)
	case n < f[4]:
		c = foldYMM(c, p)
	case n < f[5]:
		c = foldZMM(c, p)
	case n < f[6]:
		c = updateFusedZMM(c, p)
	default:
		c = updateFusedZMM6(c, p)
	}
	return ^c
}

// crc32cVEX is the avx2-vpclmul kernel.
func crc32cVEX(crc uint32, p []byte) uint32 {
	c, n, f := ^crc, len(p), &vexFrom
	switch {
	case n < f[1]:
		c = scalar(c, p)
	case n < f[2]:
		c = threeway(c, p)
	case n < f[3]:
		c = foldVEX(c, p)
	default:
		c = updateFusedVEX(c, p)
	}
	return ^c
}

// crc32cCLMUL is the sse42-clmul kernel.
func crc32cCLMUL(crc uint32, p []byte) uint32 {
	c, n, f := ^crc, len(p), &clmulFrom
	switch {
	case n < f[1]:
		c = scalar(c, p)
	case n < f[2]:
		c = threeway(c, p)
	case n < f[3]:
		c = foldXMM(c, p)
	default:
		c = updateFusedXMM(c, p)
	}
	return ^c
}

// crc32cCombine is Kernel.Combine for every kernel. For finished CRCs,
// CRC(A‖B) = CRC(A)·x^(8·len(B)) ⊕ CRC(B) mod P: the inversions of A‖B
// and of B line up and cancel, so the raw-state shift applies unchanged.
func crc32cCombine(crcA, crcB uint32, lenB int) uint32 {
	if lenB < 0 {
		panic(fmt.Sprintf("amd64: Combine with negative length %d", lenB))
	}
	return shift(crcA, uint64(lenB)) ^ crcB
}

// kernelDef is one kernel: what the CPU needs for it, its methods in
// order of input length, and the arrays its dispatch reads.
type kernelDef struct {
	name, desc string
	ok         bool
	update     func(uint32, []byte) uint32 // finished CRC, as Kernel.Update
	copyUpdate func([]byte, []byte, uint32) uint32
	methods    []method
	from       []int
	copies     []copyMethod
	copyFrom   []int
	// zmmFrom is the shortest input a zmm method may take: Intel runs
	// 512-bit instructions slowly for ~2 µs after a pause (the warm-up
	// a calibration with warm registers cannot see), AMD does not.
	zmmFrom int
}

// twoPass is the copying "method" that copies and then runs update (a
// finished-CRC Update) over the copy: what CopyUpdate must never be slower
// than.
func twoPass(update func(uint32, []byte) uint32) func(uint32, []byte, []byte) uint32 {
	return func(c uint32, dst, src []byte) uint32 {
		copy(dst, src)
		return ^update(^c, dst)
	}
}

// kernelDefs lists the kernels, fastest first; each one's methods are in
// the order of its dispatch arrays.
var kernelDefs = func() []*kernelDef {
	zmmFrom := 0
	if cpuInfo.Vendor == "GenuineIntel" {
		zmmFrom = 2048
	}
	return []*kernelDef{
		{
			name: "avx512", desc: "VPCLMULQDQ zmm folding fused with 3 or 6 CRC32Q streams",
			ok: hasAVX512, update: crc32cAVX512, copyUpdate: crc32cCopyAVX512, zmmFrom: zmmFrom,
			methods: []method{
				{"scalar", 0, scalar}, {"3way", threeMin, threeway}, {"fold128", minFoldXMM, foldXMM},
				{"fold256", minFoldYMM, foldYMM}, {"fold512", minFoldZMM, foldZMM}, {"fused512", minFusedZMM, updateFusedZMM},
				{"fused512x6", minFusedZ6, updateFusedZMM6},
			},
			from: avx512From[:],
			copies: []copyMethod{
				{"scalar", 0, copyScalar}, {"copy+update", 0, twoPass(crc32cAVX512)}, {"fold128", minFoldXMM, copyViaXMM},
				{"fold256", minFoldYMM, copyViaYMM}, {"fold512", minCopyZMM, copyViaZMM}, {"fused512", minCopyFusedZMM, copyViaFusedZMM},
			},
			copyFrom: avx512CopyFrom[:],
		},
		{
			name: "avx2-vpclmul", desc: "VPCLMULQDQ ymm folding (AVX2, no AVX-512) fused with 3 CRC32Q streams",
			ok: hasVEX, update: crc32cVEX, copyUpdate: crc32cCopyVEX,
			methods: []method{
				{"scalar", 0, scalar}, {"3way", threeMin, threeway}, {"fold256", minFoldYMM, foldVEX}, {"fused256", minFusedVEX, updateFusedVEX},
			},
			from: vexFrom[:],
			copies: []copyMethod{
				{"scalar", 0, copyScalar}, {"copy+update", 0, twoPass(crc32cVEX)}, {"fold256", minFoldYMM, copyViaVEX},
				{"fused256", minCopyFusedVEX, copyViaFusedVEX},
			},
			copyFrom: vexCopyFrom[:],
		},
		{
			name: "sse42-clmul", desc: "PCLMULQDQ xmm folding fused with 3 CRC32Q streams",
			ok: hasCLMUL, update: crc32cCLMUL, copyUpdate: crc32cCopyCLMUL,
			methods: []method{
				{"scalar", 0, scalar}, {"3way", threeMin, threeway}, {"fold128", minFoldXMM, foldXMM}, {"fused128", minFusedXMM, updateFusedXMM},
			},
			from: clmulFrom[:],
			copies: []copyMethod{
				{"scalar", 0, copyScalar}, {"copy+update", 0, twoPass(crc32cCLMUL)}, {"fold128", minFoldXMM, copyViaXMM},
				{"fused128", minCopyFusedXMM, copyViaFusedXMM},
			},
			copyFrom: clmulCopyFrom[:],
		},
	}
}()

// minOf is the shortest input method i of k may take: its routine's
// minimum, and for zmm methods the CPU's (kernelDef.zmmFrom).
func (k *kernelDef) minOf(name string, routineMin int) int {
	if strings.HasPrefix(name, "fold512") || strings.HasPrefix(name, "fused512") {
		return max(routineMin, k.zmmFrom)
	}
	return routineMin
}

var calibrateOnce sync.Once

// Kernels lists the kernels this CPU can run, fastest first. The first
// call calibrates them (calibrate_amd64.go): a few milliseconds.
func Kernels() []crc32c.Kernel {
	calibrateOnce.Do(calibrate)
	var ks []crc32c.Kernel
	for _, k := range kernelDefs {
		if k.ok {
			ks = append(ks, crc32c.Kernel{Name: k.name, Desc: k.desc, Update: k.update, Combine: crc32cCombine, CopyUpdate: k.copyUpdate})
		}
	}
	return ks
}
