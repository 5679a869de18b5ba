//go:build !amd64 && !ppc64 && !ppc64le

package cksum

// archImpls returns the architecture's own kernels, best first. This
// architecture has none: only the portable implementations exist.
func archImpls() []Impl { return nil }
