package xfsbase

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Env is what Probe asks of the machine, each piece replaceable so that a
// test can take one away.
type Env struct {
	Euid     func() int
	LookPath func(name string) (string, error)
	ReadFile func(path string) ([]byte, error)
	Exists   func(path string) bool
	Release  func() string // the kernel's release (uname -r)
	// PerfTrial profiles the machine for a moment the way the bench
	// will, and says why it cannot.
	PerfTrial func(perf string) error
}

// System is the real machine.
func System() Env {
	return Env{
		Euid:      os.Geteuid,
		LookPath:  LookTool,
		ReadFile:  os.ReadFile,
		Exists:    func(p string) bool { _, err := os.Stat(p); return err == nil },
		Release:   release,
		PerfTrial: perfTrial,
	}
}

// Readiness says what the kernel XFS baseline can measure here. XFS nil:
// it can make, loop-mount and measure an XFS image. Perf nil: perf can
// profile the whole machine, so the kernel's checksum CPU is measured;
// otherwise it is "not measured" for the reason Perf gives.
type Readiness struct {
	XFS      error
	Perf     error
	PerfPath string
	Mkfs     string
	Losetup  string
}

// InstallHint is how the error for a missing program says to install it.
const InstallHint = `make bench-deps BENCH_ARGS="--baseline xfs"`

// Missing is the error for a program the baseline needs that is not
// installed, naming the Debian package that has it.
func Missing(what, pkg string) error {
	return fmt.Errorf("%s not found: install it with apt-get install %s, or %s", what, pkg, InstallHint)
}

// Probe finds out what the baseline can do on env's machine: run kernel XFS
// at all (root, XFS in the kernel, mkfs.xfs, losetup and a loop device),
// and profile it with perf.
func Probe(env Env) Readiness {
	var r Readiness
	r.XFS = func() error {
		if env.Euid() != 0 {
			return errors.New("not root: making a loop device and mounting XFS need root (CAP_SYS_ADMIN)")
		}
		if err := kernelHasXFS(env); err != nil {
			return err
		}
		var err error
		if r.Mkfs, err = env.LookPath("mkfs.xfs"); err != nil {
			return Missing("mkfs.xfs", "xfsprogs")
		}
		if r.Losetup, err = env.LookPath("losetup"); err != nil {
			return Missing("losetup", "mount")
		}
		if !env.Exists("/dev/loop-control") {
			return errors.New("no loop device: /dev/loop-control is missing (modprobe loop, or a kernel with CONFIG_BLK_DEV_LOOP)")
		}
		return nil
	}()
	r.Perf = func() error {
		var err error
		if r.PerfPath, err = env.LookPath("perf"); err != nil {
			return Missing("perf", "linux-perf")
		}
		if env.Euid() != 0 {
			paranoid, _ := env.ReadFile("/proc/sys/kernel/perf_event_paranoid")
			if p := strings.TrimSpace(string(paranoid)); p != "" && p != "-1" {
				return fmt.Errorf("perf cannot profile the whole machine: not root and kernel.perf_event_paranoid is %s (needs -1)", p)
			}
		}
		if err := env.PerfTrial(r.PerfPath); err != nil {
			return fmt.Errorf("perf cannot profile the whole machine: %w", err)
		}
		return nil
	}()
	return r
}

// kernelHasXFS: XFS is registered (/proc/filesystems) or a module the
// mount will load.
func kernelHasXFS(env Env) error {
	fss, err := env.ReadFile("/proc/filesystems")
	if err != nil {
		return fmt.Errorf("cannot tell whether the kernel has XFS: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(fss))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 0 && f[len(f)-1] == "xfs" {
			return nil
		}
	}
	rel := env.Release()
	dep := filepath.Join("/lib/modules", rel, "modules.dep")
	if b, err := env.ReadFile(dep); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			mod, _, _ := strings.Cut(l, ":")
			if base := filepath.Base(mod); base == "xfs.ko" || strings.HasPrefix(base, "xfs.ko.") {
				return nil
			}
		}
	}
	return fmt.Errorf("the kernel has no XFS: not in /proc/filesystems, and no xfs module in %s", dep)
}

// KernelSymbol checks that perf can name sym in kernel samples: it is in
// /proc/kallsyms with a real address (kernel.kptr_restrict shows zeros to
// those it hides them from).
func KernelSymbol(readFile func(string) ([]byte, error), sym string) error {
	b, err := readFile("/proc/kallsyms")
	if err != nil {
		return fmt.Errorf("cannot read /proc/kallsyms: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[2] != sym {
			continue
		}
		if strings.Trim(f[0], "0") == "" {
			return fmt.Errorf("%s's address in /proc/kallsyms reads 0 (kernel.kptr_restrict): perf cannot name kernel frames", sym)
		}
		return nil
	}
	return fmt.Errorf("%s is not in /proc/kallsyms: this kernel's XFS has no such function to sample", sym)
}

// LookTool finds a program on PATH or in the sbin directories, which a
// root shell may not have on PATH (the baselines' mkfs.xfs, losetup,
// dmsetup, perf).
func LookTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

func release() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// perfTrial records the machine for a moment, enabled and disabled through
// the control pipe as the bench does, and reads the samples back.
func perfTrial(perf string) error {
	dir, err := os.MkdirTemp("", "xlogfs-perf-trial-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "perf.data")
	r, err := StartRecord(perf, data, 997)
	if err != nil {
		return err
	}
	if err := r.Enable(); err != nil {
		r.Kill()
		return err
	}
	time.Sleep(50 * time.Millisecond)
	if err := r.Stop(); err != nil {
		return err
	}
	if _, err := Script(perf, data, r.Pid(), 997); err != nil {
		return err
	}
	return nil
}
