package tests

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRealTools runs tar, cp -a and git on a mount, as users will: tar
// extracts and cp -a copies a tree holding every kind of file, with
// permissions, times, hard links and xattrs, and both copies must equal the
// original; git builds a repository, packs it and checks it. After an
// unmount and a remount the copies must still equal the original and the
// repository must still pass git fsck.
func TestRealTools(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"tar", "cp"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing: %v (it is part of every Debian system)", tool, err)
		}
	}
	src := filepath.Join(t.TempDir(), "tree")
	makeSourceTree(t, src)
	archive := filepath.Join(t.TempDir(), "tree.tar")
	run(t, "", "tar", "--format=posix", "--xattrs", "--xattrs-include=user.*", "-cf", archive, "-C", src, ".")

	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt)
	extracted, copied := filepath.Join(mnt, "extracted"), filepath.Join(mnt, "copied")
	if err := os.Mkdir(extracted, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "", "tar", "--xattrs", "--xattrs-include=user.*", "-xpf", archive, "-C", extracted)
	run(t, "", "cp", "-a", src, copied)
	compareTrees(t, "tar -x", src, extracted)
	compareTrees(t, "cp -a", src, copied)

	git, gitErr := exec.LookPath("git")
	repo := filepath.Join(mnt, "repo")
	var head string
	if gitErr != nil {
		t.Logf("git is not installed: the git part is not run (%v)", gitErr)
	} else {
		gitCmd := func(args ...string) string {
			t.Helper()
			return run(t, repo, git, append([]string{"-c", "user.name=xlogfs", "-c", "user.email=tests@xlogfs", "-c", "core.fsync=all", "-c", "gc.auto=0"}, args...)...)
		}
		run(t, mnt, git, "init", "-q", "-b", "main", repo)
		for i := range 3 {
			run(t, "", "cp", "-a", src, filepath.Join(repo, fmt.Sprintf("commit%d", i)))
			gitCmd("add", "-A")
			gitCmd("commit", "-q", "-m", fmt.Sprintf("commit %d", i))
		}
		gitCmd("gc", "-q", "--aggressive")
		gitCmd("fsck", "--strict", "--no-progress")
		head = strings.TrimSpace(gitCmd("rev-parse", "HEAD"))
		if status := gitCmd("status", "--porcelain"); status != "" {
			t.Errorf("git status after committing everything:\n%s", status)
		}
	}

	m.unmount(t)
	checkStore(t, store, true)
	m = m.remount(t)
	compareTrees(t, "tar -x, after a remount", src, extracted)
	compareTrees(t, "cp -a, after a remount", src, copied)
	if gitErr == nil {
		run(t, repo, git, "fsck", "--strict", "--no-progress")
		if got := strings.TrimSpace(run(t, repo, git, "rev-parse", "HEAD")); got != head {
			t.Errorf("git HEAD after a remount is %s, was %s", got, head)
		}
		if status := run(t, repo, git, "status", "--porcelain"); status != "" {
			t.Errorf("git status after a remount:\n%s", status)
		}
	}
	m.unmount(t)
	checkStore(t, store, true)
}

// run runs a command in dir and returns its stdout; failing is fatal.
func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.String()
}

// makeSourceTree makes, on the local disk, a tree with every kind of file
// tar and cp must reproduce.
func makeSourceTree(t *testing.T, root string) {
	t.Helper()
	p := func(rel string) string { return filepath.Join(root, rel) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"", "a", "a/b", "a/b/c", "empty"} {
		must(os.Mkdir(p(d), 0o755))
	}
	for i, size := range []int{0, 1, 4095, 4096, 100_000, 1 << 20} {
		must(os.WriteFile(p(fmt.Sprintf("a/file%d", i)), pattern(uint64(100+i), size), 0o644))
	}
	must(os.WriteFile(p("a/b/c/deep"), []byte("deep"), 0o600))
	must(os.WriteFile(p("a/b/script.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755))
	must(os.WriteFile(p("readonly"), []byte("ro"), 0o444))
	must(os.Link(p("a/file2"), p("a/b/file2.hardlink")))
	must(os.Symlink("../file1", p("a/b/up.link")))
	must(os.Symlink("/nowhere", p("dangling.link")))
	must(unix.Mkfifo(p("a/fifo"), 0o640))
	must(unix.Setxattr(p("a/file3"), "user.origin", []byte("source tree"), 0))
	must(unix.Setxattr(p("a/b"), "user.dir", []byte("yes"), 0))
	must(unix.Chmod(p("empty"), 0o1777))
	// Times last, deepest first, as a directory's mtime moves when an
	// entry is made in it.
	var paths []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		paths = append(paths, path)
		return err
	})
	slices.Reverse(paths)
	for i, path := range paths {
		ts := []unix.Timespec{{Sec: 1_600_000_000 + int64(i), Nsec: 111}, {Sec: 1_500_000_000 + int64(i)*7, Nsec: int64(i) * 1000}}
		must(unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, unix.AT_SYMLINK_NOFOLLOW))
	}
}

// treeEntry is what compareTrees compares of one path.
type treeEntry struct {
	Mode     uint32
	Uid, Gid uint32
	Size     int64
	Mtime    unix.Timespec
	Content  string // regular files
	Target   string // symlinks
	Xattrs   string
	LinkedTo string // the first path with the same inode, for hard links
}

// compareTrees fails the test where the tree at got differs from want in
// type, permissions, owner, size, mtime, content, symlink target, xattrs or
// hard-link structure.
func compareTrees(t *testing.T, what, want, got string) {
	t.Helper()
	w, g := readTree(t, want), readTree(t, got)
	var diffs []string
	for _, rel := range slices.Sorted(maps.Keys(w)) {
		ge, ok := g[rel]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s is missing", rel))
		case ge != w[rel]:
			diffs = append(diffs, fmt.Sprintf("%s differs:\n got  %s\n want %s", rel, ge, w[rel]))
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(g)) {
		if _, ok := w[rel]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s is extra", rel))
		}
	}
	const show = 4
	for _, d := range diffs[:min(show, len(diffs))] {
		t.Errorf("%s: %s", what, d)
	}
	if len(diffs) > show {
		t.Errorf("%s: and %d more differences", what, len(diffs)-show)
	}
}

func (e treeEntry) String() string {
	if len(e.Content) > 16 {
		e.Content = fmt.Sprintf("%x…(%d bytes)", e.Content[:8], len(e.Content))
	}
	type plain treeEntry // without the String method
	return fmt.Sprintf("%+v", plain(e))
}

func readTree(t *testing.T, root string) map[string]treeEntry {
	t.Helper()
	tree := map[string]treeEntry{}
	firstPath := map[uint64]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			return err
		}
		e := treeEntry{Mode: st.Mode, Uid: st.Uid, Gid: st.Gid, Mtime: st.Mtim}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			e.Size, e.Content = st.Size, string(b)
			if st.Nlink > 1 {
				if first, ok := firstPath[st.Ino]; ok {
					e.LinkedTo = first
				} else {
					firstPath[st.Ino] = rel
				}
			}
		case unix.S_IFLNK:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			e.Target = target
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			xa, err := readXattrs(path)
			if err != nil {
				return err
			}
			for _, k := range slices.Sorted(maps.Keys(xa)) {
				e.Xattrs += fmt.Sprintf("%s=%q ", k, xa[k])
			}
		}
		tree[rel] = e
		return nil
	})
	if err != nil {
		t.Fatalf("reading the tree %s: %v", root, err)
	}
	return tree
}
