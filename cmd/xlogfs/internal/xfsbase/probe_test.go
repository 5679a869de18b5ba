package xfsbase

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
)

// fakeEnv is a machine with everything the baseline needs; each test case
// takes one piece away.
func fakeEnv() Env {
	files := map[string]string{
		"/proc/filesystems":                    "nodev\ttmpfs\n\text4\n\txfs\n",
		"/proc/sys/kernel/perf_event_paranoid": "2\n",
	}
	return Env{
		Euid:     func() int { return 0 },
		LookPath: func(name string) (string, error) { return "/usr/sbin/" + name, nil },
		ReadFile: func(p string) ([]byte, error) {
			if s, ok := files[p]; ok {
				return []byte(s), nil
			}
			return nil, os.ErrNotExist
		},
		Exists:    func(p string) bool { return p == "/dev/loop-control" },
		Release:   func() string { return "6.1.0-test" },
		PerfTrial: func(string) error { return nil },
	}
}

func without(name string) func(string) (string, error) {
	return func(n string) (string, error) {
		if n == name {
			return "", fmt.Errorf("%s not found", n)
		}
		return "/usr/sbin/" + n, nil
	}
}

// What the baseline cannot do is said, with why: XFS not at all (not root,
// no XFS in the kernel, no mkfs.xfs, no losetup, no loop device), or its
// checksum CPU not (no perf, perf refused), never silently.
func TestProbeSaysWhatIsMissing(t *testing.T) {
	ok := Probe(fakeEnv())
	if ok.XFS != nil || ok.Perf != nil || ok.PerfPath != "/usr/sbin/perf" || ok.Mkfs != "/usr/sbin/mkfs.xfs" {
		t.Fatalf("all there: %+v", ok)
	}
	for _, c := range []struct {
		name      string
		change    func(*Env)
		xfs, perf string // what the errors must say; "" = no error
	}{
		{"not root", func(e *Env) { e.Euid = func() int { return 1000 } },
			"not root: making a loop device and mounting XFS need root", "not root and kernel.perf_event_paranoid is 2"},
		{"no xfs", func(e *Env) {
			rf := e.ReadFile
			e.ReadFile = func(p string) ([]byte, error) {
				if p == "/proc/filesystems" {
					return []byte("nodev\ttmpfs\n\text4\n"), nil
				}
				return rf(p)
			}
		}, "the kernel has no XFS: not in /proc/filesystems, and no xfs module in /lib/modules/6.1.0-test/modules.dep", ""},
		{"xfs as a module", func(e *Env) {
			e.ReadFile = func(p string) ([]byte, error) {
				switch p {
				case "/proc/filesystems":
					return []byte("nodev\ttmpfs\n"), nil
				case "/lib/modules/6.1.0-test/modules.dep":
					return []byte("kernel/fs/ext4/ext4.ko.xz: kernel/fs/jbd2/jbd2.ko.xz\nkernel/fs/xfs/xfs.ko.xz: kernel/lib/libcrc32c.ko.xz\n"), nil
				}
				return nil, os.ErrNotExist
			}
		}, "", ""},
		{"no mkfs.xfs", func(e *Env) { e.LookPath = without("mkfs.xfs") },
			"mkfs.xfs not found: install it with apt-get install xfsprogs, or make bench-deps", ""},
		{"no losetup", func(e *Env) { e.LookPath = without("losetup") },
			"losetup not found: install it with apt-get install mount", ""},
		{"no loop device", func(e *Env) { e.Exists = func(string) bool { return false } },
			"no loop device: /dev/loop-control is missing", ""},
		{"no perf", func(e *Env) { e.LookPath = without("perf") },
			"", "perf not found: install it with apt-get install linux-perf, or make bench-deps BENCH_ARGS=\"--baseline xfs\""},
		{"perf refused", func(e *Env) {
			e.PerfTrial = func(string) error { return errors.New("perf record: cpu-clock: Permission denied") }
		}, "", "perf cannot profile the whole machine: perf record: cpu-clock: Permission denied"},
	} {
		env := fakeEnv()
		c.change(&env)
		r := Probe(env)
		check := func(what string, err error, want string) {
			switch {
			case want == "" && err != nil:
				t.Errorf("%s: %s: unexpected error %v", c.name, what, err)
			case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Errorf("%s: %s error %v, want one saying %q", c.name, what, err, want)
			}
		}
		check("XFS", r.XFS, c.xfs)
		check("perf", r.Perf, c.perf)
	}
}

func TestKernelSymbol(t *testing.T) {
	files := func(s string) func(string) ([]byte, error) {
		return func(string) ([]byte, error) { return []byte(s), nil }
	}
	if err := KernelSymbol(files("ffffffff8195ea70 T xlog_cksum\n"), CksumSymbol); err != nil {
		t.Errorf("present: %v", err)
	}
	if err := KernelSymbol(files("ffffffffa0123000 t xlog_cksum\t[xfs]\n"), CksumSymbol); err != nil {
		t.Errorf("in the xfs module: %v", err)
	}
	if err := KernelSymbol(files("0000000000000000 T xlog_cksum\n"), CksumSymbol); err == nil || !strings.Contains(err.Error(), "kptr_restrict") {
		t.Errorf("hidden address: %v", err)
	}
	if err := KernelSymbol(files("ffffffff8195ea70 T xlog_sync\n"), CksumSymbol); err == nil || !strings.Contains(err.Error(), "not in /proc/kallsyms") {
		t.Errorf("absent: %v", err)
	}
}

func TestOtherMounts(t *testing.T) {
	info := `26 1 254:0 / / rw,relatime - ext4 /dev/vda rw
47 26 7:0 / /work/b/mnt rw,relatime - xfs /dev/loop0 rw,logbufs=8,logbsize=256k
48 26 7:1 / /srv/my\040data rw,relatime - xfs /dev/sdb1 rw
`
	ms, err := mountinfo.GetMountsFromReader(strings.NewReader(info), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := otherMounts(ms, "/work/b/mnt")
	if len(got) != 1 || got[0] != "/dev/sdb1 on /srv/my data" {
		t.Errorf("other XFS mounts %q, want [/dev/sdb1 on /srv/my data]", got)
	}
}

// LookTool looks in the sbin directories when PATH does not have them, as
// a root shell's may not; a missing program is an error naming it.
func TestLookTool(t *testing.T) {
	var want string
	for _, p := range []string{"/usr/sbin/losetup", "/sbin/losetup", "/usr/sbin/mkfs.xfs", "/sbin/mkfs.xfs"} {
		if _, err := os.Stat(p); err == nil {
			want = p
			break
		}
	}
	if want == "" {
		t.Skip("neither losetup nor mkfs.xfs is in /usr/sbin or /sbin")
	}
	t.Setenv("PATH", t.TempDir())
	name := want[strings.LastIndex(want, "/")+1:]
	if got, err := LookTool(name); err != nil || !strings.HasSuffix(got, "/"+name) {
		t.Errorf("LookTool(%s) with an empty PATH = %q, %v; want it found in an sbin directory", name, got, err)
	}
	if _, err := LookTool("no-such-tool-xlogfs"); err == nil || !strings.Contains(err.Error(), "no-such-tool-xlogfs") {
		t.Errorf("LookTool of a missing program: %v", err)
	}
}
