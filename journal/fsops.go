package journal

import (
	"maps"
	"math"
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
	fs.files.LearnIfStale(ino)
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
	if err != nil || !fs.files.Live() || a.Mode&meta.ModeType != meta.ModeReg {
		return a, err
	}
	// The kernel takes the size in the answer for the file's: it must
	// include what the kernel wrote to the data file itself.
	fs.files.LearnIfStale(a.Ino)
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
	marked := fs.markCreates.Load() && mode&meta.ModeType == meta.ModeReg && fs.files.NewFilesInPassthrough() && fs.model.Validate(&op) == nil
	if marked {
		// The mark travels in the create (datafile/names.go): the
		// data file exists before the record can be written.
		if err := fs.files.CreateMarked(op.Ino); err != nil {
			return Attr{}, errno(err)
		}
		op.Flags = meta.SizeFollowsSet
	}
	if _, err := fs.commitLocked(&op); err != nil {
		if marked {
			fs.files.Unmake(op.Ino)
		}
		return Attr{}, errno(err)
	}
	return attrOf(fs.model.Inodes[op.Ino]), nil
}

// MarkCreates says that the mount opens regular files in kernel
// passthrough (package fusefs): from now on, where a new file's first open
// for writing takes passthrough (datafile.Files.NewFilesInPassthrough),
// Create makes a regular file with the size-follows mark in its create
// record, and its data file first, so that that open forces nothing
// (datafile/passthrough.go, datafile/names.go). Where it takes the log
// route (SyncWrites auto, the default, with immediate writes), a create
// makes no data file and no mark: the log route needs neither, and a file
// never written never has a data file. Metadata-journal mode only;
// data-journal mode never hands out data files.
func (fs *FS) MarkCreates() {
	if fs.opts.Journal == JournalMeta && !fs.opts.ReadOnly {
		fs.markCreates.Store(true)
	}
}

// Link adds the name parent/name for ino.
func (fs *FS) Link(ino, parent meta.Ino, name string) (Attr, error) {
	fs.files.LearnIfStale(ino)
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
	} else if in := fs.model.Inodes[ino]; in != nil && in.Nlink == 0 {
		fs.unlinked[ino] = true
	}
	return nil
}

// forget drops a freed inode's state and schedules its data file for
// deletion once the free at lsn is durable: the reaper deletes it then
// (afterDurable), checkpoint or not. While checkpoints fail, maybe for want
// of the space this gives back, the free is forced at once rather than by
// the next log force; the reaper then tries a checkpoint again.
func (fs *FS) forget(ino meta.Ino, lsn logbuf.LSN) {
	fs.files.Forget(ino, lsn)
	delete(fs.unlinked, ino) // the caller holds fs.mu
	delete(fs.forces, ino)
	switch {
	case lsn <= fs.x.DurableLSN():
		fs.wantReap() // durable already: afterDurable came before Forget listed it
	case fs.ckptErr.Load() != nil:
		fs.x.StartForce(lsn)
	}
}

// inUse reports whether an inode is open or held: then losing its last
// link does not free it; its last Release or Unhold does.
func (fs *FS) inUse(ino meta.Ino) bool { return fs.files.InUse(ino) }

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
	fs.files.State(ino).Opens.Add(1)
	return nil
}

// Release undoes an Open. The last release of an unlinked, unheld inode
// frees it.
func (fs *FS) Release(ino meta.Ino) error {
	if !fs.files.Release(ino) {
		return nil
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
		fs.files.State(ino).Holds.Add(1)
	}
}

// Unhold drops a Hold; the last reference to an unlinked inode frees it.
func (fs *FS) Unhold(ino meta.Ino) error {
	st := fs.files.Existing(ino)
	if st == nil {
		return nil
	}
	if st.Holds.Add(-1) <= 0 {
		st.Holds.Store(0)
		st.Unheld()
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
	fs.files.State(op.Ino).Opens.Add(1)
	fs.unlinked[op.Ino] = true
	return attrOf(fs.model.Inodes[op.Ino]), nil
}

// Read reads from a regular file at off (datafile.Files.Read).
func (fs *FS) Read(ino meta.Ino, p []byte, off int64) (int, error) {
	n, err := fs.files.Read(ino, p, off)
	return n, errno(err)
}

// Write writes p at off: to the data file, then the transaction
// describing it (datafile.Files.Write).
func (fs *FS) Write(ino meta.Ino, p []byte, off int64) (int, error) {
	n, err := fs.files.Write(ino, p, off, false)
	return n, errno(err)
}

// WriteDirect is Write for a file opened with O_DIRECT: aligned writes go
// to the data file with O_DIRECT too.
func (fs *FS) WriteDirect(ino meta.Ino, p []byte, off int64) (int, error) {
	n, err := fs.files.Write(ino, p, off, true)
	return n, errno(err)
}

// SetAttrIn says which attributes SetAttr changes (Mask) and to what.
type SetAttrIn struct {
	Mask         uint32 // SetMode, SetUID, SetGID, SetSize, SetAtime, SetMtime
	Mode         uint32
	UID, GID     uint32
	Size         int64
	Atime, Mtime int64 // ns since the epoch: TimeNanos of the caller's time
	// Kill drops set-ID bits and capabilities with the change (see
	// KillPriv): a truncate by a caller without CAP_FSETID, a chown.
	Kill KillPriv
}

// MinTime and MaxTime are the first and last instants an inode's times can
// hold: the store keeps them as nanoseconds since the epoch in an int64
// (package documentation, The store), from 1677-09-21 00:12:43.145224192
// UTC to 2262-04-11 23:47:16.854775807 UTC.
var (
	MinTime = time.Unix(0, math.MinInt64).UTC()
	MaxTime = time.Unix(0, math.MaxInt64).UTC()
)

// TimeNanos is t as the store holds it, clamped to MinTime..MaxTime, as
// ext4 clamps a time to its range: a utimensat of 2300 or of 1600 sets the
// nearest time the store can hold, never one that wrapped around.
func TimeNanos(t time.Time) int64 {
	switch {
	case t.Before(MinTime):
		return math.MinInt64
	case t.After(MaxTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// SetAttr changes attributes; SetSize truncates or extends a regular file.
func (fs *FS) SetAttr(ino meta.Ino, in SetAttrIn) (Attr, error) {
	op := meta.Op{Type: meta.OpSetattr, Ino: ino, Mask: in.Mask, Mode: in.Mode, UID: in.UID, GID: in.GID,
		Size: in.Size, Atime: in.Atime, Mtime: in.Mtime, Ctime: store.NowNanos()}
	if in.Mask&meta.SetSize == 0 {
		// Learned first: a later learn must not take the kernel's
		// earlier write for newer than this change (a utimes after
		// the write, as tar and cp -p make).
		if err := fs.files.LearnIfStale(ino); err != nil {
			return Attr{}, errno(err)
		}
		if _, err := fs.commitSetattr(&op, in.Kill); err != nil {
			return Attr{}, errno(err)
		}
		return fs.attr(ino)
	}
	commit := func() (logbuf.LSN, error) { return fs.commitSetattr(&op, in.Kill) }
	if err := fs.files.Truncate(ino, in.Size, commit); err != nil {
		return Attr{}, errno(err)
	}
	return fs.attr(ino)
}

// Fallocate preallocates, punches a hole or zeroes a range (fallocate(2)
// modes FallocKeepSize, FallocPunchHole, FallocZeroRange).
func (fs *FS) Fallocate(ino meta.Ino, mode uint32, off, length int64) error {
	return errno(fs.files.Fallocate(ino, mode, off, length))
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
	st := fs.files.State(ino)
	if in.IsRegular() {
		st.NoteFsync()
		// What the kernel wrote to the data file itself is logged
		// first, so the force below covers its size.
		if err := fs.files.LearnIfStale(ino); err != nil {
			return errno(err)
		}
	}
	fs.mu.RLock()
	lsn := fs.forces[ino].lsn
	if datasync {
		lsn = fs.forces[ino].data
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
		dirty, lost := st.DataState()
		switch {
		case lost != nil:
			dataErr = lost
		case !dirty:
		case fs.files.WriteBack(st):
			return errno(fs.x.ForceFlush(lsn))
		default:
			// The log writer starts on the force while this
			// goroutine syncs the data file.
			fs.x.StartForce(lsn)
			started = true
			dataErr = fs.files.Sync(ino, st)
		}
	}
	logErr := fs.x.ForceWait(lsn, !started)
	if dataErr != nil {
		return errno(dataErr)
	}
	return errno(logErr)
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
		if st := fs.files.Existing(ino); st == nil || st.Opens.Load() == 0 {
			n--
		}
	}
	fs.mu.RUnlock()
	return Statfs{Blocks: s.Blocks, Bfree: s.Bfree, Bavail: s.Bavail, Bsize: s.Bsize,
		Files: n + 1<<20, Ffree: 1 << 20, NameLen: meta.MaxNameLen}, nil
}
