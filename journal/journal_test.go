package journal

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/journal/internal/testfs"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/statsfile"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
)

func mkfs(t testing.TB, logSize int64, logbsize int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	if _, err := store.Mkfs(dir, store.MkfsOptions{LogSize: logSize, LogBSize: logbsize}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func quietOpts(o Options) Options {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o
}

func mount(t testing.TB, dir string, o Options) *FS {
	t.Helper()
	fs, err := Open(dir, quietOpts(o))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// everyOp drives every kind of operation through fs and returns the
// expected contents of the files it leaves.
func everyOp(t testing.TB, fs *FS) map[string][]byte {
	attr := must[Attr](t)
	d := attr(fs.Create(meta.RootIno, "dir", meta.ModeDir|0o755, 1000, 1000, 0, ""))
	sub := attr(fs.Create(d.Ino, "sub", meta.ModeDir|0o700, 0, 0, 0, ""))
	f := attr(fs.Create(d.Ino, "file", meta.ModeReg|0o644, 1000, 100, 0, ""))
	attr(fs.Create(meta.RootIno, "link", meta.ModeLink|0o777, 0, 0, 0, "dir/file"))
	attr(fs.Create(meta.RootIno, "fifo", meta.ModeFIFO|0o600, 0, 0, 0, ""))
	attr(fs.Create(meta.RootIno, "chr", meta.ModeChar|0o600, 0, 0, 0x0501, ""))
	check(t, fs.Open(f.Ino))
	must[int](t)(fs.Write(f.Ino, []byte("hello, log"), 0))
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: several records in data mode
	must[int](t)(fs.Write(f.Ino, big, 100))
	check(t, fs.Fsync(f.Ino, false))
	check(t, fs.Release(f.Ino))
	attr(fs.Link(f.Ino, sub.Ino, "hardlink"))
	attr(fs.SetAttr(f.Ino, SetAttrIn{Mask: meta.SetMode | meta.SetUID | meta.SetGID | meta.SetAtime | meta.SetMtime, Mode: 0o600, UID: 7, GID: 8, Atime: 1e9, Mtime: 2e9}))
	attr(fs.SetAttr(f.Ino, SetAttrIn{Mask: meta.SetSize, Size: 50}))   // shrink
	attr(fs.SetAttr(f.Ino, SetAttrIn{Mask: meta.SetSize, Size: 4096})) // grow
	check(t, fs.Fallocate(f.Ino, 0, 8192, 4096))
	check(t, fs.Fallocate(f.Ino, meta.FallocKeepSize|meta.FallocPunchHole, 0, 5))
	check(t, fs.SetXattr(f.Ino, "user.a", []byte("1"), 0))
	check(t, fs.SetXattr(f.Ino, "user.b", []byte("2"), meta.XattrCreate))
	check(t, fs.SetXattr(f.Ino, "user.a", []byte("one"), meta.XattrReplace))
	check(t, fs.RemoveXattr(f.Ino, "user.b"))
	g := attr(fs.Create(meta.RootIno, "g", meta.ModeReg|0o644, 0, 0, 0, ""))
	check(t, fs.Open(g.Ino))
	must[int](t)(fs.Write(g.Ino, []byte("gee"), 0))
	check(t, fs.Release(g.Ino))
	check(t, fs.Rename(meta.RootIno, "g", d.Ino, "g2", 0))
	h := attr(fs.Create(meta.RootIno, "h", meta.ModeReg|0o644, 0, 0, 0, ""))
	check(t, fs.Rename(meta.RootIno, "h", meta.RootIno, "fifo", 0)) // replaces fifo: freed
	if err := fs.Rename(meta.RootIno, "fifo", meta.RootIno, "chr", meta.RenameNoReplace); err != syscall.EEXIST {
		t.Fatalf("rename noreplace onto existing: %v, want EEXIST", err)
	}
	check(t, fs.Rename(meta.RootIno, "fifo", d.Ino, "g2", meta.RenameExchange))
	check(t, fs.Rename(d.Ino, "sub", meta.RootIno, "sub-moved", 0))
	attr(fs.Create(meta.RootIno, "gone", meta.ModeReg|0o644, 0, 0, 0, ""))
	check(t, fs.Unlink(meta.RootIno, "gone"))
	attr(fs.Create(meta.RootIno, "emptydir", meta.ModeDir|0o755, 0, 0, 0, ""))
	check(t, fs.Rmdir(meta.RootIno, "emptydir"))
	// An unlinked file that stays open, then is released: OpFree.
	o := attr(fs.Create(meta.RootIno, "orphan", meta.ModeReg|0o644, 0, 0, 0, ""))
	check(t, fs.Open(o.Ino))
	check(t, fs.Unlink(meta.RootIno, "orphan"))
	if a, err := fs.GetAttr(o.Ino); err != nil || a.Nlink != 0 {
		t.Fatalf("open unlinked file: %+v, %v", a, err)
	}
	check(t, fs.Release(o.Ino))
	if _, err := fs.GetAttr(o.Ino); err != syscall.ENOENT {
		t.Fatalf("released orphan still there: %v", err)
	}
	_ = h
	want := map[string][]byte{}
	// "hello, log" cut to 50 bytes, grown, fallocated to 12288, the first
	// 5 bytes punched out.
	fb := make([]byte, 12288)
	copy(fb[5:], ", log")
	want["dir/file"] = fb
	want["fifo"] = []byte("gee") // exchanged with dir/g2
	return want
}

func readAll(t testing.TB, fs *FS, path string) []byte {
	t.Helper()
	ino := meta.RootIno
	for _, name := range strings.Split(path, "/") {
		a, err := fs.Lookup(ino, name)
		if err != nil {
			t.Fatalf("lookup %s: %v", path, err)
		}
		ino = a.Ino
	}
	a := must[Attr](t)(fs.GetAttr(ino))
	buf := make([]byte, a.Size)
	n := must[int](t)(fs.Read(ino, buf, 0))
	return buf[:n]
}

func TestEveryOpSurvivesRecoveryAndUnmount(t *testing.T) {
	for _, jm := range []JournalMode{JournalMeta, JournalData} {
		for _, m := range cksum.Modes() {
			t.Run(fmt.Sprintf("%s/%s", jm, m), func(t *testing.T) {
				dir := mkfs(t, 16<<20, 0)
				o := Options{Mode: m, Journal: jm}
				fs := mount(t, dir, o)
				want := everyOp(t, fs)
				fs.mu.RLock()
				digest := fs.model.Digest()
				fs.mu.RUnlock()
				check(t, fs.Sync())
				fs.Abandon() // crash: recovery must replay everything

				fs = mount(t, dir, o)
				if r := fs.Recovery(); r.Clean || r.Transactions == 0 {
					t.Errorf("after a crash: recovery %+v, want a replay", r)
				}
				if got := fs.model.Digest(); got != digest {
					t.Fatalf("model after replay differs")
				}
				for p, b := range want {
					if got := readAll(t, fs, p); !bytes.Equal(got, b) {
						t.Errorf("%s after replay: %d bytes, want %d (first diff at %d)", p, len(got), len(b), firstDiff(got, b))
					}
				}
				check(t, fs.Close())

				fs = mount(t, dir, o)
				if r := fs.Recovery(); !r.Clean || r.Transactions != 0 {
					t.Errorf("after unmount: recovery %+v, want clean", r)
				}
				if got := fs.model.Digest(); got != digest {
					t.Fatalf("model after clean remount differs")
				}
				for p, b := range want {
					if got := readAll(t, fs, p); !bytes.Equal(got, b) {
						t.Errorf("%s after remount: %d bytes, want %d", p, len(got), len(b))
					}
				}
				check(t, fs.Close())
			})
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestFsyncHistogram(t *testing.T) {
	// Buckets tile the line: each starts where the last ended.
	for i := 1; i < statsfile.HistBuckets; i++ {
		_, prevHi := statsfile.HistBounds(i - 1)
		lo, hi := statsfile.HistBounds(i)
		if lo != prevHi || hi <= lo {
			t.Fatalf("bucket %d = [%d,%d), previous ends at %d", i, lo, hi, prevHi)
		}
		if float64(hi-lo)/float64(lo) > 0.125+1e-9 && lo >= statsfile.HistSub {
			t.Fatalf("bucket %d [%d,%d) wider than 12.5%%", i, lo, hi)
		}
	}
	for _, us := range []uint64{0, 1, 7, 8, 9, 15, 16, 100, 1000, 123456, 1 << 30} {
		lo, hi := statsfile.HistBounds(statsfile.HistBucket(us))
		if us < lo || us >= hi {
			t.Errorf("%d µs lands in [%d,%d)", us, lo, hi)
		}
	}
	h := make([]uint64, statsfile.HistBuckets)
	for us := uint64(1); us <= 1000; us++ {
		h[statsfile.HistBucket(us)]++
	}
	if p := statsfile.HistPercentile(h, 50); p < 470 || p > 530 {
		t.Errorf("p50 of 1..1000 µs = %v", p)
	}
	if p := statsfile.HistPercentile(h, 99); p < 940 || p > 1040 {
		t.Errorf("p99 of 1..1000 µs = %v", p)
	}
}

// slowSyncDevice makes every sync take a while, as a disk flush does, so
// forces that arrive meanwhile must share the next one.
type slowSyncDevice struct {
	*testfs.CrashDevice
	delay time.Duration
}

func (d slowSyncDevice) Sync() error {
	time.Sleep(d.delay)
	return d.CrashDevice.Sync()
}

// groupCommit runs 16 goroutines that each write and fsync their own file
// n times on a new store whose log device wrap makes from the log file
// (nil: the file itself), and returns the filesystem's stats.
func groupCommit(t testing.TB, wrap func(img []byte) xlog.Device, n int) statsfile.Stats {
	dir := mkfs(t, 16<<20, 0)
	var o Options
	if wrap != nil {
		img, err := os.ReadFile(filepath.Join(dir, store.LogName))
		check(t, err)
		o.Device = wrap(img)
	}
	fs := mount(t, dir, o)
	defer fs.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		a, err := fs.Create(meta.RootIno, fmt.Sprintf("w%d", g), meta.ModeReg|0o644, 0, 0, 0, "")
		check(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 512)
			for i := range n {
				if _, err := fs.Write(a.Ino, buf, int64(i)*512); err != nil {
					errs <- err
					return
				}
				if err := fs.Fsync(a.Ino, false); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return fs.Stats()
}

// TestGroupCommit: while one log sync is in progress, the fsyncs that
// arrive wait for the next, and that one sync serves them all.
func TestGroupCommit(t *testing.T) {
	st := groupCommit(t, func(img []byte) xlog.Device { return slowSyncDevice{testfs.NewCrashDevice(img), 2 * time.Millisecond} }, 20)
	if st.Fsyncs != 16*20 {
		t.Fatalf("%d fsyncs, want %d", st.Fsyncs, 16*20)
	}
	// 320 fsyncs, each needing a sync: without sharing there would be 320.
	if st.ForceSyncs*2 > st.LogForces {
		t.Errorf("%d forces waited on %d syncs: group commit did not share them (want at least 2 per sync)", st.LogForces, st.ForceSyncs)
	}
	t.Logf("16 writers: %d fsyncs waited on %d log syncs, %.1f per sync", st.LogForces, st.ForceSyncs, st.FsyncsPerForce())
}

// BenchmarkGroupCommit reports, over a real log file, how many fsync
// callers one log force serves with 16 goroutines doing write+fsync.
func BenchmarkGroupCommit(b *testing.B) {
	var st statsfile.Stats
	n := 0
	for b.Loop() {
		st = groupCommit(b, nil, 50)
		n++
	}
	b.ReportMetric(st.FsyncsPerForce(), "fsyncs/force")
	b.ReportMetric(float64(st.Fsyncs)/float64(max(1, st.LogSyncs)), "fsyncs/logsync")
}

// TestFullLogWaitsAndCloses fills a small log from several writers: they
// must wait for checkpoints, never fail, and Close must finish while some
// of them wait for space.
func TestFullLogWaitsAndCloses(t *testing.T) {
	dir := mkfs(t, store.MinLogSize, 32<<10)
	fs := mount(t, dir, Options{Journal: JournalData, LogBufs: 2, CheckpointInterval: time.Hour})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var written [4]int
	for g := range 4 {
		a, err := fs.Create(meta.RootIno, fmt.Sprintf("w%d", g), meta.ModeReg|0o644, 0, 0, 0, "")
		check(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := bytes.Repeat([]byte{byte(g)}, 20000)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := fs.Write(a.Ino, buf, int64(i%50)*20000); err != nil {
					if fs.closed.Load() {
						return // Close got in first
					}
					t.Errorf("writer %d: %v", g, err)
					return
				}
				written[g]++
			}
		}()
	}
	for fs.Stats().SpaceWaits < 20 {
		time.Sleep(time.Millisecond)
	}
	done := make(chan error)
	go func() { done <- fs.Close() }()
	select {
	case err := <-done:
		check(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("Close hung while writers waited for log space")
	}
	close(stop)
	wg.Wait()
	total := written[0] + written[1] + written[2] + written[3]
	if total*20000 < 4*store.MinLogSize {
		t.Errorf("only %d bytes written through a %d byte log", total*20000, store.MinLogSize)
	}
	fs = mount(t, dir, Options{})
	if r := fs.Recovery(); !r.Clean {
		t.Errorf("after Close: recovery %+v, want clean", r)
	}
	check(t, fs.Close())
}

func TestEncodedLenBoundsEncode(t *testing.T) {
	big := meta.Op{Ino: 1 << 62, Parent: 1 << 62, NewParent: 1 << 62, Name: "n", NewName: "nn", Target: "t",
		Mode: ^uint32(0), UID: ^uint32(0), GID: ^uint32(0), Rdev: ^uint32(0), Flags: ^uint32(0), Mask: ^uint32(0),
		Off: -1 << 62, Len: 1 << 62, Size: 1 << 62, Atime: -1 << 62, Mtime: 1 << 62, Ctime: -1 << 62, Free: true, Data: []byte("data")}
	for typ := meta.OpType(1); typ < meta.OpMax; typ++ {
		op := big
		op.Type = typ
		enc := op.Encode(nil)
		if len(enc) > op.EncodedLen() {
			t.Errorf("%s: encoded %d bytes, EncodedLen says at most %d", typ, len(enc), op.EncodedLen())
		}
		got, err := meta.DecodeOp(enc)
		if err != nil || got.Type != typ {
			t.Errorf("%s: decode: %v", typ, err)
		}
	}
}

// TestWriteDirect: aligned writes from O_DIRECT opens go through an
// O_DIRECT descriptor (where the filesystem under the test allows it),
// unaligned ones stay buffered, and both read back and survive recovery.
func TestWriteDirect(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store") // not tmpfs: ext4 takes O_DIRECT
	if _, err := store.Mkfs(dir, store.MkfsOptions{LogSize: 4 << 20}); err != nil {
		t.Fatal(err)
	}
	// Whether the filesystem under the store takes O_DIRECT decides what
	// the journal must do: write directly, or fall back to buffered
	// writes. Only a filesystem that refuses it makes the fallback right.
	probe, err := os.OpenFile(filepath.Join(dir, "odirect-probe"), os.O_RDWR|os.O_CREATE|syscall.O_DIRECT, 0o600)
	if err != nil {
		t.Skipf("the filesystem under %s refuses O_DIRECT (%v): the direct path cannot be tested here", dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	fs := mount(t, dir, Options{})
	a := must[Attr](t)(fs.Create(meta.RootIno, "db", meta.ModeReg|0o644, 0, 0, 0, ""))
	check(t, fs.Open(a.Ino))
	page := bytes.Repeat([]byte("p"), 16384)
	must[int](t)(fs.WriteDirect(a.Ino, page, 0))
	must[int](t)(fs.WriteDirect(a.Ino, []byte("unaligned"), 100))
	must[int](t)(fs.WriteDirect(a.Ino, bytes.Repeat([]byte("q"), 4096), 16384))
	if open, refused := fs.files.State(a.Ino).DirectIO(); !open || refused {
		t.Errorf("the aligned writes went buffered (O_DIRECT descriptor %v, refused %v), though the filesystem under the store takes O_DIRECT",
			open, refused)
	}
	want := append(append([]byte(nil), page...), bytes.Repeat([]byte("q"), 4096)...)
	copy(want[100:], "unaligned")
	if got := readAll(t, fs, "db"); !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes, not what was written (first difference at %d)", len(got), firstDiff(got, want))
	}
	check(t, fs.Fsync(a.Ino, false))
	check(t, fs.Release(a.Ino))
	fs.Abandon()
	fs = mount(t, dir, Options{})
	if got := readAll(t, fs, "db"); !bytes.Equal(got, want) {
		t.Fatal("direct writes did not survive recovery")
	}
	check(t, fs.Close())
}

// TestInlineStoreMountsInOtherModes: a log written in inline mode is
// checked sound and replayed by a batched mount, whose own records an
// inline mount then replays, and each mode reads back what the other wrote.
// (The CRC on disk is the same in every mode; this is the proof on a real
// log with crashes between the mounts.) The iclogs are 256 KiB, and each
// mode writes a file whose bytes fill records of more than 32 KiB of
// payload: the first words of blocks 64 on are saved in the extension
// headers' cycle data, which inline mode fills as it copies, so a word
// saved wrong there reads back wrong in the file.
func TestInlineStoreMountsInOtherModes(t *testing.T) {
	dir := mkfs(t, 16<<20, 256<<10)
	inspect := func(when string, wantReplay bool) {
		t.Helper()
		r, err := recovery.Inspect(dir)
		if err != nil {
			t.Fatalf("%s: inspect: %v", when, err)
		}
		if !r.Sound() || r.Bad != nil || (r.Replayed > 0) != wantReplay {
			t.Fatalf("%s: check finds sound %v, bad record %v, %d transactions to replay (want some: %v), problems %q",
				when, r.Sound(), r.Bad, r.Replayed, wantReplay, r.Problems)
		}
		if !wantReplay {
			return
		}
		big := 0
		for _, rec := range r.Records {
			if rec.Header.Len > logbuf.HeaderCycleSize && logbuf.HeaderBlocks(int(rec.Header.Size)) > 1 {
				big++
			}
		}
		if big < 2 {
			t.Fatalf("%s: the log holds %d records (from the tail) with more than %d bytes of payload, want 2 or more: no extension header's cycle data is replayed",
				when, big, logbuf.HeaderCycleSize)
		}
	}
	verify := func(when string, fs *FS, want map[string][]byte) {
		t.Helper()
		for p, b := range want {
			if got := readAll(t, fs, p); !bytes.Equal(got, b) {
				t.Fatalf("%s: %s: %d bytes, want %d (first diff at %d)", when, p, len(got), len(b), firstDiff(got, b))
			}
		}
	}
	// Bytes that differ from block to block, so that a block's first
	// word restored from the wrong slot, or zeroed, shows.
	fill := func(n int, seed uint64) []byte {
		b := make([]byte, n)
		r := rand.New(rand.NewPCG(seed, 1))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	inline := Options{Mode: cksum.Inline, Journal: JournalData}
	batched := Options{Mode: cksum.Batched, Journal: JournalData}

	fs := mount(t, dir, inline)
	want := everyOp(t, fs)
	a := must[Attr](t)(fs.Create(meta.RootIno, "from-inline", meta.ModeReg|0o644, 0, 0, 0, ""))
	want["from-inline"] = fill(400<<10, 1)
	must[int](t)(fs.Write(a.Ino, want["from-inline"], 0))
	check(t, fs.Sync())
	if st := fs.Stats(); st.Cksum.CopyCalls == 0 || st.Cksum.Records == 0 || st.Cksum.PlainOps != 0 {
		t.Fatalf("inline mount: %+v: no checksum work at copy time, or ops copied outside it", st.Cksum)
	}
	fs.Abandon()
	inspect("written inline, crashed", true)

	fs = mount(t, dir, batched)
	if r := fs.Recovery(); r.Clean || r.Transactions == 0 {
		t.Fatalf("batched mount of an inline log: recovery %+v, want a replay", r)
	}
	verify("batched after inline", fs, want)
	a = must[Attr](t)(fs.Create(meta.RootIno, "from-batched", meta.ModeReg|0o644, 0, 0, 0, ""))
	want["from-batched"] = fill(400<<10, 2)
	must[int](t)(fs.Write(a.Ino, want["from-batched"], 0))
	check(t, fs.Sync())
	fs.Abandon()
	inspect("written batched, crashed", true)

	fs = mount(t, dir, inline)
	if r := fs.Recovery(); r.Clean || r.Transactions == 0 {
		t.Fatalf("inline mount of a batched log: recovery %+v, want a replay", r)
	}
	verify("inline after batched", fs, want)
	check(t, fs.Close())
	inspect("unmounted inline", false)

	fs = mount(t, dir, batched)
	if r := fs.Recovery(); !r.Clean {
		t.Errorf("batched mount after an inline unmount: recovery %+v, want clean", r)
	}
	verify("batched after a clean inline unmount", fs, want)
	check(t, fs.Close())
}
