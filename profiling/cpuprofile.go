package profiling

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	if path == "" {
		return nil, errors.New("profiling: CPU profile: no file name given")
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		// The temporary name would only confuse: say what failed on path.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("profiling: CPU profile %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("profiling: CPU profile %s: %w", path, err)
	}
	// Readable like a file made by os.Create, not private like a temp file.
	if err := f.Chmod(0o644); err != nil {
		return nil, fail(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, fail(err)
	}
	var once sync.Once
	var stopErr error
	stop = func() error {
		once.Do(func() {
			pprof.StopCPUProfile() // writes the profile to f before returning
			if err := f.Close(); err != nil {
				os.Remove(tmp)
				stopErr = fmt.Errorf("profiling: write CPU profile %s: %w", path, err)
				return
			}
			if err := os.Rename(tmp, path); err != nil {
				os.Remove(tmp)
				stopErr = fmt.Errorf("profiling: write CPU profile: %w", err)
			}
		})
		return stopErr
	}
	return stop, nil
}
