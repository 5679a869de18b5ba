package tests

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The unprivileged user the set-ID tests run their helper as: not root,
// without capabilities, in its own group and one supplementary group.
const (
	testUID       = 2001
	testGID       = 2001
	testSuppGroup = 3001 // a supplementary group of the test user
	strangerGID   = 4001 // a group the test user is not in
)

// setidHelper is the helper process (see runHelper) that the set-ID tests
// run as the unprivileged test user:
//
//	setid whoami             prints "uid U gid G groups G1,G2 capeff HEX" from /proc/self/status
//	setid write PATH         appends a byte
//	setid truncate PATH      truncate(2) to 1 byte
//	setid fallocate PATH     fallocate(2) of 8 KiB
//	setid otrunc PATH        open(O_WRONLY|O_TRUNC)
//	setid chgrp GID PATH     chown(PATH, -1, GID)
//	setid create MODE PATH   open(O_CREAT|O_EXCL, MODE) (the umask applies)
//
// It exits 0 when the call succeeded, 1 with the error on stderr.
func setidHelper(args []string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "setid %s: %v\n", strings.Join(args, " "), err)
		return 1
	}
	if len(args) == 0 {
		return fail(fmt.Errorf("no operation"))
	}
	switch op, rest := args[0], args[1:]; {
	case op == "whoami" && len(rest) == 0:
		f, err := os.Open("/proc/self/status")
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		v := map[string]string{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, val, ok := strings.Cut(sc.Text(), ":"); ok {
				v[k] = strings.Fields(val + " -")[0]
				if k == "Groups" {
					v[k] = strings.Join(strings.Fields(val), ",")
				}
			}
		}
		fmt.Printf("uid %s gid %s groups %s capeff %s\n", v["Uid"], v["Gid"], v["Groups"], v["CapEff"])
	case op == "write" && len(rest) == 1:
		f, err := os.OpenFile(rest[0], os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return fail(err)
		}
		if _, err := f.Write([]byte("w")); err != nil {
			return fail(err)
		}
		if err := f.Close(); err != nil {
			return fail(err)
		}
	case op == "dwrite" && len(rest) == 1:
		// An O_DIRECT write: the kernel sends it to the daemon as it is,
		// flagged FUSE_WRITE_KILL_SUIDGID, without first dropping the
		// bits itself as its cached writes do.
		f, err := os.OpenFile(rest[0], os.O_WRONLY|unix.O_DIRECT, 0)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		buf, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
		if err != nil {
			return fail(err)
		}
		defer unix.Munmap(buf)
		if _, err := f.WriteAt(buf, 0); err != nil {
			return fail(err)
		}
	case op == "fallocate" && len(rest) == 1:
		f, err := os.OpenFile(rest[0], os.O_WRONLY, 0)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		if err := unix.Fallocate(int(f.Fd()), 0, 0, 8192); err != nil {
			return fail(err)
		}
	case op == "truncate" && len(rest) == 1:
		if err := unix.Truncate(rest[0], 1); err != nil {
			return fail(err)
		}
	case op == "otrunc" && len(rest) == 1:
		fd, err := unix.Open(rest[0], unix.O_WRONLY|unix.O_TRUNC, 0)
		if err != nil {
			return fail(err)
		}
		unix.Close(fd)
	case op == "chgrp" && len(rest) == 2:
		gid, err := strconv.Atoi(rest[0])
		if err != nil {
			return fail(err)
		}
		if err := unix.Chown(rest[1], -1, gid); err != nil {
			return fail(err)
		}
	case op == "create" && len(rest) == 2:
		mode, err := strconv.ParseUint(rest[0], 8, 32)
		if err != nil {
			return fail(err)
		}
		fd, err := unix.Open(rest[1], unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, uint32(mode))
		if err != nil {
			return fail(err)
		}
		unix.Close(fd)
	default:
		return fail(fmt.Errorf("unknown operation or wrong arguments"))
	}
	return 0
}

// worldDir returns a new directory that every user may search (t.TempDir
// is private to root), removed when the test ends.
func worldDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "xlogfs-world-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// unprivileged runs helpers as the test user. The test binary lives in a
// directory only root may enter, so it runs from a copy in a world one.
type unprivileged struct {
	once sync.Once
	bin  string
	err  error
}

func (u *unprivileged) command(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	u.once.Do(func() {
		dir := worldDir(t)
		u.bin = filepath.Join(dir, "tests.test")
		u.err = copyFile(os.Args[0], u.bin, 0o755)
	})
	if u.err != nil {
		t.Fatalf("copying the test binary for the unprivileged helper: %v", u.err)
	}
	cmd := exec.Command(u.bin, args...)
	cmd.Env = append(os.Environ(), helperEnv+"=setid")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{
		Uid: testUID, Gid: testGID, Groups: []uint32{testGID, testSuppGroup},
	}}
	return cmd
}

// run runs the helper and fails the test if it fails.
func (u *unprivileged) run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := u.command(t, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("as uid %d: setid %s: %v: %s", testUID, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func copyFile(from, to string, perm os.FileMode) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// requireRoot fails a test that must set up files for other users.
func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create files owned by another user and to run a helper as that user")
	}
}

// fileCapability is a valid security.capability value (VFS_CAP_REVISION_2,
// CAP_NET_BIND_SERVICE permitted), which the kernel checks before storing.
func fileCapability() []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0x02000000)
	for _, w := range []uint32{1 << unix.CAP_NET_BIND_SERVICE, 0, 0, 0} {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

// setidCase is one change to a file and the mode it must leave, from
// chown(2) and the VFS's rules for a caller without CAP_FSETID (the test
// user) or with it (root): S_ISUID goes on every write, truncate and
// chown; S_ISGID goes with it when the group may execute, and when not,
// only for a caller outside the file's group; root's writes keep both, its
// chowns do not; directories keep theirs.
type setidCase struct {
	name     string
	dir      bool   // a directory instead of a regular file
	mode     uint32 // mode & 07777 before
	uid, gid uint32 // owner before
	op       string // write, truncate, otrunc, fallocate, chgrp (to testSuppGroup): as the test user; root-write, root-fallocate, root-chown: as root
	want     uint32 // mode & 07777 after
}

var setidCases = []setidCase{
	{"owner writes suid", false, 0o4755, testUID, testGID, "write", 0o0755},
	{"owner writes sgid+gx", false, 0o2755, testUID, testGID, "write", 0o0755},
	{"owner writes suid+sgid", false, 0o6755, testUID, testGID, "write", 0o0755},
	{"owner writes suid+sgid with O_DIRECT", false, 0o6755, testUID, testGID, "dwrite", 0o0755},
	{"other user writes suid with O_DIRECT", false, 0o4666, 0, 0, "dwrite", 0o0666},
	{"member writes sgid without gx", false, 0o2664, testUID, testGID, "write", 0o2664},
	{"outsider writes sgid without gx", false, 0o2646, 0, strangerGID, "write", 0o0646},
	{"other user writes suid", false, 0o4666, 0, 0, "write", 0o0666},
	{"owner truncates", false, 0o6775, testUID, testGID, "truncate", 0o0775},
	{"owner opens O_TRUNC", false, 0o4755, testUID, testGID, "otrunc", 0o0755},
	{"owner fallocates", false, 0o6755, testUID, testGID, "fallocate", 0o0755},
	{"owner writes without set-ID bits", false, 0o0755, testUID, testGID, "write", 0o0755},
	{"owner chgrp suid+sgid+gx", false, 0o6755, testUID, testGID, "chgrp", 0o0755},
	{"owner chgrp sgid without gx", false, 0o2644, testUID, testGID, "chgrp", 0o2644},
	{"root chown suid+sgid+gx", false, 0o6555, testUID, testGID, "root-chown", 0o0555},
	{"root chown sgid without gx", false, 0o2644, testUID, testGID, "root-chown", 0o2644},
	{"root writes suid+sgid", false, 0o6755, testUID, testGID, "root-write", 0o6755},
	{"root fallocates suid+sgid", false, 0o6755, testUID, testGID, "root-fallocate", 0o6755},
	{"root chown of a sgid directory", true, 0o2755, testUID, testGID, "root-chown", 0o2755},
}

// TestSetIDSemantics runs each setidCase on an xlogfs mount (--allow-other,
// so the test user may use it) and on a directory of the host filesystem,
// and holds both to the expected mode: the rules say what is right, and
// the host's kernel shows the rules are read as Linux reads them. It checks
// file capabilities the same way, that open(O_CREAT, 0) makes mode 0, and
// that the modes survive a remount (each drop was logged). The helper must
// really be unprivileged: it reports its uid and an empty CapEff.
func TestSetIDSemantics(t *testing.T) {
	requireRoot(t)
	t.Parallel()
	var u unprivileged
	who := strings.TrimSpace(u.run(t, "whoami"))
	if want := fmt.Sprintf("uid %d gid %d groups %d,%d capeff 0000000000000000", testUID, testGID, testGID, testSuppGroup); who != want {
		t.Fatalf("the unprivileged helper runs as %q, want %q", who, want)
	}

	base := worldDir(t)
	store, mnt, native := filepath.Join(base, "store"), filepath.Join(base, "mnt"), filepath.Join(base, "native")
	// The same cases with writes through the daemon: with passthrough
	// (the default where the kernel allows it) a write never reaches the
	// daemon, and the kernel asks it to drop the bits with a SETATTR; with
	// --passthrough=off the daemon's write path must drop them itself
	// (FUSE_WRITE_KILL_SUIDGID).
	storeOff, mntOff := filepath.Join(base, "store-off"), filepath.Join(base, "mnt-off")
	for _, d := range []string{store, mnt, native, storeOff, mntOff} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m := mountDaemon(t, store, mnt, "--allow-other")
	mOff := mountDaemon(t, storeOff, mntOff, "--allow-other", "--passthrough=off")

	modes := map[string]uint32{} // on the mounts, by path, to compare after the remount
	targets := []struct{ name, root string }{{"xlogfs", mnt}, {"xlogfs-passthrough-off", mntOff}, {"native", native}}
	for _, target := range targets {
		t.Run(target.name, func(t *testing.T) {
			for i, c := range setidCases {
				path := filepath.Join(target.root, fmt.Sprintf("case%02d", i))
				if c.dir {
					mustOK(t, os.Mkdir(path, 0o755))
				} else {
					mustOK(t, os.WriteFile(path, []byte("data"), 0o644))
				}
				// chmod after chown: the chown would drop the bits.
				mustOK(t, os.Chown(path, int(c.uid), int(c.gid)))
				mustOK(t, unix.Chmod(path, c.mode))
				switch c.op {
				case "chgrp":
					u.run(t, "chgrp", fmt.Sprint(testSuppGroup), path)
				case "root-write":
					f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
					mustOK(t, err)
					_, err = f.Write([]byte("r"))
					mustOK(t, err)
					mustOK(t, f.Close())
				case "root-fallocate":
					f, err := os.OpenFile(path, os.O_WRONLY, 0)
					mustOK(t, err)
					mustOK(t, unix.Fallocate(int(f.Fd()), 0, 0, 8192))
					mustOK(t, f.Close())
				case "root-chown":
					mustOK(t, os.Chown(path, testUID+1, -1))
				default:
					u.run(t, c.op, path)
				}
				var st unix.Stat_t
				mustOK(t, unix.Stat(path, &st))
				if got := st.Mode & 0o7777; got != c.want {
					t.Errorf("%s: %s on mode %#o: mode %#o, want %#o", c.name, c.op, c.mode, got, c.want)
				}
				if target.root != native {
					modes[path] = st.Mode
				}
			}

			// File capabilities go with a write by the test user.
			capFile := filepath.Join(target.root, "capable")
			mustOK(t, os.WriteFile(capFile, []byte("bin"), 0o755))
			mustOK(t, os.Chown(capFile, testUID, testGID))
			mustOK(t, unix.Setxattr(capFile, "security.capability", fileCapability(), 0))
			u.run(t, "write", capFile)
			_, err := unix.Getxattr(capFile, "security.capability", make([]byte, 64))
			wantErrno(t, "security.capability after a write by the owner", err, unix.ENODATA)

			// open(O_CREAT, 0) makes mode 0, for root and for the test
			// user; other modes lose the umask (022, inherited).
			own := filepath.Join(target.root, "own")
			mustOK(t, os.Mkdir(own, 0o755))
			mustOK(t, os.Chown(own, testUID, testGID))
			fd, err := unix.Open(filepath.Join(target.root, "zero-root"), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0)
			mustOK(t, err)
			unix.Close(fd)
			u.run(t, "create", "0", filepath.Join(own, "zero-user"))
			u.run(t, "create", "0777", filepath.Join(own, "masked-user"))
			for rel, want := range map[string]uint32{"zero-root": 0, "own/zero-user": 0, "own/masked-user": 0o755} {
				var st unix.Stat_t
				path := filepath.Join(target.root, rel)
				mustOK(t, unix.Stat(path, &st))
				if st.Mode != unix.S_IFREG|want {
					t.Errorf("%s: mode %#o, want %#o", rel, st.Mode, unix.S_IFREG|want)
				}
				if target.root != native {
					modes[path] = st.Mode
				}
			}
		})
	}

	m.unmount(t)
	mOff.unmount(t)
	checkStore(t, store, true)
	checkStore(t, storeOff, true)
	m = m.remount(t)
	mOff = mOff.remount(t)
	for path, want := range modes {
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil || st.Mode != want {
			t.Errorf("%s after a remount: mode %#o (%v), want %#o as before", path, st.Mode, err, want)
		}
	}
	m.unmount(t)
	mOff.unmount(t)
}

func mustOK(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
