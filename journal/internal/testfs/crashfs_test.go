package testfs

import (
	"bytes"
	"errors"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
)

// change is a data change as the durability model describes it, for the
// oracle below: a write of data at off (a hole punch or zero range is a
// write of zeros), or a size change only (data nil), or a shrinking
// truncate (shrink set: what it cut, from size to cutTo, reads as zeros
// when it is kept); size is the file's size after it.
type change struct {
	off    int64
	data   []byte
	shrink bool
	cutTo  int64
	size   int64
}

// fileStates lists every content a file may have after a power cut, by the
// model in CrashFS's doc comment, written from the doc alone: each change
// since the last sync, in issue order, lost or kept, and a write also torn
// (each 512-byte sector of the file it covers old or new; all sectors is
// kept, none is lost); then any one size the file had since the sync, the
// bytes above what the kept changes and durable bytes reach reading zeros.
func fileStates(durable []byte, changes []change) map[string]bool {
	sizes := map[int64]bool{int64(len(durable)): true}
	for _, ch := range changes {
		sizes[ch.size] = true
	}
	states := map[string]bool{}
	var walk func(i int, img []byte)
	walk = func(i int, img []byte) {
		if i == len(changes) {
			for size := range sizes {
				states[string(Resized(bytes.Clone(img), size))] = true
			}
			return
		}
		ch := changes[i]
		switch {
		case ch.shrink:
			walk(i+1, img) // lost
			cut := bytes.Clone(img)
			if ch.off < int64(len(cut)) {
				clear(cut[ch.off:min(ch.cutTo, int64(len(cut)))])
			}
			walk(i+1, cut)
		case ch.data == nil:
			walk(i+1, img)
		default:
			end := ch.off + int64(len(ch.data))
			first := ch.off / SectorSize
			n := (end+SectorSize-1)/SectorSize - first
			for mask := 0; mask < 1<<n; mask++ {
				next := Resized(bytes.Clone(img), max(int64(len(img)), end))
				for k := range n {
					if mask&(1<<k) == 0 {
						continue
					}
					lo := max((first+k)*SectorSize, ch.off)
					hi := min((first+k+1)*SectorSize, end)
					copy(next[lo:hi], ch.data[lo-ch.off:hi-ch.off])
				}
				walk(i+1, next)
			}
		}
	}
	walk(0, durable)
	return states
}

// durableFile makes name hold b, durably, name and all.
func durableFile(t *testing.T, c *CrashFS, name string, b []byte) store.StoreFile {
	t.Helper()
	f, err := c.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	check(t, err)
	if len(b) > 0 {
		if _, err := f.WriteAt(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	check(t, f.Sync())
	dir := name[:strings.LastIndex(name, "/")+1]
	check(t, c.SyncDir(dir))
	return f
}

// crashes returns n crash images of c from a fixed seed.
func crashes(c *CrashFS, n int, seed uint64) []*CrashFS {
	r := rand.New(rand.NewPCG(seed, seed))
	out := make([]*CrashFS, n)
	for i := range out {
		out[i] = c.Crash(r)
	}
	return out
}

// checkFileStates crashes c n times and checks that /f always exists and
// holds one of the contents fileStates allows, that a crash keeping nothing
// unsynced (nil) and one keeping everything both occur, and reports the
// distinct contents seen.
func checkFileStates(t *testing.T, c *CrashFS, durable []byte, changes []change, n int) map[string]bool {
	t.Helper()
	allowed := fileStates(durable, changes)
	live, _ := ReadFile(t, c, "/f")
	if !allowed[string(live)] || !allowed[string(durable)] {
		t.Fatal("the oracle misses an extreme") // a check of the test itself
	}
	if b, ok := ReadFile(t, c.Crash(nil), "/f"); !ok || !bytes.Equal(b, durable) {
		t.Fatalf("Crash(nil): /f holds %s (exists %v), want the durable bytes only", describe(b), ok)
	}
	seen := map[string]bool{}
	for i, img := range crashes(c, n, 7) {
		b, ok := ReadFile(t, img, "/f")
		if !ok {
			t.Fatalf("crash %d lost /f, whose name is durable", i)
		}
		if !allowed[string(b)] {
			t.Fatalf("crash %d: /f holds %s, which no power cut could leave", i, describe(b))
		}
		seen[string(b)] = true
	}
	if !seen[string(durable)] {
		t.Error("no crash kept only the durable bytes")
	}
	if !seen[string(live)] {
		t.Error("no crash kept every change")
	}
	return seen
}

// Writes, an append, a shrink and an extension, none synced: every crash
// leaves a state the model allows, including both extremes and each size
// the file had; after Sync or Datasync, every crash leaves the live bytes.
func TestCrashFSDataStates(t *testing.T) {
	for _, sync := range []string{"fsync", "fdatasync"} {
		t.Run(sync, func(t *testing.T) {
			c := NewCrashFS()
			durable := fill('o', 3*SectorSize)
			f := durableFile(t, c, "/f", durable)
			var changes []change
			write := func(b byte, n int, off int64) {
				p := fill(b, n)
				if _, err := f.WriteAt(p, off); err != nil {
					t.Fatal(err)
				}
				size, _ := f.Size()
				changes = append(changes, change{off: off, data: p, size: size})
			}
			truncate := func(size int64) {
				old, _ := f.Size()
				check(t, f.Truncate(size))
				changes = append(changes, change{off: size, shrink: size < old, cutTo: old, size: size})
			}
			write('1', 700, 300)  // two sectors, unaligned
			write('2', 600, 1400) // across the end: an append
			truncate(1000)
			truncate(1800)
			write('3', 10, 1700)
			if c.Pending() != 5 {
				t.Fatalf("Pending = %d, want 5", c.Pending())
			}
			seen := checkFileStates(t, c, durable, changes, 3000)
			sizes := map[int]bool{}
			torn := false
			for s := range seen {
				sizes[len(s)] = true
				// A sector half old and half from write 1.
				if len(s) > 600 && s[300] == '1' && s[511] == '1' && s[512] == 'o' {
					torn = true
				}
			}
			if want := map[int]bool{1536: true, 2000: true, 1000: true, 1800: true}; !maps.Equal(sizes, want) {
				t.Errorf("sizes after a crash: %v, want every size since the sync: %v", sizes, want)
			}
			if !torn {
				t.Error("no crash tore write 1 between its sectors")
			}
			t.Logf("%d of %d allowed states seen", len(seen), len(fileStates(durable, changes)))
			if sync == "fsync" {
				check(t, f.Sync())
			} else {
				check(t, f.Datasync())
			}
			live, _ := ReadFile(t, c, "/f")
			if len(live) != 1800 {
				t.Fatalf("live size %d, want 1800", len(live))
			}
			if c.Pending() != 0 {
				t.Fatalf("Pending after %s = %d", sync, c.Pending())
			}
			for i, img := range crashes(c, 100, 8) {
				if b, _ := ReadFile(t, img, "/f"); !bytes.Equal(b, live) {
					t.Fatalf("crash %d after %s: /f holds %s, want %s", i, sync, describe(b), describe(live))
				}
			}
		})
	}
}

// Hole punches and zero ranges are writes of zeros; a preallocation that
// extends is a size change; one that keeps the size changes nothing a
// crash could show.
func TestCrashFSAllocateStates(t *testing.T) {
	c := NewCrashFS()
	durable := fill('o', 4*SectorSize)
	f := durableFile(t, c, "/f", durable)
	var changes []change
	alloc := func(mode uint32, off, n int64) {
		check(t, f.Allocate(mode, off, n))
		size, _ := f.Size()
		ch := change{off: off, size: size}
		if mode&(meta.FallocPunchHole|meta.FallocZeroRange) != 0 {
			ch.data = make([]byte, min(off+n, size)-off)
		}
		changes = append(changes, ch)
	}
	alloc(meta.FallocPunchHole|meta.FallocKeepSize, 256, 512)
	alloc(0, 2048, 1024)                   // extends to 3072
	alloc(meta.FallocKeepSize, 3072, 4096) // beyond the size: no change to it
	alloc(meta.FallocZeroRange, 1024, 100) // inside
	alloc(meta.FallocZeroRange, 3000, 200) // extends to 3200
	if size, _ := f.Size(); size != 3200 {
		t.Fatalf("size %d, want 3200", size)
	}
	checkFileStates(t, c, durable, changes, 2000)
	check(t, f.Datasync())
	live, _ := ReadFile(t, c, "/f")
	want := join(fill('o', 256), make([]byte, 512), fill('o', 256), make([]byte, 100), fill('o', 924), make([]byte, 3200-2048))
	if !bytes.Equal(live, want) {
		t.Fatalf("live /f: %s, want %s", describe(live), describe(want))
	}
	for i, img := range crashes(c, 50, 9) {
		if b, _ := ReadFile(t, img, "/f"); !bytes.Equal(b, live) {
			t.Fatalf("crash %d after fdatasync: %s", i, describe(b))
		}
	}
}

// A random sequence of writes, truncates and syncs: after each step the
// nil crash is exactly the bytes as of the last sync, and every random
// crash is a state the model allows from them.
func TestCrashFSRandomOps(t *testing.T) {
	c := NewCrashFS()
	f := durableFile(t, c, "/f", nil)
	r := rand.New(rand.NewPCG(11, 12))
	var durable []byte
	var changes []change
	for step := range 150 {
		size, _ := f.Size()
		k := r.IntN(6)
		switch {
		case k < 3:
			p := fill(byte('a'+step%26), 1+r.IntN(600))
			off := r.Int64N(2048)
			if _, err := f.WriteAt(p, off); err != nil {
				t.Fatal(err)
			}
			changes = append(changes, change{off: off, data: p, size: max(size, off+int64(len(p)))})
		case k == 3:
			n := r.Int64N(2600)
			check(t, f.Truncate(n))
			changes = append(changes, change{off: n, shrink: n < size, cutTo: size, size: n})
		}
		if k >= 4 || len(changes) == 3 {
			if k == 4 {
				check(t, f.Sync())
			} else {
				check(t, f.Datasync())
			}
			durable, _ = ReadFile(t, c, "/f")
			changes = nil
		}
		if b, _ := ReadFile(t, c.Crash(nil), "/f"); !bytes.Equal(b, durable) {
			t.Fatalf("step %d: Crash(nil) holds %s, want the bytes of the last sync: %s", step, describe(b), describe(durable))
		}
		allowed := fileStates(durable, changes)
		for i, img := range crashes(c, 10, uint64(step)) {
			if b, _ := ReadFile(t, img, "/f"); !allowed[string(b)] {
				t.Fatalf("step %d, crash %d: /f holds %s, which no power cut could leave (durable %s, %d changes)",
					step, i, describe(b), describe(durable), len(changes))
			}
		}
	}
}

// tree is a directory's names and what each holds ("dir" for a directory).
func tree(t *testing.T, c *CrashFS, dir string) map[string]string {
	t.Helper()
	names, err := c.ReadDir(dir)
	check(t, err)
	out := map[string]string{}
	for _, n := range names {
		fi, err := c.Stat(dir + "/" + n)
		check(t, err)
		if fi.IsDir() {
			out[n] = "dir"
			continue
		}
		b, _ := ReadFile(t, c, dir+"/"+n)
		out[n] = string(b)
	}
	return out
}

// Name changes in a directory are durable only once it is synced: a crash
// before keeps its durable entries plus a prefix of the changes since (and
// a rename is atomic: old or new name, never both, never neither). Neither
// the file's fsync nor another directory's sync makes them durable.
func TestCrashFSNamesNeedSyncDir(t *testing.T) {
	c := NewCrashFS()
	check(t, c.Mkdir("/d", 0o755))
	check(t, c.Mkdir("/x", 0o755))
	check(t, c.SyncDir("/"))
	durableFile(t, c, "/d/a", []byte("A"))
	durableFile(t, c, "/d/b", []byte("B"))
	states := []map[string]string{tree(t, c, "/d")}
	step := func(do func() error) {
		t.Helper()
		check(t, do())
		states = append(states, tree(t, c, "/d"))
	}
	step(func() error { // a new file, its data synced
		f, err := c.OpenFile("/d/c", os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		f.WriteAt([]byte("C"), 0)
		if err := f.Sync(); err != nil {
			return err
		}
		return f.Datasync()
	})
	step(func() error { return c.Rename("/d/a", "/d/b") })
	step(func() error { return c.Mkdir("/d/e", 0o755) })
	step(func() error { return c.Remove("/d/c") })
	check(t, c.SyncDir("/"))
	check(t, c.SyncDir("/x"))
	if got := tree(t, c.Crash(nil), "/d"); !maps.Equal(got, states[0]) {
		t.Fatalf("Crash(nil) after syncing other directories: %v, want the durable %v", got, states[0])
	}
	seen := make([]bool, len(states))
	for i, img := range crashes(c, 300, 3) {
		got := tree(t, img, "/d")
		k := slices.IndexFunc(states, func(s map[string]string) bool { return maps.Equal(s, got) })
		if k < 0 {
			t.Fatalf("crash %d: /d holds %v, not a prefix of its changes %v", i, got, states)
		}
		seen[k] = true
	}
	for k, ok := range seen {
		if !ok {
			t.Errorf("no crash kept exactly the first %d changes: %v", k, states[k])
		}
	}
	check(t, c.SyncDir("/d"))
	if c.Pending() != 0 {
		t.Fatalf("Pending after SyncDir = %d", c.Pending())
	}
	for i, img := range crashes(c, 50, 4) {
		if got := tree(t, img, "/d"); !maps.Equal(got, states[len(states)-1]) {
			t.Fatalf("crash %d after SyncDir: %v, want %v", i, got, states[len(states)-1])
		}
	}
}

// A new directory's name needs its parent's sync too, whatever is synced
// inside it.
func TestCrashFSNewDirNeedsParentSync(t *testing.T) {
	c := NewCrashFS()
	check(t, c.Mkdir("/d", 0o755))
	durableFile(t, c, "/d/f", []byte("data")) // syncs /d, not /
	img := c.Crash(nil)
	if exists(img, "/d") {
		t.Fatal("a directory whose parent was never synced survived Crash(nil)")
	}
	check(t, c.SyncDir("/"))
	if b, ok := ReadFile(t, c.Crash(nil), "/d/f"); !ok || string(b) != "data" {
		t.Fatalf("after the parent's sync: %q, %v", b, ok)
	}
}

// A crash leaves the live filesystem as it was, and the image is a
// filesystem of its own with nothing pending.
func TestCrashFSCrashIsASnapshot(t *testing.T) {
	c := NewCrashFS()
	f := durableFile(t, c, "/f", []byte("old"))
	f.WriteAt([]byte("new!"), 0)
	c.OpenFile("/g", os.O_RDWR|os.O_CREATE, 0o644)
	pending := c.Pending()
	for _, img := range crashes(c, 20, 5) {
		if img.Pending() != 0 {
			t.Fatalf("a crash image has %d changes pending", img.Pending())
		}
		// Changing the image leaves c alone.
		g, err := img.OpenFile("/f", os.O_RDWR, 0)
		check(t, err)
		g.WriteAt([]byte("IMG"), 0)
		check(t, g.Sync())
		check(t, img.Remove("/f"))
	}
	if b, _ := ReadFile(t, c, "/f"); string(b) != "new!" {
		t.Fatalf("live /f after crashes: %q", b)
	}
	if c.Pending() != pending || !exists(c, "/g") {
		t.Fatalf("crashes changed the live filesystem: %d pending, want %d", c.Pending(), pending)
	}
	if b, _ := ReadFile(t, c.Crash(nil), "/f"); string(b) != "old" {
		t.Fatalf("Crash(nil) /f: %q", b)
	}
}

// Writeback puts an overwrite of written blocks in the device's cache:
// not durable until some Sync, Datasync or SyncDir flushes the device.
// Anything else it leaves as volatile as before.
func TestCrashFSWriteback(t *testing.T) {
	c := NewCrashFS()
	check(t, c.Mkdir("/x", 0o755))
	f := durableFile(t, c, "/f", fill('o', 2*SectorSize))
	if n, err := f.Overwritable(); err != nil || n != 1024 {
		t.Fatalf("Overwritable after a write and fsync = %d, %v; want 1024", n, err)
	}
	f.WriteAt(fill('n', SectorSize), 0)
	check(t, f.Writeback())
	if b, _ := ReadFile(t, c.Crash(nil), "/f"); !bytes.Equal(b, fill('o', 1024)) {
		t.Fatalf("written back but not flushed, Crash(nil): %s", describe(b))
	}
	if c.Pending() != 1 { // the write, in the device's cache
		t.Fatalf("Pending = %d, want 1", c.Pending())
	}
	check(t, c.SyncDir("/x")) // any flush of the device
	want := join(fill('n', 512), fill('o', 512))
	if b, _ := ReadFile(t, c.Crash(nil), "/f"); !bytes.Equal(b, want) {
		t.Fatalf("written back and flushed, Crash(nil): %s", describe(b))
	}

	// An append, or an overwrite of a hole, is not moved by Writeback.
	f.WriteAt(fill('a', 100), 1024)
	check(t, f.Writeback())
	check(t, c.SyncDir("/x"))
	if b, _ := ReadFile(t, c.Crash(nil), "/f"); !bytes.Equal(b, want) {
		t.Fatalf("an append written back and flushed, Crash(nil): %s", describe(b))
	}
	check(t, f.Sync())
	check(t, f.Allocate(meta.FallocPunchHole|meta.FallocKeepSize, 512, 512))
	check(t, f.Sync())
	if n, _ := f.Overwritable(); n != 512 {
		t.Fatalf("Overwritable after a hole punch at 512 = %d, want 512", n)
	}
	f.WriteAt(fill('h', 10), 600) // into the hole
	check(t, f.Writeback())
	check(t, c.SyncDir("/x"))
	if b, _ := ReadFile(t, c.Crash(nil), "/f"); b[600] != 0 {
		t.Fatalf("an overwrite of a hole written back and flushed reached the disk")
	}
	f.WriteAt(fill('w', 512), 512) // fills the hole
	check(t, f.Sync())
	if n, _ := f.Overwritable(); n != 1124 {
		t.Fatalf("Overwritable after the hole is written = %d, want 1124", n)
	}
	check(t, f.Allocate(0, 1124, 1000)) // preallocation: unwritten
	check(t, f.Sync())
	if n, _ := f.Overwritable(); n != 1124 {
		t.Fatalf("Overwritable after a preallocation = %d, want 1124 (the written bytes)", n)
	}
	if size, _ := f.Size(); size != 2124 {
		t.Fatalf("size after the preallocation = %d, want 2124", size)
	}
}

// A failed fsync of an append loses the appended bytes for good, as the
// doc of writebackFailed says: "no later sync writes them either".
func TestCrashFSFailedSyncLosesAppend(t *testing.T) {
	c := NewCrashFS()
	durableFile(t, c, "/f", fill('o', 1024))
	ff := NewFaultFS(c)
	f, err := ff.OpenFile("/f", os.O_RDWR, 0)
	check(t, err)
	f.WriteAt(fill('n', 1024), 1024)
	ff.SetFault(func(fc FaultCall) syscall.Errno {
		if fc.Op == "fsync" {
			return syscall.EIO
		}
		return 0
	})
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatal(err)
	}
	ff.SetFault(nil)
	check(t, f.Sync())
	b, _ := ReadFile(t, c.Crash(nil), "/f")
	if bytes.IndexByte(b, 'n') >= 0 {
		t.Fatalf("after a failed fsync of an append and a good fsync, "+
			"the disk holds the appended bytes the failed fsync lost: %s", describe(b))
	}
	if want := append(fill('o', 1024), make([]byte, 1024)...); !bytes.Equal(b, want) {
		t.Fatalf("after the good fsync the disk holds %s, want the old 1024 bytes and 1024 zeros (the size is durable, the lost pages are not)", describe(b))
	}
	// Written again after the failure, a lost page is dirty again: the
	// next sync makes it durable.
	f.WriteAt(fill('r', 512), 1536)
	check(t, f.Sync())
	b, _ = ReadFile(t, c.Crash(nil), "/f")
	if want := slices.Concat(fill('o', 1024), make([]byte, 512), fill('r', 512)); !bytes.Equal(b, want) {
		t.Fatalf("after rewriting part of the lost append and syncing, the disk holds %s", describe(b))
	}
}

// SetCapacity and SetHeadroom cap the bytes of linked files: a call past
// the cap fails with ENOSPC and changes nothing; Statfs reports the rest.
func TestCrashFSCapacity(t *testing.T) {
	c := NewCrashFS()
	f := durableFile(t, c, "/f", fill('o', 4096))
	c.SetCapacity(3 * 4096)
	sp, err := c.Statfs("/")
	check(t, err)
	if sp.Bsize != 4096 || sp.Blocks != 3 || sp.Bavail != 2 || sp.Avail() != 8192 {
		t.Fatalf("Statfs = %+v, want 3 blocks of 4096, 2 free", sp)
	}
	pending := c.Pending()
	for name, call := range map[string]func() error{
		"write":     func() error { _, err := f.WriteAt([]byte("x"), 3*4096); return err },
		"truncate":  func() error { return f.Truncate(3*4096 + 1) },
		"fallocate": func() error { return f.Allocate(0, 0, 3*4096+1) },
	} {
		err := call()
		var pe *os.PathError
		if !errors.Is(err, syscall.ENOSPC) || !errors.As(err, &pe) || pe.Path != "/f" {
			t.Errorf("%s past the capacity: %v, want ENOSPC on /f", name, err)
		}
		if b, _ := ReadFile(t, c, "/f"); !bytes.Equal(b, fill('o', 4096)) || c.Pending() != pending {
			t.Errorf("a refused %s changed /f: %s, %d pending", name, describe(b), c.Pending())
		}
	}
	// Up to the cap is fine; a keep-size preallocation costs nothing.
	if _, err := f.WriteAt([]byte("x"), 3*4096-1); err != nil {
		t.Fatalf("a write up to the capacity: %v", err)
	}
	check(t, f.Allocate(meta.FallocKeepSize, 0, 1<<20))
	if sp, _ := c.Statfs("/"); sp.Bavail != 0 {
		t.Fatalf("full: Statfs = %+v", sp)
	}
	// Removing frees the space; an open unlinked file counts no more.
	check(t, c.Remove("/f"))
	if _, err := f.WriteAt(make([]byte, 1<<20), 0); err != nil {
		t.Fatalf("a write to an unlinked file: %v", err)
	}
	if sp, _ := c.Statfs("/"); sp.Bavail != 3 {
		t.Fatalf("after the remove: Statfs = %+v, want 3 free", sp)
	}
	g, err := c.OpenFile("/g", os.O_RDWR|os.O_CREATE, 0o644)
	check(t, err)
	c.SetHeadroom(100)
	if _, err := g.WriteAt(make([]byte, 101), 0); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a write past the headroom: %v", err)
	}
	if _, err := g.WriteAt(make([]byte, 100), 0); err != nil {
		t.Fatalf("a write within the headroom: %v", err)
	}
}

// flock: exclusive excludes all, shared excludes exclusive; Close releases
// (once); a crash image holds none.
func TestCrashFSLocks(t *testing.T) {
	c := NewCrashFS()
	durableFile(t, c, "/f", nil)
	x, err := c.Lock("/f", true)
	check(t, err)
	for _, excl := range []bool{true, false} {
		if _, err := c.Lock("/f", excl); !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Fatalf("Lock(exclusive %v) while exclusively held: %v, want EWOULDBLOCK", excl, err)
		}
	}
	img := c.Crash(nil)
	if l, err := img.Lock("/f", true); err != nil {
		t.Fatalf("a crash image kept a lock: %v", err)
	} else {
		l.Close()
	}
	check(t, x.Close())
	s1, err := c.Lock("/f", false)
	check(t, err)
	s2, err := c.Lock("/f", false)
	check(t, err)
	if _, err := c.Lock("/f", true); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("exclusive Lock while shared: %v", err)
	}
	check(t, s1.Close())
	check(t, s1.Close()) // a second Close releases nothing more
	if _, err := c.Lock("/f", true); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("exclusive Lock with one shared holder left: %v", err)
	}
	check(t, s2.Close())
	l, err := c.Lock("/f", true)
	check(t, err)
	l.Close()
	if _, err := c.Lock("/nope", false); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Lock of a missing file: %v", err)
	}
}

// Edit changes a file durably, and only a file with nothing pending.
func TestCrashFSEdit(t *testing.T) {
	c := NewCrashFS()
	f := durableFile(t, c, "/f", []byte("abcd"))
	check(t, c.Edit("/f", func(b []byte) { b[1] = 'X' }))
	for _, img := range crashes(c, 10, 6) {
		if b, _ := ReadFile(t, img, "/f"); string(b) != "aXcd" {
			t.Fatalf("after Edit a crash holds %q", b)
		}
	}
	f.WriteAt([]byte("!"), 0)
	if err := c.Edit("/f", func(b []byte) { b[2] = 'Y' }); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Edit with a write pending: %v, want EINVAL", err)
	}
	if b, _ := ReadFile(t, c, "/f"); string(b) != "!Xcd" {
		t.Fatalf("a refused Edit changed /f: %q", b)
	}
	if err := c.Edit("/nope", func([]byte) {}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Edit of a missing file: %v", err)
	}
}

// Errors are the errnos a Linux filesystem returns, wrapped as the os
// package wraps them.
func TestCrashFSErrors(t *testing.T) {
	c := NewCrashFS()
	check(t, c.Mkdir("/d", 0o755))
	check(t, c.Mkdir("/e", 0o755))
	durableFile(t, c, "/d/f", []byte("f"))
	durableFile(t, c, "/d/g", nil)
	durableFile(t, c, "/r", nil)
	ro, err := c.OpenFile("/d/f", os.O_RDONLY, 0)
	check(t, err)
	wo, err := c.OpenFile("/d/f", os.O_WRONLY, 0)
	check(t, err)
	closed, err := c.OpenFile("/d/f", os.O_RDWR, 0)
	check(t, err)
	check(t, closed.Close())
	pending := c.Pending()
	for _, tc := range []struct {
		what string
		err  error
		want syscall.Errno
	}{
		{"open missing", second(c.OpenFile("/d/nope", os.O_RDWR, 0)), syscall.ENOENT},
		{"open under a missing dir", second(c.OpenFile("/nope/f", os.O_RDWR|os.O_CREATE, 0o644)), syscall.ENOENT},
		{"open under a file", second(c.OpenFile("/d/f/x", os.O_RDWR|os.O_CREATE, 0o644)), syscall.ENOTDIR},
		{"O_EXCL of an existing file", second(c.OpenFile("/d/f", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)), syscall.EEXIST},
		{"open a directory", second(c.OpenFile("/d", os.O_RDONLY, 0)), syscall.EISDIR},
		{"mkdir existing", c.Mkdir("/d/f", 0o755), syscall.EEXIST},
		{"remove non-empty", c.Remove("/d"), syscall.ENOTEMPTY},
		{"remove missing", c.Remove("/d/nope"), syscall.ENOENT},
		{"rename across directories", c.Rename("/d/f", "/e/f"), syscall.EXDEV},
		{"rename missing", c.Rename("/d/nope", "/d/x"), syscall.ENOENT},
		{"rename a directory over a non-empty one", c.Rename("/e", "/d"), syscall.ENOTEMPTY},
		{"rename a file over a directory", c.Rename("/r", "/e"), syscall.EISDIR},
		{"rename a directory over a file", c.Rename("/e", "/r"), syscall.ENOTDIR},
		{"readdir of a file", second(c.ReadDir("/d/f")), syscall.ENOTDIR},
		{"syncdir of a file", c.SyncDir("/d/f"), syscall.ENOTDIR},
		{"write read-only", second(ro.WriteAt([]byte("x"), 0)), syscall.EBADF},
		{"read write-only", second(wo.ReadAt(make([]byte, 1), 0)), syscall.EBADF},
		{"write closed", second(closed.WriteAt([]byte("x"), 0)), syscall.EBADF},
		{"sync closed", closed.Sync(), syscall.EBADF},
		{"close closed", closed.Close(), syscall.EBADF},
		{"negative write offset", second(wo.WriteAt([]byte("x"), -1)), syscall.EINVAL},
		{"negative truncate", wo.Truncate(-1), syscall.EINVAL},
		{"punch without keep-size", wo.Allocate(meta.FallocPunchHole, 0, 1), syscall.EINVAL},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.what, tc.err, tc.want)
		}
		var pe *os.PathError
		var le *os.LinkError
		if !errors.As(tc.err, &pe) && !errors.As(tc.err, &le) {
			t.Errorf("%s: %T, want *os.PathError or *os.LinkError", tc.what, tc.err)
		}
	}
	if c.Pending() != pending {
		t.Errorf("failed calls left %d changes pending, want %d", c.Pending(), pending)
	}
	if got := tree(t, c, "/d"); !maps.Equal(got, map[string]string{"f": "f", "g": ""}) {
		t.Errorf("failed calls changed /d: %v", got)
	}
	if err := c.Rename("/d/f", "/d/g"); err != nil {
		t.Fatal(err)
	}
	var le *os.LinkError
	if err := c.Rename("/d/nope", "/d/x"); !errors.As(err, &le) || le.Old != "/d/nope" || le.New != "/d/x" {
		t.Errorf("a failed rename: %#v, want an *os.LinkError naming both paths", err)
	}
}

func second[T any](_ T, err error) error { return err }

// An open file keeps working after its name is removed, and its bytes are
// gone from every crash once the removal is durable.
func TestCrashFSUnlinkedOpenFile(t *testing.T) {
	c := NewCrashFS()
	f := durableFile(t, c, "/f", []byte("keep"))
	check(t, c.Remove("/f"))
	if _, err := f.WriteAt([]byte("more"), 4); err != nil {
		t.Fatal(err)
	}
	check(t, f.Sync())
	p := make([]byte, 8)
	if n, _ := f.ReadAt(p, 0); n != 8 || string(p) != "keepmore" {
		t.Fatalf("ReadAt of the unlinked file: %q", p[:n])
	}
	// Not yet durable: the name may come back, with its data as synced.
	if b, ok := ReadFile(t, c.Crash(nil), "/f"); !ok || string(b) != "keepmore" {
		t.Fatalf("an unsynced remove, Crash(nil): %q, %v", b, ok)
	}
	check(t, c.SyncDir("/"))
	for _, img := range crashes(c, 20, 10) {
		if exists(img, "/f") {
			t.Fatal("a durable remove came back after a crash")
		}
	}
}

// OnChange runs after each changing call, with the lock held: a crash
// taken there sees the filesystem just after that call.
func TestCrashFSOnChange(t *testing.T) {
	c := NewCrashFS()
	var ops []string
	var images []*CrashFS
	c.OnChange = func(c *CrashFS, op, name string) {
		ops = append(ops, op+" "+name)
		images = append(images, c.CrashLocked(nil))
	}
	f, err := c.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o644)
	check(t, err)
	f.WriteAt([]byte("x"), 0)
	check(t, f.Datasync())
	check(t, c.SyncDir("/"))
	c.ReadDir("/")
	c.Stat("/f")
	want := []string{"open /f", "write /f", "fdatasync /f", "syncdir /"}
	if !slices.Equal(ops, want) {
		t.Fatalf("OnChange saw %q, want %q", ops, want)
	}
	if exists(images[2], "/f") || !exists(images[3], "/f") {
		t.Fatal("crashes taken in OnChange do not follow the calls")
	}
	var got []byte
	c.WithLock(func() {
		b, _ := c.FileLocked("/f")
		got = bytes.Clone(b)
	})
	if string(got) != "x" {
		t.Fatalf("FileLocked = %q", got)
	}
}
