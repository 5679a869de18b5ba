package recovery_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/journal"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/store"
)

// checkpointedThen mounts a fresh store, runs before, unmounts (the
// checkpoint covers it), mounts again, runs after, makes everything
// durable and returns the store as a crash of that mount leaves it (the
// data files as the page cache holds them).
func checkpointedThen(t *testing.T, o journal.Options, c *crash, before, after func(fs *journal.FS)) string {
	t.Helper()
	dir := newStore(t)
	fs := mountStore(t, dir, o)
	before(fs)
	check(t, fs.Close())
	fs = mountStore(t, dir, o)
	after(fs)
	check(t, fs.Sync())
	crashed := copyStore(t, dir)
	check(t, fs.Close())
	return crashed
}

// makeFile creates name in the root with n bytes of pattern i.
func makeFile(t *testing.T, fs *journal.FS, c *crash, name string, n int) {
	t.Helper()
	a, err := fs.Create(meta.RootIno, name, meta.ModeReg|0o644, 0, 0, 0, "")
	check(t, err)
	c.ino[name] = a.Ino
	if n > 0 {
		_, err = fs.Write(a.Ino, bytes.Repeat([]byte{name[0]}, n), 0)
		check(t, err)
	}
}

func dataPath(dir string, ino meta.Ino) string {
	return filepath.Join(dir, store.DataDirName, fmt.Sprint(ino))
}

// missingError returns err's MissingDataError, failing the test if it has
// none.
func missingError(t *testing.T, what string, err error) *recovery.MissingDataError {
	t.Helper()
	var md *recovery.MissingDataError
	if !errors.As(err, &md) {
		t.Fatalf("%s: %v; want a MissingDataError", what, err)
	}
	return md
}

// TestMissingDataRefused: a data file deleted, or cut below the size the
// checkpoint made durable, is refused by Recover, in either journal mode,
// before replay writes anything: the error names each inode, its path,
// its data file, the bytes it needs and has, and --allow-missing-data;
// Inspect lists the same, and the store is not sound. Writes since the
// checkpoint (a file grown, a file created) need nothing.
func TestMissingDataRefused(t *testing.T) {
	for _, jm := range []journal.JournalMode{journal.JournalMeta, journal.JournalData} {
		t.Run(jm.String(), func(t *testing.T) {
			c := &crash{ino: map[string]meta.Ino{}}
			dir := checkpointedThen(t, journal.Options{Journal: jm}, c, func(fs *journal.FS) {
				d, err := fs.Create(meta.RootIno, "d", meta.ModeDir|0o755, 0, 0, 0, "")
				check(t, err)
				a, err := fs.Create(d.Ino, "f", meta.ModeReg|0o644, 0, 0, 0, "")
				check(t, err)
				c.ino["f"] = a.Ino
				_, err = fs.Write(a.Ino, bytes.Repeat([]byte{'f'}, 4096), 0)
				check(t, err)
				makeFile(t, fs, c, "g", 2000)
			}, func(fs *journal.FS) {
				_, err := fs.Write(c.ino["g"], bytes.Repeat([]byte{'G'}, 1000), 2000)
				check(t, err)
				makeFile(t, fs, c, "h", 3000)
			})
			check(t, os.Remove(dataPath(dir, c.ino["f"])))
			check(t, os.Truncate(dataPath(dir, c.ino["g"]), 1000))
			check(t, os.Remove(dataPath(dir, c.ino["h"]))) // written since the checkpoint: may be lost
			before := snapshot(t, dir)

			want := []recovery.MissingData{
				{Ino: c.ino["f"], Path: "/d/f", DataFile: dataPath(dir, c.ino["f"]), Want: 4096},
				{Ino: c.ino["g"], Path: "/g", DataFile: dataPath(dir, c.ino["g"]), Want: 2000, Found: 1000, Exists: true},
			}
			_, _, err := recoverStore(t, dir, jm == journal.JournalData, nil)
			md := missingError(t, "recovering a store whose data files lost durable bytes", err)
			if !slices.Equal(md.Files, want) {
				t.Errorf("missing data %+v, want %+v", md.Files, want)
			}
			for _, s := range []string{
				fmt.Sprintf("inode %d (/d/f): data file %s is missing; it must hold at least 4096 bytes", c.ino["f"], dataPath(dir, c.ino["f"])),
				fmt.Sprintf("inode %d (/g): data file %s holds 1000 bytes; it must hold at least 2000", c.ino["g"], dataPath(dir, c.ino["g"])),
				"--allow-missing-data", "EIO",
			} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("the refusal %q does not say %q", err, s)
				}
			}
			sameFiles(t, "a refused recovery", dir, before)

			rep, err := recovery.Inspect(dir)
			check(t, err)
			if !slices.Equal(rep.MissingData, want) || rep.Sound() {
				t.Errorf("Inspect: missing data %+v, sound %v; want %+v, not sound", rep.MissingData, rep.Sound(), want)
			}
			if _, err := journal.Open(dir, journal.Options{Journal: jm, Logf: func(string, ...any) {}}); !errors.As(err, &md) {
				t.Errorf("mount: %v, want a MissingDataError", err)
			}
			sameFiles(t, "a refused mount", dir, before)
		})
	}
}

// TestMissingDataAfterCheckpointAllowed: a crash may lose the data file,
// or the end of it, of a file written since the checkpoint (the writes were
// never acknowledged): recovery takes it, extending the data file to the
// logged size (making it, if gone; in data-journal mode replay writes the
// logged bytes), so that the fresh checkpoint's sizes are the data files'
// at least, and the next mount takes the store too.
func TestMissingDataAfterCheckpointAllowed(t *testing.T) {
	for _, jm := range []journal.JournalMode{journal.JournalMeta, journal.JournalData} {
		t.Run(jm.String(), func(t *testing.T) {
			c := &crash{ino: map[string]meta.Ino{}}
			dir := checkpointedThen(t, journal.Options{Journal: jm}, c, func(fs *journal.FS) {
				makeFile(t, fs, c, "old", 0)
			}, func(fs *journal.FS) {
				makeFile(t, fs, c, "f", 5000)
				makeFile(t, fs, c, "g", 3000)
				_, err := fs.Write(c.ino["old"], []byte("grown since"), 0)
				check(t, err)
			})
			check(t, os.Remove(dataPath(dir, c.ino["f"])))
			check(t, os.Truncate(dataPath(dir, c.ino["g"]), 100))
			check(t, os.Remove(dataPath(dir, c.ino["old"])))
			rep, err := recovery.Inspect(dir)
			check(t, err)
			if !rep.Sound() || len(rep.MissingData) != 0 {
				t.Fatalf("Inspect of a store a crash may leave: sound %v, missing data %+v", rep.Sound(), rep.MissingData)
			}
			r, _, err := recoverStore(t, dir, jm == journal.JournalData, nil)
			check(t, err)
			if len(r.Missing) != 0 {
				t.Errorf("recovery reports missing data %+v", r.Missing)
			}
			for name, size := range map[string]int64{"f": 5000, "g": 3000, "old": 11} {
				if n := int64(len(dataFile(t, dir, c.ino[name]))); n != size {
					t.Errorf("data file of %s after recovery: %d bytes, want the logged %d", name, n, size)
				}
			}
			// A mount writes the fresh checkpoint: its sizes must be
			// the data files' at least.
			check(t, mountStore(t, dir, journal.Options{Journal: jm}).Close())
			if rep, err := recovery.Inspect(dir); err != nil || !rep.Sound() {
				t.Fatalf("after a mount of the recovered store: %v, missing data %+v", err, rep.MissingData)
			}
		})
	}
}

// TestMissingDataShrunkThenGrown: what a data file must hold is the least
// size its file had from the checkpoint on. A file of 10000 bytes at the
// checkpoint, cut to 100 (logged and forced before the data file was cut)
// and grown again, may have a data file of 100 bytes after a crash (the
// growth was never synced); less is refused.
func TestMissingDataShrunkThenGrown(t *testing.T) {
	for _, tc := range []struct {
		size  int64 // of the data file at the crash; -1: none
		ok    bool
		found int64
	}{{5000, true, 0}, {100, true, 0}, {99, false, 99}, {0, false, 0}, {-1, false, 0}} {
		t.Run(fmt.Sprint(tc.size), func(t *testing.T) {
			c := &crash{ino: map[string]meta.Ino{}}
			dir := checkpointedThen(t, journal.Options{}, c, func(fs *journal.FS) {
				makeFile(t, fs, c, "f", 10000)
			}, func(fs *journal.FS) {
				_, err := fs.SetAttr(c.ino["f"], journal.SetAttrIn{Mask: meta.SetSize, Size: 100})
				check(t, err)
				_, err = fs.Write(c.ino["f"], []byte("after"), 4995)
				check(t, err)
			})
			p := dataPath(dir, c.ino["f"])
			if tc.size < 0 {
				check(t, os.Remove(p))
			} else {
				check(t, os.Truncate(p, tc.size))
			}
			r, _, err := recoverStore(t, dir, false, nil)
			if tc.ok {
				check(t, err)
				if n := len(dataFile(t, dir, c.ino["f"])); n != 5000 {
					t.Errorf("data file after recovery: %d bytes, want 5000", n)
				}
				_ = r
				return
			}
			md := missingError(t, "a data file shorter than the shrink left it", err)
			want := []recovery.MissingData{{Ino: c.ino["f"], Path: "/f", DataFile: p, Want: 100, Found: tc.found, Exists: tc.size >= 0}}
			if !slices.Equal(md.Files, want) {
				t.Errorf("missing data %+v, want %+v", md.Files, want)
			}
		})
	}
}

// TestMissingDataSizeFollows: a size-follows mark lets a data file be
// longer than the logged size (recovery takes its size), never shorter
// than the checkpoint made durable.
func TestMissingDataSizeFollows(t *testing.T) {
	for _, tc := range []struct {
		size int64
		ok   bool
	}{{6000, true}, {4000, true}, {3000, false}} {
		t.Run(fmt.Sprint(tc.size), func(t *testing.T) {
			dir := newStore(t)
			fs := mountStore(t, dir, journal.Options{})
			a, err := fs.Create(meta.RootIno, "p", meta.ModeReg|0o644, 0, 0, 0, "")
			check(t, err)
			_, err = fs.Write(a.Ino, bytes.Repeat([]byte{'p'}, 4000), 0)
			check(t, err)
			_, err = fs.OpenPassthrough(a.Ino, true, false) // marks it, durably
			check(t, err)
			check(t, fs.ReleasePassthrough(a.Ino, true, true))
			check(t, fs.Close())
			ck, err := store.ReadCheckpoint(store.OSFS(), dir)
			check(t, err)
			if in := ck.Model.Inodes[a.Ino]; in.Size != 4000 || !in.SizeFollows {
				t.Fatalf("the checkpoint has inode %d at %d bytes, marked %v; want 4000, marked", a.Ino, in.Size, in.SizeFollows)
			}
			check(t, os.Truncate(dataPath(dir, a.Ino), tc.size))
			r, _, err := recoverStore(t, dir, false, nil)
			if !tc.ok {
				md := missingError(t, "a marked file's data file cut below its checkpointed size", err)
				if len(md.Files) != 1 || md.Files[0].Want != 4000 || md.Files[0].Found != tc.size {
					t.Errorf("missing data %+v, want inode %d: 4000 bytes needed, %d found", md.Files, a.Ino, tc.size)
				}
				return
			}
			check(t, err)
			if got := r.Followed; tc.size > 4000 && (len(got) != 1 || got[0].Size != tc.size) {
				t.Errorf("followed %+v, want inode %d grown to %d", got, a.Ino, tc.size)
			}
		})
	}
}

// TestAllowMissingData: a mount with AllowMissingData takes a store whose
// data file lost durable bytes, and logs the file. It reads and writes
// nothing of it: reads, writes, fallocates and truncates to any size but 0
// fail with EIO, and its data file is neither made nor extended, through
// the mount's checkpoints and unmount, so the store is still unsound after.
// A truncate to 0 makes the file whole. NoRecovery mounts are refused alike,
// and take the option too.
func TestAllowMissingData(t *testing.T) {
	dir := newStore(t)
	fs := mountStore(t, dir, journal.Options{})
	c := &crash{ino: map[string]meta.Ino{}}
	makeFile(t, fs, c, "f", 4096)
	makeFile(t, fs, c, "g", 100)
	check(t, fs.Close())
	f := c.ino["f"]
	check(t, os.Remove(dataPath(dir, f)))

	for _, o := range []journal.Options{{}, {ReadOnly: true, NoRecovery: true}} {
		o.Logf = func(string, ...any) {}
		if _, err := journal.Open(dir, o); err == nil {
			t.Fatalf("mount %+v of a store whose data file is gone: no error", o)
		} else {
			missingError(t, "mount", err)
		}
	}
	ro := mountStore(t, dir, journal.Options{ReadOnly: true, NoRecovery: true, AllowMissingData: true})
	if _, err := ro.Read(f, make([]byte, 10), 0); err != syscall.EIO {
		t.Errorf("read on a norecovery mount: %v, want EIO", err)
	}
	check(t, ro.Close())

	var logged []string
	fs = mountStore(t, dir, journal.Options{AllowMissingData: true, Logf: func(format string, a ...any) { logged = append(logged, fmt.Sprintf(format, a...)) }})
	if m := fs.Recovery().Missing; len(m) != 1 || m[0].Ino != f {
		t.Errorf("recovery reports missing data %+v, want inode %d", m, f)
	}
	if !slices.ContainsFunc(logged, func(l string) bool { return strings.Contains(l, fmt.Sprintf("inode %d (/f)", f)) }) {
		t.Errorf("the mount logged %q, nothing naming inode %d (/f)", logged, f)
	}
	buf := make([]byte, 10)
	if n, err := fs.Read(f, buf, 0); err != syscall.EIO {
		t.Errorf("read: %d bytes, %v; want EIO", n, err)
	}
	if n, err := fs.Read(c.ino["g"], make([]byte, 200), 0); err != nil || n != 100 {
		t.Errorf("read of the whole file: %d bytes, %v", n, err)
	}
	if _, err := fs.Write(f, []byte("x"), 0); err != syscall.EIO {
		t.Errorf("write: %v, want EIO", err)
	}
	if err := fs.Fallocate(f, 0, 0, 10); err != syscall.EIO {
		t.Errorf("fallocate: %v, want EIO", err)
	}
	if _, err := fs.SetAttr(f, journal.SetAttrIn{Mask: meta.SetSize, Size: 10}); err != syscall.EIO {
		t.Errorf("truncate to 10: %v, want EIO", err)
	}
	if pt, err := fs.OpenPassthrough(f, false, false); err != nil || pt != nil {
		t.Errorf("a passthrough open: %v, %v; want one through the daemon (no data file)", pt, err)
	} else {
		check(t, fs.ReleasePassthrough(f, false, false))
	}
	check(t, fs.Sync())
	check(t, fs.Close())
	if _, err := os.Stat(dataPath(dir, f)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the mount made the data file %s: %v", dataPath(dir, f), err)
	}
	rep, err := recovery.Inspect(dir)
	check(t, err)
	if rep.Sound() || len(rep.MissingData) != 1 {
		t.Errorf("after the mount: sound %v, missing data %+v; want inode %d still missing", rep.Sound(), rep.MissingData, f)
	}

	// A truncate to 0 makes it whole.
	fs = mountStore(t, dir, journal.Options{AllowMissingData: true})
	_, err = fs.SetAttr(f, journal.SetAttrIn{Mask: meta.SetSize, Size: 0})
	check(t, err)
	if n, err := fs.Read(f, buf, 0); err != nil || n != 0 {
		t.Errorf("read after the truncate to 0: %d bytes, %v", n, err)
	}
	_, err = fs.Write(f, []byte("whole"), 0)
	check(t, err)
	check(t, fs.Close())
	if rep, err := recovery.Inspect(dir); err != nil || !rep.Sound() {
		t.Errorf("after the truncate to 0: %v, missing data %+v", err, rep.MissingData)
	}
	fs = mountStore(t, dir, journal.Options{})
	if n, err := fs.Read(f, buf, 0); err != nil || string(buf[:n]) != "whole" {
		t.Errorf("read: %q, %v", buf[:n], err)
	}
	check(t, fs.Close())
}

// TestAllowMissingDataReplaysNothing: replay writes no logged bytes into a
// data file that lost durable bytes (data-journal writes, immediate writes):
// a write past the lost part would otherwise make a data file as long as
// the file, and the next mount would take zeros for the lost bytes.
func TestAllowMissingDataReplaysNothing(t *testing.T) {
	for _, o := range []journal.Options{{Journal: journal.JournalData}, {ImmediateWrite: 4096}} {
		t.Run(o.Journal.String(), func(t *testing.T) {
			c := &crash{ino: map[string]meta.Ino{}}
			dir := checkpointedThen(t, o, c, func(fs *journal.FS) {
				makeFile(t, fs, c, "f", 4096)
			}, func(fs *journal.FS) {
				_, err := fs.Write(c.ino["f"], []byte("logged bytes past the lost ones"), 4090)
				check(t, err)
			})
			f := c.ino["f"]
			check(t, os.Remove(dataPath(dir, f)))
			if _, _, err := recoverStore(t, dir, o.Journal == journal.JournalData, nil); err == nil {
				t.Fatal("recovered a store whose data file lost durable bytes")
			}
			o.AllowMissingData = true
			fs := mountStore(t, dir, o)
			if _, err := fs.Read(f, make([]byte, 10), 4090); err != syscall.EIO {
				t.Errorf("read of the logged bytes: %v, want EIO", err)
			}
			check(t, fs.Close())
			if _, err := os.Stat(dataPath(dir, f)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("replay made the data file %s: %v", dataPath(dir, f), err)
			}
			rep, err := recovery.Inspect(dir)
			check(t, err)
			if len(rep.MissingData) != 1 || rep.MissingData[0].Ino != f || rep.Sound() {
				t.Errorf("after the mount: missing data %+v; want inode %d still", rep.MissingData, f)
			}
		})
	}
}
