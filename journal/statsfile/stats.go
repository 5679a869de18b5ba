package statsfile

import (
	"fmt"
	"io"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/logbuf"
)

// The fsync latency histogram is log-linear, in microseconds: values under
// 8 µs have a bucket each, and every power of two above is split into 8
// buckets, so a bucket is at most 12.5 % wide and percentiles read from it
// are that close.
const (
	HistSub     = 8
	HistBuckets = HistSub + 30*HistSub // up to about 2^33 µs (2.4 hours)
)

// HistBucket returns the bucket of a latency in microseconds.
func HistBucket(us uint64) int {
	if us < HistSub {
		return int(us)
	}
	e := bits.Len64(us) - 1 // us in [2^e, 2^(e+1)), e >= 3
	sub := int(us>>(e-3)) & (HistSub - 1)
	return min(HistSub+(e-3)*HistSub+sub, HistBuckets-1)
}

// HistBounds returns the microseconds bucket i covers: [lo, hi).
func HistBounds(i int) (lo, hi uint64) {
	if i < HistSub {
		return uint64(i), uint64(i) + 1
	}
	e := (i-HistSub)/HistSub + 3
	sub := uint64((i - HistSub) % HistSub)
	lo = (HistSub + sub) << (e - 3)
	return lo, lo + 1<<(e-3)
}

// HistPercentile returns the p-th percentile (0 < p <= 100) of a
// histogram, in microseconds: the middle of the bucket it falls in.
func HistPercentile(h []uint64, p float64) float64 {
	var total uint64
	for _, c := range h {
		total += c
	}
	if total == 0 {
		return 0
	}
	rank := uint64(p/100*float64(total) + 0.5)
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h {
		seen += c
		if seen >= rank {
			lo, hi := HistBounds(i)
			return float64(lo+hi) / 2
		}
	}
	lo, hi := HistBounds(len(h) - 1)
	return float64(lo+hi) / 2
}

// AtomicHist is a log-linear histogram (see histBucket) updated without a
// lock, in any unit its user picks.
type AtomicHist [HistBuckets]atomic.Uint64

func (h *AtomicHist) add(v uint64) { h[HistBucket(v)].Add(1) }

func (h *AtomicHist) Snapshot() []uint64 {
	s := make([]uint64, HistBuckets)
	for i := range s {
		s[i] = h[i].Load()
	}
	return s
}

// CksumTimes is the journal's account of checksum time, beside the
// Summer's totals: a histogram of each record's checksum CPU time (all of
// it: at seal, and in inline mode at copy time too), and per log force (a
// writer round that ends in a sync some force waits for) the time its
// records' checksums took at seal, which is all the checksum work on the
// force's path, and the round's whole wall time (sealing and writing its
// records, and the sync). The seal's wall time over the round's is the
// checksum's share of the force's latency; its CPU time per force is the
// checksum's cost on the force path, free of time off the CPU.
type CksumTimes struct {
	Record        AtomicHist // CPU ns per record, copy time included
	ForceCksum    AtomicHist // checksum wall ns at seal per force
	Force         AtomicHist // wall ns per force
	ForceNanos    atomic.Uint64
	ForceCksumN   atomic.Uint64 // wall
	ForceCksumCPU atomic.Uint64
	Forces        atomic.Uint64 // forces timed

	// checksum wall and CPU time at seal of the writer's round so far;
	// the writer's alone
	round, roundCPU time.Duration
}

// Observe is the Summer's observer: it runs on the writer, which alone
// seals records.
func (c *CksumTimes) Observe(cost cksum.Cost) {
	if cost.Timed { // the others' time is an estimate from their bytes
		c.Record.add(uint64(cost.TotalCPU()))
	}
	c.round += cost.Wall
	c.roundCPU += cost.CPU
}

// StartRound begins a writer round.
func (c *CksumTimes) StartRound() { c.round, c.roundCPU = 0, 0 }

// Forced accounts a writer round that ended in a sync a force waited for.
func (c *CksumTimes) Forced(total time.Duration) {
	c.Force.add(uint64(total))
	c.ForceCksum.add(uint64(c.round))
	c.ForceNanos.Add(uint64(total))
	c.ForceCksumN.Add(uint64(c.round))
	c.ForceCksumCPU.Add(uint64(c.roundCPU))
	c.Forces.Add(1)
}

// Stats are the filesystem's counters, as .stats shows them.
type Stats struct {
	State        string // "ok", "degraded: ...", "failed: <reason>" (see FS.State)
	MountMode    string // "rw", "ro" or "ro,norecovery" (see FS.MountMode)
	CksumMode    string
	LogItems     string // what a transaction carries beside its op (journal.LogItems)
	CRCCoverage  string // what each record's CRC covers: the store's, "whole" or "xfs" (logbuf)
	CksumImpl    string
	Journal      string
	LogSize      int64
	LogBSize     int
	LogBufs      int
	Transactions uint64
	Records      uint64 // log records written
	RecordBytes  uint64 // their bytes on disk: header blocks, payload, padding to a block
	HeaderBytes  uint64 // of which record and extension header blocks
	PayloadBytes uint64 // of which op headers and regions
	// LogDataBytes are the file bytes the payload carried (data journal,
	// immediate writes): what XFS, which logs no file data, never logs.
	LogDataBytes uint64
	LogSyncs     uint64 // fdatasyncs of the log (log_syncs)
	LogForces    uint64 // log force requests that waited for a log write (log_forces)
	// Every log force request, durable already or not (XFS's force);
	// those that slept on another goroutine's round of log I/O and were
	// served by a later one (XFS-style group commit); and the rounds a
	// forcing caller ran itself because the log was idle.
	ForceRequests, ForceSleeps, CallerRounds uint64
	ForceSyncs                               uint64 // log syncs at least one force waited for
	Fsyncs                                   uint64 // fsync and fdatasync calls
	Checkpoints                              uint64
	SpaceWaits                               uint64 // commits that waited for log space (a checkpoint)
	IclogWaits                               uint64 // commits that waited for a free iclog
	SyncNanos                                uint64 // time in log fdatasync
	Cksum                                    cksum.Stats
	FsyncHist                                []uint64 // log-linear buckets, see HistBounds
	Head, Tail                               logbuf.LSN
	Durable                                  logbuf.LSN

	// Checksum time per record (CPU ns, inline mode's at copy time
	// included) and per log force (wall ns of the checksum at seal, and of
	// the whole force), log-linear buckets in ns.
	CksumRecordHist []uint64
	ForceCksumHist  []uint64
	ForceHist       []uint64
	ForceNanos      uint64 // wall time of all log forces
	ForceCksumNanos uint64 // of which checksumming their records (at seal)
	// Emulated flush latency (Options.FlushLatency): the latency, flushes
	// that took it, and flushes that took longer by themselves.
	FlushLatency  time.Duration
	Flushes       uint64
	FlushOverruns uint64
	// Log forces timed (ForceHist's count), and the CPU time of their
	// records' checksums at seal: the checksum's cost on the force path.
	Forces             uint64
	ForceCksumCPUNanos uint64
	// Calls that make something durable, by what they sync (syncs_data,
	// syncs_dir, syncs_checkpoint); the log's are LogSyncs (log_syncs).
	DataSyncs, DirSyncs, CheckpointSyncs uint64
	// Writebacks: fsyncs whose data went back without a flush of its own
	// (sync_file_range), the log's flush covering it.
	Writebacks uint64
	// Learned: writes the kernel made to data files directly
	// (passthrough) that the journal learned and logged.
	Learned uint64
	// The write routes of a passthrough mount (datafile/route.go): the
	// policy, the largest write logged with its bytes (0: none), and the
	// opens of regular files by the route they took: passthrough, the log
	// route, and through the daemon for another reason.
	SyncWrites                                   string
	ImmediateWrite                               int
	OpensPassthrough, OpensLogRoute, OpensDaemon uint64
}

// XFSLog is the log line of XFS's /proc/fs/xfs/stat (fs/xfs/xfs_stats.h,
// xs_log_writes .. xs_log_force_sleep): log writes, log blocks (512 bytes),
// no-iclog waits, log forces, and forces that slept waiting for log I/O.
type XFSLog struct {
	Writes, Blocks, NoIclogs, Force, ForceSleep uint64
}

// XFSLog is the log's counters in XFS's words.
func (s Stats) XFSLog() XFSLog {
	return XFSLog{Writes: s.Records, Blocks: s.RecordBytes / logbuf.BBSize, NoIclogs: s.IclogWaits,
		Force: s.ForceRequests, ForceSleep: s.LogForces}
}

// Line is x as /proc/fs/xfs/stat prints it: "log 1 2 3 4 5".
func (x XFSLog) Line() string {
	return fmt.Sprintf("log %d %d %d %d %d", x.Writes, x.Blocks, x.NoIclogs, x.Force, x.ForceSleep)
}

// Syncs is every call that made something durable: the log's, the data
// files', the data directory's and the checkpoint's.
func (s Stats) Syncs() uint64 { return s.LogSyncs + s.DataSyncs + s.DirSyncs + s.CheckpointSyncs }

// SyncsPerFsync is Syncs per fsync served, 0 without fsyncs.
func (s Stats) SyncsPerFsync() float64 {
	if s.Fsyncs == 0 {
		return 0
	}
	return float64(s.Syncs()) / float64(s.Fsyncs)
}

// FsyncsPerForce is the group-commit factor, .stats's forces_per_sync:
// log forces that waited (log_forces) per log sync that at least one of
// them waited for (force_syncs).
func (s Stats) FsyncsPerForce() float64 {
	if s.ForceSyncs == 0 {
		return 0
	}
	return float64(s.LogForces) / float64(s.ForceSyncs)
}

// CksumNanosPerKiB is the checksum's CPU time per KiB checksummed, all of
// it (at copy time and at seal).
func (s Stats) CksumNanosPerKiB() float64 {
	if s.Cksum.TotalBytes() == 0 {
		return 0
	}
	return float64(s.Cksum.TotalNanos()) / float64(s.Cksum.TotalBytes()) * 1024
}

// ForceCksumShare is the checksum's share of the log forces' wall time.
func (s Stats) ForceCksumShare() float64 {
	if s.ForceNanos == 0 {
		return 0
	}
	return float64(s.ForceCksumNanos) / float64(s.ForceNanos)
}

// ForceCksumCPUPerForce is the checksum's CPU time on the log-force path
// per log force: its records' checksum work at seal.
func (s Stats) ForceCksumCPUPerForce() float64 {
	if s.Forces == 0 {
		return 0
	}
	return float64(s.ForceCksumCPUNanos) / float64(s.Forces)
}

// WriteTo writes the stats as .stats lines: "name value", and a histogram
// as a line per non-empty bucket (the format, and its parser, are in
// statsfile.go).
func (s Stats) WriteTo(w io.Writer) (int64, error) {
	var n int64
	p := func(name string, v any) {
		k, _ := fmt.Fprintf(w, "%s %v\n", name, v)
		n += int64(k)
	}
	p("state", s.State)
	p("mount_mode", s.MountMode)
	p("cksum_mode", s.CksumMode)
	p("crc_coverage", s.CRCCoverage)
	p("cksum_impl", s.CksumImpl)
	p("journal", s.Journal)
	p("log_items", s.LogItems)
	p("log_size", s.LogSize)
	p("logbsize", s.LogBSize)
	p("logbufs", s.LogBufs)
	p("transactions", s.Transactions)
	p("log_records", s.Records)
	p("log_bytes", s.RecordBytes)
	p("log_header_bytes", s.HeaderBytes)
	p("log_payload_bytes", s.PayloadBytes)
	p("log_file_data_bytes", s.LogDataBytes)
	p("log_syncs", s.LogSyncs)
	p("log_forces", s.LogForces)
	p("force_syncs", s.ForceSyncs)
	p("forces_per_sync", fmt.Sprintf("%.2f", s.FsyncsPerForce()))
	p("force_requests", s.ForceRequests)
	p("force_sleeps", s.ForceSleeps)
	p("force_caller_rounds", s.CallerRounds)
	// The log's counters in XFS's words, as /proc/fs/xfs/stat's log line
	// has them (XFSLogLine): iclog writes, 512-byte blocks written,
	// waits for a free iclog, log forces, forces that waited for log I/O.
	x := s.XFSLog()
	p("xfs_log_writes", x.Writes)
	p("xfs_log_blocks", x.Blocks)
	p("xfs_log_noiclogs", x.NoIclogs)
	p("xfs_log_force", x.Force)
	p("xfs_log_force_sleep", x.ForceSleep)
	p("fsyncs", s.Fsyncs)
	p("checkpoints", s.Checkpoints)
	p("log_space_waits", s.SpaceWaits)
	p("iclog_waits", s.IclogWaits)
	p("log_sync_ns", s.SyncNanos)
	// Checksum work in all (cksum_calls, _bytes, _ns: CPU time, _wall_ns,
	// and per record and per KiB), then split into that at seal, on the
	// log force's path (cksum_seal_*; force_cksum_*: per force), and that
	// at copy time (cksum_copy_*: inline mode; its time includes the copy,
	// done in the same pass).
	p("cksum_records", s.Cksum.Records)
	p("cksum_calls", s.Cksum.TotalCalls())
	p("cksum_bytes", s.Cksum.TotalBytes())
	p("cksum_ns", s.Cksum.TotalNanos())
	p("cksum_wall_ns", s.Cksum.TotalWallNanos())
	p("cksum_off_cpu_records", s.Cksum.OffCPU)
	p("cksum_clock", s.Cksum.Clock)
	// What counting the checksum cost (cksum/timer.go): regions counted,
	// those timed, and the counters' own CPU time for them, also as a
	// share of cksum_ns.
	p("cksum_regions", s.Cksum.Regions)
	p("cksum_timed_regions", s.Cksum.TimedRegions)
	p("cksum_timing_ns", s.Cksum.TimingNanos)
	p("cksum_timer_ns", fmt.Sprintf("%.1f", s.Cksum.TimerNanos))
	p("cksum_timing_share", fmt.Sprintf("%.6f", s.Cksum.TimingShare()))
	p("cksum_record_p50_ns", fmt.Sprintf("%.0f", HistPercentile(s.CksumRecordHist, 50)))
	p("cksum_record_p99_ns", fmt.Sprintf("%.0f", HistPercentile(s.CksumRecordHist, 99)))
	p("cksum_ns_per_kib", fmt.Sprintf("%.1f", s.CksumNanosPerKiB()))
	p("force_cksum_p50_ns", fmt.Sprintf("%.0f", HistPercentile(s.ForceCksumHist, 50)))
	p("force_cksum_p99_ns", fmt.Sprintf("%.0f", HistPercentile(s.ForceCksumHist, 99)))
	p("force_p50_ns", fmt.Sprintf("%.0f", HistPercentile(s.ForceHist, 50)))
	p("force_p99_ns", fmt.Sprintf("%.0f", HistPercentile(s.ForceHist, 99)))
	p("force_ns", s.ForceNanos)
	p("force_cksum_ns", s.ForceCksumNanos)
	p("force_cksum_pct", fmt.Sprintf("%.4f", 100*s.ForceCksumShare()))
	p("flush_latency_ns", int64(s.FlushLatency))
	p("flushes_emulated", s.Flushes)
	p("flush_overruns", s.FlushOverruns)
	p("cksum_seal_calls", s.Cksum.Calls)
	p("cksum_seal_bytes", s.Cksum.Bytes)
	p("cksum_seal_ns", s.Cksum.Nanos)
	p("cksum_copy_calls", s.Cksum.CopyCalls)
	p("cksum_copy_bytes", s.Cksum.CopyBytes)
	p("cksum_copy_ns", s.Cksum.CopyNanos)
	p("cksum_copy_off_cpu_ops", s.Cksum.CopyOffCPU)
	// The copy and the stamps the modes that checksum at seal do outside
	// the checksum (copy_plain_*; inline mode's are in cksum_copy_*), and
	// copy_cksum_ns: the CPU time of copying ops in, stamping and
	// checksumming in all, the same work in every mode. cksum_ns is
	// checksum work alone in batched, xfs and sector mode but includes
	// the fused copy in inline mode; copy_cksum_ns is the fair total.
	p("copy_plain_ops", s.Cksum.PlainOps)
	p("copy_plain_bytes", s.Cksum.PlainBytes)
	p("copy_plain_ns", s.Cksum.PlainNanos)
	p("copy_plain_off_cpu", s.Cksum.PlainOffCPU)
	p("copy_cksum_ns", s.Cksum.CopyCksumNanos())
	p("forces_timed", s.Forces)
	p("force_cksum_cpu_ns", s.ForceCksumCPUNanos)
	p("force_cksum_cpu_per_force_ns", fmt.Sprintf("%.0f", s.ForceCksumCPUPerForce()))
	p("syncs", s.Syncs())
	p("syncs_data", s.DataSyncs)
	p("syncs_dir", s.DirSyncs)
	p("syncs_checkpoint", s.CheckpointSyncs)
	p("syncs_per_fsync", fmt.Sprintf("%.2f", s.SyncsPerFsync()))
	p("writebacks", s.Writebacks)
	p("learned_writes", s.Learned)
	p("sync_writes", s.SyncWrites)
	p("immediate_write_bytes", s.ImmediateWrite)
	p("opens_passthrough", s.OpensPassthrough)
	p("opens_log_route", s.OpensLogRoute)
	p("opens_daemon", s.OpensDaemon)
	p("log_head", s.Head)
	p("log_tail", s.Tail)
	p("log_durable", s.Durable)
	p("fsync_p50_us", fmt.Sprintf("%.0f", HistPercentile(s.FsyncHist, 50)))
	p("fsync_p99_us", fmt.Sprintf("%.0f", HistPercentile(s.FsyncHist, 99)))
	for _, h := range []struct {
		name    string
		buckets []uint64
	}{
		{HistFsync, s.FsyncHist}, {HistCksumRecord, s.CksumRecordHist},
		{HistForceCksum, s.ForceCksumHist}, {HistForce, s.ForceHist},
	} {
		for i, c := range h.buckets {
			if c != 0 {
				lo, hi := HistBounds(i)
				p(h.name, fmt.Sprintf("%d %d %d", lo, hi, c))
			}
		}
	}
	return n, nil
}
