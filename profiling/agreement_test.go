package profiling_test

import (
	"context"
	"crypto/sha256"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/profiling"
)

// TestShareAgreesWithCounters records a real CPU profile of a workload that
// is about half checksum work and checks that the analyser's checksum share
// agrees, within ±25 % relative, with the share cksum.Summer's counters give.
//
// One goroutine does all the work, alternating a few records checksummed
// with Summer.Record (under the journal's labels) and SHA-256 hashing as the
// other work, so the profile's CPU time and the goroutine's time describe
// the same single stream of work. The counters' share is Stats().Nanos over
// the time the loop ran.
//
// Nanos is CPU time (Summer takes time off the CPU out), but the share's
// denominator, the loop's wall time, is CPU time only while the goroutine
// has a CPU to itself. On a busy machine it does not, and where the time
// off CPU falls is anything but even: a thread whose time slice is spent is
// preempted at its next system call or Go scheduler switch, and with one
// CPU in ten wall-time counters were seen 30-85 % off the profile. So the loop
// runs in windows of 20 ms, each under a pprof label of its own, and keeps
// only the windows in which the process got at least 90 % of the wall time
// as CPU time: their counters on one side, their samples on the other. It
// goes on until the windows kept add up to 2.5 s (250 samples), for as
// long as 30 s, so a busy machine costs time rather than the verdict; if
// even then too few samples were kept, the test fails, saying so: a test
// that passed without measuring would hide a broken profile just as well.
//
// The profile's share is a sampling estimate: with n samples at share p its
// relative error is about sqrt((1-p)/(p·n)), 6 % for p = 0.5 and n = 250,
// so ±25 % is four of those and a failure means a real disagreement: stacks
// through the assembly kernels that do not unwind, a label lost, the matcher
// missing a frame, or shares computed by count rather than CPU time.
func TestShareAgreesWithCounters(t *testing.T) {
	const (
		recordSize = 256 << 10           // a full log record from a 256 KiB iclog
		hdrLen     = 8 * cksum.BlockSize // its 8 header blocks
		perBatch   = 2                   // records per checksum batch
		target     = 0.5                 // checksum share aimed at
		windowLen  = 20 * time.Millisecond
		minOnCPU   = 0.9 // of a window's wall time, for it to count
		wantCPU    = 2500 * time.Millisecond
		maxWall    = 30 * time.Second
		minSamples = 150 // below, ±25 % is less than three standard errors
		tolerance  = 0.25
		// Labels: workload on all the loop's samples (so other goroutines
		// of the test binary, and GC, are left out), window on each
		// window's.
		workloadKey, workloadValue = "workload", "cksum-agreement"
		windowKey                  = "window"
	)

	rec := make([]byte, recordSize)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range rec {
		rec[i] = byte(r.Uint32())
	}
	var block [1024]byte
	var sink uint32
	checksum := func(s *cksum.Summer) {
		for range perBatch {
			sink ^= s.Record(rec, hdrLen)
		}
	}
	hash := func(n int) {
		for range n {
			h := sha256.Sum256(block[:])
			block[0] ^= h[0]
		}
	}

	// Calibrate how many 1 KiB hashes take as long as one checksum batch
	// (averaged over the modes), for a share near target. Only the order
	// of magnitude matters: the test compares two measurements of the
	// share, whatever it turns out to be.
	var cal []*cksum.Summer
	for _, m := range cksum.Modes() {
		cal = append(cal, cksum.NewSummer(m, cksum.Best()))
	}
	batch := fastest(func() {
		for _, s := range cal {
			checksum(s)
		}
	}) / time.Duration(len(cal))
	perHash := fastest(func() { hash(64) }) / 64
	hashes := max(1, int(math.Round(float64(batch)*(1-target)/target/float64(perHash))))

	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := profiling.StartCPUProfile(path)
	if err != nil {
		if strings.Contains(err.Error(), "already in use") {
			t.Skip(err) // go test -cpuprofile
		}
		t.Fatal(err)
	}
	defer stop()

	var summers []*cksum.Summer
	var labels []pprof.LabelSet
	for _, m := range cksum.Modes() {
		summers = append(summers, cksum.NewSummer(m, cksum.Best()))
		labels = append(labels, pprof.Labels(profiling.LabelMode, m.String(), profiling.LabelPhase, profiling.PhaseChecksum))
	}
	nanos := func() []uint64 {
		var n []uint64
		for _, s := range summers {
			n = append(n, s.Stats().Nanos)
		}
		return n
	}

	// One P for the Go scheduler, so that the goroutine, when the
	// scheduler preempts it, is picked up again by the same thread rather
	// than handed to another that the kernel must first wake and run.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))

	kept := map[string]bool{} // windows kept, by label value
	var keptWall, keptCPU time.Duration
	keptNanos := make([]uint64, len(summers))
	windows, iters := 0, 0
	start := time.Now()
	pprof.Do(context.Background(), pprof.Labels(workloadKey, workloadValue), func(ctx context.Context) {
		for ; keptCPU < wantCPU && time.Since(start) < maxWall; windows++ {
			// The clocks are read between windows, outside them: were the
			// thread preempted in the system call that reads the CPU
			// clock, the time off CPU falls in no window.
			cpu0, haveCPU := processCPU()
			n0 := nanos()
			w0 := time.Now()
			id := strconv.Itoa(windows)
			pprof.Do(ctx, pprof.Labels(windowKey, id), func(ctx context.Context) {
				for time.Since(w0) < windowLen {
					i := iters % len(summers)
					pprof.Do(ctx, labels[i], func(context.Context) { checksum(summers[i]) })
					hash(hashes)
					iters++
				}
			})
			wall := time.Since(w0)
			n1 := nanos()
			cpu1, _ := processCPU()
			if cpu := cpu1 - cpu0; !haveCPU || float64(cpu) >= minOnCPU*float64(wall) {
				kept[id] = true
				keptWall += wall
				keptCPU += cpu
				if !haveCPU {
					keptCPU += wall
				}
				for i := range keptNanos {
					keptNanos[i] += n1[i] - n0[i]
				}
			}
		}
	})
	elapsed := time.Since(start)
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	p, err := profiling.ReadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	p.FilterSamplesByTag(func(s *profile.Sample) bool {
		return s.HasLabel(workloadKey, workloadValue) && len(s.Label[windowKey]) == 1 && kept[s.Label[windowKey][0]]
	}, nil)
	share, err := profiling.Analyze(p)
	if err != nil {
		t.Fatal(err)
	}

	var sum uint64
	for _, n := range keptNanos {
		sum += n
	}
	counters := float64(sum) / float64(keptWall)
	t.Logf("%d of %d windows of %v kept (%v of %v), %d iterations of %d records (each mode in turn) + %d×1 KiB SHA-256; profile: %d samples, %.2f s CPU",
		len(kept), windows, windowLen, keptWall.Round(time.Millisecond), elapsed.Round(time.Millisecond), iters, perBatch, hashes, share.Samples, share.CPUSeconds)
	t.Logf("checksum share: counters %.3f, profile stacks %.3f (%+.1f %%), profile phase=checksum %.3f (%+.1f %%)",
		counters, share.ChecksumShare, 100*(share.ChecksumShare/counters-1), share.PhaseShare, 100*(share.PhaseShare/counters-1))
	for i, s := range summers {
		var prof float64
		for _, m := range share.Modes {
			if m.Mode == s.Mode().String() {
				prof = m.ChecksumShare
			}
		}
		t.Logf("  %-7s counters %.3f, profile %.3f", s.Mode(), float64(keptNanos[i])/float64(keptWall), prof)
	}

	if share.Samples < minSamples {
		t.Fatalf("only %d samples of the workload (want %d) in %v of windows with the CPU to itself, in %v: the machine was too busy to measure; nothing was compared",
			share.Samples, minSamples, keptWall.Round(time.Millisecond), elapsed.Round(time.Millisecond))
	}
	if rel := share.ChecksumShare/counters - 1; math.Abs(rel) > tolerance {
		t.Errorf("profile's checksum share %.3f is %+.0f %% off the counters' %.3f (tolerance ±%.0f %%)",
			share.ChecksumShare, 100*rel, counters, 100*tolerance)
	}
	if rel := share.PhaseShare/counters - 1; math.Abs(rel) > tolerance {
		t.Errorf("profile's phase=checksum share %.3f is %+.0f %% off the counters' %.3f (tolerance ±%.0f %%)",
			share.PhaseShare, 100*rel, counters, 100*tolerance)
	}

	// All the checksum work ran under a cksum_mode label, so the modes'
	// checksum time adds up to the whole, mode by mode in cksum's order.
	var modesSum float64
	for i, m := range share.Modes {
		if i >= len(summers) || m.Mode != summers[i].Mode().String() {
			t.Errorf("Modes[%d] = %q, want the modes in order %v", i, m.Mode, cksum.Modes())
		}
		modesSum += m.ChecksumSeconds
	}
	if math.Abs(modesSum-share.ChecksumSeconds) > 1e-9 {
		t.Errorf("modes' checksum seconds add up to %.3f, want all %.3f", modesSum, share.ChecksumSeconds)
	}
}

// fastest returns the shortest of 20 timings of f: the least disturbed.
func fastest(f func()) time.Duration {
	best := time.Duration(math.MaxInt64)
	for range 20 {
		start := time.Now()
		f()
		best = min(best, time.Since(start))
	}
	return best
}
