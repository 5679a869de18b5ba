package profiling_test

import (
	"context"
	"crypto/sha256"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/profiling"
)

// TestShareAgreesWithCounters records a real CPU profile of a workload that
// is about half checksum work and checks that the analyser's checksum share
// agrees, within ±25 % relative, with the one cksum.Summer's counters give.
//
// One goroutine does all the work, alternating a few records checksummed
// with Summer.Record (under the journal's labels) and SHA-256 hashing as the
// other work, so the profile's CPU time and the goroutine's wall time
// describe the same single stream of work. The counters' share is
// Stats().Nanos, the wall time inside Record, over the wall time of the
// whole loop. Both are wall time on purpose: when the machine is busy and
// the goroutine is descheduled, both grow alike, so their ratio stays the
// CPU-time ratio the profile estimates; Nanos over CPU time would not. That
// holds as long as preemption falls evenly over the work, which is why the
// loop makes (almost) no system calls; see where it reads the CPU clock.
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
		wantCPU    = 2500 * time.Millisecond
		maxWall    = 8 * time.Second // stop even if the machine is that busy
		tolerance  = 0.25
		// Samples of the workload carry workloadKey=workloadValue, so other
		// goroutines of the test binary (and GC) are left out.
		workloadKey, workloadValue = "workload", "cksum-agreement"
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
	var wall time.Duration
	iters := 0
	pprof.Do(context.Background(), pprof.Labels(workloadKey, workloadValue), func(ctx context.Context) {
		cpu0, haveCPU := processCPU()
		start := time.Now()
		var nextCheck time.Duration
		for {
			i := iters % len(summers)
			pprof.Do(ctx, labels[i], func(context.Context) { checksum(summers[i]) })
			hash(hashes)
			iters++
			// Run for wantCPU of CPU time, however busy the machine, so
			// the profile has enough samples (100 a second). The CPU
			// clock is a system call, read only every 100 ms: the kernel
			// can preempt a thread whose time slice is spent at a system
			// call, before the next tick, so a clock read every few
			// iterations drew the time off CPU, and with it wall time,
			// to the other work where it was read; under load that put
			// the counters' share 30-80 % below the profile's.
			el := time.Since(start)
			if el < nextCheck {
				continue
			}
			nextCheck = el + 100*time.Millisecond
			if el >= maxWall {
				break
			}
			if cpu, ok := processCPU(); haveCPU && ok {
				if cpu-cpu0 >= wantCPU {
					break
				}
			} else if el >= wantCPU {
				break
			}
		}
		wall = time.Since(start)
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	p, err := profiling.ReadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	p.FilterSamplesByTag(func(s *profile.Sample) bool { return s.HasLabel(workloadKey, workloadValue) }, nil)
	share, err := profiling.Analyze(p)
	if err != nil {
		t.Fatal(err)
	}

	var nanos uint64
	for _, s := range summers {
		nanos += s.Stats().Nanos
	}
	counters := float64(nanos) / float64(wall)
	t.Logf("%d iterations of %d records (each mode in turn) + %d×1 KiB SHA-256 in %v wall; profile: %d samples, %.2f s CPU",
		iters, perBatch, hashes, wall.Round(time.Millisecond), share.Samples, share.CPUSeconds)
	t.Logf("checksum share: counters %.3f, profile stacks %.3f (%+.1f %%), profile phase=checksum %.3f (%+.1f %%)",
		counters, share.ChecksumShare, 100*(share.ChecksumShare/counters-1), share.PhaseShare, 100*(share.PhaseShare/counters-1))
	for _, s := range summers {
		var prof float64
		for _, m := range share.Modes {
			if m.Mode == s.Mode().String() {
				prof = m.ChecksumShare
			}
		}
		t.Logf("  %-7s counters %.3f, profile %.3f", s.Mode(), float64(s.Stats().Nanos)/float64(wall), prof)
	}

	// Below 150 samples, ±25 % is less than three standard errors.
	if share.Samples < 150 {
		t.Skipf("only %d samples of the workload in %v: the machine is too busy to measure", share.Samples, wall)
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
	var sum float64
	for i, m := range share.Modes {
		if i >= len(summers) || m.Mode != summers[i].Mode().String() {
			t.Errorf("Modes[%d] = %q, want the modes in order %v", i, m.Mode, cksum.Modes())
		}
		sum += m.ChecksumSeconds
	}
	if math.Abs(sum-share.ChecksumSeconds) > 1e-9 {
		t.Errorf("modes' checksum seconds add up to %.3f, want all %.3f", sum, share.ChecksumSeconds)
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
