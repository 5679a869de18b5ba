package cksum

import (
	"slices"

	"github.com/xlogfs/xlogfs/amd64"
)

// preferYMM lists the Intel family 6 models Linux marks
// X86_FEATURE_PREFER_YMM (zmm_exclusion_list, arch/x86/kernel/cpu/intel.c).
var preferYMM = []uint32{0x55, 0x6a, 0x6c, 0x7d, 0x7e, 0x9d, 0x8c, 0x8d}

// linuxFastAVX512 is Linux's have_vpclmul() && have_avx512() for cpu.
func linuxFastAVX512(cpu amd64.CPUInfo) bool {
	preferYMM := cpu.Vendor == "GenuineIntel" && cpu.Family == 6 && slices.Contains(preferYMM, cpu.Model)
	return cpu.VPCLMULQDQ && cpu.AVX2 && cpu.AVX512BW && cpu.AVX512VL && !preferYMM
}

// linuxUpdate is x86's crc32c_arch (see linux.go) on this CPU.
func linuxUpdate() (update func(uint32, []byte) uint32, combine func(uint32, uint32, int) uint32, desc string) {
	return crc32cLinuxX86(amd64.CPU(), amd64.Methods())
}

// crc32cLinuxX86 builds the dispatch for cpu from the routines r (split out so
// tests can build it for other CPUs than this one).
func crc32cLinuxX86(cpu amd64.CPUInfo, r amd64.Routines) (func(uint32, []byte) uint32, func(uint32, uint32, int) uint32, string) {
	switch {
	case r.Scalar == nil:
		return crc32cTable, nil, "Linux 6.18 x86 crc32c without SSE4.2: crc32c_base, a table lookup per byte"
	case r.ThreeWay == nil:
		return r.Scalar, nil, "Linux 6.18 x86 crc32c without PCLMULQDQ: one CRC32Q chain at every length"
	case linuxFastAVX512(cpu) && r.FoldZMM != nil:
		short, long := r.Scalar, r.FoldZMM
		return func(crc uint32, p []byte) uint32 {
			if len(p) < linuxBreakeven {
				return short(crc, p)
			}
			return long(crc, p)
		}, r.Combine, "Linux 6.18 x86 crc32c: one CRC32Q chain below 512 B, zmm VPCLMULQDQ folding above (crc32_lsb_vpclmul_avx512: this CPU has fast AVX-512)"
	}
	short, long := r.Scalar, r.ThreeWay
	return func(crc uint32, p []byte) uint32 {
		if len(p) < linuxBreakeven {
			return short(crc, p)
		}
		return long(crc, p)
	}, r.Combine, "Linux 6.18 x86 crc32c: one CRC32Q chain below 512 B, 3 CRC32Q streams above (crc32c_x86_3way: no fast AVX-512 here)"
}
