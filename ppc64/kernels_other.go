//go:build !ppc64 && !ppc64le

package ppc64

import "github.com/xlogfs/xlogfs/cksum/crc32c"

// Kernels lists the kernels this CPU can run: none, off POWER.
func Kernels() []crc32c.Kernel { return nil }
