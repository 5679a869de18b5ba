// Package benchstat is the statistics of xlogfs bench: medians with
// distribution-free confidence intervals, paired ratios of a target to a
// reference measured in the same round, and the attribution of a change to
// two factors (how records are checksummed, and which kernel does it).
//
// The arithmetic is golang.org/x/perf's benchmath (the library behind Go's
// benchstat): a median's interval comes from the order statistics of the
// sample, the interval within which the true median lies with at least the
// asked confidence for any distribution (the sign test's interval). With n
// values at 95 % that needs n >= 6; below that the interval is open on one
// side and nothing is significant. For n = 6 and 7 the interval is the
// sample's whole range; from n = 8 on it leaves out the most extreme values
// (one at either end for n = 9 or 10, two for n = 12 or 13, three for
// n = 15), and for even n it may leave one more out at the top than at the
// bottom.
//
// The median is the one definition every part of the bench uses (Median
// with its interval, MedianValue without): the middle value for odd n, the
// mean of the two middle values for even n, over the finite values.
//
// Rounds are paired: every target runs once in each round, so a round's
// ratio target ÷ reference cancels what drifted between rounds (the
// machine's load, its clock, the page cache) and the interval is that of
// the median of those ratios. A ratio is significant when its interval
// excludes 1.
package benchstat

import (
	"encoding/json"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// Confidence is the confidence level of every interval.
const Confidence = 0.95

// Interval is a median and its confidence interval. Lo and Hi are
// infinite when there are too few values for one.
type Interval struct {
	Center     float64 `json:"median"`
	Lo         float64 `json:"ci_low"`
	Hi         float64 `json:"ci_high"`
	N          int     `json:"n"`
	Confidence float64 `json:"confidence"` // the interval's actual level, at least Confidence
}

// Median summarizes xs (NaNs and infinities dropped) by its median and the
// median's confidence interval at Confidence. For an even number of values
// the median is the mean of the two middle ones.
func Median(xs []float64) Interval {
	vals := finite(xs)
	if len(vals) == 0 {
		return Interval{Center: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1)}
	}
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(vals, &benchmath.DefaultThresholds), Confidence)
	return Interval{Center: s.Center, Lo: s.Lo, Hi: s.Hi, N: len(vals), Confidence: s.Confidence}
}

// MedianValue is the median of xs without its interval, the same value as
// Median(xs).Center: over the finite values of xs (NaNs and infinities
// dropped), the middle one for an odd count, the mean of the two middle
// ones for an even count. With no finite value it is 0 (not NaN, which
// JSON cannot hold), for the tables and results that print it.
func MedianValue(xs []float64) float64 {
	s := finite(xs) // sorted
	n := len(s)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Finite says whether the interval is bounded on both sides.
func (iv Interval) Finite() bool {
	return !math.IsInf(iv.Lo, 0) && !math.IsInf(iv.Hi, 0) && !math.IsNaN(iv.Lo) && !math.IsNaN(iv.Hi)
}

// Excludes says whether x lies outside the interval: for a ratio with
// x = 1, whether the difference is significant.
func (iv Interval) Excludes(x float64) bool {
	return iv.Finite() && (iv.Lo > x || iv.Hi < x)
}

// MinRounds is the fewest values whose median has a finite interval at
// Confidence.
func MinRounds() int {
	for n := 2; n < 100; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i)
		}
		if Median(xs).Finite() {
			return n
		}
	}
	return 100
}

// Ratios returns target[i] ÷ ref[i] for every round i where both are
// finite and ref[i] is not 0. The slices are indexed by round.
func Ratios(target, ref []float64) []float64 {
	var out []float64
	for i := range min(len(target), len(ref)) {
		t, r := target[i], ref[i]
		if math.IsNaN(t) || math.IsNaN(r) || math.IsInf(t, 0) || math.IsInf(r, 0) || r == 0 {
			continue
		}
		out = append(out, t/r)
	}
	return out
}

// PairedRatio is the median of the per-round ratios target ÷ ref with its
// interval.
func PairedRatio(target, ref []float64) Interval { return Median(Ratios(target, ref)) }

func finite(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// MarshalJSON writes an infinite bound as null (JSON has no infinity).
func (iv Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Center     *float64 `json:"median"`
		Lo         *float64 `json:"ci_low"`
		Hi         *float64 `json:"ci_high"`
		N          int      `json:"n"`
		Confidence float64  `json:"confidence"`
	}{num(iv.Center), num(iv.Lo), num(iv.Hi), iv.N, iv.Confidence})
}

// UnmarshalJSON reads null bounds back as infinities.
func (iv *Interval) UnmarshalJSON(b []byte) error {
	var v struct {
		Center     *float64 `json:"median"`
		Lo         *float64 `json:"ci_low"`
		Hi         *float64 `json:"ci_high"`
		N          int      `json:"n"`
		Confidence float64  `json:"confidence"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*iv = Interval{Center: denum(v.Center, math.NaN()), Lo: denum(v.Lo, math.Inf(-1)), Hi: denum(v.Hi, math.Inf(1)), N: v.N, Confidence: v.Confidence}
	return nil
}

// num is x for JSON: nil (null) when x is not a finite number.
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func denum(p *float64, null float64) float64 {
	if p == nil {
		return null
	}
	return *p
}

// Decomposition splits the change from one target to another that
// differs in two factors (say sector/generic to batched/avx512: the
// checksum mode and the kernel) between the factors. Per round, the total
// ratio is the product of the two factors' ratios along either path (first
// the mode, then the kernel, or the other way round); on a log scale the
// two steps of a path add up to the total, and each factor's share is its
// step averaged over both paths (the Shapley value: with no interaction
// between the factors both paths agree). Shares are fractions of the
// total's logarithm and add up to 1.
type Decomposition struct {
	Total   Interval `json:"total"`   // to ÷ from
	Factor1 Interval `json:"factor1"` // share of the first factor (the one changed in via1)
	Factor2 Interval `json:"factor2"` // share of the second
}

// Decompose takes per-round values of four targets: from (both factors
// old), via1 (factor 1 new, factor 2 old), via2 (factor 2 new, factor 1
// old) and to (both new). A round whose total ratio is 1 has no change to
// share out and is left out of the shares.
func Decompose(from, via1, via2, to []float64) Decomposition {
	var total, share1, share2 []float64
	for i := range min(len(from), len(via1), len(via2), len(to)) {
		f, a, b, t := from[i], via1[i], via2[i], to[i]
		if !(f > 0 && a > 0 && b > 0 && t > 0) || math.IsInf(f+a+b+t, 0) {
			continue
		}
		lt := math.Log(t / f)
		total = append(total, t/f)
		if lt == 0 {
			continue
		}
		// Factor 1's step: from→via1 (factor 2 old), via2→to (factor 2 new).
		s1 := (math.Log(a/f) + math.Log(t/b)) / 2 / lt
		share1 = append(share1, s1)
		share2 = append(share2, 1-s1)
	}
	return Decomposition{Total: Median(total), Factor1: Median(share1), Factor2: Median(share2)}
}

// Unpaired compares two independent samples (two bench runs, two
// machines): the ratio of b's median to a's, and the Mann-Whitney U test's
// p-value for the hypothesis that they come from one distribution (what
// Go's benchstat reports). The ratio has no interval: without pairing,
// none follows from the medians' own.
func Unpaired(a, b []float64) (ratio, p float64) {
	va, vb := finite(a), finite(b)
	if len(va) == 0 || len(vb) == 0 {
		return math.NaN(), 1
	}
	th := benchmath.DefaultThresholds
	sa, sb := benchmath.NewSample(va, &th), benchmath.NewSample(vb, &th)
	c := benchmath.AssumeNothing.Compare(sa, sb)
	ma := benchmath.AssumeNothing.Summary(sa, Confidence).Center
	mb := benchmath.AssumeNothing.Summary(sb, Confidence).Center
	if ma == 0 {
		return math.NaN(), c.P
	}
	return mb / ma, c.P
}

// Alpha is the significance level of Unpaired's test: 1 - Confidence.
const Alpha = 1 - Confidence
