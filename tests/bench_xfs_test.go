package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchXFSBaseline runs a short bench with the kernel XFS baseline
// beside one xlogfs target, as a user would, and checks what it measured:
// the kernel's log counters over the workload, its fsyncs and checksum CPU
// where perf can (else "not measured" and why), the log table, and that
// the image is gone afterwards: no mount, no loop device. Where kernel XFS
// cannot run here (not root, no XFS, no mkfs.xfs, no loop device), the
// bench must refuse, saying why; that is all this test can check then.
func TestBenchXFSBaseline(t *testing.T) {
	requireFUSE(t)
	out := filepath.Join(t.TempDir(), "bench")
	cmd := exec.Command(xlogfsBin, "bench", "--time", "2s", "--rounds", "1", "--modes", "batched", "--impls", "best",
		"--workload", "builtin", "--baseline", "xfs", "--device", "ram", "--out", out, "--json", "--no-progress")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, why, refused := strings.Cut(stderr.String(), "--baseline xfs: kernel XFS cannot run here: "); refused {
		if err == nil || strings.TrimSpace(why) == "" {
			t.Fatalf("the bench said kernel XFS cannot run here, yet: %v\n%s", err, stderr.String())
		}
		t.Logf("kernel XFS cannot run here: %s", why)
		return
	}
	if err != nil {
		t.Fatalf("xlogfs bench: %v\n%s", err, stderr.String())
	}
	type run struct {
		Target     string             `json:"target"`
		Ops        int64              `json:"ops"`
		Values     map[string]float64 `json:"values"`
		Fsyncs     int64              `json:"fsyncs"`
		FsyncCount string             `json:"fsync_count"`
		Unmeasured map[string]string  `json:"unmeasured"`
		XFS        *struct {
			LoopDirectIO bool                `json:"loop_direct_io"`
			LogBSize     int                 `json:"logbsize"`
			LogBufs      int                 `json:"logbufs"`
			Stat         map[string][]uint64 `json:"stat_delta"`
			Counters     map[string]uint64   `json:"counters"`
			FsyncEvents  map[string]uint64   `json:"fsync_events"`
			OtherMounts  []string            `json:"other_xfs_mounts"`
			Perf         *struct {
				Samples, Busy, Cksum int64
			} `json:"perf"`
		} `json:"xfs"`
	}
	var res struct {
		Runs []run `json:"runs"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
		t.Fatalf("--json output is not JSON: %v", err)
	}
	var x, xl *run
	for i := range res.Runs {
		switch r := &res.Runs[i]; r.Target {
		case "xfs":
			x = r
		default:
			xl = r
		}
	}
	if x == nil || xl == nil || x.XFS == nil {
		t.Fatalf("runs %+v: want an xfs run with its record and an xlogfs run", res.Runs)
	}
	// The stores' geometry: a 64 MiB log of 8 256 KiB iclogs.
	if x.XFS.LogBSize != 256<<10 || x.XFS.LogBufs != 8 || x.XFS.LoopDirectIO {
		t.Errorf("xfs made with logbsize %d, logbufs %d, direct I/O %v; want 256k, 8, off on ram", x.XFS.LogBSize, x.XFS.LogBufs, x.XFS.LoopDirectIO)
	}
	log := x.XFS.Stat["log"]
	if len(log) != 5 || log[0] == 0 || log[1] < 8*log[0] || x.XFS.Counters["log_writes"] != log[0] {
		t.Errorf("xfs log counters %v (named %v): want writes of at least 8 header blocks each", log, x.XFS.Counters)
	}
	for _, r := range []*run{x, xl} {
		for _, m := range []string{"log_writes", "log_blocks_per_write", "log_payload_blocks_per_write", "fsyncs", "log_blocks_per_fsync", "cksum_bytes_per_fsync"} {
			if r.Values[m] <= 0 {
				t.Errorf("%s: %s = %v, want it measured", r.Target, m, r.Values[m])
			}
		}
	}
	if xl.Values["cksum_cpu_per_fsync"] <= 0 || xl.FsyncCount != "filesystem" {
		t.Errorf("xlogfs: checksum CPU per fsync %v, fsyncs counted by %q", xl.Values["cksum_cpu_per_fsync"], xl.FsyncCount)
	}
	_, perfWhy, noPerf := strings.Cut(stderr.String(), "xfs: checksum CPU: not measured (")
	perfWhy, _, _ = strings.Cut(perfWhy, ")\n")
	if !noPerf {
		// The builtin makes one fsync per write, and counts them: XFS's
		// tracepoints count the same, where no other XFS is at work.
		if x.FsyncCount != "filesystem" || x.XFS.FsyncEvents == nil || len(x.XFS.OtherMounts) == 0 && x.Fsyncs != x.Ops {
			t.Errorf("xfs fsyncs %d counted by %q (%v), the workload's %d", x.Fsyncs, x.FsyncCount, x.XFS.FsyncEvents, x.Ops)
		}
		if p := x.XFS.Perf; p == nil || p.Samples == 0 || p.Busy == 0 {
			t.Errorf("xfs perf profile %+v: want samples", p)
		}
		if _, ok := x.Values["cksum_cpu_per_fsync"]; !ok {
			t.Errorf("xfs: checksum CPU per fsync not measured with perf here: %v", x.Unmeasured)
		}
	} else if why := x.Unmeasured["cksum_cpu_per_fsync"]; why == "" || !strings.HasPrefix(perfWhy, why) {
		t.Errorf("no perf (%s): xfs checksum CPU unmeasured for %q, report:\n%s", perfWhy, why, stderr.String())
	}
	if !strings.Contains(stderr.String(), "the log: writes, blocks and checksum per fsync") {
		t.Errorf("no log table:\n%s", stderr.String())
	}
	mounts, _ := os.ReadFile("/proc/mounts")
	if strings.Contains(string(mounts), out) {
		t.Errorf("the bench left a mount under %s:\n%s", out, mounts)
	}
	backing, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, b := range backing {
		if f, _ := os.ReadFile(b); strings.HasPrefix(string(f), out) {
			t.Errorf("the bench left a loop device on %s", f)
		}
	}
}
