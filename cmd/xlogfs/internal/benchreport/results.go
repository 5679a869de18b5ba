// Package benchreport is what xlogfs bench writes and reads back: the
// results.json schema (every target's raw values in every round, and what
// is derived from them), the analysis (per-target medians, comparisons with
// the reference target, the attribution to batching and to the kernel, the
// verdict in words), and its outputs: the tables, bench.txt in Go's
// benchmark format, and the comparison of two saved runs.
package benchreport

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchstat"
	"github.com/xlogfs/xlogfs/journal/statsfile"
)

// Config is how a bench was run.
type Config struct {
	Modes     []string `json:"modes"`
	Impls     []string `json:"impls"` // as asked: best, stdlib, generic, or a kernel's name
	Baselines []string `json:"baselines,omitempty"`
	Workload  string   `json:"workload"`
	Journal   string   `json:"journal"`
	// CRC is what every record's CRC covers in the xlogfs stores (mkfs
	// --crc): whole (every header block whole; empty in runs saved
	// before) or xfs (xlog_cksum's regions).
	CRC          string        `json:"crc,omitempty"`
	Device       string        `json:"device"` // disk or ram
	FlushLatency time.Duration `json:"flush_latency_ns"`
	Duration     time.Duration `json:"duration_ns"`
	Clients      int           `json:"clients"`
	Rounds       int           `json:"rounds"`
	Seed         uint64        `json:"seed"`      // of the rounds' random orders
	Reference    string        `json:"reference"` // the target others are compared with
	ProfileRate  int           `json:"profile_rate_hz"`
	WriteSize    int           `json:"write_size"`
	Out          string        `json:"out"`
	MountFlags   []string      `json:"mount_flags,omitempty"` // extra flags for every xlogfs mount
	Tables       int           `json:"tables,omitempty"`
	TableSize    int           `json:"table_size,omitempty"`
	// PerfRate is the kernel XFS baseline's perf sampling rate (perf
	// record -F), per CPU.
	PerfRate int `json:"perf_rate_hz,omitempty"`
}

// Machine is where a bench ran.
type Machine struct {
	CPU       string `json:"cpu"`
	CPUs      int    `json:"cpus"`
	Go        string `json:"go"`
	Kernel    string `json:"kernel"`
	CksumImpl string `json:"cksum_impl"` // the fastest kernel here ("best")
}

// Target is one thing measured: an xlogfs mount with one checksum mode and
// one crc32c implementation, or a baseline.
type Target struct {
	Name     string `json:"name"` // MODE/IMPL, or the baseline's name
	Kind     string `json:"kind"` // xlogfs, loopback, native or xfs (the kernel's)
	Mode     string `json:"mode,omitempty"`
	Impl     string `json:"impl,omitempty"`      // the implementation's name
	ImplSpec string `json:"impl_spec,omitempty"` // as asked (best, generic, ...)
	// Transport is the FUSE transport of an xlogfs target; empty: classic.
	Transport string `json:"transport,omitempty"`
}

// Run is one target in one round.
type Run struct {
	Target string `json:"target"`
	Round  int    `json:"round"` // from 1
	Order  int    `json:"order"` // place in its round's random order, from 1
	// Values are the metrics' raw values (see Metrics), absent where the
	// target cannot have one (a baseline has no checksum).
	Values      map[string]float64 `json:"values"`
	Seconds     float64            `json:"seconds"`
	Bytes       int64              `json:"bytes"`
	Ops         int64              `json:"ops"`
	FsyncSource string             `json:"fsync_latency_source,omitempty"` // client or filesystem
	Stats       map[string]float64 `json:"stats,omitempty"`                // the mount's .stats after the workload: its numbers
	// SyncWrites is an xlogfs mount's sync-write policy as its .stats
	// says (auto, log or passthrough); empty where it says none.
	SyncWrites string `json:"sync_writes,omitempty"`
	// The .stats histograms after the workload, by name: the non-empty
	// buckets in increasing order.
	Histograms map[string][]statsfile.Bucket `json:"histograms,omitempty"`
	DaemonCPU  float64                       `json:"daemon_cpu_seconds,omitempty"`
	Profile    string                        `json:"profile,omitempty"`
	// CPU samples in the profile, and those with checksum code on the stack.
	ProfileSamples      int64              `json:"profile_samples,omitempty"`
	ProfileCksumSamples int64              `json:"profile_cksum_samples,omitempty"`
	ProfileCPUSeconds   float64            `json:"profile_cpu_seconds,omitempty"`
	ProfileCksumSeconds float64            `json:"profile_cksum_seconds,omitempty"`
	Extra               map[string]float64 `json:"extra,omitempty"` // workload-specific (tps, p95_ms, ...)
	// FUSE requests per workload operation, by opcode (LOOKUP, GETATTR, ...).
	Requests map[string]float64 `json:"requests_per_op,omitempty"`
	// Fsyncs made over the run, and who counted them: "filesystem" (the
	// fsyncs it served: xlogfs's .stats, kernel XFS's fsync tracepoints)
	// or "workload" (its own count, where the filesystem's is missing and
	// the workload's covers the run).
	Fsyncs      int64  `json:"fsyncs,omitempty"`
	FsyncCounts string `json:"fsync_count,omitempty"`
	// BusyCPU is the whole machine's CPU time over the workload, idle and
	// iowait excluded (/proc/stat).
	BusyCPU float64 `json:"system_busy_cpu_seconds,omitempty"`
	// Unmeasured are the metrics this run could not measure, with why:
	// the report prints "not measured (why)" for them, never a zero.
	Unmeasured map[string]string `json:"unmeasured,omitempty"`
	// XFS is the kernel XFS baseline's own record of the run.
	XFS *XFSRun `json:"xfs,omitempty"`
}

// XFSRun is what the kernel XFS baseline did in a round and what it
// counted: the image, its loop device and log geometry, the differences of
// /proc/fs/xfs/stat over the workload (every XFS on the machine counts in
// them), and the perf profile.
type XFSRun struct {
	Image        string   `json:"image"`
	ImageBytes   int64    `json:"image_bytes"`
	Loop         string   `json:"loop_device"`
	LoopDirectIO bool     `json:"loop_direct_io"`
	LoopWhy      string   `json:"loop_direct_io_why"`
	LogBytes     int64    `json:"log_bytes"`
	LogBSize     int      `json:"logbsize"`
	LogBufs      int      `json:"logbufs"`
	HeaderBlocks int      `json:"header_blocks_per_write"`
	MkfsArgs     []string `json:"mkfs_args"`
	MountOptions string   `json:"mount_options"`
	// DelayDevice is the dm-delay device XFS was made on, over Loop, and
	// its table (--flush-latency, where dm-delay can); empty: on Loop.
	DelayDevice string `json:"delay_device,omitempty"`
	DelayTable  string `json:"delay_table,omitempty"`
	// Stat is every line of /proc/fs/xfs/stat, after − before the
	// workload; Counters the lines the bench reports, by name (log_writes,
	// log_blocks, trans_sync, push_ail_pinned, xstrat_quick, ...).
	Stat map[string][]uint64 `json:"stat_delta"`
	// FsyncEvents: XFS's fsync tracepoints counted over the workload
	// (perf stat), the round's fsyncs; absent where perf could not.
	FsyncEvents map[string]uint64 `json:"fsync_events,omitempty"`
	Counters    map[string]uint64 `json:"counters"`
	OtherMounts []string          `json:"other_xfs_mounts,omitempty"`
	Perf        *PerfRun          `json:"perf,omitempty"`
}

// PerfRun is a system-wide cpu-clock profile of the workload, its samples
// classified (see package xfsbase's Profile for the rules): all, idle,
// perf's own, busy, in xlog_cksum's own context (and of those in crc32c),
// and in any crc32c; and each class's CPU time in ns (the samples'
// periods).
type PerfRun struct {
	RateHz           int    `json:"rate_hz"`
	Data             string `json:"data"` // perf.data, in the run's folder
	Samples          int64  `json:"samples"`
	Idle             int64  `json:"idle"`
	Self             int64  `json:"self"`
	Busy             int64  `json:"busy"`
	Cksum            int64  `json:"cksum"`
	CksumCRC         int64  `json:"cksum_crc32c"`
	CRC32C           int64  `json:"crc32c"`
	UnresolvedKernel int64  `json:"unresolved_kernel"`
	TotalNs          uint64 `json:"total_ns"`
	IdleNs           uint64 `json:"idle_ns"`
	SelfNs           uint64 `json:"self_ns"`
	BusyNs           uint64 `json:"busy_ns"`
	CksumNs          uint64 `json:"cksum_ns"`
	CksumCRCNs       uint64 `json:"cksum_crc32c_ns"`
	CRC32CNs         uint64 `json:"crc32c_ns"`
	Lost             string `json:"lost,omitempty"` // what perf said of lost events
}

// Results is results.json.
type Results struct {
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	Machine Machine   `json:"machine"`
	Config  Config    `json:"config"`
	Targets []Target  `json:"targets"`
	Runs    []Run     `json:"runs"`

	// Derived from Runs by Analyze.
	Metrics       []Metric        `json:"metrics"`
	Rows          []Row           `json:"rows"`
	Comparisons   []Comparison    `json:"comparisons"`
	Attribution   []Attribution   `json:"attribution,omitempty"`
	Decomposition []Decomposition `json:"decomposition,omitempty"`
	Verdict       []string        `json:"verdict"`
	Warnings      []string        `json:"warnings,omitempty"`

	// Partial: the bench was interrupted (SIGINT, SIGTERM) before its
	// last round ended; Runs holds the runs completed before it, and
	// PartialWhy says where it stopped and why.
	Partial    bool   `json:"partial,omitempty"`
	PartialWhy string `json:"partial_why,omitempty"`

	// FlushReach says, with --flush-latency, how the emulated device
	// reached each target or why it did not; FlushProbe what the bench
	// found of the kernel's ways to delay a block device's flushes
	// (dm-delay, nbd, ublk).
	FlushReach []FlushReach `json:"flush_reach,omitempty"`
	FlushProbe string       `json:"flush_probe,omitempty"`
}

// FlushReach is how --flush-latency reached one target: by what (How), or
// why it did not (Why).
type FlushReach struct {
	Target  string `json:"target"`
	Reached bool   `json:"reached"`
	How     string `json:"how,omitempty"`
	Why     string `json:"why,omitempty"`
}

// NotReached is the reason a value that needs the emulated device gives
// for a target --flush-latency did not reach.
func NotReached(target, why string) string {
	return fmt.Sprintf("--flush-latency does not reach %s (%s)", target, why)
}

// Row is one target's summary over its rounds.
type Row struct {
	Target string `json:"target"`
	Rounds int    `json:"rounds"`
	// Median and interval of each metric's raw values over the rounds.
	Values          map[string]benchstat.Interval `json:"values"`
	CallsPerRecord  float64                       `json:"crc_calls_per_record,omitempty"`
	MeanRecordBytes float64                       `json:"mean_record_bytes,omitempty"`
	// A record's header blocks and payload (op headers and regions), each
	// a median over the rounds of bytes per record: header blocks are one
	// per 32 KiB of the iclog size, whatever the record holds.
	RecordHeaderBytes  float64 `json:"record_header_bytes,omitempty"`
	RecordPayloadBytes float64 `json:"record_payload_bytes,omitempty"`
	FsyncsPerForce     float64 `json:"fsyncs_per_force,omitempty"`
	OffCPURecords      float64 `json:"off_cpu_records,omitempty"` // median share of records timed off the CPU
	// The rounds' profiles together: samples, checksum samples, and the
	// checksum's share of the samples' CPU time.
	ProfileSamples      int64   `json:"profile_samples,omitempty"`
	ProfileCksumSamples int64   `json:"profile_cksum_samples,omitempty"`
	ProfileShare        float64 `json:"profile_share,omitempty"`
	ProfileRateHz       float64 `json:"profile_rate_hz,omitempty"` // samples per second of the daemon's CPU time: the rate reached
	// Passthrough: "on" or "off" as the mounts said, "mixed" if they
	// differed, "" for the native directory.
	Passthrough string `json:"passthrough,omitempty"`
	// SyncWrites: the mounts' sync-write policy, "mixed" if they differed.
	SyncWrites string `json:"sync_writes,omitempty"`
	// Requests per workload operation by opcode, median over the rounds.
	Requests map[string]float64 `json:"requests_per_op,omitempty"`
	// Unmeasured: metrics no round measured, with why.
	Unmeasured map[string]string `json:"unmeasured,omitempty"`
	// FsyncCounts: who counted the fsyncs (see Run), "mixed" if rounds
	// differed.
	FsyncCounts string `json:"fsync_count,omitempty"`
	// XFS sums up the kernel XFS baseline's rounds.
	XFS *XFSRow `json:"xfs,omitempty"`
}

// XFSRow is the kernel XFS baseline over its rounds: its setup as the
// rounds had it, the medians of its named counters, and its profiles'
// samples together.
type XFSRow struct {
	Image        string             `json:"image"`          // where the images were (the first round's folder)
	LoopDirectIO string             `json:"loop_direct_io"` // on, off or mixed
	LoopWhy      string             `json:"loop_direct_io_why"`
	MkfsArgs     []string           `json:"mkfs_args"`
	MountOptions string             `json:"mount_options"`
	DelayTable   string             `json:"delay_table,omitempty"` // the first round's dm-delay table, if XFS was on one
	HeaderBlocks int                `json:"header_blocks_per_write"`
	Counters     map[string]float64 `json:"counters"` // medians over the rounds
	OtherMounts  []string           `json:"other_xfs_mounts,omitempty"`
	PerfRateHz   int                `json:"perf_rate_hz,omitempty"`
	PerfSamples  int64              `json:"perf_samples,omitempty"`
	PerfBusy     int64              `json:"perf_busy,omitempty"`
	PerfCksum    int64              `json:"perf_cksum,omitempty"`
	PerfCksumCRC int64              `json:"perf_cksum_crc32c,omitempty"`
	PerfRounds   int                `json:"perf_rounds,omitempty"` // rounds with a profile
}

// Comparison is a target against a reference, on one metric: the median
// of the rounds' ratios target ÷ reference and its interval.
type Comparison struct {
	Metric    string `json:"metric"`
	Target    string `json:"target"`
	Reference string `json:"reference"`
	RatioCI
}

func comparison(metric, target, ref string, iv benchstat.Interval) Comparison {
	return Comparison{Metric: metric, Target: target, Reference: ref, RatioCI: ratioCI(iv)}
}

// RatioCI is a ratio per round, its median and interval, as a Comparison
// and an Attribution carry it (its fields are theirs in JSON). Significant
// says the interval excludes 1.
type RatioCI struct {
	Ratio       float64   `json:"ratio"`
	CILow       LowBound  `json:"ci_low"`
	CIHigh      HighBound `json:"ci_high"`
	Significant bool      `json:"significant"`
	Rounds      int       `json:"rounds"`
	Confidence  float64   `json:"confidence"`
}

func ratioCI(iv benchstat.Interval) RatioCI {
	return RatioCI{Ratio: iv.Center, CILow: LowBound(iv.Lo), CIHigh: HighBound(iv.Hi), Significant: iv.Excludes(1), Rounds: iv.N, Confidence: iv.Confidence}
}

// Interval is the ratio and its interval.
func (r RatioCI) Interval() benchstat.Interval {
	return benchstat.Interval{Center: r.Ratio, Lo: float64(r.CILow), Hi: float64(r.CIHigh), N: r.Rounds, Confidence: r.Confidence}
}

// Attribution is the effect of one factor with the other held: of batching
// (From is a mode other than batched, To batched, both at kernel At), or of
// the kernel (From another implementation, To the best, both in mode At).
// Ratio is To ÷ From per round, its median and interval.
type Attribution struct {
	Metric string `json:"metric"`
	Factor string `json:"factor"` // batching or kernel
	At     string `json:"at"`     // the level the other factor is held at
	From   string `json:"from"`
	To     string `json:"to"`
	RatioCI
}

// Decomposition splits the change of a metric from From (a mode other than
// batched, an implementation other than the best) to To (batched, the best)
// into the shares of batching and of the kernel (see
// benchstat.Decompose).
type Decomposition struct {
	Metric   string             `json:"metric"`
	From     string             `json:"from"`
	To       string             `json:"to"`
	Total    benchstat.Interval `json:"total"`
	Batching benchstat.Interval `json:"batching_share"`
	Kernel   benchstat.Interval `json:"kernel_share"`
}

// LowBound and HighBound are the ends of a ratio's interval. JSON cannot
// hold an infinity (too few rounds leave a bound open): an open or NaN
// bound is written as null, and null reads back as -Inf or +Inf.
type (
	LowBound  float64
	HighBound float64
)

func (b LowBound) MarshalJSON() ([]byte, error)  { return boundJSON(float64(b)) }
func (b HighBound) MarshalJSON() ([]byte, error) { return boundJSON(float64(b)) }

func (b *LowBound) UnmarshalJSON(j []byte) error {
	v, err := unboundJSON(j, math.Inf(-1))
	*b = LowBound(v)
	return err
}

func (b *HighBound) UnmarshalJSON(j []byte) error {
	v, err := unboundJSON(j, math.Inf(1))
	*b = HighBound(v)
	return err
}

func boundJSON(x float64) ([]byte, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(x)
}

func unboundJSON(j []byte, null float64) (float64, error) {
	if string(j) == "null" {
		return null, nil
	}
	var x float64
	if err := json.Unmarshal(j, &x); err != nil {
		return 0, fmt.Errorf("interval bound %s: %w", j, err)
	}
	return x, nil
}

// Load reads DIR/results.json.
func Load(dir string) (*Results, error) {
	path := dir
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		path = filepath.Join(dir, "results.json")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(r.Targets) == 0 || len(r.Runs) == 0 && !r.Partial {
		return nil, fmt.Errorf("%s: no runs or targets: not the results of xlogfs bench", path)
	}
	return &r, nil
}

// Save writes res as DIR/results.json.
func Save(dir string, res *Results) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644)
}
