package datafile

import (
	"errors"
	"io"
	"syscall"
	"time"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/logbuf"
)

// Read reads from a regular file at off. Bytes past the data file's end
// but inside the file's size (a file extended by truncate) read as zeros,
// and so does a file without a data file yet: a read never creates one, so
// reads work on a full disk and on a journal that has stopped. A file
// whose data file lost durable bytes (missing.go) reads nothing: EIO.
func (f *Files) Read(ino meta.Ino, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	if _, err := f.regular(ino); err != nil {
		return 0, err
	}
	st := f.State(ino)
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := f.missingErr(ino, st); err != nil {
		return 0, err
	}
	defer st.doneWithFile()
	file, err := f.openFile(ino, st, false)
	size := f.size(ino)
	if err != nil || off >= size {
		return 0, err
	}
	n := int(min(int64(len(p)), size-off))
	var got int
	if file != nil {
		got, err = file.ReadAt(p[:n], off)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return n, err
	}
	clear(p[got:n])
	if f.cfg.Overlay != nil {
		f.cfg.Overlay.apply(ino, p[:n], off)
	}
	return n, nil
}

// Write writes p at off. The bytes go to the data file first (through
// O_DIRECT when direct is set and the write is aligned, see direct.go),
// then the transaction describing the write is committed — with the bytes
// too in data-journal mode, split into transactions of at most MaxTxn
// bytes. The inode's lock keeps data-file order and log order the same.
func (f *Files) Write(ino meta.Ino, p []byte, off int64, direct bool) (int, error) {
	if off < 0 || off+int64(len(p)) < off {
		return 0, syscall.EINVAL
	}
	if _, err := f.regular(ino); err != nil {
		return 0, err
	}
	if err := f.e.Refused(); err != nil {
		return 0, err // a stopped journal takes no change, not even to a data file
	}
	st := f.State(ino)
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := f.missingErr(ino, st); err != nil {
		return 0, err // its bytes are unknown: nothing is written over them
	}
	defer st.doneWithFile()
	file, err := f.fileToChange(ino, st)
	if err != nil {
		return 0, err
	}
	chunk := len(p)
	if f.cfg.LogData {
		chunk = f.cfg.MaxTxn
	}
	done := 0
	for done < len(p) || len(p) == 0 {
		piece := p[done:min(len(p), done+chunk)]
		n, werr := f.writeAt(ino, st, file, piece, off+int64(done), direct)
		f.MarkDirty(ino)
		// An immediate write's bytes go into the log (immediate.go):
		// its fsync needs the log alone, but a checkpoint syncs the
		// data file before the tail moves past them (MarkDirty). Never
		// while the inode's opens are passthrough ones (or may be, until
		// the kernel forgets it): replay must not write logged bytes
		// over the kernel's newer ones (route.go).
		logged := f.immediate(len(p)) && n > 0 && !st.passthroughKind()
		if !logged {
			st.dataDirty = true
		}
		if off+int64(done+n) > st.overwritable {
			st.allocDirty = true // past what was written in place
		}
		if (n > 0 || len(p) == 0) && (logged || !f.writeChangesNothing(ino, off+int64(done)+int64(n))) {
			op := meta.Op{Type: meta.OpWrite, Ino: ino, Off: off + int64(done), Len: int64(n), Ctime: fileTime()}
			if f.cfg.LogData || logged {
				op.Data = piece[:n]
			}
			if !logged {
				if err := f.syncBeforeSuperseding(st, file); err != nil {
					return done, shortWrite(done, err)
				}
			}
			lsn, err := f.e.Commit(&op)
			if err != nil {
				return done, shortWrite(done, err)
			}
			if logged {
				st.loggedLSN = lsn
			}
		}
		done += n
		st.hist.wrote(int64(n))
		if werr != nil {
			return done, shortWrite(done, werr)
		}
		if len(p) == 0 {
			break
		}
	}
	return done, nil
}

// shortWrite is what a write that failed after done bytes reports: like
// write(2), the bytes it wrote, if any (the caller's next write gets the
// error), else the error.
func shortWrite(done int, err error) error {
	if done > 0 {
		return nil
	}
	return err
}

// FileTimeStep is the granularity of the times writes set, as the coarse
// clock Linux stamps files with (one jiffy: 4 ms at HZ=250).
const FileTimeStep = 4 * time.Millisecond

// fileTime is the time a write stamps on a file.
func fileTime() int64 {
	now := store.NowNanos()
	return now - now%int64(FileTimeStep)
}

// writeChangesNothing reports whether a metadata-journal write ending at
// end leaves the inode as it is: inside the file, in the same time step as
// the last one. Then there is no transaction to log — the bytes are in the
// data file — which spares overwrite-heavy workloads (database pages) a
// transaction per write, as a local filesystem's coarse timestamps do. The
// caller holds the inode's lock, so the size cannot change meanwhile.
func (f *Files) writeChangesNothing(ino meta.Ino, end int64) bool {
	if f.cfg.LogData {
		return false // the bytes themselves must be logged
	}
	if f.cfg.ImmediateWrite > 0 {
		return false // it may supersede logged bytes, which replay must know (immediate.go)
	}
	t := fileTime()
	a, ok := f.e.Inode(ino)
	return ok && end <= a.Size && a.Mtime == t && a.Ctime == t
}

// changing takes ino's lock for a change of its data file by the journal
// (a truncate, a fallocate), unless the engine refuses changes or the
// inode's data is missing (missing.go; toZero: the change is a truncate to
// 0, which may go on): it first learns what the kernel did to the data
// file, and returns it with any cut a shrink owes made. done closes the
// data file again if nobody has the inode open, and drops the lock.
func (f *Files) changing(ino meta.Ino, toZero bool) (st *Inode, file store.StoreFile, done func(), err error) {
	if err := f.e.Refused(); err != nil {
		return nil, nil, nil, err // a change refused touches nothing
	}
	st = f.State(ino)
	st.mu.Lock()
	if err := f.missingErr(ino, st); err != nil && !toZero {
		st.mu.Unlock()
		return nil, nil, nil, err
	}
	done = func() {
		st.doneWithFile()
		st.mu.Unlock()
	}
	if err = f.learn(ino, st); err == nil {
		file, err = f.fileToChange(ino, st)
	}
	if err != nil {
		done()
		return nil, nil, nil, err
	}
	return st, file, done, nil
}

// Truncate sets the regular file ino's size. commit logs the setattr (the
// engine's, which may drop privileges with it) once the data file is ready
// for it: after the data file grew, before it shrinks.
//
// Either way the data file's new size is owed to the next fsync or
// fdatasync, like written bytes: a file cut and grown again must read back
// zeros, not what a lost cut of its data file left.
func (f *Files) Truncate(ino meta.Ino, size int64, commit func() (logbuf.LSN, error)) error {
	if _, err := f.regular(ino); err != nil {
		return err
	}
	if size < 0 {
		return syscall.EINVAL
	}
	st, file, done, err := f.changing(ino, size == 0)
	if err != nil {
		return err
	}
	defer done()
	defer f.afterChange(st, file)
	if st.dataMissing {
		// A truncate to 0 (changing refused any other): once it is
		// done the file is whole again, empty.
		if err := f.shrink(ino, st, file, size, commit); err != nil {
			return err
		}
		st.dataMissing = false
		return nil
	}
	if size < f.size(ino) {
		return f.shrink(ino, st, file, size, commit)
	}
	if err := file.Truncate(size); err != nil {
		return err
	}
	f.MarkDirty(ino)
	st.dataDirty = true
	_, err = commit()
	return err
}

// shrink is Truncate to a smaller size. Shrinking destroys data the log
// cannot bring back (in data mode too: what the last checkpoint wrote back
// is only in the data file), so the new size is made durable first: a
// crash never recovers the old size over a data file that lost its end. No
// checkpoint may come between that force and the cut: it would move the
// tail past the shrink while the data file still held the old end, and a
// crash that lost the cut would bring those bytes back inside the file once
// a later write extends it. Once the new size is durable the shrink has
// happened, even if the cut fails: reads stop at the size, and the cut is
// owed to whatever changes the file next (or to the next mount).
//
// The force and the cut run between checkpoints (Engine.BetweenCheckpoints),
// which cannot begin before the commit (a commit may wait
// for log space, which only a checkpoint frees), so a checkpoint can still
// slip in after the commit, if another force makes the shrink durable
// first. Then its tail is already past the shrink, and the cut is made
// durable here, before the inode can change again; in data mode no later
// fsync would sync it. The caller holds st.mu.
func (f *Files) shrink(ino meta.Ino, st *Inode, file store.StoreFile, size int64, commit func() (logbuf.LSN, error)) error {
	ckpts := f.e.Checkpoints()
	a, _ := f.e.Inode(ino)
	follows := a.SizeFollows // the shrink's commit clears the mark
	remark := false
	lsn, err := commit()
	if err == nil {
		err = f.e.BetweenCheckpoints(func() error {
			if err := f.e.Force(lsn); err != nil {
				return err
			}
			if terr := file.Truncate(size); terr != nil {
				st.cutOwed = true
				f.cfg.Logf("cutting the data file of inode %d to %d bytes: %v (tried again before it next changes)", ino, size, terr)
			}
			f.MarkDirty(ino)
			st.dataDirty = true
			switch {
			case follows && st.cutOwed:
				// Recovery keeps a marked inode's longer data
				// file: until the cut is made, a crash brings the
				// old end back.
				return syscall.EIO // the cut's failure is logged above
			case follows:
				// The kernel writes the data file in passthrough,
				// and recovery keeps its size if larger
				// (passthrough.go): the cut is durable before the
				// shrink is acknowledged, and the mark, which the
				// shrink cleared, is set again below.
				err := f.syncLocked(ino, st)
				remark = err == nil
				return err
			case f.e.Checkpoints() != ckpts && !st.cutOwed:
				return f.syncLocked(ino, st)
			case !st.cutOwed:
				// Replay drops logged bytes past the cut
				// (immediate.go): the cut must be durable before
				// the file can grow again.
				return f.syncBeforeSuperseding(st, file)
			}
			return nil
		})
	}
	if remark {
		// The logged shrink cleared the inode's mark, so a crash before
		// the cut was durable recovers the logged size and cuts the data
		// file to it, whatever of the cut the data file kept (recovery
		// keeps only a marked inode's longer data file). Now that the cut
		// is durable, the open writers' synchronous appends need the mark
		// again, durable before the shrink returns. (Committed after
		// BetweenCheckpoints returned: a commit may wait for log space.)
		if err = f.markSizeFollows(ino, st, true); err == nil {
			err = f.e.Force(st.MarkLSN())
		}
	}
	return err
}

// Fallocate preallocates, punches a hole or zeroes a range (fallocate(2)
// modes FallocKeepSize, FallocPunchHole, FallocZeroRange) of the regular
// file ino.
func (f *Files) Fallocate(ino meta.Ino, mode uint32, off, length int64) error {
	if _, err := f.regular(ino); err != nil {
		return err
	}
	if off < 0 || length <= 0 {
		return syscall.EINVAL
	}
	// As vfs_fallocate: only these modes; a punch keeps the size, and a
	// punch and a zero range exclude each other.
	punch, zero := mode&meta.FallocPunchHole != 0, mode&meta.FallocZeroRange != 0
	if mode&^(meta.FallocKeepSize|meta.FallocPunchHole|meta.FallocZeroRange) != 0 || punch && mode&meta.FallocKeepSize == 0 || punch && zero {
		return syscall.EOPNOTSUPP
	}
	st, file, done, err := f.changing(ino, false)
	if err != nil {
		return err
	}
	defer done()
	if err := file.Allocate(mode, off, length); err != nil {
		return err
	}
	if mode&(meta.FallocPunchHole|meta.FallocZeroRange) != 0 {
		if err := f.syncBeforeSuperseding(st, file); err != nil {
			return err
		}
	}
	f.afterChange(st, file)
	f.MarkDirty(ino)
	st.dataDirty = true
	op := meta.Op{Type: meta.OpFallocate, Ino: ino, Mode: mode, Off: off, Len: length, Ctime: fileTime()}
	_, err = f.e.Commit(&op)
	return err
}
