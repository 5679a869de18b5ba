package meta

import (
	"bytes"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// tryOp runs op through Validate and then Apply and holds the model to
// what they promise: Validate changes nothing, Apply returns what Validate
// said, and an op refused leaves the model exactly as it was.
func tryOp(t *testing.T, m *Model, op Op) error {
	t.Helper()
	before := m.Clone()
	verr := m.Validate(&op)
	if !reflect.DeepEqual(m, before) {
		t.Fatalf("Validate(%s) changed the model", op.String())
	}
	aerr := m.Apply(&op)
	if aerr != verr {
		t.Fatalf("%s: Validate said %v, Apply %v", op.String(), verr, aerr)
	}
	if aerr != nil && !reflect.DeepEqual(m, before) {
		t.Fatalf("%s refused (%v) but changed the model", op.String(), aerr)
	}
	return aerr
}

// do applies op, which must succeed.
func do(t *testing.T, m *Model, op Op) {
	t.Helper()
	if err := tryOp(t, m, op); err != nil {
		t.Fatalf("%s: %v", op.String(), err)
	}
}

// refuse applies op, which must fail with want and change nothing.
func refuse(t *testing.T, m *Model, op Op, want syscall.Errno) {
	t.Helper()
	err := tryOp(t, m, op)
	if !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %v", op.String(), err, want)
	}
}

// consistent fails the test if the model, orphans dropped, is not a
// consistent tree.
func consistent(t *testing.T, m *Model) {
	t.Helper()
	c := m.Clone()
	c.DropOrphans()
	if p := c.Check(); len(p) > 0 {
		t.Fatalf("model inconsistent: %q", p)
	}
}

// fixture makes a filesystem:
//
//	/d (dir, ino 2)  /d/f (file, 3)  /e (empty dir, 4)  /g (file, 5)  /s (symlink, 6)
func fixture(t *testing.T) *Model {
	t.Helper()
	m := NewModel(100)
	do(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "d", Ino: 2, Mode: ModeDir | 0o755, Ctime: 101})
	do(t, m, Op{Type: OpCreate, Parent: 2, Name: "f", Ino: 3, Mode: ModeReg | 0o644, UID: 7, GID: 8, Ctime: 102})
	do(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "e", Ino: 4, Mode: ModeDir | 0o700, Ctime: 103})
	do(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "g", Ino: 5, Mode: ModeReg | 0o600, Ctime: 104})
	do(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "s", Ino: 6, Mode: ModeLink | 0o777, Target: "d/f", Ctime: 105})
	consistent(t, m)
	return m
}

func nlink(t *testing.T, m *Model, ino Ino) uint32 {
	t.Helper()
	in := m.Inodes[ino]
	if in == nil {
		t.Fatalf("inode %d missing", ino)
	}
	return in.Nlink
}

func wantNlink(t *testing.T, m *Model, want map[Ino]uint32) {
	t.Helper()
	for ino, n := range want {
		if got := nlink(t, m, ino); got != n {
			t.Errorf("inode %d: nlink %d, want %d", ino, got, n)
		}
	}
}

func entry(m *Model, dir Ino, name string) (Ino, bool) {
	ino, ok := m.Inodes[dir].Entries[name]
	return ino, ok
}

func TestNewModel(t *testing.T) {
	m := NewModel(42)
	if len(m.Inodes) != 1 || m.NextIno != RootIno+1 {
		t.Fatalf("new model: %d inodes, next %d", len(m.Inodes), m.NextIno)
	}
	r := m.Inodes[RootIno]
	if r.Mode != ModeDir|0o755 || r.Nlink != 2 || r.Parent != RootIno || r.UID != 0 || r.GID != 0 ||
		r.Atime != 42 || r.Mtime != 42 || r.Ctime != 42 || len(r.Entries) != 0 || r.Entries == nil {
		t.Errorf("root: %+v", *r)
	}
	if p := m.Check(); p != nil {
		t.Errorf("Check of a new model: %q", p)
	}
}

func TestCheckName(t *testing.T) {
	for _, c := range []struct {
		name string
		want error
	}{
		{"a", nil},
		{strings.Repeat("x", MaxNameLen), nil},
		{"...", nil},
		{".a", nil},
		{"a b\n\xff", nil}, // any bytes but '/' and NUL
		{strings.Repeat("x", MaxNameLen+1), syscall.ENAMETOOLONG},
		{"", syscall.EINVAL},
		{".", syscall.EINVAL},
		{"..", syscall.EINVAL},
		{"a/b", syscall.EINVAL},
		{"/", syscall.EINVAL},
		{"a\x00b", syscall.EINVAL},
	} {
		if err := CheckName(c.name); err != c.want {
			t.Errorf("CheckName(%q) = %v, want %v", c.name, err, c.want)
		}
	}
}

func TestCreate(t *testing.T) {
	m := fixture(t)
	d, f, s := m.Inodes[2], m.Inodes[3], m.Inodes[6]
	if d.Nlink != 2 || d.Parent != RootIno || !d.IsDir() || d.Entries["f"] != 3 {
		t.Errorf("dir: %+v", *d)
	}
	if f.Nlink != 1 || !f.IsRegular() || f.UID != 7 || f.GID != 8 || f.Mode != ModeReg|0o644 ||
		f.Atime != 102 || f.Mtime != 102 || f.Ctime != 102 || f.Entries != nil {
		t.Errorf("file: %+v", *f)
	}
	if s.Target != "d/f" || s.Size != 3 || s.Mode&ModeType != ModeLink {
		t.Errorf("symlink: %+v", *s)
	}
	// The parent gains a link per subdirectory and takes the op's time.
	wantNlink(t, m, map[Ino]uint32{RootIno: 4})
	if r := m.Inodes[RootIno]; r.Mtime != 105 || r.Ctime != 105 || r.Atime != 100 {
		t.Errorf("root times %d %d %d, want atime 100, mtime and ctime 105", r.Atime, r.Mtime, r.Ctime)
	}
	if d.Mtime != 102 {
		t.Errorf("dir mtime %d, want 102 (its entry f)", d.Mtime)
	}
	if m.NextIno != 7 {
		t.Errorf("NextIno %d, want 7", m.NextIno)
	}

	// Every node type.
	for i, mode := range []uint32{ModeFIFO, ModeChar, ModeBlock, ModeSock} {
		ino := m.NextIno
		do(t, m, Op{Type: OpCreate, Parent: 4, Name: string(rune('a' + i)), Ino: ino, Mode: mode | 0o644, Rdev: 0x0801, Ctime: 200})
		if in := m.Inodes[ino]; in.Rdev != 0x0801 || in.Mode != mode|0o644 || in.Nlink != 1 {
			t.Errorf("node %#o: %+v", mode, *in)
		}
	}

	next := m.NextIno
	refuse(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "g", Ino: next, Mode: ModeReg}, syscall.EEXIST)
	refuse(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "d", Ino: next, Mode: ModeDir}, syscall.EEXIST)
	refuse(t, m, Op{Type: OpCreate, Parent: RootIno, Name: strings.Repeat("n", 256), Ino: next, Mode: ModeReg}, syscall.ENAMETOOLONG)
	refuse(t, m, Op{Type: OpCreate, Parent: RootIno, Name: ".", Ino: next, Mode: ModeDir}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "..", Ino: next, Mode: ModeDir}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "x/y", Ino: next, Mode: ModeReg}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpCreate, Parent: 99, Name: "x", Ino: next, Mode: ModeReg}, syscall.ENOENT)
	refuse(t, m, Op{Type: OpCreate, Parent: 3, Name: "x", Ino: next, Mode: ModeReg}, syscall.ENOTDIR)
	// Inode numbers are allocated in order and never reused.
	refuse(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "x", Ino: next - 1, Mode: ModeReg}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "x", Ino: RootIno, Mode: ModeReg}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "x", Ino: 0, Mode: ModeReg}, syscall.EINVAL)
	// A file type must be given; symlinks and only symlinks have targets.
	refuse(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "x", Ino: next, Mode: 0o644}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "x", Ino: next, Mode: ModeLink | 0o777}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "x", Ino: next, Mode: ModeReg, Target: "t"}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "x", Ino: next, Mode: ModeDir, Target: "t"}, syscall.EINVAL)

	// A gap in the numbers is allowed; the next number follows the op's.
	do(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "gap", Ino: next + 10, Mode: ModeReg})
	if m.NextIno != next+11 {
		t.Errorf("NextIno %d after creating %d, want %d", m.NextIno, next+10, next+11)
	}
	consistent(t, m)
}

func TestCreateTmpfile(t *testing.T) {
	m := fixture(t)
	rootBefore := *m.Inodes[RootIno]
	ino := m.NextIno
	refuse(t, m, Op{Type: OpCreate, Parent: RootIno, Ino: ino, Mode: ModeDir | 0o755}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpCreate, Parent: RootIno, Ino: ino, Mode: ModeFIFO | 0o644}, syscall.EINVAL)
	do(t, m, Op{Type: OpCreate, Parent: RootIno, Ino: ino, Mode: ModeReg | 0o600, Ctime: 300})
	in := m.Inodes[ino]
	if in == nil || in.Nlink != 0 {
		t.Fatalf("O_TMPFILE inode: %+v", in)
	}
	if r := m.Inodes[RootIno]; len(r.Entries) != len(rootBefore.Entries) || r.Mtime != rootBefore.Mtime || r.Nlink != rootBefore.Nlink {
		t.Errorf("O_TMPFILE changed its directory: %+v", *r)
	}
	// Linking it in gives it its first name.
	do(t, m, Op{Type: OpLink, Ino: ino, Parent: 2, Name: "kept", Ctime: 301})
	if in.Nlink != 1 || m.Inodes[2].Entries["kept"] != ino {
		t.Errorf("linked O_TMPFILE: nlink %d, entries %v", in.Nlink, m.Inodes[2].Entries)
	}
	consistent(t, m)
}

func TestLink(t *testing.T) {
	m := fixture(t)
	do(t, m, Op{Type: OpLink, Ino: 3, Parent: RootIno, Name: "f2", Ctime: 500})
	do(t, m, Op{Type: OpLink, Ino: 3, Parent: 4, Name: "f3", Ctime: 501})
	wantNlink(t, m, map[Ino]uint32{3: 3, RootIno: 4, 4: 2})
	if f := m.Inodes[3]; f.Ctime != 501 || f.Mtime != 102 {
		t.Errorf("linked file ctime %d mtime %d, want 501, 102", f.Ctime, f.Mtime)
	}
	if e := m.Inodes[4]; e.Mtime != 501 || e.Ctime != 501 {
		t.Errorf("directory linked into: mtime %d ctime %d, want 501", e.Mtime, e.Ctime)
	}
	consistent(t, m)

	// link(2): EPERM for a directory, EEXIST for a name in use.
	refuse(t, m, Op{Type: OpLink, Ino: 2, Parent: 4, Name: "d2"}, syscall.EPERM)
	refuse(t, m, Op{Type: OpLink, Ino: 5, Parent: RootIno, Name: "d"}, syscall.EEXIST)
	refuse(t, m, Op{Type: OpLink, Ino: 5, Parent: RootIno, Name: "f2"}, syscall.EEXIST)
	refuse(t, m, Op{Type: OpLink, Ino: 99, Parent: RootIno, Name: "x"}, syscall.ENOENT)
	refuse(t, m, Op{Type: OpLink, Ino: 5, Parent: 99, Name: "x"}, syscall.ENOENT)
	refuse(t, m, Op{Type: OpLink, Ino: 5, Parent: 3, Name: "x"}, syscall.ENOTDIR)
	refuse(t, m, Op{Type: OpLink, Ino: 5, Parent: RootIno, Name: strings.Repeat("n", 256)}, syscall.ENAMETOOLONG)
	refuse(t, m, Op{Type: OpLink, Ino: 5, Parent: RootIno, Name: ".."}, syscall.EINVAL)
	// Symlinks may be hard linked.
	do(t, m, Op{Type: OpLink, Ino: 6, Parent: 4, Name: "s2"})
	wantNlink(t, m, map[Ino]uint32{6: 2})

	m.Inodes[5].Nlink = 65000
	refuse(t, m, Op{Type: OpLink, Ino: 5, Parent: RootIno, Name: "many"}, syscall.EMLINK)
	m.Inodes[5].Nlink = 64999
	do(t, m, Op{Type: OpLink, Ino: 5, Parent: RootIno, Name: "many"})
	wantNlink(t, m, map[Ino]uint32{5: 65000})
}

func TestUnlink(t *testing.T) {
	m := fixture(t)
	do(t, m, Op{Type: OpLink, Ino: 3, Parent: RootIno, Name: "f2"})
	// unlink(2) of a directory is EISDIR on Linux.
	refuse(t, m, Op{Type: OpUnlink, Parent: RootIno, Name: "d"}, syscall.EISDIR)
	refuse(t, m, Op{Type: OpUnlink, Parent: RootIno, Name: "e"}, syscall.EISDIR)
	refuse(t, m, Op{Type: OpUnlink, Parent: RootIno, Name: "nope"}, syscall.ENOENT)
	refuse(t, m, Op{Type: OpUnlink, Parent: 99, Name: "f"}, syscall.ENOENT)
	refuse(t, m, Op{Type: OpUnlink, Parent: 3, Name: "f"}, syscall.ENOTDIR)
	refuse(t, m, Op{Type: OpUnlink, Parent: RootIno, Name: strings.Repeat("n", 256)}, syscall.ENAMETOOLONG)
	// Only the last link can free an inode.
	refuse(t, m, Op{Type: OpUnlink, Parent: 2, Name: "f", Free: true}, syscall.EINVAL)

	do(t, m, Op{Type: OpUnlink, Parent: 2, Name: "f", Ctime: 600})
	if _, ok := entry(m, 2, "f"); ok {
		t.Error("d/f still named")
	}
	if d := m.Inodes[2]; d.Mtime != 600 || d.Ctime != 600 {
		t.Errorf("directory unlinked from: mtime %d ctime %d, want 600", d.Mtime, d.Ctime)
	}
	wantNlink(t, m, map[Ino]uint32{3: 1, 2: 2})
	if c := m.Inodes[3].Ctime; c != 600 {
		t.Errorf("unlinked file ctime %d, want 600", c)
	}

	// The last link without Free leaves an orphan, still there while open.
	do(t, m, Op{Type: OpUnlink, Parent: RootIno, Name: "f2", Ctime: 601})
	wantNlink(t, m, map[Ino]uint32{3: 0})
	consistent(t, m)
	do(t, m, Op{Type: OpFree, Ino: 3})
	if m.Inodes[3] != nil {
		t.Error("OpFree left the orphan")
	}

	// The last link with Free drops the inode at once.
	do(t, m, Op{Type: OpUnlink, Parent: RootIno, Name: "g", Free: true})
	if m.Inodes[5] != nil {
		t.Error("unlink with Free left the inode")
	}
	do(t, m, Op{Type: OpUnlink, Parent: RootIno, Name: "s"})
	wantNlink(t, m, map[Ino]uint32{6: 0})
	consistent(t, m)
}

func TestRmdir(t *testing.T) {
	m := fixture(t)
	refuse(t, m, Op{Type: OpRmdir, Parent: RootIno, Name: "d"}, syscall.ENOTEMPTY)
	refuse(t, m, Op{Type: OpRmdir, Parent: RootIno, Name: "g"}, syscall.ENOTDIR)
	refuse(t, m, Op{Type: OpRmdir, Parent: RootIno, Name: "s"}, syscall.ENOTDIR)
	refuse(t, m, Op{Type: OpRmdir, Parent: RootIno, Name: "nope"}, syscall.ENOENT)
	refuse(t, m, Op{Type: OpRmdir, Parent: 5, Name: "x"}, syscall.ENOTDIR)

	do(t, m, Op{Type: OpRmdir, Parent: RootIno, Name: "e", Ctime: 700})
	wantNlink(t, m, map[Ino]uint32{RootIno: 3, 4: 0})
	if r := m.Inodes[RootIno]; r.Mtime != 700 || r.Ctime != 700 {
		t.Errorf("root after rmdir: mtime %d ctime %d, want 700", r.Mtime, r.Ctime)
	}
	// A removed directory still held open takes no new entries.
	refuse(t, m, Op{Type: OpCreate, Parent: 4, Name: "x", Ino: m.NextIno, Mode: ModeReg}, syscall.ENOENT)
	refuse(t, m, Op{Type: OpLink, Ino: 5, Parent: 4, Name: "x"}, syscall.ENOENT)
	refuse(t, m, Op{Type: OpRename, Parent: RootIno, Name: "g", NewParent: 4, NewName: "x"}, syscall.ENOENT)
	refuse(t, m, Op{Type: OpCreate, Parent: 4, Ino: m.NextIno, Mode: ModeReg}, syscall.ENOENT) // nor an O_TMPFILE
	consistent(t, m)
	do(t, m, Op{Type: OpFree, Ino: 4})

	// Emptied, d goes too, freed at once.
	do(t, m, Op{Type: OpUnlink, Parent: 2, Name: "f", Free: true})
	do(t, m, Op{Type: OpRmdir, Parent: RootIno, Name: "d", Free: true})
	if m.Inodes[2] != nil || m.Inodes[3] != nil {
		t.Error("freed inodes remain")
	}
	wantNlink(t, m, map[Ino]uint32{RootIno: 2})
	consistent(t, m)
}

// TestRename holds the model to rename(2) and renameat2(2) as Linux does
// them.
func TestRename(t *testing.T) {
	r := func(p Ino, n string, np Ino, nn string) Op {
		return Op{Type: OpRename, Parent: p, Name: n, NewParent: np, NewName: nn, Ctime: 900}
	}
	t.Run("new name", func(t *testing.T) {
		m := fixture(t)
		do(t, m, r(2, "f", 4, "f2"))
		if ino, _ := entry(m, 4, "f2"); ino != 3 {
			t.Errorf("e/f2 is %d, want 3", ino)
		}
		if _, ok := entry(m, 2, "f"); ok {
			t.Error("d/f still there")
		}
		wantNlink(t, m, map[Ino]uint32{3: 1, 2: 2, 4: 2})
		for _, ino := range []Ino{2, 3, 4} {
			if c := m.Inodes[ino].Ctime; c != 900 {
				t.Errorf("inode %d ctime %d, want 900", ino, c)
			}
		}
		consistent(t, m)
	})
	t.Run("over a file", func(t *testing.T) {
		m := fixture(t)
		do(t, m, r(RootIno, "g", 2, "f"))
		if ino, _ := entry(m, 2, "f"); ino != 5 {
			t.Errorf("d/f is %d, want 5", ino)
		}
		wantNlink(t, m, map[Ino]uint32{3: 0, 5: 1}) // the old d/f is an orphan
		consistent(t, m)
		// With Free the replaced inode goes at once.
		do(t, m, r(2, "f", RootIno, "s").withFree())
		if m.Inodes[6] != nil {
			t.Error("replaced symlink not freed")
		}
		consistent(t, m)
	})
	t.Run("over a file with other links", func(t *testing.T) {
		m := fixture(t)
		do(t, m, Op{Type: OpLink, Ino: 3, Parent: RootIno, Name: "f2"})
		refuse(t, m, r(RootIno, "g", 2, "f").withFree(), syscall.EINVAL)
		do(t, m, r(RootIno, "g", 2, "f"))
		wantNlink(t, m, map[Ino]uint32{3: 1})
		consistent(t, m)
	})
	t.Run("directory over an empty directory", func(t *testing.T) {
		m := fixture(t)
		do(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "x", Ino: 7, Mode: ModeDir})
		do(t, m, Op{Type: OpCreate, Parent: 7, Name: "sub", Ino: 8, Mode: ModeDir})
		// d (not empty) moves over x/sub (empty), across directories.
		do(t, m, r(RootIno, "d", 7, "sub"))
		wantNlink(t, m, map[Ino]uint32{RootIno: 4, 7: 3, 2: 2, 8: 0})
		if p := m.Inodes[2].Parent; p != 7 {
			t.Errorf("moved directory's parent %d, want 7", p)
		}
		consistent(t, m)
		// e over x (not empty): ENOTEMPTY; x/sub over e, in one move: fine.
		refuse(t, m, r(RootIno, "e", RootIno, "x"), syscall.ENOTEMPTY)
		do(t, m, r(7, "sub", RootIno, "e").withFree())
		if m.Inodes[4] != nil {
			t.Error("replaced directory not freed")
		}
		wantNlink(t, m, map[Ino]uint32{RootIno: 4, 7: 2})
		consistent(t, m)
	})
	t.Run("type mismatches", func(t *testing.T) {
		m := fixture(t)
		refuse(t, m, r(RootIno, "e", RootIno, "g"), syscall.ENOTDIR) // dir over file
		refuse(t, m, r(RootIno, "g", RootIno, "e"), syscall.EISDIR)  // file over dir
		refuse(t, m, r(RootIno, "s", RootIno, "e"), syscall.EISDIR)
		refuse(t, m, r(RootIno, "g", RootIno, "d"), syscall.EISDIR) // over a non-empty dir too
	})
	t.Run("into itself", func(t *testing.T) {
		m := fixture(t)
		do(t, m, Op{Type: OpCreate, Parent: 2, Name: "sub", Ino: 7, Mode: ModeDir})
		refuse(t, m, r(RootIno, "d", 2, "x"), syscall.EINVAL)
		refuse(t, m, r(RootIno, "d", 7, "x"), syscall.EINVAL)
		// Over its own ancestor: that is not empty.
		refuse(t, m, r(2, "sub", RootIno, "d"), syscall.ENOTEMPTY)
		// A file may go anywhere; a directory beside itself too.
		do(t, m, r(RootIno, "g", 7, "g"))
		do(t, m, r(RootIno, "d", RootIno, "d2"))
		consistent(t, m)
	})
	t.Run("same inode", func(t *testing.T) {
		// rename(2): if oldpath and newpath are existing hard links to
		// the same file, rename does nothing and succeeds.
		m := fixture(t)
		do(t, m, Op{Type: OpLink, Ino: 3, Parent: RootIno, Name: "f2"})
		before := m.Clone()
		do(t, m, r(2, "f", RootIno, "f2"))
		if !reflect.DeepEqual(m, before) {
			t.Error("rename between two links of one inode changed the model")
		}
		do(t, m, r(RootIno, "e", RootIno, "e"))
		if !reflect.DeepEqual(m, before) {
			t.Error("rename of a name onto itself changed the model")
		}
	})
	t.Run("noreplace", func(t *testing.T) {
		m := fixture(t)
		op := r(RootIno, "g", 2, "f")
		op.Flags = RenameNoReplace
		refuse(t, m, op, syscall.EEXIST)
		op.NewName = "new"
		do(t, m, op)
		if ino, _ := entry(m, 2, "new"); ino != 5 {
			t.Errorf("d/new is %d, want 5", ino)
		}
		// Even over another link of the same inode.
		do(t, m, Op{Type: OpLink, Ino: 5, Parent: RootIno, Name: "g"})
		op = r(RootIno, "g", 2, "new")
		op.Flags = RenameNoReplace
		refuse(t, m, op, syscall.EEXIST)
		consistent(t, m)
	})
	t.Run("exchange", func(t *testing.T) {
		m := fixture(t)
		op := r(RootIno, "g", 2, "f")
		op.Flags = RenameExchange
		do(t, m, op)
		if a, b := m.Inodes[RootIno].Entries["g"], m.Inodes[2].Entries["f"]; a != 3 || b != 5 {
			t.Errorf("after exchange /g=%d d/f=%d, want 3 and 5", a, b)
		}
		wantNlink(t, m, map[Ino]uint32{3: 1, 5: 1})
		if m.Inodes[3].Ctime != 900 || m.Inodes[5].Ctime != 900 {
			t.Error("exchange did not change both inodes' ctime")
		}
		consistent(t, m)

		// A directory and a file, across directories: the link counts
		// of the directories follow the subdirectory.
		op = r(RootIno, "e", 2, "f")
		op.Flags = RenameExchange
		do(t, m, op)
		wantNlink(t, m, map[Ino]uint32{RootIno: 3, 2: 3, 4: 2})
		if p := m.Inodes[4].Parent; p != 2 {
			t.Errorf("exchanged directory's parent %d, want 2", p)
		}
		consistent(t, m)

		// Two directories across parents: counts stay.
		do(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "x", Ino: 7, Mode: ModeDir})
		op = r(RootIno, "x", 2, "f")
		op.Flags = RenameExchange
		do(t, m, op)
		wantNlink(t, m, map[Ino]uint32{RootIno: 4, 2: 3})
		if m.Inodes[7].Parent != 2 || m.Inodes[4].Parent != RootIno {
			t.Errorf("parents after exchange: x %d, e %d", m.Inodes[7].Parent, m.Inodes[4].Parent)
		}
		consistent(t, m)

		op = r(RootIno, "g", RootIno, "missing")
		op.Flags = RenameExchange
		refuse(t, m, op, syscall.ENOENT)
		op = r(RootIno, "g", RootIno, "s")
		op.Flags = RenameExchange
		refuse(t, m, op.withFree(), syscall.EINVAL)
		// A directory exchanged with its own ancestor or descendant.
		op = r(2, "f", RootIno, "d") // d/f is x now, a directory in d
		op.Flags = RenameExchange
		refuse(t, m, op, syscall.EINVAL)
		op = r(RootIno, "d", 2, "f")
		op.Flags = RenameExchange
		refuse(t, m, op, syscall.EINVAL)
	})
	t.Run("bad arguments", func(t *testing.T) {
		m := fixture(t)
		op := r(RootIno, "g", RootIno, "h")
		op.Flags = RenameNoReplace | RenameExchange
		refuse(t, m, op, syscall.EINVAL)
		op.Flags = 1 << 2 // RENAME_WHITEOUT: not supported
		refuse(t, m, op, syscall.EINVAL)
		refuse(t, m, r(RootIno, "g", RootIno, strings.Repeat("n", 256)), syscall.ENAMETOOLONG)
		refuse(t, m, r(RootIno, strings.Repeat("n", 256), RootIno, "h"), syscall.ENAMETOOLONG)
		refuse(t, m, r(RootIno, "g", RootIno, ""), syscall.EINVAL)
		refuse(t, m, r(RootIno, "g", RootIno, "a/b"), syscall.EINVAL)
		refuse(t, m, r(RootIno, "nope", RootIno, "h"), syscall.ENOENT)
		refuse(t, m, r(99, "g", RootIno, "h"), syscall.ENOENT)
		refuse(t, m, r(RootIno, "g", 99, "h"), syscall.ENOENT)
		refuse(t, m, r(5, "g", RootIno, "h"), syscall.ENOTDIR)
		refuse(t, m, r(RootIno, "g", 5, "h"), syscall.ENOTDIR)
		// Free names the replaced inode: with nothing replaced it is wrong.
		refuse(t, m, r(RootIno, "g", RootIno, "h").withFree(), syscall.EINVAL)
	})
}

func (op Op) withFree() Op { op.Free = true; return op }

func TestSetattr(t *testing.T) {
	m := fixture(t)
	do(t, m, Op{Type: OpSetattr, Ino: 3, Mask: SetMode, Mode: ModeDir | 0o4711, Ctime: 1000})
	if f := m.Inodes[3]; f.Mode != ModeReg|0o4711 || f.Ctime != 1000 || f.Mtime != 102 {
		t.Errorf("chmod: mode %#o ctime %d mtime %d; want the type kept, %#o, 1000, 102", f.Mode, f.Ctime, f.Mtime, ModeReg|0o4711)
	}
	do(t, m, Op{Type: OpSetattr, Ino: 3, Mask: SetUID | SetGID, UID: 11, GID: 12, Mode: 0, Ctime: 1001})
	if f := m.Inodes[3]; f.UID != 11 || f.GID != 12 || f.Mode != ModeReg|0o4711 {
		t.Errorf("chown: %+v", *f)
	}
	do(t, m, Op{Type: OpSetattr, Ino: 3, Mask: SetSize, Size: 4096, Ctime: 1002})
	if f := m.Inodes[3]; f.Size != 4096 || f.Mtime != 1002 || f.Ctime != 1002 {
		t.Errorf("truncate: size %d mtime %d ctime %d", f.Size, f.Mtime, f.Ctime)
	}
	do(t, m, Op{Type: OpSetattr, Ino: 3, Mask: SetSize | SetMtime | SetAtime, Size: 10, Mtime: 5, Atime: 6, Ctime: 1003})
	if f := m.Inodes[3]; f.Size != 10 || f.Mtime != 5 || f.Atime != 6 || f.Ctime != 1003 {
		t.Errorf("truncate with times: %+v", *f)
	}
	// Directories and symlinks have no size to set.
	refuse(t, m, Op{Type: OpSetattr, Ino: 2, Mask: SetSize, Size: 0}, syscall.EISDIR)
	refuse(t, m, Op{Type: OpSetattr, Ino: 6, Mask: SetSize, Size: 0}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpSetattr, Ino: 3, Mask: SetSize, Size: -1}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpSetattr, Ino: 99, Mask: SetMode}, syscall.ENOENT)
	// A negative size without SetSize is not looked at.
	do(t, m, Op{Type: OpSetattr, Ino: 2, Mask: SetMode, Mode: 0o700, Size: -1})
	if d := m.Inodes[2]; d.Mode != ModeDir|0o700 || !d.IsDir() {
		t.Errorf("chmod of a dir: %#o", d.Mode)
	}
}

func TestSizeFollows(t *testing.T) {
	m := fixture(t)
	do(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "h", Ino: 7, Mode: ModeReg})
	do(t, m, Op{Type: OpSizeFollows, Ino: 7, Flags: SizeFollowsSet})
	do(t, m, Op{Type: OpSizeFollows, Ino: 3, Flags: SizeFollowsSet})
	if got := m.SizeFollows(); !slices.Equal(got, []Ino{3, 7}) {
		t.Fatalf("SizeFollows() = %v, want [3 7]", got)
	}
	if c := m.Inodes[3].Ctime; c != 102 {
		t.Errorf("the mark changed ctime to %d", c)
	}
	refuse(t, m, Op{Type: OpSizeFollows, Ino: 2, Flags: SizeFollowsSet}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpSizeFollows, Ino: 6, Flags: SizeFollowsSet}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpSizeFollows, Ino: 3, Flags: 2}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpSizeFollows, Ino: 99, Flags: SizeFollowsSet}, syscall.ENOENT)

	// Growing keeps the mark; a shrink ends it.
	do(t, m, Op{Type: OpSetattr, Ino: 3, Mask: SetSize, Size: 100})
	do(t, m, Op{Type: OpWrite, Ino: 3, Off: 100, Len: 10})
	if !m.Inodes[3].SizeFollows {
		t.Error("growing the file cleared its mark")
	}
	do(t, m, Op{Type: OpSetattr, Ino: 3, Mask: SetSize, Size: 110}) // same size: no shrink
	if !m.Inodes[3].SizeFollows {
		t.Error("a setattr to the same size cleared the mark")
	}
	do(t, m, Op{Type: OpSetattr, Ino: 3, Mask: SetSize, Size: 50})
	if m.Inodes[3].SizeFollows {
		t.Error("a shrink kept the mark")
	}
	do(t, m, Op{Type: OpSizeFollows, Ino: 7, Flags: 0})
	if got := m.SizeFollows(); len(got) != 0 {
		t.Errorf("SizeFollows() = %v after clearing both", got)
	}
}

func TestWrite(t *testing.T) {
	m := fixture(t)
	do(t, m, Op{Type: OpWrite, Ino: 3, Off: 10, Len: 5, Ctime: 1100})
	if f := m.Inodes[3]; f.Size != 15 || f.Mtime != 1100 || f.Ctime != 1100 {
		t.Errorf("write: size %d mtime %d ctime %d", f.Size, f.Mtime, f.Ctime)
	}
	do(t, m, Op{Type: OpWrite, Ino: 3, Off: 0, Len: 3, Data: []byte("abc"), Ctime: 1101})
	if f := m.Inodes[3]; f.Size != 15 || f.Mtime != 1101 {
		t.Errorf("a write inside the file changed its size to %d", f.Size)
	}
	do(t, m, Op{Type: OpWrite, Ino: 3, Off: 15, Len: 0})
	refuse(t, m, Op{Type: OpWrite, Ino: 3, Off: 0, Len: 4, Data: []byte("abc")}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpWrite, Ino: 3, Off: -1, Len: 1}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpWrite, Ino: 3, Off: 0, Len: -1}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpWrite, Ino: 3, Off: 1 << 62, Len: 1 << 62}, syscall.EINVAL) // Off+Len overflows
	refuse(t, m, Op{Type: OpWrite, Ino: 2, Off: 0, Len: 1}, syscall.EISDIR)
	refuse(t, m, Op{Type: OpWrite, Ino: 6, Off: 0, Len: 1}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpWrite, Ino: 99, Off: 0, Len: 1}, syscall.ENOENT)
}

func TestFallocate(t *testing.T) {
	m := fixture(t)
	fa := func(mode uint32, off, n int64, now int64) Op {
		return Op{Type: OpFallocate, Ino: 3, Mode: mode, Off: off, Len: n, Ctime: now}
	}
	do(t, m, fa(0, 0, 100, 1200))
	if f := m.Inodes[3]; f.Size != 100 || f.Mtime != 102 || f.Ctime != 1200 {
		t.Errorf("fallocate: size %d mtime %d ctime %d, want 100, 102 (unchanged), 1200", f.Size, f.Mtime, f.Ctime)
	}
	do(t, m, fa(FallocKeepSize, 0, 1000, 1201))
	if f := m.Inodes[3]; f.Size != 100 {
		t.Errorf("KEEP_SIZE changed the size to %d", f.Size)
	}
	do(t, m, fa(FallocPunchHole|FallocKeepSize, 0, 1000, 1202))
	if f := m.Inodes[3]; f.Size != 100 || f.Mtime != 1202 {
		t.Errorf("punch hole: size %d mtime %d, want 100, 1202", f.Size, f.Mtime)
	}
	do(t, m, fa(FallocZeroRange, 50, 100, 1203))
	if f := m.Inodes[3]; f.Size != 150 || f.Mtime != 1203 {
		t.Errorf("zero range: size %d mtime %d, want 150, 1203", f.Size, f.Mtime)
	}
	do(t, m, fa(FallocZeroRange|FallocKeepSize, 100, 1000, 1204))
	if f := m.Inodes[3]; f.Size != 150 {
		t.Errorf("zero range with KEEP_SIZE: size %d", f.Size)
	}
	// fallocate(2): PUNCH_HOLE must come with KEEP_SIZE; other modes are
	// not supported; a zero length is EINVAL.
	refuse(t, m, fa(FallocPunchHole, 0, 10, 0), syscall.EOPNOTSUPP)
	refuse(t, m, fa(0x08, 0, 10, 0), syscall.EOPNOTSUPP) // COLLAPSE_RANGE
	refuse(t, m, fa(0x20, 0, 10, 0), syscall.EOPNOTSUPP) // INSERT_RANGE
	refuse(t, m, fa(0, 0, 0, 0), syscall.EINVAL)
	refuse(t, m, fa(0, -1, 10, 0), syscall.EINVAL)
	refuse(t, m, Op{Type: OpFallocate, Ino: 2, Off: 0, Len: 1}, syscall.EISDIR)
}

func TestXattr(t *testing.T) {
	m := fixture(t)
	val := []byte("v1")
	do(t, m, Op{Type: OpSetxattr, Ino: 3, Name: "user.a", Data: val, Ctime: 1300})
	val[0] = 'X' // the model keeps its own copy
	if got := m.Inodes[3].Xattrs["user.a"]; string(got) != "v1" {
		t.Errorf("xattr = %q, want v1", got)
	}
	if c := m.Inodes[3].Ctime; c != 1300 {
		t.Errorf("setxattr ctime %d", c)
	}
	refuse(t, m, Op{Type: OpSetxattr, Ino: 3, Name: "user.a", Flags: XattrCreate, Data: []byte("v2")}, syscall.EEXIST)
	refuse(t, m, Op{Type: OpSetxattr, Ino: 3, Name: "user.b", Flags: XattrReplace, Data: []byte("v2")}, syscall.ENODATA)
	do(t, m, Op{Type: OpSetxattr, Ino: 3, Name: "user.a", Flags: XattrReplace, Data: []byte("v2")})
	do(t, m, Op{Type: OpSetxattr, Ino: 3, Name: "user.b", Flags: XattrCreate})
	if x := m.Inodes[3].Xattrs; len(x) != 2 || string(x["user.a"]) != "v2" || len(x["user.b"]) != 0 {
		t.Errorf("xattrs %q", x)
	}
	// Directories and symlinks have xattrs too.
	do(t, m, Op{Type: OpSetxattr, Ino: 2, Name: "trusted.x", Data: []byte{0}})
	refuse(t, m, Op{Type: OpSetxattr, Ino: 3, Name: "", Data: []byte("v")}, syscall.ERANGE)
	refuse(t, m, Op{Type: OpSetxattr, Ino: 3, Name: strings.Repeat("n", 256)}, syscall.ERANGE)
	do(t, m, Op{Type: OpSetxattr, Ino: 3, Name: strings.Repeat("n", 255)})
	refuse(t, m, Op{Type: OpSetxattr, Ino: 99, Name: "user.a"}, syscall.ENOENT)

	do(t, m, Op{Type: OpRemovexattr, Ino: 3, Name: "user.a", Ctime: 1301})
	if _, ok := m.Inodes[3].Xattrs["user.a"]; ok || m.Inodes[3].Ctime != 1301 {
		t.Error("removexattr left the xattr or the ctime")
	}
	refuse(t, m, Op{Type: OpRemovexattr, Ino: 3, Name: "user.a"}, syscall.ENODATA)
	refuse(t, m, Op{Type: OpRemovexattr, Ino: 5, Name: "user.a"}, syscall.ENODATA) // no xattrs at all
	refuse(t, m, Op{Type: OpRemovexattr, Ino: 3, Name: ""}, syscall.ERANGE)
}

func TestFree(t *testing.T) {
	m := fixture(t)
	refuse(t, m, Op{Type: OpFree, Ino: 3}, syscall.EINVAL) // still linked
	refuse(t, m, Op{Type: OpFree, Ino: 99}, syscall.EINVAL)
	refuse(t, m, Op{Type: OpFree, Ino: RootIno}, syscall.EINVAL)
	m.Inodes[RootIno].Nlink = 0
	refuse(t, m, Op{Type: OpFree, Ino: RootIno}, syscall.EINVAL) // not even then
	m.Inodes[RootIno].Nlink = 4
	do(t, m, Op{Type: OpUnlink, Parent: 2, Name: "f"})
	do(t, m, Op{Type: OpFree, Ino: 3})
	if m.Inodes[3] != nil {
		t.Error("freed inode still there")
	}
	refuse(t, m, Op{Type: OpFree, Ino: 3}, syscall.EINVAL) // twice
}

func TestUnknownOp(t *testing.T) {
	m := fixture(t)
	for _, typ := range []OpType{0, OpMax, 200} {
		refuse(t, m, Op{Type: typ, Ino: 3}, syscall.EINVAL)
	}
}

func TestDropOrphans(t *testing.T) {
	m := fixture(t)
	do(t, m, Op{Type: OpCreate, Parent: RootIno, Ino: 7, Mode: ModeReg})      // O_TMPFILE
	do(t, m, Op{Type: OpUnlink, Parent: 2, Name: "f"})                        // file 3, open
	do(t, m, Op{Type: OpRmdir, Parent: RootIno, Name: "e"})                   // dir 4, open
	do(t, m, Op{Type: OpLink, Ino: 5, Parent: RootIno, Name: "g2"})           // 5 keeps a link
	do(t, m, Op{Type: OpUnlink, Parent: RootIno, Name: "g"})                  //
	do(t, m, Op{Type: OpCreate, Parent: 2, Name: "k", Ino: 8, Mode: ModeReg}) // linked
	if p := m.Check(); len(p) == 0 {
		t.Error("Check found nothing wrong with a removed directory still in the model")
	}
	gone := m.DropOrphans()
	if !slices.Equal(gone, []Ino{3, 4, 7}) {
		t.Errorf("DropOrphans() = %v, want [3 4 7]", gone)
	}
	for _, ino := range []Ino{RootIno, 2, 5, 6, 8} {
		if m.Inodes[ino] == nil {
			t.Errorf("inode %d dropped", ino)
		}
	}
	if len(m.Inodes) != 5 {
		t.Errorf("%d inodes left, want 5", len(m.Inodes))
	}
	if p := m.Check(); p != nil {
		t.Errorf("Check after DropOrphans: %q", p)
	}
	if again := m.DropOrphans(); len(again) != 0 {
		t.Errorf("second DropOrphans() = %v", again)
	}
	// The root has no name; it is never an orphan.
	m.Inodes[RootIno].Nlink = 0
	if gone := m.DropOrphans(); len(gone) != 0 || m.Inodes[RootIno] == nil {
		t.Errorf("DropOrphans dropped %v, the root with nlink 0 among them", gone)
	}
}

func TestClone(t *testing.T) {
	m := fixture(t)
	do(t, m, Op{Type: OpSetxattr, Ino: 3, Name: "user.a", Data: []byte("v")})
	c := m.Clone()
	if !reflect.DeepEqual(c, m) || c.Digest() != m.Digest() {
		t.Fatal("clone differs")
	}
	c.Inodes[3].Xattrs["user.a"][0] = 'X'
	c.Inodes[3].Xattrs["user.b"] = nil
	c.Inodes[2].Entries["new"] = 5
	c.Inodes[5].Size = 77
	c.NextIno = 1000
	delete(c.Inodes, 6)
	if string(m.Inodes[3].Xattrs["user.a"]) != "v" || len(m.Inodes[3].Xattrs) != 1 ||
		len(m.Inodes[2].Entries) != 1 || m.Inodes[5].Size != 0 || m.NextIno != 7 || m.Inodes[6] == nil {
		t.Error("changing the clone changed the original")
	}
}

// richModel is a model using every field Encode writes.
func richModel(t *testing.T) *Model {
	t.Helper()
	m := fixture(t)
	do(t, m, Op{Type: OpSetxattr, Ino: 3, Name: "user.b", Data: []byte("bee")})
	do(t, m, Op{Type: OpSetxattr, Ino: 3, Name: "user.a", Data: []byte{0, 1, 2}})
	do(t, m, Op{Type: OpSetxattr, Ino: 2, Name: "user.empty"})
	do(t, m, Op{Type: OpSetattr, Ino: 3, Mask: SetSize | SetAtime | SetMtime, Size: 1 << 40, Atime: -5, Mtime: 1 << 62, Ctime: 3})
	do(t, m, Op{Type: OpCreate, Parent: 4, Name: "dev", Ino: 9, Mode: ModeChar | 0o600, UID: 1 << 31, GID: 0xffffffff, Rdev: 0x10203})
	do(t, m, Op{Type: OpCreate, Parent: RootIno, Ino: 10, Mode: ModeReg}) // an orphan
	do(t, m, Op{Type: OpLink, Ino: 5, Parent: 4, Name: "g-link"})
	return m
}

func TestModelEncodeRoundTrip(t *testing.T) {
	for _, marked := range []bool{false, true} {
		m := richModel(t)
		if marked {
			do(t, m, Op{Type: OpSizeFollows, Ino: 5, Flags: SizeFollowsSet})
			do(t, m, Op{Type: OpSizeFollows, Ino: 3, Flags: SizeFollowsSet})
		}
		b := m.Encode()
		if !bytes.Equal(b, m.Clone().Encode()) {
			t.Fatal("Encode is not deterministic")
		}
		got, err := DecodeModel(b)
		if err != nil {
			t.Fatalf("DecodeModel: %v", err)
		}
		if !bytes.Equal(got.Encode(), b) || got.Digest() != m.Digest() {
			t.Errorf("marked %v: decoded model encodes differently", marked)
		}
		if got.NextIno != m.NextIno || len(got.Inodes) != len(m.Inodes) {
			t.Fatalf("decoded: next %d, %d inodes; want %d, %d", got.NextIno, len(got.Inodes), m.NextIno, len(m.Inodes))
		}
		for ino, want := range m.Inodes {
			in := got.Inodes[ino]
			if in == nil {
				t.Errorf("inode %d lost", ino)
				continue
			}
			// Xattr values of no bytes may come back as empty
			// slices rather than nil; compare those by content.
			w, g := *want, *in
			if len(w.Xattrs) != len(g.Xattrs) {
				t.Errorf("inode %d: xattrs %q, want %q", ino, g.Xattrs, w.Xattrs)
			}
			for k, v := range w.Xattrs {
				if gv, ok := g.Xattrs[k]; !ok || !bytes.Equal(gv, v) {
					t.Errorf("inode %d: xattr %q = %q, want %q", ino, k, gv, v)
				}
			}
			w.Xattrs, g.Xattrs = nil, nil
			if !reflect.DeepEqual(w, g) {
				t.Errorf("inode %d: decoded %+v, want %+v", ino, g, w)
			}
		}
		want := []Ino(nil)
		if marked {
			want = []Ino{3, 5}
		}
		if !slices.Equal(got.SizeFollows(), want) {
			t.Errorf("marked %v: SizeFollows() = %v", marked, got.SizeFollows())
		}
		// Different models encode differently.
		c := m.Clone()
		c.Inodes[3].Atime++
		if c.Digest() == m.Digest() {
			t.Error("a changed atime did not change the digest")
		}
	}
}

// TestModelEncodeNoMarks pins the compatibility Encode documents: a
// model with no SizeFollows marks encodes with no trailing count at all.
func TestModelEncodeNoMarks(t *testing.T) {
	m := richModel(t)
	plain := m.Encode()
	do(t, m, Op{Type: OpSizeFollows, Ino: 5, Flags: SizeFollowsSet})
	marked := m.Encode()
	if !bytes.HasPrefix(marked, plain) || !bytes.Equal(marked[len(plain):], []byte{1, 5}) {
		t.Errorf("marks encode as %x after the unmarked model, want 01 05", marked[len(plain):])
	}
}

func TestDecodeModelCorrupt(t *testing.T) {
	m := richModel(t)
	b := m.Encode()
	// Every truncation is an error, never a panic.
	for n := range len(b) {
		if _, err := DecodeModel(b[:n]); err == nil {
			t.Fatalf("DecodeModel of %d of %d bytes: no error", n, len(b))
		} else if !strings.HasPrefix(err.Error(), "model: ") {
			t.Fatalf("DecodeModel of %d bytes: error %q does not say it is the model", n, err)
		}
	}
	check := func(name string, b []byte, want string) {
		t.Helper()
		_, err := DecodeModel(b)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, want)
		}
	}
	check("stray after marks", append(append(m.Encode(), 1, 5), 0), "stray bytes")
	check("zero marks", append(m.Encode(), 0), "bad count 0")
	check("mark on a directory", append(m.Encode(), 1, byte(RootIno)), "is no regular file")
	check("mark on a missing inode", append(m.Encode(), 1, 99), "inode 99")
	check("mark twice", append(m.Encode(), 2, 5, 5), "marked twice")
	check("inode count", []byte{2, 0x80, 0x80, 0x04}, "cannot fit")

	// A model built by hand: one inode, root, whose entry names a
	// missing inode, and variants.
	enc := func(mm *Model) []byte { return mm.Encode() }
	bad := NewModel(1)
	bad.Inodes[RootIno].Entries["ghost"] = 42
	bad.NextIno = 50
	check("entry naming a missing inode", enc(bad), `entry "ghost" names missing inode 42`)

	noRoot := NewModel(1)
	noRoot.Inodes[2] = &Inode{Ino: 2, Mode: ModeReg, Nlink: 0}
	noRoot.NextIno = 3
	delete(noRoot.Inodes, RootIno)
	check("no root", enc(noRoot), "no root directory")

	fileRoot := NewModel(1)
	fileRoot.Inodes[RootIno].Mode = ModeReg
	check("root not a directory", enc(fileRoot), "no root directory")

	high := NewModel(1)
	high.NextIno = RootIno // the root's number is not below NextIno
	check("number at NextIno", enc(high), "bad or duplicate inode number 1")

	// Two inodes both numbered 2.
	dup := NewModel(1)
	dup.Inodes[2] = &Inode{Ino: 2, Mode: ModeReg}
	dup.Inodes[3] = &Inode{Ino: 2, Mode: ModeReg}
	dup.NextIno = 4
	check("duplicate inode", enc(dup), "bad or duplicate inode number 2")

	// A mode out of uint32 range.
	check("mode out of range", []byte{2, 1, 1, 0x80, 0x80, 0x80, 0x80, 0x10}, "out of range")
}

// TestValidateApplyRandom drives the model with random ops, about half of
// them valid, holding Validate and Apply to agree on each, the model to
// stay a consistent tree, and replay of the ops encoded and decoded to
// give the same model.
func TestValidateApplyRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	m := NewModel(0)
	replica := NewModel(0)
	good := []string{"a", "b", "c", "d", strings.Repeat("l", 255)}
	bad := []string{strings.Repeat("L", 256), "", ".", "..", "x/y"}
	name := func() string {
		if r.IntN(20) == 0 {
			return bad[r.IntN(len(bad))]
		}
		return good[r.IntN(len(good))]
	}
	often := func() bool { return r.IntN(10) > 0 }
	applied, refused := 0, 0
	errnos := map[syscall.Errno]int{}
	for i := range 5000 {
		inos := slices.Sorted(maps.Keys(m.Inodes))
		var dirs, files []Ino
		for _, ino := range inos {
			switch in := m.Inodes[ino]; {
			case in.IsDir():
				dirs = append(dirs, ino)
			case in.IsRegular():
				files = append(files, ino)
			}
		}
		anyIno := func() Ino {
			if often() {
				return inos[r.IntN(len(inos))]
			}
			return Ino(r.IntN(int(m.NextIno) + 2)) // maybe missing, maybe 0
		}
		dir := func() Ino {
			if often() {
				return dirs[r.IntN(len(dirs))]
			}
			return anyIno()
		}
		file := func() Ino {
			if len(files) > 0 && often() {
				return files[r.IntN(len(files))]
			}
			return anyIno()
		}
		e, haveEntry := randomEntry(r, m)
		op := Op{Type: OpType(1 + r.IntN(int(OpMax)-1)), Ctime: int64(i), Free: r.IntN(3) == 0}
		switch op.Type {
		case OpCreate:
			op.Parent, op.Name, op.Ino = dir(), name(), m.NextIno+Ino(r.IntN(2))
			if !often() {
				op.Ino = anyIno()
			}
			if r.IntN(20) == 0 {
				op.Name = "" // O_TMPFILE
			}
			op.Mode = []uint32{ModeReg, ModeDir, ModeDir, ModeLink, ModeFIFO, 0}[r.IntN(6)] | 0o644
			if op.Mode&ModeType == ModeLink || r.IntN(20) == 0 {
				op.Target = "t"
			}
		case OpLink:
			op.Ino, op.Parent, op.Name = anyIno(), dir(), name()
		case OpUnlink, OpRmdir:
			op.Parent, op.Name = dir(), name()
			if haveEntry && often() {
				op.Parent, op.Name = e.dir, e.name
			}
		case OpRename:
			op.Parent, op.Name = dir(), name()
			if haveEntry && often() {
				op.Parent, op.Name = e.dir, e.name
			}
			op.NewParent, op.NewName = dir(), name()
			if e2, ok := randomEntry(r, m); ok && r.IntN(2) == 0 {
				op.NewParent, op.NewName = e2.dir, e2.name
			}
			op.Flags = []uint32{0, 0, 0, RenameNoReplace, RenameExchange, RenameExchange, 3, 4}[r.IntN(8)]
		case OpSetattr:
			op.Ino, op.Mask = file(), uint32(r.IntN(1<<7))
			op.Size, op.Mode = int64(r.IntN(100))-5, uint32(r.IntN(1<<16))
			op.UID, op.GID, op.Atime, op.Mtime = r.Uint32(), r.Uint32(), r.Int64()-r.Int64(), r.Int64()
		case OpWrite, OpFallocate:
			op.Ino = file()
			op.Off, op.Len = int64(r.IntN(100))-3, int64(r.IntN(100))-3
			op.Mode = []uint32{0, FallocKeepSize, FallocPunchHole | FallocKeepSize, FallocZeroRange, FallocPunchHole, 8}[r.IntN(6)]
			if op.Type == OpWrite && r.IntN(2) == 0 && op.Len >= 0 {
				op.Data = make([]byte, op.Len+int64(r.IntN(10)/9))
			}
		case OpSetxattr, OpRemovexattr:
			op.Ino, op.Name, op.Flags = anyIno(), []string{"user.a", "user.b", ""}[r.IntN(3)], uint32(r.IntN(4))
			op.Data = []byte("x")
		case OpSizeFollows:
			op.Ino, op.Flags = file(), []uint32{0, 1, 1, 2}[r.IntN(4)]
		case OpFree:
			op.Ino = anyIno()
		}
		err := tryOp(t, m, op)
		// Replay: the op as the log carries it.
		dec, derr := DecodeOp(op.Encode(nil))
		if derr != nil {
			t.Fatalf("op %d %s: decoding its encoding: %v", i, op.String(), derr)
		}
		if rerr := replica.Apply(&dec); rerr != err {
			t.Fatalf("op %d %s: live %v, replayed %v", i, op.String(), err, rerr)
		}
		if err != nil {
			refused++
			errnos[err.(syscall.Errno)]++
			continue
		}
		applied++
		if m.Digest() != replica.Digest() {
			t.Fatalf("op %d %s: the replayed op gives another model", i, op.String())
		}
		consistent(t, m)
	}
	if applied < 1500 || refused < 1500 || len(errnos) < 8 {
		t.Errorf("%d ops applied, %d refused (%v): the generator no longer covers both", applied, refused, errnos)
	}
	t.Logf("%d ops applied, %d refused (%v), %d inodes at the end", applied, refused, errnos, len(m.Inodes))
}

type dirEntry struct {
	dir  Ino
	name string
	ino  Ino
}

// randomEntry picks one of the model's directory entries.
func randomEntry(r *rand.Rand, m *Model) (dirEntry, bool) {
	var all []dirEntry
	for _, dir := range slices.Sorted(maps.Keys(m.Inodes)) {
		in := m.Inodes[dir]
		for _, name := range slices.Sorted(maps.Keys(in.Entries)) {
			all = append(all, dirEntry{dir, name, in.Entries[name]})
		}
	}
	if len(all) == 0 {
		return dirEntry{}, false
	}
	return all[r.IntN(len(all))], true
}

// FuzzDecodeModel holds DecodeModel to never panic, to prefix every error
// with "model: ", and, on what it accepts, to give a model whose own
// encoding decodes to the same model.
func FuzzDecodeModel(f *testing.F) {
	m := NewModel(5)
	m.Inodes[RootIno].Entries["f"] = 2
	m.Inodes[2] = &Inode{Ino: 2, Mode: ModeReg | 0o644, Nlink: 1, Size: 3, Xattrs: map[string][]byte{"user.a": []byte("v")}, SizeFollows: true}
	m.NextIno = 3
	f.Add(m.Encode())
	f.Add(NewModel(0).Encode())
	f.Add([]byte{})
	f.Add([]byte{2, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeModel(b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "model: ") {
				t.Fatalf("error %q does not say it is the model", err)
			}
			return
		}
		re := m.Encode()
		again, err := DecodeModel(re)
		if err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		if !bytes.Equal(again.Encode(), re) {
			t.Fatal("re-encoding decodes to another model")
		}
	})
}

// TestCreateLastIno: an op Apply accepts must leave a model whose
// checkpoint can be read back. Create takes any inode number from NextIno
// up, but the largest would wrap NextIno to 0, and DecodeModel would then
// refuse every inode: it is refused with ENOSPC, as a filesystem out of
// inodes refuses a create.
func TestCreateLastIno(t *testing.T) {
	m := fixture(t)
	err := tryOp(t, m, Op{Type: OpCreate, Parent: RootIno, Name: "last", Ino: math.MaxUint64, Mode: ModeReg})
	if err != syscall.ENOSPC {
		t.Fatalf("create of the last inode number: %v, want ENOSPC (out of inode numbers)", err)
	}
	if _, err := DecodeModel(m.Encode()); err != nil {
		t.Fatalf("after creating inode %d (NextIno now %d), the model's encoding does not decode: %v", uint64(math.MaxUint64), m.NextIno, err)
	}
}
