//go:build ppc64 || ppc64le

package cksum

import "github.com/xlogfs/xlogfs/ppc64"

// linuxUpdate is POWER's crc32c_arch (see linux.go) on this CPU: the
// table below 528 bytes, else the table to a 16-byte boundary, vpmsum over
// the whole 16-byte blocks and the table for the rest.
func linuxUpdate() (func(uint32, []byte) uint32, func(uint32, uint32, int) uint32, string) {
	ks := ppc64.Kernels()
	if len(ks) == 0 {
		return crc32cTable, nil, "Linux 6.18 POWER crc32c before POWER8: crc32c_base, a table lookup per byte"
	}
	return crc32cLinuxPower(ks[0].Update), nil, "Linux 6.18 POWER crc32c: a table lookup per byte below 528 B, vpmsum above"
}
