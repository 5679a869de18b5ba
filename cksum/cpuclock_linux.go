package cksum

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// threadCPUTime returns the CPU time the calling thread has used, from
// CLOCK_THREAD_CPUTIME_ID. It is a raw system call: the Go scheduler
// cannot move the goroutine to another thread while it runs, and between
// two reads only a preemption can (the measurement then is off, but
// Summer.Record never lets it exceed the wall time).
func threadCPUTime() (time.Duration, bool) {
	var ts unix.Timespec
	_, _, errno := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_THREAD_CPUTIME_ID, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
