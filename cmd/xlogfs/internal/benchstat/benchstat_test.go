package benchstat

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// The median's interval is the sign test's: for n values at 95 % the
// narrowest pair of order statistics (x_i, x_j) such that the chance that
// the true median lies between them, P(i <= Binomial(n, ½) < j), is at
// least 0.95. Where two pairs tie (even n) the lower one is taken.
func TestMedianKnownIntervals(t *testing.T) {
	seq := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(n - i) // descending: Median must sort
		}
		return xs
	}
	for _, c := range []struct {
		n            int
		median       float64
		lo, hi       float64
		coverage     float64 // P(lo order <= B < hi order)
		finite, sign bool
	}{
		{n: 5, median: 3, lo: math.Inf(-1), hi: 5}, // open below: not finite
		{n: 6, median: 3.5, lo: 1, hi: 6, coverage: 1 - 2.0/64, finite: true},
		{n: 8, median: 4.5, lo: 1, hi: 7, coverage: 1 - (1+9)/256.0, finite: true},
		{n: 9, median: 5, lo: 2, hi: 8, coverage: 1 - 2*10.0/512, finite: true},
		{n: 10, median: 5.5, lo: 2, hi: 9, coverage: 1 - 2*11.0/1024, finite: true},
		{n: 12, median: 6.5, lo: 3, hi: 10, coverage: 1 - 2*79.0/4096, finite: true},
	} {
		iv := Median(seq(c.n))
		if !near(iv.Center, c.median) || iv.Lo != c.lo || iv.Hi != c.hi || iv.N != c.n || iv.Finite() != c.finite {
			t.Errorf("n=%d: median %v [%v, %v] (n %d, finite %v), want %v [%v, %v]", c.n, iv.Center, iv.Lo, iv.Hi, iv.N, iv.Finite(), c.median, c.lo, c.hi)
		}
		if c.finite && !near(iv.Confidence, c.coverage) {
			t.Errorf("n=%d: confidence %v, want %v", c.n, iv.Confidence, c.coverage)
		}
	}
	if got := MinRounds(); got != 6 {
		t.Errorf("MinRounds = %d, want 6", got)
	}
	if iv := Median([]float64{math.NaN(), 1, 2, 3, 4, 5, 6}); iv.N != 6 || iv.Center != 3.5 {
		t.Errorf("NaN not dropped: %+v", iv)
	}
}

// Pairing: the reference drifts tenfold between rounds, the target is
// always 1.5 times it give or take 2 %; the paired ratio sees 1.5 and
// excludes 1, where comparing the two samples' medians could not.
func TestPairedRatioCancelsDrift(t *testing.T) {
	ref := []float64{1, 10, 3, 7, 2, 9, 5, 4, 8, 6}
	wobble := []float64{1.00, 1.02, 0.98, 1.01, 0.99, 1.00, 1.02, 0.98, 1.01, 0.99}
	target := make([]float64, len(ref))
	for i := range ref {
		target[i] = 1.5 * wobble[i] * ref[i]
	}
	iv := PairedRatio(target, ref)
	if !near(iv.Center, 1.5) || !near(iv.Lo, 1.5*0.98) || !near(iv.Hi, 1.5*1.02) {
		t.Errorf("paired ratio %v [%v, %v], want 1.5 [1.47, 1.53]", iv.Center, iv.Lo, iv.Hi)
	}
	if !iv.Excludes(1) {
		t.Error("1.5 ± 2 % does not exclude 1")
	}
	// The unpaired samples overlap almost entirely.
	if a, b := Median(target), Median(ref); a.Lo > b.Hi {
		t.Errorf("unpaired intervals [%v,%v] and [%v,%v] do not overlap: the test shows nothing", a.Lo, a.Hi, b.Lo, b.Hi)
	}

	// A difference that flips sign within the rounds is not significant.
	flip := []float64{1.1, 0.9, 1.2, 0.8, 1.05, 0.95, 1.1, 0.9, 1.0, 1.0}
	ones := make([]float64, len(flip))
	for i := range ones {
		ones[i] = 1
	}
	if iv := PairedRatio(flip, ones); iv.Excludes(1) {
		t.Errorf("ratios either side of 1 judged significant: %+v", iv)
	}
	// Too few rounds: never significant, however large the ratio.
	if iv := PairedRatio([]float64{2, 2, 2, 2, 2}, []float64{1, 1, 1, 1, 1}); iv.Excludes(1) || iv.Finite() {
		t.Errorf("5 rounds judged significant: %+v", iv)
	}
	// Rounds missing a value (NaN) or with a zero reference drop out.
	if r := Ratios([]float64{2, math.NaN(), 6, 8}, []float64{1, 1, 0, 4}); len(r) != 2 || r[0] != 2 || r[1] != 2 {
		t.Errorf("Ratios = %v, want [2 2]", r)
	}
}

// Four cells of a 2×2 factorial: from 100 (old mode, old kernel) to 5
// (both new) is a factor 20; the new mode alone halves the cost at either
// kernel and the new kernel alone divides it by 10 at either mode. On a
// log scale the mode's share is ln 2 / ln 20.
func TestDecompose(t *testing.T) {
	const n = 8
	rep := func(x float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = x * (1 + 0.5*float64(i)) // drift multiplies every cell alike
		}
		return xs
	}
	d := Decompose(rep(100), rep(50), rep(10), rep(5))
	if !near(d.Total.Center, 0.05) || !d.Total.Excludes(1) {
		t.Errorf("total %+v, want 0.05 excluding 1", d.Total)
	}
	want := math.Log(2) / math.Log(20)
	if !near(d.Factor1.Center, want) || !near(d.Factor2.Center, 1-want) {
		t.Errorf("shares %v and %v, want %v and %v", d.Factor1.Center, d.Factor2.Center, want, 1-want)
	}
	// With interaction (the new kernel helps far more in the new mode),
	// the two paths disagree and the share is their average.
	d = Decompose(rep(100), rep(50), rep(40), rep(5))
	// Path 1: mode 100→50, kernel 50→5; path 2: kernel 100→40, mode 40→5.
	want = (math.Log(0.5) + math.Log(5.0/40)) / 2 / math.Log(0.05)
	if !near(d.Factor1.Center, want) {
		t.Errorf("share with interaction %v, want %v", d.Factor1.Center, want)
	}
}

func TestIntervalJSON(t *testing.T) {
	for _, iv := range []Interval{Median([]float64{1, 2, 3}), Median([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})} {
		b, err := json.Marshal(iv)
		if err != nil {
			t.Fatal(err)
		}
		var back Interval
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back != iv {
			t.Errorf("%s read back as %+v, want %+v", b, back, iv)
		}
	}
	b, _ := json.Marshal(Median([]float64{1, 2}))
	if string(b) != `{"median":1.5,"ci_low":null,"ci_high":null,"n":2,"confidence":1}` {
		t.Errorf("infinite bounds marshal as %s", b)
	}
}

func TestUnpaired(t *testing.T) {
	a := []float64{10, 11, 9, 10.5, 9.5, 10, 10.2, 9.8}
	b := []float64{20, 22, 18, 21, 19, 20, 20.4, 19.6}
	r, p := Unpaired(a, b)
	if !near(r, 2) || p >= Alpha {
		t.Errorf("b = 2a: ratio %v, p %v; want 2 and p < %v", r, p, Alpha)
	}
	// Eight against eight, fully separated: the U test's smallest p, 2/C(16,8).
	if want := 2.0 / 12870; !near(p, want) {
		t.Errorf("p = %v, want %v (the exact two-sided U test, no overlap)", p, want)
	}
	if _, p := Unpaired(a, a); p < 0.5 {
		t.Errorf("a sample against itself: p %v", p)
	}
}

// TestMedianValue pins the one median of the bench: the middle value for
// odd n, the mean of the two middle ones for even n (not the upper or lower
// middle), non-finite values dropped, 0 for none; and that it is the centre
// Median reports with its interval, on samples of every size up to 40.
func TestMedianValue(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{math.NaN(), math.Inf(1)}, 0},
		{[]float64{7}, 7},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{10, 0}, 5},
		{[]float64{1, 1, 2, 100}, 1.5},
		{[]float64{5, math.NaN(), 1, math.Inf(-1), 3}, 3},
	} {
		if got := MedianValue(c.xs); got != c.want {
			t.Errorf("MedianValue(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	in := []float64{3, 1, 2, 4}
	MedianValue(in)
	if in[0] != 3 || in[3] != 4 {
		t.Errorf("MedianValue sorted its argument: %v", in)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 40; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(r.IntN(20)) // ties too
		}
		if got, want := MedianValue(xs), Median(xs).Center; got != want {
			t.Errorf("n=%d %v: MedianValue = %v, Median().Center = %v", n, xs, got, want)
		}
	}
}
