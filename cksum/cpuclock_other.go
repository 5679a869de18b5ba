//go:build !linux

package cksum

import "time"

// threadCPUTime reports that there is no thread CPU clock: Summer counts
// wall time.
func threadCPUTime() (time.Duration, bool) { return 0, false }
