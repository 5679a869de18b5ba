package benchreport

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchstat"
)

// recorded is a real run's results.json (xlogfs bench --device ram
// --modes batched,xfs,sector --impls best,generic --rounds 6 --time 1s on
// a 2-CPU AMD EPYC; histograms and most .stats dropped, the analysis left
// to Analyze), cut to its first rounds when rounds > 0.
func recorded(t *testing.T, rounds int) *Results {
	t.Helper()
	res, err := Load("testdata/results-6rounds.json")
	if err != nil {
		t.Fatal(err)
	}
	if rounds > 0 {
		var runs []Run
		for _, r := range res.Runs {
			if r.Round <= rounds {
				runs = append(runs, r)
			}
		}
		res.Runs, res.Config.Rounds = runs, rounds
	}
	Analyze(res)
	return res
}

// perRound is target's metric by round, straight from the runs.
func perRound(res *Results, target, metric string) []float64 {
	xs := make([]float64, res.Config.Rounds)
	for i := range xs {
		xs[i] = math.NaN()
	}
	for _, r := range res.Runs {
		if v, ok := r.Values[metric]; ok && r.Target == target {
			xs[r.Round-1] = v
		}
	}
	return xs
}

// wantSaving is the phrase the answer should give for from → to, computed
// here from the rounds' ratios.
func wantSaving(res *Results, from, to, metric string) string {
	iv := benchstat.PairedRatio(perRound(res, to, metric), perRound(res, from, metric))
	pct := func(r float64) float64 { return math.Round(100 * math.Abs(1-r)) }
	switch {
	case !iv.Finite() && iv.Center <= 1:
		return fmt.Sprintf("saves %.0f %%", pct(iv.Center))
	case !iv.Finite():
		return fmt.Sprintf("costs %.0f %% more", pct(iv.Center))
	case iv.Lo <= 1 && iv.Hi >= 1:
		return "saves nothing measurable"
	case iv.Center < 1:
		return fmt.Sprintf("saves %.0f %% (%.0f–%.0f %%)", pct(iv.Center), pct(iv.Hi), pct(iv.Lo))
	}
	return fmt.Sprintf("costs %.0f %% (%.0f–%.0f %%) more", pct(iv.Center), pct(iv.Lo), pct(iv.Hi))
}

func TestAnswerFromRecordedRun(t *testing.T) {
	res := recorded(t, 0)
	best := res.Machine.CksumImpl
	ref := "batched/" + best
	if res.Config.Reference != ref {
		t.Fatalf("fixture's reference %q, want %q", res.Config.Reference, ref)
	}
	answer := Answer(res)
	text := strings.Join(answer, "\n")
	if n := len(answer); n < 2 || n > 5 {
		t.Errorf("%d sentences, want 2 to 5:\n%s", n, text)
	}
	const m = "cksum_cpu_per_fsync"
	batching := answer[0]
	for _, c := range []struct{ from, against string }{{"sector/" + best, "one call per sector"}, {"xfs/" + best, "XFS's per-region calls"}} {
		if !saysSaving(batching, wantSaving(res, c.from, ref, m), c.against) {
			t.Errorf("batching's sentence lacks %q against %s:\n%s", wantSaving(res, c.from, ref, m), c.against, batching)
		}
	}
	if !strings.HasPrefix(batching, "On this machine (AMD EPYC), with the "+best+" kernel, batching saves ") {
		t.Errorf("batching's sentence: %s", batching)
	}
	kernel := wantSaving(res, "batched/generic", ref, m)
	if !strings.Contains(text, "the "+best+" kernel "+kernel+" of the checksum's CPU per fsync against generic (pure Go slicing-by-8)") {
		t.Errorf("no kernel sentence saving %s:\n%s", kernel, text)
	}
	share := benchstat.Median(perRound(res, ref, "cksum_cpu"))
	if want := fmt.Sprintf("The checksum is %.1f %% (%.1f–%.1f %%) of the daemon's CPU with %s.", 100*share.Center, 100*share.Lo, 100*share.Hi, ref); !strings.Contains(text, want) {
		t.Errorf("answer lacks %q:\n%s", want, text)
	}
	if note := TooFewRoundsNote(res); note != "" {
		t.Errorf("6 rounds have intervals, yet: %s", note)
	}

	// The answer comes first: before any table.
	var out bytes.Buffer
	Print(&out, res, false)
	report := out.String()
	if a, tbl := strings.Index(report, answer[0][:40]), strings.Index(report, "\ntarget "); a < 0 || tbl < 0 || a > tbl {
		t.Errorf("the answer (at %d) is not before the first table (at %d):\n%s", a, tbl, report)
	}
}

// saysSaving reports whether sentence gives phrase ("saves 9 % (2–15
// %)") against what: first in the sentence (followed by what is saved), or
// after another, where "saves" is said once.
func saysSaving(sentence, phrase, against string) bool {
	for _, p := range []string{phrase, strings.TrimPrefix(phrase, "saves ")} {
		if strings.Contains(sentence, p+" against "+against) || strings.Contains(sentence, p+" of the checksum's CPU per fsync against "+against) {
			return true
		}
	}
	return false
}

// Every line of the report fits in 120 columns, unless --wide; the
// columns left out are named, and --wide prints them.
func TestReportWidth(t *testing.T) {
	for name, res := range map[string]*Results{"recorded": recorded(t, 0), "recorded, 2 rounds": recorded(t, 2), "synthetic": synthetic(10, "avx512")} {
		var narrow, wide bytes.Buffer
		Print(&narrow, res, false)
		Print(&wide, res, true)
		for i, line := range strings.Split(narrow.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > MaxWidth {
				t.Errorf("%s: line %d is %d columns:\n%s", name, i+1, n, line)
			}
		}
		if name == "synthetic" {
			continue
		}
		widest := 0
		for _, line := range strings.Split(wide.String(), "\n") {
			widest = max(widest, utf8.RuneCountInString(line))
		}
		if widest <= MaxWidth {
			t.Errorf("%s: --wide's widest line is %d columns: nothing was left out", name, widest)
		}
		if !strings.Contains(narrow.String(), "more columns with --wide") || !strings.Contains(wide.String(), "cksum ns/rec p50/p99") ||
			strings.Contains(wide.String(), "more columns with --wide") {
			t.Errorf("%s: the columns left out are not named, or --wide does not print them", name)
		}
	}
}

// With too few rounds for an interval the report says so once, not in
// every sentence, cell and verdict line, and the answer's figures stand
// alone.
func TestTooFewRoundsSaidOnce(t *testing.T) {
	res := recorded(t, 2)
	var out bytes.Buffer
	Print(&out, res, false)
	report := strings.Join(strings.Fields(out.String()), " ") // unwrapped
	if n := strings.Count(report, "too few rounds"); n != 1 {
		t.Errorf("\"too few rounds\" %d times, want once:\n%s", n, report)
	}
	if !strings.Contains(report, "not significant (too few rounds for an interval)") || !strings.Contains(report, "this run has 2 rounds") {
		t.Errorf("the note does not say why:\n%s", report)
	}
	ref := res.Config.Reference
	want := wantSaving(res, "batched/generic", ref, "cksum_cpu_per_fsync") + " of the checksum's CPU per fsync against generic"
	if strings.Contains(want, "(") {
		t.Errorf("2 rounds, yet an interval: %s", want)
	}
	if !strings.Contains(report, want) {
		t.Errorf("answer lacks %q:\n%s", want, report)
	}
}

// An interrupted run's results say so, read back, and report.
func TestPartialResults(t *testing.T) {
	res := recorded(t, 0)
	res.Runs = res.Runs[:len(res.Targets)+2] // round 1, and 2 runs of round 2
	res.Partial, res.PartialWhy = true, "interrupted in round 2 of 6"
	dir := t.TempDir()
	if err := Save(dir, res); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"partial": true`)) {
		t.Errorf("results.json not marked partial")
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	Analyze(back)
	var out bytes.Buffer
	Print(&out, back, false)
	for _, want := range []string{"PARTIAL: interrupted in round 2 of 6.", "This run is partial (interrupted in round 2 of 6): the figures are from the 8 runs completed.",
		"this run has 1 complete round of 6 (8 runs)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}

	// Interrupted before any run: still results, saying so.
	res.Runs = nil
	if err := Save(dir, res); err != nil {
		t.Fatal(err)
	}
	if back, err = Load(dir); err != nil {
		t.Fatalf("a partial run without runs does not load: %v", err)
	}
	Analyze(back)
	out.Reset()
	Print(&out, back, false)
	if !strings.Contains(out.String(), "No run completed") {
		t.Errorf("report of no runs:\n%s", out.String())
	}
}

// With the kernel XFS baseline, one sentence sets the reference beside
// it: checksum CPU per fsync and share of busy CPU (perf's), log blocks
// per fsync; or why XFS's checksum CPU was not measured.
func TestAnswerXFS(t *testing.T) {
	build := func(perf bool) *Results {
		res := &Results{Machine: Machine{CPU: "test CPU", CksumImpl: "avx512"},
			Config:  Config{Rounds: 6, Reference: "batched/avx512", Baselines: []string{XFSTarget}},
			Targets: []Target{{Name: "batched/avx512", Kind: "xlogfs", Mode: "batched", Impl: "avx512", ImplSpec: "best"}, {Name: XFSTarget, Kind: XFSTarget}}}
		for r := 1; r <= 6; r++ {
			f := 1 + 0.01*float64(r)
			res.Runs = append(res.Runs,
				Run{Target: "batched/avx512", Round: r, Values: map[string]float64{"cksum_cpu": 0.02 * f,
					"cksum_cpu_per_fsync": 3000 * f, "cksum_busy_share": 0.0015 * f, "log_blocks_per_fsync": 9.5 * f}},
				Run{Target: XFSTarget, Round: r, Values: map[string]float64{"log_blocks_per_fsync": 8 * f}, Unmeasured: map[string]string{}})
			if perf {
				res.Runs[len(res.Runs)-1].Values["cksum_cpu_per_fsync"] = 1500 * f
				res.Runs[len(res.Runs)-1].Values["cksum_busy_share"] = 0.00075 * f
			} else {
				res.Runs[len(res.Runs)-1].Unmeasured["cksum_cpu_per_fsync"] = "perf is not installed"
			}
		}
		Analyze(res)
		return res
	}
	res := build(true)
	med := func(target, m string) float64 { return benchstat.Median(perRound(res, target, m)).Center }
	ns := func(target string) string { return count(int64(math.Round(med(target, "cksum_cpu_per_fsync")))) }
	want := fmt.Sprintf("The kernel's XFS at the same log geometry: its checksum takes %s ns of CPU per fsync to batched/avx512's %s ns "+
		"(%s %% of the machine's busy CPU, from perf, to %s %%); it writes %.1f log blocks per fsync to batched/avx512's %.1f.",
		ns(XFSTarget), ns("batched/avx512"),
		trimFloat(100*med(XFSTarget, "cksum_busy_share")), trimFloat(100*med("batched/avx512", "cksum_busy_share")),
		med(XFSTarget, "log_blocks_per_fsync"), med("batched/avx512", "log_blocks_per_fsync"))
	if got := Answer(res); len(got) == 0 || got[len(got)-1] != want {
		t.Errorf("answer:\n%s\nwant its last sentence:\n%s", strings.Join(got, "\n"), want)
	}
	got := strings.Join(Answer(build(false)), "\n")
	if !strings.Contains(got, "The kernel's XFS at the same log geometry: its checksum CPU was not measured (perf is not installed); it writes ") {
		t.Errorf("answer without perf:\n%s", got)
	}
}
