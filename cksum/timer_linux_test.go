package cksum

import (
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestSummerCountsCPUNotWall checksums with an implementation whose thread
// sleeps in the kernel for 20 ms in the middle of the call, as a thread
// does that loses its CPU: the tick counter sees the 20 ms, far more than
// a record of 2 KiB can take on the CPU, and the Summer must clamp it as
// time off the CPU.
func TestSummerCountsCPUNotWall(t *testing.T) {
	s := NewSummer(Batched, sleepyImpl())
	rec := make([]byte, 4*BlockSize)
	if got, want := s.Record(rec, BlockSize), Checksum(rec); got != want {
		t.Fatalf("crc %#x, want %#x", got, want)
	}
	st := s.Stats()
	if info := Clock(); st.Clock != ticksName && info.Why == "" {
		t.Fatalf("clock %q, want %s", st.Clock, ticksName)
	}
	if st.WallNanos < uint64(nap) {
		t.Errorf("wall time %v, want at least the %v asleep", time.Duration(st.WallNanos), nap)
	}
	if st.Nanos > uint64(nap/4) || st.OffCPU != 1 {
		t.Errorf("CPU time %v (%d records off CPU) for a record that slept %v: the sleep was counted", time.Duration(st.Nanos), st.OffCPU, nap)
	}
}

const nap = 20 * time.Millisecond

// sleepyImpl is stdlib with a thread that sleeps in the kernel for nap in
// the middle of every Update and CopyUpdate call, as a thread does that
// loses its CPU.
func sleepyImpl() Impl {
	std, _ := Lookup("stdlib")
	sleep := func() {
		var now unix.Timespec
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &now)
		until := unix.NsecToTimespec(now.Nano() + int64(nap))
		for {
			_, _, e := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&until)), 0, 0, 0)
			if e != unix.EINTR {
				break
			}
		}
	}
	return Impl{Name: "sleepy", Combine: std.Combine,
		Update:     func(crc uint32, p []byte) uint32 { sleep(); return std.Update(crc, p) },
		CopyUpdate: func(dst, src []byte, crc uint32) uint32 { sleep(); return std.CopyUpdate(dst, src, crc) },
	}
}

// The inline mode's work is timed as Record's is, at copy time and at
// seal: a nap inside CopyUpdate or inside the header blocks' Update is
// wall time but not CPU time, and the observer gets the CPU time of both.
func TestSummerInlineCountsCPUNotWall(t *testing.T) {
	im := sleepyImpl()
	s := NewSummer(Inline, im)
	var seen []Cost
	s.Observe(func(c Cost) { seen = append(seen, c) })
	rec := make([]byte, 3*BlockSize) // header block, two payload blocks
	src := make([]byte, 2*BlockSize)
	var p Payload
	p.Reset(im)
	s.Copy(&p, nil, rec[BlockSize:], src, func() {
		for i := range 2 {
			w := rec[BlockSize*(1+i):][:4]
			saved := rec[4*i:][:4]
			copy(saved, w)
			p.Stamp(saved, w) // the stamp is the word it replaces: zeros
		}
	})
	if got, want := s.Seal(&p, nil, rec[:BlockSize], nil), Checksum(rec); got != want {
		t.Fatalf("crc %#x, want %#x", got, want)
	}
	st := s.Stats()
	if st.WallNanos < uint64(nap) || st.CopyWallNanos < uint64(nap) {
		t.Errorf("wall time at seal %v, at copy %v: want at least the %v asleep in each", time.Duration(st.WallNanos), time.Duration(st.CopyWallNanos), nap)
	}
	if st.Nanos > uint64(nap/4) || st.OffCPU != 1 || st.CopyNanos > uint64(nap/4) || st.CopyOffCPU != 1 {
		t.Errorf("stats %+v: a nap was counted as CPU time", st)
	}
	if len(seen) != 1 || seen[0].TotalCPU() > nap/4 || uint64(seen[0].CopyCPU) != st.CopyNanos {
		t.Errorf("observed %+v, want one record with the CPU time of copy and seal (%+v)", seen, st)
	}
}
