package profiling_test

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	p, err := profiling.ReadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Period != int64(time.Millisecond) {
		t.Errorf("profile period %d ns, want 1 ms (1 kHz)", p.Period)
	}
	share, err := profiling.Analyze(p)
	if err != nil {
		t.Fatal(err)
	}
	if share.Samples < 50 {
		t.Errorf("%d samples for 300 ms of CPU at 1 kHz (100 Hz gives 30): the rate did not take effect", share.Samples)
	}
	if _, err := profiling.StartCPUProfileRate(path, -1); err == nil {
		t.Error("a negative rate was accepted")
	}
}
