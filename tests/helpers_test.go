package tests

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockProbe is a helper process (see runHelper) that tries a POSIX record
// lock on a file from outside the test's process:
//
//	lockprobe setlk FILE   F_SETLK a write lock on the whole file; prints "locked" or "EAGAIN"
//	lockprobe getlk FILE   F_GETLK for a write lock; prints "unlocked" or "locked by PID"
//	lockprobe setlkw FILE  F_SETLKW (waits for the lock); prints "locked"
//
// It exits 0 when the call behaved (including EAGAIN), 1 on an error.
func lockProbe(args []string) int {
	if len(args) != 2 {
		fmt.Fprintf(os.Stderr, "lockprobe: want OP FILE, got %q\n", args)
		return 2
	}
	op, path := args[0], args[1]
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "lockprobe: %v\n", err)
		return 1
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	switch op {
	case "setlk", "setlkw":
		cmd := unix.F_SETLK
		if op == "setlkw" {
			cmd = unix.F_SETLKW
		}
		err := unix.FcntlFlock(f.Fd(), cmd, &lk)
		switch {
		case err == nil:
			fmt.Println("locked")
		case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES):
			fmt.Println("EAGAIN")
		default:
			fmt.Fprintf(os.Stderr, "lockprobe: fcntl(%s, %s): %v\n", op, path, err)
			return 1
		}
	case "getlk":
		if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err != nil {
			fmt.Fprintf(os.Stderr, "lockprobe: fcntl(F_GETLK, %s): %v\n", path, err)
			return 1
		}
		if lk.Type == unix.F_UNLCK {
			fmt.Println("unlocked")
		} else {
			fmt.Printf("locked by %d\n", lk.Pid)
		}
	default:
		fmt.Fprintf(os.Stderr, "lockprobe: unknown op %q\n", op)
		return 2
	}
	return 0
}
