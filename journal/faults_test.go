package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/journal/internal/testfs"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/store"
)

// The fault matrix: every kind of write the store makes fails, with ENOSPC
// and with EIO, through a FaultFS over a CrashFS, and the test asserts that
// every caller gets an errno, an op that fails changes nothing, what was
// fsynced before survives a power cut and remount, and check is clean
// after it.

// faultSite is one kind of store write, matched by call and path.
type faultSite struct {
	name  string
	op    string // FaultCall.Op
	path  string // under the store; "data/" matches any data file
	phase string // mkfs, mount, or live (while mounted)
}

func (s faultSite) matches(c testfs.FaultCall, dir string) bool {
	if c.Op != s.op {
		return false
	}
	rel, err := filepath.Rel(dir, c.Name)
	if err != nil {
		return false
	}
	if s.path == "data/" {
		return strings.HasPrefix(rel, "data/")
	}
	return rel == s.path
}

var faultSites = []faultSite{
	{"mkfs: mkdir data", "mkdir", "data", "mkfs"},
	{"mkfs: create log", "create", "log", "mkfs"},
	{"mkfs: write log", "write", "log", "mkfs"},
	{"mkfs: fsync log", "fsync", "log", "mkfs"},
	{"mkfs: write checkpoint.tmp", "write", "checkpoint.tmp", "mkfs"},
	{"mkfs: rename checkpoint", "rename", "checkpoint.tmp", "mkfs"},
	{"mkfs: create superblock.tmp", "create", "superblock.tmp", "mkfs"},
	{"mkfs: write superblock.tmp", "write", "superblock.tmp", "mkfs"},
	{"mkfs: fsync superblock.tmp", "fsync", "superblock.tmp", "mkfs"},
	{"mkfs: rename superblock", "rename", "superblock.tmp", "mkfs"},
	{"mkfs: fsync store dir", "syncdir", ".", "mkfs"},

	{"mount: truncate data file", "truncate", "data/", "mount"},
	{"mount: fdatasync data file", "fdatasync", "data/", "mount"},
	{"mount: fsync data dir", "syncdir", "data", "mount"},
	{"mount: write checkpoint.tmp", "write", "checkpoint.tmp", "mount"},
	{"mount: rename checkpoint", "rename", "checkpoint.tmp", "mount"},

	{"log write", "write", "log", "live"},
	{"log fdatasync", "fdatasync", "log", "live"},
	{"data file create", "create", "data/", "live"},
	{"data file write", "write", "data/", "live"},
	{"data file truncate", "truncate", "data/", "live"},
	{"data file fallocate", "fallocate", "data/", "live"},
	{"data file fdatasync", "fdatasync", "data/", "live"},
	{"data file remove", "remove", "data/", "live"},
	{"data dir fsync", "syncdir", "data", "live"},
	{"checkpoint.tmp create", "create", "checkpoint.tmp", "live"},
	{"checkpoint.tmp write", "write", "checkpoint.tmp", "live"},
	{"checkpoint.tmp fsync", "fsync", "checkpoint.tmp", "live"},
	{"checkpoint rename", "rename", "checkpoint.tmp", "live"},
	{"store dir fsync", "syncdir", ".", "live"},
}

const faultDir = "/store"

// faultWorld is a store on a FaultFS over a CrashFS.
type faultWorld struct {
	t   *testing.T
	cfs *testfs.CrashFS
	ff  *testfs.FaultFS
	fs  *FS
	o   Options
	// acknowledged: names made durable, and their files' contents
	acked map[string]*ackedFile
	hits  int
}

// ackedFile is what an acknowledged file must read back as after a power
// cut: content, or (an op since cut it, and may have got there) a prefix
// of it at least minLen long.
type ackedFile struct {
	content []byte
	minLen  int
	dir     bool
}

func (a *ackedFile) ok(got []byte) bool {
	return bytes.HasPrefix(got, a.content) || len(got) >= a.minLen && bytes.HasPrefix(a.content, got)
}

// arm makes every call at site fail with e from now on.
func (w *faultWorld) arm(site faultSite, e syscall.Errno) {
	w.ff.SetFault(func(c testfs.FaultCall) syscall.Errno {
		if site.matches(c, faultDir) {
			w.hits++
			return e
		}
		return 0
	})
}

func (w *faultWorld) lookup(path string) (Attr, error) {
	ino := meta.RootIno
	var a Attr
	for _, n := range strings.Split(path, "/") {
		var err error
		if a, err = w.fs.Lookup(ino, n); err != nil {
			return a, err
		}
		ino = a.Ino
	}
	return a, nil
}

func (w *faultWorld) read(path string) ([]byte, error) {
	a, err := w.lookup(path)
	if err != nil {
		return nil, err
	}
	b := make([]byte, a.Size)
	n, err := w.fs.Read(a.Ino, b, 0)
	return b[:n], err
}

func (w *faultWorld) digest() [32]byte {
	w.fs.mu.RLock()
	defer w.fs.mu.RUnlock()
	return powerDigest(w.fs.model)
}

// probe is one operation of the live phase: it returns the errno it got.
type probe struct {
	name string
	run  func(w *faultWorld) error
	// after, if set, updates what is acknowledged, given run's error
	after func(w *faultWorld, err error)
}

func probes() []probe {
	big := bytes.Repeat([]byte("big file, "), 10000)
	return []probe{
		{name: "create", run: func(w *faultWorld) error {
			_, err := w.fs.Create(meta.RootIno, "new", meta.ModeReg|0o644, 0, 0, 0, "")
			return err
		}},
		{name: "mkdir", run: func(w *faultWorld) error {
			_, err := w.fs.Create(meta.RootIno, "newdir", meta.ModeDir|0o755, 0, 0, 0, "")
			return err
		}},
		{name: "write", run: func(w *faultWorld) error {
			a, err := w.lookup("new")
			if err != nil {
				return err
			}
			_, err = w.fs.Write(a.Ino, []byte("new bytes"), 0)
			return err
		}},
		{name: "append to acked", run: func(w *faultWorld) error {
			a, err := w.lookup("d/acked")
			if err != nil {
				return err
			}
			_, err = w.fs.Write(a.Ino, []byte(" and more"), a.Size)
			return err
		}},
		{name: "fsync acked", run: func(w *faultWorld) error {
			a, err := w.lookup("d/acked")
			if err != nil {
				return err
			}
			return w.fs.Fsync(a.Ino, false)
		}},
		{name: "truncate", run: func(w *faultWorld) error {
			a, err := w.lookup("big")
			if err != nil {
				return err
			}
			_, err = w.fs.SetAttr(a.Ino, SetAttrIn{Mask: meta.SetSize, Size: 10})
			return err
		}, after: func(w *faultWorld, err error) { w.acked["big"].minLen = 10 }},
		{name: "fallocate", run: func(w *faultWorld) error {
			a, err := w.lookup("d/acked")
			if err != nil {
				return err
			}
			return w.fs.Fallocate(a.Ino, 0, 0, 64<<10)
		}},
		{name: "rename", run: func(w *faultWorld) error {
			return w.fs.Rename(meta.RootIno, "other", meta.RootIno, "renamed", 0)
		}, after: func(w *faultWorld, err error) { delete(w.acked, "other") }},
		{name: "setxattr", run: func(w *faultWorld) error {
			return w.fs.SetXattr(meta.RootIno, "user.x", []byte("v"), 0)
		}},
		{name: "unlink big", run: func(w *faultWorld) error {
			return w.fs.Unlink(meta.RootIno, "big")
		}, after: func(w *faultWorld, err error) { delete(w.acked, "big") }},
		{name: "checkpoint", run: checkpointProbe},
		{name: "create+fsync", run: func(w *faultWorld) error {
			a, err := w.fs.Create(meta.RootIno, "late", meta.ModeReg|0o644, 0, 0, 0, "")
			if err != nil {
				return err
			}
			if _, err := w.fs.Write(a.Ino, big[:5000], 0); err != nil {
				return err
			}
			if err := w.fs.Fsync(a.Ino, false); err != nil {
				return err
			}
			return w.fs.Fsync(meta.RootIno, false)
		}, after: func(w *faultWorld, err error) {
			if err == nil {
				w.acked["late"] = &ackedFile{content: big[:5000]}
			}
		}},
		// Again, now that the unlink's free is durable: the freed data
		// file goes.
		{name: "checkpoint", run: checkpointProbe},
	}
}

func checkpointProbe(w *faultWorld) error {
	w.fs.runCheckpoint()
	if e := w.fs.ckptErr.Load(); e != nil {
		return *e
	}
	return w.fs.x.Failure()
}

// setup makes a store with acknowledged content: d/acked fsynced with its
// directory, big and other written and fsynced too.
func (w *faultWorld) setup() {
	t := w.t
	attr := must[Attr](t)
	d := attr(w.fs.Create(meta.RootIno, "d", meta.ModeDir|0o755, 0, 0, 0, ""))
	a := attr(w.fs.Create(d.Ino, "acked", meta.ModeReg|0o644, 0, 0, 0, ""))
	must[int](t)(w.fs.Write(a.Ino, []byte("acknowledged bytes"), 0))
	b := attr(w.fs.Create(meta.RootIno, "big", meta.ModeReg|0o644, 0, 0, 0, ""))
	big := bytes.Repeat([]byte("0123456789"), 20000)
	must[int](t)(w.fs.Write(b.Ino, big, 0))
	attr(w.fs.Create(meta.RootIno, "other", meta.ModeReg|0o644, 0, 0, 0, ""))
	check(t, w.fs.Fsync(a.Ino, false))
	check(t, w.fs.Fsync(b.Ino, false))
	check(t, w.fs.Fsync(d.Ino, false))
	check(t, w.fs.Fsync(meta.RootIno, false))
	w.acked = map[string]*ackedFile{"d/acked": {content: []byte("acknowledged bytes")}, "big": {content: big, minLen: len(big)},
		"other": {}, "d": {dir: true}}
}

// remount cuts the power (everything not durable is lost), mounts without
// faults, and checks that check is clean and the acknowledged content is
// there.
func (w *faultWorld) remount(where string) {
	t := w.t
	img := w.cfs.Crash(nil)
	rep, err := recovery.InspectStore(img, faultDir)
	if err != nil || !rep.Sound() {
		t.Fatalf("%s: check after the power cut: %v; corrupt %v, replay %v, problems %q", where, err, rep.Corrupt, rep.ReplayErr, rep.Problems)
	}
	o := w.o
	o.Store = img
	fs, err := Open(faultDir, quietOpts(o))
	if err != nil {
		t.Fatalf("%s: mount after the faults and a power cut: %v", where, err)
	}
	defer fs.Close()
	w.fs = fs
	for path, want := range w.acked {
		a, err := w.lookup(path)
		if err != nil {
			t.Fatalf("%s: acknowledged %s is gone after remount: %v", where, path, err)
		}
		if want.dir != (a.Mode&meta.ModeType == meta.ModeDir) {
			t.Fatalf("%s: %s after remount has mode %#o", where, path, a.Mode)
		}
		if want.dir {
			continue
		}
		got, err := w.read(path)
		if err != nil || !want.ok(got) {
			t.Fatalf("%s: acknowledged %s after remount: %d bytes %q, %v; want %d bytes %q",
				where, path, len(got), got[:min(len(got), 40)], err, len(want.content), want.content[:min(len(want.content), 40)])
		}
	}
}

func newFaultWorld(t *testing.T, o Options) *faultWorld {
	w := &faultWorld{t: t, cfs: testfs.NewCrashFS(), o: o}
	w.ff = testfs.NewFaultFS(w.cfs)
	return w
}

func (w *faultWorld) mkfs() error {
	_, err := store.Mkfs(faultDir, store.MkfsOptions{LogSize: 2 << 20, LogBSize: 32 << 10, Store: w.ff})
	return err
}

func (w *faultWorld) mount() error {
	o := w.o
	o.Store = w.ff
	fs, err := Open(faultDir, quietOpts(o))
	w.fs = fs
	return err
}

func isErrno(err error, want ...syscall.Errno) bool {
	var e syscall.Errno
	return errors.As(err, &e) && slices.Contains(want, e)
}

// TestFaultMatrix injects ENOSPC and EIO at every site, in both journal
// modes, and logs the matrix: site × errno → what the callers got, the
// journal's state, and that the store came back.
func TestFaultMatrix(t *testing.T) {
	var matrix []string
	for _, jm := range []JournalMode{JournalMeta, JournalData} {
		for _, site := range faultSites {
			for _, e := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
				where := fmt.Sprintf("%s journal, %s × %v", jm, site.name, e)
				w := newFaultWorld(t, Options{Journal: jm, CheckpointInterval: time.Hour, LogBufs: 2})
				var outcome string
				switch site.phase {
				case "mkfs":
					outcome = w.mkfsFault(where, site, e)
				case "mount":
					outcome = w.mountFault(where, site, e)
				default:
					outcome = w.liveFault(where, site, e)
				}
				if w.hits == 0 {
					t.Errorf("%s: the site was never written", where)
				}
				matrix = append(matrix, fmt.Sprintf("| %s | %s | %s | %s |", jm, site.name, e, outcome))
			}
		}
	}
	t.Logf("fault matrix (journal | site | errno | outcome):\n%s", strings.Join(matrix, "\n"))
}

// mkfsFault: mkfs fails with the errno, leaves nothing behind, and a mkfs
// without the fault then makes a sound store.
func (w *faultWorld) mkfsFault(where string, site faultSite, e syscall.Errno) string {
	t := w.t
	w.arm(site, e)
	err := w.mkfs()
	w.ff.SetFault(nil)
	if !errors.Is(err, e) {
		t.Fatalf("%s: mkfs: %v; want an error carrying %v", where, err, e)
	}
	names, _ := w.cfs.ReadDir(faultDir)
	if len(names) > 0 {
		t.Fatalf("%s: a failed mkfs left %q", where, names)
	}
	// What a power cut right after leaves must not stop mkfs either.
	w.cfs = w.cfs.Crash(nil)
	w.ff = testfs.NewFaultFS(w.cfs)
	if err := w.mkfs(); err != nil {
		if !strings.Contains(err.Error(), "half-built") {
			t.Fatalf("%s: mkfs after the failed one and a power cut: %v", where, err)
		}
		if _, err := store.Mkfs(faultDir, store.MkfsOptions{LogSize: 2 << 20, Store: w.ff, Force: true}); err != nil {
			t.Fatalf("%s: mkfs --force of the half-built store: %v", where, err)
		}
	}
	check(t, w.mount())
	w.setup()
	check(t, w.fs.Close())
	w.remount(where)
	return fmt.Sprintf("mkfs fails: %s; removes what it made; mkfs then works", short(err))
}

// mountFault: a mount that meets the fault fails, the store is unchanged,
// and a mount without it recovers everything.
func (w *faultWorld) mountFault(where string, site faultSite, e syscall.Errno) string {
	t := w.t
	check(t, w.mkfs())
	check(t, w.mount())
	w.setup()
	// Leave work for the next mount: a write the log holds past what
	// the data files hold (the data journal replays it), a data file
	// longer than its inode (cut at mount).
	a := must[Attr](t)(w.lookup("big"))
	must[int](t)(w.fs.Write(a.Ino, []byte("replayed"), 5))
	check(t, w.fs.Fsync(a.Ino, false))
	big := w.acked["big"].content
	w.acked["big"].content = append(append([]byte("01234"), "replayed"...), big[13:]...)
	b := must[Attr](t)(w.lookup("other"))
	w.fs.Abandon()
	// Bytes in other's data file past its size (0), as a write whose
	// transaction the log lost leaves them.
	f, err := w.cfs.OpenFile(filepath.Join(faultDir, store.DataDirName, fmt.Sprint(b.Ino)), os.O_RDWR|os.O_CREATE, 0o600)
	check(t, err)
	must[int](t)(f.WriteAt([]byte("not logged"), 0))
	check(t, f.Close())
	w.arm(site, e)
	err = w.mount()
	w.ff.SetFault(nil)
	outcome := "mount works (site not reached)"
	if err != nil {
		if !errors.Is(err, e) {
			t.Fatalf("%s: mount: %v; want an error carrying %v", where, err, e)
		}
		outcome = "mount fails: " + short(err)
	} else {
		w.fs.Abandon()
	}
	w.remount(where)
	return outcome + "; the next mount recovers all"
}

// liveFault: the site fails from some point on while mounted. Every probe
// either works or gets an errno and changes nothing; afterwards the
// acknowledged content survives a power cut.
func (w *faultWorld) liveFault(where string, site faultSite, e syscall.Errno) string {
	t := w.t
	check(t, w.mkfs())
	check(t, w.mount())
	w.setup()
	w.arm(site, e)
	var got []string
	for _, p := range probes() {
		before := w.digest()
		stopped := w.fs.x.Failure() != nil
		err := p.run(w)
		if p.after != nil {
			p.after(w, err)
		}
		if err == nil {
			continue
		}
		if p.name == "checkpoint" {
			if !slices.Contains(got, "checkpoint fails") {
				got = append(got, "checkpoint fails")
			}
			continue
		}
		if !isErrno(err, syscall.ENOSPC, syscall.EIO) {
			t.Fatalf("%s: %s: %v (%T); want ENOSPC or EIO", where, p.name, err, err)
		}
		if stopped && err != syscall.EIO {
			t.Fatalf("%s: %s on a stopped journal: %v; want EIO", where, p.name, err)
		}
		// A failed op changes nothing (create+fsync may fail at its
		// fsync, after the create worked).
		if p.name != "create+fsync" && w.digest() != before {
			t.Fatalf("%s: %s failed with %v but changed the metadata", where, p.name, err)
		}
		got = append(got, fmt.Sprintf("%s %v", p.name, err))
	}
	state := w.fs.State()
	if w.fs.x.Failure() != nil {
		// Stopped: every change is EIO from now on, reads still work.
		if _, err := w.fs.Create(meta.RootIno, "after", meta.ModeReg|0o644, 0, 0, 0, ""); err != syscall.EIO {
			t.Fatalf("%s: create on a failed journal: %v; want EIO", where, err)
		}
		d := must[Attr](t)(w.lookup("d"))
		if err := w.fs.Unlink(d.Ino, "acked"); err != syscall.EIO {
			t.Fatalf("%s: unlink on a failed journal: %v; want EIO", where, err)
		}
		if !strings.HasPrefix(state, "failed: ") {
			t.Fatalf("%s: state %q", where, state)
		}
	} else if _, err := w.fs.Create(meta.RootIno, "after", meta.ModeReg|0o644, 0, 0, 0, ""); err != nil {
		t.Fatalf("%s: the journal did not stop (%s), yet a create failed: %v", where, state, err)
	}
	if b, err := w.read("d/acked"); err != nil || !bytes.HasPrefix(b, []byte("acknowledged bytes")) {
		t.Fatalf("%s: reading after the faults: %q, %v", where, b, err)
	}
	w.ff.SetFault(nil)
	if w.fs.x.Failure() == nil {
		// The fault gone, the next checkpoint works and the journal
		// is back to normal; it must still write back everything the
		// failed ones did not.
		w.fs.runCheckpoint()
		if st := w.fs.State(); st != "ok" {
			t.Fatalf("%s: after the fault ended and a checkpoint: state %q", where, st)
		}
	}
	w.fs.Abandon()
	w.remount(where)
	if len(got) == 0 {
		got = []string{"every op works"}
	}
	st := "journal " + strings.SplitN(state, ":", 2)[0]
	return strings.Join(got, ", ") + "; " + st + "; acked data survive"
}

func short(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

// TestFullDisk fills the filesystem under the store (a CrashFS with a
// capacity): writes get ENOSPC and change nothing; checkpoints fail, so the
// journal is degraded but takes metadata changes while the log has room;
// removing a file gives the space back and the journal recovers; with the
// disk full again and the log filled up, the journal stops, and every
// change gets EIO, not ENOSPC, while reads go on. A remount after a power
// cut finds everything acknowledged, and check finds the store sound.
func TestFullDisk(t *testing.T) {
	for _, jm := range []JournalMode{JournalMeta, JournalData} {
		t.Run(jm.String(), func(t *testing.T) {
			w := newFaultWorld(t, Options{Journal: jm, CheckpointInterval: time.Hour, LogBufs: 2})
			check(t, w.mkfs())
			var failedMu sync.Mutex // OnFail runs on the checkpointer
			var failed []error
			w.o.OnFail = func(err error) { failedMu.Lock(); failed = append(failed, err); failedMu.Unlock() }
			check(t, w.mount())
			w.setup()
			attr := must[Attr](t)
			hog := attr(w.fs.Create(meta.RootIno, "hog", meta.ModeReg|0o644, 0, 0, 0, ""))
			// Leave room for the hog's data and not much more.
			w.cfs.SetHeadroom(300 << 10)
			chunk := bytes.Repeat([]byte("h"), 64<<10)
			var off int64
			for len(chunk) > 0 {
				before := w.digest()
				n, err := w.fs.Write(hog.Ino, chunk, off)
				if err != nil {
					if err != syscall.ENOSPC {
						t.Fatalf("writing on a full disk: %v, want ENOSPC", err)
					}
					if w.digest() != before {
						t.Fatal("a write refused with ENOSPC changed the metadata")
					}
					chunk = chunk[:len(chunk)/2]
					continue
				}
				off += int64(n)
			}
			check(t, w.fs.Fsync(hog.Ino, false))
			// The log is preallocated: metadata changes still work.
			d := attr(w.fs.Create(meta.RootIno, "still", meta.ModeDir|0o755, 0, 0, 0, ""))
			check(t, w.fs.Fsync(d.Ino, false))
			w.acked["still"] = &ackedFile{dir: true}
			// A checkpoint has no room for its file: degraded, not failed.
			w.fs.runCheckpoint()
			if st := w.fs.State(); !strings.HasPrefix(st, "degraded: ") || !strings.Contains(st, "no space left") {
				t.Fatalf("after a checkpoint on a full disk: state %q", st)
			}
			if _, err := w.fs.Create(meta.RootIno, "meanwhile", meta.ModeReg|0o644, 0, 0, 0, ""); err != nil {
				t.Fatalf("create while degraded (the log has room): %v", err)
			}
			// Removing the hog gives the space back: the next checkpoint
			// deletes its data file first and succeeds.
			check(t, w.fs.Unlink(meta.RootIno, "hog"))
			w.fs.runCheckpoint()
			if st := w.fs.State(); st != "ok" {
				t.Fatalf("after removing the hog: state %q, want ok", st)
			}

			// Full again, and the log filled with metadata: the journal
			// must stop, since the checkpoint that would free the log
			// cannot be written.
			w.cfs.SetHeadroom(1024)
			value := bytes.Repeat([]byte("x"), 3000)
			var stopErr error
			for i := 0; i < 100000; i++ {
				before := w.digest()
				err := w.fs.SetXattr(d.Ino, fmt.Sprintf("user.%d", i%20), value, 0)
				if err != nil {
					if err != syscall.EIO {
						t.Fatalf("setxattr %d with the log full and no room to checkpoint: %v, want EIO", i, err)
					}
					if w.digest() != before {
						t.Fatal("a setxattr refused with EIO changed the metadata")
					}
					stopErr = err
					break
				}
			}
			if stopErr == nil {
				t.Fatal("the log never filled")
			}
			st := w.fs.State()
			if !strings.HasPrefix(st, "failed: the log is full") || !strings.Contains(st, "no space left") {
				t.Fatalf("state %q", st)
			}
			// The log fails, then tells OnFail: the EIO may come first.
			eventually(t, "OnFail is called", func() bool { failedMu.Lock(); defer failedMu.Unlock(); return len(failed) > 0 })
			failedMu.Lock()
			if len(failed) != 1 {
				t.Fatalf("OnFail called %d times: %v", len(failed), failed)
			}
			failedMu.Unlock()
			for _, try := range []func() error{
				func() error { return w.fs.Unlink(meta.RootIno, "meanwhile") },
				func() error { _, err := w.fs.Create(meta.RootIno, "x", meta.ModeReg|0o644, 0, 0, 0, ""); return err },
				func() error { a := attr(w.lookup("d/acked")); _, err := w.fs.Write(a.Ino, []byte("x"), 0); return err },
			} {
				if err := try(); err != syscall.EIO {
					t.Fatalf("a change on a stopped journal: %v, want EIO", err)
				}
			}
			if b, err := w.read("d/acked"); err != nil || string(b) != "acknowledged bytes" {
				t.Fatalf("read on a stopped journal: %q, %v", b, err)
			}
			if _, err := w.fs.ReadDir(meta.RootIno); err != nil {
				t.Fatalf("readdir on a stopped journal: %v", err)
			}
			w.fs.Abandon()
			w.cfs.SetCapacity(0)
			w.remount(jm.String())
		})
	}
}
