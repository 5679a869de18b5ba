package journal

import (
	"fmt"
	"maps"
	"slices"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/logbuf"
)

// Close checkpoints, writes the unmount record and stops the log: the next
// mount finds a clean log and replays nothing.
func (fs *FS) Close() error {
	// What the kernel wrote to data files still open (a lazy unmount)
	// goes into the log with the rest.
	fs.files.LearnAll()
	first, err := fs.unmount()
	if !first {
		return nil
	}
	// The data files close once the model lock is let go: an operation
	// waiting for it (a write's commit) holds its inode's lock, which
	// CloseAll takes, and now finds the journal closed.
	fs.files.CloseAll()
	if cerr := fs.x.Dev.Close(); err == nil {
		err = cerr
	}
	fs.lock.Close()
	return err
}

// unmount is Close under the model lock: the unlinked inodes freed, the
// final checkpoint, the unmount record, the log stopped. first is false if
// the journal was closed already.
func (fs *FS) unmount() (first bool, err error) {
	// No transaction from here on. The lock comes before the checkpointer
	// stops: a transaction waiting for log space holds it, and only a
	// checkpoint can let it finish.
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed.Load() {
		return false, nil
	}
	// Whoever held or had open the unlinked inodes is gone with the
	// mount: free them now, so the store is left without orphans. The
	// checkpointer still runs: a free that waits for log space needs a
	// checkpoint to make it.
	for _, ino := range slices.Sorted(maps.Keys(fs.model.Inodes)) {
		if fs.model.Inodes[ino].Nlink == 0 && ino != meta.RootIno && err == nil && !fs.opts.ReadOnly {
			op := meta.Op{Type: meta.OpFree, Ino: ino}
			var lsn logbuf.LSN
			if lsn, err = fs.commitLocked(&op); err == nil {
				fs.forget(ino, lsn)
			}
		}
	}
	close(fs.ckptStop)
	<-fs.ckptDone
	fs.forcer.Halt()
	fs.closed.Store(true)
	// A read-only mount changed nothing since its mount wrote its
	// checkpoint: the unmount record alone makes the log clean (and a
	// NoRecovery mount writes nothing, leaving the log as it found it).
	var ckptErr error
	if err == nil && !fs.opts.ReadOnly {
		ckptErr, err = fs.finalCheckpoint()
	}
	if err == nil && !fs.opts.NoRecovery {
		if err = fs.x.WriteUnmount(); err != nil && ckptErr != nil {
			err = fmt.Errorf("unmount: %w; and no unmount record either: %v", ckptErr, err)
		}
	}
	if err == nil && ckptErr != nil {
		fs.opts.Logf("unmount: %v; the log holds everything and ends with the unmount record: the next mount replays it from the last checkpoint", ckptErr)
	}
	fs.x.Stop()
	return true, err
}

// finalCheckpoint is the unmount's checkpoint: the log forced, the data
// files of the inodes freed meanwhile deleted (which may be what gives it
// room), then the checkpoint. One that fails for want of space while the
// log works is no reason to fail the unmount: the log holds everything, so
// it is returned as skipped, and the unmount record goes in after it. Any
// other failure is err.
func (fs *FS) finalCheckpoint() (skipped, err error) {
	if err := fs.x.ForceAll(); err != nil {
		return nil, err
	}
	fs.reapFreed()
	err = fs.checkpoint(true)
	if err != nil && isNoSpace(err) && fs.x.Failure() == nil {
		return err, nil
	}
	return nil, err
}

// Abandon stops the filesystem as a crash would: no checkpoint, no
// unmount record, nothing synced. For tests and for giving up after a
// failed log write.
func (fs *FS) Abandon() {
	if fs.closed.Swap(true) {
		return
	}
	close(fs.ckptStop)
	<-fs.ckptDone
	fs.forcer.Halt()
	fs.x.Stop()
	fs.files.CloseAll()
	fs.x.Dev.Close()
	fs.lock.Close()
}
