package benchwork

import (
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"
)

// Percentile returns the p-th percentile (0 < p ≤ 100) of durations, in
// microseconds; NaN when there are none. It is the nearest-rank percentile
// (gonum's stat.Empirical): the smallest sample that at least p% of the
// samples are at or below, so always a latency that was seen, never one
// interpolated between two (stat.LinInterp would be). It sorts a copy.
func Percentile(lat []time.Duration, p float64) float64 {
	if len(lat) == 0 {
		return math.NaN()
	}
	x := make([]float64, len(lat))
	for i, d := range lat {
		x[i] = float64(d) / 1e3
	}
	slices.Sort(x)
	return stat.Quantile(p/100, stat.Empirical, x, nil)
}
