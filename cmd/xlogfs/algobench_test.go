package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAlgoBenchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"algo-bench", "--trials", "0"},
		{"algo-bench", "--algos", "md5"},
		{"algo-bench", "--sections", "bogus"},
		{"algo-bench", "extra-arg"},
	} {
		if code, _, errs := runCapture(t, args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errs)
		}
	}
}

// A small run of every section gives, for every algorithm, what the issue
// asks results.json to hold, and keeps the report and the chart.
func TestAlgoBenchJSON(t *testing.T) {
	out := t.TempDir()
	code, stdout, errs := runCapture(t, "algo-bench", "--json", "--trials", "300", "--out", out,
		"--speed-time", "200ms", "--speed-rounds", "1", "--scan-size", "4MiB", "--scan-dir", out, "--scan-rounds", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Algorithms []struct {
			Name  string `json:"name"`
			Speed []struct {
				Bytes int     `json:"bytes"`
				GBps  float64 `json:"gbps"`
				NA    bool    `json:"na"`
			} `json:"speed"`
			Detection []struct {
				Model   string   `json:"model"`
				Trials  *int64   `json:"trials"`
				Missed  *int64   `json:"missed"`
				Upper95 *float64 `json:"upper95"`
			} `json:"detection"`
			ScanSlowdown *float64 `json:"scan_slowdown"`
		} `json:"algorithms"`
		Summary []string `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("bad JSON: %v\n%.500s", err, stdout)
	}
	if len(res.Algorithms) != 10 || len(res.Summary) == 0 {
		t.Fatalf("%d algorithms, %d summary lines", len(res.Algorithms), len(res.Summary))
	}
	for _, a := range res.Algorithms {
		if len(a.Speed) != 4 {
			t.Errorf("%s: %d speed sizes, want 4", a.Name, len(a.Speed))
		}
		for _, s := range a.Speed {
			if !s.NA && s.GBps <= 0 {
				t.Errorf("%s at %d: %v GB/s", a.Name, s.Bytes, s.GBps)
			}
		}
		models := map[string]bool{}
		for _, d := range a.Detection {
			if d.Trials == nil || d.Missed == nil || d.Upper95 == nil || *d.Trials == 0 {
				t.Errorf("%s %s: trials/missed/upper95 missing", a.Name, d.Model)
				break
			}
			models[d.Model] = true
		}
		if len(models) != 11 {
			t.Errorf("%s: %d damage models, want 11", a.Name, len(models))
		}
		if a.ScanSlowdown == nil {
			t.Errorf("%s: no scan_slowdown", a.Name)
		}
	}
	for _, f := range []string{"results.json", "report.txt", "chart.svg"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %v (%d bytes)", f, err, len(b))
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 3 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("--out holds %s; the scan file should be gone", strings.Join(names, ", "))
	}
}
