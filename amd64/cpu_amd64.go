package amd64

import (
	"fmt"
	"strings"

	"golang.org/x/sys/cpu"
)

// cpuid runs the CPUID instruction (cpuid_amd64.s).
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// CPUInfo is what the kernels were chosen by: the CPU's vendor, family and
// model, and the features each kernel needs.
type CPUInfo struct {
	Vendor string // "GenuineIntel", "AuthenticAMD", ...
	Family uint32 // display family (base + extended)
	Model  uint32 // display model (base + extended)

	SSE42, PCLMULQDQ bool
	AVX2             bool // with the OS saving the ymm state
	// VPCLMULQDQ is the CPUID.(EAX=7,ECX=0):ECX bit 10, read here and
	// not from golang.org/x/sys/cpu: its HasAVX512VPCLMULQDQ is the same
	// bit but set only when AVX-512 is usable, so it is false on the CPUs
	// with VPCLMULQDQ and no AVX-512 (AMD Zen 3, Intel's client cores
	// since Alder Lake) that the avx2-vpclmul kernel is for.
	VPCLMULQDQ bool
	// AVX-512 Foundation, Vector Length and Byte/Word, each only with
	// the OS saving the zmm and opmask state (x/sys/cpu checks XCR0).
	AVX512F, AVX512VL, AVX512BW bool
}

// String lists the vendor, family, model and the features present.
func (c CPUInfo) String() string {
	var f []string
	for _, x := range []struct {
		on   bool
		name string
	}{{c.SSE42, "sse4.2"}, {c.PCLMULQDQ, "pclmulqdq"}, {c.AVX2, "avx2"}, {c.VPCLMULQDQ, "vpclmulqdq"},
		{c.AVX512F, "avx512f"}, {c.AVX512VL, "avx512vl"}, {c.AVX512BW, "avx512bw"}} {
		if x.on {
			f = append(f, x.name)
		}
	}
	if len(f) == 0 {
		f = append(f, "none of the features the kernels use")
	}
	return fmt.Sprintf("%s family %#x model %#x: %s", c.Vendor, c.Family, c.Model, strings.Join(f, " "))
}

// readCPU reads CPUID (vendor, family, model, the VPCLMULQDQ bit) and takes
// the features whose OS support x/sys/cpu checks from it.
func readCPU() CPUInfo {
	max, b, c, d := cpuid(0, 0)
	var vendor [12]byte
	for i, r := range []uint32{b, d, c} {
		for j := range 4 {
			vendor[4*i+j] = byte(r >> (8 * j))
		}
	}
	info := CPUInfo{
		Vendor:    strings.TrimRight(string(vendor[:]), "\x00"),
		SSE42:     cpu.X86.HasSSE42,
		PCLMULQDQ: cpu.X86.HasPCLMULQDQ,
		AVX2:      cpu.X86.HasAVX2,
		AVX512F:   cpu.X86.HasAVX512F,
		AVX512VL:  cpu.X86.HasAVX512VL,
		AVX512BW:  cpu.X86.HasAVX512BW,
	}
	if max >= 1 {
		// Display family and model, as the SDM and the APM define them.
		a, _, _, _ := cpuid(1, 0)
		fam, model := a>>8&0xf, a>>4&0xf
		if fam == 0xf {
			fam += a >> 20 & 0xff
		}
		if fam == 0x6 || fam >= 0xf {
			model += a >> 16 & 0xf << 4
		}
		info.Family, info.Model = fam, model
	}
	if max >= 7 {
		_, _, c7, _ := cpuid(7, 0)
		info.VPCLMULQDQ = c7&(1<<10) != 0
	}
	return info
}

// cpuInfo is this CPU, read once.
var cpuInfo = readCPU()

// CPU returns what the kernels were chosen by.
func CPU() CPUInfo { return cpuInfo }
