package datafile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
)

// Missing data. A data file holds at least every byte a checkpoint made
// durable (SyncDirty runs before the checkpoint is written, and a shrink
// is logged and forced before the data file is cut), so one that is
// missing or shorter than that was deleted or cut behind the store's back:
// package recovery finds such inodes and the mount refuses them. A mount
// told to go on anyway (journal.Options.AllowMissingData) marks each one
// (MarkMissing). A marked inode's bytes are unknown, and the data path says
// so rather than show zeros: a read, a write, a fallocate and a truncate to
// any size but 0 fail with EIO, and an open in passthrough goes through
// the daemon (which answers EIO) instead of handing the kernel the data
// file. A truncate to 0 ends the mark: the file is then empty, and whole.
// Reconcile leaves a marked inode's data file as it found it, neither
// created nor extended, so that the next mount finds the damage again: the
// mark itself lives in memory only.

// Sizes returns the size of each data file in dir, the data directory, by
// inode number; names that are no inode number, and entries that are no
// regular file, are left out. A missing directory holds no data files.
func Sizes(st store.StoreFS, dir string) (map[meta.Ino]int64, error) {
	names, err := st.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return map[meta.Ino]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing the data files: %w", err)
	}
	sizes := make(map[meta.Ino]int64, len(names))
	for _, name := range names {
		n, err := strconv.ParseUint(name, 10, 64)
		if err != nil {
			continue
		}
		info, err := st.Stat(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if info.Mode().IsRegular() {
			sizes[meta.Ino(n)] = info.Size()
		}
	}
	return sizes, nil
}

// Sizes is Sizes of the mount's data directory.
func (f *Files) Sizes() (map[meta.Ino]int64, error) { return Sizes(f.cfg.Store, f.cfg.Dir) }

// MarkMissing marks ino as a file whose data file lacks bytes that were
// durable: its data is unknown until a truncate to 0.
func (f *Files) MarkMissing(ino meta.Ino) {
	st := f.State(ino)
	st.mu.Lock()
	st.dataMissing = true
	st.mu.Unlock()
}

// Missing reports whether ino is marked by MarkMissing.
func (f *Files) Missing(ino meta.Ino) bool {
	st := f.Existing(ino)
	if st == nil {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.dataMissing
}

// missingErr is the error an operation on a marked inode gets. The caller
// holds st.mu.
func (f *Files) missingErr(ino meta.Ino, st *Inode) error {
	if !st.dataMissing {
		return nil
	}
	return &os.PathError{Op: "data of inode " + strconv.FormatUint(uint64(ino), 10) + " (missing from its data file at mount)", Path: f.Path(ino), Err: syscall.EIO}
}
