package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchrun"
)

// benchResults writes the results of a small made-up bench into dir.
func benchResults(t *testing.T, dir string, cksumScale float64) {
	t.Helper()
	res := &benchreport.Results{Version: Version, Started: time.Now(), Machine: benchrun.Machine(),
		Config: benchreport.Config{Modes: []string{"batched", "sector"}, Impls: []string{"best", "generic"}, Workload: "builtin",
			Journal: "data", Device: "ram", Rounds: 6, Seed: 7, Reference: "batched/avx512", Out: dir, Duration: time.Second}}
	for _, m := range []string{"batched", "sector"} {
		for _, im := range []string{"avx512", "generic"} {
			spec := im
			if im == "avx512" {
				spec = "best"
			}
			res.Targets = append(res.Targets, benchreport.Target{Name: m + "/" + im, Kind: "xlogfs", Mode: m, Impl: im, ImplSpec: spec})
		}
	}
	for r := 1; r <= 6; r++ {
		for i, tg := range res.Targets {
			res.Runs = append(res.Runs, benchreport.Run{Target: tg.Name, Round: r, Order: i + 1, Values: map[string]float64{
				"cksum_cpu": cksumScale * float64(i+1) * (1 + 0.1*float64(r)), "throughput": 100 + float64(r), "fsync_p99": 500 + float64(i),
			}})
		}
	}
	benchreport.Analyze(res)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := benchreport.Save(dir, res); err != nil {
		t.Fatal(err)
	}
}

func TestBenchReport(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	benchResults(t, a, 0.01)
	benchResults(t, b, 0.02)

	code, out, errs := runCapture(t, "bench", "report", a)
	if code != 0 {
		t.Fatalf("bench report: exit %d: %s", code, errs)
	}
	for _, want := range []string{"seed 7", "sector/generic", "verdict:", "sector vs batched (avx512): checksum CPU ×3.00 (95 % CI ×3.00…×3.00)", "attribution:"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"chart.svg", "chart.png"} {
		if st, err := os.Stat(filepath.Join(a, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not drawn: %v", f, err)
		}
	}

	code, out, errs = runCapture(t, "bench", "report", "--no-chart", a, b)
	if code != 0 {
		t.Fatalf("bench report A B: exit %d: %s", code, errs)
	}
	for _, want := range []string{"A: " + a, "B: " + b, "B ÷ A", "sector/avx512 vs batched/avx512"} {
		if !strings.Contains(out, want) {
			t.Errorf("comparison lacks %q:\n%s", want, out)
		}
	}
	// Checksum CPU doubled in every round: 2.00 and significant.
	if !strings.Contains(out, "2.00*") {
		t.Errorf("doubled checksum CPU not found significant:\n%s", out)
	}

	if code, _, errs := runCapture(t, "bench", "report"); code != 2 {
		t.Errorf("bench report without DIR: exit %d (%s), want 2", code, errs)
	}
	missing := filepath.Join(t.TempDir(), "none")
	if code, _, errs := runCapture(t, "bench", "report", missing); code != 1 || !strings.Contains(errs, missing) {
		t.Errorf("bench report of a missing DIR: exit %d, %q; want 1 naming it", code, errs)
	}
}

func TestBenchUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--device", "floppy"},
		{"bench", "--modes", "bogus"},
		{"bench", "--impls", "nope"},
		{"bench", "--reference", "batched/stdlib"}, // stdlib is no default impl
		{"bench", "--rounds", "0"},
	} {
		if code, _, errs := runCapture(t, args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, %q; want 2 with a message", args, code, errs)
		}
	}
}
