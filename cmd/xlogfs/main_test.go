package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"4096": 4096, "4k": 4096, "256K": 256 << 10, "64MiB": 64 << 20, "1g": 1 << 30, "512b": 512, " 32kb ": 32 << 10} {
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
		code, out, errs := runCapture(t, c.name, "--help")
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
	code, out, errs := runCapture(t, "cksum-bench", "--json", "--time", "20ms", "--rounds", "1", "--sizes", "64,4k")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res cksumBenchResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if len(res.Impls) < 2 || len(res.Impls[0].Sizes) != 2 || len(res.Modes) != 3 {
		t.Fatalf("unexpected result shape: %+v", res)
	}
	for _, im := range res.Impls {
		for _, s := range im.Sizes {
			if s.GBps <= 0 {
				t.Errorf("%s at %d: %v GB/s", im.Name, s.Bytes, s.GBps)
			}
		}
	}
	want := map[string]int{"batched": 1, "xfs": 9, "sector": 512}
	for _, m := range res.Modes {
		if m.CallsPerRecord != want[m.Mode] {
			t.Errorf("mode %s: %d calls per 256 KiB record, want %d", m.Mode, m.CallsPerRecord, want[m.Mode])
		}
	}
}
