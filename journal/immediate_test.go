package journal

import (
	"bytes"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/journal/internal/testfs"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
)

// Immediate writes: a small write's fsync is a log force alone, a large
// one's syncs the data file, and a large write over logged bytes is made
// durable before its transaction, so that a crash keeping the transaction
// never replays the older logged bytes over it.
func TestImmediateWrites(t *testing.T) {
	cfs := testfs.NewCrashFS()
	must[*store.Superblock](t)(store.Mkfs(powerDir, store.MkfsOptions{LogSize: store.MinLogSize, LogBSize: 32 << 10, Store: cfs}))
	o := Options{Store: cfs, ImmediateWrite: 4096, LogForceInterval: time.Hour, CheckpointInterval: time.Hour}
	fs := mount(t, powerDir, o)
	a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	b := must[Attr](t)(fs.Create(meta.RootIno, "g", meta.ModeReg|0o644, 0, 0, 0, ""))
	check(t, fs.Open(a.Ino))
	fill := func(c byte, n int) []byte { return bytes.Repeat([]byte{c}, n) }
	syncs := func() uint64 { return fs.Stats().DataSyncs }

	must[int](t)(fs.Write(a.Ino, fill('a', 10000), 0)) // large: to the data file
	check(t, fs.Fsync(a.Ino, false))
	s0 := syncs()
	must[int](t)(fs.Write(a.Ino, fill('b', 3000), 1000)) // small: logged with its bytes
	check(t, fs.Fsync(a.Ino, true))
	if d := syncs() - s0; d != 0 {
		t.Errorf("fdatasync after a small write synced the data file %d times, want 0 (the log holds the bytes)", d)
	}
	s0 = syncs()
	must[int](t)(fs.Write(a.Ino, fill('c', 5000), 500)) // large, over the logged bytes
	if d := syncs() - s0; d != 1 {
		t.Errorf("a large write over logged bytes synced the data file %d times before its transaction, want 1", d)
	}
	// Its transaction made durable by another file's fsync, not its own.
	must[int](t)(fs.Write(b.Ino, fill('x', 10), 0))
	check(t, fs.Fsync(b.Ino, false))
	img := cfs.Crash(nil)
	fs.Abandon()
	o.Store = img
	fs = mount(t, powerDir, o)
	defer fs.Close()
	got := make([]byte, 10000)
	must[int](t)(fs.Read(a.Ino, got, 0))
	want := fill('a', 10000)
	copy(want[500:], fill('c', 5000))
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && got[i] == want[i] {
			i++
		}
		t.Fatalf("after the crash, byte %d is %q, want %q: replay wrote the logged bytes over a newer write", i, got[i], want[i])
	}
}
