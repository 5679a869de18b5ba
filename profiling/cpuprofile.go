package profiling

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/google/pprof/profile"
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
// tick, each weighted by the runtime as 1/hz s, and the profile's CPU
// seconds fall short by that factor (0.74 s for 3.7 s of CPU at 1 kHz).
// So the profile is written with the rate reached: stop measures the
// process's CPU time over the profile's window (getrusage, all threads,
// user and system), scales every sample's cpu/nanoseconds value by that
// time over the samples' total, sets the period to the CPU time per sample
// and says so in the profile's comments (go tool pprof -comments). Shares
// are unchanged; the total is the process's CPU time. Where the process's
// CPU time cannot be read, the profile is written as the runtime took it,
// with a comment saying why.
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
	// The runtime writes the profile to buf at stop; it is rescaled
	// before it goes to f.
	buf := new(bytes.Buffer)
	cpu0, cpuErr := processCPUTime()
	if hz != 0 && hz != DefaultRate {
		err = withoutStderr(func() error {
			runtime.SetCPUProfileRate(hz)
			return pprof.StartCPUProfile(buf)
		})
	} else {
		err = pprof.StartCPUProfile(buf)
	}
	if err != nil {
		return nil, fail(err)
	}
	asked := hz
	if asked == 0 {
		asked = DefaultRate
	}
	var once sync.Once
	var stopErr error
	stop = func() error {
		once.Do(func() {
			pprof.StopCPUProfile() // writes the profile to buf before returning
			cpu1, err := processCPUTime()
			if cpuErr == nil {
				cpuErr = err
			}
			data, err := rescaleProfile(buf.Bytes(), cpu1-cpu0, cpuErr, asked)
			if err != nil {
				f.Close()
				os.Remove(tmp)
				stopErr = fmt.Errorf("writing CPU profile %s: %w", path, err)
				return
			}
			if _, err := f.Write(data); err != nil {
				f.Close()
				os.Remove(tmp)
				stopErr = fmt.Errorf("writing CPU profile %s: %w", path, err)
				return
			}
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

// rescaleProfile returns the CPU profile in data with its samples' CPU time
// scaled to cpu, the process's CPU time over the profile's window (see
// StartCPUProfileRate), the period set to the CPU time per sample, and a
// comment saying what was asked, reached and done. cpuErr, if not nil, is
// why cpu is unknown: the profile is then left as taken, and the comment
// says so. A profile without samples is left as taken.
func rescaleProfile(data []byte, cpu time.Duration, cpuErr error, askedHz int) ([]byte, error) {
	p, err := profile.ParseData(data)
	if err != nil {
		return nil, fmt.Errorf("reading the runtime's profile back: %w", err)
	}
	idx, cnt := -1, -1
	for i, st := range p.SampleType {
		switch {
		case st.Type == "cpu" && st.Unit == "nanoseconds":
			idx = i
		case st.Type == "samples" && st.Unit == "count":
			cnt = i
		}
	}
	if idx < 0 || cnt < 0 {
		return nil, errors.New("the runtime's profile has no samples/count or no cpu/nanoseconds values")
	}
	var total, samples int64
	for _, s := range p.Sample {
		total += s.Value[idx]
		samples += s.Value[cnt]
	}
	switch {
	case cpuErr != nil:
		p.Comments = append(p.Comments, fmt.Sprintf("xlogfs: asked %d Hz; samples weighted as taken (1/%d s each), not scaled to the process's CPU time: %v", askedHz, askedHz, cpuErr))
	case total == 0 || cpu <= 0:
		p.Comments = append(p.Comments, fmt.Sprintf("xlogfs: asked %d Hz; %d samples over %v of process CPU: nothing to scale", askedHz, samples, cpu))
	default:
		f := float64(cpu) / float64(total)
		for _, s := range p.Sample {
			s.Value[idx] = int64(math.Round(float64(s.Value[idx]) * f))
		}
		p.Period = int64(cpu) / samples
		p.Comments = append(p.Comments, fmt.Sprintf(
			"xlogfs: asked %d Hz, reached %.0f samples per CPU second (%d samples over %v of process CPU, getrusage); sample values scaled ×%.3f to the process's CPU time",
			askedHz, float64(samples)/cpu.Seconds(), samples, cpu.Round(time.Millisecond), f))
	}
	var out bytes.Buffer
	if err := p.Write(&out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
