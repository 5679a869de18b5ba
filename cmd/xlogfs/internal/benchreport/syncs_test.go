package benchreport

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// withFlushLatency is a bench on an emulated device (--flush-latency 1ms,
// ram) of an xlogfs target whose daemon keeps the sync-write counts, one
// whose daemon predates them, the loopback (its own emulated flush) and
// the native and xfs baselines, which --flush-latency did not reach.
func withFlushLatency(rounds int) *Results {
	const noDelay = "no dm-delay in this kernel"
	res := &Results{
		Machine: Machine{CPU: "test CPU", CPUs: 2, CksumImpl: "avx512"},
		Config: Config{Modes: []string{"batched"}, Impls: []string{"best"}, Workload: "dbench", Journal: "data", Device: "ram",
			FlushLatency: time.Millisecond, Rounds: rounds, Seed: 3, Reference: "batched/avx512",
			Baselines: []string{"loopback", "native", "xfs"}},
		Targets: []Target{
			{Name: "batched/avx512", Kind: "xlogfs", Mode: "batched", Impl: "avx512", ImplSpec: "best"},
			{Name: "batched/avx512+uring", Kind: "xlogfs", Mode: "batched", Impl: "avx512", ImplSpec: "best", Transport: "uring"},
			{Name: "loopback", Kind: "loopback"}, {Name: "native", Kind: "native"}, {Name: "xfs", Kind: "xfs"},
		},
		FlushReach: []FlushReach{
			{Target: "batched/avx512", Reached: true, How: "xlogfs mount --flush-latency (every log flush and data-file sync)"},
			{Target: "batched/avx512+uring", Reached: true, How: "xlogfs mount --flush-latency (every log flush and data-file sync)"},
			{Target: "loopback", Reached: true, How: "loopback-mount --flush-latency (every FSYNC and FSYNCDIR it serves)"},
			{Target: "native", Why: noDelay}, {Target: "xfs", Why: noDelay},
		},
		FlushProbe: "dm-delay: no device-mapper (/dev/mapper/control is missing); nbd: no; ublk: no",
	}
	for r := 1; r <= rounds; r++ {
		res.Runs = append(res.Runs,
			Run{Target: "batched/avx512", Round: r, SyncWrites: "auto", Values: map[string]float64{"throughput": 50,
				"requests_per_op": 3, "syncs_per_fsync": 1.02, "emulated_flushes_per_fsync": 1.02,
				"opens": 12000, "opens_passthrough_share": 0.8, "opens_log_route_share": 0.15, "opens_daemon_share": 0.05,
				"log_syncs_per_fsync": 0.98, "data_syncs_per_fsync": 0.04, "dir_syncs_per_fsync": 0,
				"force_requests_per_fsync": 1, "force_caller_rounds_per_fsync": 0.5, "force_sleeps_per_fsync": 0.25}},
			// A daemon before the route and force counts: its syncs by
			// kind and its emulated flushes, nothing else.
			Run{Target: "batched/avx512+uring", Round: r, Values: map[string]float64{"throughput": 48, "requests_per_op": 3,
				"emulated_flushes_per_fsync": 1.1, "log_syncs_per_fsync": 1, "data_syncs_per_fsync": 0.1, "dir_syncs_per_fsync": 0}},
			Run{Target: "loopback", Round: r, Values: map[string]float64{"throughput": 40, "requests_per_op": 5, "syncs_per_fsync": 1,
				"emulated_flushes_per_fsync": 1}},
			Run{Target: "native", Round: r, Values: map[string]float64{"throughput": 300},
				Unmeasured: map[string]string{"emulated_flushes_per_fsync": NotReached("native", noDelay)}},
			Run{Target: "xfs", Round: r, Values: map[string]float64{"throughput": 280},
				Unmeasured: map[string]string{"emulated_flushes_per_fsync": NotReached("xfs", noDelay)}},
		)
	}
	Analyze(res)
	return res
}

// The round trips section from recorded results (through results.json):
// per target its sync-write policy, routes, emulated flushes and syncs per
// fsync by kind, and log forces; "–" where a daemon keeps no such count;
// "not measured" where --flush-latency did not reach a baseline, with the
// reason below; which targets it reached, and how; every line within 120
// columns.
func TestPrintSyncs(t *testing.T) {
	dir := t.TempDir()
	if err := Save(dir, withFlushLatency(2)); err != nil {
		t.Fatal(err)
	}
	res, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	Analyze(res)
	var b bytes.Buffer
	Print(&b, res, true)
	out := b.String()
	if !strings.Contains(out, "round trips and flushes") || !strings.Contains(out, "pt / log / dmn") {
		t.Errorf("the report has no sync table in its round trips section:\n%s", out)
	}
	b.Reset()
	PrintSyncs(&b, res, true)
	syncs := b.String()
	lines := map[string]string{}
	for _, l := range strings.Split(syncs, "\n") {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("line of %d columns: %q", n, l)
		}
		if f := strings.Fields(l); len(f) > 0 {
			if _, seen := lines[f[0]]; !seen {
				lines[f[0]] = l
			}
		}
	}
	fields := func(target string) string { return strings.Join(strings.Fields(lines[target]), " ") }
	for target, want := range map[string]string{
		"batched/avx512":       "batched/avx512 auto 12.0k 80 / 15 / 5 1.02 0.98 / 0.04 / 0.00 1.00 / 0.50 / 0.25",
		"batched/avx512+uring": "batched/avx512+uring – – – 1.10 1.00 / 0.10 / 0.00 –",
		"loopback":             "loopback – – – 1.00 – –",
		"native":               "native – – – not measured – –",
	} {
		if got := fields(target); got != want {
			t.Errorf("%s's row:\n got %q\nwant %q\n%s", target, got, want, syncs)
		}
	}
	for _, want := range []string{
		"native: emulated flushes per fsync: not measured (--flush-latency does not reach native (no dm-delay in this kernel))",
		"xfs: emulated flushes per fsync: not measured (--flush-latency does not reach xfs (no dm-delay in this kernel))",
		"--flush-latency 1ms:",
		"reaches batched/avx512, batched/avx512+uring: xlogfs mount --flush-latency",
		"reaches loopback: loopback-mount --flush-latency",
		"does not reach native, xfs: no dm-delay in this kernel",
		"dm-delay: no device-mapper (/dev/mapper/control is missing)",
	} {
		if !strings.Contains(strings.Join(strings.Fields(syncs), " "), want) {
			t.Errorf("report lacks %q:\n%s", want, syncs)
		}
	}
	row, _ := find(res.Rows, func(r Row) bool { return r.Target == "batched/avx512" })
	if row.SyncWrites != "auto" || !near(row.Values["opens_log_route_share"].Center, 0.15) {
		t.Errorf("batched/avx512's row: sync writes %q, values %v", row.SyncWrites, row.Values)
	}
}

// A run from before the sync-write counts and --flush-latency's reach
// (none of the new values, no reach) prints no sync table, and a bench on
// disk without --flush-latency shows the block device's flushes there.
func TestPrintSyncsOldAndDisk(t *testing.T) {
	var b bytes.Buffer
	Print(&b, synthetic(6, "avx512"), true)
	if strings.Contains(b.String(), "pt / log / dmn") || strings.Contains(b.String(), "--flush-latency") {
		t.Errorf("a run without the counts has a sync table:\n%s", b.String())
	}

	res := withFlushLatency(2)
	res.Config.FlushLatency, res.Config.Device, res.FlushReach = 0, "disk", nil
	for i := range res.Runs {
		r := &res.Runs[i]
		delete(r.Values, "emulated_flushes_per_fsync")
		r.Unmeasured = nil
		if r.Target == "batched/avx512" {
			r.Values["dev_flushes_per_fsync"] = 2.5
		}
	}
	Analyze(res)
	b.Reset()
	PrintSyncs(&b, res, true)
	if !strings.Contains(b.String(), " 2.50 ") || strings.Contains(b.String(), NotMeasured) || strings.Contains(b.String(), "--flush-latency") {
		t.Errorf("on disk the flushes column is the device's (2.50), nothing unmeasured:\n%s", b.String())
	}
}
