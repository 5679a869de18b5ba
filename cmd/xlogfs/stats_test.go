package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/journal/statsfile"
)

// TestStatsColumnsSayWhatTheyCount ties each "stats --interval" column
// label to the .stats counters it divides, and checks that the value
// shown, and its --json field, are that quotient: a label that says
// forces but counts syncs fails here.
func TestStatsColumnsSayWhatTheyCount(t *testing.T) {
	want := map[string][2]string{ // label → numerator, denominator ("": seconds)
		"syncs/s":     {"log_syncs", ""},
		"records/s":   {"log_records", ""},
		"MB/s":        {"log_bytes", ""},
		"fsyncs/s":    {"fsyncs", ""},
		"forces/sync": {"log_forces", "force_syncs"},
		"cksum ns/s":  {"cksum_ns", ""},
		"cksum cpu%":  {"cksum_ns", "process_cpu_ns"},
	}
	if len(statsColumns) != len(want) {
		t.Errorf("%d columns, %d labels tied to counters", len(statsColumns), len(want))
	}
	// Two readings one second apart, every counter growing by a
	// different amount.
	mk := func(scale int) mountStats {
		var b strings.Builder
		for i, name := range intervalCounters {
			fmt.Fprintf(&b, "%s %d\n", name, scale*(i+2)*1000)
		}
		f, err := statsfile.Parse([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		return mountStats{file: f}
	}
	prev, cur := mk(1), mk(2)
	cur.at = prev.at.Add(1e9)
	r := rates(prev, cur)
	for _, col := range statsColumns {
		w, ok := want[col.label]
		if !ok {
			t.Errorf("column %q is tied to no counters", col.label)
			continue
		}
		if col.num != w[0] || col.den != w[1] {
			t.Errorf("column %q divides %s by %q, want %s by %q", col.label, col.num, col.den, w[0], w[1])
		}
		den := 1.0
		if w[1] != "" {
			den = r.Delta[w[1]]
		}
		scale := 1.0
		if strings.HasSuffix(col.label, "%") {
			scale = 100
		}
		if got, exp := *col.field(&r), r.Delta[w[0]]/den*scale; got != exp || got == 0 {
			t.Errorf("column %q: %v, want Δ%s/Δ%s × %v = %v", col.label, got, w[0], w[1], scale, exp)
		}
	}
}
