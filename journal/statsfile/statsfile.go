package statsfile

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// The histograms of .stats; log-linear buckets (see HistBounds).
const (
	HistFsync       = "fsync_us_hist"        // fsync and fdatasync latency, µs
	HistCksumRecord = "cksum_record_ns_hist" // checksum CPU time per record, ns
	HistForceCksum  = "force_cksum_ns_hist"  // checksum wall time per log force, ns
	HistForce       = "force_ns_hist"        // wall time per log force, ns
)

// File is a .stats file read back.
type File struct {
	Lines []Line // the "name value" lines, in order, histograms left out
	Hists []Hist // the histograms, in order of first appearance
}

// Line is one "name value" line.
type Line struct{ Name, Value string }

// Hist is a histogram of .stats: its non-empty buckets in increasing order.
type Hist struct {
	Name    string   `json:"-"`
	Buckets []Bucket `json:"buckets"`
}

// Bucket is a histogram bucket: Count values in [Lo, Hi).
type Bucket struct {
	Lo    uint64 `json:"lo"`
	Hi    uint64 `json:"hi"`
	Count uint64 `json:"count"`
}

// Parse reads the .stats format. Errors name the line.
func Parse(b []byte) (*File, error) {
	f := &File{}
	hists := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok || name == "" {
			return nil, fmt.Errorf(".stats line %d: %q is not \"name value\"", n, line)
		}
		if !strings.HasSuffix(name, "_hist") {
			f.Lines = append(f.Lines, Line{name, value})
			continue
		}
		var bk Bucket
		if _, err := fmt.Sscanf(value, "%d %d %d", &bk.Lo, &bk.Hi, &bk.Count); err != nil || bk.Hi <= bk.Lo {
			return nil, fmt.Errorf(".stats line %d: histogram bucket %q is not \"lo hi count\" with lo < hi", n, value)
		}
		i, seen := hists[name]
		if !seen {
			i = len(f.Hists)
			hists[name] = i
			f.Hists = append(f.Hists, Hist{Name: name})
		}
		h := &f.Hists[i]
		if k := len(h.Buckets); k > 0 && h.Buckets[k-1].Hi > bk.Lo {
			return nil, fmt.Errorf(".stats line %d: %s bucket [%d, %d) out of order", n, name, bk.Lo, bk.Hi)
		}
		h.Buckets = append(h.Buckets, bk)
	}
	return f, sc.Err()
}

// Value returns the value of the line name.
func (f *File) Value(name string) (string, bool) {
	for _, l := range f.Lines {
		if l.Name == name {
			return l.Value, true
		}
	}
	return "", false
}

// Number returns the value of the line name as a number.
func (f *File) Number(name string) (float64, bool) {
	v, ok := f.Value(name)
	if !ok {
		return 0, false
	}
	x, err := strconv.ParseFloat(v, 64)
	return x, err == nil
}

// Numbers returns every line whose value is a number.
func (f *File) Numbers() map[string]float64 {
	m := map[string]float64{}
	for _, l := range f.Lines {
		if x, err := strconv.ParseFloat(l.Value, 64); err == nil {
			m[l.Name] = x
		}
	}
	return m
}

// Hist returns the histogram name; one without values is empty, not
// missing: .stats writes no line for an empty histogram.
func (f *File) Hist(name string) Hist {
	for _, h := range f.Hists {
		if h.Name == name {
			return h
		}
	}
	return Hist{Name: name}
}

// HistNames are the histograms a mount's .stats has, in order.
var HistNames = []string{HistFsync, HistCksumRecord, HistForceCksum, HistForce}

// Count is the number of values in the histogram.
func (h Hist) Count() uint64 {
	var n uint64
	for _, b := range h.Buckets {
		n += b.Count
	}
	return n
}

// Percentile returns the p-th percentile (0 < p <= 100) in the
// histogram's unit: the middle of the bucket it falls in, as
// HistPercentile. Percentile(100) is the largest value's bucket.
func (h Hist) Percentile(p float64) float64 {
	total := h.Count()
	if total == 0 {
		return 0
	}
	rank := max(uint64(p/100*float64(total)+0.5), 1)
	var seen uint64
	for _, b := range h.Buckets {
		seen += b.Count
		if seen >= rank {
			return float64(b.Lo+b.Hi) / 2
		}
	}
	last := h.Buckets[len(h.Buckets)-1]
	return float64(last.Lo+last.Hi) / 2
}

// Sub returns what h holds beyond earlier, an earlier reading of the same
// histogram: the values added in between.
func (h Hist) Sub(earlier Hist) Hist {
	old := map[uint64]uint64{}
	for _, b := range earlier.Buckets {
		old[b.Lo] = b.Count
	}
	d := Hist{Name: h.Name}
	for _, b := range h.Buckets {
		if c := b.Count - min(b.Count, old[b.Lo]); c > 0 {
			d.Buckets = append(d.Buckets, Bucket{b.Lo, b.Hi, c})
		}
	}
	return d
}

// HistSummary is a histogram in a few numbers, in its unit.
type HistSummary struct {
	Count   uint64   `json:"count"`
	P50     float64  `json:"p50"`
	P90     float64  `json:"p90"`
	P99     float64  `json:"p99"`
	Max     float64  `json:"max"`
	Buckets []Bucket `json:"buckets,omitempty"`
}

// Summary summarises the histogram: count, p50, p90, p99 and max (each
// the middle of its bucket), with the buckets if asked.
func (h Hist) Summary(buckets bool) HistSummary {
	s := HistSummary{Count: h.Count(), P50: h.Percentile(50), P90: h.Percentile(90), P99: h.Percentile(99), Max: h.Percentile(100)}
	if buckets {
		s.Buckets = h.Buckets
		if s.Buckets == nil {
			s.Buckets = []Bucket{}
		}
	}
	return s
}

// JSON is the .stats file as one JSON object, as "xlogfs stats --json"
// and expvar show it: every line under its .stats name (a number where the
// value is one), and "histograms": each histogram's summary by name, with
// its buckets if asked.
func (f *File) JSON(buckets bool) map[string]any {
	m := map[string]any{}
	for _, l := range f.Lines {
		if x, err := strconv.ParseFloat(l.Value, 64); err == nil {
			m[l.Name] = x
		} else {
			m[l.Name] = l.Value
		}
	}
	hs := map[string]HistSummary{}
	for _, name := range HistNames {
		hs[name] = f.Hist(name).Summary(buckets)
	}
	for _, h := range f.Hists {
		hs[h.Name] = h.Summary(buckets)
	}
	m["histograms"] = hs
	return m
}
