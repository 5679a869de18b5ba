package journal

import (
	"strings"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/meta"
)

// TestTimesByPOSIXRules holds each operation's effect on times and link
// counts to POSIX's rules, written here, not taken from the model (which
// the filesystem and replay share): a new or removed entry marks its
// directory's mtime and ctime; write and a size change mark the file's
// mtime and ctime; link, unlink, chmod, chown and setxattr mark ctime only;
// rename marks both directories and (as Linux does) the moved inode's
// ctime. Anything not marked must stay exactly as it was. tests/ runs the
// same rules through the kernel and against the host's filesystem.
func TestTimesByPOSIXRules(t *testing.T) {
	fs := mount(t, mkfs(t, 4<<20, 32<<10), Options{})
	defer fs.Close()
	attr := must[Attr](t)
	d1 := attr(fs.Create(meta.RootIno, "d1", meta.ModeDir|0o755, 0, 0, 0, ""))
	d2 := attr(fs.Create(meta.RootIno, "d2", meta.ModeDir|0o755, 0, 0, 0, ""))
	f := attr(fs.Create(d1.Ino, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	g := attr(fs.Create(d1.Ino, "g", meta.ModeReg|0o644, 0, 0, 0, ""))
	check(t, fs.Open(f.Ino))
	defer fs.Release(f.Ino)

	// step runs op and checks, for each inode, which of a, m, c moved
	// and the link count's change.
	step := func(name string, op func() error, want map[meta.Ino]string, nlink map[meta.Ino]int) {
		t.Helper()
		before := map[meta.Ino]Attr{}
		for ino := range want {
			before[ino] = attr(fs.GetAttr(ino))
		}
		time.Sleep(2 * datafile.FileTimeStep) // past the coarse write clock's step
		start := time.Now().UnixNano() - int64(datafile.FileTimeStep)
		if err := op(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		end := time.Now().UnixNano()
		for ino, moves := range want {
			b, a := before[ino], attr(fs.GetAttr(ino))
			for _, x := range []struct {
				what  string
				b, a  int64
				moves bool
			}{{"atime", b.Atime, a.Atime, strings.Contains(moves, "a")},
				{"mtime", b.Mtime, a.Mtime, strings.Contains(moves, "m")},
				{"ctime", b.Ctime, a.Ctime, strings.Contains(moves, "c")}} {
				switch {
				case x.moves && (x.a <= x.b || x.a < start || x.a > end):
					t.Errorf("%s: inode %d's %s is %d, want it moved to the step's time (%d..%d)", name, ino, x.what, x.a, start, end)
				case !x.moves && x.a != x.b:
					t.Errorf("%s: inode %d's %s moved from %d to %d; the step must leave it alone", name, ino, x.what, x.b, x.a)
				}
			}
			if d := int(a.Nlink) - int(b.Nlink); d != nlink[ino] {
				t.Errorf("%s: inode %d's link count changed by %+d, want %+d", name, ino, d, nlink[ino])
			}
		}
	}
	step("create", func() error { _, err := fs.Create(d2.Ino, "h", meta.ModeReg|0o644, 0, 0, 0, ""); return err },
		map[meta.Ino]string{d2.Ino: "mc", d1.Ino: ""}, nil)
	step("mkdir", func() error { _, err := fs.Create(d2.Ino, "s", meta.ModeDir|0o755, 0, 0, 0, ""); return err },
		map[meta.Ino]string{d2.Ino: "mc"}, map[meta.Ino]int{d2.Ino: +1})
	step("write", func() error { _, err := fs.Write(f.Ino, []byte("hello"), 0); return err },
		map[meta.Ino]string{f.Ino: "mc", d1.Ino: ""}, nil)
	step("overwrite", func() error { _, err := fs.Write(f.Ino, []byte("HELLO"), 0); return err },
		map[meta.Ino]string{f.Ino: "mc"}, nil)
	step("truncate", func() error { _, err := fs.SetAttr(f.Ino, SetAttrIn{Mask: meta.SetSize, Size: 2}); return err },
		map[meta.Ino]string{f.Ino: "mc", d1.Ino: ""}, nil)
	step("chmod", func() error { _, err := fs.SetAttr(f.Ino, SetAttrIn{Mask: meta.SetMode, Mode: 0o600}); return err },
		map[meta.Ino]string{f.Ino: "c"}, nil)
	step("chown", func() error {
		_, err := fs.SetAttr(f.Ino, SetAttrIn{Mask: meta.SetUID | meta.SetGID, UID: 5, GID: 6})
		return err
	},
		map[meta.Ino]string{f.Ino: "c"}, nil)
	step("setxattr", func() error { return fs.SetXattr(f.Ino, "user.k", []byte("v"), 0) },
		map[meta.Ino]string{f.Ino: "c", d1.Ino: ""}, nil)
	step("removexattr", func() error { return fs.RemoveXattr(f.Ino, "user.k") },
		map[meta.Ino]string{f.Ino: "c"}, nil)
	step("link", func() error { _, err := fs.Link(f.Ino, d2.Ino, "fl"); return err },
		map[meta.Ino]string{f.Ino: "c", d1.Ino: "", d2.Ino: "mc"}, map[meta.Ino]int{f.Ino: +1})
	step("unlink", func() error { return fs.Unlink(d2.Ino, "fl") },
		map[meta.Ino]string{f.Ino: "c", d1.Ino: "", d2.Ino: "mc"}, map[meta.Ino]int{f.Ino: -1})
	step("rename within a directory", func() error { return fs.Rename(d1.Ino, "f", d1.Ino, "f2", 0) },
		map[meta.Ino]string{f.Ino: "c", d1.Ino: "mc", d2.Ino: ""}, nil)
	step("rename across directories", func() error { return fs.Rename(d1.Ino, "f2", d2.Ino, "f", 0) },
		map[meta.Ino]string{f.Ino: "c", d1.Ino: "mc", d2.Ino: "mc"}, nil)
	step("rename over a file", func() error { return fs.Rename(d1.Ino, "g", d2.Ino, "h", 0) },
		map[meta.Ino]string{g.Ino: "c", d1.Ino: "mc", d2.Ino: "mc"}, nil)
	s := attr(fs.Lookup(d2.Ino, "s"))
	step("rename a directory across directories", func() error { return fs.Rename(d2.Ino, "s", d1.Ino, "s", 0) },
		map[meta.Ino]string{s.Ino: "c", d1.Ino: "mc", d2.Ino: "mc"}, map[meta.Ino]int{d1.Ino: +1, d2.Ino: -1})
	step("rmdir", func() error { return fs.Rmdir(d1.Ino, "s") },
		map[meta.Ino]string{d1.Ino: "mc", d2.Ino: ""}, map[meta.Ino]int{d1.Ino: -1})
}
