package journal

import (
	"errors"
	"os"
	"syscall"

	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
)

// Read-only mounts (Options.ReadOnly), as XFS's -o ro and -o ro,norecovery.
//
// ReadOnly recovers the log as any mount does (replaying what it holds
// into the data files and writing a fresh checkpoint), or, when the
// filesystem has no room to finish that (the checkpoint file), goes on as
// NoRecovery does, with a warning; then it takes no
// change: every operation that would change the filesystem gets EROFS,
// before it touches a data file or the log. No checkpoints are taken and
// the log is never forced while mounted; unmounting writes the unmount
// record alone, as XFS does on a read-only mount, so that the next mount
// finds a clean log.
//
// NoRecovery (with ReadOnly) writes nothing to the store at all: the log
// is replayed into the in-memory metadata only, and the bytes of data-
// journal writes, truncations and hole punches it holds are kept in
// memory and laid over the data files' bytes on reads (datafile.Overlay), so
// files read as a recovered mount would show them. The store is opened
// through a StoreFS that refuses every write with EROFS, and the log
// device opened read-only: nothing can change the store by mistake, and a
// store on a read-only filesystem (a snapshot) can be mounted. Unmounting
// writes nothing either; the log stays as it was, dirty or clean.

// readOnlyStore is a StoreFS that refuses every change with EROFS.
type readOnlyStore struct{ store.StoreFS }

func erofs(op, name string) error { return &os.PathError{Op: op, Path: name, Err: syscall.EROFS} }

func (s readOnlyStore) OpenFile(name string, flag int, perm os.FileMode) (store.StoreFile, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, erofs("open", name)
	}
	f, err := s.StoreFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return readOnlyFile{f}, nil
}

func (readOnlyStore) Mkdir(name string, _ os.FileMode) error { return erofs("mkdir", name) }
func (readOnlyStore) Remove(name string) error               { return erofs("remove", name) }
func (readOnlyStore) Rename(o, _ string) error               { return erofs("rename", o) }
func (readOnlyStore) SyncDir(name string) error              { return erofs("fsync", name) }

// readOnlyFile is a file of a readOnlyStore: opened for reading only.
type readOnlyFile struct{ store.StoreFile }

func (readOnlyFile) WriteAt([]byte, int64) (int, error) { return 0, syscall.EROFS }
func (readOnlyFile) Truncate(int64) error               { return syscall.EROFS }
func (readOnlyFile) Allocate(uint32, int64, int64) error {
	return syscall.EROFS
}
func (readOnlyFile) Sync() error     { return syscall.EROFS }
func (readOnlyFile) Datasync() error { return syscall.EROFS }

// openReadOnlyDevice opens the log file for reading only: a file device
// whose writes and syncs fail with EROFS, as readOnlyFile's do.
func openReadOnlyDevice(st store.StoreFS, path string) (xlog.Device, error) {
	f, err := st.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	return xlog.NewFileDevice(readOnlyFile{f})
}

// errNoRecoveryNeedsReadOnly refuses NoRecovery alone: a mount that
// skipped recovery and then wrote would write over records it never
// replayed.
var errNoRecoveryNeedsReadOnly = errors.New("norecovery needs a read-only mount")

// changeRefused is the error an operation about to change the filesystem
// gets before it touches anything: EROFS on a read-only mount, the failure
// of a journal that stopped.
func (fs *FS) changeRefused() error {
	if fs.opts.ReadOnly {
		return syscall.EROFS
	}
	return fs.x.Failure()
}

// MountMode says how the store is mounted, as .stats shows it: "rw",
// "ro", or "ro,norecovery".
func (fs *FS) MountMode() string {
	switch {
	case fs.opts.NoRecovery:
		return "ro,norecovery"
	case fs.opts.ReadOnly:
		return "ro"
	}
	return "rw"
}

// readOnlyOptions checks the read-only options and, for NoRecovery,
// puts the store behind a StoreFS that refuses every change.
func readOnlyOptions(opts *Options) error {
	if opts.NoRecovery && !opts.ReadOnly {
		return errNoRecoveryNeedsReadOnly
	}
	if opts.NoRecovery {
		opts.Store = readOnlyStore{opts.Store}
	}
	return nil
}
