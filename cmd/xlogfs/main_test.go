package main

import (
	"bytes"
	"encoding/json"
	"github.com/spf13/cobra/doc"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"
)

// TestMain runs the tests, unless the test binary was started as xlogfs.
// The bench starts its mounts and its checks by running its own executable
// (selfExe), which in a test is this binary: a test that reaches a real
// bench run (one expecting a usage error that does not come) must get the
// commands, not a second run of the whole suite, which would reach the
// same test and start it again, without end.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"4096": 4096, "4k": 4096, "256K": 256 << 10, "64MiB": 64 << 20, "1g": 1 << 30, "1T": 1 << 40, "512b": 512, " 32kb ": 32 << 10} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "k", "-1", "1x", "12.5k", "99999999999999999g"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) succeeded", in)
		}
	}
}

// runCapture runs the CLI with args, capturing os.Stdout and os.Stderr
// (commands and the flag package write to them directly).
func runCapture(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	capture := func(f **os.File) (restore func() string) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		old := *f
		*f = w
		done := make(chan string)
		go func() {
			var b bytes.Buffer
			b.ReadFrom(r)
			done <- b.String()
		}()
		return func() string {
			w.Close()
			*f = old
			return <-done
		}
	}
	restoreOut := capture(&os.Stdout)
	restoreErr := capture(&os.Stderr)
	code = run(args, os.Stdout, os.Stderr)
	return code, restoreOut(), restoreErr()
}

func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range commands {
		code, out, errs := runCapture(t, append(strings.Fields(c.name), "--help")...)
		if code != 0 || !strings.Contains(out+errs, "usage: xlogfs "+c.name) {
			t.Errorf("%s --help: exit %d, output %q", c.name, code, out+errs)
		}
	}
}

func TestUnknownCommandAndBadFlag(t *testing.T) {
	if code, _, errs := runCapture(t, "frobnicate"); code != 2 || !strings.Contains(errs, "unknown command") {
		t.Errorf("unknown command: exit %d, %q", code, errs)
	}
	if code, _, _ := runCapture(t, "version", "--bogus"); code != 2 {
		t.Errorf("bad flag: exit %d, want 2", code)
	}
}

func TestCksumBenchJSON(t *testing.T) {
	code, out, errs := runCapture(t, "cksum-bench", "--json", "--time", "20ms", "--rounds", "1", "--sizes", "64,4k", "--record-sizes", "4k,64k,256k")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res cksumBenchResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if len(res.Impls) < 2 || len(res.Impls[0].Sizes) != 2 || len(res.Sweep) != len(res.Impls)*3*4 {
		t.Fatalf("unexpected result shape: %d impls, %d sweep cells (want impls × 3 sizes × 4 modes)", len(res.Impls), len(res.Sweep))
	}
	for _, im := range res.Impls {
		for _, s := range im.Sizes {
			if s.GBps <= 0 {
				t.Errorf("%s at %d: %v GB/s", im.Name, s.Bytes, s.GBps)
			}
		}
	}
	// Calls per record: one header block per 32 KiB, so 1, 2 and 8 header
	// blocks; xfs one call per header block plus the payload, sector one
	// per 512 bytes, inline one at seal (the header blocks).
	want := map[string]map[int]int{
		"batched": {4 << 10: 1, 64 << 10: 1, 256 << 10: 1},
		"xfs":     {4 << 10: 2, 64 << 10: 3, 256 << 10: 9},
		"sector":  {4 << 10: 8, 64 << 10: 128, 256 << 10: 512},
		"inline":  {4 << 10: 1, 64 << 10: 1, 256 << 10: 1},
	}
	for _, c := range res.Sweep {
		if c.CallsPerRecord != want[c.Mode][c.RecordBytes] {
			t.Errorf("%s %s at %d bytes: %d calls, want %d", c.Impl, c.Mode, c.RecordBytes, c.CallsPerRecord, want[c.Mode][c.RecordBytes])
		}
		if c.NsPerRecord <= 0 || c.RatioBatched <= 0 || c.Mode == "batched" && c.RatioBatched != 1 {
			t.Errorf("%+v: no time measured, or batched not its own reference", c)
		}
	}
	if code, _, _ := runCapture(t, "cksum-bench", "--record-sizes", "1000"); code == 0 {
		t.Error("a record size that is no multiple of 512 was accepted")
	}
}

func TestVersion(t *testing.T) {
	bi := &debug.BuildInfo{Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	v := buildVersion(bi)
	if v.Revision != "0123456789abcdef0123456789abcdef01234567" || !v.Modified || v.Time != "2026-01-02T03:04:05Z" || v.Version != Version {
		t.Errorf("from a dirty build: %+v", v)
	}
	var b bytes.Buffer
	printVersion(&b, v)
	if first, _, _ := strings.Cut(b.String(), "\n"); first != "xlogfs "+Version+" (commit 0123456789ab of 2026-01-02T03:04:05Z, with uncommitted changes)" {
		t.Errorf("version line %q", first)
	}
	bi.Settings[3].Value = "false"
	b.Reset()
	printVersion(&b, buildVersion(bi))
	if first, _, _ := strings.Cut(b.String(), "\n"); first != "xlogfs "+Version+" (commit 0123456789ab of 2026-01-02T03:04:05Z)" {
		t.Errorf("version line of a clean build %q", first)
	}
	b.Reset()
	printVersion(&b, buildVersion(&debug.BuildInfo{}))
	if !strings.HasPrefix(b.String(), "xlogfs "+Version+" (commit unknown") {
		t.Errorf("without VCS information: %q", b.String())
	}

	// The command itself reports this binary's own build information.
	code, out, _ := runCapture(t, "version", "--json")
	var got versionInfo
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("version --json: exit %d, %v: %s", code, err, out)
	}
	self, _ := debug.ReadBuildInfo()
	if want := buildVersion(self); !reflect.DeepEqual(got, want) || got.Crc32c == "" || got.Crc32cWhy == "" || got.Go == "" {
		t.Errorf("version --json %+v, want %+v", got, want)
	}
}

// TestCommandsDocUpToDate fails when docs/commands.md is not what the
// commands' --help prints: run "make docs".
// The man pages keep what the help says, placeholders in angle brackets
// too (Markdown would take <reason> for a tag and drop it).
func TestManPagesKeepPlaceholders(t *testing.T) {
	dir := t.TempDir()
	root, _ := newRoot(nil)
	root.DisableAutoGenTag = true
	manEscape(root)
	if err := doc.GenManTree(root, &doc.GenManHeader{Title: "XLOGFS", Section: "8"}, dir); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "xlogfs-mount.8"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("failed: <reason>")) {
		t.Errorf("xlogfs-mount.8 lost the <reason> of \"state failed: <reason>\"")
	}
}

func TestCommandsDocUpToDate(t *testing.T) {
	got, err := os.ReadFile(repoFile("docs/commands.md"))
	if err != nil {
		t.Fatalf("%v (run make docs)", err)
	}
	if want := commandsMarkdown(); !bytes.Equal(got, want) {
		t.Errorf("docs/commands.md is stale: run make docs")
	}
	// It holds every command's help, flags included.
	for _, c := range commands {
		if !c.hidden && !bytes.Contains(got, []byte("## xlogfs "+c.name+"\n")) {
			t.Errorf("docs/commands.md has no section for %s", c.name)
		}
	}
	if !bytes.Contains(got, []byte("--cksum-mode MODE")) {
		t.Error("docs/commands.md lacks mount's --cksum-mode")
	}
}
