package store

import (
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// StoreFS is the filesystem a store lives on. Every read and write the
// journal makes to a store goes through it: the log file, the data files
// and the data directory's entries, the checkpoint file with its temporary
// and rename, directory fsyncs, removals, everything mkfs makes, and the
// superblock. OSFS is the real one; CrashFS models what a power cut keeps
// of it, and FaultFS injects errors into any of its calls.
//
// Names are paths as the os package takes them. Errors are *os.PathError
// or *os.LinkError carrying the syscall.Errno, so errors.Is(err,
// os.ErrNotExist) and the errno a caller reports work on any
// implementation.
//
// What a call makes durable follows POSIX as Linux implements it: nothing
// written is durable before the file's Sync or Datasync; a new, renamed or
// removed name is durable only once its directory's SyncDir returns.
type StoreFS interface {
	// OpenFile opens a regular file; flag as os.OpenFile's (O_RDONLY,
	// O_WRONLY, O_RDWR, O_CREATE, O_EXCL, O_TRUNC, syscall.O_DIRECT).
	OpenFile(name string, flag int, perm os.FileMode) (StoreFile, error)
	Mkdir(name string, perm os.FileMode) error
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// Rename replaces newname with oldname, in one directory.
	Rename(oldname, newname string) error
	// ReadDir lists a directory's names, sorted.
	ReadDir(name string) ([]string, error)
	Stat(name string) (iofs.FileInfo, error)
	// SyncDir makes a directory's entries durable (fsync of the directory).
	SyncDir(name string) error
	// Statfs describes the space of the filesystem holding name.
	Statfs(name string) (Space, error)
	// Lock takes a non-blocking flock(2) on the file name: exclusive or
	// shared. A conflicting holder makes it fail with EWOULDBLOCK. Close
	// releases it; so does the death of the process.
	Lock(name string, exclusive bool) (io.Closer, error)
}

// Space is what statfs(2) says of a filesystem's blocks.
type Space struct {
	Bsize                 uint32
	Blocks, Bfree, Bavail uint64 // Bavail: free to an unprivileged writer
}

// Avail is the bytes an unprivileged writer may still use.
func (s Space) Avail() int64 { return int64(s.Bavail) * int64(s.Bsize) }

// StoreFile is an open file of a StoreFS.
type StoreFile interface {
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
	// Allocate is fallocate(2) (mode FallocKeepSize, FallocPunchHole,
	// FallocZeroRange, or 0).
	Allocate(mode uint32, off, n int64) error
	// Sync is fsync(2): the file's data and metadata are durable.
	Sync() error
	// Datasync is fdatasync(2): the file's data, and the metadata needed
	// to read it back (its size), are durable.
	Datasync() error
	Size() (int64, error)
	// Stat is fstat(2): the file's size and times as the filesystem
	// under the store keeps them. The journal reads the times only of
	// data files someone else writes (see journal/datafile/passthrough.go).
	Stat() (FileStat, error)
	// Writeback is sync_file_range(2) with WAIT_BEFORE, WRITE and
	// WAIT_AFTER over the whole file: its dirty pages are written to the
	// device and waited for, but neither the file's metadata nor the
	// device's volatile cache is flushed. What it wrote is durable only
	// where Overwritable says, and only once a later Sync, Datasync or
	// SyncDir of the same filesystem has flushed the device.
	Writeback() error
	// Overwritable, called right after a Sync or Datasync, reports n:
	// the file's first n bytes are allocated and written on the device,
	// and the filesystem overwrites such blocks in place, so that an
	// overwrite inside them needs no metadata to be read back after a
	// crash (0 when that cannot be said: holes, unwritten, delayed or
	// shared extents, data journaling, or a filesystem not known to).
	Overwritable() (int64, error)
	Close() error
}

// FileStat is what StoreFile.Stat reports.
type FileStat struct {
	Size         int64
	Mtime, Ctime int64 // ns since the epoch
}

// FileFd returns f's kernel file descriptor, if it has one: a file of the
// real filesystem does, and keeps it until Close. Kernel FUSE passthrough
// needs one; in-memory files (CrashFS) have none.
func FileFd(f StoreFile) (uintptr, bool) {
	if d, ok := f.(interface{ Fd() uintptr }); ok {
		return d.Fd(), true
	}
	return 0, false
}

// OSFS returns the real filesystem.
func OSFS() StoreFS { return osFS{} }

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (StoreFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Mkdir(name string, perm os.FileMode) error { return os.Mkdir(name, perm) }
func (osFS) Remove(name string) error                  { return os.Remove(name) }
func (osFS) Rename(o, n string) error                  { return os.Rename(o, n) }
func (osFS) Stat(name string) (iofs.FileInfo, error)   { return os.Stat(name) }

func (osFS) ReadDir(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	slices.Sort(names)
	return names, err
}

func (osFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = retryEINTR(func() error { return unix.Fsync(int(d.Fd())) })
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &os.PathError{Op: "fsync", Path: name, Err: err}
	}
	return nil
}

func (osFS) Statfs(name string) (Space, error) {
	var s unix.Statfs_t
	if err := unix.Statfs(name, &s); err != nil {
		return Space{}, &os.PathError{Op: "statfs", Path: name, Err: err}
	}
	return Space{Bsize: uint32(s.Bsize), Blocks: s.Blocks, Bfree: s.Bfree, Bavail: s.Bavail}, nil
}

func (osFS) Lock(name string, exclusive bool) (io.Closer, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "flock", Path: name, Err: err}
	}
	return f, nil
}

type osFile struct{ f *os.File }

func (f osFile) ReadAt(p []byte, off int64) (int, error)  { return f.f.ReadAt(p, off) }
func (f osFile) WriteAt(p []byte, off int64) (int, error) { return f.f.WriteAt(p, off) }
func (f osFile) Truncate(size int64) error                { return f.f.Truncate(size) }
func (f osFile) Close() error                             { return f.f.Close() }

func (f osFile) Allocate(mode uint32, off, n int64) error {
	if err := unix.Fallocate(int(f.f.Fd()), mode, off, n); err != nil {
		return &os.PathError{Op: "fallocate", Path: f.f.Name(), Err: err}
	}
	return nil
}

func (f osFile) Sync() error {
	if err := retryEINTR(func() error { return unix.Fsync(int(f.f.Fd())) }); err != nil {
		return &os.PathError{Op: "fsync", Path: f.f.Name(), Err: err}
	}
	return nil
}

func (f osFile) Datasync() error {
	if err := retryEINTR(func() error { return unix.Fdatasync(int(f.f.Fd())) }); err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.f.Name(), Err: err}
	}
	return nil
}

func (f osFile) Fd() uintptr { return f.f.Fd() }

func (f osFile) Stat() (FileStat, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.f.Fd()), &st); err != nil {
		return FileStat{}, &os.PathError{Op: "fstat", Path: f.f.Name(), Err: err}
	}
	return FileStat{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}, nil
}

func (f osFile) Writeback() error {
	const how = unix.SYNC_FILE_RANGE_WAIT_BEFORE | unix.SYNC_FILE_RANGE_WRITE | unix.SYNC_FILE_RANGE_WAIT_AFTER
	if err := retryEINTR(func() error { return unix.SyncFileRange(int(f.f.Fd()), 0, 0, how) }); err != nil {
		return &os.PathError{Op: "sync_file_range", Path: f.f.Name(), Err: err}
	}
	return nil
}

func (f osFile) Overwritable() (int64, error) {
	n, err := overwritable(f.f)
	if err != nil {
		return 0, &os.PathError{Op: "fiemap", Path: f.f.Name(), Err: err}
	}
	return n, nil
}

func (f osFile) Size() (int64, error) {
	st, err := f.f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func retryEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

// Helpers over a StoreFS, for the few compound steps the store takes.

// ReadFile reads a whole file.
func ReadFile(st StoreFS, name string) ([]byte, error) {
	f, err := st.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := f.Size()
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	k, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:k], nil
}

// writeFileSync creates (or truncates) a file, writes b and fsyncs it. The
// name is durable only once the caller syncs its directory.
func writeFileSync(st StoreFS, name string, b []byte) error {
	f, err := st.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(b, 0)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// RemoveAll removes name and, for a directory, everything under it. A
// missing name is not an error.
func RemoveAll(st StoreFS, name string) error {
	info, err := st.Stat(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.IsDir() {
		names, err := st.ReadDir(name)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := RemoveAll(st, filepath.Join(name, n)); err != nil {
				return err
			}
		}
	}
	err = st.Remove(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// MkdirAll makes dir and its missing parents, each made durable in its
// parent, and reports whether it made dir.
func MkdirAll(st StoreFS, dir string) (made bool, err error) {
	info, err := st.Stat(dir)
	if err == nil {
		if !info.IsDir() {
			return false, &os.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		return false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if _, err := MkdirAll(st, parent); err != nil {
			return false, err
		}
	}
	if err := st.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return false, err
	}
	return true, st.SyncDir(parent)
}

// SameFilesystem reports whether names a and b are on one filesystem (one
// st_dev). Files of an in-memory StoreFS, which report no device, are.
func SameFilesystem(st StoreFS, a, b string) bool {
	ia, err := st.Stat(a)
	if err != nil {
		return false
	}
	ib, err := st.Stat(b)
	if err != nil {
		return false
	}
	sa, oka := ia.Sys().(*syscall.Stat_t)
	sb, okb := ib.Sys().(*syscall.Stat_t)
	if !oka || !okb {
		return !oka && !okb && ia.Sys() == nil && ib.Sys() == nil
	}
	return sa.Dev == sb.Dev
}
