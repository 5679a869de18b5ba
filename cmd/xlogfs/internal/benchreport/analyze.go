package benchreport

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchstat"
)

// Metric is one measured quantity of a run, in Run.Values.
type Metric struct {
	Name   string  `json:"name"`
	Label  string  `json:"label"` // for people
	Unit   string  `json:"unit"`
	Scale  float64 `json:"scale"` // printed value = stored value × Scale
	Higher bool    `json:"higher_is_better"`
	Desc   string  `json:"desc"`
}

// The metrics a run can have. cksum_cpu is the one the bench is about.
var allMetrics = []Metric{
	{Name: "cksum_cpu", Label: "checksum CPU", Unit: "% of CPU", Scale: 100,
		Desc: "the checksum's share of the daemon's CPU time during the workload, from the journal's counters (CPU time per record) and the daemon's CPU time"},
	{Name: "copy_cksum_cpu", Label: "copy+checksum CPU", Unit: "% of CPU", Scale: 100,
		Desc: "copying ops into iclogs, stamping and checksumming records, in all, as a share of the daemon's CPU time: the same work in every mode (inline mode's checksum CPU includes the copy it fuses; the other modes' does not)"},
	{Name: "throughput", Label: "throughput", Unit: "MB/s", Scale: 1, Higher: true,
		Desc: "bytes the workload wrote per second (transactions per second for mariadb)"},
	{Name: "fsync_p99", Label: "fsync p99", Unit: "µs", Scale: 1,
		Desc: "99th percentile of fsync latency"},
	{Name: "fsync_p50", Label: "fsync p50", Unit: "µs", Scale: 1,
		Desc: "median fsync latency"},
	{Name: "cksum_ns_per_kib", Label: "checksum ns/KiB", Unit: "ns/KiB", Scale: 1,
		Desc: "checksum CPU time per KiB checksummed"},
	{Name: "cksum_rec_p50_ns", Label: "checksum ns/record p50", Unit: "ns", Scale: 1,
		Desc: "median checksum CPU time of a log record"},
	{Name: "cksum_rec_p99_ns", Label: "checksum ns/record p99", Unit: "ns", Scale: 1,
		Desc: "99th percentile of a log record's checksum CPU time"},
	{Name: "force_cksum_share", Label: "checksum share of log-force latency", Unit: "%", Scale: 100,
		Desc: "the checksum's wall time in log forces over the forces' wall time"},
	{Name: "cksum_force_ns", Label: "checksum on the force path", Unit: "ns/force", Scale: 1,
		Desc: "checksum CPU time on the log-force path per log force: the work at seal of the records a force waits for (inline mode's work at copy time is not on it)"},
	{Name: "cksum_cpu_profile", Label: "checksum CPU (profile)", Unit: "% of CPU", Scale: 100,
		Desc: "the checksum's share of the daemon's CPU profile, the mount's whole life"},
	{Name: "cksum_timing_share", Label: "timing the checksum", Unit: "% of checksum CPU", Scale: 100,
		Desc: "what the checksum counters' own timing cost (ns per timed and untimed region × regions, calibrated at start: cksum/timer.go) as a share of the checksum CPU they measured"},
	{Name: "profile_cpu_total", Label: "profile total", Unit: "% of daemon CPU", Scale: 100,
		Desc: "the CPU time in the daemon's CPU profile (scaled to its getrusage CPU time over the profile's window) over the daemon's CPU time"},
	{Name: "p95_ms", Label: "sysbench p95", Unit: "ms", Scale: 1,
		Desc: "sysbench's 95th percentile transaction latency (mariadb)"},
	{Name: "pwrite_us", Label: "pwrite latency", Unit: "µs", Scale: 1,
		Desc: "mean latency of one pwrite (pwrite workload)"},
	{Name: "requests_per_op", Label: "FUSE requests per operation", Unit: "req/op", Scale: 1,
		Desc: "FUSE requests the daemon served per workload operation (dbench's operations, sysbench's transactions, the builtin's write+fsync)"},
	{Name: "syncs_per_fsync", Label: "syncs per fsync", Unit: "syncs/fsync", Scale: 1,
		Desc: "calls the filesystem made to make something durable (fdatasync, fsync), per fsync it served"},
	{Name: "dev_flushes_per_fsync", Label: "device flushes per fsync", Unit: "flushes/fsync", Scale: 1,
		Desc: "cache flushes the store's block device completed (all its users') per fsync served; --device disk only"},
	{Name: "emulated_flushes_per_fsync", Label: "emulated flushes per fsync", Unit: "flushes/fsync", Scale: 1,
		Desc: "flushes of the --flush-latency device per fsync served: xlogfs's emulated flushes (every log flush and data-file sync), the loopback's (every FSYNC and FSYNCDIR it serves), a dm-delay device's (counted on the loop device under it)"},
	// The sync-write route and the log forces behind the syncs (xlogfs's
	// .stats; absent from daemons that predate the counts).
	{Name: "opens", Label: "opens", Unit: "opens", Scale: 1,
		Desc: "regular files opened over the workload (opens_passthrough + opens_log_route + opens_daemon)"},
	{Name: "opens_passthrough_share", Label: "opens in passthrough", Unit: "% of opens", Scale: 100,
		Desc: "share of the opens whose file the kernel reads and writes directly (passthrough)"},
	{Name: "opens_log_route_share", Label: "opens on the log route", Unit: "% of opens", Scale: 100,
		Desc: "share of the opens whose sync writes go through the log"},
	{Name: "opens_daemon_share", Label: "opens through the daemon", Unit: "% of opens", Scale: 100,
		Desc: "share of the opens whose reads and writes the daemon serves"},
	{Name: "log_syncs_per_fsync", Label: "log syncs per fsync", Unit: "syncs/fsync", Scale: 1,
		Desc: "flushes of the log (log_syncs) per fsync served"},
	{Name: "data_syncs_per_fsync", Label: "data-file syncs per fsync", Unit: "syncs/fsync", Scale: 1,
		Desc: "fdatasyncs of data files (syncs_data) per fsync served"},
	{Name: "dir_syncs_per_fsync", Label: "data-directory syncs per fsync", Unit: "syncs/fsync", Scale: 1,
		Desc: "fsyncs of the data directory (syncs_dir) per fsync served"},
	{Name: "force_requests_per_fsync", Label: "log force requests per fsync", Unit: "requests/fsync", Scale: 1,
		Desc: "log forces asked for (force_requests) per fsync served"},
	{Name: "force_caller_rounds_per_fsync", Label: "log force caller rounds per fsync", Unit: "rounds/fsync", Scale: 1,
		Desc: "rounds of log I/O the forcing callers made or waited for (force_caller_rounds) per fsync served"},
	{Name: "force_sleeps_per_fsync", Label: "log force sleeps per fsync", Unit: "sleeps/fsync", Scale: 1,
		Desc: "forces that slept on another's log I/O and were served by the next (force_sleeps) per fsync served"},
	{Name: "immediate_write_bytes_per_fsync", Label: "immediate write bytes per fsync", Unit: "B/fsync", Scale: 1,
		Desc: "bytes written immediately on the sync-write route (immediate_write_bytes) per fsync served"},
	// The log: what xlogfs's journal (its .stats) and the kernel's XFS
	// (/proc/fs/xfs/stat, perf) write and checksum, side by side.
	{Name: "fsyncs", Label: "fsyncs", Unit: "fsyncs", Scale: 1, Higher: true,
		Desc: "fsync and fdatasync calls the filesystem served over the workload (xlogfs: its .stats; kernel XFS: its fsync tracepoints, counted by perf), else the workload's own count where it covers the run (the builtin's)"},
	{Name: "log_writes", Label: "log writes", Unit: "writes", Scale: 1,
		Desc: "log records (iclogs) written over the workload"},
	{Name: "log_blocks", Label: "log blocks", Unit: "512-byte blocks", Scale: 1,
		Desc: "512-byte blocks the log writes wrote: record header blocks, payload and padding"},
	{Name: "log_blocks_per_write", Label: "log blocks per write", Unit: "blocks/write", Scale: 1,
		Desc: "log blocks per log write"},
	{Name: "log_payload_blocks_per_write", Label: "payload blocks per log write", Unit: "blocks/write", Scale: 1, Higher: true,
		Desc: "log blocks per log write less a record's header blocks (one per 32 KiB of the log buffer): the payload (and padding) a write carries"},
	{Name: "log_blocks_per_fsync", Label: "log blocks per fsync", Unit: "blocks/fsync", Scale: 1,
		Desc: "log blocks written per fsync served"},
	{Name: "log_meta_payload_blocks_per_write", Label: "metadata payload blocks per log write", Unit: "blocks/write", Scale: 1, Higher: true,
		Desc: "payload blocks per log write less the file bytes logged with their writes (--journal data, the log route, immediate writes): the metadata a write carries, which is all the kernel's XFS logs"},
	{Name: "log_meta_blocks_per_fsync", Label: "metadata log blocks per fsync", Unit: "blocks/fsync", Scale: 1,
		Desc: "log blocks per fsync less the file bytes logged with their writes: headers and metadata, as the kernel's XFS writes them"},
	{Name: "cksum_bytes_per_fsync", Label: "checksum bytes per fsync", Unit: "B/fsync", Scale: 1,
		Desc: "bytes the log checksum covered per fsync (xlogfs: counted; kernel XFS: estimated from its log blocks, as xlog_cksum covers them)"},
	{Name: "cksum_cpu_per_fsync", Label: "checksum CPU per fsync", Unit: "ns/fsync", Scale: 1,
		Desc: "the log checksum's CPU time per fsync (xlogfs: its counters; kernel XFS: perf's samples in xlog_cksum × their period)"},
	{Name: "cksum_busy_share", Label: "checksum share of busy CPU", Unit: "% of busy CPU", Scale: 100,
		Desc: "the log checksum's CPU time over the whole machine's busy CPU time during the workload (xlogfs: its counters ÷ /proc/stat; kernel XFS: samples in xlog_cksum ÷ non-idle samples, perf's own excluded)"},
}

// XFSTarget is the kernel XFS baseline's target name and kind.
const XFSTarget = "xfs"

// vsXFS are the metrics every target is compared with kernel XFS on, when
// it ran: what the log writes per log write and per fsync, and what its
// checksum costs per fsync.
// (Throughput is compared with the reference like any target's.)
var vsXFS = []string{"log_meta_payload_blocks_per_write", "log_meta_blocks_per_fsync", "log_payload_blocks_per_write", "log_blocks_per_fsync", "cksum_cpu_per_fsync", "cksum_bytes_per_fsync"}

// MetricByName finds a metric of res (or of the built-in list).
func (res *Results) MetricByName(name string) (Metric, bool) {
	for _, ms := range [][]Metric{res.Metrics, allMetrics} {
		for _, m := range ms {
			if m.Name == name {
				return m, true
			}
		}
	}
	return Metric{}, false
}

// The metrics compared with the reference, and those attributed to the
// factors: the question's three.
var (
	compared   = []string{"cksum_cpu", "copy_cksum_cpu", "cksum_force_ns", "throughput", "fsync_p99", "fsync_p50", "cksum_ns_per_kib", "cksum_rec_p50_ns", "cksum_rec_p99_ns", "force_cksum_share", "cksum_cpu_profile", "p95_ms", "pwrite_us"}
	attributed = []string{"cksum_cpu", "throughput", "fsync_p99"}
)

// BatchedMode and BestImpl are the levels the factors are measured
// against: one crc32c call per record, and the fastest kernel. InlineMode
// is no level of batching (it moves the checksum off the log force rather
// than changing how its calls are cut): it is compared with batched, and
// the kernel's effect measured at it, but it takes no part in batching's
// attribution or the decomposition.
const (
	BatchedMode = "batched"
	BestImpl    = "best"
	InlineMode  = "inline"
)

// series returns target's values of metric by round (index round-1), NaN
// where it has none.
func (res *Results) series(target, metric string) []float64 {
	xs := make([]float64, res.Config.Rounds)
	for i := range xs {
		xs[i] = math.NaN()
	}
	for _, r := range res.Runs {
		if r.Target != target || r.Round < 1 || r.Round > len(xs) {
			continue
		}
		if v, ok := r.Values[metric]; ok {
			xs[r.Round-1] = v
		}
	}
	return xs
}

func (res *Results) has(target, metric string) bool {
	return slices.ContainsFunc(res.series(target, metric), func(x float64) bool { return !math.IsNaN(x) })
}

// Target finds a target by name.
func (res *Results) Target(name string) (Target, bool) {
	for _, t := range res.Targets {
		if t.Name == name {
			return t, true
		}
	}
	return Target{}, false
}

// factorial returns the xlogfs targets' modes and implementations in the
// order given, and the name of the target for a pair.
func (res *Results) factorial() (modes, impls []string, name func(mode, impl string) (string, bool)) {
	cells := map[[2]string]string{}
	for _, t := range res.Targets {
		if t.Kind != "xlogfs" {
			continue
		}
		if !slices.Contains(modes, t.Mode) {
			modes = append(modes, t.Mode)
		}
		if !slices.Contains(impls, t.Impl) {
			impls = append(impls, t.Impl)
		}
		cells[[2]string{t.Mode, t.Impl}] = t.Name
	}
	return modes, impls, func(m, i string) (string, bool) { n, ok := cells[[2]string{m, i}]; return n, ok }
}

// bestImpl is the implementation "best" resolved to, or failing that the
// first one.
func (res *Results) bestImpl(impls []string) string {
	for _, t := range res.Targets {
		if t.Kind == "xlogfs" && t.ImplSpec == BestImpl {
			return t.Impl
		}
	}
	if slices.Contains(impls, res.Machine.CksumImpl) {
		return res.Machine.CksumImpl
	}
	if len(impls) > 0 {
		return impls[0]
	}
	return ""
}

// Analyze derives the rows, comparisons, attribution, decomposition and
// verdict from the runs (replacing any there were).
func Analyze(res *Results) {
	res.Metrics = nil
	for _, m := range allMetrics {
		if m.Name == "throughput" && res.Config.Workload == "mariadb" {
			m.Unit, m.Desc = "TPS", "sysbench transactions per second"
		}
		if m.Name == "throughput" && res.Config.Workload == "creates" {
			m.Unit, m.Desc = "files/s", "files created (open O_CREAT|O_WRONLY, then close) per second, in one directory"
		}
		if slices.ContainsFunc(res.Runs, func(r Run) bool { _, ok := r.Values[m.Name]; return ok }) {
			res.Metrics = append(res.Metrics, m)
		}
	}
	res.Rows = nil
	for _, t := range res.Targets {
		res.Rows = append(res.Rows, res.row(t))
	}

	res.Comparisons = nil
	ref := res.Config.Reference
	if _, ok := res.Target(ref); ok {
		for _, m := range compared {
			for _, t := range res.Targets {
				if t.Name == ref || !res.has(t.Name, m) || !res.has(ref, m) {
					continue
				}
				iv := benchstat.PairedRatio(res.series(t.Name, m), res.series(ref, m))
				if iv.N > 0 {
					res.Comparisons = append(res.Comparisons, comparison(m, t.Name, ref, iv))
				}
			}
		}
	}
	if _, ok := res.Target("native"); ok {
		for _, t := range res.Targets {
			if t.Name != "native" && res.has(t.Name, "throughput") {
				iv := benchstat.PairedRatio(res.series(t.Name, "throughput"), res.series("native", "throughput"))
				if iv.N > 0 {
					res.Comparisons = append(res.Comparisons, comparison("throughput", t.Name, "native", iv))
				}
			}
		}
	}

	if _, ok := res.Target(XFSTarget); ok {
		for _, m := range vsXFS {
			for _, t := range res.Targets {
				if t.Name == XFSTarget || !res.has(t.Name, m) || !res.has(XFSTarget, m) {
					continue
				}
				iv := benchstat.PairedRatio(res.series(t.Name, m), res.series(XFSTarget, m))
				if iv.N > 0 {
					res.Comparisons = append(res.Comparisons, comparison(m, t.Name, XFSTarget, iv))
				}
			}
		}
	}

	res.Attribution, res.Decomposition = nil, nil
	modes, impls, cell := res.factorial()
	best := res.bestImpl(impls)
	if len(modes) >= 2 && len(impls) >= 2 && slices.Contains(modes, BatchedMode) {
		for _, m := range attributed {
			// Batching at each kernel: M/I → batched/I.
			for _, im := range impls {
				to, ok := cell(BatchedMode, im)
				for _, mode := range modes {
					from, ok2 := cell(mode, im)
					if mode == BatchedMode || mode == InlineMode || !ok || !ok2 {
						continue
					}
					res.attribute(m, "batching", im, from, to)
				}
			}
			// The kernel at each mode: M/I → M/best.
			for _, mode := range modes {
				to, ok := cell(mode, best)
				for _, im := range impls {
					from, ok2 := cell(mode, im)
					if im == best || !ok || !ok2 {
						continue
					}
					res.attribute(m, "kernel", mode, from, to)
				}
			}
		}
		for _, m := range []string{"cksum_cpu"} {
			to, ok := cell(BatchedMode, best)
			for _, mode := range modes {
				for _, im := range impls {
					from, ok1 := cell(mode, im)
					viaB, ok2 := cell(BatchedMode, im)
					viaK, ok3 := cell(mode, best)
					if mode == BatchedMode || mode == InlineMode || im == best || !ok || !ok1 || !ok2 || !ok3 || !res.has(from, m) {
						continue
					}
					d := benchstat.Decompose(res.series(from, m), res.series(viaB, m), res.series(viaK, m), res.series(to, m))
					res.Decomposition = append(res.Decomposition, Decomposition{Metric: m, From: from, To: to,
						Total: d.Total, Batching: d.Factor1, Kernel: d.Factor2})
				}
			}
		}
	}
	res.Verdict = verdict(res)
}

func (res *Results) attribute(metric, factor, at, from, to string) {
	if !res.has(from, metric) || !res.has(to, metric) {
		return
	}
	iv := benchstat.PairedRatio(res.series(to, metric), res.series(from, metric))
	if iv.N == 0 {
		return
	}
	res.Attribution = append(res.Attribution, Attribution{Metric: metric, Factor: factor, At: at, From: from, To: to,
		RatioCI: ratioCI(iv)})
}

func (res *Results) row(t Target) Row {
	row := Row{Target: t.Name, Values: map[string]benchstat.Interval{}}
	var calls, recBytes, perForce, offCPU, hdrBytes, payBytes []float64
	var cpuSeconds, profCPU, profCk float64
	requests := map[string][]float64{}
	unmeasured := map[string][]string{}
	var xfsRuns []*XFSRun
	for _, r := range res.Runs {
		if r.Target != t.Name {
			continue
		}
		row.Rounds++
		for m, why := range r.Unmeasured {
			if !slices.Contains(unmeasured[m], why) {
				unmeasured[m] = append(unmeasured[m], why)
			}
		}
		if r.FsyncCounts != "" {
			if row.FsyncCounts != "" && row.FsyncCounts != r.FsyncCounts {
				row.FsyncCounts = "mixed"
			} else {
				row.FsyncCounts = r.FsyncCounts
			}
		}
		if r.XFS != nil {
			xfsRuns = append(xfsRuns, r.XFS)
		}
		if on, ok := r.Stats["passthrough_on"]; ok {
			pt := map[bool]string{true: "on", false: "off"}[on == 1]
			if row.Passthrough != "" && row.Passthrough != pt {
				pt = "mixed"
			}
			row.Passthrough = pt
		}
		if sw := r.SyncWrites; sw != "" {
			if row.SyncWrites != "" && row.SyncWrites != sw {
				sw = "mixed"
			}
			row.SyncWrites = sw
		}
		for op, v := range r.Requests {
			requests[op] = append(requests[op], v)
		}
		if st := r.Stats; st != nil && st["cksum_records"] > 0 {
			calls = append(calls, st["cksum_calls"]/st["cksum_records"])
			recBytes = append(recBytes, st["cksum_bytes"]/st["cksum_records"])
			pf, ok := st["forces_per_sync"]
			if !ok {
				pf = st["fsyncs_per_force"] // its name in runs saved before
			}
			perForce = append(perForce, pf)
			offCPU = append(offCPU, st["cksum_off_cpu_records"]/st["cksum_records"])
		}
		if st := r.Stats; st != nil && st["log_records"] > 0 && st["log_header_bytes"] > 0 {
			hdrBytes = append(hdrBytes, st["log_header_bytes"]/st["log_records"])
			payBytes = append(payBytes, st["log_payload_bytes"]/st["log_records"])
		}
		row.ProfileSamples += r.ProfileSamples
		row.ProfileCksumSamples += r.ProfileCksumSamples
		profCPU += r.ProfileCPUSeconds
		profCk += r.ProfileCksumSeconds
		cpuSeconds += r.DaemonCPU
	}
	for _, m := range res.Metrics {
		if xs := res.series(t.Name, m.Name); res.has(t.Name, m.Name) {
			row.Values[m.Name] = benchstat.Median(xs)
		}
	}
	for op, xs := range requests {
		if row.Requests == nil {
			row.Requests = map[string]float64{}
		}
		row.Requests[op] = plainMedian(xs)
	}
	for m, whys := range unmeasured {
		if !res.has(t.Name, m) {
			if row.Unmeasured == nil {
				row.Unmeasured = map[string]string{}
			}
			row.Unmeasured[m] = strings.Join(whys, "; ")
		}
	}
	row.XFS = xfsRow(xfsRuns)
	row.CallsPerRecord, row.MeanRecordBytes = plainMedian(calls), plainMedian(recBytes)
	row.RecordHeaderBytes, row.RecordPayloadBytes = plainMedian(hdrBytes), plainMedian(payBytes)
	row.FsyncsPerForce, row.OffCPURecords = plainMedian(perForce), plainMedian(offCPU)
	if profCPU > 0 {
		row.ProfileShare = profCk / profCPU
	}
	if cpuSeconds > 0 {
		row.ProfileRateHz = float64(row.ProfileSamples) / cpuSeconds
	}
	return row
}

// xfsRow sums up the kernel XFS baseline's rounds; nil without any.
func xfsRow(runs []*XFSRun) *XFSRow {
	if len(runs) == 0 {
		return nil
	}
	first := runs[0]
	x := &XFSRow{Image: first.Image, LoopWhy: first.LoopWhy, MkfsArgs: first.MkfsArgs, MountOptions: first.MountOptions,
		DelayTable: first.DelayTable, HeaderBlocks: first.HeaderBlocks, Counters: map[string]float64{}}
	counters := map[string][]float64{}
	for _, r := range runs {
		dio := map[bool]string{true: "on", false: "off"}[r.LoopDirectIO]
		if x.LoopDirectIO != "" && x.LoopDirectIO != dio {
			dio = "mixed"
		}
		x.LoopDirectIO = dio
		for k, v := range r.Counters {
			counters[k] = append(counters[k], float64(v))
		}
		for _, m := range r.OtherMounts {
			if !slices.Contains(x.OtherMounts, m) {
				x.OtherMounts = append(x.OtherMounts, m)
			}
		}
		if p := r.Perf; p != nil {
			x.PerfRounds++
			x.PerfRateHz = p.RateHz
			x.PerfSamples += p.Samples
			x.PerfBusy += p.Busy
			x.PerfCksum += p.Cksum
			x.PerfCksumCRC += p.CksumCRC
		}
	}
	for k, xs := range counters {
		x.Counters[k] = plainMedian(xs)
	}
	return x
}

// plainMedian is the bench's one median, without its interval.
func plainMedian(xs []float64) float64 { return benchstat.MedianValue(xs) }

// Comparison finds the comparison of target with the reference on metric.
func (res *Results) Comparison(metric, target string) (Comparison, bool) {
	for _, c := range res.Comparisons {
		if c.Metric == metric && c.Target == target && c.Reference == res.Config.Reference {
			return c, true
		}
	}
	return Comparison{}, false
}

// verdict says in words what the comparisons found: for each mode other
// than batched, its cost against batched at the best kernel; for each other
// kernel, its cost against the best in batched mode; and how the whole
// change from the slowest corner to batched/best divides between the two.
func verdict(res *Results) []string {
	var out []string
	modes, impls, cell := res.factorial()
	best := res.bestImpl(impls)
	effect := func(from, to string, metrics []string) string {
		var parts []string
		for _, m := range metrics {
			if !res.has(from, m) || !res.has(to, m) {
				continue
			}
			iv := benchstat.PairedRatio(res.series(from, m), res.series(to, m))
			if iv.N == 0 {
				continue
			}
			meta, _ := res.MetricByName(m)
			parts = append(parts, meta.Label+" "+DescribeRatio(iv))
		}
		return strings.Join(parts, "; ")
	}
	ms := []string{"cksum_cpu", "throughput", "fsync_p99"}
	if slices.Contains(modes, BatchedMode) {
		for _, im := range orderFirst(impls, best) {
			ref, ok := cell(BatchedMode, im)
			for _, mode := range modes {
				t, ok2 := cell(mode, im)
				if mode == BatchedMode || !ok || !ok2 {
					continue
				}
				mms := ms
				if mode == InlineMode {
					// Its point: the checksum off the force path, at
					// no more copy+checksum CPU in all.
					mms = []string{"copy_cksum_cpu", "cksum_cpu", "cksum_force_ns", "throughput", "fsync_p99"}
				}
				if e := effect(t, ref, mms); e != "" {
					out = append(out, fmt.Sprintf("%s vs batched (%s): %s.", mode, im, e))
				}
			}
		}
	}
	for _, mode := range orderFirst(modes, BatchedMode) {
		ref, ok := cell(mode, best)
		for _, im := range impls {
			t, ok2 := cell(mode, im)
			if im == best || !ok || !ok2 {
				continue
			}
			if e := effect(t, ref, ms); e != "" {
				out = append(out, fmt.Sprintf("%s vs %s kernel (%s): %s.", im, best, mode, e))
			}
		}
	}
	for _, d := range res.Decomposition {
		if !d.Total.Excludes(1) {
			out = append(out, fmt.Sprintf("From %s to %s the checksum's CPU share changes %s: no clear change to divide between batching and the kernel.", d.From, d.To, DescribeRatio(d.Total)))
			continue
		}
		out = append(out, fmt.Sprintf("From %s to %s the checksum's CPU share changes %s; of that change (on a log scale, averaged over both orders of the two steps) batching accounts for %s and the kernel for %s.",
			d.From, d.To, DescribeRatio(d.Total), describeShare(d.Batching), describeShare(d.Kernel)))
	}
	if len(out) == 0 {
		if len(res.Targets) < 2 {
			return []string{"Only one target: nothing to compare."}
		}
		for _, c := range res.Comparisons {
			if c.Metric == "throughput" || c.Metric == "cksum_cpu" {
				meta, _ := res.MetricByName(c.Metric)
				out = append(out, fmt.Sprintf("%s vs %s: %s %s.", c.Target, c.Reference, meta.Label, DescribeRatio(c.Interval())))
			}
		}
	}
	if _, ok := res.Target(XFSTarget); ok && res.Config.Reference != XFSTarget {
		var parts []string
		for _, m := range []string{"log_meta_payload_blocks_per_write", "log_meta_blocks_per_fsync", "cksum_cpu_per_fsync"} {
			for _, c := range res.Comparisons {
				if c.Metric == m && c.Target == res.Config.Reference && c.Reference == XFSTarget {
					meta, _ := res.MetricByName(m)
					parts = append(parts, meta.Label+" "+DescribeRatio(c.Interval()))
				}
			}
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("%s vs the kernel's XFS at the same log geometry: %s.", res.Config.Reference, strings.Join(parts, "; ")))
		}
	}
	// Too few rounds for an interval: said once, by the report's
	// TooFewRoundsNote, not in every finding.
	return out
}

func orderFirst(xs []string, first string) []string {
	out := []string{}
	if slices.Contains(xs, first) {
		out = append(out, first)
	}
	for _, x := range xs {
		if x != first {
			out = append(out, x)
		}
	}
	return out
}

// DescribeRatio puts a ratio and its interval in words: "+51 % (95 % CI
// +44…+58 %)", "×12.9 (95 % CI ×12.1…×13.6)", with ", not significant"
// when the interval holds 1, and the ratio alone when there is no interval
// (the report's TooFewRoundsNote says once why).
func DescribeRatio(iv benchstat.Interval) string {
	mult := iv.Center > 2 || iv.Center < 0.5 && iv.Center > 0
	f := func(r float64) string {
		if math.IsInf(r, 0) || math.IsNaN(r) {
			return "?"
		}
		if mult {
			return "×" + trimFloat(r)
		}
		return signedPct(r)
	}
	s := f(iv.Center)
	if !mult {
		s += " %"
	}
	if !iv.Finite() {
		// No interval: the report says once why (TooFewRoundsNote).
		return s
	}
	ci := fmt.Sprintf("%s…%s", f(iv.Lo), f(iv.Hi))
	if !mult {
		ci += " %"
	}
	s += fmt.Sprintf(" (%.0f %% CI %s)", 100*benchstat.Confidence, ci)
	if !iv.Excludes(1) {
		s += ", not significant"
	}
	return s
}

func describeShare(iv benchstat.Interval) string {
	if !iv.Finite() {
		return fmt.Sprintf("%.0f %% (no interval)", 100*iv.Center)
	}
	return fmt.Sprintf("%.0f %% (%.0f…%.0f %%)", 100*iv.Center, 100*iv.Lo, 100*iv.Hi)
}

// signedPct is (r-1) as a signed percentage: +51, −1.2, +0.0.
func signedPct(r float64) string {
	p := 100 * (r - 1)
	prec := 1
	if math.Abs(p) >= 10 {
		prec = 0
	}
	s := fmt.Sprintf("%+.*f", prec, p)
	return strings.Replace(s, "-", "−", 1)
}

func trimFloat(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	case x >= 0.1:
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.3f", x)
}
