//go:build ppc64 || ppc64le

package cksum

// archImpls returns the POWER kernels this CPU can run, best first.
func archImpls() []Impl { return nil }
