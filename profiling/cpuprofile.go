package profiling

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
)

// StartCPUProfile starts a CPU profile of the whole process, to be written
// to the file at path, and returns the function that stops the profile and
// writes the file. Call stop once the work to profile is done (at unmount).
// Calling stop again does nothing and returns the first call's result.
//
// The profile goes to a temporary file beside path, renamed to path by stop,
// so path is never left half written, and a profile that fails to start
// leaves an existing file at path alone. (The runtime keeps the samples in
// memory until the profile stops anyway, so nothing is lost by writing late.)
//
// Only one CPU profile can run in a process at a time; starting a second is
// an error.
func StartCPUProfile(path string) (stop func() error, err error) {
	return StartCPUProfileRate(path, 0)
}

// DefaultRate is the sampling rate of runtime/pprof's CPU profiles: 100 Hz,
// one sample per 10 ms of CPU time.
const DefaultRate = 100

// StartCPUProfileRate is StartCPUProfile sampling at hz samples per second
// of CPU time (0: DefaultRate). A share of CPU time read from n samples
// has a relative error of about sqrt((1-p)/(p·n)) at share p, so seeing a
// 0.1 % share to ±30 % takes about 10,000 samples: 100 s of CPU at 100 Hz,
// 10 s at 1 kHz. Each sample costs the process a signal and a stack walk
// (a few µs), so 1-2 kHz costs it well under 1 % of its CPU.
//
// Linux checks a thread's CPU timer at the scheduler tick, so no thread is
// sampled more often than CONFIG_HZ times a second (250 on many kernels)
// whatever the rate asked: a faster rate then still gives one sample per
// tick, each weighted as 1/hz s. Shares of CPU time are unaffected, but the
// profile's CPU seconds fall short by that factor; compare the samples with
// the process's own CPU time to know the rate reached.
//
// runtime/pprof always asks the runtime for 100 Hz; the rate is set before
// it starts, and the runtime keeps the first rate it was given (the
// profile's period says so, so the samples' CPU time is right). The
// runtime's complaint about the second request ("cannot set cpu profile
// rate") goes to a silenced standard error for that moment.
func StartCPUProfileRate(path string, hz int) (stop func() error, err error) {
	if hz < 0 || hz > 100000 {
		return nil, fmt.Errorf("CPU profile rate %d Hz out of range (1 to 100000)", hz)
	}
	if path == "" {
		return nil, errors.New("CPU profile: no file name given")
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		// The temporary name would only confuse: say what failed on path.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("CPU profile %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("CPU profile %s: %w", path, err)
	}
	// Readable like a file made by os.Create, not private like a temp file.
	if err := f.Chmod(0o644); err != nil {
		return nil, fail(err)
	}
	if hz != 0 && hz != DefaultRate {
		err = withoutStderr(func() error {
			runtime.SetCPUProfileRate(hz)
			return pprof.StartCPUProfile(f)
		})
	} else {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		return nil, fail(err)
	}
	var once sync.Once
	var stopErr error
	stop = func() error {
		once.Do(func() {
			pprof.StopCPUProfile() // writes the profile to f before returning
			if err := f.Close(); err != nil {
				os.Remove(tmp)
				stopErr = fmt.Errorf("writing CPU profile %s: %w", path, err)
				return
			}
			if err := os.Rename(tmp, path); err != nil {
				os.Remove(tmp)
				stopErr = fmt.Errorf("writing CPU profile: %w", err)
			}
		})
		return stopErr
	}
	return stop, nil
}
