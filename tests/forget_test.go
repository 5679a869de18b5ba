package tests

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A file the kernel looked up again and again (a second name, and lookups
// after the entry timeout: each answer makes a go-fuse node, and go-fuse
// keeps the one it knows and throws the new one away) is freed once it is
// removed and the kernel forgets it: its data file goes while the
// filesystem is mounted, and statfs stops counting it. A hold taken for a
// thrown-away node kept the inode, and its data file's space, until the
// next mount (dbench's deleted files piled up so, and every statfs walked
// them).
func TestRemovedAfterLookupsGivesSpaceBack(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	mkfs(t, store)
	m := mountDaemon(t, store, mnt, "--attr-timeout", "100ms")
	defer m.unmount(t)
	var before unix.Statfs_t
	if err := unix.Statfs(mnt, &before); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(mnt, "f")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, path+"2"); err != nil {
		t.Fatal(err)
	}
	var ino uint64
	for range 3 {
		time.Sleep(150 * time.Millisecond) // past the entry timeout: the next stat is a LOOKUP
		for _, p := range []string{path, path + "2"} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			ino = fi.Sys().(*syscall.Stat_t).Ino
		}
	}
	data := filepath.Join(store, "data", strconv.FormatUint(ino, 10))
	if _, err := os.Stat(data); err != nil {
		t.Fatalf("the data file of the written file: %v", err)
	}
	for _, p := range []string{path, path + "2"} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		// A fsync of the directory forces the log: the free is durable,
		// and its data file may go.
		if d, err := os.Open(mnt); err == nil {
			d.Sync()
			d.Close()
		}
		_, err := os.Stat(data)
		if os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("15 s after removing a file looked up 20 times, its data file %s is still there (%v): the inode was never freed while mounted", data, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var after unix.Statfs_t
	if err := unix.Statfs(mnt, &after); err != nil {
		t.Fatal(err)
	}
	if used, was := after.Files-after.Ffree, before.Files-before.Ffree; used != was {
		t.Errorf("statfs counts %d inodes in use after the file was created and removed, %d before", used, was)
	}
}
