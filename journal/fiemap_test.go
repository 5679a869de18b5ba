package journal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/xlogfs/xlogfs/journal/store"
	"golang.org/x/sys/unix"
)

// overwritable on the filesystem the tests run on: the written prefix of
// a file, never a hole or a preallocated (unwritten) extent.
func TestOverwritable(t *testing.T) {
	dir := t.TempDir()
	var sfs unix.Statfs_t
	check(t, unix.Statfs(dir, &sfs))
	inPlace := sfs.Type == unix.EXT4_SUPER_MAGIC || sfs.Type == unix.XFS_SUPER_MAGIC
	open := func(name string) store.StoreFile {
		f, err := store.OSFS().OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE, 0o600)
		check(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	over := func(f store.StoreFile) int64 {
		t.Helper()
		check(t, f.Datasync())
		return must[int64](t)(f.Overwritable())
	}
	block := make([]byte, 64<<10)
	for i := range block {
		block[i] = byte(i) | 1
	}
	f := open("dense")
	must[int](t)(f.WriteAt(block, 0))
	must[int](t)(f.WriteAt(block[:1000], int64(len(block))))
	want := int64(len(block) + 1000)
	if !inPlace {
		want = 0
	}
	if got := over(f); got != want {
		t.Errorf("a file written from 0 to %d: overwritable %d, want %d (filesystem type %#x)", len(block)+1000, got, want, sfs.Type)
	}
	g := open("holey")
	must[int](t)(g.WriteAt(block, 0))
	must[int](t)(g.WriteAt(block, 4*int64(len(block))))
	if got := over(g); got > int64(len(block)) {
		t.Errorf("a file with a hole after %d bytes: overwritable %d", len(block), got)
	}
	h := open("prealloc")
	check(t, h.Allocate(0, 0, 1<<20))
	if got := over(h); got != 0 {
		t.Errorf("a preallocated (unwritten) file: overwritable %d, want 0", got)
	}
	if !inPlace {
		t.Logf("the test filesystem (type %#x) is not one that overwrites in place: every answer was 0", sfs.Type)
	}
}
