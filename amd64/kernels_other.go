//go:build !amd64

package amd64

import "github.com/xlogfs/xlogfs/cksum/crc32c"

// Kernels lists the kernels this CPU can run, fastest first. Off amd64 there
// are none.
func Kernels() []crc32c.Kernel { return nil }
