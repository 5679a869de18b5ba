package journal

import (
	"sync/atomic"
	"time"

	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"golang.org/x/sys/unix"
)

// flushLatency emulates a device whose every flush takes exactly d: a
// measuring aid (Options.FlushLatency), so that fsync latency is steady and
// what the CPU adds to it shows. The real flush is still made (durability
// is never emulated); the caller then waits out what is left of d. A flush
// that by itself took longer than d is an overrun, counted: on a real disk
// the emulation is exact only when d is above the disk's own latency, and on
// tmpfs (bench --device ram) it always is.
//
// The wait is an absolute clock_nanosleep on CLOCK_MONOTONIC with the
// thread's timer slack cut to 1 µs (Linux's default of 50 µs would make a
// 200 µs flush up to a quarter longer), in a system call of its own, as a
// device flush would be: the Go scheduler runs other goroutines meanwhile,
// and the wait costs no CPU.
type flushLatency struct {
	d        time.Duration
	flushes  atomic.Uint64
	overruns atomic.Uint64
}

// timerSlack is the timer slack flushLatency asks for, in nanoseconds.
const timerSlack = 1000

// start returns the moment a flush starts, on the clock wait uses.
func (l *flushLatency) start() unix.Timespec {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts
}

// wait returns d after start.
func (l *flushLatency) wait(start unix.Timespec) {
	l.flushes.Add(1)
	deadline := unix.NsecToTimespec(start.Nano() + int64(l.d))
	var now unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &now) == nil && now.Nano() >= deadline.Nano() {
		l.overruns.Add(1)
		return
	}
	// Per thread; whichever thread runs this goroutine now gets it.
	unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_TIMERSLACK, timerSlack, 0)
	for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &deadline, nil) == unix.EINTR {
	}
}

// flushDevice is a log device whose Sync takes the emulated latency.
type flushDevice struct {
	xlog.Device
	lat *flushLatency
}

func (d flushDevice) StoreLog() bool { return xlog.IsStoreLog(d.Device) }

func (d flushDevice) Sync() error {
	start := d.lat.start()
	err := d.Device.Sync()
	d.lat.wait(start)
	return err
}

// fdatasync makes a data file's bytes durable, taking the emulated flush
// latency when there is one.
func (fs *FS) fdatasync(f store.StoreFile) error {
	fs.syncs.data.Add(1)
	if fs.flush == nil {
		return f.Datasync()
	}
	start := fs.flush.start()
	err := f.Datasync()
	fs.flush.wait(start)
	return err
}

// syncDataDir makes the data directory's entries durable.
func (fs *FS) syncDataDir() error {
	fs.syncs.dir.Add(1)
	return fs.st.SyncDir(fs.dataDir)
}
