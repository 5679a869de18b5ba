package journal

import (
	"fmt"
	"slices"
	"syscall"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
)

// commitLocked validates op against the model, copies it into the log,
// then applies it to the model, all under the model lock so that the log
// order is the order of the model's changes. The model changes only once
// the op is in the log: an op the log refuses (it failed, or it stopped
// while the op waited for space) leaves the model exactly as it was. It
// returns the LSN to force for the op to be durable. The caller holds fs.mu
// for writing.
func (fs *FS) commitLocked(op *meta.Op) (logbuf.LSN, error) {
	if fs.closed.Load() {
		return 0, syscall.EIO
	}
	if fs.opts.ReadOnly {
		return 0, syscall.EROFS
	}
	if err := fs.x.Failure(); err != nil {
		return 0, err
	}
	if err := fs.model.Validate(op); err != nil {
		return 0, err
	}
	var oldSize int64 = -1
	if in := fs.model.Inodes[op.Ino]; in != nil {
		oldSize = in.Size
	}
	region := op.Encode(make([]byte, 0, op.EncodedLen()))
	kept := *op
	if op.Type == meta.OpWrite {
		kept.Data = nil // the shadow needs no file bytes, and the caller owns them
	} else {
		kept.Data = slices.Clone(op.Data)
	}
	lsn, err := fs.x.Commit(fs.regions(op, region), &kept)
	if err != nil {
		if fs.items != nil {
			fs.items.Reset()
		}
		return 0, err
	}
	if err := fs.model.Apply(op); err != nil {
		// Validate said it would apply, and nothing changed the model
		// since: only a bug gets here, and the log now holds an op the
		// model refused, so nothing more may be logged.
		err = fmt.Errorf("the model refused %s after validating it: %w", op, err)
		fs.x.Fail(err)
		return 0, &xlog.FailedError{Reason: err}
	}
	if op.Type == meta.OpWrite {
		fs.loggedData.Add(uint64(len(op.Data)))
	}
	switch op.Type {
	case meta.OpCreate, meta.OpLink, meta.OpUnlink, meta.OpRmdir, meta.OpRename:
		fs.names.Add(1)
	}
	if fs.afterCommit != nil {
		fs.afterCommit(fs.x.LastCommitted(), op)
	}
	// Record what fsync and fdatasync of the inodes involved must force.
	for _, ino := range []meta.Ino{op.Ino, op.Parent, op.NewParent} {
		if ino == 0 {
			continue
		}
		f := fs.forces[ino]
		f.lsn = lsn
		if ino == op.Ino {
			in := fs.model.Inodes[ino]
			if op.Type == meta.OpCreate || in != nil && in.Size != oldSize || op.Data != nil || fs.zeroesLogged(op) || fs.supersedesLogged(op) {
				f.data = lsn
			}
		}
		fs.forces[ino] = f
	}
	return lsn, nil
}

// NamespaceGen counts the namespace changes committed since mount
// (creates, links, unlinks, rmdirs, renames): a directory listing taken
// when it had one value is the listing of now while it still has it.
func (fs *FS) NamespaceGen() uint64 { return fs.names.Load() }

// zeroesLogged reports whether op zeroes file bytes that only the log
// holds until a checkpoint: a hole punch or zero range in data-journal mode,
// which fdatasync must force like written bytes, or a replay of older
// logged bytes would bring the punched ones back.
func (fs *FS) zeroesLogged(op *meta.Op) bool {
	return fs.opts.Journal == JournalData && op.Type == meta.OpFallocate && op.Mode&(meta.FallocPunchHole|meta.FallocZeroRange) != 0
}

// supersedesLogged reports whether op, with immediate writes on, changes
// file bytes by other means than logging them (a write to the data file
// only, a hole punch or zero range): fdatasync must force it, or a replay
// would write older logged bytes over what it made durable (datafile/immediate.go).
func (fs *FS) supersedesLogged(op *meta.Op) bool {
	if fs.opts.Journal != JournalMeta || fs.opts.ImmediateWrite == 0 {
		return false
	}
	return op.Type == meta.OpWrite && op.Data == nil || op.Type == meta.OpFallocate && op.Mode&(meta.FallocPunchHole|meta.FallocZeroRange) != 0
}

// commit takes the model lock and commits op.
func (fs *FS) commit(op *meta.Op) (logbuf.LSN, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.commitLocked(op)
}
