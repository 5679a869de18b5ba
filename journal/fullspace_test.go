package journal

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/journal/internal/testfs"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
)

// Space on a full disk: a freed inode's data file goes as soon as its free
// is durable, whether or not a checkpoint can be written; an unmount whose
// checkpoint cannot be written still leaves a log that ends with its
// unmount record; the next mount goes on from the last checkpoint while the
// log has room; and a store whose log filled mounts read-only at once, and
// read-write once the filesystem has the room the refusal names.

// fillDisk creates name and writes it until the filesystem under the
// store is full (ENOSPC), fsyncs it, and records it as acknowledged.
func (w *faultWorld) fillDisk(name string) Attr {
	t := w.t
	t.Helper()
	a := must[Attr](t)(w.fs.Create(meta.RootIno, name, meta.ModeReg|0o644, 0, 0, 0, ""))
	w.cfs.SetHeadroom(300 << 10)
	chunk := bytes.Repeat([]byte(name[:1]), 64<<10)
	var content []byte
	for len(chunk) > 0 {
		n, err := w.fs.Write(a.Ino, chunk, int64(len(content)))
		content = append(content, chunk[:n]...)
		if err != nil {
			if err != syscall.ENOSPC {
				t.Fatalf("filling the disk with %s: %v, want ENOSPC", name, err)
			}
			chunk = chunk[:len(chunk)/2]
		}
	}
	check(t, w.fs.Fsync(a.Ino, false))
	check(t, w.fs.Fsync(meta.RootIno, false))
	w.acked[name] = &ackedFile{content: content, minLen: len(content)}
	a.Size = int64(len(content))
	return a
}

func dataPath(ino meta.Ino) string {
	return filepath.Join(faultDir, store.DataDirName, strconv.FormatUint(uint64(ino), 10))
}

// eventually waits, up to a minute, for cond; what names it.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still not so after a minute: %s", what)
		}
	}
}

func (w *faultWorld) exists(path string) bool {
	_, err := w.cfs.Stat(path)
	return err == nil
}

// TestDeleteGivesSpaceBackOnFullDisk: with the filesystem under the store
// full, a delete's data file is removed as soon as its free is durable (an
// fsync, or at once when checkpoints are failing), without waiting for a
// checkpoint, which needs the very space it gives back; a file unlinked
// while open goes at its last close. Unmounting with the disk full again
// cannot write its checkpoint, yet succeeds: the log holds everything and
// ends with the unmount record. The next mount, on the still-full disk,
// goes on from the last checkpoint (degraded), and a delete there gives
// the space back too.
func TestDeleteGivesSpaceBackOnFullDisk(t *testing.T) {
	for _, jm := range []JournalMode{JournalMeta, JournalData} {
		t.Run(jm.String(), func(t *testing.T) {
			w := newFaultWorld(t, Options{Journal: jm, CheckpointInterval: time.Hour, LogForceInterval: time.Hour, LogBufs: 2})
			check(t, w.mkfs())
			check(t, w.mount())
			w.setup()

			// No checkpoint has met the full disk yet: the state is ok.
			// The last one, with room, holds the hog.
			hog := w.fillDisk("hog")
			w.cfs.SetCapacity(0)
			w.fs.runCheckpoint()
			w.cfs.SetHeadroom(0)
			if st := w.fs.State(); st != "ok" {
				t.Fatalf("state %q", st)
			}
			ckpts := w.fs.ckpts.Load()
			check(t, w.fs.Unlink(meta.RootIno, "hog"))
			delete(w.acked, "hog")
			check(t, w.fs.Fsync(meta.RootIno, false)) // the free is durable
			eventually(t, "the data file of the removed hog is gone once its free is durable", func() bool { return !w.exists(dataPath(hog.Ino)) })
			if n := w.fs.ckpts.Load(); n != ckpts {
				t.Fatalf("%d checkpoints ran; the free alone should have removed the data file", n-ckpts)
			}
			// A power cut now: the checkpoint still holds hog, whose data
			// file is gone; the log frees it, so recovery, and the check
			// that every file has the bytes a checkpoint made durable,
			// take the store as it is.
			// (The removal made durable, as the next sync of the data
			// directory does.)
			check(t, w.cfs.SyncDir(filepath.Join(faultDir, store.DataDirName)))
			img := w.cfs.Crash(nil)
			if _, err := img.Stat(dataPath(hog.Ino)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the hog's data file after the power cut: %v", err)
			}
			if ck := must[*store.Checkpoint](t)(store.ReadCheckpoint(img, faultDir)); ck.Model.Inodes[hog.Ino] == nil {
				t.Fatal("the checkpoint no longer holds the hog: the case is not made")
			}
			if rep, err := recovery.InspectStore(img, faultDir); err != nil || !rep.Sound() {
				t.Fatalf("check after a power cut once the hog's data file went: %v, missing data %v", err, rep.MissingData)
			}
			img.SetCapacity(0)
			o := w.o
			o.Store = img
			if fs, err := Open(faultDir, quietOpts(o)); err != nil {
				t.Fatalf("mount after a power cut once the hog's data file went: %v", err)
			} else {
				if _, err := fs.Lookup(meta.RootIno, "hog"); !errors.Is(err, syscall.ENOENT) {
					t.Fatalf("the hog after the power cut: %v", err)
				}
				check(t, fs.Close())
			}
			sp := must[store.Space](t)(w.cfs.Statfs(faultDir))
			if sp.Avail() < hog.Size {
				t.Fatalf("after removing the %d-byte hog, %d bytes are free", hog.Size, sp.Avail())
			}
			after := must[Attr](t)(w.fs.Create(meta.RootIno, "after", meta.ModeReg|0o644, 0, 0, 0, ""))
			if _, err := w.fs.Write(after.Ino, bytes.Repeat([]byte("a"), 64<<10), 0); err != nil {
				t.Fatalf("a write once the space came back: %v", err)
			}
			check(t, w.fs.Fsync(after.Ino, false))
			check(t, w.fs.Fsync(meta.RootIno, false))
			w.acked["after"] = &ackedFile{content: bytes.Repeat([]byte("a"), 64<<10), minLen: 64 << 10}

			// Degraded: a checkpoint met the full disk. A file unlinked
			// while open is freed at its last close, with no fsync: its
			// data file goes, and the journal is back to normal.
			hog2 := w.fillDisk("hog2")
			w.fs.runCheckpoint()
			if st := w.fs.State(); !strings.HasPrefix(st, "degraded: ") {
				t.Fatalf("after a checkpoint on a full disk: state %q", st)
			}
			check(t, w.fs.Open(hog2.Ino))
			check(t, w.fs.Unlink(meta.RootIno, "hog2"))
			delete(w.acked, "hog2")
			if !w.exists(dataPath(hog2.Ino)) {
				t.Fatal("the data file of a file still open went at its unlink")
			}
			check(t, w.fs.Release(hog2.Ino))
			eventually(t, "the data file of hog2 is gone after its last close", func() bool { return !w.exists(dataPath(hog2.Ino)) })
			eventually(t, "the journal is back to ok", func() bool { return w.fs.State() == "ok" })

			// Full again, and unmounted: no room for the checkpoint,
			// yet the unmount succeeds.
			hog3 := w.fillDisk("hog3")
			if err := w.fs.Close(); err != nil {
				t.Fatalf("unmounting with the disk full: %v", err)
			}
			rep, err := recovery.InspectStore(w.cfs, faultDir)
			if err != nil || !rep.Sound() || !rep.Clean {
				t.Fatalf("the log after an unmount on a full disk: %v; sound %v, ends with the unmount record %v", err, rep != nil && rep.Sound(), rep != nil && rep.Clean)
			}

			// Mounted again on the full disk: it goes on from the last
			// checkpoint, which needs that checkpoint's log geometry...
			o = w.o
			o.Store, o.LogBufs = w.ff, 3
			if fs, err := Open(faultDir, quietOpts(o)); err == nil || !strings.Contains(err.Error(), "--logbufs 2 --logbsize 32k") {
				if err == nil {
					fs.Abandon()
				}
				t.Fatalf("mounting the full store with another log geometry: %v; want a refusal naming the writer's", err)
			}
			// ... and a delete gives the space back.
			if err := w.mount(); err != nil {
				t.Fatalf("mounting a store whose disk is full (its log has room): %v", err)
			}
			if st := w.fs.State(); !strings.HasPrefix(st, "degraded: ") {
				t.Fatalf("mounted on a full disk: state %q, want degraded", st)
			}
			w.verifyAcked("mounted on the full disk")
			check(t, w.fs.Unlink(meta.RootIno, "hog3"))
			delete(w.acked, "hog3")
			eventually(t, "hog3's data file is gone", func() bool { return !w.exists(dataPath(hog3.Ino)) })
			eventually(t, "the journal is back to ok", func() bool { return w.fs.State() == "ok" })
			check(t, w.fs.Close())
			w.remount(jm.String())
		})
	}
}

// verifyAcked checks the mounted store holds what is acknowledged.
func (w *faultWorld) verifyAcked(where string) {
	t := w.t
	t.Helper()
	for path, want := range w.acked {
		if want.dir {
			continue
		}
		got, err := w.read(path)
		if err != nil || !want.ok(got) {
			t.Fatalf("%s: acknowledged %s: %d bytes, %v; want %d", where, path, len(got), err, len(want.content))
		}
	}
}

// TestLogFilledStoreMounts: a store whose log filled while the disk was
// full (the journal stopped) mounts read-only at once, replayed in memory;
// read-write, it is refused with a message naming the file and the bytes
// it needs and how many to free; once that many are free it mounts, with
// everything acknowledged.
func TestLogFilledStoreMounts(t *testing.T) {
	for _, jm := range []JournalMode{JournalMeta, JournalData} {
		t.Run(jm.String(), func(t *testing.T) {
			w := newFaultWorld(t, Options{Journal: jm, CheckpointInterval: time.Hour, LogForceInterval: time.Hour, LogBufs: 2})
			check(t, w.mkfs())
			check(t, w.mount())
			w.setup()
			w.fillDisk("hog")
			d := must[Attr](t)(w.fs.Create(meta.RootIno, "still", meta.ModeDir|0o755, 0, 0, 0, ""))
			w.acked["still"] = &ackedFile{dir: true}
			w.cfs.SetHeadroom(0)
			value := bytes.Repeat([]byte("x"), 3000)
			for i := 0; w.fs.x.Failure() == nil; i++ {
				if i == 100000 {
					t.Fatal("the log never filled")
				}
				if err := w.fs.SetXattr(d.Ino, fmt.Sprintf("user.%d", i%20), value, 0); err != nil && err != syscall.EIO {
					t.Fatalf("setxattr with the log filling: %v", err)
				}
			}
			if err := w.fs.Close(); err == nil {
				t.Fatal("unmounting a journal that stopped succeeded")
			}

			// Read-only: there is no room to finish recovery, so the log
			// is replayed in memory only.
			o := w.o
			o.Store, o.ReadOnly = w.ff, true
			var said []string
			var mu sync.Mutex
			o.Logf = func(f string, a ...any) { mu.Lock(); said = append(said, fmt.Sprintf(f, a...)); mu.Unlock() }
			fs, err := Open(faultDir, o)
			if err != nil {
				t.Fatalf("read-only mount of a store whose log filled: %v", err)
			}
			w.fs = fs
			w.verifyAcked("read-only")
			if fs.MountMode() != "ro,norecovery" {
				t.Errorf("read-only mount on a full disk: mode %s", fs.MountMode())
			}
			check(t, fs.Close())
			if !strings.Contains(strings.Join(said, "\n"), "in memory only") {
				t.Errorf("the read-only mount did not say it replayed in memory only: %q", said)
			}

			// Read-write: refused, saying what to free.
			err = w.mount()
			if err == nil {
				t.Fatal("a read-write mount of a full store whose log is full succeeded")
			}
			m := regexp.MustCompile(`free at least (\d+) bytes`).FindStringSubmatch(err.Error())
			if m == nil || !strings.Contains(err.Error(), filepath.Join(faultDir, store.CheckpointName+".tmp")) || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("the refusal does not name the file and the bytes to free: %v", err)
			}
			need, _ := strconv.ParseInt(m[1], 10, 64)
			if need <= 0 {
				t.Fatalf("the refusal asks to free %d bytes: %v", need, err)
			}
			// Freeing exactly that much in the filesystem is enough.
			w.cfs.SetHeadroom(need)
			if err := w.mount(); err != nil {
				t.Fatalf("mounting after freeing the %d bytes the refusal named: %v", need, err)
			}
			if st := w.fs.State(); st != "ok" {
				t.Fatalf("state %q", st)
			}
			w.verifyAcked("mounted once there was room")
			check(t, w.fs.Close())
			w.cfs.SetCapacity(0)
			w.remount(jm.String())
		})
	}
}

// TestFreedSpaceCrashAnywhere takes a crash image at every change the
// store sees while files are deleted on a full disk (the checkpoint
// failing, a free made durable and its data file deleted, the checkpoint
// then working, a delete whose free is not yet durable across a
// checkpoint, an unmount with no room for its checkpoint), and mounts each:
// the store is sound, every acknowledged file is whole, and a deleted
// file is either gone or whole: its data file never goes before its free
// is durable.
func TestFreedSpaceCrashAnywhere(t *testing.T) {
	for _, jm := range []JournalMode{JournalMeta, JournalData} {
		t.Run(jm.String(), func(t *testing.T) {
			w := newFaultWorld(t, Options{Journal: jm, CheckpointInterval: time.Hour, LogForceInterval: time.Hour, LogBufs: 2})
			check(t, w.mkfs())
			check(t, w.mount())
			w.setup()
			hog := w.fillDisk("hog")
			wholeOrGone := map[string][]byte{"big": w.acked["big"].content, "hog": w.acked["hog"].content}

			var mu sync.Mutex
			var images []*testfs.CrashFS
			var during []string
			var wants []map[string][]byte // what must be whole or gone, as of each image
			now := "start"
			r := rand.New(rand.NewPCG(uint64(jm), 7))
			w.cfs.OnChange = func(c *testfs.CrashFS, op, name string) {
				mu.Lock()
				defer mu.Unlock()
				images = append(images, c.CrashLocked(r))
				during = append(during, fmt.Sprintf("%s, at %s %s", now, op, name))
				wants = append(wants, maps.Clone(wholeOrGone))
			}
			step := func(s string) { mu.Lock(); now = s; mu.Unlock() }

			step("a checkpoint on the full disk")
			w.fs.runCheckpoint()
			big := must[Attr](t)(w.lookup("big"))
			step("big unlinked while open")
			check(t, w.fs.Open(big.Ino))
			check(t, w.fs.Unlink(meta.RootIno, "big"))
			delete(w.acked, "big")
			step("big's last close")
			check(t, w.fs.Release(big.Ino))
			eventually(t, "big's data file is gone", func() bool { return !w.exists(dataPath(big.Ino)) })
			eventually(t, "the journal is back to ok", func() bool { return w.fs.State() == "ok" })
			step("hog unlinked, then a checkpoint before its free is durable")
			check(t, w.fs.Unlink(meta.RootIno, "hog"))
			delete(w.acked, "hog")
			w.fs.runCheckpoint()
			if !w.exists(dataPath(hog.Ino)) {
				t.Fatal("a checkpoint deleted the data file of a free not yet durable")
			}
			step("the free of hog made durable")
			check(t, w.fs.Fsync(meta.RootIno, false))
			eventually(t, "hog's data file is gone", func() bool { return !w.exists(dataPath(hog.Ino)) })
			step("unmounting on a full disk")
			hog2 := w.fillDisk("hog2")
			mu.Lock()
			wholeOrGone["hog2"] = w.acked["hog2"].content // from here on
			mu.Unlock()
			check(t, w.fs.Close())

			// Mounted again on the full disk, the journal goes on from the
			// last checkpoint: a change, a removal giving the space back,
			// then a crash.
			step("mounted again on the full disk")
			check(t, w.mount())
			check(t, w.fs.SetXattr(meta.RootIno, "user.late", []byte("v"), 0))
			check(t, w.fs.Fsync(meta.RootIno, false))
			step("hog2 removed on the mount that went on from the last checkpoint")
			check(t, w.fs.Unlink(meta.RootIno, "hog2"))
			eventually(t, "hog2's data file is gone", func() bool { return !w.exists(dataPath(hog2.Ino)) })
			eventually(t, "the journal is back to ok", func() bool { return w.fs.State() == "ok" })
			w.fs.Abandon()
			w.cfs.OnChange = nil

			mu.Lock()
			defer mu.Unlock()
			if len(images) < 50 {
				t.Fatalf("only %d crash images taken", len(images))
			}
			verify := func(fs *FS, where string, content map[string][]byte) {
				w.fs = fs
				for _, path := range []string{"d/acked", "other"} {
					if _, err := w.lookup(path); err != nil {
						t.Fatalf("%s: acknowledged %s: %v", where, path, err)
					}
				}
				if got, err := w.read("d/acked"); err != nil || !w.acked["d/acked"].ok(got) {
					t.Fatalf("%s: d/acked reads %q, %v", where, got, err)
				}
				for name, content := range content {
					got, err := w.read(name)
					if errors.Is(err, syscall.ENOENT) {
						continue
					}
					if err != nil || !bytes.Equal(got, content) {
						t.Fatalf("%s: %s, deleted but not durably, reads %d bytes (%v), want its %d: its data file went before its free was durable",
							where, name, len(got), err, len(content))
					}
				}
			}
			went := 0
			for i, img := range images {
				where := fmt.Sprintf("%s journal, crash image %d (%s)", jm, i, during[i])
				if rep, err := recovery.InspectStore(img, faultDir); err != nil || !rep.Sound() {
					t.Fatalf("%s: check: %v", where, err)
				}
				o := w.o
				o.Store = img
				// A third of the images are mounted on the disk as full as
				// it was: the mount may go on from the image's checkpoint,
				// or find no room at all to recover (then it has some).
				full := i%3 == 0
				if !full {
					img.SetCapacity(0)
				}
				fs, err := Open(faultDir, quietOpts(o))
				if err != nil && full && isNoSpace(err) {
					img.SetCapacity(0)
					full = false
					fs, err = Open(faultDir, quietOpts(o))
				}
				if err != nil {
					t.Fatalf("%s: mount: %v", where, err)
				}
				verify(fs, where, wants[i])
				if !full || !strings.HasPrefix(fs.State(), "degraded: ") {
					check(t, fs.Close())
					continue
				}
				// It went on from an older checkpoint: a change, durable,
				// then a crash; recovery walks the records of both
				// writers.
				went++
				check(t, fs.SetXattr(meta.RootIno, "user.after", []byte("v"), 0))
				check(t, fs.Fsync(meta.RootIno, false))
				fs.Abandon()
				img2 := img.Crash(r)
				img2.SetCapacity(0)
				o.Store = img2
				fs, err = Open(faultDir, quietOpts(o))
				if err != nil {
					t.Fatalf("%s, then mounted on the full disk, a change, and a crash: mount: %v", where, err)
				}
				verify(fs, where+", then mounted on the full disk, a change, and a crash", wants[i])
				if _, err := fs.GetXattr(meta.RootIno, "user.after"); err != nil {
					t.Fatalf("%s, then mounted on the full disk, a change, and a crash: the change acknowledged there: %v", where, err)
				}
				check(t, fs.Close())
			}
			t.Logf("%s journal: %d of the crash images mounted on the full disk went on from an older checkpoint", jm, went)
			t.Logf("%s journal: %d crash images recovered", jm, len(images))
		})
	}
}

// TestGoOnFromCheckpointAfterIncompleteTransaction: the log ends with the
// first half of a transaction (its START and part of its region in one
// record, the record with the rest and the COMMIT never written), so the
// mount drops it as incomplete. On a full disk that mount writes no fresh
// checkpoint and goes on from the old one, so the next recovery walks that
// half again: the transactions the mount commits must not reuse its id,
// or that recovery finds a transaction started twice and refuses the store.
func TestGoOnFromCheckpointAfterIncompleteTransaction(t *testing.T) {
	w := newFaultWorld(t, Options{Journal: JournalMeta, CheckpointInterval: time.Hour, LogForceInterval: time.Hour, LogBufs: 2})
	check(t, w.mkfs())
	check(t, w.mount())
	w.setup()
	w.fillDisk("hog")
	// A region larger than an iclog (32 KiB) is split over two records.
	check(t, w.fs.SetXattr(meta.RootIno, "user.split", bytes.Repeat([]byte("s"), 40<<10), 0))
	check(t, w.fs.Fsync(meta.RootIno, false))
	w.fs.Abandon()

	img := w.cfs.Crash(nil)
	logPath := filepath.Join(faultDir, store.LogName)
	ck := must[*store.Checkpoint](t)(store.ReadCheckpoint(img, faultDir))
	lg, _ := testfs.ReadFile(t, img, logPath)
	sb := must[*store.Superblock](t)(store.ReadSuperblock(img, faultDir))
	scan := xlog.ScanLog(lg, recovery.WindowOf(ck, sb.Coverage))
	last := scan.Records[len(scan.Records)-1]
	check(t, img.Edit(logPath, func(b []byte) { clear(b[last.Offset : last.Offset+int64(last.Header.RecordBytes())]) }))

	o := w.o
	o.Store = img
	fs, err := Open(faultDir, quietOpts(o))
	if err != nil {
		t.Fatalf("mounting on the full disk: %v", err)
	}
	if r := fs.Recovery(); r.Dropped != 1 || !strings.HasPrefix(fs.State(), "degraded: ") {
		t.Fatalf("the mount dropped %d incomplete transactions and is %q; the test wants 1, and a mount that went on from the old checkpoint", r.Dropped, fs.State())
	}
	check(t, fs.SetXattr(meta.RootIno, "user.after", []byte("v"), 0))
	check(t, fs.Fsync(meta.RootIno, false))
	fs.Abandon()

	img2 := img.Crash(nil)
	img2.SetCapacity(0)
	o.Store = img2
	if fs, err = Open(faultDir, quietOpts(o)); err != nil {
		t.Fatalf("recovering the log of the mount that went on from the old checkpoint: %v", err)
	}
	defer fs.Close()
	if _, err := fs.GetXattr(meta.RootIno, "user.after"); err != nil {
		t.Fatalf("the change acknowledged after the mount: %v", err)
	}
	if _, err := fs.GetXattr(meta.RootIno, "user.split"); err == nil {
		t.Fatal("the incomplete transaction was replayed")
	}
}

// TestDataJournalReplayNeedsNoRoomForFreedFiles: in data-journal mode the
// log holds a file's written bytes until a checkpoint; the file removed,
// its free durable and its data file deleted (no checkpoint since, the disk
// full), a power cut. Replay must not write those bytes again into a data
// file the replayed log frees anyway: on the full disk that needs room the
// store lacks, and the mount (which can go on from the old checkpoint)
// would be refused.
func TestDataJournalReplayNeedsNoRoomForFreedFiles(t *testing.T) {
	w := newFaultWorld(t, Options{Journal: JournalData, CheckpointInterval: time.Hour, LogForceInterval: time.Hour, LogBufs: 2})
	check(t, w.mkfs())
	check(t, w.mount())
	w.setup()
	gone := must[Attr](t)(w.fs.Create(meta.RootIno, "gone", meta.ModeReg|0o644, 0, 0, 0, ""))
	must[int](t)(w.fs.Write(gone.Ino, bytes.Repeat([]byte("g"), 200<<10), 0))
	check(t, w.fs.Fsync(gone.Ino, false))
	w.fillDisk("hog")
	check(t, w.fs.Unlink(meta.RootIno, "gone"))
	check(t, w.fs.Fsync(meta.RootIno, false))
	eventually(t, "gone's data file is gone", func() bool { return !w.exists(dataPath(gone.Ino)) })
	check(t, w.cfs.SyncDir(filepath.Join(faultDir, store.DataDirName)))
	w.cfs.SetHeadroom(0)
	w.fs.Abandon()

	img := w.cfs.Crash(nil)
	o := w.o
	o.Store = img
	fs, err := Open(faultDir, quietOpts(o))
	if err != nil {
		t.Fatalf("mounting on the full disk after the power cut: %v", err)
	}
	w.fs = fs
	w.verifyAcked("mounted on the full disk")
	if _, err := fs.Lookup(meta.RootIno, "gone"); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("the removed file after the power cut: %v", err)
	}
	if _, err := img.Stat(dataPath(gone.Ino)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the removed file's data file after recovery: %v", err)
	}
	check(t, fs.Close())
}
