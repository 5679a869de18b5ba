package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// transportOps is a table of operations, each reaching the daemon as one
// or more FUSE opcodes (named), with its result as text: what a caller
// sees (errno, sizes, modes, contents, listings), never times. The same
// table on a classic and an io_uring mount must give the same results.
var transportOps = []struct {
	name string // and the opcodes it exercises
	op   func(dir string) string
}{
	{"MKDIR", func(d string) string { return errs(unix.Mkdir(filepath.Join(d, "a"), 0o750)) }},
	{"MKDIR exists", func(d string) string { return errs(unix.Mkdir(filepath.Join(d, "a"), 0o750)) }},
	{"CREATE+WRITE+RELEASE", func(d string) string {
		fd, err := unix.Open(filepath.Join(d, "a/f"), unix.O_CREAT|unix.O_WRONLY|unix.O_EXCL, 0o640)
		if err != nil {
			return errs(err)
		}
		defer unix.Close(fd)
		n, err := unix.Write(fd, []byte("hello, world\n"))
		return fmt.Sprint(n, " ", errs(err))
	}},
	{"CREATE exclusive exists", func(d string) string {
		_, err := unix.Open(filepath.Join(d, "a/f"), unix.O_CREAT|unix.O_WRONLY|unix.O_EXCL, 0o640)
		return errs(err)
	}},
	{"LOOKUP+GETATTR", func(d string) string { return stat(filepath.Join(d, "a/f")) }},
	{"LOOKUP missing", func(d string) string { return stat(filepath.Join(d, "a/nothing")) }},
	{"OPEN+READ O_DIRECT", func(d string) string { return readFile(filepath.Join(d, "a/f"), unix.O_DIRECT) }},
	{"OPEN+READ", func(d string) string { return readFile(filepath.Join(d, "a/f"), 0) }},
	{"SETATTR size", func(d string) string {
		return errs(unix.Truncate(filepath.Join(d, "a/f"), 5)) + " " + stat(filepath.Join(d, "a/f"))
	}},
	{"SETATTR mode", func(d string) string {
		return errs(unix.Chmod(filepath.Join(d, "a/f"), 0o604)) + " " + stat(filepath.Join(d, "a/f"))
	}},
	{"SETATTR owner", func(d string) string {
		return errs(unix.Chown(filepath.Join(d, "a/f"), 12, 34)) + " " + stat(filepath.Join(d, "a/f"))
	}},
	{"SETATTR times", func(d string) string {
		err := unix.UtimesNano(filepath.Join(d, "a/f"), []unix.Timespec{{Sec: 1000}, {Sec: 2000}})
		var st unix.Stat_t
		unix.Stat(filepath.Join(d, "a/f"), &st)
		return fmt.Sprint(errs(err), " ", st.Atim.Sec, " ", st.Mtim.Sec)
	}},
	{"SYMLINK", func(d string) string { return errs(unix.Symlink("f", filepath.Join(d, "a/l"))) }},
	{"READLINK", func(d string) string {
		b := make([]byte, 64)
		n, err := unix.Readlink(filepath.Join(d, "a/l"), b)
		return fmt.Sprintf("%q %s", b[:max(n, 0)], errs(err))
	}},
	{"MKNOD fifo", func(d string) string {
		return errs(unix.Mknod(filepath.Join(d, "a/p"), unix.S_IFIFO|0o644, 0)) + " " + stat(filepath.Join(d, "a/p"))
	}},
	{"LINK", func(d string) string {
		return errs(unix.Link(filepath.Join(d, "a/f"), filepath.Join(d, "a/h"))) + " " + stat(filepath.Join(d, "a/h"))
	}},
	{"RENAME", func(d string) string {
		return errs(unix.Rename(filepath.Join(d, "a/h"), filepath.Join(d, "h2"))) + " " + stat(filepath.Join(d, "h2"))
	}},
	{"RENAME2 noreplace exists", func(d string) string {
		return errs(unix.Renameat2(unix.AT_FDCWD, filepath.Join(d, "h2"), unix.AT_FDCWD, filepath.Join(d, "a/f"), unix.RENAME_NOREPLACE))
	}},
	{"RENAME2 exchange", func(d string) string {
		return errs(unix.Renameat2(unix.AT_FDCWD, filepath.Join(d, "a/l"), unix.AT_FDCWD, filepath.Join(d, "a/p"), unix.RENAME_EXCHANGE)) +
			" " + stat(filepath.Join(d, "a/l")) + " " + stat(filepath.Join(d, "a/p"))
	}},
	{"UNLINK", func(d string) string { return errs(unix.Unlink(filepath.Join(d, "h2"))) }},
	{"UNLINK missing", func(d string) string { return errs(unix.Unlink(filepath.Join(d, "h2"))) }},
	{"SETXATTR", func(d string) string {
		return errs(unix.Setxattr(filepath.Join(d, "a/f"), "user.k", []byte("value"), 0))
	}},
	{"SETXATTR create exists", func(d string) string {
		return errs(unix.Setxattr(filepath.Join(d, "a/f"), "user.k", []byte("v2"), unix.XATTR_CREATE))
	}},
	{"SETXATTR bad namespace", func(d string) string {
		return errs(unix.Setxattr(filepath.Join(d, "a/f"), "bogus.k", []byte("v"), 0))
	}},
	{"GETXATTR", func(d string) string {
		b := make([]byte, 64)
		n, err := unix.Getxattr(filepath.Join(d, "a/f"), "user.k", b)
		return fmt.Sprintf("%q %s", b[:max(n, 0)], errs(err))
	}},
	{"GETXATTR size", func(d string) string {
		n, err := unix.Getxattr(filepath.Join(d, "a/f"), "user.k", nil)
		return fmt.Sprint(n, " ", errs(err))
	}},
	{"GETXATTR small buffer", func(d string) string {
		_, err := unix.Getxattr(filepath.Join(d, "a/f"), "user.k", make([]byte, 2))
		return errs(err)
	}},
	{"GETXATTR missing", func(d string) string {
		_, err := unix.Getxattr(filepath.Join(d, "a/f"), "user.none", make([]byte, 8))
		return errs(err)
	}},
	{"LISTXATTR", func(d string) string {
		unix.Setxattr(filepath.Join(d, "a/f"), "user.j", nil, 0)
		b := make([]byte, 256)
		n, err := unix.Listxattr(filepath.Join(d, "a/f"), b)
		names := strings.Split(strings.TrimRight(string(b[:max(n, 0)]), "\x00"), "\x00")
		sort.Strings(names)
		sz, err2 := unix.Listxattr(filepath.Join(d, "a/f"), nil)
		return fmt.Sprint(names, " ", errs(err), " ", sz, " ", errs(err2))
	}},
	{"REMOVEXATTR", func(d string) string {
		return errs(unix.Removexattr(filepath.Join(d, "a/f"), "user.k")) + " " + errs(unix.Removexattr(filepath.Join(d, "a/f"), "user.k"))
	}},
	{"OPENDIR+READDIR(PLUS)+RELEASEDIR", func(d string) string { return listing(filepath.Join(d, "a")) }},
	{"FSYNC+FSYNCDIR", func(d string) string {
		f, err := os.OpenFile(filepath.Join(d, "a/f"), os.O_RDWR, 0)
		if err != nil {
			return errs(err)
		}
		defer f.Close()
		e1 := f.Sync()
		e2 := unix.Fdatasync(int(f.Fd()))
		dir, err := os.Open(filepath.Join(d, "a"))
		if err != nil {
			return errs(err)
		}
		defer dir.Close()
		return errs(e1) + " " + errs(e2) + " " + errs(dir.Sync())
	}},
	{"FALLOCATE+LSEEK", func(d string) string {
		fd, err := unix.Open(filepath.Join(d, "a/g"), unix.O_CREAT|unix.O_RDWR, 0o644)
		if err != nil {
			return errs(err)
		}
		defer unix.Close(fd)
		e := unix.Fallocate(fd, 0, 0, 8192)
		unix.Pwrite(fd, []byte("x"), 100000)
		off, e2 := unix.Seek(fd, 0, unix.SEEK_END)
		_, e3 := unix.Seek(fd, 200000, unix.SEEK_DATA)
		return fmt.Sprint(errs(e), " ", off, " ", errs(e2), " ", errs(e3), " ", stat(filepath.Join(d, "a/g")))
	}},
	{"COPY_FILE_RANGE", func(d string) string {
		in, err := unix.Open(filepath.Join(d, "a/f"), unix.O_RDONLY, 0)
		if err != nil {
			return errs(err)
		}
		defer unix.Close(in)
		out, err := unix.Open(filepath.Join(d, "a/c"), unix.O_CREAT|unix.O_WRONLY, 0o644)
		if err != nil {
			return errs(err)
		}
		defer unix.Close(out)
		n, err := unix.CopyFileRange(in, nil, out, nil, 100, 0)
		return fmt.Sprint(n, " ", errs(err), " ", readFile(filepath.Join(d, "a/c"), 0))
	}},
	{"TMPFILE+LINK", func(d string) string {
		fd, err := unix.Open(filepath.Join(d, "a"), unix.O_TMPFILE|unix.O_RDWR, 0o600)
		if err != nil {
			return errs(err)
		}
		defer unix.Close(fd)
		unix.Write(fd, []byte("tmp"))
		err = unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), unix.AT_FDCWD, filepath.Join(d, "a/t"), unix.AT_SYMLINK_FOLLOW)
		return errs(err) + " " + readFile(filepath.Join(d, "a/t"), 0)
	}},
	{"IOCTL", func(d string) string {
		fd, err := unix.Open(filepath.Join(d, "a/f"), unix.O_RDONLY, 0)
		if err != nil {
			return errs(err)
		}
		defer unix.Close(fd)
		_, err = unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
		return errs(err)
	}},
	{"ACCESS", func(d string) string {
		return errs(unix.Access(filepath.Join(d, "a/f"), unix.R_OK)) + " " + errs(unix.Access(filepath.Join(d, "a/f"), unix.X_OK))
	}},
	{"STATFS", func(d string) string {
		var s unix.Statfs_t
		err := unix.Statfs(d, &s)
		return fmt.Sprint(errs(err), " bsize ", s.Bsize, " namelen ", s.Namelen, " ", s.Blocks > 0)
	}},
	{"RMDIR not empty", func(d string) string { return errs(unix.Rmdir(filepath.Join(d, "a"))) }},
	{"UNLINK+RMDIR", func(d string) string {
		var r []string
		for _, n := range []string{"f", "l", "p", "g", "c", "t"} {
			r = append(r, errs(unix.Unlink(filepath.Join(d, "a", n))))
		}
		return strings.Join(r, " ") + " " + errs(unix.Rmdir(filepath.Join(d, "a")))
	}},
}

func errs(err error) string {
	if err == nil {
		return "ok"
	}
	if e, ok := err.(syscall.Errno); ok {
		return unix.ErrnoName(e)
	}
	if pe, ok := err.(*os.PathError); ok {
		return errs(pe.Err)
	}
	if pe, ok := err.(*os.SyscallError); ok {
		return errs(pe.Err)
	}
	return err.Error()
}

func stat(p string) string {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return errs(err)
	}
	return fmt.Sprintf("mode %o nlink %d size %d uid %d gid %d blocks %d", st.Mode, st.Nlink, st.Size, st.Uid, st.Gid, st.Blocks)
}

func readFile(p string, flags int) string {
	fd, err := unix.Open(p, unix.O_RDONLY|flags, 0)
	if err != nil {
		return errs(err)
	}
	defer unix.Close(fd)
	b := make([]byte, 8192)
	if flags&unix.O_DIRECT != 0 {
		// O_DIRECT wants an aligned buffer.
		m, err := unix.Mmap(-1, 0, 8192, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return errs(err)
		}
		defer unix.Munmap(m)
		b = m
	}
	n, err := unix.Read(fd, b)
	return fmt.Sprintf("%q %s", b[:max(n, 0)], errs(err))
}

func listing(dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return errs(err)
	}
	var r []string
	for _, e := range ents {
		r = append(r, e.Name()+":"+e.Type().String())
	}
	return strings.Join(r, " ")
}

// TestTransportParity runs every operation of transportOps on a classic
// mount and on an io_uring mount (passthrough off, so reads and writes
// reach the daemon too) and wants the same results from both; the uring
// mount must have served its requests over the rings.
func TestTransportParity(t *testing.T) {
	if why := uringUnavailable(); why != "" {
		t.Skipf("FUSE over io_uring cannot be had here: %s", why)
	}
	results := map[string][]string{}
	for _, tr := range []string{"classic", "uring"} {
		store, mnt := newStore(t)
		m := mountDaemon(t, store, mnt, "--transport="+tr, "--passthrough=off")
		for _, o := range transportOps {
			results[tr] = append(results[tr], o.op(mnt))
		}
		st := readStats(t, mnt)
		if st["transport"] != tr {
			t.Errorf("--transport=%s: .stats says transport %q", tr, st["transport"])
		}
		// Every opcode the table is there for reached the daemon.
		for _, op := range []string{"MKDIR", "CREATE", "WRITE", "LOOKUP", "GETATTR", "OPEN", "READ", "SETATTR", "SYMLINK",
			"READLINK", "MKNOD", "LINK", "RENAME", "UNLINK", "SETXATTR", "GETXATTR", "LISTXATTR", "REMOVEXATTR",
			"OPENDIR", "READDIRPLUS", "FSYNC", "FSYNCDIR", "FALLOCATE", "LSEEK", "COPY_FILE_RANGE",
			"TMPFILE", "IOCTL", "STATFS", "RMDIR", "RELEASE"} {
			if statCount(t, st, "fuse_"+op) == 0 {
				t.Errorf("%s mount: no %s request reached the daemon", tr, op)
			}
		}
		if tr == "uring" {
			total := statUint(t, st, "fuse_requests")
			overDev := statCount(t, st, "fuse_FORGET") + statCount(t, st, "fuse_BATCH_FORGET")
			rings := statUint(t, st, "uring_requests")
			// The .stats open being answered is counted in
			// fuse_requests before it is in uring_requests.
			if rings == 0 || rings+overDev+1 < total {
				t.Errorf("uring mount: %d requests, %d of them FORGETs over /dev/fuse, but only %d over the rings", total, overDev, rings)
			}
		}
		m.unmount(t)
	}
	for i, o := range transportOps {
		if c, u := results["classic"][i], results["uring"][i]; c != u {
			t.Errorf("%s: classic %s, uring %s", o.name, c, u)
		} else {
			t.Logf("%s: %s", o.name, c)
		}
	}
}
