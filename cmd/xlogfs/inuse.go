package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/xlogfs/xlogfs/fusefs"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/store"
	"golang.org/x/sys/unix"
)

// A store's lock says that some process uses it; /proc says which, and
// whether it is mounted. A store that is locked but mounted nowhere is a
// daemon finishing an unmount (its checkpoint and unmount record), a mount
// still recovering, or a repair: check and logprint wait for it, briefly.

// fuseType is the mount table's type of an xlogfs mount ("fuse." + the
// name fusefs mounts with).
const fuseType = "fuse.xlogfs"

// defaultStoreWait is how long check and logprint wait for a store that is
// locked but not mounted.
const defaultStoreWait = 10 * time.Second

// mountEntry is one line of /proc/self/mounts.
type mountEntry struct {
	source, dir, fstype string
}

// readMounts parses /proc/self/mounts, undoing its octal escapes.
func readMounts() ([]mountEntry, error) {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mountEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		out = append(out, mountEntry{source: fusefs.UnescapeMountField(fields[0]), dir: fusefs.UnescapeMountField(fields[1]), fstype: fields[2]})
	}
	return out, sc.Err()
}

// storeMounts returns where the store in dir is mounted in this mount
// namespace (the mount's source is the store's absolute path).
func storeMounts(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	ms, _ := readMounts()
	var out []string
	for _, m := range ms {
		if m.fstype == fuseType && filepath.Clean(m.source) == abs {
			out = append(out, m.dir)
		}
	}
	return out
}

// lockHolders names the processes holding the store's lock, from
// /proc/locks ("pid 123 (xlogfs)"); empty when /proc does not say.
func lockHolders(dir string) []string {
	var st unix.Stat_t
	if err := unix.Stat(store.LockPath(dir), &st); err != nil {
		return nil
	}
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	f, err := os.Open("/proc/locks")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; a blocked
		// waiter's line has "->" after the number.
		fields := strings.Fields(strings.Replace(sc.Text(), "->", "", 1))
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[5] != id {
			continue
		}
		who := "pid " + fields[4]
		if comm, err := os.ReadFile("/proc/" + fields[4] + "/comm"); err == nil {
			who += " (" + strings.TrimSpace(string(comm)) + ")"
		}
		out = append(out, who)
	}
	return out
}

// errInUse is a store that is mounted, or locked for longer than we wait:
// not unsound, just not ours to read.
type errInUse struct {
	dir     string
	mounts  []string
	holders []string
	waited  time.Duration
}

func (e *errInUse) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is in use", e.dir)
	switch {
	case len(e.mounts) > 0:
		fmt.Fprintf(&b, ": mounted at %s", strings.Join(e.mounts, ", "))
	case e.waited > 0:
		fmt.Fprintf(&b, " still, after waiting %v", e.waited)
	}
	if len(e.holders) > 0 {
		fmt.Fprintf(&b, " (locked by %s)", strings.Join(e.holders, ", "))
	}
	switch {
	case len(e.mounts) > 0:
		fmt.Fprintf(&b, "; unmount it first (xlogfs umount %s)", e.mounts[0])
	case e.waited > 0:
		b.WriteString("; try again when it is done, or give --wait more time")
	default:
		b.WriteString("; try again when it is done")
	}
	return b.String()
}

// refuseMounted returns an *errInUse if the store in dir is mounted, by
// the mount table: with the lock or without it, as a hung daemon may have
// let go of it and still be mounted. Commands that change a store (mkfs,
// a superblock rebuild) ask this first, then take the store's lock.
func refuseMounted(dir string) error {
	if mounts := storeMounts(dir); len(mounts) > 0 {
		return &errInUse{dir: dir, mounts: mounts, holders: lockHolders(dir)}
	}
	return nil
}

// inUseOf turns a *journal.InUseError (the store's lock is held) into the
// command's *errInUse, which says where the store is mounted and which
// process holds it; any other error is returned as it is.
func inUseOf(dir string, err error) error {
	var iu *store.InUseError
	if errors.As(err, &iu) {
		return &errInUse{dir: dir, mounts: storeMounts(dir), holders: lockHolders(dir)}
	}
	return err
}

// waitForStore returns once nothing holds the store's lock. A store that
// is mounted is in use at once; one that is locked but not mounted (an
// unmount finishing) is waited for, up to wait, saying so on msgs.
func waitForStore(dir string, wait time.Duration, msgs io.Writer, cmd string) error {
	deadline := time.Now().Add(wait)
	said := false
	for {
		busy, err := store.InUse(dir)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil // not a store: the inspection says so
			}
			return err
		}
		if !busy {
			if said {
				fmt.Fprintf(msgs, "xlogfs %s: %s is free now\n", cmd, dir)
			}
			return nil
		}
		if mounts := storeMounts(dir); len(mounts) > 0 {
			return &errInUse{dir: dir, mounts: mounts, holders: lockHolders(dir)}
		}
		if !time.Now().Before(deadline) {
			return &errInUse{dir: dir, holders: lockHolders(dir), waited: wait}
		}
		if !said {
			who := "another process"
			if h := lockHolders(dir); len(h) > 0 {
				who = strings.Join(h, ", ")
			}
			fmt.Fprintf(msgs, "xlogfs %s: %s is locked by %s but not mounted (an unmount finishing?); waiting up to %v\n", cmd, dir, who, wait)
			said = true
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// inspectWaiting waits for the store (waitForStore), then inspects it
// (with the records behind the tail if all). A
// store that a mount took meanwhile is in use, not unsound.
func inspectWaiting(dir string, wait time.Duration, cmd string, all bool) (*recovery.LogReport, error) {
	if err := storeArg(dir); err != nil {
		return nil, err
	}
	if err := waitForStore(dir, wait, os.Stderr, cmd); err != nil {
		return nil, err
	}
	inspect := recovery.Inspect
	if all {
		inspect = recovery.InspectAll
	}
	rep, err := inspect(dir)
	if err == nil && rep.Mounted {
		return nil, &errInUse{dir: dir, mounts: storeMounts(dir), holders: lockHolders(dir)}
	}
	return rep, err
}

// storeArg says in a sentence why path cannot be the store directory a
// command was given: a file, or a path that cannot be looked at. A
// missing path is left to the command (mkfs and mount make it; check and
// logprint say it is not a store).
func storeArg(path string) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && !st.IsDir():
		return fmt.Errorf("%s is a file, not a directory: a store is a directory", path)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	return nil
}
