package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchEndToEnd runs "xlogfs bench --time 3s --rounds 1" as a user
// would — every checksum mode mounted, driven, profiled and unmounted — and
// checks what it leaves behind: results.json with a row per mode whose
// counters match the mode, a CPU profile per run that pprof-share reads,
// and an SVG chart; and that no mount is left.
func TestBenchEndToEnd(t *testing.T) {
	requireFUSE(t)
	out := filepath.Join(t.TempDir(), "bench")
	cmd := exec.Command(xlogfsBin, "bench", "--time", "3s", "--rounds", "1", "--out", out, "--json", "--no-progress")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("xlogfs bench: %v\n%s", err, stderr.String())
	}
	var res struct {
		Runs []struct {
			Target        string             `json:"target"`
			MBps          float64            `json:"mb_per_s"`
			FsyncP99us    float64            `json:"fsync_p99_us"`
			Stats         map[string]float64 `json:"stats"`
			Profile       string             `json:"profile"`
			ShareCounters float64            `json:"checksum_share_counters"`
		} `json:"runs"`
		Summary []struct {
			Target string `json:"target"`
		} `json:"summary"`
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
	if len(res.Runs) != 4 || len(res.Summary) != 4 {
		t.Fatalf("%d runs and %d summary rows, want one per mode (4)", len(res.Runs), len(res.Summary))
	}
	for _, r := range res.Runs {
		st := r.Stats
		if r.MBps <= 0 || r.FsyncP99us <= 0 || st["fsyncs"] == 0 || st["log_forces"] == 0 || st["cksum_bytes"] == 0 {
			t.Errorf("%s: no work measured: %.2f MB/s, fsync p99 %.0f µs, stats %v", r.Target, r.MBps, r.FsyncP99us, st)
		}
		// Each mount was made with the mode the run says: the crc32c calls
		// per record tell them apart (8 header blocks for 256 KiB iclogs).
		perRecord := st["cksum_calls"] / st["cksum_records"]
		switch r.Target {
		case "batched":
			if perRecord != 1 {
				t.Errorf("batched: %.2f crc calls per record, want 1", perRecord)
			}
		case "xfs":
			if perRecord != 9 {
				t.Errorf("xfs: %.2f crc calls per record, want 9 (header, 7 extension headers, payload)", perRecord)
			}
		case "sector":
			if want := st["cksum_bytes"] / st["cksum_records"] / 512; perRecord != want {
				t.Errorf("sector: %.2f crc calls per record, want one per 512-byte block (%.2f)", perRecord, want)
			}
		case "inline":
			if seal := st["cksum_seal_calls"] / st["cksum_records"]; seal < 1 || seal > 2 || st["cksum_copy_calls"] == 0 {
				t.Errorf("inline: %.2f crc calls per record at seal (want 1-2: the header blocks and the padding), %v at copy", seal, st["cksum_copy_calls"])
			}
		}
		if st["cksum_seal_ns_per_force"] <= 0 {
			t.Errorf("%s: cksum_seal_ns_per_force %v", r.Target, st["cksum_seal_ns_per_force"])
		}
		if r.ShareCounters <= 0 || r.ShareCounters >= 1 {
			t.Errorf("%s: checksum share from the counters %v, want a fraction of the daemon's CPU", r.Target, r.ShareCounters)
		}
		if r.Profile == "" {
			t.Errorf("%s: no profile", r.Target)
			continue
		}
		share, err := exec.Command(xlogfsBin, "pprof-share", filepath.Join(out, r.Profile)).CombinedOutput()
		if err != nil {
			t.Errorf("%s: pprof-share of %s: %v\n%s", r.Target, r.Profile, err, share)
		}
	}
	svg, err := os.ReadFile(filepath.Join(out, "chart.svg"))
	if err != nil || !strings.HasPrefix(string(svg), "<svg") || !strings.Contains(string(svg), "batched") {
		t.Errorf("chart.svg missing or not an SVG chart: %v", err)
	}
	if table := stderr.String(); !strings.Contains(table, "cksum % CPU") || !strings.Contains(table, "sector") {
		t.Errorf("no table on stderr with --json:\n%s", table)
	}
	if isMounted(filepath.Join(out, "work")) {
		t.Error("the bench left a mount behind")
	}
	if b, _ := os.ReadFile("/proc/mounts"); strings.Contains(string(b), out) {
		t.Errorf("the bench left a mount under %s", out)
	}
}
