package tests

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchEndToEnd runs a short "xlogfs bench" as a user would — every
// checksum mode with the fastest kernel and the generic one, on the ram
// device, one round each — and checks what it leaves behind: results.json
// with a run per target whose counters match its mode, raw values and a
// comparison with the reference per metric, a CPU profile per run that
// pprof-share reads, bench.txt, the chart as SVG and PNG; that "bench
// report" reads it back; and that neither a FUSE mount nor the bench's
// tmpfs is left.
func TestBenchEndToEnd(t *testing.T) {
	requireFUSE(t)
	out := filepath.Join(t.TempDir(), "bench")
	cmd := exec.Command(xlogfsBin, "bench", "--time", "2s", "--rounds", "1", "--modes", "batched,xfs,sector,inline", "--impls", "best,generic",
		"--device", "ram", "--journal", "data", "--seed", "12345", "--out", out, "--json", "--no-progress")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("xlogfs bench: %v\n%s", err, stderr.String())
	}
	var res struct {
		Config struct {
			Seed      uint64 `json:"seed"`
			Reference string `json:"reference"`
		} `json:"config"`
		Targets []struct {
			Name, Mode, Impl string
		} `json:"targets"`
		Runs []struct {
			Target string             `json:"target"`
			Round  int                `json:"round"`
			Order  int                `json:"order"`
			Values map[string]float64 `json:"values"`
			Stats  map[string]float64 `json:"stats"`
			Hists  map[string][]struct {
				Lo, Hi, Count uint64
			} `json:"histograms"`
			Profile string `json:"profile"`
			Samples int64  `json:"profile_samples"`
		} `json:"runs"`
		Comparisons []struct {
			Metric, Target, Reference string
			Ratio                     float64
			CILow                     *float64 `json:"ci_low"`
			Significant               bool
		} `json:"comparisons"`
		Verdict []string `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, stdout.String())
	}
	onDisk, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(onDisk)) != strings.TrimSpace(stdout.String()) {
		t.Error("results.json differs from what --json printed")
	}
	if res.Config.Seed != 12345 || len(res.Targets) != 8 || len(res.Runs) != 8 {
		t.Fatalf("seed %d, %d targets, %d runs; want seed 12345 and 8 targets (4 modes × 2 kernels) run once", res.Config.Seed, len(res.Targets), len(res.Runs))
	}
	orders := map[int]bool{}
	for _, r := range res.Runs {
		orders[r.Order] = true
		mode, impl, _ := strings.Cut(r.Target, "/")
		st := r.Stats
		if r.Values["throughput"] <= 0 || r.Values["fsync_p99"] <= 0 || st["fsyncs"] == 0 || st["log_syncs"] == 0 || st["cksum_bytes"] == 0 {
			t.Errorf("%s: no work measured: values %v, stats %v", r.Target, r.Values, st)
		}
		// The .stats histograms are kept with numeric bounds, in order, and
		// a record's header blocks apart from its payload.
		if h := r.Hists["fsync_us_hist"]; len(h) == 0 || len(r.Hists["cksum_record_ns_hist"]) == 0 {
			t.Errorf("%s: histograms %v, want the fsync and checksum ones", r.Target, r.Hists)
		} else {
			for i := 1; i < len(h); i++ {
				if h[i].Lo < h[i-1].Hi {
					t.Errorf("%s: fsync buckets [%d,%d) then [%d,%d), out of order", r.Target, h[i-1].Lo, h[i-1].Hi, h[i].Lo, h[i].Hi)
				}
			}
		}
		if st["log_header_bytes"] != st["log_records"]*4096 || st["log_payload_bytes"] == 0 || st["log_payload_bytes"] > st["log_bytes"]-st["log_header_bytes"] {
			t.Errorf("%s: %v records, header bytes %v (want 4 KiB each: 256 KiB iclogs), payload %v of %v", r.Target, st["log_records"], st["log_header_bytes"], st["log_payload_bytes"], st["log_bytes"])
		}
		// Each mount was made with the mode the run says: the crc32c calls
		// per record tell them apart (8 header blocks for 256 KiB iclogs).
		perRecord := st["cksum_calls"] / st["cksum_records"]
		switch mode {
		case "batched":
			if perRecord != 1 {
				t.Errorf("%s: %.2f crc calls per record, want 1", r.Target, perRecord)
			}
		case "xfs":
			if perRecord != 9 {
				t.Errorf("%s: %.2f crc calls per record, want 9 (header, 7 extension headers, payload)", r.Target, perRecord)
			}
		case "sector":
			if want := st["cksum_bytes"] / st["cksum_records"] / 512; perRecord != want {
				t.Errorf("%s: %.2f crc calls per record, want one per 512-byte block (%.2f)", r.Target, perRecord, want)
			}
		case "inline":
			// At seal the header blocks and the padding; the payload was
			// checksummed as it was copied in, off the force path.
			if seal := st["cksum_seal_calls"] / st["cksum_records"]; seal < 1 || seal > 2 || st["cksum_copy_calls"] == 0 || st["cksum_copy_ns"] == 0 {
				t.Errorf("%s: %.2f crc calls per record at seal (want 1-2: the header blocks and the padding); at copy %v calls, %v ns",
					r.Target, seal, st["cksum_copy_calls"], st["cksum_copy_ns"])
			}
			if st["cksum_ns"] != st["cksum_seal_ns"]+st["cksum_copy_ns"] || st["cksum_bytes"] != st["cksum_seal_bytes"]+st["cksum_copy_bytes"] {
				t.Errorf("%s: checksum totals are not seal + copy: %v", r.Target, st)
			}
		}
		if mode != "inline" && st["cksum_copy_calls"] != 0 {
			t.Errorf("%s: %v crc calls at copy time outside inline mode", r.Target, st["cksum_copy_calls"])
		}
		if impl == "generic" && st["cksum_ns"] == 0 {
			t.Errorf("%s: no checksum time counted", r.Target)
		}
		for _, m := range []string{"cksum_cpu", "cksum_cpu_profile", "force_cksum_share"} {
			// A fast kernel's share (under 1 %) may well get no sample in
			// a 2 s profile; the generic kernel's (about 20 %) must.
			v, ok := r.Values[m]
			if !ok || v < 0 || v >= 1 || v == 0 && (m != "cksum_cpu_profile" || impl == "generic") {
				t.Errorf("%s: %s = %v, want a fraction", r.Target, m, v)
			}
		}
		if r.Values["cksum_force_ns"] <= 0 || st["forces_timed"] == 0 {
			t.Errorf("%s: checksum on the force path %v ns per force, %v forces timed", r.Target, r.Values["cksum_force_ns"], st["forces_timed"])
		}
		if r.Values["cksum_rec_p99_ns"] < r.Values["cksum_rec_p50_ns"] || r.Values["cksum_ns_per_kib"] <= 0 {
			t.Errorf("%s: checksum ns per record p50 %v p99 %v, per KiB %v", r.Target, r.Values["cksum_rec_p50_ns"], r.Values["cksum_rec_p99_ns"], r.Values["cksum_ns_per_kib"])
		}
		if r.Profile == "" || r.Samples == 0 {
			t.Errorf("%s: no profile (%q, %d samples)", r.Target, r.Profile, r.Samples)
			continue
		}
		share, err := exec.Command(xlogfsBin, "pprof-share", filepath.Join(out, r.Profile)).CombinedOutput()
		if err != nil {
			t.Errorf("%s: pprof-share of %s: %v\n%s", r.Target, r.Profile, err, share)
		}
	}
	if len(orders) != 8 {
		t.Errorf("orders within the round: %v, want 1..8", orders)
	}
	// One round: a ratio for every target but no interval (JSON null), and
	// so nothing significant.
	found, forcePath := false, false
	for _, c := range res.Comparisons {
		if c.Reference != res.Config.Reference || c.CILow != nil || c.Significant || math.IsNaN(c.Ratio) {
			t.Errorf("comparison %+v after one round: want the reference, a null interval, not significant", c)
		}
		if c.Metric == "cksum_cpu" && strings.HasPrefix(c.Target, "sector/") && c.Target != "sector/generic" {
			found = true
		}
		if c.Metric == "cksum_force_ns" && strings.HasPrefix(c.Target, "inline/") && c.Target != "inline/generic" {
			forcePath = true
		}
	}
	if !found || !forcePath {
		t.Errorf("no cksum_cpu comparison of sector (%v) or no cksum_force_ns comparison of inline (%v) with the fastest kernel against %s", found, forcePath, res.Config.Reference)
	}
	if len(res.Verdict) == 0 {
		t.Error("no verdict")
	}
	for _, f := range []string{"chart.svg", "chart.png", "bench.txt"} {
		if b, err := os.ReadFile(filepath.Join(out, f)); err != nil || len(b) == 0 {
			t.Errorf("%s missing: %v", f, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "bench.txt")); !strings.Contains(string(b), "BenchmarkXlogfs/mode=sector/impl=generic/kernel=generic") {
		t.Errorf("bench.txt has no line for sector/generic:\n%s", b)
	}
	if table := stderr.String(); !strings.Contains(table, "cksum % CPU") || !strings.Contains(table, "verdict:") || !strings.Contains(table, "seed 12345") {
		t.Errorf("no report on stderr with --json:\n%s", table)
	}
	rep, err := exec.Command(xlogfsBin, "bench", "report", "--no-chart", out).CombinedOutput()
	if err != nil || !strings.Contains(string(rep), "verdict:") || !strings.Contains(string(rep), "sector/generic") {
		t.Errorf("bench report %s: %v\n%s", out, err, rep)
	}
	mounts, _ := os.ReadFile("/proc/mounts")
	if strings.Contains(string(mounts), out) {
		t.Errorf("the bench left a mount under %s:\n%s", out, mounts)
	}
	if _, err := os.Stat(filepath.Join(out, "ram")); err == nil {
		t.Error("the bench left its tmpfs folder behind")
	}
}
