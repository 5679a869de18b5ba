package main

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// commandLines are every command as typed, "bench report" included.
func commandLines() [][]string {
	var out [][]string
	for _, c := range commands {
		out = append(out, strings.Fields(c.name))
	}
	return out
}

// wantUsageError checks a usage error: exit status 2, the first line as
// given, then the command's one usage line and the pointer to --help, and
// nothing more (not the whole help).
func wantUsageError(t *testing.T, args []string, cmd, firstLine string) {
	t.Helper()
	code, out, errs := runCapture(t, args...)
	lines := strings.Split(strings.TrimRight(errs, "\n"), "\n")
	if code != 2 {
		t.Errorf("xlogfs %s: exit %d, want 2\n%s", strings.Join(args, " "), code, errs)
		return
	}
	if lines[0] != firstLine {
		t.Errorf("xlogfs %s: first line\n\t%q\nwant\n\t%q", strings.Join(args, " "), lines[0], firstLine)
	}
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "usage: xlogfs "+cmd) || lines[2] != "Try 'xlogfs "+cmd+" --help' for more information." {
		t.Errorf("xlogfs %s: want the message, one usage line and the pointer to --help, got:\n%s", strings.Join(args, " "), errs)
	}
	if out != "" {
		t.Errorf("xlogfs %s: a usage error printed to stdout: %q", strings.Join(args, " "), out)
	}
}

func TestUsageErrorsOfEveryCommand(t *testing.T) {
	for _, c := range commandLines() {
		name := strings.Join(c, " ")
		wantUsageError(t, append(c, "--bogus"), name, "xlogfs "+name+": unknown flag --bogus")
		wantUsageError(t, append(c, "--bogus=1"), name, "xlogfs "+name+": unknown flag --bogus")
		wantUsageError(t, append(c, "-y"), name, "xlogfs "+name+": unknown flag -y in -y")
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		first string // after "xlogfs CMD: "
	}{
		{[]string{"mount"}, "missing DIR and MOUNTPOINT"},
		{[]string{"mount", "store"}, "missing MOUNTPOINT"},
		{[]string{"mount", "a", "b", "c"}, `too many arguments: "c" (want DIR MOUNTPOINT)`},
		{[]string{"mount", "--cksum-mode", "foo", "a", "b"}, `--cksum-mode: unknown checksum mode "foo" (want batched, xfs, sector or inline)`},
		{[]string{"mount", "--cksum-mode"}, "flag needs an argument: --cksum-mode"},
		{[]string{"mount", "--journal", "all", "a", "b"}, `--journal: unknown journal mode "all" (want meta or data)`},
		{[]string{"mount", "--log-items", "physical", "a", "b"}, `--log-items: unknown log items "physical" (want xfs or logical)`},
		{[]string{"mount", "--transport", "splice", "a", "b"}, `--transport: unknown transport "splice" (want classic, uring or auto)`},
		{[]string{"mount", "--logbsize", "12q", "a", "b"}, `invalid value "12q" for --logbsize: bad size "12q" (want a number with an optional k, m, g or t suffix, e.g. 256k or 64MiB)`},
		{[]string{"mount", "--logbsize", "48k", "a", "b"}, "--logbsize 48k: want a power of two from 32k to 256k"},
		{[]string{"mount", "--logbufs", "9", "a", "b"}, "--logbufs 9: want 2 to 8"},
		{[]string{"mount", "--checkpoint-interval", "0s", "a", "b"}, "--checkpoint-interval must be positive"},
		{[]string{"mount", "--attr-timeout", "soon", "a", "b"}, `invalid value "soon" for --attr-timeout: want a duration such as 500ms, 2s or 1m30s`},
		{[]string{"mount", "--flush-latency", "2s", "a", "b"}, "--flush-latency 2s: want 0 (off) to 1s"},
		{[]string{"mount", "--cpuprofile-rate", "0", "a", "b"}, "--cpuprofile-rate 0: want 1 to 100000 Hz"},
		{[]string{"mount", "--pprof", "0.0.0.0:6060", "a", "b"}, "--pprof: 0.0.0.0:6060 is not a loopback address (127.0.0.0/8, ::1, localhost); profiles expose memory contents, so serving them to the network needs --pprof-any-addr"},
		{[]string{"mount", "--pprof", "6060", "a", "b"}, `--pprof: "6060" is not host:port, such as 127.0.0.1:6060`},
		{[]string{"mount", "--debug=maybe", "a", "b"}, `invalid value "maybe" for --debug: want true or false`},
		{[]string{"mkfs"}, "missing DIR"},
		{[]string{"mkfs", "--log-size", "12q", "d"}, `invalid value "12q" for --log-size: bad size "12q" (want a number with an optional k, m, g or t suffix, e.g. 256k or 64MiB)`},
		{[]string{"mkfs", "a", "b"}, `too many arguments: "b" (want DIR)`},
		{[]string{"mkfs", "--log-size", "64k", "d"}, "--log-size 64k: want 512k to 1024G"},
		{[]string{"mkfs", "--logbsize", "100k", "d"}, "--logbsize 100k: want a power of two from 32k to 256k"},
		{[]string{"umount"}, "missing MOUNTPOINT"},
		{[]string{"umount", "--timeout", "x", "m"}, `invalid value "x" for --timeout: want a duration such as 500ms, 2s or 1m30s`},
		{[]string{"stats"}, "missing MOUNTPOINT"},
		{[]string{"check"}, "missing DIR"},
		{[]string{"logprint"}, "missing DIR"},
		{[]string{"logprint", "--wait", "x", "d"}, `invalid value "x" for --wait: want a duration such as 500ms, 2s or 1m30s`},
		{[]string{"logprint", "--from", "12", "d"}, `--from: "12" is not an LSN: want cycle,block as logprint prints it, e.g. 1,0`},
		{[]string{"logprint", "--from", "2,0", "--to", "1,5", "d"}, "--to 1,5 is before --from 2,0"},
		{[]string{"logprint", "--type", "mkdir", "d"}, `--type: unknown op type "mkdir" (want create, link, unlink, rmdir, rename, setattr, write, fallocate, setxattr, removexattr, free, sizefollows or unmount)`},
		{[]string{"logprint", "--ino", "x", "d"}, `invalid value "x" for --ino: want a whole number`},
		{[]string{"stats", "--interval", "1ms", "m"}, "--interval 1ms: want 10ms or more"},
		{[]string{"stats", "--count", "2", "m"}, "--count needs --interval"},
		{[]string{"stats", "-i", "0", "m"}, "--interval 0s: want 10ms or more"},
		{[]string{"mkfs", "--log-size", "2T", "d"}, "--log-size 2T: want 512k to 1024G"},
		{[]string{"stats", "-i", "x", "m"}, `invalid value "x" for -i/--interval: want a duration such as 500ms, 2s or 1m30s`},
		{[]string{"loopback-mount", "d"}, "missing MOUNTPOINT"},
		{[]string{"pprof-share"}, "missing PROFILE"},
		{[]string{"version", "now"}, `takes no arguments, got "now"`},
		{[]string{"bench", "--modes", "bogus"}, `--modes: unknown checksum mode "bogus" (want batched, xfs, sector or inline)`},
		{[]string{"bench", "--rounds", "0"}, "--rounds: at least 1"},
		{[]string{"bench", "--baseline", "ext4"}, `--baseline: unknown "ext4" (want loopback, native, xfs or none)`},
		{[]string{"bench", "--transports", "auto"}, `--transports: unknown transport "auto" (want classic or uring)`},
		{[]string{"bench", "report"}, "missing DIR"},
		{[]string{"cksum-bench", "--sizes", "0"}, "--sizes: 0 out of range (1 byte to 64 MiB)"},
		{[]string{"cksum-bench", "--record-sizes", "1000"}, "--record-sizes: 1000 is not a multiple of 512 from 1k to 256k"},
		{[]string{"cksum-bench", "--modes", "crc"}, `--modes: unknown checksum mode "crc" (want batched, xfs, sector or inline)`},
		{[]string{"algo-bench", "--trials", "0"}, "--trials must be at least 1"},
		{[]string{"mkfs", "--crc", "sha", "d"}, `--crc: unknown CRC coverage "sha" (want whole or xfs)`},
	} {
		cmd := tc.args[0]
		if len(tc.args) > 1 && tc.args[0] == "bench" && tc.args[1] == "report" {
			cmd = "bench report"
		}
		wantUsageError(t, tc.args, cmd, "xlogfs "+cmd+": "+tc.first)
	}
}

// TestRuntimeFailuresExit1 checks failures that are not mistakes on the
// command line: exit status 1, a message in the user's terms.
func TestRuntimeFailuresExit1(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such")
	file := filepath.Join(t.TempDir(), "README.md")
	os.WriteFile(file, []byte("# not a store\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stats", missing}, "xlogfs stats: " + missing + ": no such file or directory"},
		{[]string{"check", missing}, "is not an xlogfs store"},
		{[]string{"pprof-share", missing}, "no such file or directory"},
		{[]string{"mkfs", file}, "xlogfs mkfs: " + file + " is a file, not a directory: a store is a directory"},
		{[]string{"logprint", file}, "xlogfs logprint: " + file + " is a file, not a directory"},
		{[]string{"check", file}, "xlogfs check: " + file + " is a file, not a directory"},
		{[]string{"umount", "/nonexistent-xlogfs"}, "xlogfs umount: /nonexistent-xlogfs does not exist, so nothing is mounted there"},
	} {
		code, _, errs := runCapture(t, tc.args...)
		if code != 1 || !strings.Contains(errs, tc.want) || strings.Contains(errs, "readdirent") || strings.Contains(errs, "lstat") {
			t.Errorf("xlogfs %s: exit %d, %q; want exit 1 and %q", strings.Join(tc.args, " "), code, errs, tc.want)
		}
		if regexp.MustCompile(`(journal|profiling|fusefs|logbuf|cksum): `).MatchString(errs) {
			t.Errorf("xlogfs %s: a package name in the message: %q", strings.Join(tc.args, " "), errs)
		}
	}
}

// TestMountChecksBeforeWork checks that a mount that cannot work fails
// before it makes a store or recovers one: a missing or non-directory
// mount point, a file-holding one without --nonempty, a --pprof port in
// use, a --log in a missing directory.
func TestMountChecksBeforeWork(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	full := filepath.Join(base, "full")
	os.Mkdir(full, 0o755)
	os.WriteFile(filepath.Join(full, "precious"), []byte("x"), 0o644)
	empty := filepath.Join(base, "empty")
	os.Mkdir(empty, 0o755)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, tc := range []struct {
		flags    []string
		mnt      string
		want     string
		exitCode int
	}{
		{nil, filepath.Join(base, "no", "such"), "mount point " + filepath.Join(base, "no", "such") + ": no such file or directory", 1},
		{nil, file, "mount point " + file + " is not a directory", 1},
		{nil, full, "mount point " + full + " is not empty (it holds precious); the mount would hide its files: use --nonempty to mount over them", 1},
		{[]string{"--pprof", ln.Addr().String()}, empty, "--pprof: " + ln.Addr().String() + " is in use by another program: address already in use", 1},
		{[]string{"--log", filepath.Join(base, "no", "x.log")}, empty, "--log " + filepath.Join(base, "no", "x.log") + ": no such file or directory", 1},
		{[]string{"--pprof", "0.0.0.0:0"}, empty, "--pprof: 0.0.0.0:0 is not a loopback address", 2},
	} {
		for _, fg := range []bool{false, true} {
			store := filepath.Join(base, "store")
			args := append([]string{"mount"}, tc.flags...)
			if fg {
				args = append(args, "--foreground")
			}
			args = append(args, store, tc.mnt)
			code, _, errs := runCapture(t, args...)
			first, _, _ := strings.Cut(errs, "\n")
			if code != tc.exitCode || !strings.HasPrefix(first, "xlogfs mount: "+tc.want) {
				t.Errorf("xlogfs %s: exit %d, %q; want exit %d and %q", strings.Join(args, " "), code, first, tc.exitCode, tc.want)
			}
			if _, err := os.Stat(store); err == nil {
				t.Errorf("xlogfs %s left a store behind in %s", strings.Join(args, " "), store)
				os.RemoveAll(store)
			}
		}
	}
	// A directory that is neither empty nor a store is refused too, and
	// left as it was.
	code, _, errs := runCapture(t, "mount", full, empty)
	if code != 1 || !strings.Contains(errs, full+" is not empty and is not an xlogfs store") {
		t.Errorf("mount of a foreign directory: exit %d, %q", code, errs)
	}
}

// TestHelpListsEveryFlag checks --help of every command: the usage line
// names every flag the command has, and flags are spelled --name.
func TestHelpListsEveryFlag(t *testing.T) {
	for _, c := range commandLines() {
		name := strings.Join(c, " ")
		code, out, _ := runCapture(t, append(c, "--help")...)
		if code != 0 {
			t.Errorf("%s --help: exit %d", name, code)
			continue
		}
		synopsis, rest, _ := strings.Cut(out, "\n\n")
		if !strings.HasPrefix(synopsis, "usage: xlogfs "+name) {
			t.Errorf("%s --help starts %q", name, synopsis)
		}
		_, list, hasFlags := strings.Cut(rest, "\nflags:\n")
		if !hasFlags {
			continue
		}
		for _, line := range strings.Split(list, "\n") {
			if !strings.HasPrefix(line, "  -") {
				continue
			}
			m := regexp.MustCompile(`^  (?:-[a-z], )?--([a-z0-9-]+)`).FindStringSubmatch(line)
			if m == nil {
				t.Errorf("%s --help: flag line %q is not \"--name\"", name, line)
				continue
			}
			if !regexp.MustCompile(`\[(?:-[a-z]\|)?--` + regexp.QuoteMeta(m[1]) + `[ \]]`).MatchString(synopsis) {
				t.Errorf("%s --help: the usage line leaves out --%s:\n%s", name, m[1], synopsis)
			}
		}
	}
}

// TestEnumFlagsListTheirValues checks that an enumeration flag's help line
// lists its values, and that shell completion offers them.
func TestEnumFlagsListTheirValues(t *testing.T) {
	code, out, _ := runCapture(t, "mount", "--help")
	if code != 0 || !strings.Contains(out, "[--passthrough auto|on|off]") ||
		!regexp.MustCompile(`(?s)--cksum-mode MODE\n.*?\(one\s+of:\s+batched,\s+xfs,\s+sector,\s+inline\)`).MatchString(out) {
		t.Errorf("mount --help does not list --cksum-mode's or --passthrough's values:\n%s", out)
	}
	code, out, _ = runCapture(t, "__complete", "mount", "--transport", "")
	if code != 0 || !strings.HasPrefix(out, "classic\nuring\nauto\n") {
		t.Errorf("completion of --transport: exit %d, %q", code, out)
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		code, out, errs := runCapture(t, "completion", sh)
		if code != 0 || !strings.Contains(out, "xlogfs") || len(out) < 1000 {
			t.Errorf("completion %s: exit %d, %d bytes, %s", sh, code, len(out), errs)
		}
	}
}
