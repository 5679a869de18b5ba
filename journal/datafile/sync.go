package datafile

import (
	"sync/atomic"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
)

// SyncCounts counts the calls by which the data path makes something
// durable, each a device cache flush on most filesystems under the store:
// what an fsync costs the device, beside its latency.
type SyncCounts struct {
	Data      atomic.Uint64 // fdatasyncs of data files (fsync, checkpoints)
	Dir       atomic.Uint64 // fsyncs of the data directory (new data files' names)
	Writeback atomic.Uint64 // write-backs without a flush (sync_file_range), the log force's flush covering them
}

// fdatasync makes a data file's bytes durable, taking the emulated flush
// latency when there is one.
func (f *Files) fdatasync(file store.StoreFile) error {
	f.Syncs.Data.Add(1)
	if f.cfg.Flush == nil {
		return file.Datasync()
	}
	start := f.cfg.Flush.Start()
	err := file.Datasync()
	f.cfg.Flush.Wait(start)
	return err
}

// DataState reports whether the data file has unsynced writes, and the
// error of a sync that failed, after which its data may be lost.
func (st *Inode) DataState() (dirty bool, lost error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.unsynced(), st.lost()
}

// unsynced reports whether the data file may hold writes not yet synced:
// the journal's own, or the kernel's through an open that writes the data
// file directly (which the journal cannot see, so it syncs at every fsync
// while one is open). The caller holds st.mu.
func (st *Inode) unsynced() bool { return st.dataDirty || st.ptWriters.Load() > 0 }

// WriteBack writes an overwrite's data back without a flush if the data
// file allows it: the filesystem under the store covers data files with the
// log's flushes (FlushCovers), nothing changed the data file's allocation
// or size since its last fdatasync, its name is durable, and all of it was
// written in place then (store.StoreFile's Overwritable). It reports
// whether it did; a write-back that fails is remembered as a failed sync.
// The log force that follows must flush the device.
func (f *Files) WriteBack(st *Inode) bool {
	if !f.cfg.FlushCovers {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.file == nil || st.allocDirty || f.nameUnsynced(st) || st.lost() != nil || !st.unsynced() {
		return false
	}
	s, err := st.file.Stat()
	if err != nil || s.Size != st.syncedSize || s.Size > st.overwritable {
		return false
	}
	f.Syncs.Writeback.Add(1)
	if err := st.file.Writeback(); err != nil {
		st.lose(err)
		return false // fsync then reports it, as a failed fdatasync
	}
	st.dataDirty = false
	return true
}

// Sync makes a data file's written bytes, and its name in the data
// directory if it is new, durable. A failed sync is remembered: the kernel
// marks the pages clean after a writeback error, so a retry would succeed
// without writing them, and every later fsync of the inode must report the
// loss instead.
func (f *Files) Sync(ino meta.Ino, st *Inode) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return f.syncLocked(ino, st)
}

// syncLocked is Sync for a caller holding st.mu.
func (f *Files) syncLocked(ino meta.Ino, st *Inode) error {
	if err := st.lost(); err != nil {
		return err
	}
	if !st.unsynced() {
		return nil
	}
	var err error
	if st.file != nil {
		err = f.syncAndMeasure(st)
	} else {
		err = f.With(ino, false, f.fdatasync)
	}
	if err != nil {
		st.lose(err)
		return err
	}
	if f.nameUnsynced(st) {
		if err := f.SyncDir(); err != nil { // the new data file's name
			return err
		}
	}
	st.dataDirty = false
	return nil
}

// syncAndMeasure fdatasyncs the open data file, and records what a later
// fsync's write-back needs to know (see WriteBack): the size it synced, and
// how much of it was allocated and written then. The caller holds st.mu.
func (f *Files) syncAndMeasure(st *Inode) error {
	st.syncedSize, st.overwritable = -1, 0
	s, serr := st.file.Stat()
	if err := f.fdatasync(st.file); err != nil {
		return err
	}
	if serr == nil && f.cfg.FlushCovers {
		if n, err := st.file.Overwritable(); err == nil {
			st.syncedSize, st.overwritable = s.Size, min(n, s.Size)
			st.allocDirty = false
		}
	}
	return nil
}
