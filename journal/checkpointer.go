package journal

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
)

// onDurable runs in the log writer after a sync, for each record made
// durable: the shadow model catches up with its transactions, and the
// checkpoint boundary moves.
func (fs *FS) onDurable(txns []xlog.Committed, bound xlog.Boundary) {
	fs.shadowMu.Lock()
	defer fs.shadowMu.Unlock()
	for _, t := range txns {
		op := t.Item.(*meta.Op)
		if err := fs.shadow.Apply(op); err != nil {
			// The live model accepted it; the same ops in the same
			// order cannot fail here unless memory is corrupt.
			panic(fmt.Sprintf("journal: shadow model rejected tid %#x %s: %v", t.TID, op, err))
		}
	}
	fs.bound = bound
}

func (fs *FS) requestCheckpoint() {
	select {
	case fs.ckptReq <- struct{}{}:
	default:
	}
}

// afterDurable runs in the log writer once records are durable: a freed
// inode's data file may go now that its free is (the checkpointer deletes
// it, reap).
func (fs *FS) afterDurable(durable logbuf.LSN) {
	if fs.files.Reapable(durable) {
		fs.wantReap()
	}
}

func (fs *FS) wantReap() {
	select {
	case fs.reapReq <- struct{}{}:
	default:
	}
}

// checkpointer takes the checkpoints, and deletes the data files of freed
// inodes as soon as their frees are durable, without waiting for one. A
// failed journal takes no more checkpoints, but what it freed durably
// still goes.
func (fs *FS) checkpointer() {
	defer close(fs.ckptDone)
	t := time.NewTicker(fs.opts.CheckpointInterval)
	defer t.Stop()
	for {
		select {
		case <-fs.ckptStop:
			return
		case <-fs.reapReq:
			fs.reap()
			continue
		case <-t.C:
		case <-fs.ckptReq:
		}
		if fs.x.Failure() == nil {
			fs.runCheckpoint()
		}
	}
}

// reap deletes the data files of the inodes whose free is durable. While
// checkpoints fail, it tries one again after deleting some: the space may
// be what it lacked (the disk under the store full).
func (fs *FS) reap() {
	fs.runMu.Lock() // not inside a runCheckpoint that needs what it reaps for its retry
	n := fs.reapFreed()
	fs.runMu.Unlock()
	if n > 0 && fs.ckptErr.Load() != nil && fs.x.Failure() == nil {
		fs.runCheckpoint()
	}
}

// runCheckpoint takes a checkpoint and deals with its failure. A failed
// checkpoint leaves the log as it was (the tail stays where the last good
// one put it), so the journal goes on while the log has room: State says
// "degraded", Logf says why, and the next checkpoint tries again. Freed
// inodes' data files are still deleted meanwhile, each as soon as its free
// is durable (reap; here too, after forcing the log), since that may be
// what gives the space back. The failure stops the journal only when it must:
// a transaction is waiting for log space that only a checkpoint can give,
// or (data journal) a data file could not be written back, which leaves
// the log as the only copy of its bytes.
func (fs *FS) runCheckpoint() {
	// Serialized whole, not only each checkpoint, and with the reaper's
	// reaps: otherwise one run's reap could take the freed inodes another
	// run's failure needs to retry with, and leave it reporting a failure
	// the first one fixed.
	fs.runMu.Lock()
	defer fs.runMu.Unlock()
	err := fs.checkpoint(false)
	if err != nil && fs.x.Failure() == nil {
		var wb *writebackError
		if errors.As(err, &wb) {
			fs.x.Fail(err)
			return
		}
		if prev := fs.ckptErr.Swap(&err); prev == nil || (*prev).Error() != err.Error() {
			fs.opts.Logf("checkpoint failed: %v; the log still has room, so the journal goes on, and the next checkpoint tries again", err)
		}
		if fs.x.ForceAll() == nil && fs.reapFreed() > 0 {
			err = fs.checkpoint(false)
		}
	}
	switch {
	case fs.x.Failure() != nil:
	case err == nil:
		if fs.ckptErr.Swap(nil) != nil {
			fs.opts.Logf("checkpoint succeeded again; the journal is back to normal")
		}
	case fs.x.SpaceWaiting():
		fs.x.Fail(fmt.Errorf("the log is full, and the checkpoint that would free it failed: %w", err))
	}
}

// writebackError is a data file that a data-journal checkpoint could not
// write back.
type writebackError struct{ err error }

func (e *writebackError) Error() string {
	return e.err.Error() + "; the log still holds those bytes: unmount and mount again to replay them"
}
func (e *writebackError) Unwrap() error { return e.err }

// failed runs once, when the log stops.
func (fs *FS) failed(reason error) {
	if fs.opts.OnFail != nil {
		fs.opts.OnFail(&xlog.FailedError{Reason: reason})
		return
	}
	fs.opts.Logf("journal failed: %v; no more changes are accepted (reads go on); "+
		"unmount, make room or fix the disk, and mount again to recover what the log holds", reason)
}

// State says how the journal is: "ok"; "degraded: checkpoint failed: ..."
// while checkpoints fail but the log still has room; "failed: <reason>"
// once it accepts no more changes (reads still work).
func (fs *FS) State() string {
	if err := fs.x.Failure(); err != nil {
		var f *xlog.FailedError
		if errors.As(err, &f) {
			err = f.Reason
		}
		return "failed: " + err.Error()
	}
	if e := fs.ckptErr.Load(); e != nil {
		return "degraded: checkpoint failed: " + (*e).Error()
	}
	return "ok"
}

// checkpoint writes the model as of the newest durable record and moves
// the log tail to it (the package documentation, Checkpoints and the
// tail). final (unmount) first forces everything.
// The order keeps the write-ahead rule: records durable, then the shadow's
// state and boundary taken together, then data files synced (every write
// the state includes was made to its data file before it committed), then
// the checkpoint file, and only then the tail. Then the data files of
// inodes freed durably are deleted, should the reaper not have yet.
func (fs *FS) checkpoint(final bool) error {
	fs.ckptMu.Lock()
	defer fs.ckptMu.Unlock()
	var err error
	if final {
		err = fs.x.ForceAll()
	} else {
		_, err = fs.x.SyncSwitched()
	}
	if err != nil {
		return err
	}
	fs.shadowMu.Lock()
	m, b := fs.shadow.Clone(), fs.bound
	fs.shadowMu.Unlock()
	if err := fs.syncDataFiles(); err != nil {
		return err
	}
	if err := fs.writeCheckpointFile(m, b); err != nil {
		return err
	}
	fs.x.MoveTail(b.Tail)
	fs.ckpts.Add(1)
	fs.reapFreed()
	return nil
}

func (fs *FS) writeCheckpointFile(m *meta.Model, b xlog.Boundary) error {
	fs.ckptSeq++
	fs.ckptSyncs.Add(2) // the file's fsync and the directory's
	err := store.WriteCheckpoint(fs.st, fs.dir, &store.Checkpoint{
		Seq: fs.ckptSeq, TailLSN: b.Tail.LSN(), LastTID: b.LastTID,
		LogBufs: fs.opts.LogBufs, LogBSize: fs.opts.LogBSize, Model: m,
	})
	if err != nil {
		// What a failed write left of the temporary file holds space a
		// full disk lacks. (After the rename there is none left.)
		fs.st.Remove(filepath.Join(fs.dir, store.CheckpointName+".tmp"))
	}
	return err
}

// syncDataFiles makes every data file written since the last checkpoint
// durable (datafile.Files.SyncDirty). In data-journal mode, and with
// immediate writes, a data file's failure is a writebackError, which stops
// the journal before a checkpoint can move the tail past the only copy of
// those bytes.
func (fs *FS) syncDataFiles() error {
	err := fs.files.SyncDirty()
	var se *datafile.SyncError
	if errors.As(err, &se) && (fs.opts.Journal == JournalData || fs.opts.ImmediateWrite > 0) {
		return &writebackError{err}
	}
	return err
}

// reapFreed deletes the data files of freed inodes whose free is durable
// and returns how many it deleted (datafile.Files.Reap).
func (fs *FS) reapFreed() int {
	_, _, _, durable := fs.x.SnapshotStats()
	return fs.files.Reap(durable)
}
