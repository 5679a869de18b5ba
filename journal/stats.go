package journal

import (
	"fmt"
	"io"
	"math/bits"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/logbuf"
)

// The fsync latency histogram is log-linear, in microseconds: values under
// 8 µs have a bucket each, and every power of two above is split into 8
// buckets, so a bucket is at most 12.5 % wide and percentiles read from it
// are that close.
const (
	histSub     = 8
	histBuckets = histSub + 30*histSub // up to about 2^33 µs (2.4 hours)
)

// histBucket returns the bucket of a latency in microseconds.
func histBucket(us uint64) int {
	if us < histSub {
		return int(us)
	}
	e := bits.Len64(us) - 1 // us in [2^e, 2^(e+1)), e >= 3
	sub := int(us>>(e-3)) & (histSub - 1)
	return min(histSub+(e-3)*histSub+sub, histBuckets-1)
}

// HistBounds returns the microseconds bucket i covers: [lo, hi).
func HistBounds(i int) (lo, hi uint64) {
	if i < histSub {
		return uint64(i), uint64(i) + 1
	}
	e := (i-histSub)/histSub + 3
	sub := uint64((i - histSub) % histSub)
	lo = (histSub + sub) << (e - 3)
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

func (fs *FS) recordFsync(d time.Duration) {
	fs.fsyncs.Add(1)
	fs.fsyncHist[histBucket(uint64(d/time.Microsecond))].Add(1)
}

// Stats are the filesystem's counters, as .stats shows them.
type Stats struct {
	CksumMode    string
	CksumImpl    string
	Journal      string
	LogSize      int64
	LogBSize     int
	LogBufs      int
	Transactions uint64
	Records      uint64 // log records written
	RecordBytes  uint64
	LogForces    uint64 // fdatasyncs of the log
	ForceWaits   uint64 // forces that waited for a log write
	ForceSyncs   uint64 // log syncs at least one force waited for
	Fsyncs       uint64 // fsync and fdatasync calls
	Checkpoints  uint64
	SpaceWaits   uint64 // commits that waited for log space (a checkpoint)
	IclogWaits   uint64 // commits that waited for a free iclog
	SyncNanos    uint64 // time in log fdatasync
	Cksum        cksum.Stats
	FsyncHist    []uint64 // log-linear buckets, see HistBounds
	Head, Tail   logbuf.LSN
	Durable      logbuf.LSN
}

// Stats returns the counters.
func (fs *FS) Stats() Stats {
	xs, head, tail, durable := fs.x.snapshotStats()
	s := Stats{
		CksumMode: fs.opts.Mode.String(), CksumImpl: fs.opts.Impl.Name, Journal: fs.opts.Journal.String(),
		LogSize: fs.sb.LogSize, LogBSize: fs.opts.LogBSize, LogBufs: fs.opts.LogBufs,
		Transactions: xs.transactions, Records: xs.records, RecordBytes: xs.recordBytes,
		LogForces: xs.syncs, ForceWaits: xs.forceCalls, ForceSyncs: xs.forceSyncs,
		Fsyncs: fs.fsyncs.Load(), Checkpoints: fs.ckpts.Load(), SpaceWaits: xs.spaceWaits,
		IclogWaits: xs.iclogWaits, SyncNanos: xs.syncNanos, Cksum: fs.x.sum.Stats(),
		Head: head.lsn(), Tail: tail.lsn(), Durable: durable,
	}
	s.FsyncHist = make([]uint64, histBuckets)
	for i := range s.FsyncHist {
		s.FsyncHist[i] = fs.fsyncHist[i].Load()
	}
	return s
}

// FsyncsPerForce is the group-commit factor: forces served per log sync
// that a force waited for.
func (s Stats) FsyncsPerForce() float64 {
	if s.ForceSyncs == 0 {
		return 0
	}
	return float64(s.ForceWaits) / float64(s.ForceSyncs)
}

// SealNanosPerForce is the checksum time on the log-force path per log
// force: the writer seals every record before the sync a force waits for.
func (s Stats) SealNanosPerForce() uint64 {
	if s.LogForces == 0 {
		return 0
	}
	return s.Cksum.Nanos / s.LogForces
}

// WriteTo writes the stats as "name value" lines (DESIGN §6).
func (s Stats) WriteTo(w io.Writer) (int64, error) {
	var n int64
	p := func(name string, v any) {
		k, _ := fmt.Fprintf(w, "%s %v\n", name, v)
		n += int64(k)
	}
	p("cksum_mode", s.CksumMode)
	p("cksum_impl", s.CksumImpl)
	p("journal", s.Journal)
	p("log_size", s.LogSize)
	p("logbsize", s.LogBSize)
	p("logbufs", s.LogBufs)
	p("transactions", s.Transactions)
	p("log_records", s.Records)
	p("log_bytes", s.RecordBytes)
	p("log_forces", s.LogForces)
	p("force_waits", s.ForceWaits)
	p("force_syncs", s.ForceSyncs)
	p("fsyncs_per_force", fmt.Sprintf("%.2f", s.FsyncsPerForce()))
	p("fsyncs", s.Fsyncs)
	p("checkpoints", s.Checkpoints)
	p("log_space_waits", s.SpaceWaits)
	p("iclog_waits", s.IclogWaits)
	p("log_sync_ns", s.SyncNanos)
	// Checksum work in all (cksum_calls, _bytes, _ns: total CPU), split
	// into that at seal, on the log force's path, and that at copy time
	// (inline mode; its time includes the copy, done in the same pass).
	p("cksum_records", s.Cksum.Records)
	p("cksum_calls", s.Cksum.TotalCalls())
	p("cksum_bytes", s.Cksum.TotalBytes())
	p("cksum_ns", s.Cksum.TotalNanos())
	p("cksum_seal_calls", s.Cksum.Calls)
	p("cksum_seal_bytes", s.Cksum.Bytes)
	p("cksum_seal_ns", s.Cksum.Nanos)
	p("cksum_copy_calls", s.Cksum.CopyCalls)
	p("cksum_copy_bytes", s.Cksum.CopyBytes)
	p("cksum_copy_ns", s.Cksum.CopyNanos)
	p("cksum_seal_ns_per_force", s.SealNanosPerForce())
	p("log_head", s.Head)
	p("log_tail", s.Tail)
	p("log_durable", s.Durable)
	p("fsync_p50_us", fmt.Sprintf("%.0f", HistPercentile(s.FsyncHist, 50)))
	p("fsync_p99_us", fmt.Sprintf("%.0f", HistPercentile(s.FsyncHist, 99)))
	for i, c := range s.FsyncHist {
		if c != 0 {
			lo, hi := HistBounds(i)
			p(fmt.Sprintf("fsync_us_%d_%d", lo, hi), c)
		}
	}
	return n, nil
}
