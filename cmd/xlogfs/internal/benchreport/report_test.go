package benchreport

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// synthetic builds the results of a 2 modes × 2 kernels bench with known
// values: in round r every value is multiplied by a drift d(r) (as a
// machine's load would), sector costs exactly 1.5 × batched's checksum CPU
// at the fast kernel, the slow kernel 10 × the fast one at batched, and
// throughput wobbles ±3 % around the same value for everyone.
func synthetic(rounds int, fast string) *Results {
	res := &Results{
		Machine: Machine{CPU: "test CPU", CPUs: 2, CksumImpl: fast},
		Config: Config{Modes: []string{"batched", "sector"}, Impls: []string{"best", "generic"}, Workload: "builtin",
			Journal: "data", Device: "ram", Rounds: rounds, Seed: 42, Reference: "batched/" + fast},
	}
	cksum := map[[2]string]float64{
		{"batched", fast}: 0.01, {"sector", fast}: 0.015,
		{"batched", "generic"}: 0.10, {"sector", "generic"}: 0.12,
	}
	wobble := []float64{1.00, 1.03, 0.97, 1.02, 0.98, 1.01, 0.99, 1.00, 1.03, 0.97, 1.02, 0.98}
	for _, m := range []string{"batched", "sector"} {
		for _, im := range []string{fast, "generic"} {
			spec := "generic"
			if im == fast {
				spec = "best"
			}
			res.Targets = append(res.Targets, Target{Name: m + "/" + im, Kind: "xlogfs", Mode: m, Impl: im, ImplSpec: spec})
		}
	}
	for r := 1; r <= rounds; r++ {
		drift := 1 + 0.2*float64(r%4)
		for i, t := range res.Targets {
			res.Runs = append(res.Runs, Run{Target: t.Name, Round: r, Order: (i+r)%len(res.Targets) + 1, Ops: 1000,
				Values: map[string]float64{
					"cksum_cpu":  cksum[[2]string{t.Mode, t.Impl}] * drift,
					"throughput": 200 * drift * wobble[(r+i)%len(wobble)],
					"fsync_p99":  1000 * drift * wobble[(r+2*i)%len(wobble)],
				},
				Stats: map[string]float64{"cksum_records": 100, "cksum_calls": 100, "cksum_bytes": 100 << 15,
					"log_records": 100, "log_header_bytes": 100 * 4096, "log_payload_bytes": 100 * 512},
			})
		}
	}
	Analyze(res)
	return res
}

func find[T any](xs []T, ok func(T) bool) (T, bool) {
	for _, x := range xs {
		if ok(x) {
			return x, true
		}
	}
	var zero T
	return zero, false
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestAnalyzeKnownEffects(t *testing.T) {
	res := synthetic(10, "avx512")
	c, ok := res.Comparison("cksum_cpu", "sector/avx512")
	if !ok {
		t.Fatalf("no cksum_cpu comparison of sector/avx512: %+v", res.Comparisons)
	}
	if !near(c.Ratio, 1.5) || !near(c.CILow, 1.5) || !c.Significant || c.CILow <= 1 || c.Reference != "batched/avx512" || c.Rounds != 10 {
		t.Errorf("sector/avx512 vs batched/avx512 checksum CPU: %+v; want 1.5, significant (the drift cancels in pairs)", c)
	}
	tp, ok := res.Comparison("throughput", "sector/avx512")
	if !ok || tp.Significant || tp.CILow > 1 || tp.CIHigh < 1 {
		t.Errorf("throughput that only wobbles: %+v, want an interval around 1", tp)
	}

	// Attribution: batching at each kernel, the kernel at each mode.
	a, ok := find(res.Attribution, func(a Attribution) bool {
		return a.Metric == "cksum_cpu" && a.Factor == "batching" && a.At == "avx512"
	})
	if !ok || a.From != "sector/avx512" || a.To != "batched/avx512" || !near(a.Ratio, 1/1.5) || !a.Significant {
		t.Errorf("batching at avx512: %+v, want sector→batched 0.667", a)
	}
	a, ok = find(res.Attribution, func(a Attribution) bool {
		return a.Metric == "cksum_cpu" && a.Factor == "kernel" && a.At == "batched"
	})
	if !ok || a.From != "batched/generic" || a.To != "batched/avx512" || !near(a.Ratio, 0.1) {
		t.Errorf("kernel at batched: %+v, want generic→avx512 0.1", a)
	}
	if n := len(res.Attribution); n != 2*2*3 {
		t.Errorf("%d attribution entries, want 12 (2 factors × 2 levels × 3 metrics)", n)
	}

	// Decomposition of sector/generic (0.12) → batched/avx512 (0.01).
	if len(res.Decomposition) != 1 {
		t.Fatalf("decomposition %+v, want one (sector/generic → batched/avx512)", res.Decomposition)
	}
	d := res.Decomposition[0]
	wantB := (math.Log(0.10/0.12) + math.Log(0.01/0.015)) / 2 / math.Log(0.01/0.12)
	if !near(d.Total.Center, 0.01/0.12) || !near(d.Batching.Center, wantB) || !near(d.Kernel.Center, 1-wantB) {
		t.Errorf("decomposition %+v, want total %v, batching %v", d, 0.01/0.12, wantB)
	}

	text := strings.Join(res.Verdict, "\n")
	for _, want := range []string{
		"sector vs batched (avx512): checksum CPU +50 % (95 % CI +50…+50 %)",
		"throughput ",
		"generic vs avx512 kernel (batched): checksum CPU ×10.0",
		"batching accounts for",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("verdict lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(text, "not significant") {
		t.Errorf("verdict does not call the throughput wobble not significant:\n%s", text)
	}
}

// Inline mode beside the factorial: compared with batched on checksum CPU
// and on the force path, given the kernel's effect, and kept out of
// batching's attribution and the decomposition, which it is no level of.
func TestAnalyzeInline(t *testing.T) {
	res := synthetic(10, "avx512")
	res.Config.Modes = append(res.Config.Modes, "inline")
	force := map[[2]string]float64{
		{"batched", "avx512"}: 3000, {"sector", "avx512"}: 9000, {"inline", "avx512"}: 90,
		{"batched", "generic"}: 40000, {"sector", "generic"}: 45000, {"inline", "generic"}: 400,
	}
	cpu := map[string]float64{"avx512": 0.009, "generic": 0.09} // inline's checksum CPU, 0.9 × batched's
	for _, im := range []string{"avx512", "generic"} {
		spec := map[string]string{"avx512": "best", "generic": "generic"}[im]
		res.Targets = append(res.Targets, Target{Name: "inline/" + im, Kind: "xlogfs", Mode: "inline", Impl: im, ImplSpec: spec})
	}
	var runs []Run
	for _, r := range res.Runs {
		t, _ := res.Target(r.Target)
		drift := 1 + 0.2*float64(r.Round%4)
		r.Values["cksum_force_ns"] = force[[2]string{t.Mode, t.Impl}] * drift
		runs = append(runs, r)
		if t.Mode == "batched" {
			in := Run{Target: "inline/" + t.Impl, Round: r.Round, Order: r.Order, Ops: r.Ops, Stats: r.Stats, Values: map[string]float64{
				"cksum_cpu":      cpu[t.Impl] * drift,
				"cksum_force_ns": force[[2]string{"inline", t.Impl}] * drift,
				"throughput":     r.Values["throughput"],
				"fsync_p99":      r.Values["fsync_p99"],
			}}
			runs = append(runs, in)
		}
	}
	res.Runs = runs
	Analyze(res)

	c, ok := res.Comparison("cksum_force_ns", "inline/avx512")
	if !ok || !near(c.Ratio, 0.03) || !c.Significant || c.CIHigh > 0.05 {
		t.Errorf("inline/avx512 vs batched/avx512 on the force path: %+v, want 0.03 and an interval below 0.05", c)
	}
	if c, ok := res.Comparison("cksum_cpu", "inline/avx512"); !ok || !near(c.Ratio, 0.9) || !c.Significant {
		t.Errorf("inline/avx512 checksum CPU: %+v, want 0.9, significant", c)
	}
	for _, a := range res.Attribution {
		if a.Factor == "batching" && (strings.HasPrefix(a.From, "inline/") || strings.HasPrefix(a.To, "inline/")) {
			t.Errorf("inline in batching's attribution: %+v", a)
		}
	}
	if _, ok := find(res.Attribution, func(a Attribution) bool {
		return a.Factor == "kernel" && a.At == "inline" && a.From == "inline/generic" && a.To == "inline/avx512"
	}); !ok {
		t.Errorf("no kernel attribution at inline: %+v", res.Attribution)
	}
	for _, d := range res.Decomposition {
		if strings.HasPrefix(d.From, "inline/") {
			t.Errorf("inline in the decomposition: %+v", d)
		}
	}
	text := strings.Join(res.Verdict, "\n")
	for _, want := range []string{
		"inline vs batched (avx512): checksum CPU −10",
		"); checksum on the force path ×0.030 (95 % CI ×0.030…×0.030); throughput",
		"inline vs batched (generic): checksum CPU −10",
		"generic vs avx512 kernel (inline): ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("verdict lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "sector vs batched (avx512): checksum CPU +50 % (95 % CI +50…+50 %); checksum on the force path") {
		t.Errorf("the force path in sector's verdict line, which is about batching:\n%s", text)
	}
	var out bytes.Buffer
	PrintTable(&out, res, true)
	// The median over the rounds' drift (1, 1.2, 1.4, 1.6) of 90 ns is 117.
	if !strings.Contains(out.String(), "ns/force") || !strings.Contains(out.String(), " 117 ") {
		t.Errorf("the table lacks the force path's ns per force:\n%s", out.String())
	}
}

func TestTooFewRoundsIsNeverSignificant(t *testing.T) {
	res := synthetic(5, "avx512")
	for _, c := range res.Comparisons {
		if c.Significant {
			t.Errorf("5 rounds, significant: %+v", c)
		}
	}
	// Said once in the whole report, not in every finding and cell.
	var out bytes.Buffer
	Print(&out, res, false)
	if n := strings.Count(out.String(), "too few rounds"); n != 1 {
		t.Errorf("the report says \"too few rounds\" %d times, want once:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), "not significant (too few rounds for an interval)") {
		t.Errorf("the report does not say why nothing is significant:\n%s", out.String())
	}
	if strings.Contains(out.String(), "[no CI]") {
		t.Errorf("a cell repeats the missing interval:\n%s", out.String())
	}
	// JSON cannot hold infinity: the open bound is null, and reads back.
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"ci_low":null`)) {
		t.Errorf("no null bound in %s", b)
	}
	var back Results
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(back.Comparisons[0].CILow, -1) && !math.IsInf(back.Comparisons[0].CIHigh, 1) {
		t.Errorf("bounds read back as %+v", back.Comparisons[0])
	}
}

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	res := synthetic(8, "avx512")
	if err := Save(dir, res); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The fields a script reads, by name.
	var generic struct {
		Comparisons []map[string]any `json:"comparisons"`
		Attribution []map[string]any `json:"attribution"`
		Runs        []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"metric", "target", "reference", "ratio", "ci_low", "ci_high", "significant"} {
		if _, ok := generic.Comparisons[0][k]; !ok {
			t.Errorf("comparison lacks %q: %v", k, generic.Comparisons[0])
		}
		if _, ok := generic.Attribution[0][k]; !ok && k != "target" && k != "reference" {
			t.Errorf("attribution lacks %q: %v", k, generic.Attribution[0])
		}
	}
	if len(generic.Runs) != 8*4 || generic.Runs[0]["values"] == nil {
		t.Errorf("%d runs with values %v, want 32 with raw values", len(generic.Runs), generic.Runs[0]["values"])
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	first, _ := json.Marshal(res)
	if !bytes.Equal(again, first) {
		t.Error("results changed through Save and Load")
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "results.json") {
		t.Errorf("loading an empty folder: %v, want an error naming results.json", err)
	}
	os.WriteFile(filepath.Join(dir, "results.json"), []byte(`{"runs": []}`), 0o644)
	if _, err := Load(dir); err == nil {
		t.Error("results without runs loaded")
	}
}

// bench.txt must parse as Go benchmark format, a result per run, with the
// target's factors as name keys and every metric as a unit.
func TestBenchfmt(t *testing.T) {
	res := synthetic(6, "avx512")
	var b bytes.Buffer
	WriteBenchfmt(&b, res)
	rd := benchfmt.NewReader(&b, "bench.txt")
	n := 0
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			n++
			name := string(rec.Name)
			if !strings.HasPrefix(name, "Xlogfs/mode=") || !strings.Contains(name, "/impl=") {
				t.Errorf("name %q", name)
			}
			units := map[string]bool{}
			for _, v := range rec.Values {
				units[v.Unit] = true
			}
			for _, u := range []string{"B/s", "cksum-cpu-%", "fsync-p99-µs"} { // benchfmt reads MB/s as B/s, scaled
				if !units[u] {
					t.Errorf("%s: no %s value (has %v)", name, u, units)
				}
			}
			if rec.GetConfig("device") != "ram" || rec.GetConfig("journal") != "data" {
				t.Errorf("config of %s: device %q journal %q", name, rec.GetConfig("device"), rec.GetConfig("journal"))
			}
		case *benchfmt.SyntaxError:
			t.Errorf("bench.txt: %v", rec)
		}
	}
	if n != 6*4 {
		t.Errorf("%d results, want 24", n)
	}
}

// Two runs on machines whose fastest kernels differ still meet by mode
// and the implementation asked for.
func TestCompareRuns(t *testing.T) {
	a, b := synthetic(8, "avx512"), synthetic(8, "vpmsum")
	for i := range b.Runs {
		b.Runs[i].Values["throughput"] *= 2
	}
	Analyze(b)
	var out bytes.Buffer
	Compare(&out, a, b, "runA", "runB")
	s := out.String()
	for _, want := range []string{"A: runA", "B: runB", "batched/avx512 ~ batched/vpmsum", "2.00*", "sector/avx512 vs batched/avx512"} {
		if !strings.Contains(s, want) {
			t.Errorf("comparison lacks %q:\n%s", want, s)
		}
	}
}

func TestPrint(t *testing.T) {
	var out bytes.Buffer
	Print(&out, synthetic(10, "avx512"), true)
	s := out.String()
	for _, want := range []string{"seed 42", "sector/generic", "1 (reference)", "1.50 [1.50, 1.50]*", "attribution:", "batching at avx512: sector → batched", "kernel at sector: generic → avx512", "verdict:", "rec KiB hdr+payload", " 4.0+0.5 "} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
}

func TestDescribeRatio(t *testing.T) {
	res := synthetic(10, "avx512")
	c, _ := res.Comparison("cksum_cpu", "batched/generic")
	if got := DescribeRatio(c.Interval()); got != "×10.0 (95 % CI ×10.0…×10.0)" {
		t.Errorf("DescribeRatio ×10 = %q", got)
	}
	tp, _ := res.Comparison("throughput", "sector/avx512")
	if got := DescribeRatio(tp.Interval()); !strings.HasSuffix(got, ", not significant") || !strings.Contains(got, "−") {
		t.Errorf("DescribeRatio of a wobble = %q", got)
	}
}
