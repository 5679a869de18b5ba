package journal

import (
	"errors"
	"syscall"

	"github.com/xlogfs/xlogfs/journal/xlog"
)

// Errno maps an error of the journal to the errno a caller reports, the
// one mapping of the filesystem (package fusefs answers FUSE with it): 0
// for nil; EIO for a journal that has stopped, whatever stopped it (a full
// disk under the log is no reason to tell the caller ENOSPC); an errno
// anywhere in err's chain passes through; anything else (a failed data
// file) is EIO.
func Errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var f *xlog.FailedError
	if errors.As(err, &f) || errors.Is(err, xlog.ErrClosed) {
		return syscall.EIO
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return syscall.EIO
}

// errno is Errno as the error the journal's methods return: nil for nil.
func errno(err error) error {
	if e := Errno(err); e != 0 {
		return e
	}
	return nil
}
