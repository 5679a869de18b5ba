//go:build ppc64 || ppc64le

package cksum

import (
	"golang.org/x/sys/cpu"

	"github.com/xlogfs/xlogfs/ppc64"
)

// archImpls returns the POWER kernels this CPU can run, best first: the
// VPMSUMD kernel of package ppc64 on POWER8 and later, on either byte order.
// It has no shift of its own: Combine is the portable one.
func archImpls() []Impl {
	list := ppc64.Kernels()
	for i := range list {
		if list[i].Combine == nil {
			list[i].Combine = crc32cCombineGF2
		}
	}
	return list
}

// archChoice says why Best is what it is on this CPU.
func archChoice() Choice {
	c := Choice{CPU: "POWER8 (ISA 2.07) or later: no"}
	if cpu.PPC64.IsPOWER8 {
		c.CPU = "POWER8 (ISA 2.07) or later: yes"
	}
	if best.Name == "vpmsum" {
		c.Reason = "POWER8 VPMSUMD: the vpmsum kernel from 64 bytes on (a fixed threshold, not measured on POWER hardware)"
	} else {
		c.Reason = "no POWER8 vector crypto: Go's hash/crc32"
	}
	return c
}
