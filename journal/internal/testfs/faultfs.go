package testfs

import (
	"io"
	iofs "io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/xlogfs/xlogfs/journal/store"
)

// FaultCall is one call a FaultFS is about to pass on.
type FaultCall struct {
	Op   string // open, create, read, write, truncate, fallocate, fsync, fdatasync, writeback, mkdir, remove, rename, readdir, stat, syncdir, statfs, lock
	Name string // the path (for rename, the old one; for file calls, the name it was opened by)
	New  string // rename's new path
}

// FaultFS is a StoreFS that hands every call to another one, unless its
// fault function fails it: then the call returns that errno, wrapped as the
// os package wraps one, and does nothing. Tests use it to make any single
// write the store makes fail with ENOSPC or EIO.
type FaultFS struct {
	store.StoreFS
	mu    sync.Mutex
	fault func(FaultCall) syscall.Errno
	calls map[string]int // per op
}

// NewFaultFS wraps fs, with no faults yet.
func NewFaultFS(fs store.StoreFS) *FaultFS { return &FaultFS{StoreFS: fs, calls: map[string]int{}} }

// SetFault makes every later call ask f whether it fails (0: it does not);
// nil ends the faults.
func (f *FaultFS) SetFault(fn func(FaultCall) syscall.Errno) {
	f.mu.Lock()
	f.fault = fn
	f.mu.Unlock()
}

// Calls reports how many calls of op were made (failed ones included).
func (f *FaultFS) Calls(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *FaultFS) check(c FaultCall) syscall.Errno {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[c.Op]++
	if f.fault == nil {
		return 0
	}
	return f.fault(c)
}

func (f *FaultFS) fail(op, name string) error {
	if e := f.check(FaultCall{Op: op, Name: name}); e != 0 {
		return pathErr(op, name, e)
	}
	return nil
}

func (f *FaultFS) OpenFile(name string, flag int, perm os.FileMode) (store.StoreFile, error) {
	op := "open"
	if flag&os.O_CREATE != 0 {
		if _, err := f.StoreFS.Stat(name); err != nil {
			op = "create"
		}
	}
	if err := f.fail(op, name); err != nil {
		return nil, err
	}
	if flag&os.O_TRUNC != 0 && op == "open" {
		if err := f.fail("truncate", name); err != nil {
			return nil, err
		}
	}
	file, err := f.StoreFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{StoreFile: file, fs: f, name: name}, nil
}

func (f *FaultFS) Mkdir(name string, perm os.FileMode) error {
	if err := f.fail("mkdir", name); err != nil {
		return err
	}
	return f.StoreFS.Mkdir(name, perm)
}

func (f *FaultFS) Remove(name string) error {
	if err := f.fail("remove", name); err != nil {
		return err
	}
	return f.StoreFS.Remove(name)
}

func (f *FaultFS) Rename(oldname, newname string) error {
	if e := f.check(FaultCall{Op: "rename", Name: oldname, New: newname}); e != 0 {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: e}
	}
	return f.StoreFS.Rename(oldname, newname)
}

func (f *FaultFS) ReadDir(name string) ([]string, error) {
	if err := f.fail("readdir", name); err != nil {
		return nil, err
	}
	return f.StoreFS.ReadDir(name)
}

func (f *FaultFS) Stat(name string) (iofs.FileInfo, error) {
	if err := f.fail("stat", name); err != nil {
		return nil, err
	}
	return f.StoreFS.Stat(name)
}

func (f *FaultFS) SyncDir(name string) error {
	if err := f.fail("syncdir", name); err != nil {
		return err
	}
	return f.StoreFS.SyncDir(name)
}

func (f *FaultFS) Statfs(name string) (store.Space, error) {
	if err := f.fail("statfs", name); err != nil {
		return store.Space{}, err
	}
	return f.StoreFS.Statfs(name)
}

func (f *FaultFS) Lock(name string, exclusive bool) (io.Closer, error) {
	if err := f.fail("lock", name); err != nil {
		return nil, err
	}
	return f.StoreFS.Lock(name, exclusive)
}

type faultFile struct {
	store.StoreFile
	fs   *FaultFS
	name string
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.fail("read", f.name); err != nil {
		return 0, err
	}
	return f.StoreFile.ReadAt(p, off)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.fail("write", f.name); err != nil {
		return 0, err
	}
	return f.StoreFile.WriteAt(p, off)
}

func (f *faultFile) Truncate(size int64) error {
	if err := f.fs.fail("truncate", f.name); err != nil {
		return err
	}
	return f.StoreFile.Truncate(size)
}

func (f *faultFile) Allocate(mode uint32, off, n int64) error {
	if err := f.fs.fail("fallocate", f.name); err != nil {
		return err
	}
	return f.StoreFile.Allocate(mode, off, n)
}

// A failed fsync loses what it was to write, as on Linux: the kernel marks
// the pages clean after a writeback error, so a later fsync succeeds
// without them. A file that can model that (CrashFS's) is told.
func (f *faultFile) Sync() error {
	if err := f.fs.fail("fsync", f.name); err != nil {
		f.writebackFailed()
		return err
	}
	return f.StoreFile.Sync()
}

func (f *faultFile) Datasync() error {
	if err := f.fs.fail("fdatasync", f.name); err != nil {
		f.writebackFailed()
		return err
	}
	return f.StoreFile.Datasync()
}

// A failed write-back loses what it was to write, as a failed fsync does.
func (f *faultFile) Writeback() error {
	if err := f.fs.fail("writeback", f.name); err != nil {
		f.writebackFailed()
		return err
	}
	return f.StoreFile.Writeback()
}

func (f *faultFile) writebackFailed() {
	if w, ok := f.StoreFile.(interface{ writebackFailed() }); ok {
		w.writebackFailed()
	}
}
