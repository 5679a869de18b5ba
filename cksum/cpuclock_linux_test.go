package cksum

import (
	"runtime"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestSummerCountsCPUNotWall checksums with an implementation whose thread
// sleeps in the kernel for 20 ms in the middle of the call, as a thread
// does that loses its CPU: the wall clock sees the 20 ms, the CPU clock
// does not, and the Summer must count the CPU clock. The goroutine is
// locked to its thread: the Go scheduler preempts a goroutine that has run
// for 10 ms (and the raw system call looks like running to it), and it
// must come back on the thread whose clock the Summer read.
func TestSummerCountsCPUNotWall(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const nap = 20 * time.Millisecond
	std, _ := Lookup("stdlib")
	sleepy := Impl{Name: "sleepy", Update: func(crc uint32, p []byte) uint32 {
		var now unix.Timespec
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &now)
		until := unix.NsecToTimespec(now.Nano() + int64(nap))
		for {
			_, _, e := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&until)), 0, 0, 0)
			if e != unix.EINTR {
				break
			}
		}
		return std.Update(crc, p)
	}}
	s := NewSummer(Batched, sleepy)
	rec := make([]byte, 4*BlockSize)
	if got, want := s.Record(rec, BlockSize), Checksum(rec); got != want {
		t.Fatalf("crc %#x, want %#x", got, want)
	}
	st := s.Stats()
	if st.Clock != "thread" {
		t.Fatalf("clock %q, want thread on Linux", st.Clock)
	}
	if st.WallNanos < uint64(nap) {
		t.Errorf("wall time %v, want at least the %v asleep", time.Duration(st.WallNanos), nap)
	}
	if st.Nanos > uint64(nap/4) || st.OffCPU != 1 {
		t.Errorf("CPU time %v (%d records off CPU) for a record that slept %v: the sleep was counted", time.Duration(st.Nanos), st.OffCPU, nap)
	}
}

func TestClockOverhead(t *testing.T) {
	wall, cpu := ClockOverhead()
	// Reads of the clocks cost nanoseconds to microseconds; anything
	// else means the calibration measured something else.
	if wall < 0 || wall > 100*time.Microsecond || cpu <= 0 || cpu > 100*time.Microsecond {
		t.Errorf("clock overhead: wall %v, CPU %v", wall, cpu)
	}
	t.Logf("clock overhead per record: wall pair %v, CPU clock pair %v", wall, cpu)
}
