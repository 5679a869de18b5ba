package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/xlogfs/xlogfs/fusefs"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/statsfile"
	"github.com/xlogfs/xlogfs/journal/store"
)

func init() {
	register(command{name: "umount", summary: "unmount, returning once the daemon has written its unmount record", args: "MOUNTPOINT", min: 1, max: 1, setup: runUmount})
}

func runUmount(fs *flagSet) func(pos []string) error {
	fs.about = `
Unmounts the xlogfs mount at MOUNTPOINT (with fusermount3 -u) and waits for
its daemon to finish: the final checkpoint, the unmount record, and the
store's lock let go. It returns 0 only then, with the store's log ending in
its unmount record, so "xlogfs umount MNT && xlogfs check DIR" never finds
the store in use. A mount that stays busy (a process has a file or its
working directory there) is left mounted, with an error; so is a daemon
that does not finish within --timeout. If the daemon had died, the mount is
cleared and umount says that the log has no unmount record (the next mount
recovers it). A mount with --norecovery leaves the log as it was, with an
unmount record or without.`
	timeout := fs.Duration("timeout", 2*time.Minute, "how long to wait for the daemon to finish after the unmount")
	return func(pos []string) (err error) {
		mnt, err := mountPath(pos[0])
		if err != nil {
			return err
		}
		dir, err := xlogfsMount(mnt)
		if err != nil {
			return err
		}
		holders := lockHolders(dir)
		// A mount without recovery leaves the log as it found it, unmount
		// record or not.
		noRecovery := false
		if b, err := os.ReadFile(filepath.Join(mnt, fusefs.StatsName)); err == nil {
			if f, err := statsfile.Parse(b); err == nil {
				mode, _ := f.Value("mount_mode")
				noRecovery = mode == "ro,norecovery"
			}
		}
		if err := fusermountU(mnt); err != nil {
			return err
		}
		if err := waitDaemon(dir, holders, *timeout); err != nil {
			return err
		}
		rep, err := recovery.Inspect(dir)
		if err != nil {
			return fmt.Errorf("%s is unmounted, but reading its store %s: %w", mnt, dir, err)
		}
		if rep.Mounted {
			return fmt.Errorf("%s is unmounted, but %s is in use again (mounted anew?)", mnt, dir)
		}
		if !rep.Clean && !noRecovery {
			return fmt.Errorf("%s is unmounted, but the log of %s does not end with an unmount record: the daemon stopped without finishing "+
				"(its messages are in %s); the next mount recovers the log", mnt, dir, filepath.Join(dir, "xlogfs.log"))
		}
		return nil
	}
}

// mountPath makes a mount point absolute, resolving symlinks in the
// directories above it but not the mount point itself (a dead FUSE mount
// cannot be looked up).
func mountPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return filepath.Join(parent, filepath.Base(abs)), nil
}

// xlogfsMount returns the store mounted at mnt, or says why mnt is not an
// xlogfs mount.
func xlogfsMount(mnt string) (string, error) {
	ms, err := readMounts()
	if err != nil {
		return "", err
	}
	var found *mountEntry
	for i := range ms {
		if ms[i].dir == mnt {
			found = &ms[i] // the last one is on top
		}
	}
	switch {
	case found == nil:
		if _, err := os.Lstat(mnt); errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s does not exist, so nothing is mounted there", mnt)
		} else if err != nil {
			return "", fmt.Errorf("%s: %w", mnt, unwrapPath(err))
		}
		return "", fmt.Errorf("%s is not mounted", mnt)
	case found.fstype != fuseType:
		return "", fmt.Errorf("%s is not an xlogfs mount (it is %s from %s)", mnt, found.fstype, found.source)
	case !filepath.IsAbs(found.source) || !store.IsStore(store.OSFS(), found.source):
		return "", fmt.Errorf("%s: the mount table names its store %q, which is not a store's path; use fusermount3 -u", mnt, found.source)
	}
	return found.source, nil
}

// fusermountU unmounts mnt, retrying for a moment while it is busy: the
// kernel releases a file a moment after its last close.
func fusermountU(mnt string) error {
	var out []byte
	var err error
	for range 20 {
		out, err = exec.Command("fusermount3", "-u", mnt).CombinedOutput()
		if err == nil || !bytes.Contains(out, []byte("busy")) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	msg := strings.TrimSpace(string(out))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, exec.ErrNotFound):
		return fmt.Errorf("fusermount3 is missing (Debian package fuse3): %w", err)
	case strings.Contains(msg, "busy"):
		return fmt.Errorf("%s is busy: a process has a file or its working directory there (fuser -vm %s shows which); still mounted", mnt, mnt)
	}
	return fmt.Errorf("fusermount3 -u %s: %v: %s", mnt, err, msg)
}

// waitDaemon waits for the store's lock to be let go: the daemon is done.
func waitDaemon(dir string, holders []string, timeout time.Duration) error {
	who := "the daemon"
	if len(holders) > 0 {
		who += " (" + strings.Join(holders, ", ") + ")"
	}
	start := time.Now()
	said := false
	for {
		busy, err := store.InUse(dir)
		if err != nil {
			return err
		}
		if !busy {
			return nil
		}
		waited := time.Since(start)
		if waited > timeout {
			return fmt.Errorf("%s still holds %s %v after the unmount; its messages are in %s",
				who, dir, timeout, filepath.Join(dir, "xlogfs.log"))
		}
		if !said && waited > time.Second {
			fmt.Fprintf(os.Stderr, "xlogfs umount: waiting for %s to write its checkpoint and unmount record\n", who)
			said = true
		}
		time.Sleep(20 * time.Millisecond)
	}
}
