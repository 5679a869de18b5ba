package datafile

import (
	"maps"
	"slices"
	"syscall"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
)

// Passthrough: data files someone else writes. Under kernel FUSE
// passthrough (package fusefs) the kernel reads and writes a regular
// file's data file directly while the file is open, and the journal sees
// none of those writes. In metadata-journal mode that is no loss: the
// bytes belong in the data file, outside the log, and the log must carry
// only what they do to the inode — its size and times. XFS itself logs
// those when the data is written back and at fsync, not at write(2).
// The journal learns them the same way: whenever it must answer for them
// or make them durable (an attribute query, a lookup, fsync, a setattr or
// fallocate, a release, the periodic log force and unmount) it reads the
// data file's size and mtime (fstat) and, when they moved since it last
// looked, commits a write of the bytes from the file's size to the data
// file's end at that mtime: the very record a write through the daemon
// logs in metadata-journal mode, so the log's records are of the same kind
// and replay treats them alike. So the model, every answer from it and every
// fsync see the file as the kernel left it, and recovery brings back what
// fsync made durable: the size logged, the bytes synced (the data file is
// then cut or extended to the logged size, as for any file).
//
// A data file handed out stays open until the file's last release, and is
// set to the file's size at the first open for writing, so that reads and
// appends by the kernel see exactly the file's bytes. Data-journal mode
// never hands out data files: every written byte must go through the log.
//
// Synchronous writes. A write through a passthrough open of a file opened
// O_SYNC or O_DSYNC, or made with pwritev2's RWF_DSYNC or RWF_SYNC, is
// synced by the kernel in the data file alone (its bytes and, the
// filesystem under the store sees to it, its size) and acknowledged
// without a word to the daemon, which can neither see nor refuse it. An
// append so acknowledged would be lost if recovery cut the data file to the
// logged size, as it does for any file. So every inode open for writing in
// passthrough is marked, durably, before its open returns: an
// OpSizeFollows record (the mark is in the model, so a checkpoint carries
// it too). For a marked inode recovery keeps the larger of the logged size
// and the data file's (package journal, at mount). That is right because:
//
//   - A sync write's bytes and the size it reached are durable in the data
//     file when write(2) returns: the data file is never shorter than any
//     size a sync write acknowledged.
//   - After the daemon is killed (kill -9) the host's page cache still
//     holds every byte the kernel wrote: a longer data file holds exactly
//     what the application wrote.
//   - After a power cut, a data file longer than the logged size whose end
//     was never synced may read back zeros there (the host filesystem,
//     ext4 or XFS, shows an extension's unwritten blocks as zeros, never
//     another file's bytes). Unsynced writes may be lost, so such zeros are
//     what the host filesystem itself gives for unsynced appends.
//   - What the journal itself cuts must stay cut: a logged shrink clears
//     the inode's mark (the model does it), so a crash after the shrink is
//     in the log but before the data file's cut is durable recovers the
//     logged size and cuts the data file to it, whatever part of the cut
//     the data file kept (a power cut can keep some of a cut's zeroed
//     sectors and the old size). SetAttr makes the cut durable
//     (fdatasync), then sets the mark again and forces it before the
//     shrink returns, so keeping the larger size never brings cut bytes
//     back, and the appends that follow are covered again. Likewise an
//     open that cuts a marked data file (or one it is about to mark) to the
//     file's size syncs the cut.
//
// A regular file created in a passthrough mount is created marked: the
// mark is a flag of its OpCreate, so it is durable exactly when the file
// is, and its first open for writing forces nothing. Its data file is
// made before the create commits, and its name is durable before the
// create's record is written (names.go). Until the create is durable the
// file itself may vanish in a crash, its bytes with it, as a new file does
// on Linux until its directory is synced.
//
// The mark stays until the next mount, whose recovery keeps the larger
// size, then clears every mark (no open outlives a mount) and syncs the
// data files it grew before the fresh checkpoint records their size. It is
// not cleared at the last release: that would cost the next open for
// writing another log force, and a file reopened to be written (a log
// appended to, a page rewritten) would pay it at every open. The price of
// keeping it is the data-file sync of each shrink of a marked inode, and
// that a marked file's unsynced appends may come back after a crash, as
// written or, after a power cut, as zeros, where an unmarked file's are
// cut: writes never synced may be lost, never anything else. The cost is
// one log force at the first open for writing, in a mount, of an inode
// that existed before it (and a sync of the data directory when its data
// file is new: a sync write makes a data file's bytes and size durable,
// not its name), none for a file the mount created, and a data-file sync
// per shrink of a marked inode. OpSizeFollows can clear a mark too, though
// nothing logs that now: recovery clears the marks in the model it
// checkpoints.

// OpenPassthrough is an open of the regular file ino, which the engine has
// counted (Inode.Opens), whose data file the caller (the kernel) reads, and
// writes if write is set, directly. It returns the data file, created if
// missing, valid until the open's ReleasePassthrough. On an error the open
// is as if never made here; the engine then undoes its count.
//
// The kernel wants all opens of an inode at one time to be of one kind:
// every one in passthrough, or none. So when ino is open through the
// daemon already, this open is one of those too; and so it is, when no
// passthrough open of ino exists, if preferDaemon is set (an open that
// writes synchronously, O_SYNC or O_DSYNC: the kernel syncs only the data
// file after a passthrough write, never asking the daemon, so the size an
// append reaches would not be in the log when write(2) returns). Either
// way it then counts an open through the daemon and returns a nil file;
// so it does for a file whose data is missing (missing.go).
// Either kind of open is undone by ReleasePassthrough.
func (f *Files) OpenPassthrough(ino meta.Ino, write, preferDaemon bool) (store.StoreFile, error) {
	if f.cfg.LogData {
		return nil, syscall.EINVAL // the log must see every byte
	}
	if _, err := f.regular(ino); err != nil {
		return nil, err
	}
	st := f.State(ino)
	st.mu.Lock()
	// The kind is decided, and counted, under st.mu: two opens at once
	// never see each other half counted.
	route := f.daemonRoute(st, write, preferDaemon)
	st.opened(write)
	if route != nil {
		route.Add(1)
		st.kind = kindDaemon
		st.daemonOpens++
		st.mu.Unlock()
		return nil, nil
	}
	if preferDaemon && !st.syncWarned {
		st.syncWarned = true
		f.cfg.Logf("inode %d: a synchronous (O_SYNC/O_DSYNC) open joins the file's passthrough opens, so its writes go to the data file directly, "+
			"synced there by the kernel; recovery keeps the data file's size if it is larger than the logged one", ino)
	}
	file, err := f.passthroughFile(ino, st, write)
	if err == nil {
		st.ptOpens.Add(1)
		st.kind = kindPassthrough
		f.Routes.Passthrough.Add(1)
	}
	st.mu.Unlock()
	if lsn := st.MarkLSN(); err == nil && write && lsn != 0 {
		// The mark is durable before the kernel may write: the record
		// of this open's mark, or of an earlier open's still being
		// forced. (A file created marked has none: its mark is in its
		// create, names.go.) A failed force undoes the open as its
		// release would.
		if err = f.e.Force(lsn); err != nil {
			st.mu.Lock()
			f.releasePassthrough(ino, st, write)
			st.mu.Unlock()
		}
	}
	if err != nil {
		return nil, err
	}
	return file, nil
}

// passthroughFile opens ino's data file for an open through which the
// kernel writes (write) or only reads. The caller holds st.mu.
func (f *Files) passthroughFile(ino meta.Ino, st *Inode, write bool) (store.StoreFile, error) {
	file, err := f.file(ino, st)
	if err != nil {
		return nil, err
	}
	if st.ptWriters.Load() == 0 {
		// Nobody writes the data file behind the journal's back now:
		// learn what the last writers left, then make the data file
		// exactly the file's size (it may lack the end of a file
		// extended by truncate, or still hold what a cut owed left), so
		// the kernel's reads and appends see the file as it is.
		if err := f.learn(ino, st); err != nil {
			return nil, err
		}
		s, err := file.Stat()
		if err != nil {
			return nil, err
		}
		if a, _ := f.e.Inode(ino); s.Size != a.Size {
			if err := file.Truncate(a.Size); err != nil {
				return nil, err
			}
			if s.Size > a.Size && (write || a.SizeFollows) {
				// A mark (this open's, or an earlier one's)
				// makes recovery keep a longer data file: the
				// cut must be durable first.
				if err := file.Datasync(); err != nil {
					return nil, err
				}
			}
			st.allocDirty = true
			st.cutOwed = false
			st.dataDirty = true
			f.MarkDirty(ino)
			if s, err = file.Stat(); err != nil {
				return nil, err
			}
		}
		st.ptMtime = s.Mtime
	}
	if write {
		if err := f.markSizeFollows(ino, st, true); err != nil {
			return nil, err
		}
		st.ptWriters.Add(1)
		f.setStale(ino, st, true)
		st.dataDirty = true
		f.MarkDirty(ino)
	}
	return file, nil
}

// markSizeFollows sets (or clears) the mark that ino's size follows its
// data file at recovery, committing the op unless the model has it so
// already. A set's LSN is kept for the opens to force. The caller holds
// st.mu.
func (f *Files) markSizeFollows(ino meta.Ino, st *Inode, set bool) error {
	a, ok := f.e.Inode(ino)
	if !ok || a.SizeFollows == set {
		return nil
	}
	op := meta.Op{Type: meta.OpSizeFollows, Ino: ino}
	if set {
		op.Flags = meta.SizeFollowsSet
		if f.nameUnsynced(st) {
			// A sync write makes the data file's bytes and size
			// durable, not its name: recovery could not find
			// them without it.
			if err := f.SyncDir(); err != nil {
				return err
			}
		}
	}
	lsn, err := f.e.Commit(&op)
	if err != nil {
		return err
	}
	if set {
		st.markLSN.Store(uint64(lsn))
	}
	return nil
}

// ReleasePassthrough undoes OpenPassthrough, given write as it was and
// passthrough, whether it returned a data file: the journal learns what
// the kernel did to the file, then counts the release (Inode.Opens too).
// The kind of open is uncounted under st.mu together with the open
// itself, so that an open deciding its kind meanwhile sees both or
// neither. The engine then frees the inode if that was its last use.
func (f *Files) ReleasePassthrough(ino meta.Ino, write, passthrough bool) error {
	st := f.Existing(ino)
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	var err error
	if !passthrough {
		st.daemonOpens = max(0, st.daemonOpens-1)
	} else {
		err = f.releasePassthrough(ino, st, write)
	}
	if st.Opens.Add(-1) <= 0 {
		st.Opens.Store(0)
		st.doneWithFile()
	}
	return err
}

// releasePassthrough uncounts a passthrough open and learns what the
// kernel did through it. The caller holds st.mu.
func (f *Files) releasePassthrough(ino meta.Ino, st *Inode, write bool) error {
	if st.ptOpens.Add(-1) < 0 {
		st.ptOpens.Store(0)
	}
	if write {
		if st.ptWriters.Add(-1) < 0 {
			st.ptWriters.Store(0)
		}
		// What the kernel wrote through the open is unsynced until
		// the next fsync or checkpoint, whether or not it moved the
		// size or the mtime (a rewrite within one clock tick moves
		// neither).
		st.dataDirty = true
		f.MarkDirty(ino)
	}
	return f.learn(ino, st)
}

// setStale marks whether ino's data file may hold changes the journal has
// not learned. The caller holds st.mu.
func (f *Files) setStale(ino meta.Ino, st *Inode, stale bool) {
	if st.ptStale == stale {
		return
	}
	st.ptStale = stale
	f.statesMu.Lock()
	if stale {
		f.ptStale[ino] = st
	} else {
		delete(f.ptStale, ino)
	}
	f.ptLive.Store(int32(len(f.ptStale)))
	f.statesMu.Unlock()
}

// Live reports whether any data file may hold changes by the kernel that
// the journal has not learned yet.
func (f *Files) Live() bool { return f.ptLive.Load() != 0 }

// learn reads what the kernel did to ino's data file since the journal
// last looked, and commits it (a write record up to the data file's end)
// when the data file grew past the file or its mtime moved. Once no open
// writes the data file any more, there is nothing left to learn until the
// next one. The caller holds st.mu, which every other change of the data
// file's size takes too.
func (f *Files) learn(ino meta.Ino, st *Inode) error {
	if !st.ptStale {
		return nil
	}
	defer st.doneWithFile()
	file, err := f.openFile(ino, st, false)
	if err != nil {
		return err
	}
	writers := st.ptWriters.Load() > 0
	if file == nil { // freed meanwhile: nothing to learn
		f.setStale(ino, st, writers)
		return nil
	}
	s, err := file.Stat()
	if err != nil {
		return err
	}
	a, ok := f.e.Inode(ino)
	if !ok {
		f.setStale(ino, st, false)
		return nil
	}
	// The kernel's writes only ever grow the data file (truncates and
	// fallocates come to the journal, which learns first), so a data file
	// shorter than the file is none of the kernel's doing: it is not
	// taken for a shrink.
	if s.Size > a.Size || s.Mtime != st.ptMtime {
		// Logged as what it is, bytes written up to the data file's
		// end: the meta-journal write record, whose replay (in either
		// journal mode) never touches a data file. The times are the
		// kernel's, kept from going back before the inode's last change.
		op := meta.Op{Type: meta.OpWrite, Ino: ino, Off: a.Size, Len: max(0, s.Size-a.Size), Ctime: max(a.Ctime, s.Mtime)}
		if _, err := f.e.Commit(&op); err != nil {
			return err
		}
		st.ptMtime = s.Mtime
		st.dataDirty = true
		st.hist.wrote(op.Len)
		f.MarkDirty(ino)
		f.Learned.Add(1)
	}
	f.setStale(ino, st, writers)
	return nil
}

// LearnIfStale is learn for callers that do not hold st.mu: an attribute
// query, a lookup, a setattr or fsync about to answer from the model.
func (f *Files) LearnIfStale(ino meta.Ino) error {
	if !f.Live() {
		return nil
	}
	st := f.Existing(ino)
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return f.learn(ino, st)
}

// LearnAll learns every data file the kernel may have written: the
// periodic log force does it first, so that sizes reach the log within
// its interval as the bytes reach the data files, and so does unmount.
// A file it cannot learn now is learned at its next occasion.
func (f *Files) LearnAll() {
	if !f.Live() {
		return
	}
	f.statesMu.Lock()
	inos := slices.Sorted(maps.Keys(f.ptStale))
	f.statesMu.Unlock()
	for _, ino := range inos {
		f.LearnIfStale(ino)
	}
}

// markPassthroughDirty marks every data file the kernel may be writing as
// needing the next checkpoint's sync, as written ones are.
func (f *Files) markPassthroughDirty() {
	if !f.Live() {
		return
	}
	f.statesMu.Lock()
	inos := slices.Collect(maps.Keys(f.ptStale))
	f.statesMu.Unlock()
	for _, ino := range inos {
		f.MarkDirty(ino)
	}
}

// afterChange is called, with st.mu held, after the journal itself changed
// ino's data file (a truncate, a fallocate) while the kernel may write it:
// the data file's new mtime is the journal's own doing, logged with the
// change, and not the kernel's to learn.
func (f *Files) afterChange(st *Inode, file store.StoreFile) {
	st.allocDirty = true // a truncate or fallocate: blocks may come and go
	if !st.ptStale {
		return
	}
	if s, err := file.Stat(); err == nil {
		st.ptMtime = s.Mtime
	}
}
