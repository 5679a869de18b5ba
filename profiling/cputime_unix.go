//go:build unix

package profiling

import (
	"syscall"
	"time"
)

// processCPUTime returns the CPU time (user and system, all threads) the
// process has used, from getrusage.
func processCPUTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
