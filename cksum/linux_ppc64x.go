//go:build ppc64 || ppc64le

package cksum

import (
	"unsafe"

	"github.com/xlogfs/xlogfs/ppc64"
)

// linuxUpdate is POWER's crc32c_arch (see linux.go) on this CPU: the
// table below 528 bytes, else the table to a 16-byte boundary, vpmsum over
// the whole 16-byte blocks and the table for the rest.
func linuxUpdate() (func(uint32, []byte) uint32, func(uint32, uint32, int) uint32, string) {
	ks := ppc64.Kernels()
	if len(ks) == 0 {
		return tableUpdate, nil, "Linux 6.18 POWER crc32c before POWER8: crc32c_base, a table lookup per byte"
	}
	return linuxPower(ks[0].Update), nil, "Linux 6.18 POWER crc32c: a table lookup per byte below 528 B, vpmsum above"
}

// linuxPower is the POWER dispatch around vpmsum, an Update that runs its
// vector loop alone on 16-byte aligned whole blocks of 64 bytes or more
// (the ppc64 kernel's Update does).
func linuxPower(vpmsum func(uint32, []byte) uint32) func(uint32, []byte) uint32 {
	return func(crc uint32, p []byte) uint32 {
		if len(p) < linuxPowerMin {
			return tableUpdate(crc, p)
		}
		if head := int(-uintptr(unsafe.Pointer(unsafe.SliceData(p))) & 15); head != 0 {
			crc = tableUpdate(crc, p[:head])
			p = p[head:]
		}
		n := len(p) &^ 15
		crc = vpmsum(crc, p[:n])
		return tableUpdate(crc, p[n:])
	}
}
