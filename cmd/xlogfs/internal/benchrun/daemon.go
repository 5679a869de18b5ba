package benchrun

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
	"golang.org/x/sys/unix"
)

// tmpfsMagic is statfs's f_type of a tmpfs.
const tmpfsMagic = 0x01021994

// ramStore gives the bench a tmpfs to put stores on: one it mounts at
// OUT/ram (as root), else a folder in /dev/shm if that is a tmpfs. cleanup
// unmounts or removes it.
func ramStore(out string) (dir string, cleanup func(), how string, err error) {
	dir = filepath.Join(out, "ram")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, "", err
	}
	merr := unix.Mount("xlogfs-bench", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=75%")
	if merr == nil {
		return dir, func() {
			if unix.Unmount(dir, 0) != nil {
				unix.Unmount(dir, unix.MNT_DETACH)
			}
			os.Remove(dir)
		}, "a tmpfs mounted at " + dir, nil
	}
	os.Remove(dir)
	var st unix.Statfs_t
	if unix.Statfs("/dev/shm", &st) == nil && st.Type == tmpfsMagic {
		if d, err := os.MkdirTemp("/dev/shm", "xlogfs-bench-"); err == nil {
			return d, func() { os.RemoveAll(d) }, "tmpfs " + d + " (mounting one failed: " + merr.Error() + ")", nil
		}
	}
	return "", nil, "", fmt.Errorf("--device ram: cannot mount a tmpfs at %s (%v), and /dev/shm is no tmpfs", dir, merr)
}

func selfExe() string {
	exe, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return exe
}

// mounted is a filesystem daemon the bench started.
type mounted struct {
	cmd  *exec.Cmd
	mnt  string
	done bool
}

// mount starts a daemon in the foreground (its CPU profile then holds the
// filesystem alone) and waits until it reports the mount ready.
func (b *Bencher) mount(t benchreport.Target, store, mnt, profile, logFile string) (*mounted, error) {
	var args []string
	switch t.Kind {
	case "xlogfs":
		args = []string{"mount", "--foreground", "--cksum-mode", t.Mode, "--journal", b.Cfg.Journal,
			"--cksum-impl", t.Impl, "--cpuprofile", profile, "--cpuprofile-rate", strconv.Itoa(b.Cfg.ProfileRate), "--log", logFile}
		if b.Cfg.FlushLatency > 0 {
			args = append(args, "--flush-latency", b.Cfg.FlushLatency.String())
		}
		if t.Transport != "" {
			args = append(args, "--transport", t.Transport)
		}
		args = append(append(args, b.Cfg.MountFlags...), store, mnt)
	case "loopback":
		if err := os.MkdirAll(store, 0o755); err != nil {
			return nil, err
		}
		// The best loopback: with HANDLE_KILLPRIV_V2, as xlogfs mounts,
		// no GETXATTR before every write.
		args = []string{"loopback-mount", "--cpuprofile", profile, "--handle-killpriv-v2", "--stats", loopbackStats(mnt)}
		// The emulated device: its own flush, unless its directory is
		// on dm-delay's device already.
		if b.Cfg.FlushLatency > 0 && !b.delayed(t) {
			args = append(args, "--flush-latency", b.Cfg.FlushLatency.String())
		}
		args = append(args, store, mnt)
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(selfExe(), args...)
	cmd.Env = append(os.Environ(), b.ReadyEnv+"=3")
	cmd.ExtraFiles = []*os.File{wr}
	// Its own process group: the terminal's Ctrl-C reaches the bench
	// alone, which stops the workload and then unmounts (SIGTERM), in
	// that order, rather than the mount vanishing under the workload.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	wr.Close()
	m := &mounted{cmd: cmd, mnt: mnt}
	sc := bufio.NewScanner(rd)
	var msgs []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "ready "):
			rd.Close()
			return m, nil
		case strings.HasPrefix(line, "error "):
			m.kill()
			return nil, errors.New(strings.TrimPrefix(line, "error "))
		default:
			msgs = append(msgs, line)
		}
	}
	m.kill()
	return nil, fmt.Errorf("the %s daemon exited before the mount was ready: %s", t.Kind, strings.Join(msgs, "; "))
}

// unmount asks the daemon to unmount (SIGTERM: checkpoint, unmount record,
// profile written) and returns the CPU time it used.
func (m *mounted) unmount() (float64, error) {
	if m.done {
		return 0, nil
	}
	m.cmd.Process.Signal(syscall.SIGTERM)
	errc := make(chan error, 1)
	go func() { errc <- m.cmd.Wait() }()
	select {
	case err := <-errc:
		m.done = true
		if err != nil {
			return 0, fmt.Errorf("daemon for %s: %v", m.mnt, err)
		}
	case <-time.After(60 * time.Second):
		m.kill()
		return 0, fmt.Errorf("daemon for %s did not exit within 60 s of SIGTERM", m.mnt)
	}
	ru, ok := m.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, nil
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds(), nil
}

// kill tears a mount down however it can (after a failure).
func (m *mounted) kill() {
	if m.done {
		return
	}
	m.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { m.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		m.cmd.Process.Kill()
		<-done
	}
	exec.Command("fusermount3", "-u", "-z", m.mnt).Run()
	m.done = true
}
