package main

import (
	"errors"
	"fmt"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchchart"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchrun"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchstat"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchwork"
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
  creates  one client making files in one directory, each opened with
           O_CREAT|O_WRONLY and closed at once, up to 30,000 or --time;
           reports files per second and a create's p50/p99 latency in µs.

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
	defaultReference = benchrun.DefaultReference
	defaultRate      = 1000
)

func runBench(fs *flagSet) func([]string) error {
	fs.about = benchAbout
	fs.alsoUsage("xlogfs bench report [flags] DIR [DIR2...]")
	modes := fs.String("modes", defaultModes, "checksum modes, comma-separated: "+strings.Join(benchrun.ModeNames(), ", "))
	impls := fs.String("impls", defaultImpls, "crc32c implementations, comma-separated: best (this CPU's fastest) or one of "+strings.Join(implNames(), ", "))
	workload := stringEnum(fs, "workload", "builtin", benchwork.Workloads, "workload", "the workload")
	jmode := stringEnum(fs, "journal", "data", []string{"data", "meta"}, "journal mode", "journal mode of the mounts: data (every written byte is checksummed) or meta")
	crc := stringEnum(fs, "crc", "whole", []string{"whole", "xfs"}, "CRC coverage", "what every record's CRC covers in the stores (mkfs --crc): whole (every header block whole) or xfs (xlog_cksum's regions: the kernel's XFS's bytes and calls)")
	device := stringEnum(fs, "device", "ram", []string{"ram", "disk"}, "device", "where the stores live: ram (a tmpfs: flushes cost nothing, the run is CPU-bound) or disk (under --out)")
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
	wide := fs.Bool("wide", false, "print every column of every table (the report keeps to 120 columns otherwise)")
	return func([]string) error {
		cfg := benchreport.Config{Workload: workload.v, Journal: jmode.v, CRC: crc.v, Device: device.v, FlushLatency: *flushLat, Duration: *dur,
			Clients: *clients, Rounds: *rounds, Seed: *seed, ProfileRate: *rate, WriteSize: int(writeSize.n), Out: *out,
			Tables: *tables, TableSize: *tableSize}
		// The run stops cleanly on SIGINT or SIGTERM (results so far kept,
		// marked partial): its context is the command's, cancelled by either.
		ctx, stop := signal.NotifyContext(fs.ctx, syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		err := benchrun.Run(ctx, benchrun.Options{Config: cfg, Modes: *modes, Impls: *impls, Transports: *transports,
			Baseline: *baseline, Reference: *reference, MountFlags: *mountFlags, JSON: *asJSON, Wide: *wide,
			NoProgress: *noProgress, Version: Version, ReadyEnv: readyEnv})
		if ue := (*benchrun.UsageError)(nil); errors.As(err, &ue) {
			return fs.usagef("%s", ue.Msg)
		}
		return err
	}
}

func writeChart(res *benchreport.Results, dir string) error { return benchchart.Write(res, dir) }
