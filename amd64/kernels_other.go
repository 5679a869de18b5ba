//go:build !amd64

package amd64

// Kernels lists the kernels this CPU can run, fastest first. Off amd64 there
// are none.
func Kernels() []Kernel { return nil }
