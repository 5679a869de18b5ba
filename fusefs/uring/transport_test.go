package uring

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Start on a descriptor that is no FUSE connection: every queue's REGISTER
// fails, and Start says so and leaves nothing running.
func TestStartRefusesNonFUSEDescriptor(t *testing.T) {
	// A regular file has no uring_cmd (unlike /dev/null, whose
	// commands succeed and do nothing).
	f, err := os.CreateTemp(t.TempDir(), "not-fuse")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kernel := fuse.InitIn{Major: 7, Minor: 45}
	tr, err := Start(int(f.Fd()), fuse.NewDefaultRawFileSystem(), &fuse.MountOptions{}, &kernel, func(uint32) bool { return false })
	if errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EPERM) {
		t.Skipf("no io_uring here: %v", err)
	} else if err == nil {
		tr.Stop()
		tr.Wait()
		t.Fatal("Start on a regular file succeeded")
	}
	if !strings.Contains(err.Error(), "FUSE_IO_URING_CMD_REGISTER") {
		t.Errorf("error %q does not name the command that failed", err)
	}
}

func TestQueuesCountsPossibleCPUs(t *testing.T) {
	n, err := Queues()
	if err != nil {
		t.Fatal(err)
	}
	// Possible CPUs are at least those this process may run on.
	if n < runtime.NumCPU() {
		t.Errorf("%d queues for %d CPUs", n, runtime.NumCPU())
	}
}
