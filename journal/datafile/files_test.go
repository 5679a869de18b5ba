package datafile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/journal/internal/testfs"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/logbuf"
)

// fakeEngine is an Engine over a real metadata model, without a log: a
// commit applies the op and hands out the next LSN; a force records how
// far it reached. onCommit and onForce, if set, run first, so a test can
// look at the data files at the moment of each.
type fakeEngine struct {
	mu       sync.Mutex
	m        *meta.Model
	lsn      logbuf.LSN
	forced   logbuf.LSN
	ops      []meta.Op
	tail     logbuf.LSN
	ckpts    uint64
	ckptMu   sync.Mutex
	refused  error
	onCommit func(op *meta.Op)
	onForce  func(lsn logbuf.LSN)
}

func (e *fakeEngine) Inode(ino meta.Ino) (Attrs, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	in := e.m.Inodes[ino]
	if in == nil {
		return Attrs{}, false
	}
	return Attrs{Mode: in.Mode, Size: in.Size, Mtime: in.Mtime, Ctime: in.Ctime, SizeFollows: in.SizeFollows}, true
}

func (e *fakeEngine) Commit(op *meta.Op) (logbuf.LSN, error) {
	if e.onCommit != nil {
		e.onCommit(op)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.m.Apply(op); err != nil {
		return 0, err
	}
	e.lsn++
	e.ops = append(e.ops, *op)
	return e.lsn, nil
}

func (e *fakeEngine) Force(lsn logbuf.LSN) error {
	if e.onForce != nil {
		e.onForce(lsn)
	}
	e.mu.Lock()
	e.forced = max(e.forced, lsn)
	e.mu.Unlock()
	return nil
}

func (e *fakeEngine) TailLSN() logbuf.LSN { return e.tail }
func (e *fakeEngine) Refused() error      { return e.refused }
func (e *fakeEngine) Checkpoints() uint64 { return e.ckpts }
func (e *fakeEngine) BetweenCheckpoints(fn func() error) error {
	e.ckptMu.Lock()
	defer e.ckptMu.Unlock()
	return fn()
}

// setup returns a data path over a fresh data directory on st (nil: the
// real filesystem), with a model holding one empty regular file.
func setup(t *testing.T, st store.StoreFS, cfg Config) (*Files, *fakeEngine, meta.Ino) {
	t.Helper()
	if st == nil {
		st = store.OSFS()
	}
	cfg.Store, cfg.Dir = st, filepath.Join(t.TempDir(), "data")
	if cfg.MaxTxn == 0 {
		cfg.MaxTxn = 1 << 20
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := &fakeEngine{m: meta.NewModel(store.NowNanos())}
	f := New(e, cfg)
	op := meta.Op{Type: meta.OpCreate, Parent: meta.RootIno, Name: "f", Ino: e.m.NextIno, Mode: meta.ModeReg | 0o644, Ctime: store.NowNanos()}
	if _, err := e.Commit(&op); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.CloseAll)
	return f, e, op.Ino
}

func dataFileBytes(t *testing.T, f *Files, ino meta.Ino) []byte {
	t.Helper()
	b, err := os.ReadFile(f.Path(ino))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWriteReachesDataFileBeforeCommit: the write-ahead order of the data
// path. When the write's transaction commits, its bytes are in the data
// file; the op says where, and in data-journal mode carries them.
func TestWriteReachesDataFileBeforeCommit(t *testing.T) {
	for _, logData := range []bool{false, true} {
		f, e, ino := setup(t, nil, Config{LogData: logData})
		p := []byte("hello, data file")
		var atCommit []byte
		e.onCommit = func(op *meta.Op) {
			if op.Type == meta.OpWrite {
				atCommit = dataFileBytes(t, f, ino)
			}
		}
		n, err := f.Write(ino, p, 100, false)
		if err != nil || n != len(p) {
			t.Fatalf("logData %v: Write = %d, %v", logData, n, err)
		}
		want := append(make([]byte, 100), p...)
		if !bytes.Equal(atCommit, want) {
			t.Fatalf("logData %v: the data file held %q when the write committed, want %q", logData, atCommit, want)
		}
		last := e.ops[len(e.ops)-1]
		if last.Type != meta.OpWrite || last.Off != 100 || last.Len != int64(len(p)) || (last.Data != nil) != logData {
			t.Fatalf("logData %v: committed %s (data %v)", logData, last.String(), last.Data != nil)
		}
		if a, _ := e.Inode(ino); a.Size != 100+int64(len(p)) {
			t.Fatalf("logData %v: size %d after the write", logData, a.Size)
		}
	}
}

// TestDataJournalWritesSplit: a data-journal write larger than MaxTxn goes
// in transactions of at most MaxTxn bytes, in order.
func TestDataJournalWritesSplit(t *testing.T) {
	f, e, ino := setup(t, nil, Config{LogData: true, MaxTxn: 4096})
	p := bytes.Repeat([]byte("x"), 3*4096+10)
	if n, err := f.Write(ino, p, 0, false); err != nil || n != len(p) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	var offs []int64
	for _, op := range e.ops[1:] {
		if len(op.Data) > 4096 {
			t.Fatalf("a transaction carries %d bytes, more than MaxTxn", len(op.Data))
		}
		offs = append(offs, op.Off)
	}
	if want := []int64{0, 4096, 8192, 12288}; !slicesEqual(offs, want) {
		t.Fatalf("write transactions at %v, want %v", offs, want)
	}
}

func slicesEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReadZerosPastDataFile: a file extended by truncate reads zeros past
// its data file's end, and a read never creates a data file.
func TestReadZerosPastDataFile(t *testing.T) {
	f, e, ino := setup(t, nil, Config{})
	buf := bytes.Repeat([]byte{0xff}, 8)
	if n, err := f.Read(ino, buf, 0); n != 0 || err != nil {
		t.Fatalf("read of an empty file = %d, %v", n, err)
	}
	if _, err := os.Stat(f.Path(ino)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a read created the data file (stat: %v)", err)
	}
	commit := func() (logbuf.LSN, error) {
		return e.Commit(&meta.Op{Type: meta.OpSetattr, Ino: ino, Mask: meta.SetSize, Size: 8, Ctime: store.NowNanos()})
	}
	if err := f.Truncate(ino, 8, commit); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(ino, []byte("ab"), 0, false); err != nil {
		t.Fatal(err)
	}
	os.Truncate(f.Path(ino), 2) // the data file lacks the end, as after a lost extension
	n, err := f.Read(ino, buf, 0)
	if err != nil || n != 8 || !bytes.Equal(buf, []byte("ab\x00\x00\x00\x00\x00\x00")) {
		t.Fatalf("Read = %d, %q, %v; want 8 bytes: ab and zeros", n, buf, err)
	}
	if _, err := f.Read(ino, buf, -1); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("read at -1: %v, want EINVAL", err)
	}
	if _, err := f.Read(meta.RootIno, buf, 0); !errors.Is(err, syscall.EISDIR) {
		t.Fatalf("read of the root directory: %v, want EISDIR", err)
	}
}

// TestShrinkForcedBeforeCut: a shrink's transaction is durable (forced)
// while the data file still holds the old end, and the cut follows, under
// the checkpoint lock.
func TestShrinkForcedBeforeCut(t *testing.T) {
	f, e, ino := setup(t, nil, Config{})
	if _, err := f.Write(ino, bytes.Repeat([]byte("z"), 1000), 0, false); err != nil {
		t.Fatal(err)
	}
	var shrinkLSN logbuf.LSN
	commit := func() (logbuf.LSN, error) {
		lsn, err := e.Commit(&meta.Op{Type: meta.OpSetattr, Ino: ino, Mask: meta.SetSize, Size: 10, Ctime: store.NowNanos()})
		shrinkLSN = lsn
		return lsn, err
	}
	sizeAtForce := int64(-1)
	e.onForce = func(lsn logbuf.LSN) {
		if lsn == shrinkLSN {
			if e.ckptMu.TryLock() {
				e.ckptMu.Unlock()
				t.Error("the shrink's force ran without the checkpoint lock held")
			}
			sizeAtForce = int64(len(dataFileBytes(t, f, ino)))
		}
	}
	if err := f.Truncate(ino, 10, commit); err != nil {
		t.Fatal(err)
	}
	if sizeAtForce != 1000 {
		t.Fatalf("the data file was %d bytes when the shrink was forced, want 1000 (not cut yet)", sizeAtForce)
	}
	if e.forced < shrinkLSN {
		t.Fatalf("the shrink (LSN %v) was never forced (forced to %v)", shrinkLSN, e.forced)
	}
	if got := len(dataFileBytes(t, f, ino)); got != 10 {
		t.Fatalf("data file is %d bytes after the shrink, want 10", got)
	}
}

// TestFailedSyncIsRemembered: once a data file's sync failed, every later
// Sync of the inode reports it, although the next fdatasync would succeed.
func TestFailedSyncIsRemembered(t *testing.T) {
	ffs := testfs.NewFaultFS(store.OSFS())
	f, _, ino := setup(t, ffs, Config{})
	st := f.State(ino)
	st.Opens.Add(1) // keep the data file open, as an open file handle does
	if _, err := f.Write(ino, []byte("lost?"), 0, false); err != nil {
		t.Fatal(err)
	}
	ffs.SetFault(func(c testfs.FaultCall) syscall.Errno {
		if c.Op == "fdatasync" {
			return syscall.EIO
		}
		return 0
	})
	if err := f.Sync(ino, st); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Sync with a failing fdatasync: %v, want EIO", err)
	}
	ffs.SetFault(nil)
	if err := f.Sync(ino, st); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Sync after the failure: %v, want the remembered EIO", err)
	}
	if dirty, lost := st.DataState(); !errors.Is(lost, syscall.EIO) {
		t.Fatalf("DataState = %v, %v; want the loss reported", dirty, lost)
	}
}

// TestSyncDirtyAndReap: a checkpoint's SyncDirty syncs each written data
// file once, and a freed inode's data file stays until its free is
// durable.
func TestSyncDirtyAndReap(t *testing.T) {
	ffs := testfs.NewFaultFS(store.OSFS())
	f, _, ino := setup(t, ffs, Config{})
	if _, err := f.Write(ino, []byte("x"), 0, false); err != nil {
		t.Fatal(err)
	}
	before := ffs.Calls("fdatasync")
	if err := f.SyncDirty(); err != nil {
		t.Fatal(err)
	}
	if got := ffs.Calls("fdatasync") - before; got != 1 {
		t.Fatalf("SyncDirty made %d fdatasyncs for one written file, want 1", got)
	}
	if err := f.SyncDirty(); err != nil || ffs.Calls("fdatasync")-before != 1 {
		t.Fatalf("a second SyncDirty with nothing written synced again (%v)", err)
	}
	f.Forget(ino, 7)
	if n := f.Reap(6); n != 0 {
		t.Fatalf("Reap before the free is durable deleted %d files", n)
	}
	if _, err := os.Stat(f.Path(ino)); err != nil {
		t.Fatalf("the data file went before its free was durable: %v", err)
	}
	if n := f.Reap(7); n != 1 {
		t.Fatalf("Reap once the free is durable deleted %d files, want 1", n)
	}
	if _, err := os.Stat(f.Path(ino)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the freed inode's data file is still there: %v", err)
	}
}

// TestReconcile: at mount, a data file of no inode goes, and one longer
// than its recovered size is cut to it.
func TestReconcile(t *testing.T) {
	f, e, ino := setup(t, nil, Config{})
	if _, err := f.Write(ino, []byte("0123456789"), 0, false); err != nil {
		t.Fatal(err)
	}
	f.CloseAll()
	if err := os.WriteFile(f.Path(ino+100), []byte("orphan"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.m.Inodes[ino].Size = 4 // what recovery found in the log
	if err := f.Reconcile(e.m, map[meta.Ino]bool{}); err != nil {
		t.Fatal(err)
	}
	if got := dataFileBytes(t, f, ino); string(got) != "0123" {
		t.Fatalf("data file %q after Reconcile, want 0123", got)
	}
	if _, err := os.Stat(f.Path(ino + 100)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the data file of no inode survived Reconcile: %v", err)
	}
}

// TestRefusedChangesNothing: a write and a truncate refused by the engine
// (a read-only or stopped journal) touch no data file.
func TestRefusedChangesNothing(t *testing.T) {
	f, e, ino := setup(t, nil, Config{})
	e.refused = syscall.EROFS
	if _, err := f.Write(ino, []byte("x"), 0, false); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("Write on a refusing engine: %v", err)
	}
	if err := f.Truncate(ino, 5, func() (logbuf.LSN, error) { t.Error("commit called"); return 0, nil }); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("Truncate on a refusing engine: %v", err)
	}
	if _, err := os.Stat(f.Path(ino)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused change created the data file (stat: %v)", err)
	}
	if len(e.ops) != 1 {
		t.Fatalf("refused changes committed %d ops", len(e.ops)-1)
	}
}

// TestOverlay: NoRecovery's overlay lays writes, a cut and a punch over the
// data file's bytes in log order.
func TestOverlay(t *testing.T) {
	o := Overlay{}
	ops := []*meta.Op{
		{Type: meta.OpWrite, Ino: 2, Off: 2, Data: []byte("abcdef")},
		{Type: meta.OpSetattr, Ino: 2, Mask: meta.SetSize, Size: 6},
		{Type: meta.OpFallocate, Ino: 2, Mode: meta.FallocPunchHole | meta.FallocKeepSize, Off: 3, Len: 1},
		{Type: meta.OpWrite, Ino: 2, Off: 7, Len: 1}, // no bytes: nothing to lay over
	}
	kept := 0
	for _, op := range ops {
		if o.Add(op, true) {
			kept++
		}
	}
	if kept != 3 {
		t.Fatalf("the overlay kept %d ops, want 3", kept)
	}
	if (Overlay{}).Add(ops[1], false) {
		t.Fatal("a metadata-journal truncate went into the overlay: its replay does not touch data files")
	}
	p := []byte("0123456789")
	o.apply(2, p, 0)
	if want := "01a\x00cd\x00\x00\x00\x00"; string(p) != want {
		t.Fatalf("overlay gives %q, want %q", p, want)
	}
}

// TestDirectWrites: aligned writes of an O_DIRECT open go through an
// O_DIRECT descriptor where the filesystem takes one, and buffered where
// it refuses (tmpfs); the bytes are the same either way.
func TestDirectWrites(t *testing.T) {
	f, _, ino := setup(t, nil, Config{})
	f.State(ino).Opens.Add(1)
	page := bytes.Repeat([]byte("p"), 8192)
	if _, err := f.Write(ino, page, 0, true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(ino, []byte("odd"), 5, true); err != nil {
		t.Fatal(err)
	}
	open, refused := f.State(ino).DirectIO()
	if open == refused {
		t.Fatalf("DirectIO = open %v, refused %v: exactly one must hold after an aligned write", open, refused)
	}
	probe, err := os.OpenFile(f.Path(ino), os.O_RDONLY|syscall.O_DIRECT, 0)
	if err == nil {
		probe.Close()
	}
	if (err == nil) != open {
		t.Fatalf("the filesystem takes O_DIRECT: %v, but the data path's descriptor is open: %v", err == nil, open)
	}
	want := append([]byte(nil), page...)
	copy(want[5:], "odd")
	if got := dataFileBytes(t, f, ino); !bytes.Equal(got, want) {
		t.Fatal("the data file does not hold what was written")
	}
}

// TestFallocateModes: fallocate(2)'s refusals, as the VFS makes them: an
// unknown mode bit, a punch without KEEP_SIZE, a punch with a zero range;
// and a bad range is EINVAL. None touches the data file or the log.
func TestFallocateModes(t *testing.T) {
	f, e, ino := setup(t, nil, Config{})
	for _, c := range []struct {
		mode      uint32
		off, n    int64
		wantErrno syscall.Errno
	}{
		{0x80, 0, 10, syscall.EOPNOTSUPP},
		{meta.FallocPunchHole, 0, 10, syscall.EOPNOTSUPP},
		{meta.FallocPunchHole | meta.FallocZeroRange | meta.FallocKeepSize, 0, 10, syscall.EOPNOTSUPP},
		{0, -1, 10, syscall.EINVAL},
		{0, 0, 0, syscall.EINVAL},
	} {
		if err := f.Fallocate(ino, c.mode, c.off, c.n); !errors.Is(err, c.wantErrno) {
			t.Errorf("fallocate mode %#x [%d, +%d): %v, want %v", c.mode, c.off, c.n, err, c.wantErrno)
		}
	}
	if len(e.ops) != 1 {
		t.Fatalf("refused fallocates committed %d ops", len(e.ops)-1)
	}
	if err := f.Fallocate(ino, meta.FallocZeroRange, 0, 4096); err != nil {
		t.Fatalf("a zero range: %v", err)
	}
	if a, _ := e.Inode(ino); a.Size != 4096 {
		t.Fatalf("a zero range without KEEP_SIZE left size %d, want 4096", a.Size)
	}
}
