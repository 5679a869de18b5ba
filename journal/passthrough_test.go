package journal

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/internal/testfs"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/store"
	"golang.org/x/sys/unix"
)

// The kernel's side of passthrough is played by the test: it writes the
// data file OpenPassthrough hands out, as the kernel would, and the
// journal must learn what those writes did.

func TestPassthroughLearnsSizeAndTimes(t *testing.T) {
	for _, storeDir := range []string{"os", "crashfs"} {
		t.Run(storeDir, func(t *testing.T) {
			o := Options{LogForceInterval: time.Hour}
			dir := powerDir
			var cfs *testfs.CrashFS
			if storeDir == "os" {
				dir = mkfs(t, store.MinLogSize, 32<<10)
			} else {
				cfs = testfs.NewCrashFS()
				o.Store = cfs
				if _, err := store.Mkfs(dir, store.MkfsOptions{LogSize: store.MinLogSize, LogBSize: 32 << 10, Store: cfs}); err != nil {
					t.Fatal(err)
				}
			}
			fs := mount(t, dir, o)
			a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
			f := must[store.StoreFile](t)(fs.OpenPassthrough(a.Ino, true, false))
			if _, ok := store.FileFd(f); ok != (storeDir == "os") {
				t.Fatalf("FileFd of a %s data file: %v", storeDir, ok)
			}
			// Appends and an overwrite, as the kernel makes them.
			must[int](t)(f.WriteAt([]byte("hello"), 0))
			must[int](t)(f.WriteAt([]byte(", world"), 5))
			got := must[Attr](t)(fs.GetAttr(a.Ino))
			s := must[store.FileStat](t)(f.Stat())
			// The kernel's mtime, unless that is older than the
			// inode's last change (a coarse clock lags a fine one).
			if want := max(a.Ctime, s.Mtime); got.Size != 12 || got.Mtime != want || got.Ctime != want {
				t.Fatalf("after the kernel wrote 12 bytes: size %d mtime %d ctime %d; the data file has %d, mtime %d; want times %d",
					got.Size, got.Mtime, got.Ctime, s.Size, s.Mtime, want)
			}
			if l := must[Attr](t)(fs.Lookup(meta.RootIno, "f")); l.Size != 12 {
				t.Fatalf("lookup says size %d, want 12", l.Size)
			}
			// A utimes after the write (tar, cp -p) sticks: the
			// journal learned the write before it.
			time.Sleep(2 * time.Millisecond)
			must[int](t)(f.WriteAt([]byte("HELLO"), 0))
			must[Attr](t)(fs.SetAttr(a.Ino, SetAttrIn{Mask: meta.SetMtime, Mtime: 1e9}))
			if got := must[Attr](t)(fs.GetAttr(a.Ino)); got.Mtime != 1e9 {
				t.Fatalf("mtime after utimes: %d, want 1e9", got.Mtime)
			}
			// fsync makes the learned size durable with the bytes: in
			// the log. The data file's size alone would not show it,
			// as the inode's size-follows mark has recovery keep a
			// longer data file whether the log has its size or not.
			// The log is forced first, so what fsync learns goes to a
			// record of its own, which only fsync's force makes
			// durable.
			check(t, fs.Sync())
			must[int](t)(f.WriteAt([]byte("!"), 12))
			learned := fs.files.Learned.Load()
			check(t, fs.Fsync(a.Ino, true))
			if fs.files.Learned.Load() == learned {
				t.Fatal("fsync learned nothing of the kernel's append")
			}
			synced := must[Attr](t)(fs.GetAttr(a.Ino))
			var st store.StoreFS = store.OSFS()
			if storeDir == "crashfs" {
				img := cfs.Crash(nil) // everything not durable lost
				fs.Abandon()
				o.Store, st = img, img
			}
			// The log as fsync left it (as the power cut left it)
			// replays to the size and times the model had.
			r, err := recovery.InspectStore(st, dir)
			check(t, err)
			in := r.Model.Inodes[a.Ino]
			if in == nil {
				t.Fatalf("after fsync the log replays to no inode %d", a.Ino)
			}
			if synced.Size != 13 || in.Size != synced.Size || in.Mtime != synced.Mtime || in.Ctime != synced.Ctime {
				t.Fatalf("after fsync the log replays to size %d, mtime %d, ctime %d; the model had size %d (want 13), mtime %d, ctime %d: fsync did not force what it learned",
					in.Size, in.Mtime, in.Ctime, synced.Size, synced.Mtime, synced.Ctime)
			}
			if storeDir == "crashfs" {
				fs = mount(t, dir, o)
				for _, ff := range fs.Recovery().Followed {
					if ff.Ino == a.Ino {
						t.Fatalf("after a power cut recovery took the size from the data file (%+v): the log's was not the synced one", ff)
					}
				}
				b := make([]byte, 20)
				n := must[int](t)(fs.Read(a.Ino, b, 0))
				if string(b[:n]) != "HELLO, world!" {
					t.Fatalf("after a power cut: %q, want %q", b[:n], "HELLO, world!")
				}
				fs.Abandon()
				return
			}
			check(t, fs.ReleasePassthrough(a.Ino, true, true))
			check(t, fs.Close())
			fs = mount(t, dir, o)
			defer fs.Close()
			if got := must[Attr](t)(fs.GetAttr(a.Ino)); got.Size != 13 {
				t.Fatalf("after remount: size %d, want 13", got.Size)
			}
		})
	}
}

// The first open for passthrough makes the data file exactly the file's
// size: the kernel reads and appends to the data file as it is.
func TestPassthroughOpenSizesDataFile(t *testing.T) {
	dir := mkfs(t, store.MinLogSize, 32<<10)
	fs := mount(t, dir, Options{LogForceInterval: time.Hour})
	defer fs.Close()
	a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	// A file extended by truncate whose data file lacks the end, as a
	// crash can leave one (the data file's name was never made durable).
	must[Attr](t)(fs.SetAttr(a.Ino, SetAttrIn{Mask: meta.SetSize, Size: 1000}))
	check(t, os.Truncate(filepath.Join(dir, store.DataDirName, "2"), 10))
	f := must[store.StoreFile](t)(fs.OpenPassthrough(a.Ino, false, false))
	if s := must[store.FileStat](t)(f.Stat()); s.Size != 1000 {
		t.Fatalf("data file at the passthrough open: %d bytes, want the file's 1000", s.Size)
	}
	check(t, fs.ReleasePassthrough(a.Ino, false, true))
}

// Data-journal mode never hands out data files.
func TestPassthroughRefusedInDataMode(t *testing.T) {
	dir := mkfs(t, store.MinLogSize, 32<<10)
	fs := mount(t, dir, Options{Journal: JournalData})
	defer fs.Close()
	a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	if _, err := fs.OpenPassthrough(a.Ino, true, false); err != syscall.EINVAL {
		t.Fatalf("OpenPassthrough in data mode: %v, want EINVAL", err)
	}
	if fs.inUse(a.Ino) {
		t.Fatal("a refused passthrough open still counts as an open")
	}
}

// What the kernel wrote through an open released without fsync reaches
// the log with the periodic force and with unmount.
func TestPassthroughLearnedAtReleaseAndUnmount(t *testing.T) {
	dir := mkfs(t, store.MinLogSize, 32<<10)
	fs := mount(t, dir, Options{LogForceInterval: time.Hour})
	a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	b := must[Attr](t)(fs.Create(meta.RootIno, "g", meta.ModeReg|0o644, 0, 0, 0, ""))
	f := must[store.StoreFile](t)(fs.OpenPassthrough(a.Ino, true, false))
	g := must[store.StoreFile](t)(fs.OpenPassthrough(b.Ino, true, false))
	want := bytes.Repeat([]byte("x"), 5000)
	must[int](t)(f.WriteAt(want, 0))
	must[int](t)(g.WriteAt(want[:77], 0))
	check(t, fs.ReleasePassthrough(a.Ino, true, true))
	fs.mu.RLock()
	size := fs.model.Inodes[a.Ino].Size
	fs.mu.RUnlock()
	if size != 5000 {
		t.Fatalf("model size after the release: %d, want 5000", size)
	}
	// g is still open at unmount (a lazy unmount): Close learns it.
	check(t, fs.Close())
	fs = mount(t, dir, Options{})
	defer fs.Close()
	for _, c := range []struct {
		ino  meta.Ino
		size int64
	}{{a.Ino, 5000}, {b.Ino, 77}} {
		if got := must[Attr](t)(fs.GetAttr(c.ino)); got.Size != c.size {
			t.Fatalf("inode %d after remount: size %d, want %d", c.ino, got.Size, c.size)
		}
	}
}

// An inode is open in passthrough or through the daemon, never both at
// once, and keeps the kind until the kernel forgets it: the kernel refuses
// a mix. A synchronous open prefers the daemon, but joins passthrough
// opens that exist.
func TestPassthroughOpenKinds(t *testing.T) {
	dir := mkfs(t, store.MinLogSize, 32<<10)
	var said []string
	fs := mount(t, dir, Options{Logf: func(f string, a ...any) { said = append(said, f) }})
	defer fs.Close()
	a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	open := func(preferDaemon bool) bool {
		t.Helper()
		return must[store.StoreFile](t)(fs.OpenPassthrough(a.Ino, true, preferDaemon)) != nil
	}
	if open(true) {
		t.Fatal("a synchronous open of a file not open in passthrough was given the data file")
	}
	if open(false) {
		t.Fatal("an open of a file open through the daemon was given the data file")
	}
	check(t, fs.ReleasePassthrough(a.Ino, true, false))
	check(t, fs.ReleasePassthrough(a.Ino, true, false))
	// Released, but the kernel still knows the inode (it releases its
	// cached I/O mode after close, asynchronously): the kind holds.
	if open(false) {
		t.Fatal("an open of a file whose opens through the daemon were just released was given the data file")
	}
	check(t, fs.ReleasePassthrough(a.Ino, true, false))
	fs.Hold(a.Ino)
	check(t, fs.Unhold(a.Ino)) // the kernel forgets the inode
	if !open(false) {
		t.Fatal("an open of a file open nowhere, which the kernel had forgotten, was not a passthrough open")
	}
	if !open(true) {
		t.Fatal("a synchronous open of a file open in passthrough did not join it")
	}
	if len(said) != 1 {
		t.Fatalf("the synchronous open joining passthrough was said %d times, want once: %q", len(said), said)
	}
	check(t, fs.ReleasePassthrough(a.Ino, true, true))
	check(t, fs.ReleasePassthrough(a.Ino, true, true))
	if fs.inUse(a.Ino) {
		t.Fatal("still counted open after every release")
	}
}

// What an fsync costs in syncs: the first of a new file syncs its data
// file, the data directory (its name) and the log; an overwrite of blocks
// written at the last sync, at the same size, writes the data back without
// a flush (where the filesystem under the store overwrites in place and
// CrashFS's model, which does) and pays only the log's flush; an append
// pays the data file's fdatasync again.
func TestFsyncSyncCounts(t *testing.T) {
	for _, storeDir := range []string{"os", "crashfs"} {
		t.Run(storeDir, func(t *testing.T) {
			o := Options{LogForceInterval: time.Hour, CheckpointInterval: time.Hour}
			dir := powerDir
			if storeDir == "os" {
				dir = mkfs(t, store.MinLogSize, 32<<10)
			} else {
				o.Store = testfs.NewCrashFS()
				must[*store.Superblock](t)(store.Mkfs(dir, store.MkfsOptions{LogSize: store.MinLogSize, LogBSize: 32 << 10, Store: o.Store}))
			}
			fs := mount(t, dir, o)
			defer fs.Close()
			inPlace := storeDir == "crashfs"
			if storeDir == "os" {
				var sfs unix.Statfs_t
				check(t, unix.Statfs(dir, &sfs))
				inPlace = sfs.Type == unix.EXT4_SUPER_MAGIC || sfs.Type == unix.XFS_SUPER_MAGIC
			}
			a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
			check(t, fs.Open(a.Ino))
			step := func(what string, write func(), data, dirs, writebacks uint64) {
				t.Helper()
				b := fs.Stats()
				write()
				check(t, fs.Fsync(a.Ino, false))
				e := fs.Stats()
				got := [3]uint64{e.DataSyncs - b.DataSyncs, e.DirSyncs - b.DirSyncs, e.Writebacks - b.Writebacks}
				if want := [3]uint64{data, dirs, writebacks}; got != want {
					t.Errorf("%s: data syncs, directory syncs, write-backs %v, want %v", what, got, want)
				}
				if l := e.LogSyncs - b.LogSyncs; l != 1 {
					t.Errorf("%s: %d log syncs, want 1", what, l)
				}
				// One fsync, at most one force request: the data
				// file's sync runs beside the force, and the wait
				// after it is not a second request. (An overwrite may
				// leave nothing new to force: its mtime can stay in
				// the same clock step.)
				if w := e.LogForces - b.LogForces; w > 1 {
					t.Errorf("%s: %d force requests, want at most 1", what, w)
				}
			}
			block := bytes.Repeat([]byte("0123456789abcdef"), 1024)
			step("the first write", func() { must[int](t)(fs.Write(a.Ino, block, 0)) }, 1, 1, 0)
			// The first write grew the file: its fsync forced the new
			// size, one request, counted once although the record was
			// usually durable by the time the fsync waited for it.
			if s := fs.Stats(); s.LogForces != s.ForceSyncs {
				t.Errorf("after the first fsync: %d force requests, %d forced log syncs; want them equal", s.LogForces, s.ForceSyncs)
			}
			if inPlace {
				step("an overwrite", func() { must[int](t)(fs.Write(a.Ino, []byte("OVER"), 100)) }, 0, 0, 1)
			} else {
				t.Logf("the test's filesystem does not overwrite in place: no write-back without a flush")
				step("an overwrite", func() { must[int](t)(fs.Write(a.Ino, []byte("OVER"), 100)) }, 1, 0, 0)
			}
			step("an append", func() { must[int](t)(fs.Write(a.Ino, []byte("MORE"), int64(len(block)))) }, 1, 0, 0)
			step("a preallocation, then an overwrite", func() {
				check(t, fs.Fallocate(a.Ino, meta.FallocKeepSize, 0, 1<<20))
				must[int](t)(fs.Write(a.Ino, []byte("OVER"), 200))
			}, 1, 0, 0)
			check(t, fs.Release(a.Ino))
		})
	}
}

// ptCrashStore makes a store on a CrashFS and mounts it, for a power cut.
func ptCrashStore(t *testing.T, o Options) (*testfs.CrashFS, *FS) {
	t.Helper()
	cfs := testfs.NewCrashFS()
	o.Store = cfs
	must[*store.Superblock](t)(store.Mkfs(powerDir, store.MkfsOptions{LogSize: store.MinLogSize, LogBSize: 32 << 10, Store: cfs}))
	return cfs, mount(t, powerDir, o)
}

// remountAfterCut cuts the power (nothing not durable survives), abandons
// fs and mounts what is left.
func remountAfterCut(t *testing.T, cfs *testfs.CrashFS, fs *FS, o Options) (*testfs.CrashFS, *FS) {
	t.Helper()
	img := cfs.Crash(nil)
	fs.Abandon()
	o.Store = img
	return img, mount(t, powerDir, o)
}

// A write through a passthrough open that the kernel syncs in the data
// file alone (O_SYNC, O_DSYNC, RWF_DSYNC) is acknowledged without the
// journal hearing of it: an append so acknowledged survives a power cut,
// with the size it reached, though nothing logged that size. So does one
// through a synchronous open that joined a passthrough open, and one into
// a file created in the same breath (its data file's name is made durable
// before the open returns).
func TestPassthroughSyncAppendsSurvivePowerCut(t *testing.T) {
	o := Options{LogForceInterval: time.Hour, CheckpointInterval: time.Hour}
	cfs, fs := ptCrashStore(t, o)
	a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	b := must[Attr](t)(fs.Create(meta.RootIno, "g", meta.ModeReg|0o644, 0, 0, 0, ""))
	check(t, fs.Fsync(meta.RootIno, false))
	// f: an fsynced start, then sync appends the journal never sees.
	f := must[store.StoreFile](t)(fs.OpenPassthrough(a.Ino, true, false))
	want := bytes.Repeat([]byte("0123456789"), 300)
	must[int](t)(f.WriteAt(want, 0))
	check(t, fs.Fsync(a.Ino, true))
	for i := range 5 {
		p := bytes.Repeat([]byte{byte('a' + i)}, 777)
		must[int](t)(f.WriteAt(p, int64(len(want))))
		check(t, f.Datasync()) // the kernel's generic_write_sync, on the data file
		want = append(want, p...)
	}
	// g: read-only in passthrough, then a synchronous open joins it.
	g := must[store.StoreFile](t)(fs.OpenPassthrough(b.Ino, false, false))
	if gs := must[store.StoreFile](t)(fs.OpenPassthrough(b.Ino, true, true)); gs != g {
		t.Fatal("a synchronous open of a file open in passthrough did not join it")
	}
	must[int](t)(g.WriteAt([]byte("synced"), 0))
	check(t, g.Datasync())
	// h: created, opened and written synchronously at once.
	c := must[Attr](t)(fs.Create(meta.RootIno, "h", meta.ModeReg|0o644, 0, 0, 0, ""))
	h := must[store.StoreFile](t)(fs.OpenPassthrough(c.Ino, true, false))
	must[int](t)(h.WriteAt([]byte("new file, synced"), 0))
	check(t, h.Datasync())
	_, fs = remountAfterCut(t, cfs, fs, o)
	defer fs.Close()
	for _, c := range []struct {
		ino  meta.Ino
		want []byte
	}{{a.Ino, want}, {b.Ino, []byte("synced")}, {c.Ino, []byte("new file, synced")}} {
		got := make([]byte, len(c.want)+10)
		n, err := fs.Read(c.ino, got, 0)
		if err != nil || !bytes.Equal(got[:n], c.want) {
			t.Errorf("inode %d after a power cut: %d bytes (%v), want the %d the sync writes acknowledged", c.ino, n, err, len(c.want))
		}
	}
	if r := fs.Recovery(); len(r.Followed) != 3 {
		t.Errorf("recovery grew %d files to their data file's size, want 3: %+v", len(r.Followed), r.Followed)
	}
	for ino, in := range fs.model.Inodes {
		if in.SizeFollows {
			t.Errorf("inode %d still marked after recovery: no open outlives a mount", ino)
		}
	}
}

// A shrink of a file open for writing in passthrough is durable in the
// data file when it returns: recovery keeps a marked file's longer data
// file, and must not bring back what the shrink cut.
func TestPassthroughShrinkStaysCut(t *testing.T) {
	o := Options{LogForceInterval: time.Hour, CheckpointInterval: time.Hour}
	cfs, fs := ptCrashStore(t, o)
	a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	f := must[store.StoreFile](t)(fs.OpenPassthrough(a.Ino, true, false))
	must[int](t)(f.WriteAt(bytes.Repeat([]byte("x"), 10000), 0))
	check(t, fs.Fsync(a.Ino, false))
	must[Attr](t)(fs.SetAttr(a.Ino, SetAttrIn{Mask: meta.SetSize, Size: 100}))
	// An append the kernel syncs after the truncate returned (O_SYNC,
	// RWF_DSYNC): the shrink ended the mark, and the truncate set it
	// again before it returned, so the append survives too.
	must[int](t)(f.WriteAt(bytes.Repeat([]byte("y"), 50), 100))
	check(t, f.Datasync())
	_, fs = remountAfterCut(t, cfs, fs, o)
	defer fs.Close()
	if got := must[Attr](t)(fs.GetAttr(a.Ino)); got.Size != 150 {
		t.Fatalf("after a truncate to 100 returned, a synced append of 50 bytes and a power cut: size %d, want 150 (recovery %+v)", got.Size, fs.Recovery())
	}
	b := make([]byte, 200)
	n, _ := fs.Read(a.Ino, b, 0)
	if want := string(bytes.Repeat([]byte("x"), 100)) + string(bytes.Repeat([]byte("y"), 50)); string(b[:n]) != want {
		t.Fatalf("after the power cut the file holds %q, want %q", b[:n], want)
	}
}

// A logged shrink ends the inode's mark. A crash after the shrink is
// durable but before the data file's cut is (here the cut fails; a power
// cut can also keep the old size with some of the cut's sectors zeroed)
// recovers the logged size and cuts the data file to it: keeping the
// longer data file would bring back bytes that are not the file's.
func TestPassthroughShrinkEndsTheMark(t *testing.T) {
	o := Options{LogForceInterval: time.Hour, CheckpointInterval: time.Hour}
	cfs := testfs.NewCrashFS()
	ffs := testfs.NewFaultFS(cfs)
	o.Store = ffs
	must[*store.Superblock](t)(store.Mkfs(powerDir, store.MkfsOptions{LogSize: store.MinLogSize, LogBSize: 32 << 10, Store: cfs}))
	fs := mount(t, powerDir, o)
	a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	check(t, fs.Fsync(meta.RootIno, false))
	f := must[store.StoreFile](t)(fs.OpenPassthrough(a.Ino, true, false))
	must[int](t)(f.WriteAt(bytes.Repeat([]byte("x"), 10000), 0))
	check(t, fs.Fsync(a.Ino, false))
	ffs.SetFault(func(c testfs.FaultCall) syscall.Errno {
		if c.Op == "truncate" {
			return syscall.EIO
		}
		return 0
	})
	fs.SetAttr(a.Ino, SetAttrIn{Mask: meta.SetSize, Size: 100}) // the shrink is logged and forced, the cut fails
	ffs.SetFault(nil)
	_, fs = remountAfterCut(t, cfs, fs, o)
	defer fs.Close()
	if got := must[Attr](t)(fs.GetAttr(a.Ino)); got.Size != 100 {
		t.Fatalf("a shrink to 100 durable in the log, its data file's cut not made, then a power cut: size %d, want the logged 100 (recovery %+v)", got.Size, fs.Recovery())
	}
}

// The mark is set, durably, by the first open for writing in passthrough,
// and stays after the last release: the next open costs no log force. A
// crash then keeps the data file's larger size (a write the journal never
// learned); the mount after it clears the mark.
func TestPassthroughMarkKeptUntilMount(t *testing.T) {
	o := Options{LogForceInterval: time.Hour, CheckpointInterval: time.Hour}
	cfs, fs := ptCrashStore(t, o)
	a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	marked := func(fs *FS) bool {
		fs.mu.RLock()
		defer fs.mu.RUnlock()
		return fs.model.Inodes[a.Ino].SizeFollows
	}
	r := must[store.StoreFile](t)(fs.OpenPassthrough(a.Ino, false, false))
	if marked(fs) {
		t.Fatal("a read-only passthrough open marked the file")
	}
	w := must[store.StoreFile](t)(fs.OpenPassthrough(a.Ino, true, false))
	if _, _, _, durable := fs.x.SnapshotStats(); !marked(fs) || durable < fs.files.State(a.Ino).MarkLSN() {
		t.Fatal("an open for writing in passthrough returned before the file's mark was durable")
	}
	must[int](t)(w.WriteAt([]byte("hello"), 0))
	check(t, fs.ReleasePassthrough(a.Ino, true, true))
	if !marked(fs) {
		t.Fatal("the mark was cleared at the last release")
	}
	forces := fs.Stats().LogSyncs
	must[store.StoreFile](t)(fs.OpenPassthrough(a.Ino, true, false))
	if n := fs.Stats().LogSyncs - forces; n != 0 {
		t.Fatalf("reopening a marked file for writing forced the log %d times, want none", n)
	}
	check(t, fs.ReleasePassthrough(a.Ino, true, true))
	// Bytes the log never heard of, synced in the data file.
	must[int](t)(r.WriteAt([]byte(", world"), 5))
	check(t, r.Datasync())
	_, fs = remountAfterCut(t, cfs, fs, o)
	defer fs.Close()
	if got := must[Attr](t)(fs.GetAttr(a.Ino)); got.Size != 12 || len(fs.Recovery().Followed) != 1 {
		t.Fatalf("after a power cut: size %d, want the data file's 12 (recovery %+v)", got.Size, fs.Recovery())
	}
	if marked(fs) {
		t.Fatal("the mark outlived the mount's recovery")
	}
}

// In a passthrough mount (MarkCreates) a regular file is created marked:
// its first open for writing forces nothing and syncs no directory. The
// kernel's synced appends into it then survive a power cut whenever the
// file does: the file is there once a log force made its create durable
// (here a directory's fsync), and its data file's name with it (the
// log's writer synced the data directory before writing the create);
// without such a force the file is not there, as on Linux a new file
// whose directory was never synced.
func TestCreatedMarkedOpensWithoutForce(t *testing.T) {
	o := Options{LogForceInterval: time.Hour, CheckpointInterval: time.Hour, ImmediateWrite: 4096, SyncWrites: datafile.SyncPassthrough}
	for _, forced := range []bool{true, false} {
		t.Run(fmt.Sprintf("create forced %v", forced), func(t *testing.T) {
			cfs, fs := ptCrashStore(t, o)
			fs.MarkCreates()
			check(t, fs.Fsync(meta.RootIno, false))
			b := fs.Stats()
			a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
			f := must[store.StoreFile](t)(fs.OpenPassthrough(a.Ino, true, false))
			e := fs.Stats()
			if d := [3]uint64{e.LogForces - b.LogForces, e.LogSyncs - b.LogSyncs, e.DirSyncs - b.DirSyncs}; d != [3]uint64{} {
				t.Errorf("create and open for writing: %d force requests, %d log syncs, %d directory syncs; want none", d[0], d[1], d[2])
			}
			fs.mu.RLock()
			marked := fs.model.Inodes[a.Ino].SizeFollows
			fs.mu.RUnlock()
			if !marked {
				t.Fatal("a file created in a passthrough mount is not marked")
			}
			must[int](t)(f.WriteAt([]byte("synced by the kernel"), 0))
			check(t, f.Datasync()) // RWF_DSYNC: the journal never hears of it
			if forced {
				// A force that syncs no data file: a directory's.
				must[Attr](t)(fs.Create(meta.RootIno, "d", meta.ModeDir|0o755, 0, 0, 0, ""))
				check(t, fs.Fsync(meta.RootIno, false))
			}
			_, fs = remountAfterCut(t, cfs, fs, o)
			defer fs.Close()
			got, err := fs.Lookup(meta.RootIno, "f")
			if !forced {
				if err == nil {
					t.Fatalf("a create no force made durable survived the power cut: %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("a create a fsync made durable is lost: %v", err)
			}
			p := make([]byte, 64)
			n, err := fs.Read(got.Ino, p, 0)
			if err != nil || string(p[:n]) != "synced by the kernel" {
				t.Fatalf("after a power cut the created file holds %q (%v), want the bytes the kernel synced (recovery %+v)", p[:n], err, fs.Recovery())
			}
		})
	}
}

// Where a new file's first open for writing takes the log route (auto,
// with immediate writes: the default), a create in a passthrough mount
// makes neither a mark nor a data file: that route needs neither, and the
// data directory's syncs before log writes stay away.
func TestCreateUnmarkedOnTheLogRoute(t *testing.T) {
	o := Options{LogForceInterval: time.Hour, CheckpointInterval: time.Hour, ImmediateWrite: 4096}
	_, fs := ptCrashStore(t, o)
	defer fs.Close()
	fs.MarkCreates()
	a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	fs.mu.RLock()
	marked := fs.model.Inodes[a.Ino].SizeFollows
	fs.mu.RUnlock()
	if _, ok, _ := fs.files.Stat(a.Ino); marked || ok {
		t.Errorf("a create on the log route: marked %v, data file made %v; want neither", marked, ok)
	}
}

// A model's marks survive its encoding; a model without any encodes as it
// did before marks existed.
func TestModelSizeFollowsEncoding(t *testing.T) {
	m := meta.NewModel(1)
	check(t, m.Apply(&meta.Op{Type: meta.OpCreate, Parent: meta.RootIno, Name: "f", Ino: 2, Mode: meta.ModeReg | 0o644, Ctime: 2}))
	check(t, m.Apply(&meta.Op{Type: meta.OpCreate, Parent: meta.RootIno, Name: "g", Ino: 3, Mode: meta.ModeReg | 0o644, Ctime: 2}))
	plain := m.Encode()
	check(t, m.Apply(&meta.Op{Type: meta.OpSizeFollows, Ino: 3, Flags: meta.SizeFollowsSet}))
	if !bytes.HasPrefix(m.Encode(), plain) || len(m.Encode()) == len(plain) {
		t.Fatal("a mark is not carried after the inodes")
	}
	d := must[*meta.Model](t)(meta.DecodeModel(m.Encode()))
	if d.Inodes[2].SizeFollows || !d.Inodes[3].SizeFollows {
		t.Fatalf("decoded marks: %v %v, want false true", d.Inodes[2].SizeFollows, d.Inodes[3].SizeFollows)
	}
	check(t, m.Apply(&meta.Op{Type: meta.OpSizeFollows, Ino: 3}))
	if !bytes.Equal(m.Encode(), plain) {
		t.Fatal("a model with its marks cleared encodes otherwise than before they were set")
	}
	if err := m.Apply(&meta.Op{Type: meta.OpSizeFollows, Ino: meta.RootIno, Flags: meta.SizeFollowsSet}); err != syscall.EINVAL {
		t.Fatalf("marking a directory: %v, want EINVAL", err)
	}
	op := meta.Op{Type: meta.OpSizeFollows, Ino: 3, Flags: meta.SizeFollowsSet}
	if got := must[meta.Op](t)(meta.DecodeOp(op.Encode(nil))); got.Type != op.Type || got.Ino != op.Ino || got.Flags != op.Flags {
		t.Fatalf("decoded %+v, want %+v", got, op)
	}
}

// A file whose bytes the log holds, which replay would write again, takes
// the log route at its next open, whatever its history says, until a
// checkpoint moves the tail past them: in passthrough the kernel would
// write newer bytes that replay then overwrites with the logged ones.
func TestLoggedBytesKeepTheLogRoute(t *testing.T) {
	dir := mkfs(t, store.MinLogSize, 32<<10)
	fs := mount(t, dir, Options{ImmediateWrite: 4096, LogForceInterval: time.Hour, CheckpointInterval: time.Hour})
	defer fs.Close()
	a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	open := func() bool {
		t.Helper()
		return must[store.StoreFile](t)(fs.OpenPassthrough(a.Ino, true, false)) != nil
	}
	forget := func(pt bool) {
		t.Helper()
		check(t, fs.ReleasePassthrough(a.Ino, true, pt))
		fs.Hold(a.Ino)
		check(t, fs.Unhold(a.Ino)) // the kernel forgets the inode
	}
	if open() {
		t.Fatal("the first open of a new file was a passthrough open, not the log route")
	}
	must[int](t)(fs.Write(a.Ino, bytes.Repeat([]byte{'a'}, 1000), 0)) // logged with its bytes
	check(t, fs.Fsync(a.Ino, true))
	// Then 256 KiB with no fsync: by its history the file now wants
	// passthrough (fewer than one fsync per 64 KiB written).
	for off := int64(4096); off < 4096+256<<10; off += 64 << 10 {
		must[int](t)(fs.Write(a.Ino, bytes.Repeat([]byte{'b'}, 64<<10), off))
	}
	forget(false)
	if open() {
		t.Fatal("a file whose logged bytes replay may still write was opened in passthrough")
	}
	forget(false)
	fs.runCheckpoint() // the tail moves past the logged bytes
	if !open() {
		t.Fatal("once a checkpoint moved the tail past its logged bytes, the file's history (no fsyncs) did not take it to passthrough")
	}
	check(t, fs.ReleasePassthrough(a.Ino, true, true))
}
