package benchwork

import (
	"slices"
	"time"
)

// Percentile of durations in microseconds (exact: sorts a copy).
func Percentile(lat []time.Duration, p float64) float64 {
	s := slices.Clone(lat)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	i = max(0, min(i, len(s)-1))
	return float64(s[i]) / 1e3
}
