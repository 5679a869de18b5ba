package tests

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"
	"github.com/xlogfs/xlogfs/journal/statsfile"
	"golang.org/x/sys/unix"
)

// mount is one running "xlogfs mount" of a store.
type mount struct {
	t     testing.TB
	store string   // the store directory (DIR)
	dir   string   // the mount point
	flags []string // the mount flags, for messages
	pid   int      // the process serving the mount

	// For --foreground mounts: the process is our own child.
	fg       *exec.Cmd
	fgDone   chan struct{} // closed once fg has exited
	fgOutput string        // file holding fg's stdout and stderr

	logStart int64 // the size of the store's log file when this mount began
	logEnd   int64 // and when it ended
	logEnded bool

	live   bool // mounted, and neither unmounted nor killed yet
	reaped bool // the serving process has exited and was waited for
	status unix.WaitStatus
}

// newStore returns an empty store directory (the first mount makes it a
// store) and an empty mount point, both removed when the test ends.
func newStore(t testing.TB) (store, mnt string) {
	t.Helper()
	base := t.TempDir()
	store, mnt = filepath.Join(base, "store"), filepath.Join(base, "mnt")
	for _, d := range []string{store, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return store, mnt
}

// xlogfs runs the xlogfs binary and returns its stdout; a non-zero exit is
// an error that carries the output.
func xlogfs(args ...string) (string, error) {
	cmd := exec.Command(xlogfsBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("xlogfs %s: %v\nstdout:\n%sstderr:\n%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.String(), nil
}

// mkfs makes store a store with the given mkfs flags (e.g. --log-size).
func mkfs(t testing.TB, store string, flags ...string) {
	t.Helper()
	if _, err := xlogfs(append(append([]string{"mkfs"}, flags...), store)...); err != nil {
		t.Fatal(err)
	}
}

// checkStore runs "xlogfs check" on an unmounted store and fails the test
// unless the store is sound; with wantClean, also unless its log ends with
// an unmount record (a clean unmount). It returns check's report.
func checkStore(t testing.TB, store string, wantClean bool) string {
	t.Helper()
	out, err := xlogfs("check", store)
	if err != nil {
		t.Fatalf("xlogfs check says the store is not sound: %v", err)
	}
	if wantClean && !strings.Contains(out, "clean (ends with an unmount record)") {
		t.Fatalf("xlogfs check %s: the log does not end with an unmount record after a clean unmount:\n%s", store, out)
	}
	return out
}

var daemonPidRE = regexp.MustCompile(`\(daemon pid (\d+)\)`)

// passthroughEnv, when set (auto, on or off), adds --passthrough=VALUE to
// every mount the tests make that does not choose for itself, so the whole
// suite runs with kernel passthrough forced on or off:
//
//	XLOGFS_TEST_PASSTHROUGH=off go test ./tests
//
// Mounts in --journal data, which never uses passthrough, get no flag
// ("on" would refuse to mount).
const passthroughEnv = "XLOGFS_TEST_PASSTHROUGH"

// transportEnv, when set (classic, uring or auto), adds --transport=VALUE
// to every mount the tests make that does not choose for itself, so the
// whole suite runs over that FUSE transport ("make test" runs it over
// uring too, when the kernel can):
//
//	XLOGFS_TEST_TRANSPORT=uring go test ./tests
const transportEnv = "XLOGFS_TEST_TRANSPORT"

// syncWritesEnv, if set, is the --sync-writes route of every mount that
// does not choose one (make test runs the suite with log and passthrough
// as well as the default, auto).
const syncWritesEnv = "XLOGFS_TEST_SYNC_WRITES"

// mountFlags returns flags with the suite's transport, sync-writes route
// and passthrough choices added.
func mountFlags(flags []string) []string {
	if tr := os.Getenv(transportEnv); tr != "" && !slices.ContainsFunc(flags, func(f string) bool { return strings.HasPrefix(f, "--transport") }) {
		flags = append(slices.Clone(flags), "--transport="+tr)
	}
	if sw := os.Getenv(syncWritesEnv); sw != "" && !slices.ContainsFunc(flags, func(f string) bool { return strings.HasPrefix(f, "--sync-writes") }) {
		flags = append(slices.Clone(flags), "--sync-writes="+sw)
	}
	v := os.Getenv(passthroughEnv)
	if v == "" {
		return flags
	}
	for i, f := range flags {
		if strings.HasPrefix(f, "--passthrough") || f == "--journal=data" || f == "--journal" && i+1 < len(flags) && flags[i+1] == "data" {
			return flags
		}
	}
	return append(slices.Clone(flags), "--passthrough="+v)
}

// mountDaemon mounts store at mnt with "xlogfs mount", which daemonizes and
// returns once the mount answers. The mount is undone when the test ends.
func mountDaemon(t testing.TB, store, mnt string, flags ...string) *mount {
	t.Helper()
	m, err := tryMountDaemon(t, store, mnt, flags...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// tryMountDaemon is mountDaemon for a mount that may fail: the error says
// why. A mount that succeeds is undone when the test ends.
func tryMountDaemon(t testing.TB, store, mnt string, flags ...string) (*mount, error) {
	t.Helper()
	requireFUSE(t)
	m := &mount{t: t, store: store, dir: mnt, flags: flags, logStart: fileSize(filepath.Join(store, "xlogfs.log"))}
	m.setLive(true)
	t.Cleanup(m.cleanup) // before anything can fail: a half-made mount is undone too
	args := append(append([]string{"mount"}, mountFlags(flags)...), store, mnt)
	cmd := exec.Command(xlogfsBin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("xlogfs %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	match := daemonPidRE.FindSubmatch(stderr.Bytes())
	if match == nil {
		return nil, fmt.Errorf("xlogfs %s succeeded but did not name its daemon's pid:\n%s", strings.Join(args, " "), stderr.Bytes())
	}
	m.pid, _ = strconv.Atoi(string(match[1]))
	if !isMounted(mnt) {
		return nil, fmt.Errorf("xlogfs %s returned, but %s is not in /proc/mounts", strings.Join(args, " "), mnt)
	}
	return m, nil
}

// mountForeground mounts store at mnt with "xlogfs mount --foreground",
// which serves until unmounted; it returns once the mount is in the mount
// table. The mount is undone when the test ends.
func mountForeground(t testing.TB, store, mnt string, flags ...string) *mount {
	t.Helper()
	args := append(append([]string{"mount", "--foreground"}, mountFlags(flags)...), store, mnt)
	return serveForeground(t, &mount{t: t, store: store, dir: mnt, flags: flags}, args)
}

// serveForeground starts "xlogfs ARGS", a command that serves m.dir in the
// foreground until unmounted, its output kept for m.log, and returns m
// once m.dir is in the mount table (the test fails if the command exits
// first). The mount is undone when the test ends, however it ends.
func serveForeground(t testing.TB, m *mount, args []string) *mount {
	t.Helper()
	requireFUSE(t)
	out, err := os.CreateTemp(t.TempDir(), args[0]+"-output-")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	m.fgOutput, m.fgDone = out.Name(), make(chan struct{})
	m.fg = exec.Command(xlogfsBin, args...)
	m.fg.Stdout, m.fg.Stderr = out, out
	if err := m.fg.Start(); err != nil {
		t.Fatalf("starting xlogfs %s: %v", strings.Join(args, " "), err)
	}
	m.pid = m.fg.Process.Pid
	m.setLive(true)
	go func() {
		m.fg.Wait()
		close(m.fgDone)
	}()
	t.Cleanup(m.cleanup)
	for !isMounted(m.dir) {
		select {
		case <-m.fgDone:
			t.Fatalf("xlogfs %s exited (%v) before mounting:\n%s", strings.Join(args, " "), m.fg.ProcessState, m.log())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return m
}

// remount mounts the store again the same way, after an unmount or crash.
func (m *mount) remount(t testing.TB) *mount {
	t.Helper()
	if m.fg != nil {
		return mountForeground(t, m.store, m.dir, m.flags...)
	}
	return mountDaemon(t, m.store, m.dir, m.flags...)
}

// waitExit waits up to d for the serving process to exit and reports its
// wait status; ok is false if it is still running.
func (m *mount) waitExit(d time.Duration) (status unix.WaitStatus, ok bool) {
	if m.reaped {
		return m.status, true
	}
	if m.fg != nil {
		select {
		case <-m.fgDone:
			m.reaped, m.status = true, unix.WaitStatus(m.fg.ProcessState.Sys().(syscall.WaitStatus))
			return m.status, true
		case <-time.After(d):
			return 0, false
		}
	}
	deadline := time.Now().Add(d)
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(m.pid, &ws, unix.WNOHANG, nil)
		switch {
		case err == nil && pid == m.pid:
			m.reaped, m.status = true, ws
			m.logEnd, m.logEnded = fileSize(filepath.Join(m.store, "xlogfs.log")), true
			return ws, true
		case errors.Is(err, unix.ECHILD):
			// Not our child after all (TestMain makes us the
			// subreaper, so this should not happen): watch /proc.
			if _, serr := os.Stat(fmt.Sprintf("/proc/%d", m.pid)); serr != nil {
				m.reaped = true
				return 0, true
			}
		case err != nil && !errors.Is(err, unix.EINTR):
			m.t.Errorf("wait4(%d): %v", m.pid, err)
			return 0, false
		}
		if time.Now().After(deadline) {
			return 0, false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fusermount runs fusermount3 with args and the mount point.
func (m *mount) fusermount(args ...string) error {
	out, err := exec.Command("fusermount3", append(args, m.dir)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("fusermount3 %s %s: %v: %s", strings.Join(args, " "), m.dir, err, bytes.TrimSpace(out))
	}
	return nil
}

// unmount unmounts with "fusermount3 -u" and waits for the daemon to
// finish its checkpoint and unmount record; it must exit with status 0.
func (m *mount) unmount(t testing.TB) {
	t.Helper()
	var err error
	// The kernel may hold a file of the mount for a moment after its last
	// close (the release is asynchronous): then the unmount is busy.
	for range 100 {
		if err = m.fusermount("-u"); err == nil || !strings.Contains(err.Error(), "busy") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("unmounting: %v", err)
	}
	m.expectExit(t, "fusermount3 -u")
}

// signal sends sig to the serving process, which must unmount cleanly.
func (m *mount) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(m.pid, sig); err != nil {
		t.Fatalf("kill -%s %d: %v", unix.SignalName(sig), m.pid, err)
	}
	m.expectExit(t, "signal "+sig.String())
}

// expectExit waits for the daemon's clean exit after an unmount request.
func (m *mount) expectExit(t testing.TB, what string) {
	t.Helper()
	ws, ok := m.waitExit(2 * time.Minute)
	if !ok {
		t.Fatalf("xlogfs daemon %d is still running 2 minutes after %s of %s", m.pid, what, m.dir)
	}
	m.setLive(false)
	if !ws.Exited() || ws.ExitStatus() != 0 {
		t.Fatalf("xlogfs daemon %d did not exit cleanly after %s of %s (wait status %#x); its log:\n%s", m.pid, what, m.dir, uint32(ws), m.log())
	}
	if isMounted(m.dir) {
		t.Fatalf("%s is still mounted after %s and the daemon's exit", m.dir, what)
	}
	// Errors the daemon meets on its own (a failed checkpoint) reach
	// only its log.
	if log := m.log(); strings.Contains(log, "failed") {
		t.Errorf("the xlogfs daemon of %s logged a failure:\n%s", m.dir, log)
	}
}

// kill9 crashes the daemon with SIGKILL, then clears the dead mount
// ("Transport endpoint is not connected") with a lazy unmount.
func (m *mount) kill9(t testing.TB) {
	t.Helper()
	if err := syscall.Kill(m.pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", m.pid, err)
	}
	ws, ok := m.waitExit(time.Minute)
	if !ok {
		t.Fatalf("xlogfs daemon %d survived SIGKILL for a minute", m.pid)
	}
	if !ws.Signaled() || ws.Signal() != unix.SIGKILL {
		t.Errorf("xlogfs daemon %d: wait status %#x, want killed by SIGKILL", m.pid, uint32(ws))
	}
	if err := m.fusermount("-u", "-z"); err != nil {
		t.Fatalf("clearing the dead mount: %v", err)
	}
	m.setLive(false)
	if isMounted(m.dir) {
		t.Fatalf("%s is still mounted after fusermount3 -u -z", m.dir)
	}
}

// cleanup makes sure nothing of the mount outlives the test: it unmounts
// (lazily if need be), waits for the daemon to exit — so the store gets its
// checkpoint and unmount record where possible — and kills it otherwise.
func (m *mount) cleanup() {
	if m.t.Failed() && (m.pid != 0 || m.fg != nil) {
		m.t.Logf("log of the xlogfs mount of %s at %s:\n%s", m.store, m.dir, m.log())
	}
	if !m.isLive() {
		return
	}
	m.setLive(false)
	if isMounted(m.dir) {
		if err := m.fusermount("-u"); err != nil {
			m.t.Logf("cleanup: %v; unmounting lazily", err)
			if err := m.fusermount("-u", "-z"); err != nil {
				m.t.Errorf("cleanup: %v", err)
			}
		}
	}
	if m.pid != 0 {
		if _, ok := m.waitExit(30 * time.Second); !ok {
			m.t.Errorf("cleanup: xlogfs daemon %d still running 30 s after the unmount of %s; killing it", m.pid, m.dir)
			syscall.Kill(m.pid, syscall.SIGKILL)
			m.waitExit(30 * time.Second)
		}
	}
	if isMounted(m.dir) {
		if err := m.fusermount("-u", "-z"); err != nil {
			m.t.Errorf("cleanup: %v", err)
		}
	}
}

// log returns the end of what the serving process wrote: its part of the
// log file in the store for a daemon, its output for a foreground mount.
func (m *mount) log() string {
	path := filepath.Join(m.store, "xlogfs.log")
	if m.fg != nil {
		path = m.fgOutput
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	if m.fg == nil && m.logEnded && m.logEnd <= int64(len(b)) {
		b = b[:m.logEnd]
	}
	if m.fg == nil && m.logStart <= int64(len(b)) {
		b = b[m.logStart:]
	}
	const keep = 8 << 10
	if len(b) > keep {
		b = append([]byte("...\n"), b[len(b)-keep:]...)
	}
	return string(b)
}

// liveMounts are the mounts not undone yet, for undoMountsOnInterrupt.
var liveMounts = struct {
	sync.Mutex
	dirs map[*mount]string
}{dirs: map[*mount]string{}}

func (m *mount) setLive(live bool) {
	liveMounts.Lock()
	defer liveMounts.Unlock()
	m.live = live
	if live {
		liveMounts.dirs[m] = m.dir
	} else {
		delete(liveMounts.dirs, m)
	}
}

func (m *mount) isLive() bool {
	liveMounts.Lock()
	defer liveMounts.Unlock()
	return m.live
}

// undoMountsOnInterrupt makes an interrupted test run (^C, SIGTERM) detach
// its mounts before it dies, since the daemons outlive it and test cleanups
// do not run then; each daemon then finishes its unmount by itself. A
// broken standard output (go test piped into a pager that quit) must not
// kill the run before its cleanups either: with SIGPIPE caught, such writes
// just fail.
func undoMountsOnInterrupt() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-sigs
		liveMounts.Lock()
		defer liveMounts.Unlock()
		fmt.Fprintf(os.Stderr, "tests: %v: detaching %d xlogfs test mounts\n", sig, len(liveMounts.dirs))
		for _, dir := range liveMounts.dirs {
			if out, err := exec.Command("fusermount3", "-u", "-z", dir).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "tests: fusermount3 -u -z %s: %v: %s\n", dir, err, out)
			}
		}
		os.RemoveAll(filepath.Dir(xlogfsBin))
		os.Exit(2)
	}()
}

// fileSize returns the size of path, 0 if it does not exist.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// isMounted reports whether dir is a mount point in this mount namespace,
// from the mount table: it never touches dir, whose daemon may be hung.
func isMounted(dir string) bool {
	ms, err := mountinfo.GetMounts(mountinfo.SingleEntryFilter(dir))
	return err == nil && len(ms) > 0
}

// anyLineFields reports whether some line of the file at path, split into
// fields, satisfies match (false when the file cannot be read).
func anyLineFields(path string, match func(fields []string) bool) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if match(strings.Fields(sc.Text())) {
			return true
		}
	}
	return false
}

// readStats reads the mount's .stats file into a map of name to value.
func readStats(t testing.TB, mnt string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mnt, ".stats"))
	if err != nil {
		t.Fatalf("reading .stats: %v", err)
	}
	return parseStats(t, string(b))
}

// parseStats reads the .stats format (journal.ParseStats, the one parser
// of it) into a map of name to value; histograms are left out.
func parseStats(t testing.TB, text string) map[string]string {
	t.Helper()
	f, err := statsfile.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	stats := map[string]string{}
	for _, l := range f.Lines {
		stats[l.Name] = l.Value
	}
	return stats
}

// statUint returns a numeric counter from .stats.
func statUint(t testing.TB, stats map[string]string, name string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(stats[name], 10, 64)
	if err != nil {
		t.Fatalf(".stats %s = %q: %v", name, stats[name], err)
	}
	return v
}
