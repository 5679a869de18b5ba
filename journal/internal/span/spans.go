package span

import (
	"cmp"
	"slices"
)

// Span is a byte range [lo, hi).
type Span struct{ Lo, Hi int64 }

// Add adds [lo, hi) to a sorted set of disjoint spans.
func Add(set []Span, lo, hi int64) []Span {
	if lo >= hi {
		return set
	}
	var out []Span
	for _, s := range set {
		switch {
		case s.Hi < lo || s.Lo > hi:
			out = append(out, s)
		default:
			lo, hi = min(lo, s.Lo), max(hi, s.Hi)
		}
	}
	out = append(out, Span{lo, hi})
	slices.SortFunc(out, func(a, b Span) int { return cmp.Compare(a.Lo, b.Lo) })
	return out
}

// Remove takes [lo, hi) out of a set of spans.
func Remove(set []Span, lo, hi int64) []Span {
	var out []Span
	for _, s := range set {
		if s.Hi <= lo || s.Lo >= hi {
			out = append(out, s)
			continue
		}
		if s.Lo < lo {
			out = append(out, Span{s.Lo, lo})
		}
		if s.Hi > hi {
			out = append(out, Span{hi, s.Hi})
		}
	}
	return out
}

// Covers reports whether the spans cover [lo, hi).
func Covers(set []Span, lo, hi int64) bool {
	for _, s := range set {
		if s.Lo <= lo && s.Hi >= hi {
			return true
		}
	}
	return lo >= hi
}
