package store_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/journal/internal/testfs"
	"github.com/xlogfs/xlogfs/journal/store"
)

// TestMkfsInUse: mkfs refuses a store whose lock another process holds (a
// mount's exclusive lock, or check's shared one), with --force or not, and
// changes nothing of it. Before the fix, mkfs --force remade a mounted
// store under its mount.
func TestMkfsInUse(t *testing.T) {
	dir := t.TempDir()
	sb := mkfs(t, dir, store.MkfsOptions{})
	if err := os.WriteFile(filepath.Join(dir, store.DataDirName, "2"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := names(t, dir)
	for _, exclusive := range []bool{true, false} {
		l, err := store.OSFS().Lock(store.LockPath(dir), exclusive)
		if err != nil {
			t.Fatal(err)
		}
		for _, force := range []bool{false, true} {
			what := fmt.Sprintf("mkfs (force %v) of a store locked (exclusive %v)", force, exclusive)
			_, err := store.Mkfs(dir, store.MkfsOptions{LogSize: store.MinLogSize, Force: force})
			var iu *store.InUseError
			if !errors.As(err, &iu) || iu.Dir != dir || !errors.Is(err, syscall.EWOULDBLOCK) {
				t.Fatalf("%s: %v, want an InUseError for %s", what, err, dir)
			}
			wantErr(t, err, dir, "in use")
			if again, err := store.ReadSuperblock(store.OSFS(), dir); err != nil || again.UUID != sb.UUID {
				t.Fatalf("%s changed the superblock: %v", what, err)
			}
			if n := names(t, dir); !slices.Equal(n, before) {
				t.Fatalf("%s: the store holds %q, was %q", what, n, before)
			}
			if b, err := os.ReadFile(filepath.Join(dir, store.DataDirName, "2")); err != nil || string(b) != "x\n" {
				t.Fatalf("%s: the data file holds %q, %v", what, b, err)
			}
		}
		l.Close()
	}
	mkfs(t, dir, store.MkfsOptions{Force: true})
}

// mountWouldStart reports whether a mount of dir could start now: it reads
// the superblock, then takes the lock, as journal.Open does.
func mountWouldStart(dir string) bool {
	if _, err := store.ReadSuperblock(store.OSFS(), dir); err != nil {
		return false
	}
	l, err := store.Lock(store.OSFS(), dir)
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// TestMkfsForceHoldsLock: from the moment mkfs --force takes the store's
// lock until the new superblock is durable, no mount can start on the
// store: at every call mkfs makes, one would find no superblock or the
// lock held.
func TestMkfsForceHoldsLock(t *testing.T) {
	dir := t.TempDir()
	mkfs(t, dir, store.MkfsOptions{})
	ffs := testfs.NewFaultFS(store.OSFS())
	locked, checked := false, 0
	var started []string
	ffs.SetFault(func(c testfs.FaultCall) syscall.Errno {
		if locked {
			checked++
			if mountWouldStart(dir) {
				started = append(started, c.Op+" "+filepath.Base(c.Name))
			}
		}
		if c.Op == "lock" && c.Name == store.LockPath(dir) {
			locked = true
		}
		return 0
	})
	if _, err := store.Mkfs(dir, store.MkfsOptions{LogSize: store.MinLogSize, Force: true, Store: ffs}); err != nil {
		t.Fatal(err)
	}
	ffs.SetFault(nil)
	if !locked {
		t.Fatal("mkfs --force of a store never took its lock")
	}
	if len(started) > 0 {
		t.Fatalf("a mount could have started while mkfs --force remade the store, before: %q", started)
	}
	if checked < 10 || !mountWouldStart(dir) {
		t.Fatalf("checked %d calls; after mkfs, a mount can start: %v", checked, mountWouldStart(dir))
	}
}

// TestMkfsForceInterrupted: mkfs --force first marks the old superblock;
// a failure (or crash) part way leaves a store that says mkfs --force did
// not finish, not the old superblock over what is left of the old store,
// and mkfs --force finishes it. A failure to mark leaves the store as it
// was.
func TestMkfsForceInterrupted(t *testing.T) {
	dir := t.TempDir()
	sb := mkfs(t, dir, store.MkfsOptions{})
	ffs := testfs.NewFaultFS(store.OSFS())
	ffs.SetFault(func(c testfs.FaultCall) syscall.Errno {
		if c.Op == "remove" && filepath.Base(c.Name) == store.LogName {
			return syscall.EIO
		}
		return 0
	})
	_, err := store.Mkfs(dir, store.MkfsOptions{LogSize: store.MinLogSize, Force: true, Store: ffs})
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("mkfs --force with a failing remove: %v", err)
	}
	_, err = store.ReadSuperblock(store.OSFS(), dir)
	wantErr(t, err, dir, "half-built", "mkfs --force", "did not finish")
	_, err = store.Mkfs(dir, store.MkfsOptions{LogSize: store.MinLogSize})
	wantErr(t, err, dir, "half-built", "--force")
	_, err = store.PlanSuperblock(store.OSFS(), dir)
	wantErr(t, err, "mkfs --force")
	again := mkfs(t, dir, store.MkfsOptions{Force: true})
	if again.UUID == sb.UUID {
		t.Error("mkfs --force kept the UUID")
	}

	// The mark itself fails: the old superblock is put back.
	failed := false
	ffs.SetFault(func(c testfs.FaultCall) syscall.Errno {
		if !failed && c.Op == "fsync" && filepath.Base(c.Name) == store.SuperblockName {
			failed = true
			return syscall.EIO
		}
		return 0
	})
	_, err = store.Mkfs(dir, store.MkfsOptions{LogSize: store.MinLogSize, Force: true, Store: ffs})
	wantErr(t, err, "marking")
	if got, err := store.ReadSuperblock(store.OSFS(), dir); err != nil || got.UUID != again.UUID {
		t.Fatalf("a mkfs --force that could not mark the superblock left it: %v", err)
	}
}
