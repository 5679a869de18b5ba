package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMkfsMountedStore: mkfs of a mounted store is refused, --force or
// not, exit 1, naming the mount point and the daemon's pid and saying to
// unmount first, as check's refusal does; the store is untouched, so the
// unmount is clean and a file written before reads back after a remount.
// A store still mounted whose lock is not held (a daemon that let go of
// it: here, the superblock replaced by a copy, a new inode no one locks)
// is refused by the mount table. Before the fix mkfs --force remade the
// store under its mount, and the file read back as zeros.
func TestMkfsMountedStore(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt)
	mustOK(t, os.WriteFile(filepath.Join(mnt, "f"), []byte("x\n"), 0o644))

	// info names the mount point and the daemon, from the store or the
	// mount point, and the mount's choices.
	for _, arg := range []string{store, mnt} {
		code, out, errs := xlogfsRun(t, "info", arg)
		for _, want := range []string{fmt.Sprintf("mounted   at %s by pid %d", mnt, m.pid), "state     in use: mounted, journal ok", "checksum  crc covers whole, mode batched, kernel ", "journal   meta, log items xfs, mounted rw"} {
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("xlogfs info %s: exit %d, %q %q; want %q", arg, code, out, errs, want)
			}
		}
	}
	// A second mount of the store says the same: where and by whom.
	other := filepath.Join(t.TempDir(), "mnt2")
	mustOK(t, os.Mkdir(other, 0o755))
	for _, args := range [][]string{{"mkfs", "--force", store}, {"mkfs", store}, {"mount", store, other}, {"mount", "--foreground", store, other}} {
		code, out, errs := xlogfsRun(t, args...)
		for _, want := range []string{store + " is in use: mounted at " + mnt, fmt.Sprintf("locked by pid %d", m.pid), "unmount it first (xlogfs umount " + mnt + ")"} {
			if code != 1 || !strings.Contains(errs, want) || strings.Contains(out, "made xlogfs store") {
				t.Fatalf("xlogfs %s of a mounted store: exit %d, %q %q; want exit 1 and %q", strings.Join(args, " "), code, out, errs, want)
			}
		}
	}

	sb := filepath.Join(store, "superblock")
	b, err := os.ReadFile(sb)
	mustOK(t, err)
	mustOK(t, os.WriteFile(sb+".copy", b, 0o644))
	mustOK(t, os.Rename(sb+".copy", sb))
	if code, out, errs := xlogfsRun(t, "mkfs", "--force", store); code != 1 || !strings.Contains(errs, store+" is in use: mounted at "+mnt) {
		t.Fatalf("xlogfs mkfs --force of a store mounted but not locked: exit %d, %q %q", code, out, errs)
	}

	m.unmount(t)
	checkStore(t, store, true)
	m = m.remount(t)
	if got, err := os.ReadFile(filepath.Join(mnt, "f")); err != nil || string(got) != "x\n" {
		t.Fatalf("after a refused mkfs --force, the file reads %q, %v; want \"x\\n\"", got, err)
	}
	m.unmount(t)
}

// TestLostSuperblock: a store that lost only its superblock is one check
// sends to check --rebuild-superblock, never to mkfs --force (which would
// throw away every file); mkfs without --force refuses it for the same
// reason; the rebuild writes the superblock with the UUID the log records
// carry, and the store mounts with its files.
func TestLostSuperblock(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt)
	mustOK(t, os.WriteFile(filepath.Join(mnt, "f"), []byte("x\n"), 0o644))
	mustOK(t, os.Mkdir(filepath.Join(mnt, "d"), 0o755))
	m.unmount(t)
	out := checkStore(t, store, true)
	uuid := strings.Fields(out[strings.Index(out, "uuid ")+len("uuid "):])[0]
	uuid = strings.TrimSuffix(uuid, ",")
	mustOK(t, os.Remove(filepath.Join(store, "superblock")))

	code, out, errs := xlogfsRun(t, "check", store)
	if code != 1 || !strings.Contains(errs, "lost its superblock") || !strings.Contains(errs, "xlogfs check --rebuild-superblock "+store) ||
		strings.Contains(out+errs, "mkfs") || strings.Contains(out+errs, "half-built") {
		t.Fatalf("check of a store without its superblock: exit %d\n%s%s\nwant exit 1 pointing at check --rebuild-superblock, never at mkfs", code, out, errs)
	}
	if code, out, errs := xlogfsRun(t, "mkfs", store); code != 1 || !strings.Contains(errs, "--rebuild-superblock") || !strings.Contains(errs, "--force would throw the store away") {
		t.Fatalf("mkfs of a store that lost its superblock: exit %d %q %q", code, out, errs)
	}

	code, out, errs = xlogfsRun(t, "check", "--rebuild-superblock", store)
	if code != 0 || !strings.Contains(out, "superblock: missing") || !strings.Contains(out, "rebuild: writing "+filepath.Join(store, "superblock")+": format 1, uuid "+uuid+" (carried by the ") ||
		!strings.Contains(out, "rebuild: done") || !strings.Contains(out, "superblock: ok (format 1, uuid "+uuid) || !strings.Contains(out, "metadata: ok") {
		t.Fatalf("check --rebuild-superblock: exit %d\n%s%s\nwant the superblock rebuilt with uuid %s, then a sound store", code, out, errs, uuid)
	}
	m = m.remount(t)
	if got, err := os.ReadFile(filepath.Join(mnt, "f")); err != nil || string(got) != "x\n" {
		t.Fatalf("after the rebuild, the file reads %q, %v", got, err)
	}
	if fi, err := os.Stat(filepath.Join(mnt, "d")); err != nil || !fi.IsDir() {
		t.Fatalf("after the rebuild, the directory: %v", err)
	}
	m.unmount(t)
}
