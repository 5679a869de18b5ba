package cksum

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// fakeClocks is a monotonic clock that advances step ns at each read and
// a tick counter at perNs ticks per ns of it (from offset), changed to
// later after switchAt ns: calibrate's inputs, without timing anything.
type fakeClocks struct {
	ns, step, switchAt int64
	perNs, later       float64
	offset             uint64
}

func (f *fakeClocks) now() int64 { f.ns += f.step; return f.ns }

func (f *fakeClocks) read() uint64 {
	f.ns += f.step / 3
	if f.switchAt > 0 && f.ns > f.switchAt {
		return f.offset + uint64(float64(f.switchAt)*f.perNs+float64(f.ns-f.switchAt)*f.later)
	}
	return f.offset + uint64(float64(f.ns)*f.perNs)
}

func TestCalibrateFactor(t *testing.T) {
	for _, perNs := range []float64{3.2, 0.512, 1} { // a 3.2 GHz TSC, POWER's 512 MHz time base, ns
		f := &fakeClocks{step: 700, perNs: perNs, offset: 1 << 40}
		got, err := calibrateTwice(f.read, f.now, 2*time.Millisecond)
		if err != nil {
			t.Fatalf("%g ticks/ns: %v", perNs, err)
		}
		if want := 1 / perNs; math.Abs(got/want-1) > 0.001 {
			t.Errorf("%g ticks/ns: calibrated %.6g ns per tick, want %.6g", perNs, got, want)
		}
	}
}

// A counter whose rate changes between the two spans (not invariant, or a
// VM moved) is refused, and so is one that does not advance.
func TestCalibrateRefusesUnsteadyCounter(t *testing.T) {
	f := &fakeClocks{step: 700, perNs: 3, later: 2, switchAt: 3_000_000}
	if got, err := calibrateTwice(f.read, f.now, 2*time.Millisecond); err == nil {
		t.Errorf("a counter going from 3 to 2 ticks/ns calibrated at %g ns/tick, want an error", got)
	}
	stuck := func() uint64 { return 42 }
	f = &fakeClocks{step: 700}
	if got, err := calibrate(stuck, f.now, time.Millisecond); err == nil {
		t.Errorf("a stuck counter calibrated at %g ns/tick, want an error", got)
	}
}

// The calibrated counter agrees with the monotonic clock over a span both
// see: both are wall clocks, so a preemption meanwhile changes neither's
// reading of it. A clock that returned raw cycles (2-4 per ns on any CPU
// with a TSC) or the wrong factor is off by far more than the 10 % allowed.
func TestClockMatchesMonotonic(t *testing.T) {
	info := Clock()
	t.Logf("clock %s, %.4f ns per tick, timed region %.1f ns, untimed %.1f ns, untimed op %.1f ns %s", info.Name, info.NanosPerTick, info.TimedNanos, info.UntimedNanos, info.UntimedOpNanos, info.Why)
	for range 3 {
		c0, n0 := clock.read(), monotonicNanos()
		for monotonicNanos()-n0 < int64(5*time.Millisecond) {
		}
		c1, n1 := clock.read(), monotonicNanos()
		got, want := float64(c1-c0)*clock.nsPerTick, float64(n1-n0)
		if r := got / want; r < 0.9 || r > 1.1 {
			t.Errorf("%s: %.0f ns by the counter over %.0f ns of the monotonic clock (×%.3f)", info.Name, got, want, r)
		}
	}
}

// ticksFor is the delta a region of ns shows on the counter.
func ticksFor(ns time.Duration) uint64 {
	calibrateClock()
	return uint64(float64(ns)/clock.nsPerTick + clock.empty)
}

// A timed delta is converted with the calibrated factor; one far above
// what its bytes can take on the CPU is clamped to the estimate from the
// regions before it and counted as off the CPU, its wall time kept.
func TestTimedDeltaConvertsAndClamps(t *testing.T) {
	var tl tally
	tl.fixed = true
	m := tl.timedDelta(ticksFor(2*time.Microsecond), 4096)
	if !m.timed || m.offCPU || math.Abs(float64(m.cpu)/2000-1) > 0.01 || m.wall != m.cpu {
		t.Fatalf("a 2 µs region of 4 KiB measured %+v, want 2 µs of CPU", m)
	}
	m = tl.timedDelta(ticksFor(20*time.Millisecond), 8192) // preempted: 20 ms for 8 KiB
	if !m.offCPU || math.Abs(float64(m.cpu)/4000-1) > 0.01 || math.Abs(float64(m.wall)/2e7-1) > 0.01 {
		t.Errorf("a 20 ms region of 8 KiB measured %+v, want off the CPU, 4 µs of CPU (2 µs per 4 KiB) and 20 ms of wall", m)
	}
	// Just under the limit stays in: a slow region is not a preempted one.
	slow := offCPULimit(8192) - time.Microsecond
	if m = tl.timedDelta(ticksFor(slow), 8192); m.offCPU || math.Abs(float64(m.cpu)/float64(slow)-1) > 0.01 {
		t.Errorf("a %v region of 8 KiB measured %+v, want it counted as it is", slow, m)
	}
}

// Untimed regions are estimated at the timed ones' ns per byte, and every
// region's calls and bytes are counted; the bookkeeping's own cost is
// counted per timed and untimed region.
func TestStrideEstimatesTheRest(t *testing.T) {
	calibrateClock()
	var tl tally
	tl.fixed = true
	tl.mask.Store(3) // one in four timed
	tl.ratio.Store(math.Float64bits(0.25))
	for range 8 {
		tm := tl.start()
		if !tm.on {
			if m := tl.stop(tm, 2, 400); m.timed || m.cpu < 98 || m.cpu > 102 {
				t.Errorf("an untimed region of 400 bytes at 0.25 ns/B: %+v, want 100 ns estimated", m)
			}
		} else {
			tl.calls.Add(2)
			tl.bytes.Add(400)
			tl.timedDelta(ticksFor(100*time.Nanosecond), 400) // 0.25 ns/B, as before
		}
	}
	if r, tm, c, b := tl.regions.Load(), tl.timed.Load(), tl.calls.Load(), tl.bytes.Load(); r != 8 || tm != 2 || c != 16 || b != 3200 {
		t.Errorf("regions %d, timed %d, calls %d, bytes %d: want 8, 2 (one in four), 16, 3200", r, tm, c, b)
	}
	if n, _ := tl.nanos(); n < 790 || n > 810 {
		t.Errorf("%d ns counted for 3,200 bytes at 0.25 ns/B, want 800", n)
	}
	want := 2*clock.timed + 6*clock.untimed
	if got := tl.timingNanos(clock.untimed); math.Abs(got-want) > 1e-6 {
		t.Errorf("bookkeeping cost %g ns, want 2 timed + 6 untimed = %g", got, want)
	}
}

// The stride grows until a stride's bookkeeping is timingBudget of its work.
func TestAdaptStride(t *testing.T) {
	calibrateClock()
	saved := clock.timed
	defer func() { clock.timed = saved }()
	savedU := clock.untimed
	defer func() { clock.untimed = savedU }()
	clock.timed, clock.untimed = 40, 1
	for _, c := range []struct {
		mean   uint64
		stride uint64
	}{{1_000_000, 1}, {1000, 1}, {500, 2}, {100, 16}, {1, maxStride}} {
		var tl tally
		tl.fitNanos.Store(c.mean * adaptEvery)
		tl.adapt(adaptEvery)
		stride := tl.mask.Load() + 1
		if stride < c.stride || (c.stride < maxStride && stride > 4*c.stride) {
			t.Errorf("mean region %d ns, timed region %v ns: stride %d, want about %d", c.mean, clock.timed, stride, c.stride)
		}
		if over := clock.timed + float64(stride-1)*clock.untimed; stride < maxStride && over > timingBudget*float64(stride*c.mean) {
			t.Errorf("mean region %d ns: stride %d costs %.0f ns of bookkeeping per %d ns of work", c.mean, stride, over, stride*c.mean)
		}
	}
}

var sinkCRC uint32

// BenchmarkTimer compares what timing a region costs with the checksum of
// a 512 B and a 4 KiB region: pair is a timed empty region (start and stop,
// both counter reads, conversion and counters), untimed one the stride
// skips; record-N is Summer.Record of an N-byte record with the stride as
// it adapts, its counting's own cost reported as a share of the checksum
// CPU it measured (timing-%).
func BenchmarkTimer(b *testing.B) {
	calibrateClock()
	b.Run("pair", func(b *testing.B) {
		var tl tally
		tl.fixed = true
		for range b.N {
			tl.stop(tl.start(), 1, 512)
		}
	})
	b.Run("untimed", func(b *testing.B) {
		var tl tally
		tl.fixed = true
		tl.mask.Store(math.MaxUint64 >> 1)
		for range b.N {
			tl.stop(tl.start(), 1, 512)
		}
	})
	for _, n := range []int{512, 4096} {
		buf := make([]byte, n)
		b.Run(fmt.Sprintf("checksum-%dB", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for range b.N {
				sinkCRC = Update(sinkCRC, buf)
			}
		})
		b.Run(fmt.Sprintf("record-%dB", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			s := NewSummer(Batched, Best())
			for range b.N {
				sinkCRC = s.Record(buf, BlockSize)
			}
			st := s.Stats()
			b.ReportMetric(100*st.TimingShare(), "timing-%")
			b.ReportMetric(float64(st.Regions)/float64(max(1, st.TimedRegions)), "stride")
		})
	}
}
