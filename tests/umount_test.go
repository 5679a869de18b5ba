package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// xlogfsRun runs the xlogfs binary and returns its exit status, stdout and
// stderr.
func xlogfsRun(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(xlogfsBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stdout.String(), stderr.String()
	}
	if err != nil {
		t.Fatalf("running xlogfs %s: %v", strings.Join(args, " "), err)
	}
	return 0, stdout.String(), stderr.String()
}

// TestUmountWaits: "xlogfs umount MNT" returns once the daemon is done, so
// check right after it finds a clean, sound store; check and logprint of a
// mounted store say it is in use (not unsound) and exit 1 at once; and
// after a plain "fusermount3 -u", which returns before the daemon is done,
// check and logprint wait for the daemon (stopped here for a second so
// that they must) and then find the store clean.
func TestUmountWaits(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt)
	mustOK(t, os.WriteFile(filepath.Join(mnt, "f"), []byte("data"), 0o644))

	for _, cmd := range []string{"check", "logprint"} {
		start := time.Now()
		code, out, errs := xlogfsRun(t, cmd, store)
		if code != 1 || !strings.Contains(errs, "in use: mounted at "+mnt) || strings.Contains(out+errs, "not sound") {
			t.Errorf("xlogfs %s of a mounted store: exit %d, output %q %q; want exit 1 saying it is in use, mounted at %s, and nothing about soundness",
				cmd, code, out, errs, mnt)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("xlogfs %s of a mounted store took %v: a mounted store is in use, nothing to wait for", cmd, d)
		}
	}

	if code, out, errs := xlogfsRun(t, "umount", mnt); code != 0 {
		t.Fatalf("xlogfs umount %s: exit %d: %s%s", mnt, code, out, errs)
	}
	// The daemon has let go of the store: check need not wait (--wait 0
	// fails on a store still locked) and finds the unmount record.
	if code, out, errs := xlogfsRun(t, "check", "--wait", "0", store); code != 0 || !strings.Contains(out, "clean (ends with an unmount record)") {
		t.Errorf("xlogfs check --wait 0 right after xlogfs umount: exit %d\n%s%s", code, out, errs)
	}
	m.expectExit(t, "xlogfs umount") // it may take a moment more to exit

	for _, cmd := range []string{"check", "logprint"} {
		m = m.remount(t)
		// A stopped daemon cannot finish its unmount: the store stays
		// locked, unmounted, until it runs again.
		if err := syscall.Kill(m.pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		if err := m.fusermount("-u"); err != nil {
			syscall.Kill(m.pid, syscall.SIGCONT)
			t.Fatal(err)
		}
		c := exec.Command(xlogfsBin, cmd, store)
		var stdout, stderr bytes.Buffer
		c.Stdout, c.Stderr = &stdout, &stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		syscall.Kill(m.pid, syscall.SIGCONT)
		err := c.Wait()
		if err != nil || !strings.Contains(stderr.String(), "waiting") || !strings.Contains(stdout.String(), "clean (ends with an unmount record)") {
			t.Errorf("xlogfs %s right after fusermount3 -u: %v\nstdout:\n%s\nstderr:\n%s\nwant it to wait for the daemon, then find a clean log",
				cmd, err, stdout.String(), stderr.String())
		}
		m.expectExit(t, "fusermount3 -u")
	}
}

// TestUmountErrors: usage mistakes exit 2, what is not an xlogfs mount
// exits 1 saying what it is, and a mount whose daemon died is cleared with
// an error saying the log lacks its unmount record.
func TestUmountErrors(t *testing.T) {
	t.Parallel()
	if code, _, errs := xlogfsRun(t, "umount"); code != 2 || !strings.Contains(errs, "usage: xlogfs umount") {
		t.Errorf("xlogfs umount without a mount point: exit %d, %q; want 2 and the usage", code, errs)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if code, _, errs := xlogfsRun(t, "umount", missing); code != 1 || !strings.Contains(errs, missing+" does not exist, so nothing is mounted there") || strings.Contains(errs, "lstat") {
		t.Errorf("xlogfs umount of a missing path: exit %d, %q", code, errs)
	}
	plain := t.TempDir()
	if code, _, errs := xlogfsRun(t, "umount", plain); code != 1 || !strings.Contains(errs, plain+" is not mounted") {
		t.Errorf("xlogfs umount of a plain directory: exit %d, %q", code, errs)
	}
	if code, _, errs := xlogfsRun(t, "umount", "/proc"); code != 1 || !strings.Contains(errs, "/proc is not an xlogfs mount (it is proc") {
		t.Errorf("xlogfs umount /proc: exit %d, %q", code, errs)
	}

	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt)
	mustOK(t, os.WriteFile(filepath.Join(mnt, "f"), []byte("data"), 0o644))
	busy, err := os.Open(filepath.Join(mnt, "f"))
	mustOK(t, err)
	if code, _, errs := xlogfsRun(t, "umount", mnt); code != 1 || !strings.Contains(errs, "busy") || !isMounted(mnt) {
		t.Errorf("xlogfs umount of a mount with an open file: exit %d, %q, still mounted: %v; want exit 1, busy, mounted", code, errs, isMounted(mnt))
	}
	busy.Close()

	if err := syscall.Kill(m.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.waitExit(time.Minute); !ok {
		t.Fatal("the daemon survived SIGKILL")
	}
	code, _, errs := xlogfsRun(t, "umount", mnt)
	if code != 1 || !strings.Contains(errs, "does not end with an unmount record") || isMounted(mnt) {
		t.Errorf("xlogfs umount of a dead daemon's mount: exit %d, %q, still mounted: %v; want exit 1, no unmount record, and the mount gone",
			code, errs, isMounted(mnt))
	}
	m.setLive(false)
}
