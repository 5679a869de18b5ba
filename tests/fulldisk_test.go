package tests

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// tmpfsStore mounts a tmpfs of size bytes at a new directory and returns
// it (unmounted when the test ends): a filesystem under a store that can
// really fill up.
func tmpfsStore(t *testing.T, size string) (store, mnt, base string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs to fill needs root")
	}
	store, mnt = newStore(t)
	base = filepath.Dir(store)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", store).CombinedOutput(); err != nil {
		t.Fatalf("mount -t tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", store).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", store, err, out)
		}
	})
	return store, mnt, base
}

// TestFullStoreDisk puts a store on a 3 MiB tmpfs and fills it through the
// mount: writes get ENOSPC and metadata changes go on (degraded) until the
// log itself is full; then the journal stops, and says so in syslog (the
// daemon's log file is on the full disk), in .stats and in xlogfs stats;
// every change gets EIO, reads go on. With its log full, the store mounts
// read-only (replayed in memory), and read-write is refused with the bytes
// to free in the filesystem under it; once another file there is removed,
// it mounts with everything that was acknowledged, and check finds it
// sound.
func TestFullStoreDisk(t *testing.T) {
	requireFUSE(t)
	t.Parallel()
	store, mnt, base := tmpfsStore(t, "3m")

	// mkfs checks for room first, and leaves nothing when there is none.
	if _, err := xlogfs("mkfs", "--log-size", "4m", store); err == nil || !strings.Contains(err.Error(), "not enough space") {
		t.Fatalf("mkfs of a 4 MiB log on a 3 MiB filesystem: %v; want it refused for space", err)
	}
	if names, _ := os.ReadDir(store); len(names) != 0 {
		t.Fatalf("a refused mkfs left %v", names)
	}
	mkfs(t, store, "--log-size", "512k")
	// Another file of the filesystem under the store, to free later.
	ballast := filepath.Join(store, "ballast")
	if err := os.WriteFile(ballast, bytes.Repeat([]byte("b"), 256<<10), 0o644); err != nil {
		t.Fatal(err)
	}

	sock := filepath.Join(base, "syslog.sock")
	logs, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	m := mountDaemon(t, store, mnt, "--syslog", sock)

	acked := []byte("acknowledged before the disk filled")
	writeSync(t, filepath.Join(mnt, "acked"), acked)

	// Fill the disk: ENOSPC, and the failed write leaves the size alone.
	hog, err := os.OpenFile(filepath.Join(mnt, "hog"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer hog.Close()
	chunk := bytes.Repeat([]byte("h"), 64<<10)
	var size int64
	for len(chunk) > 0 {
		n, err := hog.WriteAt(chunk, size)
		size += int64(n)
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("writing on a full disk: %v, want ENOSPC", err)
			}
			chunk = chunk[:len(chunk)/2]
		}
	}
	if st, err := hog.Stat(); err != nil || st.Size() != size {
		t.Fatalf("after ENOSPC the file has %v bytes (%v); %d were written", st.Size(), err, size)
	}
	// The log is preallocated: metadata still goes in.
	still := filepath.Join(mnt, "still")
	if err := os.Mkdir(still, 0o755); err != nil {
		t.Fatalf("mkdir on a full disk (the log has room): %v", err)
	}

	// Fill the log: checkpoints cannot be written, so it cannot be
	// freed, and the journal must stop with EIO, never ENOSPC.
	value := bytes.Repeat([]byte("x"), 3000)
	var stop error
	for i := 0; i < 5000 && stop == nil; i++ {
		stop = unix.Setxattr(still, "user.n"+string(rune('a'+i%20)), value, 0)
	}
	if stop != unix.EIO {
		t.Fatalf("filling the log with no room to checkpoint: %v; want EIO", stop)
	}
	stats := readStats(t, mnt)
	if st := stats["state"]; !strings.HasPrefix(st, "failed: the log is full") || !strings.Contains(st, "no space left") {
		t.Errorf(".stats state %q; want failed, with the reason", st)
	}
	cmd := exec.Command(xlogfsBin, "stats", mnt)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "state failed: ") || !strings.Contains(stderr.String(), "journal failed: ") {
		t.Errorf("xlogfs stats on a failed journal: %v; stdout has the state: %v; stderr: %q", err, strings.Contains(string(out), "state failed"), stderr.String())
	}
	// Changes get EIO; reads go on.
	if err := os.Remove(filepath.Join(mnt, "acked")); !errors.Is(err, syscall.EIO) {
		t.Errorf("rm on a failed journal: %v, want EIO", err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "new"), []byte("x"), 0o644); !errors.Is(err, syscall.EIO) {
		t.Errorf("creating a file on a failed journal: %v, want EIO", err)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "acked")); err != nil || !bytes.Equal(b, acked) {
		t.Errorf("reading on a failed journal: %q, %v", b, err)
	}
	// Syslog heard it, as an error.
	logs.SetReadDeadline(time.Now().Add(10 * time.Second))
	var heard []string
	for {
		buf := make([]byte, 4096)
		n, err := logs.Read(buf)
		if err != nil {
			t.Fatalf("syslog did not hear the journal stop (%v); heard %q", err, heard)
		}
		msg := string(buf[:n])
		heard = append(heard, msg)
		if strings.Contains(msg, "journal failed: the log is full") {
			if !strings.HasPrefix(msg, "<27>") { // LOG_DAEMON|LOG_ERR
				t.Errorf("syslog message with priority %q, want <27>: %q", msg[:min(4, len(msg))], msg)
			}
			break
		}
	}

	// Unmounting cannot checkpoint; the daemon says so and exits 1.
	hog.Close()
	if err := m.fusermount("-u"); err != nil {
		t.Fatal(err)
	}
	ws, ok := m.waitExit(time.Minute)
	m.setLive(false)
	if !ok || !ws.Exited() || ws.ExitStatus() != 1 {
		t.Fatalf("the daemon of a failed journal: wait status %#x (exited %v); want exit 1", uint32(ws), ok)
	}

	// Read-only, it mounts: recovery has no room to finish, so the log is
	// replayed in memory only, as with --norecovery, whose reads go
	// through the daemon (passthrough would bypass what replay holds).
	m = mountDaemon(t, store, mnt, "--ro", "--passthrough=auto")
	if b, err := os.ReadFile(filepath.Join(mnt, "acked")); err != nil || !bytes.Equal(b, acked) {
		t.Errorf("acknowledged file on the read-only mount: %q, %v", b, err)
	}
	if mode := readStats(t, mnt)["mount_mode"]; mode != "ro,norecovery" {
		t.Errorf("read-only mount on a full disk: mount_mode %q", mode)
	}
	m.unmount(t)
	// Read-write, it is refused, saying how many bytes to free.
	_, err = tryMountDaemon(t, store, mnt)
	free := regexp.MustCompile(`checkpoint\.tmp needs \d+ bytes .* free at least (\d+) bytes`).FindStringSubmatch(fmt.Sprint(err))
	if free == nil {
		t.Fatalf("a read-write mount of a full store whose log is full: %v; want a refusal naming the bytes to free", err)
	}
	if n, _ := strconv.Atoi(free[1]); n <= 0 || n > 256<<10 {
		t.Fatalf("the refusal asks to free %d bytes (the ballast has 256 KiB): %v", n, err)
	}

	// With that room, everything acknowledged is back.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	m = mountDaemon(t, store, mnt)
	if b, err := os.ReadFile(filepath.Join(mnt, "acked")); err != nil || !bytes.Equal(b, acked) {
		t.Errorf("acknowledged file after the remount: %q, %v", b, err)
	}
	if st, err := os.Stat(still); err != nil || !st.IsDir() {
		t.Errorf("the directory made on the full disk: %v", err)
	}
	m.unmount(t)
	checkStore(t, store, true)
	t.Logf("filled the disk with %d bytes; the log stopped the journal with %v; syslog heard %d messages", size, stop, len(heard))
}

func writeSync(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestMkfsHalfBuilt: what an interrupted mkfs leaves (no superblock, only
// the store's own names) is no store to mount or to mkfs over without
// --force, which remakes it; a foreign directory stays refused.
func TestMkfsHalfBuilt(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "store")
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"log", "checkpoint.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := xlogfs("mkfs", "--log-size", "1m", dir); err == nil || !strings.Contains(err.Error(), "half-built") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("mkfs over a half-built store: %v; want a refusal naming it and --force", err)
	}
	if _, err := xlogfs("check", dir); err == nil || !strings.Contains(err.Error(), "half-built") {
		t.Fatalf("check of a half-built store: %v; want it named", err)
	}
	if _, err := xlogfs("mkfs", "--force", "--log-size", "1m", dir); err != nil {
		t.Fatalf("mkfs --force over a half-built store: %v", err)
	}
	checkStore(t, dir, false)

	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "log"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "notes"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := xlogfs("mkfs", "--force", foreign); err == nil {
		t.Fatal("mkfs --force over a foreign directory succeeded")
	}
}

// fillFile writes path until the filesystem under the store is full
// (ENOSPC) and fsyncs it; it returns the bytes written.
func fillFile(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte("f"), 64<<10)
	var size int64
	for len(chunk) > 0 {
		n, err := f.WriteAt(chunk, size)
		size += int64(n)
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("writing %s on a full disk: %v, want ENOSPC", path, err)
			}
			chunk = chunk[:len(chunk)/2]
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("fsync of %s: %v", path, err)
	}
	return size
}

// freeBytes is what statfs says is free under dir.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var s unix.Statfs_t
	if err := unix.Statfs(dir, &s); err != nil {
		t.Fatal(err)
	}
	return int64(s.Bavail) * int64(s.Bsize)
}

// waitFor polls cond for up to 30 s (the periodic log force is 5 s).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not so after 30 s: %s", what)
		}
	}
}

// TestFullDiskDeleteGivesSpaceBack: a 4 MiB log on an 8 MiB tmpfs, filled
// through the mount. Removing the big file gives its space back while
// mounted (its data file goes once the removal is durable, though no
// checkpoint has room), and a new write succeeds. Filled again, the store
// unmounts cleanly (exit 0: the log ends with its unmount record though the
// checkpoint had no room), mounts again on the still-full disk (degraded)
// with everything acknowledged, and a removal there gives the space back
// and ends the degraded state.
func TestFullDiskDeleteGivesSpaceBack(t *testing.T) {
	requireFUSE(t)
	t.Parallel()
	store, mnt, _ := tmpfsStore(t, "8m")
	mkfs(t, store, "--log-size", "4m")
	// No checkpoint runs meanwhile: the space must come back without one.
	// Writes go to data files only (no write logged with its bytes), so
	// the disk fills with data files, not the log, and no checkpoint is
	// asked for by a log three quarters full.
	flags := []string{"--checkpoint-interval", "1h", "--immediate-write", "0"}
	m := mountDaemon(t, store, mnt, flags...)
	acked := []byte("acknowledged before the disk filled")
	writeSync(t, filepath.Join(mnt, "acked"), acked)

	big := filepath.Join(mnt, "big")
	size := fillFile(t, big)
	st, err := os.Stat(big)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(store, "data", strconv.FormatUint(st.Sys().(*syscall.Stat_t).Ino, 10))
	if _, err := os.Stat(data); err != nil {
		t.Fatalf("the data file of big: %v", err)
	}
	if err := os.Remove(big); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the removed file's data file is gone and its space is free", func() bool {
		_, err := os.Stat(data)
		return errors.Is(err, os.ErrNotExist) && freeBytes(t, store) >= size
	})
	after := bytes.Repeat([]byte("a"), 256<<10)
	writeSync(t, filepath.Join(mnt, "after"), after)

	// Full again: the unmount cannot write its checkpoint, yet succeeds.
	big2 := filepath.Join(mnt, "big2")
	size2 := fillFile(t, big2)
	m.unmount(t)
	checkStore(t, store, true)

	// Mounted again on the full disk: degraded, everything there.
	m = mountDaemon(t, store, mnt, flags...)
	if state := readStats(t, mnt)["state"]; !strings.HasPrefix(state, "degraded: ") {
		t.Errorf("mounted on a full disk: state %q, want degraded", state)
	}
	for name, want := range map[string][]byte{"acked": acked, "after": after} {
		if b, err := os.ReadFile(filepath.Join(mnt, name)); err != nil || !bytes.Equal(b, want) {
			t.Errorf("%s after the remount: %d bytes, %v", name, len(b), err)
		}
	}
	if st, err := os.Stat(big2); err != nil || st.Size() != size2 {
		t.Fatalf("big2 after the remount: %v, %v; want %d bytes", st, err, size2)
	}
	if err := os.Remove(big2); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "big2's space is free and the journal is back to ok", func() bool {
		return freeBytes(t, store) >= size2 && readStats(t, mnt)["state"] == "ok"
	})
	m.unmount(t)
	checkStore(t, store, true)
	t.Logf("filled with %d and %d bytes; each came back once removed", size, size2)
}
