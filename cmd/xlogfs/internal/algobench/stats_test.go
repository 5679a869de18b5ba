package algobench

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func TestUpper95(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }
	// No misses: 1 − 0.05^(1/n).
	for _, n := range []int64{1, 10, 1000, 200000} {
		want := 1 - math.Pow(0.05, 1/float64(n))
		if got := Upper95(0, n); !near(got, want) {
			t.Errorf("Upper95(0, %d) = %g, want %g", n, got, want)
		}
	}
	if got := Upper95(0, 200000); got < 1.49e-5 || got > 1.50e-5 {
		t.Errorf("Upper95(0, 200000) = %g, want about 3/200000", got)
	}
	// All but one missed: 0.95^(1/n).
	if got, want := Upper95(9, 10), math.Pow(0.95, 0.1); !near(got, want) {
		t.Errorf("Upper95(9, 10) = %g, want %g", got, want)
	}
	// The defining property: seeing x or fewer misses at p = bound has
	// probability 5 %.
	for _, c := range []struct{ x, n int64 }{{1, 10}, {3, 1000}, {50, 200000}, {17, 4096}} {
		u := Upper95(c.x, c.n)
		if p := (distuv.Binomial{N: float64(c.n), P: u}).CDF(float64(c.x)); math.Abs(p-0.05) > 1e-6 {
			t.Errorf("Upper95(%d, %d) = %g: P(X ≤ %d) = %g, want 0.05", c.x, c.n, u, c.x, p)
		}
		if obs := float64(c.x) / float64(c.n); u <= obs {
			t.Errorf("Upper95(%d, %d) = %g not above the observed %g", c.x, c.n, u, obs)
		}
	}
	if Upper95(5, 5) != 1 || Upper95(0, 0) != 1 {
		t.Errorf("degenerate bounds not 1")
	}
}
