package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// xlogfsBin is the xlogfs binary under test, built by TestMain from this
// checkout, so the tests never run a stale bin/xlogfs.
var xlogfsBin string

// helperEnv makes the test binary act as a small helper process instead of
// running tests (see runHelper): some checks need a second process, e.g.
// POSIX record locks, which never conflict within one process.
const helperEnv = "XLOGFS_TESTS_HELPER"

// testUmask is the umask the tests run under (set in TestMain): the modes
// they create files with are masked by it, as for any process.
const testUmask = 0o022

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(runHelper(os.Getenv(helperEnv), os.Args[1:]))
	}
	// A daemonized mount is orphaned when "xlogfs mount" returns; as a
	// subreaper this process inherits it, so a test can wait for it to
	// exit (the unmount is complete only then) and read its exit status.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "tests: prctl(PR_SET_CHILD_SUBREAPER): %v\n", err)
		os.Exit(1)
	}
	// A run over io_uring where the kernel cannot serve it is skipped,
	// saying why, rather than failing every mount.
	if os.Getenv(transportEnv) == "uring" {
		if why := uringUnavailable(); why != "" {
			fmt.Printf("tests: skipping the run with %s=uring: %s\n", transportEnv, why)
			os.Exit(0)
		}
	}
	// The expected permission bits in the tests assume this umask.
	unix.Umask(testUmask)
	binDir, err := os.MkdirTemp("", "xlogfs-tests-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "tests: %v\n", err)
		os.Exit(1)
	}
	xlogfsBin = filepath.Join(binDir, "xlogfs")
	if err := buildXlogfs(xlogfsBin); err != nil {
		fmt.Fprintf(os.Stderr, "tests: building xlogfs: %v\n", err)
		os.RemoveAll(binDir)
		os.Exit(1)
	}
	undoMountsOnInterrupt()
	code := m.Run()
	os.RemoveAll(binDir)
	os.Exit(code)
}

// buildXlogfs builds ./cmd/xlogfs of the module this package belongs to.
func buildXlogfs(out string) error {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd := exec.Command("go", "build", "-o", out, "./cmd/xlogfs")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build -o %s ./cmd/xlogfs in %s: %v\n%s", out, root, err, stderr.Bytes())
	}
	return nil
}

// requireFUSE fails the test when this machine cannot mount FUSE.
func requireFUSE(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Fatalf("xlogfs needs /dev/fuse to mount (%v): load the fuse module; `make test` installs fuse3", err)
	}
	if _, err := exec.LookPath("fusermount3"); err != nil {
		t.Fatalf("fusermount3 is missing (%v): `make test` installs it (Debian package fuse3)", err)
	}
}

// runHelper is the test binary's main when it runs as a helper process.
// It returns the exit status.
func runHelper(name string, args []string) int {
	switch name {
	case "lockprobe":
		return lockProbe(args)
	case "setid":
		return setidHelper(args)
	}
	fmt.Fprintf(os.Stderr, "tests helper: unknown helper %q\n", name)
	return 2
}

// helperCommand returns a command running this test binary as helper name.
func helperCommand(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+name)
	return cmd
}

// uringUnavailable says why this machine cannot mount over FUSE's io_uring
// transport, "" when it can: it needs root (the daemon mounts with
// mount(2) and sets the fuse module's enable_uring) and a kernel with
// FUSE over io_uring (Linux 6.14+, CONFIG_FUSE_IO_URING).
func uringUnavailable() string {
	const param = "/sys/module/fuse/parameters/enable_uring"
	if os.Geteuid() != 0 {
		return "not root"
	}
	if _, err := os.Stat(param); err != nil {
		return "this kernel has no FUSE over io_uring (" + param + ": " + err.Error() + ")"
	}
	return ""
}
