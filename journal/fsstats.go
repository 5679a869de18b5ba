package journal

import (
	"sync/atomic"
	"time"

	"github.com/xlogfs/xlogfs/journal/statsfile"
)

// syncCounts counts the calls by which the mounted journal makes
// something durable, each a device cache flush on most filesystems under
// the store (the log's fdatasyncs are xlogStats.syncs): what an fsync
// costs the device, beside its latency.
type syncCounts struct {
	data       atomic.Uint64 // fdatasyncs of data files (fsync, checkpoints)
	dir        atomic.Uint64 // fsyncs of the data directory (new data files' names)
	checkpoint atomic.Uint64 // fsyncs of the checkpoint file and the store directory
	writeback  atomic.Uint64 // write-backs without a flush (sync_file_range), the log force's flush covering them
}

func (fs *FS) recordFsync(d time.Duration) {
	fs.fsyncs.Add(1)
	fs.fsyncHist[statsfile.HistBucket(uint64(d/time.Microsecond))].Add(1)
}

// Stats returns the counters.
func (fs *FS) Stats() statsfile.Stats {
	xs, head, tail, durable := fs.x.SnapshotStats()
	s := statsfile.Stats{
		State: fs.State(), MountMode: fs.MountMode(),
		CksumMode: fs.opts.Mode.String(), CksumImpl: fs.opts.Impl.Name, Journal: fs.opts.Journal.String(),
		LogSize: fs.sb.LogSize, LogBSize: fs.opts.LogBSize, LogBufs: fs.opts.LogBufs,
		Transactions: xs.Transactions, Records: xs.Records, RecordBytes: xs.RecordBytes,
		HeaderBytes: xs.HeaderBytes, PayloadBytes: xs.PayloadBytes,
		LogSyncs: xs.Syncs, LogForces: xs.ForceCalls, ForceSyncs: xs.ForceSyncs,
		Fsyncs: fs.fsyncs.Load(), Checkpoints: fs.ckpts.Load(), SpaceWaits: xs.SpaceWaits,
		IclogWaits: xs.IclogWaits, SyncNanos: xs.SyncNanos, Cksum: fs.x.Sum.Stats(),
		Head: head.LSN(), Tail: tail.LSN(), Durable: durable,
	}
	s.FsyncHist = make([]uint64, statsfile.HistBuckets)
	for i := range s.FsyncHist {
		s.FsyncHist[i] = fs.fsyncHist[i].Load()
	}
	t := &fs.times
	s.CksumRecordHist, s.ForceCksumHist, s.ForceHist = t.Record.Snapshot(), t.ForceCksum.Snapshot(), t.Force.Snapshot()
	s.ForceNanos, s.ForceCksumNanos = t.ForceNanos.Load(), t.ForceCksumN.Load()
	s.Forces, s.ForceCksumCPUNanos = t.Forces.Load(), t.ForceCksumCPU.Load()
	if fs.flush != nil {
		s.FlushLatency, s.Flushes, s.FlushOverruns = fs.flush.d, fs.flush.flushes.Load(), fs.flush.overruns.Load()
	}
	s.DataSyncs, s.DirSyncs, s.CheckpointSyncs = fs.syncs.data.Load(), fs.syncs.dir.Load(), fs.syncs.checkpoint.Load()
	s.Writebacks = fs.syncs.writeback.Load()
	s.Learned = fs.learned.Load()
	return s
}
