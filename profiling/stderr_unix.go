//go:build unix

package profiling

import (
	"os"

	"golang.org/x/sys/unix"
)

// withoutStderr runs f with file descriptor 2 on /dev/null, so that what
// the runtime prints there meanwhile is dropped; other writers to standard
// error lose that moment's output too, so f must be quick.
func withoutStderr(f func() error) error {
	saved, err := unix.Dup(2)
	if err != nil {
		return f()
	}
	defer unix.Close(saved)
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return f()
	}
	defer null.Close()
	if unix.Dup2(int(null.Fd()), 2) != nil {
		return f()
	}
	defer unix.Dup2(saved, 2)
	return f()
}
