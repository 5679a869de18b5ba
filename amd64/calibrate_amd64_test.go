package amd64

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// withProbes runs f with the calibration's probe lengths set to ps.
func withProbes(ps []int, f func()) {
	saved := probes
	probes = ps
	defer func() { probes = saved }()
	f()
}

// TestChoose: choose gives each length the method that is fastest there,
// in order, and from is where each takes over.
func TestChoose(t *testing.T) {
	inf := math.Inf(1)
	ps := []int{16, 64, 256, 1024, 4096}
	for _, c := range []struct {
		name string
		t    [][]float64
		mins []int
		want []int
	}{
		{"crossovers", [][]float64{
			{1, 4, 16, 64, 256},  // a: best at 16, 64
			{2, 5, 8, 30, 120},   // b: best at 256
			{9, 9, 10, 20, 80},   // c: best at 1024
			{20, 20, 20, 25, 40}, // d: best at 4096
		}, []int{0, 0, 0, 0}, []int{0, 256, 1024, 4096}},
		{"a method never fastest is skipped", [][]float64{
			{1, 4, 16, 64, 256},
			{2, 8, 32, 128, 512},
			{9, 9, 10, 20, 80},
			{20, 20, 20, 25, 40},
		}, []int{0, 0, 0, 0}, []int{0, 256, 256, 4096}},
		{"minimum lengths", [][]float64{
			{1, 4, 16, 64, 256},
			{inf, 1, 2, 4, 8}, // best from 64, allowed from 256
			{inf, inf, inf, inf, 5},
		}, []int{0, 256, 4096}, []int{0, 256, 4096}},
		{"a method never fastest is never used", [][]float64{
			{1, 2, 3, 4, 5},
			{2, 3, 4, 5, 6},
		}, []int{0, 0}, []int{0, math.MaxInt}},
		{"order is kept: a blip of an earlier method is ignored", [][]float64{
			{1, 10, 1, 10, 10}, // fastest again at 256, after b took over
			{2, 2, 1.1, 2, 10},
			{9, 9, 9, 9, 1},
		}, []int{0, 0, 0}, []int{0, 64, 4096}},
		{"the longest length's method keeps every longer one", [][]float64{
			{1, 2, 4, 8, 16},
			{2, 1, 2, 4, 8}, // fastest from 64 on
			{9, 9, 1, 2, 9}, // fastest at 256 and 1024, not at 4096
		}, []int{0, 0, 0}, []int{0, 64, 256}},
	} {
		withProbes(ps, func() {
			got, ok := choose(c.t, c.mins, nil)
			if !ok || !slices.Equal(got, c.want) {
				t.Errorf("%s: from = %v (%v), want %v", c.name, got, ok, c.want)
			}
		})
	}
	// A default plan holds a length unless another method is faster there
	// by more than calPrior.
	withProbes(ps, func() {
		prior := []int{0, 1024}
		close := [][]float64{{1, 1, 1.02, 5, 9}, {2, 2, 1, 1, 1}} // b 2% faster at 256: a keeps it
		if got, _ := choose(close, []int{0, 0}, prior); !slices.Equal(got, []int{0, 1024}) {
			t.Errorf("b 2%% faster at 256, prior from 1024: from = %v, want [0 1024]", got)
		}
		clear := [][]float64{{1, 1.1, 5, 5, 9}, {2, 1, 1, 1, 1}} // b 10% faster at 64
		if got, _ := choose(clear, []int{0, 0}, prior); !slices.Equal(got, []int{0, 64}) {
			t.Errorf("b 10%% faster at 64, prior from 1024: from = %v, want [0 64]", got)
		}
	})
	withProbes(ps, func() {
		zero := [][]float64{{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}}
		if from, ok := choose(zero, []int{0, 0}, nil); ok {
			t.Errorf("times of zero (a clock that did not move): from = %v, want no plan", from)
		}
	})
}

// TestCalibratedPlans: the plans the calibration set on this CPU are
// ones the dispatch can run: from[0] = 0, non-decreasing, each method used
// only from its minimum length, and only from a probe length (or never).
func TestCalibratedPlans(t *testing.T) {
	cal := Calibrated()
	t.Logf("calibrated %v in %v", cal.Calibrated, cal.Took)
	for _, k := range kernelDefs {
		if !k.ok {
			continue
		}
		check := func(what string, from []int, names []string, mins []int) {
			if from[0] != 0 {
				t.Errorf("%s %s: from[0] = %d", k.name, what, from[0])
			}
			for i := 1; i < len(from); i++ {
				if from[i] < from[i-1] {
					t.Errorf("%s %s: from = %v decreases", k.name, what, from)
				}
				used := i+1 == len(from) || from[i+1] > from[i]
				if used && from[i] < k.minOf(names[i], mins[i]) {
					t.Errorf("%s %s: %s from %d, below its minimum %d", k.name, what, names[i], from[i], k.minOf(names[i], mins[i]))
				}
			}
			for _, f := range from {
				if f != 0 && f != math.MaxInt && !slices.Contains(probes, f) {
					t.Errorf("%s %s: from = %v: %d is no probe length", k.name, what, from, f)
				}
			}
		}
		var names []string
		var mins []int
		for _, m := range k.methods {
			names, mins = append(names, m.name), append(mins, m.min)
		}
		check("Update", k.from, names, mins)
		names, mins = nil, nil
		for _, m := range k.copies {
			names, mins = append(names, m.name), append(mins, m.min)
		}
		check("CopyUpdate", k.copyFrom, names, mins)
	}
	for _, p := range cal.Plans {
		t.Logf("%s: %s", p.Kernel, p)
	}
}

// randomPlan returns a dispatch array for methods with the given minimum
// lengths: non-decreasing, each method from its minimum at the earliest,
// some methods skipped.
func randomPlan(r *rand.Rand, mins []int, span int) []int {
	from := make([]int, len(mins))
	for i := 1; i < len(mins); i++ {
		from[i] = max(from[i-1], mins[i])
		if r.IntN(4) != 0 {
			from[i] += r.IntN(span)
		}
	}
	return from
}

// TestKernelsUnderAnyPlan runs every kernel's Update and CopyUpdate under
// random plans against hash/crc32 and copy: the calibration may give any
// of them on some CPU, and every method must then sit behind the right
// case of the dispatch, whatever lengths it gets.
func TestKernelsUnderAnyPlan(t *testing.T) {
	Kernels() // calibrated plans, restored below
	r := rand.New(rand.NewPCG(41, 42))
	buf := randBytes(r, 20000+64)
	dst := make([]byte, 20000+256)
	for _, k := range kernelDefs {
		if !k.ok {
			continue
		}
		saved, savedCopy := slices.Clone(k.from), slices.Clone(k.copyFrom)
		t.Cleanup(func() { copy(k.from, saved); copy(k.copyFrom, savedCopy) })
		var mins, cmins []int
		for _, m := range k.methods {
			mins = append(mins, k.minOf(m.name, m.min))
		}
		for _, m := range k.copies {
			cmins = append(cmins, k.minOf(m.name, m.min))
		}
		plans := 30
		if testing.Short() {
			plans = 6
		}
		for range plans {
			copy(k.from, randomPlan(r, mins, 3000))
			copy(k.copyFrom, randomPlan(r, cmins, 3000))
			for n := 0; n <= 20000; n += 1 + n/16 + r.IntN(8) {
				off := r.IntN(64)
				p := buf[off : off+n]
				c := r.Uint32()
				if got, want := k.update(c, p), castagnoliUpdate(c, p); got != want {
					t.Fatalf("%s with plan %v: len %d off %d: got %#08x, want %#08x", k.name, k.from, n, off, got, want)
				}
				doff := 64 + r.IntN(64)
				if !checkCopy(t, k.name+" CopyUpdate", func(c uint32, d, s []byte) uint32 { return ^k.copyUpdate(d, s, ^c) },
					dst[:doff+n+64], doff, p, c) {
					t.Fatalf("%s with copy plan %v", k.name, k.copyFrom)
				}
			}
		}
	}
}
