package datafile

import (
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// FlushLatency emulates a device whose every flush takes exactly D: a
// measuring aid (journal.Options.FlushLatency), so that fsync latency is
// steady and what the CPU adds to it shows. The real flush is still made
// (durability is never emulated); the caller then waits out what is left of
// D. A flush that by itself took longer than D is an overrun, counted: on a
// real disk the emulation is exact only when D is above the disk's own
// latency, and on tmpfs (bench --device ram) it always is. The journal
// applies it to data files' syncs here and to the log device's.
//
// The wait is an absolute clock_nanosleep on CLOCK_MONOTONIC with the
// thread's timer slack cut to 1 µs (Linux's default of 50 µs would make a
// 200 µs flush up to a quarter longer), in a system call of its own, as a
// device flush would be: the Go scheduler runs other goroutines meanwhile,
// and the wait costs no CPU.
type FlushLatency struct {
	D        time.Duration
	Flushes  atomic.Uint64
	Overruns atomic.Uint64
}

// timerSlack is the timer slack FlushLatency asks for, in nanoseconds.
const timerSlack = 1000

// Start returns the moment a flush starts, on the clock Wait uses.
func (l *FlushLatency) Start() unix.Timespec {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts
}

// Wait returns D after start.
func (l *FlushLatency) Wait(start unix.Timespec) {
	l.Flushes.Add(1)
	deadline := unix.NsecToTimespec(start.Nano() + int64(l.D))
	var now unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &now) == nil && now.Nano() >= deadline.Nano() {
		l.Overruns.Add(1)
		return
	}
	// Per thread; whichever thread runs this goroutine now gets it. Best
	// effort: if the kernel refuses, the sleep only overshoots by the
	// default 50µs slack, which Overruns does not count.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, timerSlack, 0, 0, 0)
	for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &deadline, nil) == unix.EINTR {
	}
}
