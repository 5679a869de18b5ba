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
