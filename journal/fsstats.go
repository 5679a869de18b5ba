package journal

import (
	"time"

	"github.com/xlogfs/xlogfs/journal/statsfile"
)

func (fs *FS) recordFsync(d time.Duration) {
	fs.fsyncs.Add(1)
	fs.fsyncHist[statsfile.HistBucket(uint64(d/time.Microsecond))].Add(1)
}

// Stats returns the counters.
func (fs *FS) Stats() statsfile.Stats {
	xs, head, tail, durable := fs.x.SnapshotStats()
	s := statsfile.Stats{
		State: fs.State(), MountMode: fs.MountMode(),
		CksumMode: fs.opts.Mode.String(), CRCCoverage: fs.sb.Coverage.String(), CksumImpl: fs.opts.Impl.Name, Journal: fs.opts.Journal.String(), LogItems: fs.opts.LogItems.String(),
		LogSize: fs.sb.LogSize, LogBSize: fs.opts.LogBSize, LogBufs: fs.opts.LogBufs,
		Transactions: xs.Transactions, Records: xs.Records, RecordBytes: xs.RecordBytes,
		HeaderBytes: xs.HeaderBytes, PayloadBytes: xs.PayloadBytes, LogDataBytes: fs.loggedData.Load(),
		LogSyncs: xs.Syncs, LogForces: xs.ForceCalls, ForceSyncs: xs.ForceSyncs,
		ForceRequests: xs.Forces, ForceSleeps: xs.ForceSleeps, CallerRounds: xs.CallerRounds,
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
		s.FlushLatency, s.Flushes, s.FlushOverruns = fs.flush.D, fs.flush.Flushes.Load(), fs.flush.Overruns.Load()
	}
	sc := &fs.files.Syncs
	s.DataSyncs, s.DirSyncs, s.CheckpointSyncs = sc.Data.Load(), sc.Dir.Load(), fs.ckptSyncs.Load()
	s.Writebacks = sc.Writeback.Load()
	s.Learned = fs.files.Learned.Load()
	s.SyncWrites, s.ImmediateWrite = fs.opts.SyncWrites.String(), fs.opts.ImmediateWrite
	r := &fs.files.Routes
	s.OpensPassthrough, s.OpensLogRoute, s.OpensDaemon = r.Passthrough.Load(), r.Log.Load(), r.Daemon.Load()
	return s
}
