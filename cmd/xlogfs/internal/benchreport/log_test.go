package benchreport

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// withXFS is a bench of two xlogfs targets and the kernel XFS baseline,
// whose profile perf could not take: its checksum CPU is not measured.
func withXFS(rounds int, perfWhy string) *Results {
	res := &Results{
		Machine: Machine{CPU: "test CPU", CPUs: 2, CksumImpl: "avx512"},
		Config: Config{Modes: []string{"batched"}, Impls: []string{"best", "generic"}, Workload: "dbench", Journal: "meta",
			Device: "ram", Rounds: rounds, Seed: 1, Reference: "batched/avx512", Baselines: []string{"xfs"}, PerfRate: 1000},
		Targets: []Target{
			{Name: "batched/avx512", Kind: "xlogfs", Mode: "batched", Impl: "avx512", ImplSpec: "best"},
			{Name: "batched/generic+uring", Kind: "xlogfs", Mode: "batched", Impl: "generic", ImplSpec: "generic", Transport: "uring"},
			{Name: "xfs", Kind: "xfs"},
		},
	}
	for r := 1; r <= rounds; r++ {
		for _, t := range res.Targets[:2] {
			res.Runs = append(res.Runs, Run{Target: t.Name, Round: r, Fsyncs: 20000, FsyncCounts: "workload",
				Values: map[string]float64{"throughput": 100, "fsyncs": 20000, "log_writes": 5000, "log_blocks": 5000 * 20,
					"log_blocks_per_write": 20, "log_payload_blocks_per_write": 12, "log_blocks_per_fsync": 5,
					"cksum_bytes_per_fsync": 3000, "cksum_cpu_per_fsync": 1500, "cksum_busy_share": 0.004}})
		}
		x := Run{Target: "xfs", Round: r, Fsyncs: 20000, FsyncCounts: "workload",
			Values: map[string]float64{"throughput": 300, "fsyncs": 20000, "log_writes": 10000, "log_blocks": 10000 * 14,
				"log_blocks_per_write": 14, "log_payload_blocks_per_write": 6, "log_blocks_per_fsync": 7,
				"cksum_bytes_per_fsync": 1700},
			Unmeasured: map[string]string{"cksum_cpu_per_fsync": perfWhy, "cksum_busy_share": perfWhy},
			XFS: &XFSRun{Image: "/out/ram/xfs-1/xfs.img", LoopWhy: "the image is on tmpfs", LogBytes: 64 << 20, LogBSize: 256 << 10,
				LogBufs: 8, HeaderBlocks: 8, MkfsArgs: []string{"-f", "-q", "-K", "-m", "crc=1", "-l", "size=65536k,version=2", "/dev/loop0"},
				MountOptions: "logbsize=256k,logbufs=8", Counters: map[string]uint64{"log_writes": 10000, "log_force": 9000, "trans_async": 60000}},
		}
		res.Runs = append(res.Runs, x)
	}
	Analyze(res)
	return res
}

// A value a target could not measure prints as "not measured" with the
// reason, never as a number; the log table and its notes stay within 120
// columns.
func TestPrintLogNotMeasured(t *testing.T) {
	const why = "perf not found: install it with apt-get install linux-perf, or make bench-deps BENCH_ARGS=\"--baseline xfs\""
	res := withXFS(6, why)
	row, _ := find(res.Rows, func(r Row) bool { return r.Target == "xfs" })
	if row.Unmeasured["cksum_cpu_per_fsync"] != why {
		t.Fatalf("xfs row unmeasured %v", row.Unmeasured)
	}
	var b bytes.Buffer
	PrintLog(&b, res, true)
	out := b.String()
	var xfsLine string
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n >= 120 {
			t.Errorf("line of %d columns: %q", n, l)
		}
		if strings.HasPrefix(l, "xfs ") {
			xfsLine = l
		}
	}
	f := strings.Fields(xfsLine)
	// xfs fsyncs writes blocks blk/write pay/write blk/fsync ck-B/fsync, then
	// "not measured" twice.
	if len(f) != 12 || f[5] != "6.0" || f[7] != "≈1700" || strings.Join(f[8:], " ") != "not measured not measured" {
		t.Errorf("xfs row %q: want its log values, an estimated checksum size, and its checksum CPU not measured", xfsLine)
	}
	// (The note is wrapped.)
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "xfs: checksum CPU per fsync, checksum share of busy CPU: not measured ("+why+")") {
		t.Errorf("no note saying why the checksum CPU is not measured:\n%s", out)
	}
	if !strings.Contains(out, "mount -o logbsize=256k,logbufs=8: 8 header blocks per write") || !strings.Contains(out, "no other XFS is mounted") {
		t.Errorf("the notes do not say how XFS ran:\n%s", out)
	}
	// The whole report has the table.
	b.Reset()
	Print(&b, res, true)
	if !strings.Contains(b.String(), "the log: writes, blocks and checksum per fsync") {
		t.Error("Print has no log table")
	}
}

// Every target is compared with kernel XFS on the log's metrics, paired
// by round, and the verdict says what the reference does against it.
func TestAnalyzeVsXFS(t *testing.T) {
	res := withXFS(6, "perf not found")
	c, ok := find(res.Comparisons, func(c Comparison) bool {
		return c.Metric == "log_payload_blocks_per_write" && c.Target == "batched/avx512" && c.Reference == "xfs"
	})
	if !ok || !near(c.Ratio, 2) {
		t.Errorf("payload per write vs xfs: %+v, %v; want 12/6 = 2", c, ok)
	}
	if c, ok := find(res.Comparisons, func(c Comparison) bool { return c.Metric == "log_blocks_per_fsync" && c.Reference == "xfs" }); !ok || !near(c.Ratio, 5.0/7) {
		t.Errorf("blocks per fsync vs xfs: %+v, %v; want 5/7", c, ok)
	}
	// Not measured for xfs: no ratio, rather than one against a zero.
	if c, ok := find(res.Comparisons, func(c Comparison) bool { return c.Metric == "cksum_cpu_per_fsync" && c.Reference == "xfs" }); ok {
		t.Errorf("checksum CPU compared with an unmeasured xfs: %+v", c)
	}
	if !strings.Contains(strings.Join(res.Verdict, "\n"), "batched/avx512 vs the kernel's XFS at the same log geometry: payload blocks per log write +100 %") {
		t.Errorf("verdict %q", res.Verdict)
	}
}
