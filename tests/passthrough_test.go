package tests

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// mountPassthrough mounts with --passthrough=on. A machine that cannot
// (a kernel without FUSE passthrough, or no CAP_SYS_ADMIN) skips the test,
// saying why: the mount's own message.
func mountPassthrough(t *testing.T, store, mnt string, flags ...string) *mount {
	t.Helper()
	// Every open that writes in passthrough (but O_SYNC/O_DSYNC ones),
	// whatever the file's history, unless the test picks a route: these
	// tests are of passthrough.
	flags = append(flags, "--passthrough=on")
	if !slices.ContainsFunc(flags, func(f string) bool { return strings.HasPrefix(f, "--sync-writes") }) {
		flags = append(flags, "--sync-writes=passthrough")
	}
	m, err := tryMountDaemon(t, store, mnt, flags...)
	if err != nil {
		if strings.Contains(err.Error(), "--passthrough=on:") {
			t.Skipf("kernel FUSE passthrough is not available here: %v", err)
		}
		t.Fatal(err)
	}
	if got := readStats(t, mnt)["passthrough"]; got != "on" {
		t.Fatalf(".stats passthrough = %q after --passthrough=on", got)
	}
	return m
}

// statCount is a .stats counter, 0 when it is absent (the fuse_<OPCODE>
// lines appear once an opcode has been seen).
func statCount(t testing.TB, stats map[string]string, name string) uint64 {
	t.Helper()
	if _, ok := stats[name]; !ok {
		return 0
	}
	return statUint(t, stats, name)
}

// TestPassthroughFsyncedAppendsSurviveKill9 appends through a passthrough
// open, fsyncs (and fdatasyncs) now and then, appends more, and kills the
// daemon: the next mount has every fsynced byte, at least the fsynced size
// and nothing but what was written (the log is forced by nothing else: no
// close, no periodic force). The appends never reached the daemon.
func TestPassthroughFsyncedAppendsSurviveKill9(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountPassthrough(t, store, mnt, "--log-force-interval", "1h")
	path := filepath.Join(mnt, "log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	mustOK(t, err)
	defer f.Close()
	before := readStats(t, mnt)
	var content, acked []byte
	for i := range 59 { // the last few appends unsynced
		b := pattern(uint64(i), 1000+37*i) // sizes that end mid-block
		_, err := f.Write(b)
		mustOK(t, err)
		content = append(content, b...)
		switch i % 7 {
		case 3:
			mustOK(t, f.Sync())
			acked = bytes.Clone(content)
		case 5:
			mustOK(t, unix.Fdatasync(int(f.Fd())))
			acked = bytes.Clone(content)
		}
	}
	after := readStats(t, mnt)
	if w := statCount(t, after, "fuse_WRITE") - statCount(t, before, "fuse_WRITE"); w != 0 {
		t.Errorf("%d WRITE requests reached the daemon for appends through a passthrough open", w)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != int64(len(content)) {
		t.Errorf("stat while mounted: %v, %v; want size %d", fi, err, len(content))
	}
	if len(acked) == len(content) {
		t.Fatal("the test left nothing unsynced")
	}
	m.kill9(t)
	m = m.remount(t)
	got, err := os.ReadFile(path)
	mustOK(t, err)
	// The file was open for writing in passthrough at the kill, so its
	// size follows the data file (the kernel may have synced writes there
	// the daemon never saw): the unsynced appends, still in the page
	// cache, may come back too, as written, never anything else.
	if len(got) < len(acked) || len(got) > len(content) {
		t.Errorf("after kill -9: %d bytes, want at least the %d fsynced and at most the %d written", len(got), len(acked), len(content))
	}
	if !bytes.Equal(got, content[:min(len(got), len(content))]) {
		t.Errorf("after kill -9: the bytes differ from what was written")
	}
	m.unmount(t)
	checkStore(t, store, true)
}

// TestPassthroughMmap writes a file through a shared mapping of a
// passthrough open, msyncs and fsyncs it, and kills the daemon: the bytes
// come back, and so does a size grown by ftruncate before the mapping.
func TestPassthroughMmap(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountPassthrough(t, store, mnt, "--log-force-interval", "1h")
	path := filepath.Join(mnt, "mapped")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	mustOK(t, err)
	defer f.Close()
	const size = 3*4096 + 100
	mustOK(t, f.Truncate(size))
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	mustOK(t, err)
	want := pattern(7, size)
	copy(b, want)
	mustOK(t, unix.Msync(b, unix.MS_SYNC))
	mustOK(t, unix.Munmap(b))
	mustOK(t, f.Sync())
	m.kill9(t)
	m = m.remount(t)
	got, err := os.ReadFile(path)
	mustOK(t, err)
	if !bytes.Equal(got, want) {
		t.Errorf("after kill -9: %d bytes, want the %d written through the mapping (first difference at %d)", len(got), len(want), firstDifference(got, want))
	}
	m.unmount(t)
	checkStore(t, store, true)
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestPassthroughOff checks --passthrough=off: .stats says so, and writes
// reach the daemon, one request each.
func TestPassthroughOff(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt, "--passthrough=off")
	if got := readStats(t, mnt)["passthrough"]; got != "off" {
		t.Errorf(".stats passthrough = %q with --passthrough=off", got)
	}
	f, err := os.Create(filepath.Join(mnt, "f"))
	mustOK(t, err)
	before := statCount(t, readStats(t, mnt), "fuse_WRITE")
	for i := range 10 {
		_, err := f.WriteAt([]byte(strconv.Itoa(i)), int64(i))
		mustOK(t, err)
	}
	mustOK(t, f.Close())
	if w := statCount(t, readStats(t, mnt), "fuse_WRITE") - before; w != 10 {
		t.Errorf("10 writes with --passthrough=off sent %d WRITE requests", w)
	}
	m.unmount(t)
	checkStore(t, store, true)
}

// TestPassthroughConcurrentOpens opens, writes and closes one file from
// many goroutines at once: every open of an inode must be of the kind the
// kernel expects (all in passthrough while one is), or the kernel fails
// the open with EIO.
func TestPassthroughConcurrentOpens(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountPassthrough(t, store, mnt)
	path := filepath.Join(mnt, "shared")
	mustOK(t, os.WriteFile(path, []byte("start"), 0o644))
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 300 {
				flags := os.O_RDWR
				if (g+i)%3 == 0 {
					flags = os.O_RDONLY
				}
				f, err := os.OpenFile(path, flags, 0)
				if err != nil {
					errs <- err
					return
				}
				if flags == os.O_RDWR {
					_, err = f.WriteAt([]byte{byte(g)}, int64(g))
				}
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Errorf("an open, write or close of a file others open and close at the same time: %v", err)
		}
	}
	m.unmount(t)
	checkStore(t, store, true)
}

// TestPassthroughDirectIO writes and reads through an O_DIRECT open of a
// passthrough mount (InnoDB's data files): none of it reaches the daemon
// (the kernel lets FOPEN_DIRECT_IO override passthrough, so a passthrough
// open must not carry it), and an fsynced write survives kill -9.
func TestPassthroughDirectIO(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountPassthrough(t, store, mnt, "--log-force-interval", "1h")
	path := filepath.Join(mnt, "direct")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|unix.O_DIRECT, 0o644)
	mustOK(t, err)
	defer f.Close()
	// Reading .stats costs READ requests of its own: counted between two
	// reads, and taken off.
	first := readStats(t, mnt)
	before := readStats(t, mnt)
	statsReads := statCount(t, before, "fuse_READ") - statCount(t, first, "fuse_READ")
	buf := alignedBuffer(8192)
	copy(buf, pattern(3, len(buf)))
	_, err = f.WriteAt(buf, 4096)
	mustOK(t, err)
	got := alignedBuffer(8192)
	_, err = f.ReadAt(got, 4096)
	mustOK(t, err)
	if !bytes.Equal(got, buf) {
		t.Errorf("an O_DIRECT read did not return what an O_DIRECT write put there")
	}
	after := readStats(t, mnt)
	for _, op := range []string{"fuse_WRITE", "fuse_READ"} {
		n := statCount(t, after, op) - statCount(t, before, op)
		if op == "fuse_READ" {
			n -= statsReads
		}
		if n != 0 {
			t.Errorf("%d %s requests reached the daemon for O_DIRECT I/O through a passthrough open", n, strings.TrimPrefix(op, "fuse_"))
		}
	}
	mustOK(t, f.Sync())
	m.kill9(t)
	m = m.remount(t)
	b, err := os.ReadFile(path)
	mustOK(t, err)
	if len(b) != 4096+len(buf) || !bytes.Equal(b[4096:], buf) {
		t.Errorf("after kill -9: %d bytes, want %d ending in what was written and fsynced", len(b), 4096+len(buf))
	}
	m.unmount(t)
	checkStore(t, store, true)
}

// syncAppends appends n patterned blocks to f, each written by write (a
// synchronous write: acknowledged as durable when it returns), and
// returns what was written.
func syncAppends(t *testing.T, seed uint64, n int, write func(b []byte, off int64) error) []byte {
	t.Helper()
	var content []byte
	for i := range n {
		b := pattern(seed+uint64(i), 500+61*i) // sizes that end mid-block
		mustOK(t, write(b, int64(len(content))))
		content = append(content, b...)
	}
	return content
}

// syncNew makes the new file f and its name durable (fsync of the file
// and of its directory), as an application must before it counts on a
// new file surviving a crash.
func syncNew(t *testing.T, f *os.File) {
	t.Helper()
	mustOK(t, f.Sync())
	d, err := os.Open(filepath.Dir(f.Name()))
	mustOK(t, err)
	defer d.Close()
	mustOK(t, d.Sync())
}

// checkSyncAppends kills the daemon, remounts and checks that path holds
// exactly want: every synchronous append, acknowledged as durable, with the
// size it reached, though none of them reached the daemon and nothing
// forced the log (no fsync, no close, no periodic force).
func checkSyncAppends(t *testing.T, m *mount, store, path string, before map[string]string, want []byte) {
	t.Helper()
	if w := statCount(t, readStats(t, m.dir), "fuse_WRITE") - statCount(t, before, "fuse_WRITE"); w != 0 {
		t.Fatalf("%d WRITE requests reached the daemon: the synchronous writes did not go through passthrough", w)
	}
	m.kill9(t)
	m = m.remount(t)
	got, err := os.ReadFile(path)
	mustOK(t, err)
	if len(got) != len(want) || !bytes.Equal(got, want) {
		n := 0
		for n < min(len(got), len(want)) && got[n] == want[n] {
			n++
		}
		t.Errorf("after kill -9: %d bytes, the first %d as written; want the %d the synchronous appends acknowledged", len(got), n, len(want))
	}
	m.unmount(t)
	checkStore(t, store, true)
}

// TestPassthroughSyncOpenAppendsSurviveKill9 appends through an O_SYNC
// (and an O_DSYNC) open that joins a passthrough open of the file (the
// kernel wants all of an inode's opens of one kind, so it is a passthrough
// open too): each write is synced by the kernel in the data file, never
// seen by the daemon, and acknowledged as durable. After kill -9 every
// appended byte is back, and the size.
func TestPassthroughSyncOpenAppendsSurviveKill9(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		flag int
	}{{"O_SYNC", os.O_SYNC}, {"O_DSYNC", unix.O_DSYNC}} {
		t.Run(c.name, func(t *testing.T) {
			store, mnt := newStore(t)
			m := mountPassthrough(t, store, mnt, "--log-force-interval", "1h")
			path := filepath.Join(mnt, "log")
			mustOK(t, os.WriteFile(path, nil, 0o644))
			r, err := os.Open(path) // a passthrough open the synchronous one joins
			mustOK(t, err)
			defer r.Close()
			syncNew(t, r)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|c.flag, 0)
			mustOK(t, err)
			defer f.Close()
			before := readStats(t, mnt)
			want := syncAppends(t, 7, 23, func(b []byte, _ int64) error { _, err := f.Write(b); return err })
			checkSyncAppends(t, m, store, path, before, want)
		})
	}
}

// TestPassthroughRWFDsyncAppendsSurviveKill9 appends with pwritev2's
// RWF_DSYNC through an ordinary passthrough open: the kernel syncs each
// write in the data file and the daemon never hears of it. After kill -9
// every appended byte is back, and the size. Both for a file the mount
// created (marked in its create record) and for one made before the mount
// (marked by its first open for writing, forced before the open returns).
func TestPassthroughRWFDsyncAppendsSurviveKill9(t *testing.T) {
	t.Parallel()
	for _, existing := range []bool{false, true} {
		t.Run(map[bool]string{false: "created by the mount", true: "made before the mount"}[existing], func(t *testing.T) {
			store, mnt := newStore(t)
			m := mountPassthrough(t, store, mnt, "--log-force-interval", "1h")
			path := filepath.Join(mnt, "log")
			if existing {
				mustOK(t, os.WriteFile(path, nil, 0o644))
				m.unmount(t)
				m = m.remount(t)
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
			mustOK(t, err)
			defer f.Close()
			if !existing {
				syncNew(t, f)
			}
			before := readStats(t, mnt)
			want := syncAppends(t, 11, 23, func(b []byte, off int64) error {
				n, err := unix.Pwritev2(int(f.Fd()), [][]byte{b}, off, unix.RWF_DSYNC)
				if err == nil && n != len(b) {
					err = fmt.Errorf("pwritev2 wrote %d of %d bytes", n, len(b))
				}
				if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
					t.Skipf("pwritev2 with RWF_DSYNC is not supported here: %v", err)
				}
				return err
			})
			checkSyncAppends(t, m, store, path, before, want)
		})
	}
}
