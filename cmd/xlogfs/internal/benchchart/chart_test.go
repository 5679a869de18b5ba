package benchchart

import (
	"bytes"
	"image/png"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
)

func TestRender(t *testing.T) {
	res := &benchreport.Results{Config: benchreport.Config{Workload: "builtin", Journal: "data", Device: "ram", Rounds: 6, Reference: "batched/avx512"}}
	for _, m := range []string{"batched", "sector"} {
		for _, im := range []string{"avx512", "generic"} {
			res.Targets = append(res.Targets, benchreport.Target{Name: m + "/" + im, Kind: "xlogfs", Mode: m, Impl: im})
		}
	}
	for r := 1; r <= 6; r++ {
		for i, tg := range res.Targets {
			res.Runs = append(res.Runs, benchreport.Run{Target: tg.Name, Round: r, Values: map[string]float64{
				"cksum_cpu": 0.01 * float64(i+1) * (1 + 0.01*float64(r)), "throughput": 100 + float64(r), "fsync_p99": 500 + float64(i),
			}})
		}
	}
	benchreport.Analyze(res)
	svg, pngData, err := Render(res)
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	if !strings.Contains(s, "<svg") || !strings.Contains(s, "sector") || !strings.Contains(s, "generic") || !strings.Contains(s, "checksum CPU") {
		t.Errorf("SVG lacks the chart's parts (svg element, modes, impls, titles): %.300s", s)
	}
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		t.Fatalf("PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 600 {
		t.Errorf("PNG is %v", b)
	}
	if _, _, err := Render(&benchreport.Results{Targets: []benchreport.Target{{Name: "native", Kind: "native"}}}); err == nil {
		t.Error("a chart of no xlogfs target drawn")
	}
}

// Axis numbers are plain: 0, 2500, 5000, not 0.00, 2500.00, 5000.00.
func TestPlainAxisNumbers(t *testing.T) {
	for _, r := range [][2]float64{{0, 5000}, {0, 1}, {0, 0.03}, {0, 312}, {100, 2600}, {0, 26.5}, {-18.2, 121.5}} {
		ts := plainTicks{plot.DefaultTicks{}}.Ticks(r[0], r[1])
		labelled := 0
		for _, tk := range ts {
			if tk.Label == "" {
				continue
			}
			labelled++
			if want := strconv.FormatFloat(tk.Value, 'f', -1, 64); tk.Label != want && !strings.HasPrefix(want, tk.Label) {
				t.Errorf("range %v: tick %v labelled %q, want %q", r, tk.Value, tk.Label, want)
			}
			if strings.HasSuffix(tk.Label, "0") && strings.Contains(tk.Label, ".") || strings.ContainsAny(tk.Label, "e+") || tk.Label == "-0" {
				t.Errorf("range %v: label %q is not plain", r, tk.Label)
			}
		}
		if labelled < 3 {
			t.Errorf("range %v: %d labelled ticks", r, labelled)
		}
	}
	var labels []string
	for _, tk := range ratioTicks(0.5, 20) {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "0.5 1 2 5 10 20" {
		t.Errorf("log axis from 0.5 to 20 labelled %q", got)
	}
}

// The chart of a recorded run has the batching-vs-kernel panel (the
// answer's savings), and the reference is visible: a line in every panel
// and a mark at 1 where its ratio bar would have no height.
func TestChartPanels(t *testing.T) {
	res, err := benchreport.Load("../benchreport/testdata/results-6rounds.json")
	if err != nil {
		t.Fatal(err)
	}
	benchreport.Analyze(res)
	plots, err := build(res)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, p := range plots {
		titles = append(titles, p[0].Title.Text)
	}
	all := strings.Join(titles, "\n")
	if len(plots) != len(panels) || !strings.Contains(all, "what batching and the kernel save") || !strings.Contains(all, "log scale") {
		t.Errorf("panels:\n%s", all)
	}
	svg, _, err := Render(res)
	if err != nil {
		t.Fatal(err)
	}
	ref := res.Config.Reference
	for _, want := range []string{"reference " + ref + " = 1", "reference: " + ref, "batching vs sector", "kernel vs generic", "% saved"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if n := strings.Count(string(svg), "reference: "+ref); n != 3 {
		t.Errorf("the reference's line is in %d of the 3 panels of values", n)
	}
}
