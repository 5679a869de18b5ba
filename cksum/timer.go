package cksum

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// How Summer times checksum work, cheaply enough that the timing costs a
// small part of what it times.
//
// The clock is a tick counter read by one instruction (ticks: the TSC on
// amd64, the time base on POWER, the monotonic clock elsewhere), converted
// to nanoseconds by a factor calibrated once per process against the
// monotonic clock. A pair of reads costs tens of nanoseconds, where the
// thread CPU clock it replaces (a system call) cost 0.6-1.5 µs: as much as
// checksumming a small record.
//
// Even tens of nanoseconds are a lot beside an op of a hundred bytes copied
// into an iclog (inline mode) or a 4 KiB record: so each kind of work
// (tally) times one region in a stride and estimates the others from the
// timed ones' nanoseconds per byte. The stride is a power of two, adapted
// as the timed regions come in so that a timed region's bookkeeping costs
// about timingBudget of the work a stride of regions does. Calls and bytes
// are counted for every region.
//
// A tick counter is a wall clock: a thread that loses its CPU in the middle
// of a region would charge the wait to the checksum. Such a region takes
// far longer than its bytes can: a timed delta above offCPULimit(bytes)
// (clampSlack plus clampPerByte per byte, several times what the slowest
// implementation, the generic one, needs) is taken for time off the CPU,
// counted in OffCPU and replaced by the estimate from its bytes. A
// preemption shorter than that, or an interrupt, stays in: it is rare
// beside the regions timed, and a few microseconds.

const (
	timingBudget = 0.04                  // share of the work a stride's bookkeeping may cost
	maxStride    = 256                   // time at least one region in this many
	clampSlack   = 50 * time.Microsecond // a delta above this plus clampPerByte per byte was off the CPU
	clampPerByte = 4 * time.Nanosecond   // the generic implementation needs about 0.7
	calibSpan    = 2 * time.Millisecond  // each of the two calibration spans
	calibAgree   = 0.01                  // the two spans' factors must agree this well
	adaptEvery   = 16                    // recompute a tally's stride every this many timed regions
)

// clock is the calibrated tick counter, set once per process by
// calibrateClock.
var clock struct {
	once      sync.Once
	read      func() uint64 // ticks, or monotonicTicks if ticks failed its calibration
	name      string        // Stats.Clock: tsc, timebase or monotonic
	why       string        // why monotonic, where the counter could not be used
	nsPerTick float64
	// empty is the ticks two back-to-back reads show (median), taken off
	// every delta: what of the reads' own cost falls between them.
	empty float64
	// timed and untimed are what a timed region's bookkeeping costs
	// (start, both reads, the conversion and the counters) and an
	// untimed one's (the stride test, the estimate and the counters), in
	// ns, measured on a scratch tally.
	timed, untimed float64
	// untimedOp is an untimed op's in Summer.Copy, which counts in its
	// Payload, without atomic operations (the sampling and the sums).
	untimedOp float64
}

// monotonicEpoch makes monotonicTicks small and positive.
var monotonicEpoch = time.Now()

// monotonicTicks is the monotonic clock in nanoseconds since the process
// started: the fallback tick counter, one tick a nanosecond.
func monotonicTicks() uint64 { return uint64(time.Since(monotonicEpoch)) }

func monotonicNanos() int64 { return int64(time.Since(monotonicEpoch)) }

// calibrateClock sets clock, once: the tick counter's factor, from two
// spans of calibSpan against the monotonic clock that must agree within
// calibAgree (else, or if the platform says the counter is not to be
// trusted, the monotonic clock is the counter), then the cost of the
// bookkeeping. It takes about 5 ms.
func calibrateClock() {
	clock.once.Do(func() {
		clock.read, clock.name, clock.nsPerTick = ticks, ticksName, 1
		if ticksName != "monotonic" {
			f, err := calibrateTwice(ticks, monotonicNanos, calibSpan)
			if why := ticksUntrusted(); why != "" {
				err = errors.New(why)
			}
			if err != nil {
				clock.read, clock.name, clock.why = monotonicTicks, "monotonic", fmt.Sprintf("%s not used: %v", ticksName, err)
			} else {
				clock.nsPerTick = f
			}
		}
		clock.empty = emptyTicks(clock.read)
		clock.timed, clock.untimed, clock.untimedOp = bookkeepingCost()
	})
}

// calibrateTwice calibrates read over two consecutive spans and returns
// the second factor if the two agree within calibAgree: a counter whose
// rate changes (one that is not invariant, or a VM moved meanwhile) is no
// clock.
func calibrateTwice(read func() uint64, now func() int64, span time.Duration) (float64, error) {
	f1, err := calibrate(read, now, span)
	if err != nil {
		return 0, err
	}
	f2, err := calibrate(read, now, span)
	if err != nil {
		return 0, err
	}
	if math.Abs(f1/f2-1) > calibAgree {
		return 0, fmt.Errorf("its rate changed from %.4g to %.4g ns per tick between two %v spans", f1, f2, span)
	}
	return f2, nil
}

// calibrate returns the nanoseconds per tick of read, measured against
// now (nanoseconds) over at least span of now's time. Each end pins a
// reading of now between two reads of the counter, the tightest of five
// tries, and takes the counter's midpoint. Both are wall clocks, so a
// preemption in the span changes nothing.
func calibrate(read func() uint64, now func() int64, span time.Duration) (float64, error) {
	pin := func() (uint64, int64, bool) {
		best, ok := uint64(math.MaxUint64), false
		var tick uint64
		var ns int64
		for range 5 {
			a := read()
			n := now()
			b := read()
			if b >= a && b-a < best {
				best, tick, ns, ok = b-a, a+(b-a)/2, n, true
			}
		}
		return tick, ns, ok
	}
	c0, n0, ok0 := pin()
	for now()-n0 < int64(span) {
	}
	c1, n1, ok1 := pin()
	if !ok0 || !ok1 || c1 <= c0 || n1 <= n0 {
		return 0, fmt.Errorf("the counter did not advance with the monotonic clock (%d to %d ticks over %d to %d ns)", c0, c1, n0, n1)
	}
	return float64(n1-n0) / float64(c1-c0), nil
}

// emptyTicks is the median of 101 back-to-back pairs of reads.
func emptyTicks(read func() uint64) float64 {
	const n = 101
	d := make([]uint64, n)
	for i := range d {
		a := read()
		d[i] = read() - a
	}
	slices.Sort(d)
	return float64(d[n/2])
}

// bookkeepingCost measures what a timed and an untimed empty region cost
// on a scratch tally: the best of five batches of 1,000 each (the best, so
// that a batch the scheduler interrupted does not count), in ns.
func bookkeepingCost() (timed, untimed, untimedOp float64) {
	measure := func(mask uint64) float64 {
		var t tally
		t.mask.Store(mask)
		t.fixed = true
		// Something to estimate from, as a running tally has.
		t.ratio.Store(math.Float64bits(1))
		best := math.Inf(1)
		for range 5 {
			t0 := time.Now()
			for range 1000 {
				t.stop(t.start(), 1, 64)
			}
			best = min(best, float64(time.Since(t0))/1000)
		}
		return best
	}
	var p Payload
	var s Summer
	s.copy.mask.Store(math.MaxUint64 >> 1)
	untimedOp = math.Inf(1)
	for range 5 {
		t0 := time.Now()
		for range 1000 {
			// Copy's bookkeeping for an op it does not time.
			if p.sample(s.copy.mask.Load()) {
				p.copyTimedBytes += 64
			}
			p.copyOps++
			p.copyCalls += 2
			p.copyBytes += 64
		}
		untimedOp = min(untimedOp, float64(time.Since(t0))/1000)
	}
	return measure(0), measure(math.MaxUint64 >> 1), untimedOp
}

// offCPULimit is the longest a region of n bytes can take on the CPU.
func offCPULimit(n int) time.Duration { return clampSlack + time.Duration(n)*clampPerByte }

// tally counts one kind of checksum work (see Summer and the top of this
// file). An untimed region costs three atomic additions (regions, calls,
// bytes) and an atomic load; its time is not added anywhere but follows
// from the timed regions' (nanos).
type tally struct {
	regions, calls, bytes atomic.Uint64
	// The timed regions: their number, bytes, CPU and wall time, and how
	// many were clamped as off the CPU.
	timed, timedBytes, timedCPU, timedWall, offCPU atomic.Uint64
	// The timed regions found on the CPU, and their ns per byte (float64
	// bits): what the estimates go by.
	fitNanos, fitBytes, fitN, ratio atomic.Uint64
	// mask is the stride less one: region n is timed when n&mask == 0.
	mask  atomic.Uint64
	fixed bool // keep mask (tests, calibration)
}

// timing is one region in progress: t0 is the counter at its start, on
// whether it is timed at all.
type timing struct {
	t0 uint64
	on bool
}

// measured is what a region took: CPU and wall time, whether it was timed
// or estimated, and whether its delta was clamped as time off the CPU.
type measured struct {
	cpu, wall     time.Duration
	timed, offCPU bool
}

// start begins a region of t's work: timed if it is the first of a stride.
func (t *tally) start() timing {
	n := t.regions.Add(1) - 1
	if n&t.mask.Load() != 0 {
		return timing{}
	}
	return timing{t0: clock.read(), on: true}
}

// stop ends a region begun with start, counts its calls and bytes and,
// if it was timed, its time, and returns the time (estimated if untimed).
func (t *tally) stop(tm timing, calls, bytes int) measured {
	t.calls.Add(uint64(calls))
	t.bytes.Add(uint64(bytes))
	if !tm.on {
		return t.estimated(bytes)
	}
	return t.timedDelta(clock.read()-tm.t0, bytes)
}

// timedDelta converts a timed region's ticks into its time, clamped as
// time off the CPU above offCPULimit, counts it, and lets the on-CPU ones
// teach the estimates and the stride. The region's calls and bytes are
// the caller's to count.
func (t *tally) timedDelta(d uint64, bytes int) measured {
	ns := time.Duration(max(0, float64(d)-clock.empty) * clock.nsPerTick)
	m := measured{cpu: ns, wall: ns, timed: true}
	if ns > offCPULimit(bytes) {
		m.cpu, m.offCPU = t.estimated(bytes).cpu, true
		t.offCPU.Add(1)
	} else {
		fb := t.fitBytes.Add(uint64(bytes))
		fn := t.fitNanos.Add(uint64(ns))
		if fb > 0 {
			t.ratio.Store(math.Float64bits(float64(fn) / float64(fb)))
		}
		if n := t.fitN.Add(1); n%adaptEvery == 0 && !t.fixed {
			t.adapt(n)
		}
	}
	t.timed.Add(1)
	t.timedBytes.Add(uint64(bytes))
	t.timedCPU.Add(uint64(m.cpu))
	t.timedWall.Add(uint64(m.wall))
	return m
}

// estimated is an untimed region's time: its bytes at the timed regions'
// nanoseconds per byte (0 before any was timed).
func (t *tally) estimated(bytes int) measured {
	ns := time.Duration(float64(bytes) * math.Float64frombits(t.ratio.Load()))
	return measured{cpu: ns, wall: ns}
}

// nanos returns the CPU and wall time of t's work so far: the timed
// regions' (clamped ones at their estimate) and the others' bytes at the
// timed regions' ns per byte now.
func (t *tally) nanos() (cpu, wall uint64) {
	rest := t.estimated(int(t.bytes.Load() - min(t.bytes.Load(), t.timedBytes.Load()))).cpu
	return t.timedCPU.Load() + uint64(rest), t.timedWall.Load() + uint64(rest)
}

// adapt sets the stride so that one timed region's bookkeeping, and the
// untimed ones', cost about timingBudget of a stride's work at the mean
// region time seen (n regions fitted), or as little as maxStride allows.
func (t *tally) adapt(n uint64) {
	mean := float64(t.fitNanos.Load()) / float64(n)
	stride := uint64(1)
	for stride < maxStride && clock.timed+float64(stride-1)*clock.untimed > timingBudget*float64(stride)*mean {
		stride *= 2
	}
	t.mask.Store(stride - 1)
}

// timingNanos is what t's bookkeeping has cost so far, in ns, at the
// calibrated cost per timed region and untimed one (untimed each).
func (t *tally) timingNanos(untimed float64) float64 {
	r, tm := t.regions.Load(), t.timed.Load()
	return float64(tm)*clock.timed + float64(r-min(r, tm))*untimed
}

// ClockInfo describes the clock Summer times with: its name (tsc,
// timebase or monotonic), its nanoseconds per tick, why it is the
// monotonic clock where the counter could not be used (else ""), and what
// the bookkeeping of a timed and of an untimed region costs.
type ClockInfo struct {
	Name                     string
	NanosPerTick             float64
	Why                      string
	TimedNanos, UntimedNanos float64
	UntimedOpNanos           float64 // an untimed op in Summer.Copy
}

// Clock calibrates the clock if that is not done yet and describes it.
func Clock() ClockInfo {
	calibrateClock()
	return ClockInfo{Name: clock.name, NanosPerTick: clock.nsPerTick, Why: clock.why,
		TimedNanos: clock.timed, UntimedNanos: clock.untimed, UntimedOpNanos: clock.untimedOp}
}
