package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/fusefs"
)

// TestMountCommand checks "xlogfs mount" itself: in the foreground it
// serves until SIGTERM or fusermount3 -u, as a daemon until SIGINT, and
// every way of stopping leaves a cleanly unmounted store (checkpoint and
// unmount record) that the next mount reads back; a mount that cannot
// work fails with a message and leaves nothing mounted.
func TestMountCommand(t *testing.T) {
	t.Parallel()
	t.Run("foreground", func(t *testing.T) {
		store, mnt := newStore(t)
		m := mountForeground(t, store, mnt, "--journal", "data")
		if err := os.WriteFile(filepath.Join(mnt, "first"), []byte("served in the foreground"), 0o644); err != nil {
			t.Fatal(err)
		}
		m.signal(t, syscall.SIGTERM)
		if log := m.log(); !strings.Contains(log, "unmounted") {
			t.Errorf("the foreground mount did not say it unmounted after SIGTERM:\n%s", log)
		}
		checkStore(t, store, true)

		m = m.remount(t)
		if err := os.WriteFile(filepath.Join(mnt, "second"), []byte("again"), 0o644); err != nil {
			t.Fatal(err)
		}
		m.unmount(t) // fusermount3 -u ends the foreground process too
		checkStore(t, store, true)

		m = mountDaemon(t, store, mnt)
		want := expectedTree{
			"first":  {kind: 0o100000, perm: 0o644, content: []byte("served in the foreground")},
			"second": {kind: 0o100000, perm: 0o644, content: []byte("again")},
		}
		want.check(t, mnt)
		m.signal(t, syscall.SIGINT)
		checkStore(t, store, true)
	})

	t.Run("refusals", func(t *testing.T) {
		requireFUSE(t)
		store, mnt := newStore(t)
		if _, err := tryMountDaemon(t, store, filepath.Join(mnt, "missing")); err == nil || !strings.Contains(err.Error(), filepath.Join(mnt, "missing")) {
			t.Errorf("mount on a missing mount point: %v; want an error naming it", err)
		}
		notStore := t.TempDir()
		if err := os.WriteFile(filepath.Join(notStore, "precious"), []byte("not a store"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := tryMountDaemon(t, notStore, mnt); err == nil {
			t.Errorf("mount of a non-empty directory that is no store succeeded")
		}
		if b, err := os.ReadFile(filepath.Join(notStore, "precious")); err != nil || string(b) != "not a store" {
			t.Errorf("mount of a directory that is no store touched its file: %q, %v", b, err)
		}
		if isMounted(mnt) {
			t.Errorf("%s is mounted after failed mounts", mnt)
		}
	})

	t.Run("relative paths recorded absolute", func(t *testing.T) {
		// The mount table and the store's messages name the store and
		// the mount point by absolute path, whatever the caller's
		// directory: "store" in /proc/mounts would mean nothing to
		// anyone else.
		requireFUSE(t)
		store, mnt := newStore(t)
		base := filepath.Dir(store)
		cmd := exec.Command(xlogfsBin, "mount", "--journal", "meta", "store", "mnt")
		cmd.Dir = base
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("xlogfs mount store mnt in %s: %v: %s", base, err, out)
		}
		t.Cleanup(func() {
			if isMounted(mnt) {
				exec.Command("fusermount3", "-u", "-z", mnt).Run()
			}
		})
		if at, err := fusefs.StoreMounts(store); err != nil || !slices.Contains(at, mnt) {
			t.Errorf("the mount table has %s mounted at %q (%v), want at %s (both absolute)", store, at, err, mnt)
		}
		if _, err := xlogfs("umount", mnt); err != nil {
			t.Fatal(err)
		}
		log, err := os.ReadFile(filepath.Join(store, "xlogfs.log"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(log), mnt) {
			t.Errorf("the store's log does not name the mount point %s by absolute path:\n%s", mnt, log)
		}
		checkStore(t, store, true)
	})

	t.Run("store mounted twice", func(t *testing.T) {
		// Two daemons appending to one log would destroy it: the second
		// mount of a store must be refused while the first is up.
		store, mnt := newStore(t)
		m := mountDaemon(t, store, mnt)
		if err := os.WriteFile(filepath.Join(mnt, "file"), []byte("one writer"), 0o644); err != nil {
			t.Fatal(err)
		}
		second := filepath.Join(t.TempDir(), "second")
		if err := os.Mkdir(second, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := tryMountDaemon(t, store, second); err == nil {
			t.Errorf("a second mount of %s, already mounted at %s, succeeded", store, mnt)
		}
		m.unmount(t)
		checkStore(t, store, true)
	})
}
