package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/journal/store"
)

// TestCheckRebuildSuperblock: check of a store whose superblock fails its
// CRC says so and points at --rebuild-superblock; --rebuild-superblock
// refuses while another process holds the damaged superblock's lock
// (naming it, as for a mounted store), then writes the superblock mkfs
// wrote, bit for bit, and checks the store; run again, it has nothing to
// do.
func TestCheckRebuildSuperblock(t *testing.T) {
	dir, _ := fsyncedStore(t, 3)
	sbPath := filepath.Join(dir, "superblock")
	orig, err := os.ReadFile(sbPath)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := store.ReadSuperblock(store.OSFS(), dir)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(orig)
	bad[14] ^= 0x01 // a UUID bit
	if err := os.WriteFile(sbPath, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCapture(t, "check", dir)
	if code != 1 || !strings.Contains(errs, "superblock CRC mismatch") || !strings.Contains(errs, "xlogfs check --rebuild-superblock "+dir) || strings.Contains(errs, "mkfs") {
		t.Fatalf("check of a store with a damaged superblock: exit %d\n%s%s", code, out, errs)
	}

	f, err := os.Open(sbPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	// The lock is this process's: /proc/locks names it.
	code, out, errs = runCapture(t, "check", "--rebuild-superblock", dir)
	if code != 1 || !strings.Contains(errs, dir+" is in use") || !strings.Contains(errs, fmt.Sprintf("locked by pid %d", os.Getpid())) {
		t.Fatalf("check --rebuild-superblock of a locked store: exit %d\n%s%s", code, out, errs)
	}
	f.Close()
	if got, _ := os.ReadFile(sbPath); !bytes.Equal(got, bad) {
		t.Fatal("a refused rebuild changed the superblock")
	}

	code, out, errs = runCapture(t, "check", "--rebuild-superblock", dir)
	want := fmt.Sprintf("rebuild: writing %s: format 1, uuid %x (carried by the ", sbPath, sb.UUID)
	if code != 0 || !strings.Contains(out, "superblock: "+sbPath+": superblock CRC mismatch") || !strings.Contains(out, want) ||
		!strings.Contains(out, "log 8 MiB (the log file's size), logbsize 32 KiB (the iclog size of the checkpoint's writer)") ||
		!strings.Contains(out, "rebuild: done") || !strings.Contains(out, "metadata: ok") {
		t.Fatalf("check --rebuild-superblock: exit %d\n%s%s\nwant %q", code, out, errs, want)
	}
	if got, _ := os.ReadFile(sbPath); !bytes.Equal(got, orig) {
		t.Fatal("the rebuilt superblock is not the one mkfs wrote")
	}
	code, out, _ = runCapture(t, "check", "--rebuild-superblock", dir)
	if code != 0 || !strings.Contains(out, "the superblock is sound; nothing to rebuild") {
		t.Fatalf("check --rebuild-superblock of a sound store: exit %d\n%s", code, out)
	}
}
