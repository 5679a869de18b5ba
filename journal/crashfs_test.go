package journal

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/journal/internal/testfs"
)

// crashImages returns n crash images of c.
func crashImages(c *testfs.CrashFS, n int) []*testfs.CrashFS {
	r := rand.New(rand.NewPCG(1, 2))
	var out []*testfs.CrashFS
	for range n {
		out = append(out, c.Crash(r))
	}
	return out
}

// TestCrashFSModel checks CrashFS against the durability model its doc
// comment states, one rule at a time.
func TestCrashFSModel(t *testing.T) {
	c := testfs.NewCrashFS()
	check(t, c.Mkdir("/d", 0o755))
	check(t, c.SyncDir("/"))
	old := bytes.Repeat([]byte{'o'}, 4*testfs.SectorSize)
	f, err := c.OpenFile("/d/f", os.O_RDWR|os.O_CREATE, 0o644)
	check(t, err)
	must[int](t)(f.WriteAt(old, 0))
	check(t, f.Sync())

	// A name is not durable before its directory's sync, whatever the
	// file's fsync did.
	lost := 0
	for _, img := range crashImages(c, 50) {
		if _, ok := testfs.ReadFile(t, img, "/d/f"); !ok {
			lost++
		}
	}
	if lost == 0 {
		t.Error("a file fsynced but not its directory survived every crash")
	}
	check(t, c.SyncDir("/d"))
	for _, img := range crashImages(c, 50) {
		if b, ok := testfs.ReadFile(t, img, "/d/f"); !ok || !bytes.Equal(b, old) {
			t.Fatalf("after fsync of file and directory: %q, %v", b, ok)
		}
	}

	// Unsynced writes: lost, kept, or torn per sector, never anything
	// else; after Sync, always there.
	neu := bytes.Repeat([]byte{'n'}, 4*testfs.SectorSize)
	must[int](t)(f.WriteAt(neu, 0))
	var sawOld, sawNew, sawTorn bool
	for _, img := range crashImages(c, 200) {
		b, _ := testfs.ReadFile(t, img, "/d/f")
		if len(b) != len(old) {
			t.Fatalf("an overwrite changed the size after a crash: %d", len(b))
		}
		switch {
		case bytes.Equal(b, old):
			sawOld = true
		case bytes.Equal(b, neu):
			sawNew = true
		default:
			sawTorn = true
			for s := 0; s < len(b); s += testfs.SectorSize {
				sec := b[s : s+testfs.SectorSize]
				if !bytes.Equal(sec, old[:testfs.SectorSize]) && !bytes.Equal(sec, neu[:testfs.SectorSize]) {
					t.Fatalf("sector %d is neither old nor new", s/testfs.SectorSize)
				}
			}
		}
	}
	if !sawOld || !sawNew || !sawTorn {
		t.Errorf("unsynced overwrite: old %v, new %v, torn %v; want all three", sawOld, sawNew, sawTorn)
	}
	check(t, f.Datasync())
	for _, img := range crashImages(c, 20) {
		if b, _ := testfs.ReadFile(t, img, "/d/f"); !bytes.Equal(b, neu) {
			t.Fatal("a write lost after fdatasync")
		}
	}

	// Sizes are volatile too: an unsynced append may leave the old
	// size, the new size with zeros, or the new bytes.
	must[int](t)(f.WriteAt([]byte("tail"), int64(len(neu))))
	sizes := map[int]bool{}
	for _, img := range crashImages(c, 100) {
		b, _ := testfs.ReadFile(t, img, "/d/f")
		sizes[len(b)] = true
		if len(b) == len(neu)+4 && !bytes.Equal(b[len(neu):], []byte("tail")) && !bytes.Equal(b[len(neu):], make([]byte, 4)) {
			t.Fatalf("appended bytes after a crash: %q", b[len(neu):])
		}
	}
	if !sizes[len(neu)] || !sizes[len(neu)+4] {
		t.Errorf("sizes after an unsynced append: %v", sizes)
	}
	check(t, f.Sync())

	// Rename over a file: old or new, whole, never neither, until the
	// directory is synced.
	g, err := c.OpenFile("/d/g.tmp", os.O_RDWR|os.O_CREATE, 0o644)
	check(t, err)
	must[int](t)(g.WriteAt([]byte("replacement"), 0))
	check(t, g.Sync())
	check(t, g.Close())
	check(t, c.Rename("/d/g.tmp", "/d/f"))
	var sawRenamed, sawKept bool
	for _, img := range crashImages(c, 100) {
		b, ok := testfs.ReadFile(t, img, "/d/f")
		switch {
		case !ok:
			t.Fatal("a rename over a file lost both")
		case string(b) == "replacement":
			sawRenamed = true
		case bytes.HasPrefix(b, neu):
			sawKept = true
		default:
			t.Fatalf("after a rename: %q", b)
		}
	}
	if !sawRenamed || !sawKept {
		t.Errorf("unsynced rename: renamed %v, kept %v", sawRenamed, sawKept)
	}
	check(t, c.SyncDir("/d"))
	if b, _ := testfs.ReadFile(t, c.Crash(nil), "/d/f"); string(b) != "replacement" {
		t.Fatalf("rename lost after the directory's sync: %q", b)
	}
	if names, _ := c.Crash(nil).ReadDir("/d"); !slices.Equal(names, []string{"f"}) {
		t.Fatalf("after the rename: %q", names)
	}

	// A failed fsync loses what it was to write, and a later fsync
	// does not bring it back (Linux marks the pages clean).
	ff := testfs.NewFaultFS(c)
	h, err := ff.OpenFile("/d/f", os.O_RDWR, 0)
	check(t, err)
	must[int](t)(h.WriteAt([]byte("REPLACEMENT"), 0))
	ff.SetFault(func(fc testfs.FaultCall) syscall.Errno {
		if fc.Op == "fdatasync" {
			return syscall.EIO
		}
		return 0
	})
	if err := h.Datasync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("injected fdatasync failure: %v", err)
	}
	ff.SetFault(nil)
	check(t, h.Datasync())
	if b, _ := testfs.ReadFile(t, c, "/d/f"); string(b) != "REPLACEMENT" {
		t.Fatalf("the page cache lost the write: %q", b)
	}
	if b, _ := testfs.ReadFile(t, c.Crash(nil), "/d/f"); string(b) != "replacement" {
		t.Fatalf("after a failed fdatasync and a good one, the disk has %q; want the write lost", b)
	}

	// Capacity: a write past it fails with ENOSPC and changes nothing.
	c.SetCapacity(100)
	if _, err := h.WriteAt(make([]byte, 200), 0); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write past the capacity: %v", err)
	}
	if b, _ := testfs.ReadFile(t, c, "/d/f"); string(b) != "REPLACEMENT" {
		t.Fatalf("a refused write changed the file: %q", b)
	}
	check(t, c.Remove("/d/f"))
	must[int](t)(h.WriteAt(make([]byte, 200), 0)) // unlinked: counts no more
}
