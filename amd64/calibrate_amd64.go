package amd64

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unsafe"
)

// Calibration: where each kernel changes method is measured once per
// process, at the first call of Kernels, on the CPU it runs on, rather than
// taken from a table of CPU models. Which method wins at which length
// depends on rates that differ between CPU classes by factors of two: how
// often a (V)PCLMULQDQ issues next to a CRC32Q (AMD issues a ymm or zmm
// VPCLMULQDQ every other cycle, Sapphire Rapids every cycle), how many
// CRC32Q chains the CPU runs at once, and the fixed cost of a fold's final
// reduction. A method that wins on one class loses to hash/crc32 on another
// (see doc.go), and a calibration is right on CPUs nobody measured.
//
// Each kernel's methods (kernelDefs) are timed at every probe length they
// can take, each sample a run of calls chained through the CRC (each call
// waits for the previous result, as Update(Update(crc, a), b) does), in
// turns over all methods and lengths so drift of the clock falls on all
// alike; a method's time at a length is the least of its samples (what the
// code costs when nothing interrupts it). Then each probe length gets a
// method, in the kernels' order (longer inputs never go to a method listed
// before a shorter input's), minimizing the sum over the probes of each
// chosen method's time divided by the fastest method's time there, plus a
// small penalty (calPrior) where the choice differs from a prior plan. A
// method takes over from the first probe length it was chosen at, and the
// longest probe's method keeps every longer input. For Update the prior is
// the default plan (defaultPlans), so a run on a busy machine does not move
// a threshold for a difference of a few percent. CopyUpdate's methods
// include copy then the kernel's (calibrated) Update, and that is its
// prior at every length: a one-pass routine is used only where it beats
// copy then Update by calPrior, so CopyUpdate is never slower than that
// within the noise of the measurement.

// probes are the lengths the calibration measures: every size cksum-bench
// and the log's records use most (64, 512, 4 KiB, 32 KiB) and the steps
// between, at most 1.5× apart.
var probes = []int{16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048,
	3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 65536}

// Samples per method and length (the least counts), after one round to
// warm up; each sample runs about sampleBytes bytes. calPrior is how much
// faster (relative to the fastest) a method must measure at a length to
// take it from the default plan's method: on a machine shared with other
// work the least of a few samples still moves by a few percent from one
// run to the next, and a plan should not.
const (
	calRounds   = 5
	sampleBytes = 8192
	calPrior    = 0.03
)

// Step is one method of a kernel's dispatch: it takes inputs from From
// bytes on, until the next step's From.
type Step struct {
	Method string
	From   int
}

// Plan is a kernel's dispatch: the methods of Update and CopyUpdate it
// uses, by input length. Method names: scalar (one CRC32Q chain), 3way
// (three chains, threeway_amd64.s), fold128/256/512 (PCLMULQDQ or
// VPCLMULQDQ folding on xmm, ymm or zmm registers), fused128/256/512
// (folding beside three CRC32Q chains in one loop), and for CopyUpdate
// copy+update (Go's copy, then the kernel's Update).
type Plan struct {
	Kernel string
	Update []Step
	Copy   []Step
}

// String is e.g. "scalar, 3way ≥ 200, fold512 ≥ 512, fused512 ≥ 2048".
func (p Plan) String() string {
	return fmt.Sprintf("%s; CopyUpdate: %s", stepsString(p.Update), stepsString(p.Copy))
}

func stepsString(steps []Step) string {
	var b strings.Builder
	for i, s := range steps {
		if i > 0 {
			fmt.Fprintf(&b, ", %s ≥ %d", s.Method, s.From)
		} else {
			b.WriteString(s.Method)
		}
	}
	return b.String()
}

// Calibration is what the calibration found: each kernel's plan, and how
// long it took.
type Calibration struct {
	// Calibrated is false when the plans are the defaults (defaultPlans):
	// the clock could not time the methods.
	Calibrated bool
	Took       time.Duration
	Probes     []int // the lengths measured
	Plans      []Plan
	// ZMMFrom is the shortest input the avx512 kernel's zmm methods may
	// take on this CPU, whatever the calibration finds (kernelDef.zmmFrom).
	ZMMFrom int
}

var calibration Calibration

// Calibrated returns what the calibration found (it runs at the first
// call of Kernels).
func Calibrated() Calibration {
	calibrateOnce.Do(calibrate)
	return calibration
}

// Default plans: the calibration's results on the Zen 5 class machine of
// doc.go (a run with the machine otherwise idle); on Intel's CPUs, the
// avx512 kernel's table as measured on a Sapphire Rapids class Xeon
// before there was a calibration (doc.go), whose zmm methods start at
// 2 KiB for the warm-up (kernelDef.zmmFrom) and whose CRC32Q unit runs one
// chain's worth per cycle, so the six-chain loop does not pay. The
// calibration starts from them and leaves a length on its default method
// unless another one measures faster by more than calPrior; they stand as
// they are if it cannot time anything.
func defaultPlans() {
	vexFrom = [4]int{0, 128, 128, 768}
	vexCopyFrom = [4]int{0, 128, 128, 1536}
	if kernelDefs[0].zmmFrom > 0 {
		avx512From = [7]int{0, 64, 64, 128, 2048, 8192, math.MaxInt}
		avx512CopyFrom = [6]int{0, 64, 64, 128, 2048, 8192}
		clmulFrom = [4]int{0, 64, 64, 1024}
		clmulCopyFrom = [4]int{0, 64, 64, 1024}
		return
	}
	avx512From = [7]int{0, 128, 128, 128, 384, 3072, 3072}
	avx512CopyFrom = [6]int{0, 128, 128, 128, 384, 4096}
	clmulFrom = [4]int{0, 256, 8192, 8192}
	clmulCopyFrom = [4]int{0, 256, 3072, 3072}
}

func init() { defaultPlans() }

// calSink keeps the compiler from dropping the calibration's work.
var calSink uint32

func calibrate() {
	start := time.Now()
	calibration = Calibration{Probes: probes, ZMMFrom: kernelDefs[0].zmmFrom}
	longest := probes[len(probes)-1]
	raw := make([]byte, 2*longest+128)
	for i := range raw {
		raw[i] = byte(i*131 + 7)
	}
	// 64-byte aligned source and destination, as a log's buffers are.
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw))) & 63)
	src, dst := raw[off:off+longest], raw[off+longest+64:off+2*longest+64]

	ok := true
	for _, k := range kernelDefs {
		if !k.ok {
			continue
		}
		mins := make([]int, len(k.methods))
		for i, m := range k.methods {
			mins[i] = k.minOf(m.name, m.min)
		}
		t := measure(len(k.methods), mins, func(i int, p []byte, reps int) {
			f, c := k.methods[i].f, uint32(0)
			for range reps {
				c = f(c, p)
			}
			calSink ^= c
		}, src)
		from, good := choose(t, mins, k.from)
		ok = ok && good
		if good {
			copy(k.from, from)
		}

		cmins := make([]int, len(k.copies))
		for i, m := range k.copies {
			cmins[i] = k.minOf(m.name, m.min)
		}
		t = measure(len(k.copies), cmins, func(i int, p []byte, reps int) {
			f, c, d := k.copies[i].f, uint32(0), dst[:len(p)]
			for range reps {
				c = f(c, d, p)
			}
			calSink ^= c
		}, src)
		from, good = choose(t, cmins, copyPrior(len(k.copies)))
		ok = ok && good
		if good {
			copy(k.copyFrom, from)
		}
	}
	if !ok {
		defaultPlans()
	}
	calibration.Calibrated = ok
	for _, k := range kernelDefs {
		if k.ok {
			calibration.Plans = append(calibration.Plans, Plan{Kernel: k.name,
				Update: steps(k.from, func(i int) string { return k.methods[i].name }),
				Copy:   steps(k.copyFrom, func(i int) string { return k.copies[i].name })})
		}
	}
	calibration.Took = time.Since(start)
}

// steps lists the methods a dispatch array uses.
func steps(from []int, name func(int) string) []Step {
	var out []Step
	for i := range from {
		if from[i] == math.MaxInt || i+1 < len(from) && from[i+1] <= from[i] {
			continue // never reached
		}
		out = append(out, Step{Method: name(i), From: from[i]})
	}
	return out
}

// measure times n methods at every probe length each can take (run(i, p,
// reps) runs method i reps times over p) and returns the least ns per call
// of each, +Inf where a method cannot take the length. The methods are
// timed in turns at one length before the next length, so they are
// compared within tens of microseconds of each other, under the same
// load of the machine.
func measure(n int, mins []int, run func(i int, p []byte, reps int), src []byte) [][]float64 {
	t := make([][]float64, n)
	for i := range t {
		t[i] = make([]float64, len(probes))
		for j := range t[i] {
			t[i][j] = math.Inf(1)
		}
	}
	for j, pl := range probes {
		p := src[:pl]
		reps := max(1, sampleBytes/pl)
		for round := range calRounds + 1 {
			for k := range n {
				i := (k + round) % n // a different method first each round
				if pl < mins[i] {
					continue
				}
				t0 := time.Now()
				run(i, p, reps)
				ns := float64(time.Since(t0).Nanoseconds()) / float64(reps)
				if round > 0 {
					t[i][j] = min(t[i][j], ns)
				}
			}
		}
	}
	return t
}

// choose gives each probe length a method, in order, minimizing the sum of
// each choice's time over the fastest time at its length, plus calPrior
// where the choice is not the one prior gives the length (a dispatch
// array, or nil); it returns from (from[i] = the first length method i
// takes; a method not chosen gets the next one's, or never, math.MaxInt,
// after the last method chosen). false: the times cannot tell (a clock too
// coarse), from is nil.
func choose(t [][]float64, mins, prior []int) ([]int, bool) {
	n, np := len(t), len(probes)
	best := make([]float64, np)
	for j := range np {
		best[j] = math.Inf(1)
		for i := range n {
			best[j] = min(best[j], t[i][j])
		}
		if !(best[j] > 0) || math.IsInf(best[j], 1) {
			return nil, false
		}
	}
	// cost[j][i]: the least sum over probes 0..j with probe j on method i.
	cost := make([][]float64, np)
	for j := range np {
		cost[j] = make([]float64, n)
		for i := range n {
			here := t[i][j] / best[j]
			if probes[j] < mins[i] {
				here = math.Inf(1)
			}
			if prior != nil && methodAt(prior, probes[j]) != i {
				here += calPrior
			}
			if j == 0 {
				cost[j][i] = here
				continue
			}
			prev := math.Inf(1)
			for k := 0; k <= i; k++ {
				prev = min(prev, cost[j-1][k])
			}
			cost[j][i] = here + prev
		}
	}
	// Walk back from the last probe's best; ties go to the earlier method
	// (the shorter fixed cost).
	pick := make([]int, np)
	for i := range n {
		if cost[np-1][i] < cost[np-1][pick[np-1]] {
			pick[np-1] = i
		}
	}
	if math.IsInf(cost[np-1][pick[np-1]], 1) {
		return nil, false
	}
	for j := np - 1; j > 0; j-- {
		b := 0
		for k := 1; k <= pick[j]; k++ {
			if cost[j-1][k] < cost[j-1][b] {
				b = k
			}
		}
		pick[j-1] = b
	}
	from := make([]int, n)
	for i := 1; i < n; i++ {
		from[i] = math.MaxInt
		for j := range np {
			if pick[j] >= i {
				from[i] = probes[j]
				break
			}
		}
	}
	return from, true
}

// methodAt is the method a dispatch array gives length n.
func methodAt(from []int, n int) int {
	i := 0
	for i+1 < len(from) && n >= from[i+1] {
		i++
	}
	return i
}

// copyPrior is the prior plan of CopyUpdate: copy then Update (method 1)
// at every length.
func copyPrior(n int) []int {
	from := make([]int, n)
	for i := 2; i < n; i++ {
		from[i] = math.MaxInt
	}
	return from
}
