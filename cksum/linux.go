package cksum

import "unsafe"

// The linux implementation: for each call, the method Linux's crc32c()
// would use on this CPU for that length, built from this package's and the
// architecture packages' own code (none of Linux's). It is there so the
// bench can tell batching's effect on the kernel's own dispatch from its
// effect on ours: Linux changes method at fixed lengths (512 bytes on x86,
// 528 on POWER), so XFS's per-region calls and one call per 512-byte
// sector stay on its short path while one 256 KiB call does not.
//
// The rules, as of Linux 6.18 (lib/crc/crc32-main.c, lib/crc/x86/crc32.h,
// lib/crc/x86/crc-pclmul-template.h, lib/crc/x86/crc32c-3way.S,
// lib/crc/powerpc/crc32.h, arch/x86/kernel/cpu/intel.c):
//
// Everywhere, without the CPU's own instructions: crc32c_base, a table
// lookup per byte (crc32cTable here).
//
// x86-64 (crc32c_arch), with SSE4.2 (CRC32 instructions):
//   - len < 512 (CRC32C_PCLMUL_BREAKEVEN, "to account for FPU state
//     save/restore overhead"), or the vector registers unusable (interrupt
//     context, which a process never sees): one chain of CRC32Q, 8 bytes at
//     a time, then CRC32L/W/B (amd64 Routines.Scalar).
//   - len >= 512 with PCLMULQDQ: crc32c_x86_3way, three CRC32Q streams over
//     the lanes of 3 KiB blocks merged by PCLMULQDQ, one stream below 200
//     bytes and for the rest (Routines.ThreeWay, the same method) ...
//   - ... unless the CPU has VPCLMULQDQ with AVX2 and the ymm state, and
//     AVX-512 BW and VL with the zmm state, and is not one Linux marks
//     X86_FEATURE_PREFER_YMM (Intel family 6 models Skylake-X 0x55, Ice
//     Lake 0x6A, 0x6C, 0x7D, 0x7E, 0x9D, Tiger Lake 0x8C, 0x8D: downclocked
//     by zmm): then crc32_lsb_vpclmul_avx512, VPCLMULQDQ folding of zmm
//     accumulators alone, no CRC32Q (Routines.FoldZMM). In practice AMD
//     Zen 4 and later, Intel Sapphire Rapids and later. This path came with
//     "lib/crc: x86/crc32c: Enable VPCLMULQDQ optimization where
//     beneficial" (Eric Biggers, July 2025). The AVX2 VPCLMULQDQ code
//     (crc32_lsb_vpclmul_avx2) serves crc32_le only, never crc32c: on AMD
//     Zen 3 and Intel's client cores without AVX-512, crc32c is
//     crc32c_x86_3way from 512 bytes on.
//
// POWER (crc32c_arch of lib/crc/powerpc/crc32.h), with ISA 2.07 vector
// crypto (POWER8):
//   - len < 528 (VECTOR_BREAKPOINT 512 + VMX_ALIGN 16): crc32c_base, the
//     byte table.
//   - else: the table up to a 16-byte boundary, __crc32c_vpmsum over the
//     whole 16-byte blocks (the ppc64 package's vpmsum kernel), the table
//     for the last < 16 bytes.
//
// Other architectures are not mirrored: there linux is crc32c_base alone,
// and says so in its Desc.
//
// CopyUpdate is copy then Update (Linux has no copying CRC-32C), Combine
// the architecture kernels' where there is one.

// linuxBreakeven is x86's CRC32C_PCLMUL_BREAKEVEN.
const linuxBreakeven = 512

// linuxPowerMin is POWER's VECTOR_BREAKPOINT + VMX_ALIGN.
const linuxPowerMin = 512 + 16

// crc32cTable is Linux's crc32c_base: one table lookup per byte (the
// Sarwate method), on the finished CRC.
func crc32cTable(crc uint32, p []byte) uint32 {
	t := &slicing8[0]
	crc = ^crc
	for _, b := range p {
		crc = t[byte(crc)^b] ^ crc>>8
	}
	return ^crc
}

// linuxImpl returns the linux implementation: update as linuxUpdate
// (per architecture) gives it, and how it was chosen.
func linuxImpl() Impl {
	update, combine, desc := linuxUpdate()
	if combine == nil {
		combine = crc32cCombineGF2
	}
	return Impl{Name: "linux", Desc: desc, Update: update, Combine: combine, CopyUpdate: crc32cCopyThenUpdate(update)}
}

// crc32cLinuxPower is the POWER dispatch (lib/crc/powerpc/crc32.h) around
// vpmsum, an Update that runs its vector loop alone on 16-byte aligned
// whole blocks of 64 bytes or more (the ppc64 kernel's Update does). It
// builds on every architecture, so its rule is tested everywhere.
func crc32cLinuxPower(vpmsum func(uint32, []byte) uint32) func(uint32, []byte) uint32 {
	return func(crc uint32, p []byte) uint32 {
		if len(p) < linuxPowerMin {
			return crc32cTable(crc, p)
		}
		if head := int(-uintptr(unsafe.Pointer(unsafe.SliceData(p))) & 15); head != 0 {
			crc = crc32cTable(crc, p[:head])
			p = p[head:]
		}
		n := len(p) &^ 15
		crc = vpmsum(crc, p[:n])
		return crc32cTable(crc, p[n:])
	}
}
