package benchrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchchart"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchstat"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchwork"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/xfsbase"
)

// DefaultReference is the target compared with when --reference is not
// given; a bench without it compares with its first target instead.
const DefaultReference = "batched/best"

// Options are the bench's command line, parsed: what Run needs. Config
// holds the flags that go into results.json as they are (Workload,
// Journal, Device, FlushLatency, Duration, Clients, Rounds, Seed,
// ProfileRate, WriteSize, Out, Tables, TableSize); Run fills in the rest.
type Options struct {
	Config benchreport.Config
	// Modes, Impls and Transports are the comma-separated lists of
	// --modes, --impls and --transports; Baseline --baseline's.
	Modes, Impls, Transports, Baseline string
	// Reference is --reference (MODE/IMPL); empty: DefaultReference.
	Reference string
	// MountFlags is --mount-flags, space-separated.
	MountFlags string
	// JSON prints results.json to Stdout and the report to Stderr.
	JSON bool
	// Wide prints every table's every column (the report is kept to 120
	// columns otherwise; results.json has everything either way).
	Wide bool
	// NoProgress turns the progress bar off.
	NoProgress bool
	// Version is the xlogfs version written into results.json; ReadyEnv
	// the variable naming the fd a mount reports readiness on.
	Version, ReadyEnv string
	// Stdout and Stderr: nil means os.Stdout and os.Stderr.
	Stdout, Stderr io.Writer
}

// UsageError is a mistake on the command line found by Run (exit
// status 2: the caller prints it with the command's usage).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// ErrInterrupted is what Run's error wraps when ctx was cancelled (SIGINT,
// SIGTERM) before the last round ended: the rounds done are saved, marked
// partial, and reported.
var ErrInterrupted = errors.New("interrupted")

// Run is xlogfs bench: it checks the options, runs every target in every
// round, analyses the runs, writes results.json, bench.txt and the chart
// into the output folder and prints the report. When ctx is cancelled it
// stops the run in progress (its workload, its mount: nothing is left
// mounted or running), saves the runs completed so far marked partial,
// prints their report and returns an error wrapping ErrInterrupted.
func Run(ctx context.Context, o Options) error {
	stdout, stderr := o.Stdout, o.Stderr
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	cfg := o.Config
	cfg.Modes, cfg.Impls, cfg.Baselines = nil, nil, nil
	if cfg.Workload != "mariadb" {
		cfg.Tables, cfg.TableSize = 0, 0
	}
	targets, err := Targets(&cfg, o.Modes, o.Impls)
	if err != nil {
		return usagef("%v", err)
	}
	if targets, err = WithTransports(targets, o.Transports); err != nil {
		return usagef("%v", err)
	}
	for _, b := range strings.Split(o.Baseline, ",") {
		switch b = strings.TrimSpace(b); b {
		case "", "none":
		case "loopback", "native", benchreport.XFSTarget:
			if slices.Contains(cfg.Baselines, b) {
				continue
			}
			cfg.Baselines = append(cfg.Baselines, b)
			targets = append(targets, benchreport.Target{Name: b, Kind: b})
		default:
			return usagef("--baseline: unknown %q (want loopback, native, xfs or none)", b)
		}
	}
	if err := checkConfig(cfg, len(targets)); err != nil {
		return err
	}
	var warnings []string
	reference := o.Reference
	if reference == "" {
		reference = DefaultReference
	}
	if cfg.Reference, err = ResolveReference(reference, targets); err != nil {
		if reference != DefaultReference {
			return usagef("--reference: %v", err)
		}
		cfg.Reference = targets[0].Name
		if len(targets) > 1 {
			warnings = append(warnings, fmt.Sprintf("no %s target: comparing with %s instead", DefaultReference, cfg.Reference))
		}
	}
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64()>>12 + 1 // short enough to type back
	}
	cfg.MountFlags = strings.Fields(o.MountFlags)
	if err := Prereqs(cfg, targets); err != nil {
		return err
	}
	var xfs xfsbase.Readiness
	var geom Geometry
	if slices.Contains(cfg.Baselines, benchreport.XFSTarget) {
		if geom, err = XlogfsGeometry(cfg.MountFlags); err != nil {
			return usagef("%v", err)
		}
		var ws []string
		if xfs, ws, err = XFSPrereqs(xfsbase.System()); err != nil {
			return err
		}
		for _, w := range ws {
			fmt.Fprintf(stderr, "xlogfs bench: %s\n", w)
		}
		warnings = append(warnings, ws...)
		cfg.PerfRate = cfg.ProfileRate
	}
	// Which targets the emulated device reaches: xlogfs's by its mount's
	// emulated flush, the baselines by dm-delay where the kernel has it
	// (the loopback by its own emulated flush otherwise).
	var delay *DelayReadiness
	if cfg.FlushLatency > 0 && len(cfg.Baselines) > 0 {
		needExt4 := slices.Contains(cfg.Baselines, "native") || slices.Contains(cfg.Baselines, "loopback")
		d := ProbeDelay(SystemDelayEnv(), cfg.FlushLatency, needExt4)
		delay = &d
	}
	reach := FlushReach(cfg.FlushLatency, targets, delay)
	var unreached []string
	for _, f := range reach {
		if !f.Reached {
			unreached = append(unreached, f.Target)
		}
	}
	if len(unreached) > 0 {
		msg := fmt.Sprintf("--flush-latency %v does not reach %s (%v): their flushes per fsync are not measured; %s",
			cfg.FlushLatency, strings.Join(unreached, ", "), delay.Err, delay.Found)
		fmt.Fprintf(stderr, "xlogfs bench: %s\n", msg)
		warnings = append(warnings, msg)
	}
	if cfg.Out == "" {
		cfg.Out = "bench-" + time.Now().Format("20060102-150405")
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return err
	}
	if abs, err := filepath.Abs(cfg.Out); err == nil {
		cfg.Out = abs
	}

	res := &benchreport.Results{Version: o.Version, Started: time.Now(), Machine: Machine(), Config: cfg, Targets: targets,
		Warnings: warnings, FlushReach: reach}
	if delay != nil {
		res.FlushProbe = delay.Found
	}
	b := &Bencher{Cfg: cfg, Res: res, Progress: !o.NoProgress, ReadyEnv: o.ReadyEnv, XFS: xfs, Geom: geom, Delay: delay}
	fmt.Fprintf(stderr, "xlogfs bench: %d targets × %d rounds of %v, device %s; order seed %d (--seed %d repeats it)\n",
		len(targets), cfg.Rounds, cfg.Duration, cfg.Device, cfg.Seed, cfg.Seed)
	runErr := b.Run(ctx, targets)
	if runErr != nil && !errors.Is(runErr, ErrInterrupted) {
		return runErr
	}
	benchreport.Analyze(res)
	if err := WriteOutputs(res); err != nil {
		return errors.Join(runErr, err)
	}
	reportOut := stdout
	if o.JSON {
		reportOut = stderr
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	benchreport.Print(reportOut, res, o.Wide)
	fmt.Fprintf(reportOut, "\nresults.json, bench.txt, profiles and chart.svg/png in %s (took %v)\n", cfg.Out, time.Since(res.Started).Round(time.Second))
	if runErr != nil {
		return &interruptError{fmt.Sprintf("%s; the runs completed are in %s, marked partial (xlogfs bench report %s prints them)",
			res.PartialWhy, filepath.Join(cfg.Out, "results.json"), cfg.Out)}
	}
	return nil
}

// interruptError says where the bench was interrupted and where its
// partial results are; it is an ErrInterrupted.
type interruptError struct{ msg string }

func (e *interruptError) Error() string { return e.msg }
func (e *interruptError) Unwrap() error { return ErrInterrupted }

// checkConfig checks the values of the flags that need nothing but
// themselves.
func checkConfig(cfg benchreport.Config, targets int) error {
	switch {
	case targets == 0:
		return usagef("nothing to run: give --modes and --impls, or --baseline")
	case !slices.Contains(benchwork.Workloads, cfg.Workload):
		return usagef("--workload: unknown %q (want %s)", cfg.Workload, strings.Join(benchwork.Workloads, ", "))
	case cfg.Journal != "meta" && cfg.Journal != "data":
		return usagef("--journal: unknown %q (want meta or data)", cfg.Journal)
	case cfg.CRC != "" && cfg.CRC != "whole" && cfg.CRC != "xfs":
		return usagef("--crc: unknown %q (want whole or xfs)", cfg.CRC)
	case cfg.Device != "ram" && cfg.Device != "disk":
		return usagef("--device: unknown %q (want ram or disk)", cfg.Device)
	case cfg.FlushLatency < 0 || cfg.FlushLatency > time.Second:
		return usagef("--flush-latency: 0 to 1s")
	case cfg.Duration < time.Second:
		return usagef("--time: at least 1s")
	case cfg.Clients < 1 || cfg.Clients > 256:
		return usagef("--clients: 1 to 256")
	case cfg.Rounds < 1:
		return usagef("--rounds: at least 1")
	case cfg.ProfileRate < 1 || cfg.ProfileRate > 100000:
		return usagef("--profile-rate: 1 to 100000 Hz")
	case cfg.WriteSize < 1 || cfg.WriteSize > 16<<20:
		return usagef("--write-size: 1 byte to 16 MiB")
	case cfg.Workload == "mariadb" && (cfg.Tables < 1 || cfg.TableSize < 1):
		return usagef("--tables and --table-size: at least 1")
	}
	return nil
}

// MinRoundsNote is for help texts: the rounds an interval takes.
func MinRoundsNote() string {
	return fmt.Sprintf("%d or more for an interval", benchstat.MinRounds())
}

// WriteOutputs saves results.json, bench.txt and the chart in the run's
// folder. A chart that cannot be drawn is a warning, not a failure.
func WriteOutputs(res *benchreport.Results) error {
	dir := res.Config.Out
	if err := benchchart.Write(res, dir); err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("chart: %v", err))
	}
	if err := benchreport.Save(dir, res); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "bench.txt"))
	if err != nil {
		return err
	}
	benchreport.WriteBenchfmt(f, res)
	return f.Close()
}
