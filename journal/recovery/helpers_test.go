package recovery_test

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/journal"
	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
)

const (
	testLogSize  = 1 << 20
	testLogBSize = 32 << 10
)

// newStore makes a fresh store in a temporary directory.
func newStore(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	if _, err := store.Mkfs(dir, store.MkfsOptions{LogSize: testLogSize, LogBSize: testLogBSize}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// mountStore mounts dir with the journal, quietly, without timed
// checkpoints.
func mountStore(t *testing.T, dir string, o journal.Options) *journal.FS {
	t.Helper()
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	o.CheckpointInterval = time.Hour
	if o.LogBufs == 0 {
		o.LogBufs = 4
	}
	fs, err := journal.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot reads every file of a store (relative path to bytes).
func snapshot(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	check(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return nil
	}))
	return out
}

// sameFiles fails the test unless the store in dir holds exactly before.
func sameFiles(t testing.TB, what, dir string, before map[string][]byte) {
	t.Helper()
	after := snapshot(t, dir)
	for _, name := range slices.Sorted(maps.Keys(before)) {
		if a, ok := after[name]; !ok {
			t.Errorf("%s: %s is gone", what, name)
		} else if !bytes.Equal(a, before[name]) {
			t.Errorf("%s: %s changed (%d bytes, was %d)", what, name, len(a), len(before[name]))
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("%s: %s appeared", what, name)
		}
	}
}

// copyStore copies the store in dir (as the page cache holds it: what a
// crash of the mounting process leaves) to a new directory.
func copyStore(t testing.TB, dir string) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "crashed")
	check(t, os.MkdirAll(filepath.Join(d, store.DataDirName), 0o755))
	for name, b := range snapshot(t, dir) {
		check(t, os.WriteFile(filepath.Join(d, name), b, 0o644))
	}
	return d
}

// crash is a store left by a crash, and what the journal held at it.
type crash struct {
	dir  string      // the crashed store
	want *meta.Model // the journal's model at the crash (from its twin's clean unmount)
	txns int         // transactions committed since the mount
	ino  map[string]meta.Ino
}

// crashAfter mounts a fresh store, runs work (which returns how many
// transactions it committed), makes everything durable and takes the
// store as a crash would leave it. The original is then unmounted
// cleanly: its checkpoint holds the journal's own model as of the crash,
// for the recovered one to match.
func crashAfter(t *testing.T, o journal.Options, work func(fs *journal.FS, c *crash) int) *crash {
	t.Helper()
	dir := newStore(t)
	fs := mountStore(t, dir, o)
	c := &crash{ino: map[string]meta.Ino{}}
	c.txns = work(fs, c)
	check(t, fs.Sync())
	c.dir = copyStore(t, dir)
	check(t, fs.Close())
	ck, err := store.ReadCheckpoint(store.OSFS(), dir)
	check(t, err)
	c.want = ck.Model
	return c
}

// filesWork creates n files, writes a distinct pattern to each (one
// transaction apiece), makes a directory and sets an xattr: 2n+2
// transactions.
func filesWork(n int) func(fs *journal.FS, c *crash) int {
	return func(fs *journal.FS, c *crash) int {
		createFiles(fs, c, n, false)
		d, err := fs.Create(meta.RootIno, "d", meta.ModeDir|0o755, 0, 0, 0, "")
		if err != nil {
			panic(err)
		}
		c.ino["d"] = d.Ino
		if err := fs.SetXattr(d.Ino, "user.k", []byte("v"), 0); err != nil {
			panic(err)
		}
		return 2*n + 2
	}
}

// pattern is file i's bytes in filesWork.
func pattern(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, 700+100*i) }

// fsyncWork creates and writes n files as filesWork does, with an fsync
// after each, so each file's two transactions are a record of their own:
// n+1 records, 2n transactions.
func fsyncWork(n int) func(fs *journal.FS, c *crash) int {
	return func(fs *journal.FS, c *crash) int {
		createFiles(fs, c, n, true)
		return 2 * n
	}
}

// createFiles creates files f0..f<n-1>, each written with its pattern,
// and fsynced if fsync is set. A workload runs outside the test's
// goroutine checks, so a failure panics (the test then fails).
func createFiles(fs *journal.FS, c *crash, n int, fsync bool) {
	for i := range n {
		name := fmt.Sprintf("f%d", i)
		a, err := fs.Create(meta.RootIno, name, meta.ModeReg|0o644, 0, 0, 0, "")
		if err != nil {
			panic(err)
		}
		c.ino[name] = a.Ino
		if _, err := fs.Write(a.Ino, pattern(i), 0); err != nil {
			panic(err)
		}
		if fsync {
			if err := fs.Fsync(a.Ino, false); err != nil {
				panic(err)
			}
		}
	}
}

// mountOf is what Recover needs of the store in dir, as a mount sets it
// up; warnings collects Logf's messages.
type mountOf struct {
	recovery.Mount
	warnings *[]string
	dev      xlog.Device
}

func newMount(t *testing.T, dir string, logData bool, overlay datafile.Overlay) mountOf {
	t.Helper()
	st := store.OSFS()
	sb, err := store.ReadSuperblock(st, dir)
	check(t, err)
	ck, err := store.ReadCheckpoint(st, dir)
	check(t, err)
	dev, err := recovery.OpenLogDevice(st, filepath.Join(dir, store.LogName))
	check(t, err)
	t.Cleanup(func() { dev.Close() })
	var warnings []string
	logf := func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
	files := datafile.New(nil, datafile.Config{
		Store: st, Dir: filepath.Join(dir, store.DataDirName), LogData: logData, MaxTxn: 1 << 17,
		ReadOnly: overlay != nil, Overlay: overlay, Logf: logf,
	})
	t.Cleanup(files.CloseAll)
	m := recovery.Mount{
		Log: dev, LogSize: sb.LogSize, Coverage: sb.Coverage, Checkpoint: ck, Files: files, LogData: logData,
		LogBSize: testLogBSize, Overlay: overlay, Logf: logf,
	}
	return mountOf{Mount: m, warnings: &warnings, dev: dev}
}

// recoverStore runs Recover on the store in dir.
func recoverStore(t *testing.T, dir string, logData bool, overlay datafile.Overlay) (*recovery.Recovered, mountOf, error) {
	t.Helper()
	m := newMount(t, dir, logData, overlay)
	r, err := recovery.Recover(m.Mount)
	return r, m, err
}

// scanStore walks the log of the store in dir as recovery does.
func scanStore(t *testing.T, dir string) (*xlog.Scan, *store.Checkpoint, []byte) {
	t.Helper()
	sb, err := store.ReadSuperblock(store.OSFS(), dir)
	check(t, err)
	ck, err := store.ReadCheckpoint(store.OSFS(), dir)
	check(t, err)
	img, err := os.ReadFile(filepath.Join(dir, store.LogName))
	check(t, err)
	return xlog.ScanLog(img, recovery.WindowOf(ck, sb.Coverage)), ck, img
}

// patchLog writes b at off in the store's log file.
func patchLog(t *testing.T, dir string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, store.LogName), os.O_RDWR, 0)
	check(t, err)
	defer f.Close()
	_, err = f.WriteAt(b, off)
	check(t, err)
}

// flipLogBit flips one bit of the store's log file at off.
func flipLogBit(t *testing.T, dir string, off int64, mask byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, store.LogName))
	check(t, err)
	patchLog(t, dir, off, []byte{b[off] ^ mask})
}

// txnsIn counts the transactions whose COMMIT is in record r.
func txnsIn(r xlog.ScannedRecord) int {
	n := 0
	for _, op := range r.Record.Ops {
		if op.Flags&logbuf.FlagCommit != 0 && op.ClientID != logbuf.ClientLog {
			n++
		}
	}
	return n
}

// dataFile reads ino's data file in the store in dir.
func dataFile(t *testing.T, dir string, ino meta.Ino) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, store.DataDirName, fmt.Sprint(ino)))
	check(t, err)
	return b
}
