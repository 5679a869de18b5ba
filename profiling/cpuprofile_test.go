package profiling_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/xlogfs/xlogfs/profiling"
)

func TestStartCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := profiling.StartCPUProfile(path)
	if err != nil {
		if strings.Contains(err.Error(), "already in use") {
			t.Skip(err) // go test -cpuprofile
		}
		t.Fatal(err)
	}
	// A second profile cannot start while this one runs, and must not
	// touch the file it was given.
	other := filepath.Join(t.TempDir(), "other.pprof")
	os.WriteFile(other, []byte("keep"), 0o644)
	if stop2, err := profiling.StartCPUProfile(other); err == nil {
		stop2()
		t.Error("a second CPU profile started")
	} else if !strings.Contains(err.Error(), other) {
		t.Errorf("second profile: %v; want the file named", err)
	}
	if b, _ := os.ReadFile(other); string(b) != "keep" {
		t.Errorf("failed start changed the existing file to %q", b)
	}

	var h [32]byte
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		h = sha256.Sum256(h[:])
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Errorf("second stop: %v", err)
	}
	p, err := profiling.ReadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := profiling.Analyze(p); err != nil {
		t.Errorf("the profile written is not a CPU profile: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %q", left)
	}
}

func TestStartCPUProfileErrors(t *testing.T) {
	if _, err := profiling.StartCPUProfile(""); err == nil {
		t.Error("empty path: no error")
	}
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "cpu.pprof")
	if stop, err := profiling.StartCPUProfile(path); err == nil {
		stop()
		t.Error("profile into a missing directory started")
	} else if !strings.Contains(err.Error(), path) {
		t.Errorf("missing directory: %v; want the file named", err)
	}
}

// TestStartCPUProfileRate profiles 300 ms of CPU work at 1 kHz: the
// profile must say 1 ms per sample, and hold clearly more samples than a
// 100 Hz profile would (30), which shows the rate took effect rather than
// only the header. Linux samples a thread at most once per scheduler tick,
// so at CONFIG_HZ=250 there are about 75, not 300.
func TestStartCPUProfileRate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := profiling.StartCPUProfileRate(path, 1000)
	if err != nil {
		if strings.Contains(err.Error(), "already in use") {
			t.Skip(err) // go test -cpuprofile
		}
		t.Fatal(err)
	}
	cpu0, ok := processCPU()
	if !ok {
		stop()
		t.Skip("no process CPU clock here to know how much work was done")
	}
	defer func() {
		if t.Failed() {
			stop()
		}
	}()
	var h [32]byte
	for {
		for range 1000 {
			h = sha256.Sum256(h[:])
		}
		if c, _ := processCPU(); c-cpu0 >= 300*time.Millisecond {
			break
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	cpu1, _ := processCPU()
	p, err := profiling.ReadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	share, err := profiling.Analyze(p)
	if err != nil {
		t.Fatal(err)
	}
	if share.Samples < 50 {
		t.Errorf("%d samples for 300 ms of CPU at 1 kHz (100 Hz gives 30): the rate did not take effect", share.Samples)
	}
	// The profile adds up to the process's CPU time over its window
	// (which starts a little before cpu0 and ends a little after cpu1),
	// whatever rate the kernel delivered: the runtime alone weighs each
	// sample 1 ms, and Linux delivers at most one per tick.
	if got, want := share.CPUSeconds, (cpu1 - cpu0).Seconds(); got < 0.9*want || got > 1.25*want {
		t.Errorf("profile total %.3f s of CPU, process CPU over the window %.3f s", got, want)
	}
	if len(p.Comments) == 0 || !strings.Contains(p.Comments[len(p.Comments)-1], "asked 1000 Hz, reached") {
		t.Errorf("profile comments %q: want the rate asked and reached", p.Comments)
	}
	if per := time.Duration(p.Period); per < time.Millisecond {
		t.Errorf("period %v: want the CPU time per sample, at least the 1 ms asked", per)
	}
	t.Logf("%d samples, %.3f s in the profile, %.3f s of process CPU; %s", share.Samples, share.CPUSeconds, (cpu1 - cpu0).Seconds(), p.Comments)
	if _, err := profiling.StartCPUProfileRate(path, -1); err == nil {
		t.Error("a negative rate was accepted")
	}
}

// A profile whose samples were weighted at the rate asked (1 ms each at
// 1 kHz) but that stands for four times that CPU time is scaled to it: the
// samples' shares stay, the total becomes the process's CPU time, the
// period the CPU time per sample. Without the process's CPU time the
// profile is left as taken, and says so.
func TestRescaleProfile(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: "github.com/xlogfs/xlogfs/amd64.crc32cVEX"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 1e6,
		Function: []*profile.Function{fn}, Location: []*profile.Location{loc},
		Sample: []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{3, 3e6}},
			{Location: []*profile.Location{loc}, Value: []int64{1, 1e6}}},
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	out, err := profiling.RescaleProfile(buf.Bytes(), 16*time.Millisecond, nil, 1000)
	if err != nil {
		t.Fatal(err)
	}
	q, err := profile.ParseData(out)
	if err != nil {
		t.Fatal(err)
	}
	if v0, v1 := q.Sample[0].Value, q.Sample[1].Value; v0[1] != 12e6 || v1[1] != 4e6 || v0[0] != 3 || v1[0] != 1 {
		t.Errorf("values %v and %v, want [3 12000000] and [1 4000000]", v0, v1)
	}
	if q.Period != 4e6 || len(q.Comments) != 1 || !strings.Contains(q.Comments[0], "asked 1000 Hz, reached 250 samples per CPU second") {
		t.Errorf("period %d, comments %q: want 4 ms per sample (4 samples in 16 ms) and the rate reached", q.Period, q.Comments)
	}
	out, err = profiling.RescaleProfile(buf.Bytes(), 0, errors.New("no getrusage"), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if q, err = profile.ParseData(out); err != nil || q.Sample[0].Value[1] != 3e6 || !strings.Contains(q.Comments[0], "no getrusage") {
		t.Errorf("without the process's CPU time: %v, %+v: want the profile as taken, saying why", err, q)
	}
}
