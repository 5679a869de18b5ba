package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchchart"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchrun"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchstat"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchwork"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/xfsbase"
)

func init() {
	register(command{name: "bench", summary: "what batching and the kernel save: checksum modes × crc32c kernels under a workload, with intervals and a verdict", min: 0, max: 0, setup: runBench})
	register(command{name: "bench report", summary: "print a saved bench run again, or compare runs", args: "DIR [DIR2...]", min: 1, max: -1, setup: runBenchReport})
}

const benchAbout = `
Answers how much of the log checksum's cost batching removes and how much
the crc32c kernel does. Every pair of --modes and --impls is a target named
MODE/IMPL (best is this CPU's fastest kernel, e.g. sector/avx512). Each
round mounts a fresh store for every target in a new random order (the seed
is printed; --seed repeats it), runs the workload while profiling the
daemon, reads the journal's counters before and after, and unmounts.

Per target and round it keeps: throughput, fsync p50/p99, the checksum's
share of the daemon's CPU (checksum CPU time from the journal's counters ÷
the daemon's CPU time, both over the workload), checksum ns per record
(p50, p99) and per KiB, the checksum's CPU time on the log-force path per
force and its share of the log forces' latency, and the CPU profile's view
with its samples (--profile-rate). Checksum CPU counts all the checksum
work; the force path only the work at seal: inline mode does most of its
work as ops are copied into the log (and that time includes the copy, done
in the same pass), off the force path. Every target
is compared with --reference in the same round: the median of the rounds'
ratios with a 95 % interval, significant when the interval excludes 1 (it
takes at least 6 rounds for an interval). With two modes and two kernels or
more it adds the attribution: the effect of batching at each kernel, of the
kernel at each mode, and each factor's share of the whole change. Then a
verdict in words.

Devices: disk puts the store under --out; ram puts it on a tmpfs mounted
for the bench (or /dev/shm), so a flush costs nothing and the run is
CPU-bound, which is where a checksum's cost shows. --flush-latency D makes
every log flush and data-file sync take exactly D (an emulated device), and
every FSYNC and FSYNCDIR the loopback baseline serves. Where the kernel has
dm-delay, the native, loopback and xfs baselines each get a device whose
flushes take D (a loop device over an image where the stores go, dm-delay
delaying its flushes alone, ext4 or XFS on it); where it has none, the
report says which targets D did not reach, and why. The round trips
section then sets, per target, the flushes per fsync of the emulated device
beside the syncs per fsync by what they made durable (log, data files, data
directory), the opens by sync-write route and the log forces behind them.

Workloads:
  builtin  --clients writers each appending small blocks (--write-size) and
           fsyncing after each, like a database log; with --journal data one
           more writer appends 256 KiB blocks, so full 256 KiB records go
           through the checksum too. fsync latency is measured by the clients.
  dbench   Debian's dbench with -F (fsync after every write), --clients
           processes; fsync latency comes from the filesystem's histogram.
  mariadb  MariaDB (InnoDB, stock settings) under sysbench oltp_write_only:
           a fresh datadir and mariadbd per run, --tables × --table-size
           rows, --clients threads for --time; reports transactions per
           second and p95 latency. Logs of each run go to
           --out/mariadb-<target>-<round>.
  pwrite   one client making --write-size pwrites one after another, no
           fsync; reports a write's mean and p50/p99 latency in µs.

--baseline adds targets run the same way: loopback (go-fuse's loopback
filesystem over a plain directory: what FUSE itself costs), native (the
plain directory, no FUSE), and xfs: the kernel's XFS, made each round on
a loop device over an image on the stores' device, with the stores' log
size, iclog size and count (mkfs.xfs -l size=...,version=2; mount -o
logbsize=...,logbufs=...). For it the bench reads /proc/fs/xfs/stat around
the workload (log writes and blocks, forces, transactions, AIL pushes),
and where perf can profile the machine, counts XFS's fsyncs (its fsync
tracepoints, perf stat) and takes a system-wide cpu-clock profile of the
workload at --profile-rate (perf-<target>-<round>.data) for the kernel's
checksum CPU (samples in xlog_cksum) and the machine's busy CPU. A table
"the log" sets every target's log writes, blocks and checksum per fsync
beside the kernel XFS's; what a target could not measure says "not
measured" and why. It needs root, a kernel with XFS, a
loop device and xfsprogs (and perf, linux-perf, for the checksum CPU):
make bench-deps BENCH_ARGS="--baseline xfs" installs the packages.

Everything is kept in --out: results.json (raw values of every target in
every round, comparisons, attribution, verdict), bench.txt (Go benchmark
format, for benchstat), every cpu-<target>-<round>.pprof, and chart.svg and
chart.png. "xlogfs bench report DIR" prints a saved run again; with two
DIRs it compares them.`

// Defaults of the bench: what make bench runs, sized so that sector vs
// batched, inline vs batched and the kernel's effect reach significance
// within about 9 minutes on a 2-CPU machine (see the README): 12 targets
// (4 modes × our best kernel, the Linux kernel's own dispatch and a table)
// × 10 rounds × 2 s, plus the mounts.
const (
	defaultModes     = "batched,xfs,sector,inline"
	defaultImpls     = "best,linux,generic"
	defaultRounds    = 10
	defaultRunTime   = 2 * time.Second
	defaultReference = "batched/best"
	defaultRate      = 1000
)

func runBench(fs *flagSet) func([]string) error {
	fs.about = benchAbout
	fs.alsoUsage("xlogfs bench report [flags] DIR [DIR2...]")
	modes := fs.String("modes", defaultModes, "checksum modes, comma-separated: "+strings.Join(benchrun.ModeNames(), ", "))
	impls := fs.String("impls", defaultImpls, "crc32c implementations, comma-separated: best (this CPU's fastest) or one of "+strings.Join(implNames(), ", "))
	workload := fs.String("workload", "builtin", "the workload: "+strings.Join(benchwork.Workloads, ", "))
	jmode := fs.String("journal", "data", "journal mode of the mounts: data (every written byte is checksummed) or meta")
	device := fs.String("device", "ram", "where the stores live: ram (a tmpfs: flushes cost nothing, the run is CPU-bound) or disk (under --out)")
	flushLat := fs.Duration("flush-latency", 0, "make every log flush and data-file sync take exactly this long (e.g. 200us): an emulated device")
	dur := fs.Duration("time", defaultRunTime, "how long each run drives the workload")
	clients := fs.Int("clients", 4, "concurrent clients (writers, dbench processes, sysbench threads)")
	rounds := fs.Int("rounds", defaultRounds, fmt.Sprintf("rounds; each runs every target once, in a new random order (%d or more for an interval)", benchstat.MinRounds()))
	seed := fs.Uint64("seed", 0, "seed of the rounds' random orders (0: a new one, printed)")
	reference := fs.String("reference", defaultReference, "the target every other is compared with, MODE/IMPL")
	rate := fs.Int("profile-rate", defaultRate, "CPU profile samples per second of CPU time (and perf's rate per CPU, for --baseline xfs)")
	out := fs.String("out", "", "directory for results.json, bench.txt, profiles and the chart (default: a new bench-<timestamp>)")
	asJSON := fs.Bool("json", false, "print results.json to stdout (the report goes to stderr)")
	baseline := fs.String("baseline", "", "also run: loopback, native, xfs (the kernel's XFS), comma-separated; none: nothing")
	writeSize := &sizeFlag{n: 4096}
	fs.Var(writeSize, "write-size", "builtin workload: bytes per write")
	noProgress := fs.Bool("no-progress", false, "no progress bar")
	transports := fs.String("transports", "classic", "FUSE transports of the xlogfs targets, comma-separated: classic, uring (a uring target's name ends in +uring)")
	mountFlags := fs.String("mount-flags", "", "extra flags for every xlogfs mount, space-separated (e.g. \"--direct-io --attr-timeout 5s\")")
	tables := fs.Int("tables", 4, "mariadb workload: sysbench tables")
	tableSize := fs.Int("table-size", 20000, "mariadb workload: rows per sysbench table")
	return func([]string) (err error) {
		usage := fs.usagef
		cfg := benchreport.Config{Workload: *workload, Journal: *jmode, Device: *device, FlushLatency: *flushLat, Duration: *dur,
			Clients: *clients, Rounds: *rounds, Seed: *seed, ProfileRate: *rate, WriteSize: int(writeSize.n), Out: *out}
		if cfg.Workload == "mariadb" {
			cfg.Tables, cfg.TableSize = *tables, *tableSize
		}
		targets, err := benchrun.Targets(&cfg, *modes, *impls)
		if err != nil {
			return usage("%v", err)
		}
		if targets, err = benchrun.WithTransports(targets, *transports); err != nil {
			return usage("%v", err)
		}
		for _, b := range strings.Split(*baseline, ",") {
			switch b = strings.TrimSpace(b); b {
			case "", "none":
			case "loopback", "native", benchreport.XFSTarget:
				if slices.Contains(cfg.Baselines, b) {
					continue
				}
				cfg.Baselines = append(cfg.Baselines, b)
				targets = append(targets, benchreport.Target{Name: b, Kind: b})
			default:
				return usage("--baseline: unknown %q (want loopback, native, xfs or none)", b)
			}
		}
		switch {
		case len(targets) == 0:
			return usage("nothing to run: give --modes and --impls, or --baseline")
		case !slices.Contains(benchwork.Workloads, cfg.Workload):
			return usage("--workload: unknown %q (want %s)", cfg.Workload, strings.Join(benchwork.Workloads, ", "))
		case cfg.Journal != "meta" && cfg.Journal != "data":
			return usage("--journal: unknown %q (want meta or data)", cfg.Journal)
		case cfg.Device != "ram" && cfg.Device != "disk":
			return usage("--device: unknown %q (want ram or disk)", cfg.Device)
		case cfg.FlushLatency < 0 || cfg.FlushLatency > time.Second:
			return usage("--flush-latency: 0 to 1s")
		case cfg.Duration < time.Second:
			return usage("--time: at least 1s")
		case cfg.Clients < 1 || cfg.Clients > 256:
			return usage("--clients: 1 to 256")
		case cfg.Rounds < 1:
			return usage("--rounds: at least 1")
		case cfg.ProfileRate < 1 || cfg.ProfileRate > 100000:
			return usage("--profile-rate: 1 to 100000 Hz")
		case cfg.WriteSize < 1 || cfg.WriteSize > 16<<20:
			return usage("--write-size: 1 byte to 16 MiB")
		case cfg.Workload == "mariadb" && (cfg.Tables < 1 || cfg.TableSize < 1):
			return usage("--tables and --table-size: at least 1")
		}
		var warnings []string
		if cfg.Reference, err = benchrun.ResolveReference(*reference, targets); err != nil {
			if *reference != defaultReference {
				return usage("--reference: %v", err)
			}
			cfg.Reference = targets[0].Name
			if len(targets) > 1 {
				warnings = append(warnings, fmt.Sprintf("no %s target: comparing with %s instead", defaultReference, cfg.Reference))
			}
		}
		if cfg.Seed == 0 {
			cfg.Seed = rand.Uint64()>>12 + 1 // short enough to type back
		}
		cfg.MountFlags = strings.Fields(*mountFlags)
		if err := benchrun.Prereqs(cfg, targets); err != nil {
			return err
		}
		var xfs xfsbase.Readiness
		var geom benchrun.Geometry
		if slices.Contains(cfg.Baselines, benchreport.XFSTarget) {
			if geom, err = benchrun.XlogfsGeometry(cfg.MountFlags); err != nil {
				return usage("%v", err)
			}
			var ws []string
			if xfs, ws, err = benchrun.XFSPrereqs(xfsbase.System()); err != nil {
				return err
			}
			for _, w := range ws {
				fmt.Fprintf(os.Stderr, "xlogfs bench: %s\n", w)
			}
			warnings = append(warnings, ws...)
			cfg.PerfRate = cfg.ProfileRate
		}
		// Which targets the emulated device reaches: xlogfs's by its mount's
		// emulated flush, the baselines by dm-delay where the kernel has it
		// (the loopback by its own emulated flush otherwise).
		var delay *benchrun.DelayReadiness
		if cfg.FlushLatency > 0 && len(cfg.Baselines) > 0 {
			needExt4 := slices.Contains(cfg.Baselines, "native") || slices.Contains(cfg.Baselines, "loopback")
			d := benchrun.ProbeDelay(benchrun.SystemDelayEnv(), cfg.FlushLatency, needExt4)
			delay = &d
		}
		reach := benchrun.FlushReach(cfg.FlushLatency, targets, delay)
		var unreached []string
		for _, f := range reach {
			if !f.Reached {
				unreached = append(unreached, f.Target)
			}
		}
		if len(unreached) > 0 {
			msg := fmt.Sprintf("--flush-latency %v does not reach %s (%v): their flushes per fsync are not measured; %s",
				cfg.FlushLatency, strings.Join(unreached, ", "), delay.Err, delay.Found)
			fmt.Fprintf(os.Stderr, "xlogfs bench: %s\n", msg)
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
		if cfg.Rounds < benchstat.MinRounds() {
			warnings = append(warnings, fmt.Sprintf("--rounds %d: an interval at 95 %% takes %d, so nothing can be significant", cfg.Rounds, benchstat.MinRounds()))
		}

		res := &benchreport.Results{Version: Version, Started: time.Now(), Machine: benchrun.Machine(), Config: cfg, Targets: targets,
			Warnings: warnings, FlushReach: reach}
		if delay != nil {
			res.FlushProbe = delay.Found
		}
		b := &benchrun.Bencher{Cfg: cfg, Res: res, Progress: !*noProgress, ReadyEnv: readyEnv, XFS: xfs, Geom: geom, Delay: delay}
		fmt.Fprintf(os.Stderr, "xlogfs bench: %d targets × %d rounds of %v, device %s; order seed %d (--seed %d repeats it)\n",
			len(targets), cfg.Rounds, cfg.Duration, cfg.Device, cfg.Seed, cfg.Seed)
		if err := b.Run(targets); err != nil {
			return err
		}
		benchreport.Analyze(res)
		if err := writeBenchOutputs(res); err != nil {
			return err
		}
		reportOut := os.Stdout
		if *asJSON {
			reportOut = os.Stderr
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(res); err != nil {
				return err
			}
		}
		benchreport.Print(reportOut, res)
		fmt.Fprintf(reportOut, "\nresults.json, bench.txt, profiles and chart.svg/png in %s (took %v)\n", cfg.Out, time.Since(res.Started).Round(time.Second))
		return nil
	}
}

// writeBenchOutputs saves results.json, bench.txt and the chart in the
// run's folder. A chart that cannot be drawn is a warning, not a failure.
func writeBenchOutputs(res *benchreport.Results) error {
	dir := res.Config.Out
	if err := writeChart(res, dir); err != nil {
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

func writeChart(res *benchreport.Results, dir string) error {
	svg, png, err := benchchart.Render(res)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "chart.svg"), svg, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "chart.png"), png, 0o644)
}
