package algobench

import (
	"strings"
	"testing"
)

func TestBeyondChance(t *testing.T) {
	for _, c := range []struct {
		missed, trials int64
		width          int
		want           bool
	}{
		{0, 200000, 16, false},
		{3, 200000, 16, false}, // 3.05 expected from a random 16-bit value
		{8, 200000, 16, false}, // unlucky, but P(X ≥ 8) ≈ 1.2e-2
		{30, 200000, 16, true}, // P(X ≥ 30) is astronomically small
		{1, 200000, 32, true},  // a 32-bit value misses 1 in 4e9
		{1, 200000, 64, true},  //
		{500, 1000, 16, true},  // a structural blind spot
		{1000, 1000, 16, true}, //
		{1, 32768, 16, false},  //
		{10, 32768, 16, true},  //
	} {
		cell := DetCell{Missed: c.missed, Trials: c.trials, Width: c.width}
		if got := BeyondChance(cell); got != c.want {
			t.Errorf("%d of %d at %d bits: beyond chance %v, want %v", c.missed, c.trials, c.width, got, c.want)
		}
	}
}

// The summary follows the measurements: the same results with a miss of
// crc32c's and a cheap scan read differently.
func TestSummaryFollowsResults(t *testing.T) {
	slow, fast := 0.40, 0.03
	mk := func(scan float64, crcMissed int64) *Results {
		r := &Results{Trials: 1000, CRC32CKernel: "test", Shapes: Shapes}
		cells := func(width int, missed int64) []DetCell {
			var out []DetCell
			for _, m := range Models() {
				c := DetCell{Shape: "page8k", Model: m.String(), Width: width, Trials: 1000}
				if m == Burst32 {
					c.Missed = missed
				}
				c.Observed = float64(c.Missed) / 1000
				c.Upper95 = Upper95(c.Missed, 1000)
				out = append(out, c)
			}
			return out
		}
		r.Algos = []AlgoResult{
			{Name: "crc32c/best", Width: 32, Detection: cells(32, crcMissed), ScanSlowdown: &scan,
				Speed: []SpeedCell{{Bytes: 8192, GBps: 10, Ratio: 1}}},
			{Name: "fletcher16", Width: 16, Detection: cells(16, 1000),
				Speed: []SpeedCell{{Bytes: 8192, GBps: 2, Ratio: 0.2}}},
		}
		r.Goal = goal(r, map[string]bool{"scan": true, "detection": true})
		return r
	}
	good := strings.Join(summarize(mk(fast, 0)), "\n")
	bad := strings.Join(summarize(mk(slow, 2)), "\n")
	for _, want := range []string{"3.0 %, which meets", "missed 0 of 4000", "which meets the goal of none", "A log here should use crc32c/best", "all bursts ≤ 32 bits"} {
		if !strings.Contains(good, want) {
			t.Errorf("good run's summary lacks %q:\n%s", want, good)
		}
	}
	for _, want := range []string{"40.0 %, which misses", "missed 2 of 4000", "misses the goal of none", "crc32c/best missed damage in this run"} {
		if !strings.Contains(bad, want) {
			t.Errorf("bad run's summary lacks %q:\n%s", want, bad)
		}
	}
	if g := mk(fast, 0).Goal; !g.Met {
		t.Errorf("goal not met with a 3 %% scan and no misses: %+v", g)
	}
	if g := mk(fast, 2).Goal; g.Met {
		t.Errorf("goal met with misses: %+v", g)
	}
}
