package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// writeCPUProfile writes a CPU profile of 100 ms: 60 in the batched-mode
// checksum (labelled), 40 elsewhere.
func writeCPUProfile(t *testing.T, path string) {
	t.Helper()
	fn := func(id uint64, name string) *profile.Function {
		return &profile.Function{ID: id, Name: name, SystemName: name}
	}
	crc := fn(1, "github.com/xlogfs/xlogfs/amd64.crc32cAVX512")
	other := fn(2, "main.main")
	lcrc := &profile.Location{ID: 1, Address: 0x1000, Line: []profile.Line{{Function: crc}}}
	lother := &profile.Location{ID: 2, Address: 0x2000, Line: []profile.Line{{Function: other}}}
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        10e6,
		DurationNanos: 1e9,
		Function:      []*profile.Function{crc, other},
		Location:      []*profile.Location{lcrc, lother},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{lcrc, lother}, Value: []int64{6, 60e6},
				Label: map[string][]string{"cksum_mode": {"batched"}, "phase": {"checksum"}}},
			{Location: []*profile.Location{lother}, Value: []int64{4, 40e6}},
		},
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
}

func TestPprofShare(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pprof"), filepath.Join(dir, "b.pprof")
	writeCPUProfile(t, a)
	writeCPUProfile(t, b)

	code, out, errs := runCapture(t, "pprof-share", a, b, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res pprofShareResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if len(res.Files) != 2 || res.Profiles != 2 || res.Samples != 20 || res.CPUSeconds != 0.2 ||
		res.ChecksumShare != 0.6 || res.PhaseShare != 0.6 ||
		len(res.Modes) != 1 || res.Modes[0].Mode != "batched" || res.Modes[0].ChecksumShare != 0.6 {
		t.Errorf("unexpected result: %+v", res)
	}

	code, out, errs = runCapture(t, "pprof-share", a)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"1 CPU profile,", "10 samples", "checksum code on the stack  0.06 s  60.0 % of CPU", "batched"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPprofShareBadFiles(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.pprof")
	os.WriteFile(corrupt, []byte("\x1f\x8b not really gzip"), 0o644)
	missing := filepath.Join(dir, "missing.pprof")
	for _, path := range []string{corrupt, missing} {
		code, _, errs := runCapture(t, "pprof-share", path)
		if code != 1 || !strings.Contains(errs, path) || strings.Contains(errs, "panic") {
			t.Errorf("pprof-share %s: exit %d, %q; want exit 1 and the file named", filepath.Base(path), code, errs)
		}
	}
	// (The usage goes to the real stderr, as the flag package prints it.)
	if code, _, _ := runCapture(t, "pprof-share"); code != 2 {
		t.Errorf("pprof-share without files: exit %d, want 2", code)
	}
}
