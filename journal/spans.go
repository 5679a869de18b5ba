package journal

import (
	"cmp"
	"slices"
)

// span is a byte range [lo, hi).
type span struct{ lo, hi int64 }

// addSpan adds [lo, hi) to a sorted set of disjoint spans.
func addSpan(set []span, lo, hi int64) []span {
	if lo >= hi {
		return set
	}
	var out []span
	for _, s := range set {
		switch {
		case s.hi < lo || s.lo > hi:
			out = append(out, s)
		default:
			lo, hi = min(lo, s.lo), max(hi, s.hi)
		}
	}
	out = append(out, span{lo, hi})
	slices.SortFunc(out, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	return out
}

// removeSpan takes [lo, hi) out of a set of spans.
func removeSpan(set []span, lo, hi int64) []span {
	var out []span
	for _, s := range set {
		if s.hi <= lo || s.lo >= hi {
			out = append(out, s)
			continue
		}
		if s.lo < lo {
			out = append(out, span{s.lo, lo})
		}
		if s.hi > hi {
			out = append(out, span{hi, s.hi})
		}
	}
	return out
}

// covers reports whether the spans cover [lo, hi).
func covers(set []span, lo, hi int64) bool {
	for _, s := range set {
		if s.lo <= lo && s.hi >= hi {
			return true
		}
	}
	return lo >= hi
}
