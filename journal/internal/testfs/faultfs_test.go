package testfs

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
)

// faultSetup is a CrashFS holding /d/f ("hello", durable, name and all)
// and the FaultFS over it, with /d/f open through it.
func faultSetup(t *testing.T) (*CrashFS, *FaultFS, store.StoreFile) {
	t.Helper()
	c := NewCrashFS()
	check(t, c.Mkdir("/d", 0o755))
	check(t, c.SyncDir("/"))
	writeDurable(t, c, "/d/f", []byte("hello"))
	check(t, c.SyncDir("/d"))
	ff := NewFaultFS(c)
	f, err := ff.OpenFile("/d/f", os.O_RDWR, 0)
	check(t, err)
	return c, ff, f
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// writeDurable creates name holding b and syncs the file (not its name).
func writeDurable(t *testing.T, st store.StoreFS, name string, b []byte) {
	t.Helper()
	f, err := st.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	check(t, err)
	if _, err := f.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	check(t, f.Sync())
	check(t, f.Close())
}

func exists(st store.StoreFS, name string) bool {
	_, err := st.Stat(name)
	return err == nil
}

// TestFaultFSFailsTheChosenCall fails each kind of call in turn and checks
// that the error is the errno wrapped as the os package wraps it, naming the
// op and path, that the fault function was asked with the call's op and
// names, that the call was counted, and that it changed nothing.
func TestFaultFSFailsTheChosenCall(t *testing.T) {
	cases := []struct {
		op, name, new string
		call          func(ff *FaultFS, f store.StoreFile) error
		unchanged     func(t *testing.T, c *CrashFS) // the call did nothing
	}{
		{op: "open", name: "/d/f", call: func(ff *FaultFS, _ store.StoreFile) error {
			g, err := ff.OpenFile("/d/f", os.O_RDONLY, 0)
			if err != nil && g != nil {
				return errors.New("a failed open returned a file")
			}
			return err
		}},
		{op: "create", name: "/d/new", call: func(ff *FaultFS, _ store.StoreFile) error {
			_, err := ff.OpenFile("/d/new", os.O_RDWR|os.O_CREATE, 0o644)
			return err
		}, unchanged: func(t *testing.T, c *CrashFS) {
			if exists(c, "/d/new") {
				t.Error("a failed create made the file")
			}
		}},
		{op: "truncate", name: "/d/f", call: func(ff *FaultFS, _ store.StoreFile) error {
			_, err := ff.OpenFile("/d/f", os.O_RDWR|os.O_TRUNC, 0)
			return err
		}, unchanged: unchangedF},
		{op: "read", name: "/d/f", call: func(_ *FaultFS, f store.StoreFile) error {
			p := []byte("XXXXX")
			n, err := f.ReadAt(p, 0)
			if err != nil && (n != 0 || string(p) != "XXXXX") {
				return errors.New("a failed read read")
			}
			return err
		}},
		{op: "write", name: "/d/f", call: func(_ *FaultFS, f store.StoreFile) error {
			_, err := f.WriteAt([]byte("HELLO, WORLD"), 0)
			return err
		}, unchanged: unchangedF},
		{op: "truncate", name: "/d/f", call: func(_ *FaultFS, f store.StoreFile) error {
			return f.Truncate(1)
		}, unchanged: unchangedF},
		{op: "fallocate", name: "/d/f", call: func(_ *FaultFS, f store.StoreFile) error {
			return f.Allocate(meta.FallocZeroRange, 0, 100)
		}, unchanged: unchangedF},
		{op: "mkdir", name: "/d/e", call: func(ff *FaultFS, _ store.StoreFile) error {
			return ff.Mkdir("/d/e", 0o755)
		}, unchanged: func(t *testing.T, c *CrashFS) {
			if exists(c, "/d/e") {
				t.Error("a failed mkdir made the directory")
			}
		}},
		{op: "remove", name: "/d/f", call: func(ff *FaultFS, _ store.StoreFile) error {
			return ff.Remove("/d/f")
		}, unchanged: unchangedF},
		{op: "rename", name: "/d/f", new: "/d/g", call: func(ff *FaultFS, _ store.StoreFile) error {
			return ff.Rename("/d/f", "/d/g")
		}, unchanged: func(t *testing.T, c *CrashFS) {
			unchangedF(t, c)
			if exists(c, "/d/g") {
				t.Error("a failed rename made the new name")
			}
		}},
		{op: "readdir", name: "/d", call: func(ff *FaultFS, _ store.StoreFile) error {
			names, err := ff.ReadDir("/d")
			if err != nil && names != nil {
				return errors.New("a failed readdir returned names")
			}
			return err
		}},
		{op: "stat", name: "/d/f", call: func(ff *FaultFS, _ store.StoreFile) error {
			fi, err := ff.Stat("/d/f")
			if err != nil && fi != nil {
				return errors.New("a failed stat returned a FileInfo")
			}
			return err
		}},
		{op: "syncdir", name: "/d", call: func(ff *FaultFS, _ store.StoreFile) error {
			return ff.SyncDir("/d")
		}, unchanged: func(t *testing.T, c *CrashFS) {
			if c.Pending() != 1 || exists(c.Crash(nil), "/d/h") {
				t.Error("a failed directory sync made a name durable")
			}
		}},
		{op: "statfs", name: "/d", call: func(ff *FaultFS, _ store.StoreFile) error {
			sp, err := ff.Statfs("/d")
			if err != nil && sp != (store.Space{}) {
				return errors.New("a failed statfs returned a Space")
			}
			return err
		}},
		{op: "lock", name: "/d/f", call: func(ff *FaultFS, _ store.StoreFile) error {
			l, err := ff.Lock("/d/f", true)
			if err != nil && l != nil {
				return errors.New("a failed lock returned a lock")
			}
			return err
		}, unchanged: func(t *testing.T, c *CrashFS) {
			l, err := c.Lock("/d/f", true)
			if err != nil {
				t.Errorf("a failed lock holds the file: %v", err)
				return
			}
			l.Close()
		}},
	}
	for _, tc := range cases {
		t.Run(tc.op+"_"+tc.name, func(t *testing.T) {
			c, ff, f := faultSetup(t)
			if tc.op == "syncdir" {
				// An unsynced name that the failed sync must not make durable.
				g, err := c.OpenFile("/d/h", os.O_RDWR|os.O_CREATE, 0o644)
				check(t, err)
				g.Close()
			}
			before := ff.Calls(tc.op)
			var asked []FaultCall
			ff.SetFault(func(fc FaultCall) syscall.Errno {
				asked = append(asked, fc)
				if fc.Op == tc.op {
					return syscall.ENOSPC
				}
				return 0
			})
			err := tc.call(ff, f)
			ff.SetFault(nil)
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("error %v, want ENOSPC", err)
			}
			var pe *os.PathError
			var le *os.LinkError
			switch {
			case tc.op == "rename":
				if !errors.As(err, &le) || le.Op != "rename" || le.Old != tc.name || le.New != tc.new || le.Err != syscall.ENOSPC {
					t.Fatalf("error %#v, want an *os.LinkError of rename %s to %s", err, tc.name, tc.new)
				}
			case !errors.As(err, &pe) || pe.Op != tc.op || pe.Path != tc.name || pe.Err != syscall.ENOSPC:
				t.Fatalf("error %#v, want an *os.PathError of %s %s", err, tc.op, tc.name)
			}
			want := FaultCall{Op: tc.op, Name: tc.name, New: tc.new}
			if !slices.Contains(asked, want) {
				t.Errorf("the fault function was asked %+v, never %+v", asked, want)
			}
			if got := ff.Calls(tc.op); got != before+1 {
				t.Errorf("Calls(%q) = %d after one failed call, want %d", tc.op, got, before+1)
			}
			if tc.unchanged != nil {
				tc.unchanged(t, c)
			}
			// With the fault gone, the same call works.
			if err := tc.call(ff, f); err != nil {
				t.Fatalf("the call after SetFault(nil): %v", err)
			}
			if got := ff.Calls(tc.op); got < before+2 {
				t.Errorf("Calls(%q) = %d after a failed and a good call, want at least %d", tc.op, got, before+2)
			}
		})
	}
}

// unchangedF checks that /d/f still holds "hello", in the live filesystem
// and at a crash.
func unchangedF(t *testing.T, c *CrashFS) {
	t.Helper()
	if b, ok := ReadFile(t, c, "/d/f"); !ok || string(b) != "hello" {
		t.Errorf("/d/f now holds %q (exists %v), want \"hello\"", b, ok)
	}
	if c.Pending() != 0 {
		t.Errorf("the failed call left %d changes pending", c.Pending())
	}
}

// A fault function picks the call it fails: here only the second write,
// and only of one file; every other call goes through.
func TestFaultFSFailsOnlyThatCall(t *testing.T) {
	c, ff, f := faultSetup(t)
	writes := 0
	ff.SetFault(func(fc FaultCall) syscall.Errno {
		if fc.Op == "write" && fc.Name == "/d/f" {
			if writes++; writes == 2 {
				return syscall.EIO
			}
		}
		return 0
	})
	g, err := ff.OpenFile("/d/g", os.O_RDWR|os.O_CREATE, 0o644)
	check(t, err)
	for i, want := range []error{nil, syscall.EIO, nil} {
		_, err := f.WriteAt([]byte{'A' + byte(i)}, int64(i))
		if !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Fatalf("write %d of /d/f: %v, want %v", i, err, want)
		}
		if _, err := g.WriteAt([]byte{'a' + byte(i)}, int64(i)); err != nil {
			t.Fatalf("write %d of /d/g: %v", i, err)
		}
	}
	if b, _ := ReadFile(t, c, "/d/f"); string(b) != "AeClo" {
		t.Errorf("/d/f holds %q, want the failed write missing: \"AeClo\"", b)
	}
	if b, _ := ReadFile(t, c, "/d/g"); string(b) != "abc" {
		t.Errorf("/d/g holds %q, want \"abc\"", b)
	}
	if n := ff.Calls("write"); n != 6 {
		t.Errorf("Calls(write) = %d, want 6 (the failed one included)", n)
	}
	if n := ff.Calls("create"); n != 1 {
		t.Errorf("Calls(create) = %d, want 1", n)
	}
	if n := ff.Calls("open"); n != 1 {
		t.Errorf("Calls(open) = %d, want 1 (the setup's)", n)
	}
}

// Opening an existing file with O_CREATE is an open, not a create; with
// O_TRUNC it is also a truncate, which can fail on its own.
func TestFaultFSOpenOps(t *testing.T) {
	c, ff, _ := faultSetup(t)
	g, err := ff.OpenFile("/d/f", os.O_RDWR|os.O_CREATE, 0o644)
	check(t, err)
	g.Close()
	if ff.Calls("open") != 2 || ff.Calls("create") != 0 {
		t.Errorf("O_CREATE of an existing file: %d opens, %d creates; want 2, 0", ff.Calls("open"), ff.Calls("create"))
	}
	ff.SetFault(func(fc FaultCall) syscall.Errno {
		if fc.Op == "truncate" {
			return syscall.EIO
		}
		return 0
	})
	if _, err := ff.OpenFile("/d/f", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644); !errors.Is(err, syscall.EIO) {
		t.Fatalf("O_TRUNC open with truncate failing: %v", err)
	}
	if b, _ := ReadFile(t, c, "/d/f"); string(b) != "hello" {
		t.Fatalf("a failed O_TRUNC open truncated: %q", b)
	}
	// A new file's O_TRUNC is no truncate.
	g, err = ff.OpenFile("/d/n", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	check(t, err)
	g.Close()
	if ff.Calls("truncate") != 1 || ff.Calls("create") != 1 {
		t.Errorf("truncates %d, creates %d; want 1, 1", ff.Calls("truncate"), ff.Calls("create"))
	}
}

// A failed fsync, fdatasync or write-back loses what it was to write: the
// next good fsync does not make it durable, though every reader still sees
// it (Linux marks the pages clean after a write-back error).
func TestFaultFSFailedSyncLosesTheWrite(t *testing.T) {
	for _, op := range []string{"fsync", "fdatasync", "writeback"} {
		t.Run(op, func(t *testing.T) {
			c, ff, f := faultSetup(t)
			if _, err := f.WriteAt([]byte("HELLO"), 0); err != nil {
				t.Fatal(err)
			}
			ff.SetFault(func(fc FaultCall) syscall.Errno {
				if fc.Op == op {
					return syscall.EIO
				}
				return 0
			})
			var err error
			switch op {
			case "fsync":
				err = f.Sync()
			case "fdatasync":
				err = f.Datasync()
			case "writeback":
				err = f.Writeback()
			}
			if !errors.Is(err, syscall.EIO) {
				t.Fatalf("%s: %v, want EIO", op, err)
			}
			if ff.Calls(op) != 1 {
				t.Errorf("Calls(%q) = %d, want 1", op, ff.Calls(op))
			}
			ff.SetFault(nil)
			check(t, f.Sync())
			if b, _ := ReadFile(t, c, "/d/f"); string(b) != "HELLO" {
				t.Errorf("the page cache lost the write: %q", b)
			}
			if b, _ := ReadFile(t, c.Crash(nil), "/d/f"); string(b) != "hello" {
				t.Errorf("after a failed %s and a good fsync the disk holds %q, want the write lost: \"hello\"", op, b)
			}
			// A write after the failure is made durable as usual.
			if _, err := f.WriteAt([]byte("J"), 0); err != nil {
				t.Fatal(err)
			}
			check(t, f.Sync())
			if b, _ := ReadFile(t, c.Crash(nil), "/d/f"); string(b) != "Jello" {
				t.Errorf("a write after the failure, fsynced: disk holds %q, want \"Jello\"", b)
			}
		})
	}
}

// Calls not failed reach the filesystem underneath unchanged.
func TestFaultFSPassesThrough(t *testing.T) {
	c, ff, f := faultSetup(t)
	ff.SetFault(func(FaultCall) syscall.Errno { return 0 })
	if _, err := f.WriteAt([]byte(", world"), 5); err != nil {
		t.Fatal(err)
	}
	check(t, f.Datasync())
	check(t, ff.Rename("/d/f", "/d/g"))
	check(t, ff.SyncDir("/d"))
	if b, _ := ReadFile(t, c.Crash(nil), "/d/g"); string(b) != "hello, world" {
		t.Fatalf("through FaultFS, durably: %q", b)
	}
	names, err := ff.ReadDir("/d")
	check(t, err)
	if !slices.Equal(names, []string{"g"}) {
		t.Fatalf("ReadDir = %q", names)
	}
	p := make([]byte, 12)
	if n, err := f.ReadAt(p, 0); n != 12 || (err != nil && err != io.EOF) || !bytes.Equal(p, []byte("hello, world")) {
		t.Fatalf("ReadAt = %d, %v, %q", n, err, p)
	}
	if _, ok := f.(interface{ Overwritable() (int64, error) }); !ok {
		t.Fatal("a FaultFS file hides Overwritable")
	}
}
