package datafile

import (
	"os"
	"sync/atomic"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
)

// Data files' names. A data file's bytes are durable by its fdatasync, its
// name by a sync of the data directory. Each data file made is numbered
// (namesMade), and a directory sync covers every one made before it began
// (namesSynced), so one sync serves all the names made meanwhile, whoever
// asked for it: a fsync of a new file, an immediate write, a mark, a
// checkpoint, or the log's writer (NamesBeforeLog).
//
// A file created marked (CreateMarked: a regular file created in a
// passthrough mount) has its mark in the record that creates it, and no
// force at its first open for writing (passthrough.go). The kernel may
// then sync appends into its data file that the journal never sees (O_SYNC,
// RWF_DSYNC). If the create's record is durable, recovery finds the file
// marked and keeps its data file's size, so the data file's name must be
// durable no later than the record: the data file is made before the
// create commits, and the log's writer syncs the data directory before it
// writes any record after such a name was made. If the record is not
// durable, the file is not there after a crash, and neither are its
// bytes: as on Linux, a new file's name is durable only after a sync of
// its directory (fsync(2)), which for an xlogfs directory is a log force.

// SyncDir makes the data directory's entries durable.
func (f *Files) SyncDir() error {
	made := f.namesMade.Load()
	f.Syncs.Dir.Add(1)
	if err := f.cfg.Store.SyncDir(f.cfg.Dir); err != nil {
		return err
	}
	raise(&f.namesSynced, made)
	return nil
}

// raise sets a to v unless it holds more already.
func raise(a *atomic.Uint64, v uint64) {
	for {
		old := a.Load()
		if old >= v || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// nameUnsynced reports whether st's data file was made since the last
// data-directory sync began. The caller holds st.mu.
func (f *Files) nameUnsynced(st *Inode) bool { return st.nameGen > f.namesSynced.Load() }

// CreateMarked makes the data file of ino, a regular file about to be
// created with the size-follows mark (meta.SizeFollowsSet on its
// OpCreate), before the create commits. The caller (the engine) holds its
// model lock, under which ino is allocated: nobody else knows ino yet, so
// its in-core inode is set without its lock. If the create then fails, the
// caller calls Unmake.
func (f *Files) CreateMarked(ino meta.Ino) error {
	file, err := f.cfg.Store.OpenFile(f.Path(ino), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	gen := f.namesMade.Add(1)
	f.State(ino).nameGen = gen
	raise(&f.markedNames, gen)
	return file.Close()
}

// Unmake removes the data file CreateMarked made for a create that
// failed.
func (f *Files) Unmake(ino meta.Ino) {
	if err := store.RemoveAll(f.cfg.Store, f.Path(ino)); err != nil {
		f.cfg.Logf("removing the data file %s of a create that failed: %v (recovery removes it at the next mount)", f.Path(ino), err)
	}
	f.statesMu.Lock()
	delete(f.states, ino)
	f.statesMu.Unlock()
}

// NamesBeforeLog syncs the data directory if a file created marked has a
// data file made since the last sync: the log's writer calls it before it
// writes records (xlog.Config.BeforeWrite), so that no record creating a
// marked file is durable before its data file's name.
func (f *Files) NamesBeforeLog() error {
	if f.markedNames.Load() <= f.namesSynced.Load() {
		return nil
	}
	return f.SyncDir()
}
