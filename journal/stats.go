package journal

import (
	"fmt"
	"io"
	"math/bits"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/logbuf"
)

// histBuckets is the number of fsync latency buckets: bucket i counts
// fsyncs that took under 2^i microseconds; the last counts the rest.
const histBuckets = 24

func (fs *FS) recordFsync(d time.Duration) {
	fs.fsyncs.Add(1)
	us := uint64(d / time.Microsecond)
	i := bits.Len64(us) // us < 2^i
	fs.fsyncHist[min(i, histBuckets-1)].Add(1)
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
	FsyncHist    [histBuckets]uint64
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
	p("cksum_records", s.Cksum.Records)
	p("cksum_calls", s.Cksum.Calls)
	p("cksum_bytes", s.Cksum.Bytes)
	p("cksum_ns", s.Cksum.Nanos)
	p("log_head", s.Head)
	p("log_tail", s.Tail)
	p("log_durable", s.Durable)
	for i, c := range s.FsyncHist {
		if c == 0 {
			continue
		}
		if i == histBuckets-1 {
			p(fmt.Sprintf("fsync_us_ge_%d", uint64(1)<<(i-1)), c)
		} else {
			p(fmt.Sprintf("fsync_us_lt_%d", uint64(1)<<i), c)
		}
	}
	return n, nil
}
