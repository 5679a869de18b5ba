package tests

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchFlushLatencyReach runs a short bench on an emulated device
// (--flush-latency on ram) with the loopback and native baselines and
// checks what it says of each: xlogfs's emulated flushes per fsync and
// its syncs per fsync by kind; the loopback's own emulated flush, one per
// fsync it served; native on dm-delay's device where the kernel has it,
// else its flushes "not measured" with the reason, never a number; and the
// report's sync table and the targets --flush-latency reached.
func TestBenchFlushLatencyReach(t *testing.T) {
	requireFUSE(t)
	out := filepath.Join(t.TempDir(), "bench")
	cmd := exec.Command(xlogfsBin, "bench", "--time", "1s", "--rounds", "1", "--modes", "batched", "--impls", "best",
		"--baseline", "loopback,native", "--flush-latency", "1ms", "--device", "ram", "--out", out, "--json", "--no-progress")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("xlogfs bench: %v\n%s", err, stderr.String())
	}
	var res struct {
		FlushReach []struct {
			Target  string `json:"target"`
			Reached bool   `json:"reached"`
			How     string `json:"how"`
			Why     string `json:"why"`
		} `json:"flush_reach"`
		FlushProbe string `json:"flush_probe"`
		Runs       []struct {
			Target     string             `json:"target"`
			Values     map[string]float64 `json:"values"`
			Stats      map[string]float64 `json:"stats"`
			Unmeasured map[string]string  `json:"unmeasured"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, stdout.String())
	}
	reach := map[string]bool{}
	for _, f := range res.FlushReach {
		reach[f.Target] = f.Reached
		if f.Reached == (f.How == "") || !f.Reached && f.Why == "" {
			t.Errorf("flush reach %+v: want how it reached, or why not", f)
		}
	}
	xl := ""
	for _, f := range res.FlushReach {
		if strings.HasPrefix(f.Target, "batched/") {
			xl = f.Target
		}
	}
	if len(reach) != 3 || xl == "" || !reach[xl] || !reach["loopback"] {
		t.Errorf("flush reach %+v: want every target, xlogfs's and the loopback reached", res.FlushReach)
	}
	if !strings.Contains(res.FlushProbe, "dm-delay:") || !strings.Contains(res.FlushProbe, "nbd:") || !strings.Contains(res.FlushProbe, "ublk:") {
		t.Errorf("flush probe %q: want what it found of dm-delay, nbd and ublk", res.FlushProbe)
	}
	const m = "emulated_flushes_per_fsync"
	for _, r := range res.Runs {
		v, ok := r.Values[m]
		switch {
		case strings.HasPrefix(r.Target, "batched/"):
			// Every log flush and data-file sync is an emulated flush
			// (the data directory's may be too): at least as many per
			// fsync as the log's and data files' syncs, at most as many
			// as those and the directory's.
			if !ok || v <= 0 || r.Stats["flushes_emulated"] == 0 {
				t.Errorf("%s: %s = %v (%v), stats flushes_emulated %v", r.Target, m, v, ok, r.Stats["flushes_emulated"])
			}
			logData := r.Values["log_syncs_per_fsync"] + r.Values["data_syncs_per_fsync"]
			if _, ok := r.Values["log_syncs_per_fsync"]; !ok || v < logData*(1-1e-9) || v > (logData+r.Values["dir_syncs_per_fsync"])*(1+1e-9) {
				t.Errorf("%s: emulated flushes per fsync %v; log %v, data %v, directory %v syncs per fsync", r.Target, v,
					r.Values["log_syncs_per_fsync"], r.Values["data_syncs_per_fsync"], r.Values["dir_syncs_per_fsync"])
			}
		case r.Target == "loopback":
			if served := r.Stats["fuse_FSYNC"] + r.Stats["fuse_FSYNCDIR"]; !ok || v != 1 || served == 0 || r.Stats["flushes_emulated"] != served {
				t.Errorf("loopback: %s = %v (%v), %v emulated flushes for %v FSYNC+FSYNCDIR: want one per fsync served",
					m, v, ok, r.Stats["flushes_emulated"], served)
			}
		case r.Target == "native":
			if reach["native"] {
				if !ok || v <= 0 {
					t.Errorf("native on dm-delay: %s = %v (%v)", m, v, ok)
				}
			} else if ok || !strings.Contains(r.Unmeasured[m], "--flush-latency does not reach native") {
				t.Errorf("native not reached: %s = %v (%v), unmeasured %q; want no value, and why", m, v, ok, r.Unmeasured[m])
			}
		}
	}
	report := stderr.String()
	for _, want := range []string{"pt / log / dmn", "--flush-latency 1ms:", "reaches loopback: loopback-mount --flush-latency"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}
