//go:build !unix

package profiling_test

import "time"

// processCPU cannot tell the CPU time here; callers fall back to wall time.
func processCPU() (time.Duration, bool) { return 0, false }
