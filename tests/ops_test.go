package tests

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// journalModes are the --journal modes every durability test runs in.
var journalModes = []string{"meta", "data"}

// TestOperationsSurviveRemount drives every operation dbench, MariaDB/InnoDB,
// tar, git and cp use through the os package (and x/sys/unix where os has
// no call), checks the results on the mount, then unmounts, mounts the store
// afresh and checks contents and metadata again: the same tree, the same
// stat down to inode numbers and nanosecond times, the same xattrs.
func TestOperationsSurviveRemount(t *testing.T) {
	for _, journal := range journalModes {
		t.Run("journal="+journal, func(t *testing.T) {
			t.Parallel()
			store, mnt := newStore(t)
			m := mountDaemon(t, store, mnt, "--journal", journal)
			if _, err := os.Stat(filepath.Join(store, "superblock")); err != nil {
				t.Errorf("mounting an empty directory did not make it a store: %v", err)
			}
			want := exerciseOperations(t, mnt)
			want.check(t, mnt)
			before := snapshotTree(t, mnt)
			m.unmount(t)
			checkStore(t, store, true)

			m = m.remount(t)
			want.check(t, mnt)
			compareSnapshots(t, "after unmount and remount", before, snapshotTree(t, mnt))
			m.unmount(t)
			checkStore(t, store, true)
		})
	}
}

// pattern returns n reproducible pseudo-random bytes for seed.
func pattern(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// alignedBuffer returns n bytes at a 4096-byte aligned address, as O_DIRECT
// needs.
func alignedBuffer(n int) []byte {
	const align = 4096
	b := make([]byte, n+align)
	off := (align - int(uintptr(unsafe.Pointer(&b[0]))%align)) % align
	return b[off : off+n : off+n]
}

// opsRun is what the steps of exerciseOperations share: the mount, the
// tree they must leave, and the contents later steps use again.
type opsRun struct {
	mnt    string
	want   expectedTree
	mainGo []byte // src/main.go as it grows
	big    []byte // data/big.bin
}

func (o *opsRun) p(rel string) string { return filepath.Join(o.mnt, rel) }

func (o *opsRun) mkdir(t *testing.T, rel string, perm uint32) {
	t.Helper()
	must(t, os.Mkdir(o.p(rel), os.FileMode(perm)), "mkdir %s", rel)
	o.want[rel] = &expectedFile{kind: unix.S_IFDIR, perm: perm &^ testUmask}
}

func (o *opsRun) writeFile(t *testing.T, rel string, content []byte) {
	t.Helper()
	f, err := os.OpenFile(o.p(rel), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	must(t, err, "create %s", rel)
	_, err = f.Write(content)
	must(t, err, "write %s", rel)
	must(t, f.Close(), "close %s", rel)
	o.want[rel] = &expectedFile{kind: unix.S_IFREG, perm: 0o644, content: bytes.Clone(content)}
}

func (o *opsRun) readBack(t *testing.T, rel string, content []byte) {
	t.Helper()
	got, err := os.ReadFile(o.p(rel))
	must(t, err, "read %s", rel)
	if !bytes.Equal(got, content) {
		t.Fatalf("%s reads back wrong: %s", rel, describeDiff(got, content))
	}
}

// must fails the test when err is set, saying what failed.
func must(t *testing.T, err error, what string, a ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, a...), err)
	}
}

// opsSteps are exerciseOperations' steps, in order: each builds on what the
// ones before it made.
var opsSteps = []struct {
	name string
	run  func(t *testing.T, o *opsRun)
}{
	{"lookup", func(t *testing.T, o *opsRun) {
		// Lookups of what is not there.
		_, err := os.Stat(o.p("nothing"))
		wantErrno(t, "stat of a missing name", err, unix.ENOENT)
	}},
	{"mkdir-rmdir", func(t *testing.T, o *opsRun) {
		// mkdir and rmdir, and their errors.
		o.mkdir(t, "src", 0o755)
		o.mkdir(t, "src/pkg", 0o750)
		wantErrno(t, "mkdir of an existing name", os.Mkdir(o.p("src"), 0o755), unix.EEXIST)
		must(t, os.Mkdir(o.p("gone"), 0o755), "mkdir gone")
		must(t, os.WriteFile(o.p("gone/file"), []byte("x"), 0o644), "create gone/file")
		wantErrno(t, "rmdir of a non-empty directory", unix.Rmdir(o.p("gone")), unix.ENOTEMPTY)
		wantErrno(t, "rmdir of a file", unix.Rmdir(o.p("gone/file")), unix.ENOTDIR)
		wantErrno(t, "unlink of a directory", unix.Unlink(o.p("gone")), unix.EISDIR)
		must(t, os.Remove(o.p("gone/file")), "unlink gone/file")
		must(t, unix.Rmdir(o.p("gone")), "rmdir gone")
		_, err := os.Stat(o.p("gone"))
		wantErrno(t, "stat after rmdir", err, unix.ENOENT)
	}},
	{"create-write-read", func(t *testing.T, o *opsRun) {
		// create, open, write, pwrite, read, flush and release.
		o.mainGo = []byte("package main\n")
		f, err := os.OpenFile(o.p("src/main.go"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		must(t, err, "create src/main.go")
		_, err = f.Write(o.mainGo)
		must(t, err, "write src/main.go")
		_, err = f.WriteAt([]byte("PACKAGE"), 0)
		must(t, err, "pwrite src/main.go")
		copy(o.mainGo, "PACKAGE")
		buf := make([]byte, 100)
		n, err := f.ReadAt(buf, 0)
		if err != io.EOF || !bytes.Equal(buf[:n], o.mainGo) {
			t.Fatalf("pread of src/main.go: %q, %v; want %q, EOF", buf[:n], err, o.mainGo)
		}
		if fi, err := f.Stat(); err != nil || fi.Size() != int64(len(o.mainGo)) {
			t.Fatalf("fstat of src/main.go: %v, %v; want size %d", fi, err, len(o.mainGo))
		}
		must(t, f.Close(), "close (flush and release) src/main.go")
		_, err = os.OpenFile(o.p("src/main.go"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		wantErrno(t, "O_CREAT|O_EXCL of an existing file", err, unix.EEXIST)
		o.want["src/main.go"] = &expectedFile{kind: unix.S_IFREG, perm: 0o644, content: o.mainGo}
	}},
	{"trunc-append", func(t *testing.T, o *opsRun) {
		// O_TRUNC and O_APPEND, as shells and loggers use them.
		o.writeFile(t, "src/log.txt", []byte("old contents that O_TRUNC drops"))
		f, err := os.OpenFile(o.p("src/log.txt"), os.O_WRONLY|os.O_TRUNC, 0)
		must(t, err, "open O_TRUNC src/log.txt")
		must(t, f.Close(), "close src/log.txt")
		for _, line := range []string{"one\n", "two\n", "three\n"} {
			f, err = os.OpenFile(o.p("src/log.txt"), os.O_WRONLY|os.O_APPEND, 0)
			must(t, err, "open O_APPEND src/log.txt")
			_, err = f.WriteString(line)
			must(t, err, "append to src/log.txt")
			must(t, f.Close(), "close src/log.txt")
		}
		o.want["src/log.txt"].content = []byte("one\ntwo\nthree\n")
	}},
	{"large-file", func(t *testing.T, o *opsRun) {
		// A large file in unaligned chunks, made durable with fsync and
		// fdatasync, read back whole and at odd offsets.
		o.mkdir(t, "data", 0o755)
		o.big = pattern(1, 3<<20+123)
		f, err := os.OpenFile(o.p("data/o.big.bin"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		must(t, err, "create data/o.big.bin")
		for off := 0; off < len(o.big); off += 100_000 {
			_, err := f.Write(o.big[off:min(len(o.big), off+100_000)])
			must(t, err, "write data/o.big.bin at %d", off)
		}
		must(t, f.Sync(), "fsync data/o.big.bin")
		must(t, unix.Fdatasync(int(f.Fd())), "fdatasync data/o.big.bin")
		for _, off := range []int64{0, 1, 4095, 65537, int64(len(o.big)) - 10} {
			got := make([]byte, 7000)
			n, err := f.ReadAt(got, off)
			if (err != nil && err != io.EOF) || !bytes.Equal(got[:n], o.big[off:min(int64(len(o.big)), off+7000)]) {
				t.Fatalf("pread data/o.big.bin at %d: %d bytes, %v; content differs", off, n, err)
			}
		}
		must(t, f.Close(), "close data/o.big.bin")
		o.readBack(t, "data/o.big.bin", o.big)
		o.want["data/o.big.bin"] = &expectedFile{kind: unix.S_IFREG, perm: 0o600, content: o.big}
	}},
	{"truncate", func(t *testing.T, o *opsRun) {
		// truncate (by path) and ftruncate: shrink, then extend with zeros.
		o.mkdir(t, "trunc", 0o755)
		o.writeFile(t, "trunc/shrink", pattern(2, 10000))
		must(t, os.Truncate(o.p("trunc/shrink"), 4000), "truncate trunc/shrink to 4000")
		f, err := os.OpenFile(o.p("trunc/shrink"), os.O_RDWR, 0)
		must(t, err, "open trunc/shrink")
		must(t, f.Truncate(6000), "ftruncate trunc/shrink to 6000")
		must(t, f.Close(), "close trunc/shrink")
		o.want["trunc/shrink"].content = append(pattern(2, 4000), make([]byte, 2000)...)
		o.readBack(t, "trunc/shrink", o.want["trunc/shrink"].content)
		o.writeFile(t, "trunc/grow", nil)
		must(t, os.Truncate(o.p("trunc/grow"), 1<<20), "truncate trunc/grow to 1 MiB")
		f, err = os.OpenFile(o.p("trunc/grow"), os.O_WRONLY, 0)
		must(t, err, "open trunc/grow")
		_, err = f.WriteAt([]byte("end"), 1<<20-3)
		must(t, err, "pwrite trunc/grow")
		must(t, f.Close(), "close trunc/grow")
		o.want["trunc/grow"].content = append(make([]byte, 1<<20-3), "end"...)
	}},
	{"symlink", func(t *testing.T, o *opsRun) {
		// symlinks and readlink: relative, dangling, long.
		must(t, os.Symlink("main.go", o.p("src/link")), "symlink src/link")
		o.want["src/link"] = &expectedFile{kind: unix.S_IFLNK, target: "main.go"}
		if b, err := os.ReadFile(o.p("src/link")); err != nil || !bytes.Equal(b, o.mainGo) {
			t.Fatalf("reading through src/link: %q, %v", b, err)
		}
		must(t, os.Symlink("/nonexistent/target", o.p("dangling")), "symlink dangling")
		o.want["dangling"] = &expectedFile{kind: unix.S_IFLNK, target: "/nonexistent/target"}
		_, err := os.Stat(o.p("dangling"))
		wantErrno(t, "stat through a dangling symlink", err, unix.ENOENT)
		longTarget := strings.Repeat("deep/", 200) + "file"
		must(t, os.Symlink(longTarget, o.p("longlink")), "symlink longlink")
		o.want["longlink"] = &expectedFile{kind: unix.S_IFLNK, target: longTarget}
		wantErrno(t, "symlink over an existing name", os.Symlink("x", o.p("src/main.go")), unix.EEXIST)
	}},
	{"hardlink", func(t *testing.T, o *opsRun) {
		// Hard links share the inode: a write through one name shows through
		// the other; they share attributes and xattrs too (set below).
		must(t, os.Link(o.p("src/main.go"), o.p("src/main.hardlink")), "link src/main.hardlink")
		f, err := os.OpenFile(o.p("src/main.hardlink"), os.O_WRONLY|os.O_APPEND, 0)
		must(t, err, "open src/main.hardlink")
		_, err = f.WriteString("func main() {}\n")
		must(t, err, "append through src/main.hardlink")
		must(t, f.Close(), "close src/main.hardlink")
		o.mainGo = append(o.mainGo, "func main() {}\n"...)
		o.want["src/main.go"].content = o.mainGo
		o.readBack(t, "src/main.go", o.mainGo)
		wantErrno(t, "link of a directory", os.Link(o.p("src/pkg"), o.p("pkglink")), unix.EPERM)
	}},
	{"rename", func(t *testing.T, o *opsRun) {
		// rename: within a directory, across directories, a directory across
		// directories, over an existing file (an open descriptor of the
		// victim still reads it), over an empty directory; and the errors.
		o.mkdir(t, "docs", 0o755)
		o.mkdir(t, "archive", 0o755)
		o.writeFile(t, "docs/draft.txt", []byte("draft"))
		must(t, os.Rename(o.p("docs/draft.txt"), o.p("docs/final.txt")), "rename docs/draft.txt docs/final.txt")
		o.want.rename("docs/draft.txt", "docs/final.txt")
		must(t, os.Rename(o.p("docs/final.txt"), o.p("archive/final.txt")), "rename docs/final.txt archive/final.txt")
		o.want.rename("docs/final.txt", "archive/final.txt")
		o.mkdir(t, "docs/sub", 0o755)
		o.writeFile(t, "docs/sub/note", []byte("note"))
		must(t, os.Rename(o.p("docs/sub"), o.p("archive/sub")), "rename docs/sub archive/sub")
		o.want.rename("docs/sub", "archive/sub")

		o.mkdir(t, "cfg", 0o755)
		o.writeFile(t, "cfg/app.conf", []byte("old"))
		o.writeFile(t, "cfg/app.conf.tmp", []byte("new"))
		victim, err := os.Open(o.p("cfg/app.conf"))
		must(t, err, "open cfg/app.conf")
		var tmpSt unix.Stat_t
		must(t, unix.Stat(o.p("cfg/app.conf.tmp"), &tmpSt), "stat cfg/app.conf.tmp")
		must(t, os.Rename(o.p("cfg/app.conf.tmp"), o.p("cfg/app.conf")), "rename cfg/app.conf.tmp over cfg/app.conf")
		if b, err := io.ReadAll(victim); err != nil || string(b) != "old" {
			t.Errorf("reading the replaced cfg/app.conf through a descriptor opened before the rename: %q, %v; want \"old\"", b, err)
		}
		var vst unix.Stat_t
		if err := unix.Fstat(int(victim.Fd()), &vst); err != nil || vst.Nlink != 0 {
			t.Errorf("fstat of the replaced cfg/app.conf: nlink %d, %v; want 0", vst.Nlink, err)
		}
		must(t, victim.Close(), "close the replaced cfg/app.conf")
		var newSt unix.Stat_t
		must(t, unix.Stat(o.p("cfg/app.conf"), &newSt), "stat cfg/app.conf")
		if newSt.Ino != tmpSt.Ino {
			t.Errorf("cfg/app.conf after rename: inode %d, want the renamed file's %d", newSt.Ino, tmpSt.Ino)
		}
		o.want.rename("cfg/app.conf.tmp", "cfg/app.conf")
		o.mkdir(t, "cfg/full", 0o755)
		o.writeFile(t, "cfg/full/x", []byte("x"))
		o.mkdir(t, "cfg/empty", 0o700)
		o.mkdir(t, "cfg/full2", 0o755)
		o.writeFile(t, "cfg/full2/y", []byte("y"))
		// (os.Rename refuses any existing directory as the target with EEXIST
		// before asking the kernel, so these go through unix.Rename.)
		err = unix.Rename(o.p("cfg/full"), o.p("cfg/full2"))
		if !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) {
			t.Errorf("rename of a directory over a non-empty one: %v, want ENOTEMPTY or EEXIST", err)
		}
		wantErrno(t, "rename of a file over a directory", unix.Rename(o.p("cfg/app.conf"), o.p("cfg/empty")), unix.EISDIR)
		wantErrno(t, "rename of a directory over a file", unix.Rename(o.p("cfg/empty"), o.p("cfg/app.conf")), unix.ENOTDIR)
		wantErrno(t, "rename of a directory into itself", unix.Rename(o.p("cfg/full"), o.p("cfg/full/inside")), unix.EINVAL)
		wantErrno(t, "rename of a missing name", unix.Rename(o.p("cfg/missing"), o.p("cfg/other")), unix.ENOENT)
		must(t, unix.Rename(o.p("cfg/full"), o.p("cfg/empty")), "rename cfg/full over the empty cfg/empty")
		o.want.rename("cfg/full", "cfg/empty")
	}},
	{"renameat2", func(t *testing.T, o *opsRun) {
		// renameat2: RENAME_NOREPLACE refuses an existing target and leaves
		// both alone; RENAME_EXCHANGE swaps two names, of any types, across
		// directories too.
		o.mkdir(t, "x", 0o755)
		o.mkdir(t, "y", 0o755)
		o.writeFile(t, "x/one", []byte("one"))
		o.writeFile(t, "x/two", []byte("two"))
		wantErrno(t, "RENAME_NOREPLACE onto an existing file",
			unix.Renameat2(unix.AT_FDCWD, o.p("x/one"), unix.AT_FDCWD, o.p("x/two"), unix.RENAME_NOREPLACE), unix.EEXIST)
		o.readBack(t, "x/one", []byte("one"))
		o.readBack(t, "x/two", []byte("two"))
		must(t, unix.Renameat2(unix.AT_FDCWD, o.p("x/one"), unix.AT_FDCWD, o.p("x/three"), unix.RENAME_NOREPLACE), "RENAME_NOREPLACE x/one x/three")
		o.want.rename("x/one", "x/three")
		must(t, unix.Renameat2(unix.AT_FDCWD, o.p("x/two"), unix.AT_FDCWD, o.p("x/three"), unix.RENAME_EXCHANGE), "RENAME_EXCHANGE x/two x/three")
		o.want.exchange("x/two", "x/three")
		o.readBack(t, "x/two", []byte("one"))
		o.readBack(t, "x/three", []byte("two"))
		o.mkdir(t, "x/dir", 0o755)
		o.writeFile(t, "x/dir/inner", []byte("inner"))
		o.writeFile(t, "y/file", []byte("file"))
		must(t, unix.Renameat2(unix.AT_FDCWD, o.p("x/dir"), unix.AT_FDCWD, o.p("y/file"), unix.RENAME_EXCHANGE), "RENAME_EXCHANGE x/dir y/file")
		o.want.exchange("x/dir", "y/file")
		wantErrno(t, "RENAME_EXCHANGE with a missing name",
			unix.Renameat2(unix.AT_FDCWD, o.p("x/two"), unix.AT_FDCWD, o.p("x/missing"), unix.RENAME_EXCHANGE), unix.ENOENT)
	}},
	{"unlink", func(t *testing.T, o *opsRun) {
		// unlink.
		o.writeFile(t, "scratch", []byte("scratch"))
		must(t, os.Remove(o.p("scratch")), "unlink scratch")
		delete(o.want, "scratch")
		wantErrno(t, "unlink of a missing name", unix.Unlink(o.p("scratch")), unix.ENOENT)
	}},
	{"xattr", func(t *testing.T, o *opsRun) {
		// xattrs: set, create-only, replace-only, get (with a short buffer),
		// list and remove; values empty, binary and large; on a directory too.
		must(t, unix.Setxattr(o.p("src/main.go"), "user.mime_type", []byte("text/x-go"), 0), "setxattr user.mime_type")
		wantErrno(t, "setxattr XATTR_CREATE of an existing xattr",
			unix.Setxattr(o.p("src/main.go"), "user.mime_type", []byte("other"), unix.XATTR_CREATE), unix.EEXIST)
		wantErrno(t, "setxattr XATTR_REPLACE of a missing xattr",
			unix.Setxattr(o.p("src/main.go"), "user.missing", []byte("v"), unix.XATTR_REPLACE), unix.ENODATA)
		must(t, unix.Setxattr(o.p("src/main.go"), "user.mime_type", []byte("text/x-go; charset=utf-8"), unix.XATTR_REPLACE), "setxattr XATTR_REPLACE")
		must(t, unix.Setxattr(o.p("src/main.go"), "user.empty", nil, unix.XATTR_CREATE), "setxattr user.empty")
		binValue := make([]byte, 256)
		for i := range binValue {
			binValue[i] = byte(i)
		}
		must(t, unix.Setxattr(o.p("src/main.hardlink"), "user.binary", binValue, 0), "setxattr user.binary through the hard link")
		must(t, unix.Setxattr(o.p("src/main.go"), "user.doomed", []byte("x"), 0), "setxattr user.doomed")
		must(t, unix.Removexattr(o.p("src/main.go"), "user.doomed"), "removexattr user.doomed")
		wantErrno(t, "removexattr of a missing xattr", unix.Removexattr(o.p("src/main.go"), "user.doomed"), unix.ENODATA)
		_, err := unix.Getxattr(o.p("src/main.go"), "user.doomed", make([]byte, 10))
		wantErrno(t, "getxattr of a removed xattr", err, unix.ENODATA)
		_, err = unix.Getxattr(o.p("src/main.go"), "user.mime_type", make([]byte, 3))
		wantErrno(t, "getxattr with a short buffer", err, unix.ERANGE)
		mainXattrs := map[string][]byte{"user.mime_type": []byte("text/x-go; charset=utf-8"), "user.empty": {}, "user.binary": binValue}
		o.want["src/main.go"].xattrs = mainXattrs
		large := pattern(3, 8000)
		must(t, unix.Setxattr(o.p("data/o.big.bin"), "user.large", large, 0), "setxattr a large value")
		o.want["data/o.big.bin"].xattrs = map[string][]byte{"user.large": large}
		must(t, unix.Setxattr(o.p("src"), "user.dir", []byte("d"), 0), "setxattr on a directory")
		o.want["src"].xattrs = map[string][]byte{"user.dir": []byte("d")}
	}},
	{"fallocate", func(t *testing.T, o *opsRun) {
		// fallocate: allocate (extends), KEEP_SIZE (does not), PUNCH_HOLE
		// (reads as zeros, keeps the size).
		o.mkdir(t, "falloc", 0o755)
		o.writeFile(t, "falloc/pre", nil)
		f, err := os.OpenFile(o.p("falloc/pre"), os.O_RDWR, 0)
		must(t, err, "open falloc/pre")
		must(t, unix.Fallocate(int(f.Fd()), 0, 0, 1<<20), "fallocate falloc/pre 1 MiB")
		must(t, f.Close(), "close falloc/pre")
		o.want["falloc/pre"].content = make([]byte, 1<<20)
		o.writeFile(t, "falloc/keep", []byte("kept"))
		f, err = os.OpenFile(o.p("falloc/keep"), os.O_RDWR, 0)
		must(t, err, "open falloc/keep")
		must(t, unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, 1<<20), "fallocate KEEP_SIZE falloc/keep")
		must(t, f.Close(), "close falloc/keep")
		holes := bytes.Repeat([]byte{0xab}, 64<<10)
		o.writeFile(t, "falloc/holes", holes)
		f, err = os.OpenFile(o.p("falloc/holes"), os.O_RDWR, 0)
		must(t, err, "open falloc/holes")
		must(t, unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 4096, 8192), "fallocate PUNCH_HOLE falloc/holes")
		must(t, f.Close(), "close falloc/holes")
		clear(o.want["falloc/holes"].content[4096 : 4096+8192])
		o.readBack(t, "falloc/holes", o.want["falloc/holes"].content)
	}},
	{"o-direct", func(t *testing.T, o *opsRun) {
		// O_DIRECT with aligned buffers, as InnoDB writes its pages, leaving
		// a hole between them.
		o.mkdir(t, "direct", 0o755)
		fd, err := unix.Open(o.p("direct/t1.ibd"), unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_DIRECT, 0o660)
		must(t, err, "open O_DIRECT direct/t1.ibd")
		const page = 16 << 10
		ibd := make([]byte, 5*page)
		for _, pg := range []int{0, 1, 4} {
			b := alignedBuffer(page)
			copy(b, pattern(uint64(10+pg), page))
			n, err := unix.Pwrite(fd, b, int64(pg*page))
			if err != nil || n != page {
				t.Fatalf("O_DIRECT pwrite of page %d: %d, %v", pg, n, err)
			}
			copy(ibd[pg*page:], b)
		}
		must(t, unix.Fsync(fd), "fsync direct/t1.ibd")
		rb := alignedBuffer(5 * page)
		if n, err := unix.Pread(fd, rb, 0); err != nil || n != len(rb) || !bytes.Equal(rb, ibd) {
			t.Fatalf("O_DIRECT pread of direct/t1.ibd: %d, %v; content matches: %v", n, err, bytes.Equal(rb, ibd))
		}
		must(t, unix.Close(fd), "close direct/t1.ibd")
		o.want["direct/t1.ibd"] = &expectedFile{kind: unix.S_IFREG, perm: 0o660 &^ testUmask, content: ibd}
	}},
	{"copy", func(t *testing.T, o *opsRun) {
		// copy_file_range, which cp tries first (the kernel copies by itself
		// when the filesystem does not offer it), and a copy by read and write.
		o.mkdir(t, "copies", 0o755)
		src, err := os.Open(o.p("data/o.big.bin"))
		must(t, err, "open data/o.big.bin")
		dst, err := os.OpenFile(o.p("copies/o.big.copy"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		must(t, err, "create copies/o.big.copy")
		for copied := 0; copied < len(o.big); {
			n, err := unix.CopyFileRange(int(src.Fd()), nil, int(dst.Fd()), nil, len(o.big)-copied, 0)
			must(t, err, "copy_file_range to copies/o.big.copy at %d", copied)
			if n == 0 {
				t.Fatalf("copy_file_range to copies/o.big.copy stopped at %d of %d bytes", copied, len(o.big))
			}
			copied += n
		}
		must(t, dst.Close(), "close copies/o.big.copy")
		_, err = src.Seek(0, io.SeekStart)
		must(t, err, "rewind data/o.big.bin")
		dst, err = os.OpenFile(o.p("copies/o.big.cp"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		must(t, err, "create copies/o.big.cp")
		_, err = io.Copy(struct{ io.Writer }{dst}, struct{ io.Reader }{src}) // plain read and write, no copy_file_range
		must(t, err, "copy to copies/o.big.cp")
		must(t, dst.Close(), "close copies/o.big.cp")
		must(t, src.Close(), "close data/o.big.bin")
		o.want["copies/o.big.copy"] = &expectedFile{kind: unix.S_IFREG, perm: 0o644, content: o.big}
		o.want["copies/o.big.cp"] = &expectedFile{kind: unix.S_IFREG, perm: 0o644, content: o.big}
	}},
	{"mmap", func(t *testing.T, o *opsRun) {
		// mmap: git reads its packs through shared mappings; a shared
		// writable mapping writes back through msync.
		o.writeFile(t, "copies/mapped", pattern(4, 3*4096))
		f, err := os.OpenFile(o.p("copies/mapped"), os.O_RDWR, 0)
		must(t, err, "open copies/mapped")
		mapped, err := unix.Mmap(int(f.Fd()), 0, 3*4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		must(t, err, "mmap copies/mapped")
		if !bytes.Equal(mapped, o.want["copies/mapped"].content) {
			t.Errorf("copies/mapped reads differently through mmap")
		}
		copy(mapped[4000:], "written through a shared mapping")
		must(t, unix.Msync(mapped, unix.MS_SYNC), "msync copies/mapped")
		must(t, unix.Munmap(mapped), "munmap copies/mapped")
		must(t, f.Close(), "close copies/mapped")
		copy(o.want["copies/mapped"].content[4000:], "written through a shared mapping")
		o.readBack(t, "copies/mapped", o.want["copies/mapped"].content)
	}},
	{"mknod", func(t *testing.T, o *opsRun) {
		// mknod: FIFOs (which work as pipes on the mount) and a device node.
		o.mkdir(t, "ipc", 0o755)
		must(t, unix.Mkfifo(o.p("ipc/fifo"), 0o620), "mkfifo ipc/fifo")
		o.want["ipc/fifo"] = &expectedFile{kind: unix.S_IFIFO, perm: 0o620 &^ testUmask}
		must(t, unix.Mknod(o.p("ipc/fifo2"), unix.S_IFIFO|0o640, 0), "mknod S_IFIFO ipc/fifo2")
		o.want["ipc/fifo2"] = &expectedFile{kind: unix.S_IFIFO, perm: 0o640 &^ testUmask}
		pipe, err := os.OpenFile(o.p("ipc/fifo"), os.O_RDWR, 0)
		must(t, err, "open the FIFO")
		_, err = pipe.WriteString("ping")
		must(t, err, "write to the FIFO")
		got := make([]byte, 4)
		_, err = io.ReadFull(pipe, got)
		if err != nil || string(got) != "ping" {
			t.Errorf("read from the FIFO: %q, %v; want \"ping\"", got, err)
		}
		must(t, pipe.Close(), "close the FIFO")
		if os.Geteuid() == 0 {
			dev := unix.Mkdev(1, 3)
			must(t, unix.Mknod(o.p("ipc/null"), unix.S_IFCHR|0o666, int(dev)), "mknod S_IFCHR ipc/null")
			o.want["ipc/null"] = &expectedFile{kind: unix.S_IFCHR, perm: 0o666 &^ testUmask, rdev: dev}
		}
	}},
	{"dir-fsync", func(t *testing.T, o *opsRun) {
		// Directory fsync and fdatasync, as databases and git do after
		// creating or renaming files.
		for _, dir := range []string{".", "src", "cfg"} {
			d, err := os.Open(o.p(dir))
			must(t, err, "open directory %s", dir)
			must(t, d.Sync(), "fsync directory %s", dir)
			must(t, unix.Fdatasync(int(d.Fd())), "fdatasync directory %s", dir)
			must(t, d.Close(), "close directory %s", dir)
		}
	}},
	{"readdir", func(t *testing.T, o *opsRun) {
		// A directory of many entries with awkward names, read back by
		// readdir (the tree check lists everything).
		o.mkdir(t, "names", 0o755)
		for _, name := range []string{strings.Repeat("n", 255), "ünïcødé ☃", " leading space", "trailing.", "new\nline", "tab\tname", `back\slash`, "-dash", "#hash", "..dots"} {
			o.writeFile(t, "names/"+name, []byte(name))
		}
		for i := range 300 {
			o.writeFile(t, fmt.Sprintf("names/entry-%03d-%s", i, strings.Repeat("x", i%50)), nil)
		}
	}},
	{"statfs", func(t *testing.T, o *opsRun) {
		// statfs.
		var sfs unix.Statfs_t
		must(t, unix.Statfs(o.mnt, &sfs), "statfs")
		const fuseSuperMagic = 0x65735546
		if sfs.Type != fuseSuperMagic || sfs.Namelen != 255 || sfs.Bsize <= 0 || sfs.Blocks == 0 || sfs.Files <= sfs.Ffree {
			t.Errorf("statfs: type %#x, namelen %d, bsize %d, blocks %d, files %d, ffree %d; want a FUSE mount with NAME_MAX 255 and sizes",
				sfs.Type, sfs.Namelen, sfs.Bsize, sfs.Blocks, sfs.Files, sfs.Ffree)
		}
	}},
	{"chown-chmod", func(t *testing.T, o *opsRun) {
		// chown and chmod last but one (a write would not change them, but
		// they come after the content); a set-group-ID directory passes its
		// group and the bit to what is made in it, as git's shared
		// repositories rely on.
		if os.Geteuid() == 0 {
			must(t, os.Chown(o.p("src/main.go"), 1234, 5678), "chown src/main.go")
			must(t, os.Lchown(o.p("src/link"), 4321, 8765), "lchown src/link")
			o.want["src/link"].uid, o.want["src/link"].gid = 4321, 8765
			o.mkdir(t, "shared", 0o755)
			must(t, os.Chown(o.p("shared"), 0, 5678), "chown shared")
			// (unix.Chmod: os.Chmod would take 0o2000 for a permission bit
			// and drop it; os spells set-group-ID os.ModeSetgid.)
			must(t, unix.Chmod(o.p("shared"), 0o2775), "chmod g+s shared")
			o.want["shared"].perm, o.want["shared"].gid = 0o2775, 5678
			o.mkdir(t, "shared/objects", 0o755)
			o.want["shared/objects"].perm, o.want["shared/objects"].gid = 0o2755, 5678
			o.writeFile(t, "shared/HEAD", []byte("ref: refs/heads/main\n"))
			o.want["shared/HEAD"].gid = 5678
		} else {
			t.Log("not root: chown and set-group-ID inheritance are not tested")
		}
		must(t, os.Chmod(o.p("src/main.go"), 0o640), "chmod src/main.go")
		must(t, os.Chmod(o.p("src/pkg"), 0o700), "chmod src/pkg")
		o.want["src/pkg"].perm = 0o700
		mainFile := o.want["src/main.go"]
		mainFile.perm = 0o640
		if os.Geteuid() == 0 {
			mainFile.uid, mainFile.gid = 1234, 5678
		}
	}},
	{"utimensat", func(t *testing.T, o *opsRun) {
		// utimensat last of all (anything else would move mtime or ctime):
		// nanosecond times on a file, a directory and, without following it,
		// a symlink; UTIME_OMIT leaves a time alone.
		atime := unix.Timespec{Sec: 1_000_000_000, Nsec: 123_456_789}
		mtime := unix.Timespec{Sec: 1_234_567_890, Nsec: 987_654_321}
		for _, rel := range []string{"src/main.go", "src/pkg", "dangling"} {
			must(t, unix.UtimesNanoAt(unix.AT_FDCWD, o.p(rel), []unix.Timespec{atime, mtime}, unix.AT_SYMLINK_NOFOLLOW), "utimensat %s", rel)
			o.want[rel].atime, o.want[rel].mtime = &atime, &mtime
		}
		later := unix.Timespec{Sec: 1_500_000_000, Nsec: 1}
		must(t, unix.UtimesNanoAt(unix.AT_FDCWD, o.p("src/pkg"), []unix.Timespec{{Nsec: unix.UTIME_OMIT}, later}, 0), "utimensat src/pkg with UTIME_OMIT")
		o.want["src/pkg"].mtime = &later
	}},
}

// exerciseOperations performs the operations on the fresh mount at mnt, a
// subtest per step, and returns the tree they must leave. A failed step
// ends the test: the later ones build on it.
func exerciseOperations(t *testing.T, mnt string) expectedTree {
	o := &opsRun{mnt: mnt, want: expectedTree{}}
	for _, step := range opsSteps {
		if !t.Run(step.name, func(t *testing.T) { step.run(t, o) }) {
			t.Fatalf("step %s failed; the steps after it build on it", step.name)
		}
	}
	want := o.want

	// The hard link is the same inode as src/main.go, in every respect.
	mainFile := want["src/main.go"]
	link := *mainFile
	link.sameAs = "src/main.go"
	link.nlink, mainFile.nlink = 2, 2
	want["src/main.hardlink"] = &link
	return want
}

// TestNameTooLong checks that every call taking a name refuses one over
// NAME_MAX (255 bytes) with ENAMETOOLONG, and that 255 bytes work.
func TestNameTooLong(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt)
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	if err := os.WriteFile(p("file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{256, 300, 1000} {
		long := strings.Repeat("L", n)
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			_, err := os.Stat(p(long))
			wantErrno(t, "stat", err, unix.ENAMETOOLONG)
			_, err = os.Create(p(long))
			wantErrno(t, "create", err, unix.ENAMETOOLONG)
			wantErrno(t, "mkdir", os.Mkdir(p(long), 0o755), unix.ENAMETOOLONG)
			wantErrno(t, "symlink", os.Symlink("file", p(long)), unix.ENAMETOOLONG)
			wantErrno(t, "link", os.Link(p("file"), p(long)), unix.ENAMETOOLONG)
			wantErrno(t, "mkfifo", unix.Mkfifo(p(long), 0o644), unix.ENAMETOOLONG)
			wantErrno(t, "rename to", os.Rename(p("file"), p(long)), unix.ENAMETOOLONG)
			wantErrno(t, "rename from", os.Rename(p(long), p("other")), unix.ENAMETOOLONG)
			wantErrno(t, "unlink", unix.Unlink(p(long)), unix.ENAMETOOLONG)
			wantErrno(t, "rmdir", unix.Rmdir(p(long)), unix.ENAMETOOLONG)
		})
	}
	longest := strings.Repeat("M", 255)
	if err := os.Rename(p("file"), p(longest)); err != nil {
		t.Fatalf("rename to a 255-byte name: %v", err)
	}
	if err := os.Mkdir(p(strings.Repeat("D", 255)), 0o755); err != nil {
		t.Fatalf("mkdir of a 255-byte name: %v", err)
	}
	want := expectedTree{
		longest:                  {kind: unix.S_IFREG, perm: 0o644, content: []byte("x")},
		strings.Repeat("D", 255): {kind: unix.S_IFDIR, perm: 0o755},
	}
	want.check(t, mnt)
	m.unmount(t)
	checkStore(t, store, true)
	m = m.remount(t)
	want.check(t, mnt)
	m.unmount(t)
}

// TestFsyncReachesTheJournal checks that fsync and fdatasync of files and
// directories succeed and reach the journal, each of them: FUSE would hide an
// ENOSYS answer (the kernel then stops sending fsyncs and reports success
// without syncing), so the journal's own fsync counter in .stats is the
// witness.
func TestFsyncReachesTheJournal(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt)
	if err := os.Mkdir(filepath.Join(mnt, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(mnt, "dir", "file"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("durable"); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(filepath.Join(mnt, "dir"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	root, err := os.Open(mnt)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	calls := []struct {
		what string
		call func() error
	}{
		{"fsync of a file", f.Sync},
		{"fdatasync of a file", func() error { return unix.Fdatasync(int(f.Fd())) }},
		{"fsync of a directory", d.Sync},
		{"fdatasync of a directory", func() error { return unix.Fdatasync(int(d.Fd())) }},
		{"fsync of the root", root.Sync},
		{"fsync of a file again, nothing new", f.Sync},
	}
	for _, c := range calls {
		before := statUint(t, readStats(t, mnt), "fsyncs")
		if err := c.call(); err != nil {
			t.Errorf("%s: %v", c.what, err)
			continue
		}
		if after := statUint(t, readStats(t, mnt), "fsyncs"); after != before+1 {
			t.Errorf("%s: the journal counted %d fsyncs, want 1: it never reached xlogfs", c.what, after-before)
		}
	}
	// Writes through O_DSYNC and O_SYNC descriptors (InnoDB's redo log
	// with innodb_flush_method=O_DSYNC, dbench -s) are synced each. The
	// file is not open otherwise, so a passthrough mount opens it through
	// the daemon, which alone sees each write (a synchronous open that
	// joins passthrough opens of the file is written in passthrough, and
	// its appends' sizes reach the log only at the next fsync, close or log
	// force: see fusefs's passthrough.go).
	// The kernel sends a close's RELEASE without waiting for it: wait
	// until it has reached the daemon, or the synchronous open below may
	// still find the file open in passthrough and join it.
	closed := func(c io.Closer) {
		t.Helper()
		rel := func() uint64 {
			v, _ := strconv.ParseUint(readStats(t, mnt)["fuse_RELEASE"], 10, 64)
			return v
		}
		before := rel()
		c.Close()
		for deadline := time.Now().Add(5 * time.Second); rel() == before; {
			if time.Now().After(deadline) {
				t.Fatal("a close's RELEASE never reached the daemon")
			}
			time.Sleep(time.Millisecond)
		}
	}
	closed(f)
	// A file opened in passthrough keeps that kind until the kernel
	// forgets it (the kernel keeps its backing file): forgotten, it may
	// be opened through the daemon again.
	forgetInodes(t, mnt)
	for _, flag := range []int{unix.O_DSYNC, unix.O_SYNC} {
		sf, err := os.OpenFile(filepath.Join(mnt, "dir", "file"), os.O_WRONLY|flag, 0)
		if err != nil {
			t.Fatal(err)
		}
		before := statUint(t, readStats(t, mnt), "fsyncs")
		if _, err := sf.WriteAt([]byte("synced"), 0); err != nil {
			t.Errorf("write through an O_SYNC/O_DSYNC (%#x) descriptor: %v", flag, err)
		}
		if after := statUint(t, readStats(t, mnt), "fsyncs"); after == before {
			t.Errorf("a write through an O_SYNC/O_DSYNC (%#x) descriptor reached the journal with no fsync", flag)
		}
		closed(sf)
	}
	// fsync of a read-only descriptor works too (InnoDB and git open
	// some files read-only and sync them).
	ro, err := os.Open(filepath.Join(mnt, "dir", "file"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.Sync(); err != nil {
		t.Errorf("fsync of a read-only descriptor: %v", err)
	}
	ro.Close()
	d.Close()
	root.Close()
	m.unmount(t)
	checkStore(t, store, true)
}

// TestStatsFile checks the root's .stats file: hidden from readdir,
// readable, not writable, not removable, and printed by "xlogfs stats".
func TestStatsFile(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt, "--cksum-mode", "sector")
	statsPath := filepath.Join(mnt, ".stats")
	if err := os.WriteFile(filepath.Join(mnt, "visible"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	names, err := os.ReadDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0].Name() != "visible" {
		var list []string
		for _, n := range names {
			list = append(list, n.Name())
		}
		t.Errorf("readdir of the root lists %q, want only \"visible\" (.stats is hidden)", list)
	}
	fi, err := os.Stat(statsPath)
	if err != nil {
		t.Fatalf("stat .stats: %v", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o444 {
		t.Errorf(".stats: mode %v, want a read-only regular file (-r--r--r--)", fi.Mode())
	}
	stats := readStats(t, mnt)
	for name, want := range map[string]string{"cksum_mode": "sector", "journal": "meta"} {
		if stats[name] != want {
			t.Errorf(".stats %s = %q, want %q (as mounted)", name, stats[name], want)
		}
	}
	for _, name := range []string{"transactions", "log_syncs", "fsyncs", "checkpoints", "cksum_calls", "cksum_bytes",
		"cksum_seal_calls", "cksum_seal_bytes", "cksum_seal_ns", "cksum_copy_calls", "cksum_copy_bytes", "cksum_copy_ns", "forces_timed", "force_cksum_cpu_ns", "force_cksum_cpu_per_force_ns"} {
		statUint(t, stats, name)
	}
	if statUint(t, stats, "transactions") == 0 {
		t.Errorf(".stats transactions = 0 after a create and a write")
	}

	out, err := xlogfs("stats", mnt)
	if err != nil {
		t.Fatal(err)
	}
	// The command prints every name of .stats, in columns.
	cli := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			cli[f[0]] = strings.Join(f[1:], " ")
		}
	}
	for name := range stats {
		if _, ok := cli[name]; !ok {
			t.Errorf("xlogfs stats %s does not print %s, which .stats has", mnt, name)
		}
	}
	if cli["cksum_mode"] != "sector" {
		t.Errorf("xlogfs stats: cksum_mode %q, want sector", cli["cksum_mode"])
	}
	if _, err := xlogfs("stats", store); err == nil {
		t.Errorf("xlogfs stats of a directory that is not a mount succeeded")
	}

	_, err = os.OpenFile(statsPath, os.O_WRONLY, 0)
	wantErrno(t, "open .stats for writing", err, unix.EACCES)
	wantErrno(t, "unlink .stats", os.Remove(statsPath), unix.EPERM)
	wantErrno(t, "rename over .stats", os.Rename(filepath.Join(mnt, "visible"), statsPath), unix.EPERM)
	wantErrno(t, "mkdir .stats", os.Mkdir(statsPath, 0o755), unix.EEXIST)
	_, err = os.OpenFile(statsPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	wantErrno(t, "create .stats", err, unix.EEXIST)
	m.unmount(t)
	checkStore(t, store, true)
}

// TestUnlinkedOpenFile checks that a file unlinked (or renamed over) while
// open stays readable and writable until its last close, is freed then, and
// that its data file is gone from the store after the unmount; also that a
// removed directory still answers fstat through an open descriptor.
func TestUnlinkedOpenFile(t *testing.T) {
	t.Parallel()
	for _, journal := range journalModes {
		t.Run("journal="+journal, func(t *testing.T) {
			store, mnt := newStore(t)
			m := mountDaemon(t, store, mnt, "--journal", journal)
			path := filepath.Join(mnt, "ghost")
			content := pattern(7, 200_000)
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			usedBefore := inodesInUse(t, mnt)
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var st unix.Stat_t
			if err := unix.Fstat(int(f.Fd()), &st); err != nil {
				t.Fatal(err)
			}
			ino := st.Ino
			if err := os.Remove(path); err != nil {
				t.Fatalf("unlink of an open file: %v", err)
			}
			if _, err := os.Stat(path); !errors.Is(err, unix.ENOENT) {
				t.Errorf("stat of the unlinked name: %v, want ENOENT", err)
			}
			if names, _ := os.ReadDir(mnt); len(names) != 0 {
				t.Errorf("readdir still lists %d entries after the unlink", len(names))
			}
			if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Nlink != 0 || st.Size != int64(len(content)) {
				t.Errorf("fstat of the unlinked open file: nlink %d, size %d, %v; want 0, %d", st.Nlink, st.Size, err, len(content))
			}
			got := make([]byte, len(content))
			if _, err := f.ReadAt(got, 0); err != nil || !bytes.Equal(got, content) {
				t.Errorf("reading the unlinked open file: %v; content matches: %v", err, bytes.Equal(got, content))
			}
			if _, err := f.WriteAt([]byte("still here"), 10); err != nil {
				t.Errorf("writing the unlinked open file: %v", err)
			}
			if err := f.Sync(); err != nil {
				t.Errorf("fsync of the unlinked open file: %v", err)
			}
			buf := make([]byte, 10)
			if _, err := f.ReadAt(buf, 10); err != nil || string(buf) != "still here" {
				t.Errorf("reading back a write to the unlinked open file: %q, %v", buf, err)
			}
			if used := inodesInUse(t, mnt); used != usedBefore {
				t.Errorf("statfs while the unlinked file is open: %d inodes in use, want %d (it lives on)", used, usedBefore)
			}
			if err := f.Close(); err != nil {
				t.Fatalf("closing the unlinked file: %v", err)
			}
			// The release that frees the inode is asynchronous in the
			// kernel; the unmount below waits for it, so count after.
			t.Run("removed directory", func(t *testing.T) {
				dir := filepath.Join(mnt, "doomed")
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				d, err := os.Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				if err := unix.Rmdir(dir); err != nil {
					t.Fatalf("rmdir of an open directory: %v", err)
				}
				var st unix.Stat_t
				if err := unix.Fstat(int(d.Fd()), &st); err != nil {
					t.Errorf("fstat of an open directory after rmdir: %v; want its attributes (as on ext4, with nlink 0)", err)
				} else if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Mode&0o777 != 0o700 {
					t.Errorf("fstat of an open directory after rmdir: mode %#o, want a directory with 0700", st.Mode)
				}
				// The VFS itself answers getdents on a removed directory
				// (IS_DEADDIR: ENOENT, as on ext4); an empty list is fine too.
				if names, err := d.Readdirnames(-1); len(names) != 0 || err != nil && !errors.Is(err, unix.ENOENT) {
					t.Errorf("readdir of the removed directory: %q, %v; want nothing (or ENOENT, as on ext4)", names, err)
				}
				_, err = os.Create(filepath.Join(dir, "new"))
				wantErrno(t, "create in a removed directory", err, unix.ENOENT)
			})
			m.unmount(t)
			if _, err := os.Stat(filepath.Join(store, "data", fmt.Sprint(ino))); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the data file of the freed inode %d is still in the store after unmount (%v)", ino, err)
			}
			checkStore(t, store, true)
			m = m.remount(t)
			if used := inodesInUse(t, mnt); used != 1 {
				t.Errorf("after remount: %d inodes in use, want 1 (the root): the unlinked file leaked", used)
			}
			m.unmount(t)
		})
	}
}

// inodesInUse is statfs's count of used inodes.
func inodesInUse(t testing.TB, mnt string) uint64 {
	t.Helper()
	var s unix.Statfs_t
	if err := unix.Statfs(mnt, &s); err != nil {
		t.Fatalf("statfs %s: %v", mnt, err)
	}
	return s.Files - s.Ffree
}

// TestPosixACLXattr checks what setting a POSIX ACL does, as cp -a, tar
// --acls and rsync -A do after creating a file with restrictive
// permissions: an ACL equivalent to a mode must either be refused with
// EOPNOTSUPP (ACLs unsupported: the tools then chmod) or set that mode.
// The kernel passes system.posix_acl_* through to a FUSE daemon that did
// not negotiate FUSE_POSIX_ACL; stored as an inert xattr, it would leave
// the file with the wrong permissions.
func TestPosixACLXattr(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt)
	path := filepath.Join(mnt, "copied")
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := unix.Setxattr(path, "system.posix_acl_access", minimalACL(0o644), 0)
	var st unix.Stat_t
	if serr := unix.Stat(path, &st); serr != nil {
		t.Fatal(serr)
	}
	switch {
	case errors.Is(err, unix.EOPNOTSUPP):
		// ACLs are not supported; tools fall back to chmod.
	case err != nil:
		t.Errorf("setxattr system.posix_acl_access: %v, want success or EOPNOTSUPP", err)
	case st.Mode&0o777 != 0o644:
		t.Errorf("setxattr system.posix_acl_access of the ACL u::rw-,g::r--,o::r-- succeeded, but the mode is %#o, want 0644: "+
			"the ACL was kept as an inert xattr (cp -a leaves files with wrong permissions this way); refuse system.posix_acl_* with EOPNOTSUPP or apply it",
			st.Mode&0o777)
	}
	m.unmount(t)
	checkStore(t, store, true)
}

// minimalACL encodes the POSIX ACL equivalent to perm in the kernel's xattr
// format (posix_acl_xattr.h): version 2, then (tag, perm, id) entries.
func minimalACL(perm uint32) []byte {
	const undefinedID = 0xffffffff
	entries := []struct{ tag, perm uint16 }{
		{0x01, uint16(perm >> 6 & 7)}, // ACL_USER_OBJ
		{0x04, uint16(perm >> 3 & 7)}, // ACL_GROUP_OBJ
		{0x20, uint16(perm & 7)},      // ACL_OTHER
	}
	b := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range entries {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, undefinedID)
	}
	return b
}

// TestReadWhileReplaced has a reader open, fstat and read a file that a
// writer keeps replacing by renaming a new version over it (the atomic
// save of editors, git and package managers). The name always exists, so
// every open must succeed, and an open descriptor must stay usable after the
// file it refers to is replaced.
func TestReadWhileReplaced(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt)
	path, tmp := filepath.Join(mnt, "config"), filepath.Join(mnt, "config.tmp")
	version := func(i int) []byte { return []byte(fmt.Sprintf("version %06d\n", i)) }
	if err := os.WriteFile(path, version(0), 0o644); err != nil {
		t.Fatal(err)
	}
	const versions = 2000
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		for i := 1; i <= versions; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := os.WriteFile(tmp, version(i), 0o644); err != nil {
				done <- fmt.Errorf("writing version %d: %w", i, err)
				return
			}
			if err := os.Rename(tmp, path); err != nil {
				done <- fmt.Errorf("renaming version %d into place: %w", i, err)
				return
			}
		}
		done <- nil
	}()
	readOnce := func(n int) error {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("open #%d of a name that always exists: %w", n, err)
		}
		defer f.Close()
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			return fmt.Errorf("fstat #%d of an open descriptor whose file may have been replaced: %w", n, err)
		}
		b, err := io.ReadAll(f)
		if err != nil || len(b) != len(version(0)) || !strings.HasPrefix(string(b), "version ") {
			return fmt.Errorf("read #%d of an open descriptor whose file may have been replaced: %q, %v", n, b, err)
		}
		return nil
	}
	var readErr, writeErr error
	reads := 0
	for writing := true; writing && readErr == nil; reads++ {
		select {
		case writeErr = <-done:
			writing = false
		default:
			readErr = readOnce(reads)
		}
	}
	if readErr != nil {
		close(stop)
		writeErr = <-done
		t.Error(readErr)
	}
	if writeErr != nil {
		t.Error(writeErr)
	}
	t.Logf("%d reads while the file was replaced", reads)
	m.unmount(t)
	checkStore(t, store, true)
}
