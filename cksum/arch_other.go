//go:build !amd64 && !ppc64 && !ppc64le

package cksum

// archImpls returns the architecture's own kernels, best first. This
// architecture has none: only the portable implementations exist.
func archImpls() []Impl { return nil }

// archChoice says why Best is what it is: no kernel of ours here.
func archChoice() Choice {
	return Choice{CPU: "no kernels of xlogfs for this architecture", Reason: "Go's hash/crc32"}
}
