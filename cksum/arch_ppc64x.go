//go:build ppc64 || ppc64le

package cksum

import "github.com/xlogfs/xlogfs/ppc64"

// archImpls returns the POWER kernels this CPU can run, best first: the
// VPMSUMD kernel of package ppc64 on POWER8 and later, on either byte order.
// It has no shift of its own: Combine is the portable one.
func archImpls() []Impl {
	list := ppc64.Kernels()
	for i := range list {
		if list[i].Combine == nil {
			list[i].Combine = gf2Combine
		}
	}
	return list
}
