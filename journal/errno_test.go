package journal

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/journal/xlog"
)

// TestErrno pins the one errno mapping of the filesystem.
func TestErrno(t *testing.T) {
	for _, c := range []struct {
		err  error
		want syscall.Errno
	}{
		{nil, 0},
		{syscall.ENOENT, syscall.ENOENT},
		{fmt.Errorf("data file 12 at offset 4096: %w", syscall.ENOSPC), syscall.ENOSPC},
		{&xlog.FailedError{Reason: syscall.ENOSPC}, syscall.EIO}, // a stopped journal is EIO, whatever stopped it
		{fmt.Errorf("commit: %w", &xlog.FailedError{Reason: errors.New("log write")}), syscall.EIO},
		{xlog.ErrClosed, syscall.EIO},
		{errors.New("something else"), syscall.EIO},
	} {
		if got := Errno(c.err); got != c.want {
			t.Errorf("Errno(%v) = %v, want %v", c.err, got, c.want)
		}
		if got := errno(c.err); (got == nil) != (c.want == 0) || got != nil && got != c.want {
			t.Errorf("errno(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
