package benchrun

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/xfsbase"
)

// machine is a fake machine where the kernel XFS baseline has everything;
// each case below takes one piece away.
func machine() xfsbase.Env {
	return xfsbase.Env{
		Euid:     func() int { return 0 },
		LookPath: func(n string) (string, error) { return "/usr/sbin/" + n, nil },
		ReadFile: func(p string) ([]byte, error) {
			if p == "/proc/filesystems" {
				return []byte("nodev\ttmpfs\n\txfs\n"), nil
			}
			return nil, os.ErrNotExist
		},
		Exists:    func(p string) bool { return p == "/dev/loop-control" },
		Release:   func() string { return "6.1.0" },
		PerfTrial: func(string) error { return nil },
	}
}

// The bench's messages when a piece is missing: no XFS at all stops it
// with why; no perf lets the baseline run and says its checksum CPU is not
// measured, and why.
func TestXFSPrereqsMessages(t *testing.T) {
	if _, ws, err := XFSPrereqs(machine()); err != nil || len(ws) != 0 {
		t.Fatalf("everything there: %v, warnings %q", err, ws)
	}
	for _, c := range []struct {
		name    string
		change  func(*xfsbase.Env)
		err     string
		warning string
	}{
		{"not root", func(e *xfsbase.Env) { e.Euid = func() int { return 1000 } },
			"--baseline xfs: kernel XFS cannot run here: not root", ""},
		{"no loop device", func(e *xfsbase.Env) { e.Exists = func(string) bool { return false } },
			"--baseline xfs: kernel XFS cannot run here: no loop device", ""},
		{"no XFS", func(e *xfsbase.Env) {
			e.ReadFile = func(string) ([]byte, error) { return []byte("nodev\ttmpfs\n"), nil }
		}, "--baseline xfs: kernel XFS cannot run here: the kernel has no XFS", ""},
		{"no mkfs.xfs", func(e *xfsbase.Env) {
			e.LookPath = func(n string) (string, error) {
				if n == "mkfs.xfs" {
					return "", errors.New("not found")
				}
				return "/usr/sbin/" + n, nil
			}
		}, "mkfs.xfs not found: install it with apt-get install xfsprogs", ""},
		{"no perf", func(e *xfsbase.Env) {
			e.LookPath = func(n string) (string, error) {
				if n == "perf" {
					return "", errors.New("not found")
				}
				return "/usr/sbin/" + n, nil
			}
		}, "", "xfs: checksum CPU: not measured (perf not found: install it with apt-get install linux-perf"},
		{"perf refused", func(e *xfsbase.Env) {
			e.PerfTrial = func(string) error { return errors.New("cpu-clock: no such event in this VM") }
		}, "", "xfs: checksum CPU: not measured (perf cannot profile the whole machine: cpu-clock: no such event in this VM)"},
	} {
		env := machine()
		c.change(&env)
		_, ws, err := XFSPrereqs(env)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s: error %v, want the baseline to run", c.name, err)
		case c.warning != "" && (len(ws) != 1 || !strings.Contains(ws[0], c.warning)):
			t.Errorf("%s: warnings %q, want one saying %q", c.name, ws, c.warning)
		}
	}
}

// The baseline's values from its counters: per write and per fsync, the
// payload as the blocks less 8 header blocks (256k buffers), the checksum
// bytes as xlog_cksum covers them, and the checksum CPU from the profile's
// xlog_cksum samples; without a profile, its checksum values are not
// measured, for perf's reason, and absent, never zero.
func TestXFSValues(t *testing.T) {
	prof := &xfsbase.Profile{Busy: 4000, BusyNs: 4e9, Cksum: 3, CksumNs: 3e6}
	v, un := map[string]float64{}, map[string]string{}
	xfsValues(v, un, 1000, 1000*(8+6), 256<<10, 2000, "", prof, "")
	want := map[string]float64{
		"log_writes": 1000, "log_blocks": 14000, "log_blocks_per_write": 14, "log_payload_blocks_per_write": 6,
		"log_meta_payload_blocks_per_write": 6, "log_meta_blocks_per_fsync": 7,
		"fsyncs": 2000, "log_blocks_per_fsync": 7, "cksum_bytes_per_fsync": (1000*328 + 1000*6*512) / 2000.0,
		"cksum_cpu_per_fsync": 3e6 / 2000, "cksum_busy_share": 3e6 / 4e9,
	}
	if fmt.Sprint(v) != fmt.Sprint(want) || len(un) != 0 {
		t.Errorf("values %v, unmeasured %v; want %v and none", v, un, want)
	}

	v, un = map[string]float64{}, map[string]string{}
	xfsValues(v, un, 1000, 14000, 256<<10, 2000, "", nil, "perf not found: install it with apt-get install linux-perf")
	for _, m := range []string{"cksum_cpu_per_fsync", "cksum_busy_share"} {
		if x, ok := v[m]; ok {
			t.Errorf("without perf %s = %v: want it absent", m, x)
		}
		if !strings.Contains(un[m], "perf not found") {
			t.Errorf("without perf %s unmeasured %q, want perf's reason", m, un[m])
		}
	}
	if v["log_blocks_per_fsync"] != 7 {
		t.Errorf("without perf the counters' values still stand: %v", v)
	}

	// The workload did not count its fsyncs (mariadb): nothing per fsync.
	v, un = map[string]float64{}, map[string]string{}
	xfsValues(v, un, 1000, 14000, 256<<10, math.NaN(), "sysbench counts no fsyncs", prof, "")
	for _, m := range []string{"fsyncs", "log_blocks_per_fsync", "cksum_bytes_per_fsync", "cksum_cpu_per_fsync"} {
		if x, ok := v[m]; ok {
			t.Errorf("uncounted fsyncs: %s = %v, want it absent", m, x)
		}
	}
	if un["log_blocks_per_fsync"] != "sysbench counts no fsyncs" || v["cksum_busy_share"] == 0 {
		t.Errorf("uncounted fsyncs: unmeasured %v, values %v", un, v)
	}
	// No fsync at all (pwrite), no log write.
	v, un = map[string]float64{}, map[string]string{}
	xfsValues(v, un, 0, 0, 32<<10, 0, "", prof, "")
	if un["log_blocks_per_fsync"] != "the workload made no fsync" || un["log_payload_blocks_per_write"] != "no log writes during the workload" {
		t.Errorf("no fsync, no write: unmeasured %v", un)
	}
}

// xlogfs's values from its .stats: the same metrics, the checksum's bytes
// and CPU its own counters, its share over the machine's busy CPU; the
// metadata figures leave out the file bytes logged with their writes.
func TestLogValues(t *testing.T) {
	before := map[string]float64{"log_records": 10, "log_bytes": 10 * 9 * 512, "log_header_bytes": 10 * 8 * 512,
		"cksum_bytes": 1000, "cksum_ns": 5000, "log_file_data_bytes": 512}
	after := map[string]float64{"log_records": 110, "log_bytes": (10*9 + 100*20) * 512, "log_header_bytes": 110 * 8 * 512,
		"cksum_bytes": 1000 + 400000, "cksum_ns": 5000 + 2e6, "log_file_data_bytes": 512 + 100*4*512}
	v, un := map[string]float64{}, map[string]string{}
	logValues(v, un, before, after, 400, "", 2, "")
	want := map[string]float64{"log_writes": 100, "log_blocks": 2000, "log_blocks_per_write": 20, "log_payload_blocks_per_write": 12,
		"log_meta_payload_blocks_per_write": 8, "log_meta_blocks_per_fsync": 4,
		"fsyncs": 400, "log_blocks_per_fsync": 5, "cksum_bytes_per_fsync": 1000, "cksum_cpu_per_fsync": 5000, "cksum_busy_share": 1e-3}
	if fmt.Sprint(v) != fmt.Sprint(want) || len(un) != 0 {
		t.Errorf("values %v, unmeasured %v; want %v", v, un, want)
	}
	v, un = map[string]float64{}, map[string]string{}
	logValues(v, un, before, after, 400, "", math.NaN(), "the machine's busy CPU: /proc/stat: no such file")
	if _, ok := v["cksum_busy_share"]; ok || !strings.Contains(un["cksum_busy_share"], "/proc/stat") {
		t.Errorf("no /proc/stat: share %v, unmeasured %q", v["cksum_busy_share"], un["cksum_busy_share"])
	}
}

// A /proc/stat recorded on this machine: busy is user + nice + system +
// irq + softirq (257512 + 0 + 163350 + 0 + 1241 ticks of 10 ms).
func TestParseProcStat(t *testing.T) {
	b, err := os.ReadFile("testdata/proc-stat.txt")
	if err != nil {
		t.Fatal(err)
	}
	busy, err := parseProcStat(b)
	if err != nil || math.Abs(busy-4221.03) > 1e-9 {
		t.Errorf("busy %v s, %v; want 4221.03", busy, err)
	}
	if _, err := parseProcStat([]byte("intr 1 2 3\n")); err == nil {
		t.Error("no cpu line: no error")
	}
}

// The stores' log geometry: mkfs's default log (64 MiB), the largest iclog
// that suits it (256k) and mount's default count (8), or --logbsize and
// --logbufs from --mount-flags.
func TestXlogfsGeometry(t *testing.T) {
	g, err := XlogfsGeometry(nil)
	if err != nil || g != (Geometry{LogBytes: 64 << 20, LogBSize: 256 << 10, LogBufs: 8}) {
		t.Errorf("default geometry %v, %v", g, err)
	}
	g, err = XlogfsGeometry([]string{"--direct-io", "--logbsize", "64k", "--logbufs=4", "--attr-timeout", "5s"})
	if err != nil || g != (Geometry{LogBytes: 64 << 20, LogBSize: 64 << 10, LogBufs: 4}) {
		t.Errorf("--logbsize 64k --logbufs=4: %v, %v", g, err)
	}
	for _, bad := range [][]string{{"--logbsize", "48k"}, {"--logbufs", "9"}, {"--logbsize"}} {
		if _, err := XlogfsGeometry(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	st := map[string]float64{"log_size": 64 << 20, "logbsize": 256 << 10, "logbufs": 8}
	if msg := checkGeometry(st, Geometry{LogBytes: 64 << 20, LogBSize: 256 << 10, LogBufs: 8}); msg != "" {
		t.Errorf("same geometry: %q", msg)
	}
	if msg := checkGeometry(st, Geometry{LogBytes: 64 << 20, LogBSize: 32 << 10, LogBufs: 8}); !strings.Contains(msg, "not at the same log geometry") {
		t.Errorf("different geometry: %q", msg)
	}
}

// The baseline's fsyncs: XFS's own count (its fsync tracepoints) first,
// the workload's where perf could not count them and the workload's count
// covers the run, and otherwise none, saying both whys.
func TestXFSFsyncs(t *testing.T) {
	counts := map[string]uint64{"xfs:xfs_file_fsync": 900, "xfs:xfs_dir_fsync": 3}
	if n, src, why := xfsFsyncs(counts, "", 800, ""); n != 903 || src != "filesystem" || why != "" {
		t.Errorf("counted: %v %q %q", n, src, why)
	}
	if n, src, _ := xfsFsyncs(nil, "perf not found", 800, ""); n != 800 || src != "workload" {
		t.Errorf("builtin without perf: %v %q", n, src)
	}
	n, src, why := xfsFsyncs(nil, "perf not found", math.NaN(), "dbench counts the fsyncs of its execute phase alone")
	if !math.IsNaN(n) || src != "" || !strings.Contains(why, "execute phase alone") || !strings.Contains(why, "perf not found") {
		t.Errorf("dbench without perf: %v %q %q", n, src, why)
	}
}

// A store whose CRC coverage is not the one --crc asked for is refused,
// never measured as if it were.
func TestCheckCoverage(t *testing.T) {
	for _, c := range []struct {
		got, want string
		ok        bool
	}{{"whole", "", true}, {"whole", "whole", true}, {"xfs", "xfs", true}, {"whole", "xfs", false}, {"xfs", "", false}} {
		if msg := checkCoverage(c.got, c.want); (msg == "") != c.ok {
			t.Errorf("checkCoverage(%q, %q) = %q, want ok %v", c.got, c.want, msg, c.ok)
		}
	}
}
