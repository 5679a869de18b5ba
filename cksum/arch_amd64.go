package cksum

import "github.com/xlogfs/xlogfs/amd64"

// archImpls returns the amd64 kernels this CPU can run, best first. Each
// has its own Combine (a shift by carry-less multiplication).
func archImpls() []Impl { return amd64.Kernels() }
