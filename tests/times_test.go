package tests

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Metadata oracles that do not come from the model: what each operation
// does to the times, link counts, sizes and modes of the inodes it touches
// is written here from POSIX's rules (and Linux's, where POSIX leaves a
// choice), and the same steps run on a directory of the host filesystem,
// whose kernel shows that the rules are read as Linux reads them.
//
// POSIX: an operation "marks for update" the times it changes, and the
// filesystem stamps them with the current time. A new entry (creat, mkdir,
// link, symlink, rename's target) marks its directory's mtime and ctime, a
// removed one (unlink, rmdir, rename's source) its directory's; creat sets
// all three times of the new inode; write and a truncate that changes the
// size mark the file's mtime and ctime; chmod, chown, link, unlink and
// setxattr mark only ctime (the inode changed, its data did not); utimensat
// sets atime and mtime to what it is given and marks ctime. Linux also
// marks the ctime of an inode that rename moves (POSIX allows it). Nothing
// here reads a file, so no atime moves except a new inode's.

// effect is what a step must do to one inode: which times move ("a", "m",
// "c"; the others must stay exactly as they were), how its link count
// changes, and, when set, the size and permission bits it must end with.
type effect struct {
	moved string
	nlink int
	size  int64 // -1: unchanged
	perm  int   // -1: unchanged; else mode & 07777
	fresh bool  // a new inode: all three times from the step, equal
}

func eff(moved string, nlink int) effect {
	return effect{moved: moved, nlink: nlink, size: -1, perm: -1}
}

// timesStep is one operation with the inodes it must (and must not) touch.
type timesStep struct {
	name  string
	setup func(t *testing.T, p func(string) string)
	op    func(p func(string) string) error
	root  bool // needs root (chown)
	// watch names each inode by its path before and after the step
	// ("before>after" when the step renames it, "" before for a new one).
	watch map[string]effect
}

func timesSteps() []timesStep {
	mkdir := func(t *testing.T, path string) { t.Helper(); mustOK(t, os.Mkdir(path, 0o755)) }
	file := func(t *testing.T, path string, n int) {
		t.Helper()
		mustOK(t, os.WriteFile(path, []byte(strings.Repeat("x", n)), 0o644))
	}
	write := func(path string, flag int, b []byte, off int64) error {
		f, err := os.OpenFile(path, flag, 0)
		if err != nil {
			return err
		}
		if _, err := f.WriteAt(b, off); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	newFile := effect{moved: "amc", nlink: 1, size: 0, perm: 0o644, fresh: true}
	return []timesStep{
		{name: "create", setup: func(t *testing.T, p func(string) string) { mkdir(t, p("d")) },
			op: func(p func(string) string) error {
				f, err := os.OpenFile(p("d/f"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
				if err == nil {
					err = f.Close()
				}
				return err
			},
			watch: map[string]effect{"d": eff("mc", 0), ">d/f": newFile}},
		{name: "mkdir", setup: func(t *testing.T, p func(string) string) { mkdir(t, p("d")) },
			op:    func(p func(string) string) error { return os.Mkdir(p("d/s"), 0o777) },
			watch: map[string]effect{"d": eff("mc", +1), ">d/s": {moved: "amc", nlink: 2, size: -1, perm: 0o755, fresh: true}}},
		{name: "symlink", setup: func(t *testing.T, p func(string) string) { mkdir(t, p("d")) },
			op:    func(p func(string) string) error { return os.Symlink("target", p("d/l")) },
			watch: map[string]effect{"d": eff("mc", 0), ">d/l": {moved: "amc", nlink: 1, size: 6, perm: -1, fresh: true}}},
		{name: "unlink", setup: func(t *testing.T, p func(string) string) {
			mkdir(t, p("d"))
			file(t, p("d/f"), 10)
			mustOK(t, os.Link(p("d/f"), p("d/k")))
		},
			op:    func(p func(string) string) error { return unix.Unlink(p("d/f")) },
			watch: map[string]effect{"d": eff("mc", 0), "d/k": eff("c", -1)}},
		{name: "rmdir", setup: func(t *testing.T, p func(string) string) { mkdir(t, p("d")); mkdir(t, p("d/s")) },
			op:    func(p func(string) string) error { return unix.Rmdir(p("d/s")) },
			watch: map[string]effect{"d": eff("mc", -1)}},
		{name: "link", setup: func(t *testing.T, p func(string) string) {
			mkdir(t, p("d1"))
			mkdir(t, p("d2"))
			file(t, p("d1/f"), 10)
		},
			op:    func(p func(string) string) error { return os.Link(p("d1/f"), p("d2/l")) },
			watch: map[string]effect{"d1": eff("", 0), "d2": eff("mc", 0), "d1/f": eff("c", +1)}},
		{name: "rename within a directory", setup: func(t *testing.T, p func(string) string) {
			mkdir(t, p("d"))
			file(t, p("d/a"), 10)
		},
			op:    func(p func(string) string) error { return os.Rename(p("d/a"), p("d/b")) },
			watch: map[string]effect{"d": eff("mc", 0), "d/a>d/b": eff("c", 0)}},
		{name: "rename across directories", setup: func(t *testing.T, p func(string) string) {
			mkdir(t, p("d1"))
			mkdir(t, p("d2"))
			file(t, p("d1/a"), 10)
		},
			op:    func(p func(string) string) error { return os.Rename(p("d1/a"), p("d2/a")) },
			watch: map[string]effect{"d1": eff("mc", 0), "d2": eff("mc", 0), "d1/a>d2/a": eff("c", 0)}},
		{name: "rename a directory across directories", setup: func(t *testing.T, p func(string) string) {
			mkdir(t, p("d1"))
			mkdir(t, p("d2"))
			mkdir(t, p("d1/s"))
		},
			op:    func(p func(string) string) error { return os.Rename(p("d1/s"), p("d2/s")) },
			watch: map[string]effect{"d1": eff("mc", -1), "d2": eff("mc", +1), "d1/s>d2/s": eff("c", 0)}},
		{name: "rename over a file", setup: func(t *testing.T, p func(string) string) {
			mkdir(t, p("d"))
			file(t, p("d/a"), 10)
			file(t, p("d/b"), 20)
			mustOK(t, os.Link(p("d/b"), p("d/k")))
		},
			op:    func(p func(string) string) error { return os.Rename(p("d/a"), p("d/b")) },
			watch: map[string]effect{"d": eff("mc", 0), "d/a>d/b": eff("c", 0), "d/k": eff("c", -1)}},
		{name: "append", setup: func(t *testing.T, p func(string) string) { mkdir(t, p("d")); file(t, p("d/f"), 10) },
			op: func(p func(string) string) error { return write(p("d/f"), os.O_WRONLY, []byte("hello"), 10) },
			watch: map[string]effect{"d": eff("", 0),
				"d/f": {moved: "mc", size: 15, perm: -1}}},
		{name: "overwrite", setup: func(t *testing.T, p func(string) string) { mkdir(t, p("d")); file(t, p("d/f"), 10) },
			op:    func(p func(string) string) error { return write(p("d/f"), os.O_WRONLY, []byte("hello"), 0) },
			watch: map[string]effect{"d": eff("", 0), "d/f": eff("mc", 0)}},
		{name: "truncate to shrink", setup: func(t *testing.T, p func(string) string) { mkdir(t, p("d")); file(t, p("d/f"), 10) },
			op:    func(p func(string) string) error { return os.Truncate(p("d/f"), 3) },
			watch: map[string]effect{"d": eff("", 0), "d/f": {moved: "mc", size: 3, perm: -1}}},
		{name: "truncate to grow", setup: func(t *testing.T, p func(string) string) { mkdir(t, p("d")); file(t, p("d/f"), 10) },
			op:    func(p func(string) string) error { return os.Truncate(p("d/f"), 100) },
			watch: map[string]effect{"d": eff("", 0), "d/f": {moved: "mc", size: 100, perm: -1}}},
		{name: "open O_TRUNC", setup: func(t *testing.T, p func(string) string) { mkdir(t, p("d")); file(t, p("d/f"), 10) },
			op: func(p func(string) string) error {
				f, err := os.OpenFile(p("d/f"), os.O_WRONLY|os.O_TRUNC, 0)
				if err == nil {
					err = f.Close()
				}
				return err
			},
			watch: map[string]effect{"d": eff("", 0), "d/f": {moved: "mc", size: 0, perm: -1}}},
		{name: "chmod", setup: func(t *testing.T, p func(string) string) { mkdir(t, p("d")); file(t, p("d/f"), 10) },
			op:    func(p func(string) string) error { return os.Chmod(p("d/f"), 0o600) },
			watch: map[string]effect{"d": eff("", 0), "d/f": {moved: "c", size: -1, perm: 0o600}}},
		{name: "chown", root: true, setup: func(t *testing.T, p func(string) string) { mkdir(t, p("d")); file(t, p("d/f"), 10) },
			op:    func(p func(string) string) error { return os.Chown(p("d/f"), 1234, 5678) },
			watch: map[string]effect{"d": eff("", 0), "d/f": eff("c", 0)}},
		{name: "setxattr", setup: func(t *testing.T, p func(string) string) { mkdir(t, p("d")); file(t, p("d/f"), 10) },
			op:    func(p func(string) string) error { return unix.Setxattr(p("d/f"), "user.k", []byte("v"), 0) },
			watch: map[string]effect{"d": eff("", 0), "d/f": eff("c", 0)}},
		{name: "removexattr", setup: func(t *testing.T, p func(string) string) {
			mkdir(t, p("d"))
			file(t, p("d/f"), 10)
			mustOK(t, unix.Setxattr(p("d/f"), "user.k", []byte("v"), 0))
		},
			op:    func(p func(string) string) error { return unix.Removexattr(p("d/f"), "user.k") },
			watch: map[string]effect{"d": eff("", 0), "d/f": eff("c", 0)}},
		{name: "setxattr on a directory", setup: func(t *testing.T, p func(string) string) { mkdir(t, p("d")); mkdir(t, p("d/s")) },
			op:    func(p func(string) string) error { return unix.Setxattr(p("d/s"), "user.k", []byte("v"), 0) },
			watch: map[string]effect{"d": eff("", 0), "d/s": eff("c", 0)}},
	}
}

// stamp is what stat says about an inode.
type stamp struct {
	atime, mtime, ctime time.Time
	nlink               int
	size                int64
	perm                int
	ino                 uint64
	dir                 bool // directory sizes differ between filesystems: not compared
}

func statStamp(path string) (stamp, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return stamp{}, err
	}
	ts := func(t unix.Timespec) time.Time { return time.Unix(t.Sec, t.Nsec) }
	return stamp{atime: ts(st.Atim), mtime: ts(st.Mtim), ctime: ts(st.Ctim), nlink: int(st.Nlink), size: st.Size, perm: int(st.Mode & 0o7777),
		ino: st.Ino, dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}, nil
}

func sizeWords(s stamp) string {
	if s.dir {
		return "a directory"
	}
	return fmt.Sprintf("size %d", s.size)
}

// clockSlack is how far a filesystem's time stamp may lie before the
// moment the step started: both Linux and xlogfs stamp with a coarse
// clock (a jiffy; xlogfs's writes in 4 ms steps).
const clockSlack = 20 * time.Millisecond

// runTimesSteps runs every step under root, each in a directory of its
// own, and returns what it observed, one line per step and inode, in
// words that compare across filesystems ("d: moved mc, nlink +1"); it
// reports every departure from the step's expected effects.
func runTimesSteps(t *testing.T, root string) map[string]string {
	observed := map[string]string{}
	for i, s := range timesSteps() {
		if s.root && os.Geteuid() != 0 {
			t.Logf("%s: not root, so not run", s.name)
			continue
		}
		dir := filepath.Join(root, fmt.Sprintf("step%02d", i))
		mustOK(t, os.Mkdir(dir, 0o755))
		p := func(rel string) string { return filepath.Join(dir, rel) }
		s.setup(t, p)
		before := map[string]stamp{}
		for w := range s.watch {
			if from, _, _ := strings.Cut(w, ">"); from != "" {
				st, err := statStamp(p(from))
				mustOK(t, err)
				before[w] = st
			}
		}
		// The clock must move past the setup's stamps, coarse as it is.
		time.Sleep(3 * clockSlack)
		start := time.Now()
		if err := s.op(p); err != nil {
			t.Errorf("%s: %v", s.name, err)
			continue
		}
		end := time.Now()
		for w, want := range s.watch {
			from, to, renamed := strings.Cut(w, ">")
			if !renamed {
				to = from
			}
			after, err := statStamp(p(to))
			if err != nil {
				t.Errorf("%s: %s after the step: %v", s.name, to, err)
				continue
			}
			var got []string
			check := func(what string, b, a time.Time, moves bool) {
				inStep := !a.Before(start.Add(-clockSlack)) && !a.After(end.Add(clockSlack))
				switch {
				case moves && (!a.After(b) || !inStep):
					t.Errorf("%s: %s's %s is %v, want it moved to the time of the step (%v..%v)", s.name, to, what, a.Format(time.StampMicro), start.Format(time.StampMicro), end.Format(time.StampMicro))
				case !moves && !a.Equal(b):
					t.Errorf("%s: %s's %s moved from %v to %v; the step must leave it alone", s.name, to, what, b.Format(time.StampMicro), a.Format(time.StampMicro))
				}
				if a.After(b) {
					got = append(got, what)
				}
			}
			if want.fresh {
				for what, a := range map[string]time.Time{"atime": after.atime, "mtime": after.mtime, "ctime": after.ctime} {
					check(what, start.Add(-time.Hour), a, true)
				}
				if !after.atime.Equal(after.mtime) || !after.mtime.Equal(after.ctime) {
					t.Errorf("%s: new %s: atime %v, mtime %v, ctime %v; want all three the same", s.name, to, after.atime, after.mtime, after.ctime)
				}
				if after.nlink != want.nlink {
					t.Errorf("%s: new %s has %d links, want %d", s.name, to, after.nlink, want.nlink)
				}
				observed[s.name+": "+to] = fmt.Sprintf("new, nlink %d, %s, perm %#o", after.nlink, sizeWords(after), after.perm)
			} else {
				b := before[w]
				if after.ino != b.ino {
					t.Errorf("%s: %s is inode %d, want %d (the same inode)", s.name, to, after.ino, b.ino)
				}
				check("atime", b.atime, after.atime, strings.Contains(want.moved, "a"))
				check("mtime", b.mtime, after.mtime, strings.Contains(want.moved, "m"))
				check("ctime", b.ctime, after.ctime, strings.Contains(want.moved, "c"))
				if d := after.nlink - b.nlink; d != want.nlink {
					t.Errorf("%s: %s's link count went from %d to %d, want a change of %+d", s.name, to, b.nlink, after.nlink, want.nlink)
				}
				if want.size < 0 && !after.dir && after.size != b.size {
					t.Errorf("%s: %s's size went from %d to %d; the step must leave it alone", s.name, to, b.size, after.size)
				}
				if want.perm < 0 && after.perm != b.perm {
					t.Errorf("%s: %s's mode went from %#o to %#o; the step must leave it alone", s.name, to, b.perm, after.perm)
				}
				observed[s.name+": "+to] = fmt.Sprintf("moved %q, nlink %+d, %s, perm %#o", strings.Join(got, ","), after.nlink-b.nlink, sizeWords(after), after.perm)
			}
			if want.size >= 0 && after.size != want.size {
				t.Errorf("%s: %s has size %d, want %d", s.name, to, after.size, want.size)
			}
			if want.perm >= 0 && after.perm != want.perm {
				t.Errorf("%s: %s has mode %#o, want %#o", s.name, to, after.perm, want.perm)
			}
		}
	}
	return observed
}

// TestMetadataOracles runs the steps on the host filesystem (the
// reference) and on xlogfs mounts: with attributes never cached (stat then
// shows what the journal holds, not what the kernel guessed) and with the
// default caching (what users see). Each must meet the written rules, and
// xlogfs must observe what the host does, step by step and inode by inode.
// A remount must show the same stamps again.
func TestMetadataOracles(t *testing.T) {
	t.Parallel()
	native := runTimesSteps(t, t.TempDir())
	for _, flags := range [][]string{{"--attr-timeout", "0s"}, {}} {
		t.Run("xlogfs"+strings.Join(flags, "="), func(t *testing.T) {
			store, mnt := newStore(t)
			m := mountDaemon(t, store, mnt, flags...)
			got := runTimesSteps(t, mnt)
			for k, want := range native {
				if got[k] != want {
					t.Errorf("%s: xlogfs %s; the host's filesystem %s", k, got[k], want)
				}
			}
			before := snapshotTree(t, mnt)
			m.unmount(t)
			m = m.remount(t)
			compareSnapshots(t, "after unmount and remount", before, snapshotTree(t, mnt))
			m.unmount(t)
			checkStore(t, store, true)
		})
	}
}

// TestTimesClampedToStoreRange sets times the store cannot hold (before
// 1677-09-21 and after 2262-04-11: nanoseconds since the epoch in an
// int64, journal.MinTime..MaxTime) and reads back the nearest it can, as
// ext4 clamps to its range, after a remount too; a time that wrapped
// around (2300 read back as 1715) is the bug. Times inside the range keep
// every nanosecond.
func TestTimesClampedToStoreRange(t *testing.T) {
	requireFUSE(t)
	t.Parallel()
	minT, maxT := time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)
	cases := []struct {
		name     string
		set      time.Time
		readBack time.Time
	}{
		{"1600", time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), minT},
		{"2300", time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), maxT},
		{"2^40s", time.Unix(1<<40, 0), maxT},
		{"-2^40s", time.Unix(-1<<40, 0), minT},
		{"first", minT, minT},
		{"last", maxT, maxT},
		{"1700", time.Date(1700, 6, 1, 1, 2, 3, 456789012, time.UTC), time.Date(1700, 6, 1, 1, 2, 3, 456789012, time.UTC)},
		{"2262-04-11", time.Date(2262, 4, 11, 0, 0, 0, 1, time.UTC), time.Date(2262, 4, 11, 0, 0, 0, 1, time.UTC)},
	}
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt)
	for _, c := range cases {
		p := filepath.Join(mnt, c.name)
		mustOK(t, os.WriteFile(p, nil, 0o644))
		at := unix.Timespec{Sec: c.set.Unix(), Nsec: int64(c.set.Nanosecond())}
		mustOK(t, unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{at, at}, 0))
	}
	check := func(when string) {
		t.Helper()
		for _, c := range cases {
			st, err := statStamp(filepath.Join(mnt, c.name))
			mustOK(t, err)
			if !st.atime.Equal(c.readBack) || !st.mtime.Equal(c.readBack) {
				t.Errorf("%s: set %v, read back atime %v mtime %v; want %v",
					when, c.set.UTC(), st.atime.UTC(), st.mtime.UTC(), c.readBack.UTC())
			}
		}
	}
	check("mounted")
	m.unmount(t)
	m = m.remount(t)
	check("after remount")
	m.unmount(t)
	checkStore(t, store, true)
}
