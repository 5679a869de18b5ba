package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
)

// The rounds' orders: each a permutation of the targets, a function of the
// seed and the round alone (so --seed repeats a run's order), and
// different from round to round.
func TestRoundOrderSeeded(t *testing.T) {
	const n, rounds = 6, 10
	distinct := map[string]bool{}
	for r := 1; r <= rounds; r++ {
		o := roundOrder(42, r, n)
		sorted := slices.Sorted(slices.Values(o))
		if !slices.Equal(sorted, []int{0, 1, 2, 3, 4, 5}) {
			t.Fatalf("round %d order %v is not a permutation of 0..5", r, o)
		}
		if again := roundOrder(42, r, n); !slices.Equal(o, again) {
			t.Errorf("round %d: seed 42 gave %v then %v", r, o, again)
		}
		distinct[fmt.Sprint(o)] = true
	}
	if len(distinct) < rounds-1 {
		t.Errorf("only %d distinct orders in %d rounds", len(distinct), rounds)
	}
	same := 0
	for r := 1; r <= rounds; r++ {
		if slices.Equal(roundOrder(42, r, n), roundOrder(43, r, n)) {
			same++
		}
	}
	if same > 1 {
		t.Errorf("seeds 42 and 43 gave the same order in %d of %d rounds", same, rounds)
	}
	// Pinned: a change of generator would silently change what an old
	// run's --seed repeats.
	if o := roundOrder(1, 1, 6); fmt.Sprint(o) != "[3 1 2 4 0 5]" {
		t.Errorf("roundOrder(1, 1, 6) = %v, want [3 1 2 4 0 5]", o)
	}
}

func TestFactorialTargets(t *testing.T) {
	var cfg benchreport.Config
	best := cksum.Best().Name
	ts, err := factorialTargets(&cfg, "batched,per-chunk,sector", "best,generic,"+best)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range ts {
		names = append(names, tg.Name)
	}
	want := []string{"batched/" + best, "batched/generic", "xfs/" + best, "xfs/generic", "sector/" + best, "sector/generic"}
	if best == "generic" { // no faster kernel here
		want = []string{"batched/generic", "xfs/generic", "sector/generic"}
	}
	if !slices.Equal(names, want) {
		t.Errorf("targets %v, want %v (best resolved, duplicates dropped)", names, want)
	}
	if ts[0].ImplSpec != "best" || ts[0].Mode != "batched" || ts[0].Kind != "xlogfs" {
		t.Errorf("first target %+v", ts[0])
	}
	if ref, err := resolveReference("batched/best", ts); err != nil || ref != "batched/"+best {
		t.Errorf("reference batched/best → %q, %v", ref, err)
	}
	if _, err := resolveReference("inline/best", ts); err == nil {
		t.Error("a reference that is no target resolved")
	}
	if _, err := factorialTargets(&cfg, "bogus", "best"); err == nil {
		t.Error("--modes bogus accepted")
	}
	if _, err := factorialTargets(&cfg, "batched", "nope"); err == nil {
		t.Error("--impls nope accepted")
	}
}

// benchResults writes the results of a small made-up bench into dir.
func benchResults(t *testing.T, dir string, cksumScale float64) {
	t.Helper()
	res := &benchreport.Results{Version: Version, Started: time.Now(), Machine: machineInfo(),
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

// TestRequireCommandNamesPackage checks that a missing program is an error
// naming it and the package to install, and that the binary installs
// nothing itself.
func TestRequireCommandNamesPackage(t *testing.T) {
	err := requireCommand("xlogfs-no-such-tool", "xlogfs-pkg")
	if err == nil {
		t.Fatal("requireCommand of a missing program: nil error")
	}
	for _, want := range []string{"xlogfs-no-such-tool not found", "apt-get install xlogfs-pkg", "make bench"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if err := requireCommand("sh", "dash"); err != nil {
		t.Errorf("requireCommand of sh: %v", err)
	}
}
