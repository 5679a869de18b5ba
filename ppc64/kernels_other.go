//go:build !ppc64 && !ppc64le

package ppc64

// Kernels lists the kernels this CPU can run: none, off POWER.
func Kernels() []Kernel { return nil }
