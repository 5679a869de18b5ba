package benchwork

import (
	"math"
	"testing"
	"time"
)

// Percentile is the nearest rank: with 60 samples of 1..60µs, p99 is the
// 60th (ceil(59.4)), p50 the 30th, p1 the first; unsorted input is sorted.
func TestPercentileNearestRank(t *testing.T) {
	var lat []time.Duration
	for i := 60; i >= 1; i-- {
		lat = append(lat, time.Duration(i)*time.Microsecond)
	}
	for _, c := range []struct{ p, want float64 }{{99, 60}, {50, 30}, {1, 1}, {100, 60}, {90, 54}} {
		if got := Percentile(lat, c.p); got != c.want {
			t.Errorf("p%v of 1..60µs = %vµs, want %vµs", c.p, got, c.want)
		}
	}
	if lat[0] != 60*time.Microsecond {
		t.Errorf("Percentile sorted its argument in place")
	}
	if got := Percentile([]time.Duration{1500 * time.Nanosecond}, 99); got != 1.5 {
		t.Errorf("p99 of one 1.5µs sample = %v", got)
	}
	if got := Percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("p50 of no samples = %v, want NaN", got)
	}
}
