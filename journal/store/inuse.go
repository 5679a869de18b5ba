package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// A store is in use while a process holds the flock on its superblock: a
// mount holds it exclusively from before recovery until after the unmount
// record is durable (Open, Close), check's inspection and repair for as
// long as they read or cut the log. The lock dies with its process.

// LockPath is the file whose flock marks the store in dir as in use.
func LockPath(dir string) string { return filepath.Join(dir, SuperblockName) }

// InUse reports whether a process holds the store's lock in a way that
// excludes a mount: a mount, a repair, or an unmount still finishing. A
// store that is not one (no superblock) is an error.
func InUse(dir string) (bool, error) {
	f, err := os.Open(LockPath(dir))
	if err != nil {
		return false, err
	}
	defer f.Close()
	switch err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); {
	case err == nil:
		return false, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		return true, nil
	default:
		return false, fmt.Errorf("locking %s: %w", f.Name(), err)
	}
}

// Lock takes the store's exclusive lock on st for a mount's life, a
// repair's, or a mkfs --force's or a superblock rebuild's: two mounts of one
// store would allocate the same inode numbers and write the same log, and a
// store remade under a mount loses everything the mount writes. The lock
// dies with the process, so a crash never leaves it. Another holder makes
// it fail with an *InUseError.
func Lock(st StoreFS, dir string) (io.Closer, error) {
	l, err := st.Lock(LockPath(dir), true)
	if err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &InUseError{Dir: dir}
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return l, nil
}

// InUseError is a store whose lock another process holds: a mount, a
// repair, a mkfs, or an unmount still finishing. The commands say which
// process, and where the store is mounted (cmd/xlogfs/inuse.go).
type InUseError struct{ Dir string }

func (e *InUseError) Error() string {
	return fmt.Sprintf("%s is in use: another process has it mounted (or is checking it)", e.Dir)
}

// Unwrap makes errors.Is(err, syscall.EWOULDBLOCK) hold, as for the flock.
func (e *InUseError) Unwrap() error { return syscall.EWOULDBLOCK }
