package journal

import (
	"errors"
	"io"
	"maps"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/logbuf"
)

// Attr is what stat(2) reports about an inode.
type Attr struct {
	Ino                 meta.Ino
	Mode                uint32
	Nlink               uint32
	UID, GID            uint32
	Size                int64
	Rdev                uint32
	Atime, Mtime, Ctime int64 // ns since the epoch
}

func attrOf(in *meta.Inode) Attr {
	return Attr{Ino: in.Ino, Mode: in.Mode, Nlink: in.Nlink, UID: in.UID, GID: in.GID, Size: in.Size,
		Rdev: in.Rdev, Atime: in.Atime, Mtime: in.Mtime, Ctime: in.Ctime}
}

// DirEntry is one directory entry.
type DirEntry struct {
	Name string
	Ino  meta.Ino
	Mode uint32
}

// GetAttr returns an inode's attributes.
func (fs *FS) GetAttr(ino meta.Ino) (Attr, error) {
	// A journal that cannot commit what it learned still answers, from
	// the model.
	fs.learnIfStale(ino)
	return fs.attr(ino)
}

// attr returns an inode's attributes as the model has them.
func (fs *FS) attr(ino meta.Ino) (Attr, error) {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	in := fs.model.Inodes[ino]
	if in == nil {
		return Attr{}, syscall.ENOENT
	}
	return attrOf(in), nil
}

// Lookup finds name in directory parent.
func (fs *FS) Lookup(parent meta.Ino, name string) (Attr, error) {
	fs.mu.RLock()
	in, err := fs.model.Lookup(parent, name)
	var a Attr
	if err == nil {
		a = attrOf(in)
	}
	fs.mu.RUnlock()
	if err != nil || fs.ptLive.Load() == 0 || a.Mode&meta.ModeType != meta.ModeReg {
		return a, err
	}
	// The kernel takes the size in the answer for the file's: it must
	// include what the kernel wrote to the data file itself.
	fs.learnIfStale(a.Ino)
	if a2, err := fs.attr(a.Ino); err == nil {
		a = a2
	}
	return a, nil
}

// Create makes a new inode named name in parent: a regular file,
// directory, symlink (target set) or special node, by mode's type bits.
func (fs *FS) Create(parent meta.Ino, name string, mode, uid, gid, rdev uint32, target string) (Attr, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	op := meta.Op{Type: meta.OpCreate, Parent: parent, Name: name, Ino: fs.model.NextIno, Mode: mode,
		UID: uid, GID: gid, Rdev: rdev, Target: target, Ctime: store.NowNanos()}
	if _, err := fs.commitLocked(&op); err != nil {
		return Attr{}, errno(err)
	}
	return attrOf(fs.model.Inodes[op.Ino]), nil
}

// Link adds the name parent/name for ino.
func (fs *FS) Link(ino, parent meta.Ino, name string) (Attr, error) {
	fs.learnIfStale(ino)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	op := meta.Op{Type: meta.OpLink, Ino: ino, Parent: parent, Name: name, Ctime: store.NowNanos()}
	if _, err := fs.commitLocked(&op); err != nil {
		return Attr{}, errno(err)
	}
	return attrOf(fs.model.Inodes[ino]), nil
}

// Unlink removes parent/name, which is not a directory. An inode losing
// its last link is freed now unless it is in use (open, or held by the
// kernel); then its last Release or Unhold frees it.
func (fs *FS) Unlink(parent meta.Ino, name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	in, err := fs.model.Lookup(parent, name)
	if err != nil {
		return err
	}
	op := meta.Op{Type: meta.OpUnlink, Parent: parent, Name: name, Ctime: store.NowNanos(), Free: in.Nlink == 1 && !fs.inUse(in.Ino)}
	return fs.commitRemoval(&op, in.Ino)
}

// Rmdir removes the empty directory parent/name.
func (fs *FS) Rmdir(parent meta.Ino, name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	in, err := fs.model.Lookup(parent, name)
	if err != nil {
		return err
	}
	op := meta.Op{Type: meta.OpRmdir, Parent: parent, Name: name, Ctime: store.NowNanos(), Free: !fs.inUse(in.Ino)}
	return fs.commitRemoval(&op, in.Ino)
}

// Rename moves oldParent/oldName to newParent/newName (renameat2 flags:
// RenameNoReplace, RenameExchange).
func (fs *FS) Rename(oldParent meta.Ino, oldName string, newParent meta.Ino, newName string, flags uint32) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	op := meta.Op{Type: meta.OpRename, Parent: oldParent, Name: oldName, NewParent: newParent, NewName: newName, Flags: flags, Ctime: store.NowNanos()}
	var victim meta.Ino
	if flags&meta.RenameExchange == 0 {
		src, err := fs.model.Lookup(oldParent, oldName)
		if err != nil {
			return err
		}
		if dst, err := fs.model.Lookup(newParent, newName); err == nil && dst.Ino != src.Ino {
			victim = dst.Ino
			op.Free = (dst.IsDir() || dst.Nlink == 1) && !fs.inUse(dst.Ino)
		}
	}
	return fs.commitRemoval(&op, victim)
}

// commitRemoval commits an op that may free ino; a freed inode's data
// file goes once the free is durable.
func (fs *FS) commitRemoval(op *meta.Op, ino meta.Ino) error {
	lsn, err := fs.commitLocked(op)
	if err != nil {
		return errno(err)
	}
	if op.Free && ino != 0 {
		fs.forget(ino, lsn)
		if fs.ckptErr.Load() != nil {
			// Checkpoints are failing, maybe for want of the space
			// this frees: try one now, which deletes the data file
			// first.
			fs.requestCheckpoint()
		}
	} else if in := fs.model.Inodes[ino]; in != nil && in.Nlink == 0 {
		fs.unlinked[ino] = true
	}
	return nil
}

// forget drops a freed inode's state and schedules its data file for
// deletion once the free at lsn is durable.
func (fs *FS) forget(ino meta.Ino, lsn logbuf.LSN) {
	fs.statesMu.Lock()
	if st := fs.states[ino]; st != nil {
		st.closeFiles()
	}
	delete(fs.states, ino)
	fs.statesMu.Unlock()
	delete(fs.unlinked, ino) // the caller holds fs.mu
	fs.freedMu.Lock()
	fs.freed = append(fs.freed, freedInode{ino: ino, lsn: lsn})
	fs.freedMu.Unlock()
}

// inUse reports whether an inode is open or held: then losing its last
// link does not free it; its last Release or Unhold does.
func (fs *FS) inUse(ino meta.Ino) bool {
	st := fs.existingState(ino)
	return st != nil && (st.opens.Load() > 0 || st.holds.Load() > 0)
}

// existingState returns the per-inode state if there is one.
func (fs *FS) existingState(ino meta.Ino) *inodeState {
	fs.statesMu.Lock()
	defer fs.statesMu.Unlock()
	return fs.states[ino]
}

// Readlink returns a symlink's target.
func (fs *FS) Readlink(ino meta.Ino) (string, error) {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	in := fs.model.Inodes[ino]
	switch {
	case in == nil:
		return "", syscall.ENOENT
	case in.Mode&meta.ModeType != meta.ModeLink:
		return "", syscall.EINVAL
	}
	return in.Target, nil
}

// ReadDir lists a directory, sorted by name (without "." and "..").
func (fs *FS) ReadDir(ino meta.Ino) ([]DirEntry, error) {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	d, err := fs.model.Dir(ino)
	if err != nil {
		return nil, err
	}
	out := make([]DirEntry, 0, len(d.Entries))
	for _, name := range slices.Sorted(maps.Keys(d.Entries)) {
		e := d.Entries[name]
		out = append(out, DirEntry{Name: name, Ino: e, Mode: fs.model.Inodes[e].Mode})
	}
	return out, nil
}

// Parent returns the parent of directory ino (itself for the root).
func (fs *FS) Parent(ino meta.Ino) (meta.Ino, error) {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	d, err := fs.model.Dir(ino)
	if err != nil {
		return 0, err
	}
	return d.Parent, nil
}

// Open counts an open of ino: an unlinked inode lives until its last
// Release. The check and the count happen under the model lock, so an
// unlink or rename either sees the open or happens before it (ENOENT).
func (fs *FS) Open(ino meta.Ino) error {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	if fs.model.Inodes[ino] == nil {
		return syscall.ENOENT
	}
	fs.state(ino).opens.Add(1)
	return nil
}

// Release undoes an Open. The last release of an unlinked, unheld inode
// frees it.
func (fs *FS) Release(ino meta.Ino) error {
	st := fs.existingState(ino)
	if st == nil {
		return nil
	}
	if st.opens.Add(-1) <= 0 {
		st.opens.Store(0)
		st.mu.Lock()
		st.doneWithFile()
		st.mu.Unlock()
	}
	return fs.maybeFree(ino)
}

// Hold records that the caller keeps a reference to ino — fusefs holds
// every inode the kernel knows, until the kernel forgets it — so that an
// unlinked file or removed directory still reachable through an open
// descriptor or a cached inode keeps answering (with nlink 0), as on any
// local filesystem.
func (fs *FS) Hold(ino meta.Ino) {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	if fs.model.Inodes[ino] != nil {
		fs.state(ino).holds.Add(1)
	}
}

// Unhold drops a Hold; the last reference to an unlinked inode frees it.
func (fs *FS) Unhold(ino meta.Ino) error {
	st := fs.existingState(ino)
	if st == nil {
		return nil
	}
	if st.holds.Add(-1) < 0 {
		st.holds.Store(0)
	}
	return fs.maybeFree(ino)
}

// maybeFree frees ino if it has no links and nobody uses it.
func (fs *FS) maybeFree(ino meta.Ino) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	in := fs.model.Inodes[ino]
	if in == nil || in.Nlink > 0 || ino == meta.RootIno || fs.inUse(ino) {
		return nil
	}
	op := meta.Op{Type: meta.OpFree, Ino: ino}
	lsn, err := fs.commitLocked(&op)
	if err != nil {
		return errno(err)
	}
	fs.forget(ino, lsn)
	return nil
}

// CreateTmpfile makes a regular file with no name (O_TMPFILE), open once:
// its Release frees it unless Link gave it a name meanwhile.
func (fs *FS) CreateTmpfile(parent meta.Ino, mode, uid, gid uint32) (Attr, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	op := meta.Op{Type: meta.OpCreate, Parent: parent, Ino: fs.model.NextIno, Mode: mode&^meta.ModeType | meta.ModeReg,
		UID: uid, GID: gid, Ctime: store.NowNanos()}
	if _, err := fs.commitLocked(&op); err != nil {
		return Attr{}, errno(err)
	}
	fs.state(op.Ino).opens.Add(1)
	fs.unlinked[op.Ino] = true
	return attrOf(fs.model.Inodes[op.Ino]), nil
}

// dataFile returns the open data file of a regular file, opening (and
// creating) it as needed. The caller holds st.mu.
func (fs *FS) dataFile(ino meta.Ino, st *inodeState) (store.StoreFile, error) {
	return fs.openDataFile(ino, st, true)
}

// dataFileToChange is dataFile for an op about to change the data file: a
// cut a shrink still owes is made first, so bytes past the file's end never
// come back inside it.
func (fs *FS) dataFileToChange(ino meta.Ino, st *inodeState) (store.StoreFile, error) {
	f, err := fs.dataFile(ino, st)
	if err == nil && st.cutOwed {
		if err = f.Truncate(fs.size(ino)); err == nil {
			st.cutOwed = false
			st.allocDirty = true
			st.dataDirty = true
			fs.markDirty(ino)
			err = fs.syncBeforeSuperseding(st, f)
		}
	}
	return f, err
}

// openDataFile is dataFile; without create, a missing data file is (nil,
// nil): the file has no bytes written yet.
func (fs *FS) openDataFile(ino meta.Ino, st *inodeState, create bool) (store.StoreFile, error) {
	if st.file != nil {
		return st.file, nil
	}
	f, err := fs.st.OpenFile(fs.dataPath(ino), fs.dataOpenFlag(), 0)
	if errors.Is(err, os.ErrNotExist) {
		if !create {
			return nil, nil
		}
		f, err = fs.st.OpenFile(fs.dataPath(ino), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		st.newFile = err == nil
	}
	if err != nil {
		return nil, err
	}
	st.file = f
	return f, nil
}

// doneWithFile closes the data file again if nobody has the inode open.
func (st *inodeState) doneWithFile() {
	if st.opens.Load() == 0 {
		st.closeFiles()
	}
}

// regular returns ino's inode if it is a regular file.
func (fs *FS) regular(ino meta.Ino) (*meta.Inode, error) {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	in := fs.model.Inodes[ino]
	switch {
	case in == nil:
		return nil, syscall.ENOENT
	case in.IsDir():
		return nil, syscall.EISDIR
	case !in.IsRegular():
		return nil, syscall.EINVAL
	}
	return in, nil
}

func (fs *FS) size(ino meta.Ino) int64 {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	if in := fs.model.Inodes[ino]; in != nil {
		return in.Size
	}
	return 0
}

// sizeFollows reports whether ino is marked: its size follows its data
// file at recovery (passthrough.go).
func (fs *FS) sizeFollows(ino meta.Ino) bool {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	in := fs.model.Inodes[ino]
	return in != nil && in.SizeFollows
}

// Read reads from a regular file at off. Bytes past the data file's end
// but inside the file's size (a file extended by truncate) read as zeros,
// and so does a file without a data file yet: a read never creates one, so
// reads work on a full disk and on a journal that has stopped.
func (fs *FS) Read(ino meta.Ino, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	if _, err := fs.regular(ino); err != nil {
		return 0, err
	}
	st := fs.state(ino)
	st.mu.Lock()
	f, err := fs.openDataFile(ino, st, false)
	size := fs.size(ino)
	if err == nil && off < size {
		n := int(min(int64(len(p)), size-off))
		var got int
		if f != nil {
			got, err = f.ReadAt(p[:n], off)
		}
		if errors.Is(err, io.EOF) || err == nil {
			clear(p[got:n])
			err = nil
			if fs.overlay != nil {
				fs.overlay.apply(ino, p[:n], off)
			}
		}
		st.doneWithFile()
		st.mu.Unlock()
		return n, errno(err)
	}
	st.doneWithFile()
	st.mu.Unlock()
	return 0, errno(err)
}

// Write writes p at off. The bytes go to the data file first, then the
// transaction describing the write is committed — with the bytes too in
// data-journal mode, split into transactions of at most maxTxn bytes. The
// inode's lock keeps data-file order and log order the same.
func (fs *FS) Write(ino meta.Ino, p []byte, off int64) (int, error) {
	return fs.write(ino, p, off, false)
}

// WriteDirect is Write for a file opened with O_DIRECT: aligned writes go
// to the data file with O_DIRECT too (see direct.go).
func (fs *FS) WriteDirect(ino meta.Ino, p []byte, off int64) (int, error) {
	return fs.write(ino, p, off, true)
}

func (fs *FS) write(ino meta.Ino, p []byte, off int64, direct bool) (int, error) {
	if off < 0 || off+int64(len(p)) < off {
		return 0, syscall.EINVAL
	}
	if _, err := fs.regular(ino); err != nil {
		return 0, err
	}
	if err := fs.changeRefused(); err != nil {
		return 0, errno(err) // a stopped journal takes no change, not even to a data file
	}
	st := fs.state(ino)
	st.mu.Lock()
	defer st.mu.Unlock()
	defer st.doneWithFile()
	f, err := fs.dataFileToChange(ino, st)
	if err != nil {
		return 0, errno(err)
	}
	chunk := len(p)
	if fs.opts.Journal == JournalData {
		chunk = fs.maxTxn
	}
	done := 0
	for done < len(p) || len(p) == 0 {
		piece := p[done:min(len(p), done+chunk)]
		n, werr := fs.writeAt(ino, st, f, piece, off+int64(done), direct)
		fs.markDirty(ino)
		// An immediate write's bytes go into the log (immediate.go):
		// its fsync needs the log alone, but a checkpoint syncs the
		// data file before the tail moves past them (markDirty).
		logged := fs.immediate(len(p)) && n > 0
		if !logged {
			st.dataDirty = true
		}
		if off+int64(done+n) > st.overwritable {
			st.allocDirty = true // past what was written in place
		}
		if (n > 0 || len(p) == 0) && (logged || !fs.writeChangesNothing(ino, off+int64(done)+int64(n))) {
			op := meta.Op{Type: meta.OpWrite, Ino: ino, Off: off + int64(done), Len: int64(n), Ctime: fileTime()}
			if fs.opts.Journal == JournalData || logged {
				op.Data = piece[:n]
			}
			if !logged {
				if err := fs.syncBeforeSuperseding(st, f); err != nil {
					return done, shortWrite(done, err)
				}
			}
			lsn, err := fs.commit(&op)
			if err != nil {
				return done, shortWrite(done, err)
			}
			if logged {
				st.loggedLSN = lsn
			}
		}
		done += n
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
	return errno(err)
}

// fileTimeStep is the granularity of the times writes set, as the coarse
// clock Linux stamps files with (one jiffy: 4 ms at HZ=250).
const fileTimeStep = 4 * time.Millisecond

// fileTime is the time a write stamps on a file.
func fileTime() int64 {
	now := store.NowNanos()
	return now - now%int64(fileTimeStep)
}

// writeChangesNothing reports whether a metadata-journal write ending at
// end leaves the inode as it is: inside the file, in the same time step as
// the last one. Then there is no transaction to log — the bytes are in the
// data file — which spares overwrite-heavy workloads (database pages) a
// transaction per write, as a local filesystem's coarse timestamps do. The
// caller holds the inode's lock, so the size cannot change meanwhile.
func (fs *FS) writeChangesNothing(ino meta.Ino, end int64) bool {
	if fs.opts.Journal != JournalMeta {
		return false // the bytes themselves must be logged
	}
	if fs.opts.ImmediateWrite > 0 {
		return false // it may supersede logged bytes, which replay must know (immediate.go)
	}
	t := fileTime()
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	in := fs.model.Inodes[ino]
	return in != nil && end <= in.Size && in.Mtime == t && in.Ctime == t
}

// SetAttrIn says which attributes SetAttr changes (Mask) and to what.
type SetAttrIn struct {
	Mask         uint32 // SetMode, SetUID, SetGID, SetSize, SetAtime, SetMtime
	Mode         uint32
	UID, GID     uint32
	Size         int64
	Atime, Mtime int64
	// Kill drops set-ID bits and capabilities with the change (see
	// KillPriv): a truncate by a caller without CAP_FSETID, a chown.
	Kill KillPriv
}

// SetAttr changes attributes; SetSize truncates or extends a regular file.
func (fs *FS) SetAttr(ino meta.Ino, in SetAttrIn) (Attr, error) {
	op := meta.Op{Type: meta.OpSetattr, Ino: ino, Mask: in.Mask, Mode: in.Mode, UID: in.UID, GID: in.GID,
		Size: in.Size, Atime: in.Atime, Mtime: in.Mtime, Ctime: store.NowNanos()}
	if in.Mask&meta.SetSize == 0 {
		// Learned first: a later learn must not take the kernel's
		// earlier write for newer than this change (a utimes after
		// the write, as tar and cp -p make).
		if err := fs.learnIfStale(ino); err != nil {
			return Attr{}, errno(err)
		}
		if _, err := fs.commitSetattr(&op, in.Kill); err != nil {
			return Attr{}, errno(err)
		}
		return fs.attr(ino)
	}
	if _, err := fs.regular(ino); err != nil {
		return Attr{}, err
	}
	if in.Size < 0 {
		return Attr{}, syscall.EINVAL
	}
	if err := fs.changeRefused(); err != nil {
		return Attr{}, errno(err)
	}
	st := fs.state(ino)
	st.mu.Lock()
	defer st.mu.Unlock()
	defer st.doneWithFile()
	if err := fs.learn(ino, st); err != nil {
		return Attr{}, errno(err)
	}
	f, err := fs.dataFileToChange(ino, st)
	if err != nil {
		return Attr{}, errno(err)
	}
	defer fs.afterChange(st, f)
	// Either way the data file's new size is owed to the next fsync or
	// fdatasync, like written bytes: a file cut and grown again must read
	// back zeros, not what a lost cut of its data file left.
	if in.Size < fs.size(ino) {
		// Shrinking destroys data the log cannot bring back (in data
		// mode too: what the last checkpoint wrote back is only in the
		// data file), so the new size is made durable first: a crash
		// never recovers the old size over a data file that lost its
		// end. No checkpoint may come between that force and the cut:
		// it would move the tail past the shrink while the data file
		// still held the old end, and a crash that lost the cut would
		// bring those bytes back inside the file once a later write
		// extends it. Once the new size is durable the shrink has
		// happened, even if the cut fails: reads stop at the size, and
		// the cut is owed to whatever changes the file next (or to the
		// next mount).
		//
		// The checkpoint lock cannot be taken before the commit (a commit
		// may wait for log space, which only a checkpoint frees), so a
		// checkpoint can still slip in after the commit, if another force
		// makes the shrink durable first. Then its tail is already past
		// the shrink, and the cut is made durable here, before the inode
		// can change again; in data mode no later fsync would sync it.
		ckpts := fs.ckpts.Load()
		follows := fs.sizeFollows(ino) // the shrink's commit clears the mark
		remark := false
		lsn, err := fs.commitSetattr(&op, in.Kill)
		if err == nil {
			fs.ckptMu.Lock()
			err = fs.x.Force(lsn)
			if err == nil {
				if terr := f.Truncate(in.Size); terr != nil {
					st.cutOwed = true
					fs.opts.Logf("cutting the data file of inode %d to %d bytes: %v (tried again before it next changes)", ino, in.Size, terr)
				}
				fs.markDirty(ino)
				st.dataDirty = true
				switch {
				case follows && st.cutOwed:
					// Recovery keeps a marked inode's
					// longer data file: until the cut is
					// made, a crash brings the old end back.
					err = syscall.EIO // the cut's failure is logged above
				case follows:
					// The kernel writes the data file in
					// passthrough, and recovery keeps its
					// size if larger (passthrough.go): the
					// cut is durable before the shrink is
					// acknowledged, and the mark, which the
					// shrink cleared, is set again below.
					err = fs.syncDataLocked(ino, st)
					remark = err == nil
				case fs.ckpts.Load() != ckpts && !st.cutOwed:
					err = fs.syncDataLocked(ino, st)
				case !st.cutOwed:
					// Replay drops logged bytes past the cut
					// (immediate.go): the cut must be durable
					// before the file can grow again.
					err = fs.syncBeforeSuperseding(st, f)
				}
			}
			fs.ckptMu.Unlock()
		}
		if remark {
			// The logged shrink cleared the inode's mark, so a crash
			// before the cut was durable recovers the logged size
			// and cuts the data file to it, whatever of the cut the
			// data file kept (recovery keeps only a marked inode's
			// longer data file). Now that the cut is durable, the
			// open writers' synchronous appends need the mark again,
			// durable before the shrink returns. (Committed outside
			// the checkpoint lock: a commit may wait for log space.)
			if err = fs.markSizeFollows(ino, st, true); err == nil {
				err = fs.x.Force(logbuf.LSN(st.markLSN.Load()))
			}
		}
		if err != nil {
			return Attr{}, errno(err)
		}
		return fs.attr(ino)
	}
	if err := f.Truncate(in.Size); err != nil {
		return Attr{}, errno(err)
	}
	fs.markDirty(ino)
	st.dataDirty = true
	if _, err := fs.commitSetattr(&op, in.Kill); err != nil {
		return Attr{}, errno(err)
	}
	return fs.attr(ino)
}

// Fallocate preallocates, punches a hole or zeroes a range (fallocate(2)
// modes FallocKeepSize, FallocPunchHole, FallocZeroRange).
func (fs *FS) Fallocate(ino meta.Ino, mode uint32, off, length int64) error {
	if _, err := fs.regular(ino); err != nil {
		return err
	}
	if off < 0 || length <= 0 {
		return syscall.EINVAL
	}
	if mode&^(meta.FallocKeepSize|meta.FallocPunchHole|meta.FallocZeroRange) != 0 || mode&meta.FallocPunchHole != 0 && mode&meta.FallocKeepSize == 0 {
		return syscall.EOPNOTSUPP
	}
	if err := fs.changeRefused(); err != nil {
		return errno(err)
	}
	st := fs.state(ino)
	st.mu.Lock()
	defer st.mu.Unlock()
	defer st.doneWithFile()
	if err := fs.learn(ino, st); err != nil {
		return errno(err)
	}
	f, err := fs.dataFileToChange(ino, st)
	if err != nil {
		return errno(err)
	}
	if err := f.Allocate(mode, off, length); err != nil {
		return errno(err)
	}
	if mode&(meta.FallocPunchHole|meta.FallocZeroRange) != 0 {
		if err := fs.syncBeforeSuperseding(st, f); err != nil {
			return errno(err)
		}
	}
	fs.afterChange(st, f)
	fs.markDirty(ino)
	st.dataDirty = true
	op := meta.Op{Type: meta.OpFallocate, Ino: ino, Mode: mode, Off: off, Len: length, Ctime: fileTime()}
	_, err = fs.commit(&op)
	return errno(err)
}

// Fsync makes ino durable: in meta mode its data file first, then the log
// up to the inode's newest transaction (for fdatasync, the newest one that
// matters for reading the data back: size changes, logged bytes). Concurrent
// fsyncs share one log force.
func (fs *FS) Fsync(ino meta.Ino, datasync bool) error {
	start := time.Now()
	defer func() { fs.recordFsync(time.Since(start)) }()
	fs.mu.RLock()
	in := fs.model.Inodes[ino]
	fs.mu.RUnlock()
	if in == nil {
		return syscall.ENOENT
	}
	st := fs.state(ino)
	if in.IsRegular() {
		// What the kernel wrote to the data file itself is logged
		// first, so the force below covers its size.
		if err := fs.learnIfStale(ino); err != nil {
			return errno(err)
		}
	}
	fs.mu.RLock()
	lsn := st.lsn
	if datasync {
		lsn = st.dataLSN
	}
	fs.mu.RUnlock()
	// In meta mode the data file's sync and the log force are both owed
	// before fsync returns, and neither needs the other first: run them
	// side by side, so an fsync costs one device flush of latency, not two.
	// Better still, when the data file needs no metadata (an overwrite of
	// blocks it had when last synced, at the same size), write its data
	// back without a flush and let the log force's flush cover it: one
	// device flush in all.
	var dataErr error
	started := false
	if fs.opts.Journal == JournalMeta && in.IsRegular() {
		dirty, lost := st.dataState()
		switch {
		case lost != nil:
			dataErr = lost
		case !dirty:
		case fs.writeBack(st):
			return errno(fs.x.ForceFlush(lsn))
		default:
			// The log writer starts on the force while this
			// goroutine syncs the data file.
			fs.x.StartForce(lsn)
			started = true
			dataErr = fs.syncData(ino, st)
		}
	}
	logErr := fs.x.ForceWait(lsn, !started)
	if dataErr != nil {
		return errno(dataErr)
	}
	return errno(logErr)
}

// writeBack writes an overwrite's data back without a flush (Writeback)
// if the data file allows it: the filesystem under the store covers data
// files with the log's flushes (flushCovers), nothing changed the data
// file's allocation or size since its last fdatasync, its name is durable,
// and all of it was written in place then (Overwritable). It reports
// whether it did; a write-back that fails is remembered as a failed sync.
func (fs *FS) writeBack(st *inodeState) bool {
	if !fs.flushCovers {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.file == nil || st.allocDirty || st.newFile || st.dataErr != nil || !st.unsynced() {
		return false
	}
	s, err := st.file.Stat()
	if err != nil || s.Size != st.syncedSize || s.Size > st.overwritable {
		return false
	}
	fs.syncs.writeback.Add(1)
	if err := st.file.Writeback(); err != nil {
		st.dataErr = err
		return false // fsync then reports it, as a failed fdatasync
	}
	st.dataDirty = false
	return true
}

// dataState reports whether the data file has unsynced writes, and the
// error of a sync that failed, after which its data may be lost.
func (st *inodeState) dataState() (dirty bool, lost error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.unsynced(), st.dataErr
}

// unsynced reports whether the data file may hold writes not yet synced:
// the journal's own, or the kernel's through an open that writes the data
// file directly (which the journal cannot see, so it syncs at every fsync
// while one is open). The caller holds st.mu.
func (st *inodeState) unsynced() bool { return st.dataDirty || st.ptWriters.Load() > 0 }

// syncData makes a data file's written bytes, and its name in the data
// directory if it is new, durable. A failed sync is remembered: the
// kernel marks the pages clean after a writeback error, so a retry would
// succeed without writing them, and every later fsync of the inode must
// report the loss instead.
func (fs *FS) syncData(ino meta.Ino, st *inodeState) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return fs.syncDataLocked(ino, st)
}

// syncDataLocked is syncData for a caller holding st.mu.
func (fs *FS) syncDataLocked(ino meta.Ino, st *inodeState) error {
	if st.dataErr != nil {
		return st.dataErr
	}
	if !st.unsynced() {
		return nil
	}
	var err error
	if st.file != nil {
		err = fs.syncAndMeasure(st)
	} else {
		err = fs.withDataFileIfExists(ino, fs.fdatasync)
	}
	if err != nil {
		st.dataErr = err
		return err
	}
	if st.newFile {
		if err := fs.syncDataDir(); err != nil { // the new data file's name
			return err
		}
		st.newFile = false
	}
	st.dataDirty = false
	return nil
}

// syncAndMeasure fdatasyncs the open data file, and records what a later
// fsync's write-back needs to know (see writeBack): the size it synced,
// and how much of it was allocated and written then. The caller holds
// st.mu.
func (fs *FS) syncAndMeasure(st *inodeState) error {
	st.syncedSize, st.overwritable = -1, 0
	s, serr := st.file.Stat()
	if err := fs.fdatasync(st.file); err != nil {
		return err
	}
	if serr == nil && fs.flushCovers {
		if n, err := st.file.Overwritable(); err == nil {
			st.syncedSize, st.overwritable = s.Size, min(n, s.Size)
			st.allocDirty = false
		}
	}
	return nil
}

// Sync makes every committed transaction durable (syncfs).
func (fs *FS) Sync() error { return errno(fs.x.ForceAll()) }

// GetXattr returns an extended attribute's value.
func (fs *FS) GetXattr(ino meta.Ino, name string) ([]byte, error) {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	in := fs.model.Inodes[ino]
	if in == nil {
		return nil, syscall.ENOENT
	}
	v, ok := in.Xattrs[name]
	if !ok {
		if err := checkXattrName(name); err != nil {
			return nil, err
		}
		return nil, syscall.ENODATA
	}
	return slices.Clone(v), nil
}

// ListXattr returns the names of an inode's extended attributes, sorted.
func (fs *FS) ListXattr(ino meta.Ino) ([]string, error) {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	in := fs.model.Inodes[ino]
	if in == nil {
		return nil, syscall.ENOENT
	}
	return slices.Sorted(maps.Keys(in.Xattrs)), nil
}

// SetXattr sets an extended attribute (flags XattrCreate, XattrReplace),
// refusing what Linux filesystems refuse (see xattr.go).
func (fs *FS) SetXattr(ino meta.Ino, name string, value []byte, flags uint32) error {
	op := meta.Op{Type: meta.OpSetxattr, Ino: ino, Name: name, Data: value, Flags: flags, Ctime: store.NowNanos()}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.checkSetXattr(ino, name, value); err != nil {
		return err
	}
	_, err := fs.commitLocked(&op)
	return errno(err)
}

// RemoveXattr removes an extended attribute. A name outside the namespaces
// is EOPNOTSUPP unless the inode has it (set before names were checked).
func (fs *FS) RemoveXattr(ino meta.Ino, name string) error {
	op := meta.Op{Type: meta.OpRemovexattr, Ino: ino, Name: name, Ctime: store.NowNanos()}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if in := fs.model.Inodes[ino]; in != nil && !hasXattr(in, name) {
		if err := checkXattrName(name); err != nil {
			return err
		}
	}
	_, err := fs.commitLocked(&op)
	return errno(err)
}

// Statfs describes the filesystem: space from the filesystem under the
// store, inode counts from the model.
type Statfs struct {
	Blocks, Bfree, Bavail uint64
	Bsize                 uint32
	Files, Ffree          uint64
	NameLen               uint32
}

// Statfs reports space and inode counts.
func (fs *FS) Statfs() (Statfs, error) {
	s, err := fs.st.Statfs(fs.dataDir)
	if err != nil {
		return Statfs{}, errno(err)
	}
	// Inodes with names, or open: an unlinked file lives on while open, as
	// on any filesystem. Unlinked ones only the kernel's cache still holds
	// are on their way out and are not counted.
	fs.mu.RLock()
	n := uint64(len(fs.model.Inodes))
	for ino := range fs.unlinked {
		if st := fs.existingState(ino); st == nil || st.opens.Load() == 0 {
			n--
		}
	}
	fs.mu.RUnlock()
	return Statfs{Blocks: s.Blocks, Bfree: s.Bfree, Bavail: s.Bavail, Bsize: s.Bsize,
		Files: n + 1<<20, Ffree: 1 << 20, NameLen: meta.MaxNameLen}, nil
}
