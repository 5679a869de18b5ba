package tests

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// expectedFile is what one path in a mounted tree must be.
type expectedFile struct {
	kind    uint32            // unix.S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO, S_IFCHR
	perm    uint32            // mode & 07777
	uid     uint32            //
	gid     uint32            //
	content []byte            // regular files: the whole content
	target  string            // symlinks
	rdev    uint64            // device nodes
	xattrs  map[string][]byte // the exact set of xattrs (nil: none)
	nlink   uint32            // files: the link count (0: 1); directories: computed from the tree
	sameAs  string            // a hard link: must have the inode of this path
	atime   *unix.Timespec    // set with utimensat: must be exactly this
	mtime   *unix.Timespec
}

// expectedTree maps each path under the mount point to what it must be; the
// tree must hold exactly these paths.
type expectedTree map[string]*expectedFile

// check compares the mounted tree at mnt with want, naming every mismatch.
func (want expectedTree) check(t testing.TB, mnt string) {
	t.Helper()
	got := map[string]bool{}
	err := filepath.WalkDir(mnt, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == mnt {
			return nil
		}
		rel, _ := filepath.Rel(mnt, path)
		got[rel] = true
		// readdir's d_type must agree with the inode's type.
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			return fmt.Errorf("lstat of %s, listed by readdir: %w", rel, err)
		}
		if fileModeType(st.Mode) != d.Type() {
			t.Errorf("%s: readdir says type %v, stat says %v", rel, d.Type(), fileModeType(st.Mode))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", mnt, err)
	}
	for _, rel := range slices.Sorted(maps.Keys(got)) {
		if want[rel] == nil {
			t.Errorf("%s: exists, but nothing should be there", rel)
		}
	}
	var root unix.Stat_t
	if err := unix.Stat(mnt, &root); err != nil {
		t.Fatalf("stat %s: %v", mnt, err)
	} else if want := 2 + uint64(want.subdirs(".")); uint64(root.Nlink) != want {
		t.Errorf("the root: %d links, want %d", root.Nlink, want)
	}
	inodes := map[uint64]bool{}
	for _, rel := range slices.Sorted(maps.Keys(want)) {
		w := want[rel]
		if !got[rel] {
			t.Errorf("%s: missing from readdir", rel)
		}
		path := filepath.Join(mnt, rel)
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		inodes[st.Ino] = true
		if st.Mode&unix.S_IFMT != w.kind {
			t.Errorf("%s: type %#o, want %#o", rel, st.Mode&unix.S_IFMT, w.kind)
			continue
		}
		if w.kind != unix.S_IFLNK && st.Mode&0o7777 != w.perm {
			t.Errorf("%s: permissions %#o, want %#o", rel, st.Mode&0o7777, w.perm)
		}
		if st.Uid != w.uid || st.Gid != w.gid {
			t.Errorf("%s: owner %d:%d, want %d:%d", rel, st.Uid, st.Gid, w.uid, w.gid)
		}
		wantNlink := max(w.nlink, 1)
		if w.kind == unix.S_IFDIR {
			wantNlink = 2 + uint32(want.subdirs(rel))
		}
		if uint32(st.Nlink) != wantNlink {
			t.Errorf("%s: %d links, want %d", rel, st.Nlink, wantNlink)
		}
		if w.sameAs != "" {
			var other unix.Stat_t
			if err := unix.Lstat(filepath.Join(mnt, w.sameAs), &other); err != nil || other.Ino != st.Ino {
				t.Errorf("%s: inode %d, want the inode of its hard link %s (%d, %v)", rel, st.Ino, w.sameAs, other.Ino, err)
			}
		}
		if w.atime != nil && st.Atim != *w.atime {
			t.Errorf("%s: atime %v, want %v (set by utimensat)", rel, st.Atim, *w.atime)
		}
		if w.mtime != nil && st.Mtim != *w.mtime {
			t.Errorf("%s: mtime %v, want %v (set by utimensat)", rel, st.Mtim, *w.mtime)
		}
		switch w.kind {
		case unix.S_IFREG:
			if st.Size != int64(len(w.content)) {
				t.Errorf("%s: size %d, want %d", rel, st.Size, len(w.content))
			}
			if b, err := os.ReadFile(path); err != nil {
				t.Errorf("%s: %v", rel, err)
			} else if !bytes.Equal(b, w.content) {
				t.Errorf("%s: content differs from what was written: %s", rel, describeDiff(b, w.content))
			}
		case unix.S_IFLNK:
			if target, err := os.Readlink(path); err != nil || target != w.target {
				t.Errorf("%s: readlink = %q, %v; want %q", rel, target, err, w.target)
			}
			if st.Size != int64(len(w.target)) {
				t.Errorf("%s: symlink size %d, want %d (its target's length)", rel, st.Size, len(w.target))
			}
		case unix.S_IFCHR, unix.S_IFBLK:
			if st.Rdev != w.rdev {
				t.Errorf("%s: rdev %#x, want %#x", rel, st.Rdev, w.rdev)
			}
		}
		if w.kind != unix.S_IFLNK {
			if xa, err := readXattrs(path); err != nil {
				t.Errorf("%s: %v", rel, err)
			} else if !maps.EqualFunc(xa, w.xattrs, bytes.Equal) {
				t.Errorf("%s: xattrs %q, want %q", rel, xa, w.xattrs)
			}
		}
	}
	// Every inode in use is in the tree, plus the root: nothing leaked.
	var sfs unix.Statfs_t
	if err := unix.Statfs(mnt, &sfs); err != nil {
		t.Fatalf("statfs %s: %v", mnt, err)
	}
	if used := sfs.Files - sfs.Ffree; used != uint64(len(inodes))+1 {
		t.Errorf("statfs: %d inodes in use, but the tree has %d plus the root", used, len(inodes))
	}
}

// rename moves the expectations of from, and of everything under it, to
// to, as rename(2) moves the tree; what was at to is replaced.
func (want expectedTree) rename(from, to string) {
	want.removeTree(to)
	moved := want.takeTree(from)
	for rel, w := range moved {
		want[to+strings.TrimPrefix(rel, from)] = w
	}
}

// exchange swaps the expectations of a and b (and what is under them), as
// RENAME_EXCHANGE swaps the names.
func (want expectedTree) exchange(a, b string) {
	ta, tb := want.takeTree(a), want.takeTree(b)
	for rel, w := range ta {
		want[b+strings.TrimPrefix(rel, a)] = w
	}
	for rel, w := range tb {
		want[a+strings.TrimPrefix(rel, b)] = w
	}
}

// takeTree removes and returns the expectations of root and below.
func (want expectedTree) takeTree(root string) expectedTree {
	out := expectedTree{}
	for rel, w := range want {
		if rel == root || strings.HasPrefix(rel, root+"/") {
			out[rel] = w
			delete(want, rel)
		}
	}
	return out
}

func (want expectedTree) removeTree(root string) { want.takeTree(root) }

// subdirs counts the directories directly in dir.
func (want expectedTree) subdirs(dir string) int {
	n := 0
	for rel, w := range want {
		if w.kind == unix.S_IFDIR && filepath.Dir(rel) == dir {
			n++
		}
	}
	return n
}

func fileModeType(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return 0
}

// readXattrs returns all extended attributes of path (not following a
// symlink), nil when there are none.
func readXattrs(path string) (map[string][]byte, error) {
	size, err := unix.Llistxattr(path, nil)
	if err != nil {
		return nil, fmt.Errorf("llistxattr: %w", err)
	}
	if size == 0 {
		return nil, nil
	}
	buf := make([]byte, size)
	n, err := unix.Llistxattr(path, buf)
	if err != nil {
		return nil, fmt.Errorf("llistxattr: %w", err)
	}
	out := map[string][]byte{}
	for _, name := range strings.Split(strings.TrimSuffix(string(buf[:n]), "\x00"), "\x00") {
		vsize, err := unix.Lgetxattr(path, name, nil)
		if err != nil {
			return nil, fmt.Errorf("lgetxattr %s: %w", name, err)
		}
		v := make([]byte, vsize)
		if vsize > 0 {
			if _, err := unix.Lgetxattr(path, name, v); err != nil {
				return nil, fmt.Errorf("lgetxattr %s: %w", name, err)
			}
		}
		out[name] = v
	}
	return out, nil
}

// describeDiff says where two byte slices first differ.
func describeDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	show := func(b []byte) []byte { return b[i:min(len(b), i+16)] }
	return fmt.Sprintf("%d bytes, want %d; first difference at offset %d: got % x, want % x", len(got), len(want), i, show(got), show(want))
}

// inodeState is what stat says about one path, minus atime (which a read
// might legitimately change).
type inodeState struct {
	Ino, Nlink, Rdev uint64
	Mode, Uid, Gid   uint32
	Size             int64
	Mtim, Ctim       unix.Timespec
}

// snapshotTree records the stat of every path under mnt, to compare a tree
// before an unmount with the tree after the next mount.
func snapshotTree(t testing.TB, mnt string) map[string]inodeState {
	t.Helper()
	snap := map[string]inodeState{}
	err := filepath.WalkDir(mnt, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			return err
		}
		rel, _ := filepath.Rel(mnt, path)
		snap[rel] = inodeState{Ino: st.Ino, Nlink: uint64(st.Nlink), Rdev: st.Rdev, Mode: st.Mode, Uid: st.Uid, Gid: st.Gid,
			Size: st.Size, Mtim: st.Mtim, Ctim: st.Ctim}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", mnt, err)
	}
	return snap
}

// compareSnapshots fails the test where after differs from before.
func compareSnapshots(t testing.TB, what string, before, after map[string]inodeState) {
	t.Helper()
	for _, rel := range slices.Sorted(maps.Keys(before)) {
		a, ok := after[rel]
		switch {
		case !ok:
			t.Errorf("%s: %s is gone", what, rel)
		case a != before[rel]:
			t.Errorf("%s: %s changed:\n before %+v\n after  %+v", what, rel, before[rel], a)
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[rel]; !ok {
			t.Errorf("%s: %s appeared", what, rel)
		}
	}
}

// wantErrno fails the test unless err is the errno want; what names the call.
func wantErrno(t testing.TB, what string, err error, want syscall.Errno) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v (%s)", what, err, want, unix.ErrnoName(want))
	}
}
