package tests

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLocks checks the locks databases and git take on an xlogfs file:
// POSIX record locks between processes (InnoDB locks its data files with
// F_SETLK), open-file-description locks, and flock(2).
func TestLocks(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt)
	path := filepath.Join(mnt, "ibdata1")
	if err := os.WriteFile(path, bytes.Repeat([]byte("page"), 4096), 0o660); err != nil {
		t.Fatal(err)
	}
	open := func(t *testing.T) *os.File {
		t.Helper()
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	probe := func(t *testing.T, op string) string {
		t.Helper()
		out, err := helperCommand("lockprobe", op, path).CombinedOutput()
		if err != nil {
			t.Fatalf("lockprobe %s %s: %v: %s", op, path, err, out)
		}
		return strings.TrimSpace(string(out))
	}

	t.Run("posix", func(t *testing.T) {
		f := open(t)
		whole := unix.Flock_t{Type: unix.F_WRLCK}
		if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &whole); err != nil {
			t.Fatalf("F_SETLK write lock: %v", err)
		}
		if got, want := probe(t, "getlk"), fmt.Sprintf("locked by %d", os.Getpid()); got != want {
			t.Errorf("F_GETLK from another process while we hold a write lock: %q, want %q", got, want)
		}
		if got := probe(t, "setlk"); got != "EAGAIN" {
			t.Errorf("F_SETLK from another process while we hold a write lock: %q, want EAGAIN", got)
		}

		// F_SETLKW in another process waits for our unlock, then gets it.
		waiter := helperCommand("lockprobe", "setlkw", path)
		var out bytes.Buffer
		waiter.Stdout, waiter.Stderr = &out, &out
		if err := waiter.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- waiter.Wait() }()
		for !blockedOnLock(waiter.Process.Pid) {
			select {
			case err := <-exited:
				t.Fatalf("F_SETLKW in another process returned (%v: %s) while we held the write lock", err, out.Bytes())
			case <-time.After(5 * time.Millisecond):
			}
		}
		unlock := unix.Flock_t{Type: unix.F_UNLCK}
		if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &unlock); err != nil {
			t.Fatalf("F_SETLK unlock: %v", err)
		}
		if err := <-exited; err != nil || strings.TrimSpace(out.String()) != "locked" {
			t.Fatalf("F_SETLKW waiter after our unlock: %v, %q; want it to get the lock", err, out.Bytes())
		}

		// A read lock on a range conflicts with a whole-file write lock,
		// and closing any descriptor of the file drops the process's locks.
		part := unix.Flock_t{Type: unix.F_RDLCK, Start: 100, Len: 100}
		if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &part); err != nil {
			t.Fatalf("F_SETLK read lock on [100,200): %v", err)
		}
		if got := probe(t, "setlk"); got != "EAGAIN" {
			t.Errorf("whole-file write lock from another process over our read lock: %q, want EAGAIN", got)
		}
		f.Close()
		if got := probe(t, "setlk"); got != "locked" {
			t.Errorf("write lock from another process after we closed the file: %q, want locked", got)
		}
	})

	t.Run("ofd", func(t *testing.T) {
		f1, f2 := open(t), open(t)
		lk := unix.Flock_t{Type: unix.F_WRLCK, Start: 0, Len: 100}
		if err := unix.FcntlFlock(f1.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
			t.Fatalf("F_OFD_SETLK write lock [0,100): %v", err)
		}
		query := unix.Flock_t{Type: unix.F_WRLCK, Start: 50, Len: 10}
		if err := unix.FcntlFlock(f2.Fd(), unix.F_OFD_GETLK, &query); err != nil {
			t.Fatalf("F_OFD_GETLK: %v", err)
		}
		if query.Type != unix.F_WRLCK || query.Start != 0 || query.Len != 100 {
			t.Errorf("F_OFD_GETLK through a second open: type %d [%d,+%d), want the write lock [0,+100)", query.Type, query.Start, query.Len)
		}
		other := unix.Flock_t{Type: unix.F_RDLCK, Start: 99, Len: 1}
		if err := unix.FcntlFlock(f2.Fd(), unix.F_OFD_SETLK, &other); !errors.Is(err, unix.EAGAIN) {
			t.Errorf("F_OFD_SETLK over another open's write lock: %v, want EAGAIN", err)
		}
		beside := unix.Flock_t{Type: unix.F_WRLCK, Start: 100, Len: 100}
		if err := unix.FcntlFlock(f2.Fd(), unix.F_OFD_SETLK, &beside); err != nil {
			t.Errorf("F_OFD_SETLK on the free range [100,200): %v", err)
		}
		f1.Close()
		if err := unix.FcntlFlock(f2.Fd(), unix.F_OFD_SETLK, &other); err != nil {
			t.Errorf("F_OFD_SETLK after the holder closed: %v", err)
		}
	})

	t.Run("flock", func(t *testing.T) {
		f1, f2, f3 := open(t), open(t), open(t)
		if err := unix.Flock(int(f1.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t.Fatalf("flock LOCK_EX: %v", err)
		}
		if err := unix.Flock(int(f2.Fd()), unix.LOCK_SH|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
			t.Errorf("flock LOCK_SH while another open holds LOCK_EX: %v, want EWOULDBLOCK", err)
		}
		if err := unix.Flock(int(f1.Fd()), unix.LOCK_UN); err != nil {
			t.Fatalf("flock LOCK_UN: %v", err)
		}
		for i, f := range []*os.File{f2, f3} {
			if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
				t.Errorf("flock LOCK_SH #%d: %v (shared locks share)", i+1, err)
			}
		}
		if err := unix.Flock(int(f1.Fd()), unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
			t.Errorf("flock LOCK_EX over two shared locks: %v, want EWOULDBLOCK", err)
		}
	})

	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, bytes.Repeat([]byte("page"), 4096)) {
		t.Errorf("the locked file's content changed: %v", err)
	}
	m.unmount(t)
	checkStore(t, store, true)
}

// blockedOnLock reports whether /proc/locks shows process pid waiting for a
// lock ("N: -> POSIX ADVISORY WRITE PID ...").
func blockedOnLock(pid int) bool {
	return anyLineFields("/proc/locks", func(fields []string) bool {
		return len(fields) > 5 && fields[1] == "->" && fields[5] == fmt.Sprint(pid)
	})
}
