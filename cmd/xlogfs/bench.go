package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchchart"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchstat"
	"github.com/xlogfs/xlogfs/fusefs"
	"github.com/xlogfs/xlogfs/journal"
	"github.com/xlogfs/xlogfs/profiling"
	"golang.org/x/sys/unix"
)

func init() {
	register(command{name: "bench", summary: "what batching and the kernel save: checksum modes × crc32c kernels under a workload, with intervals and a verdict", run: runBench})
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
every log flush and data-file sync take exactly D (an emulated device).

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
filesystem over a plain directory: what FUSE itself costs) and native (the
plain directory, no FUSE).

Everything is kept in --out: results.json (raw values of every target in
every round, comparisons, attribution, verdict), bench.txt (Go benchmark
format, for benchstat), every cpu-<target>-<round>.pprof, and chart.svg and
chart.png. "xlogfs bench report DIR" prints a saved run again; with two
DIRs it compares them.`

// Defaults of the bench: what make bench runs, sized so that sector vs
// batched, inline vs batched and the kernel's effect reach significance
// within 6 minutes on a 2-CPU machine (see the README): 8 targets × 10
// rounds × 2 s, plus the mounts.
const (
	defaultModes     = "batched,xfs,sector,inline"
	defaultImpls     = "best,generic"
	defaultRounds    = 10
	defaultRunTime   = 2 * time.Second
	defaultReference = "batched/best"
	defaultRate      = 1000
)

func runBench(args []string) error {
	if len(args) > 0 && args[0] == "report" {
		return runBenchReport(args[1:])
	}
	fs := newFlags("bench", "", benchAbout)
	fs.alsoUsage("xlogfs bench report [flags] DIR [DIR2...]")
	modes := fs.String("modes", defaultModes, "checksum modes, comma-separated: "+strings.Join(modeNames(), ", "))
	impls := fs.String("impls", defaultImpls, "crc32c implementations, comma-separated: best (this CPU's fastest) or one of "+strings.Join(implNames(), ", "))
	workload := fs.String("workload", "builtin", "the workload: "+strings.Join(workloads, ", "))
	jmode := fs.String("journal", "data", "journal mode of the mounts: data (every written byte is checksummed) or meta")
	device := fs.String("device", "ram", "where the stores live: ram (a tmpfs: flushes cost nothing, the run is CPU-bound) or disk (under --out)")
	flushLat := fs.Duration("flush-latency", 0, "make every log flush and data-file sync take exactly this long (e.g. 200us): an emulated device")
	dur := fs.Duration("time", defaultRunTime, "how long each run drives the workload")
	clients := fs.Int("clients", 4, "concurrent clients (writers, dbench processes, sysbench threads)")
	rounds := fs.Int("rounds", defaultRounds, fmt.Sprintf("rounds; each runs every target once, in a new random order (%d or more for an interval)", benchstat.MinRounds()))
	seed := fs.Uint64("seed", 0, "seed of the rounds' random orders (0: a new one, printed)")
	reference := fs.String("reference", defaultReference, "the target every other is compared with, MODE/IMPL")
	rate := fs.Int("profile-rate", defaultRate, "CPU profile samples per second of CPU time")
	out := fs.String("out", "", "directory for results.json, bench.txt, profiles and the chart (default: a new bench-<timestamp>)")
	asJSON := fs.Bool("json", false, "print results.json to stdout (the report goes to stderr)")
	baseline := fs.String("baseline", "", "also run: loopback, native (comma-separated)")
	writeSize := &sizeFlag{n: 4096}
	fs.Var(writeSize, "write-size", "builtin workload: bytes per write")
	noProgress := fs.Bool("no-progress", false, "no progress bar")
	mountFlags := fs.String("mount-flags", "", "extra flags for every xlogfs mount, space-separated (e.g. \"--direct-io --attr-timeout 5s\")")
	tables := fs.Int("tables", 4, "mariadb workload: sysbench tables")
	tableSize := fs.Int("table-size", 20000, "mariadb workload: rows per sysbench table")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	usage := fs.usagef
	cfg := benchreport.Config{Workload: *workload, Journal: *jmode, Device: *device, FlushLatency: *flushLat, Duration: *dur,
		Clients: *clients, Rounds: *rounds, Seed: *seed, ProfileRate: *rate, WriteSize: int(writeSize.n), Out: *out}
	if cfg.Workload == "mariadb" {
		cfg.Tables, cfg.TableSize = *tables, *tableSize
	}
	targets, err := factorialTargets(&cfg, *modes, *impls)
	if err != nil {
		return usage("%v", err)
	}
	for _, b := range strings.Split(*baseline, ",") {
		switch b = strings.TrimSpace(b); b {
		case "":
		case "loopback", "native":
			cfg.Baselines = append(cfg.Baselines, b)
			targets = append(targets, benchreport.Target{Name: b, Kind: b})
		default:
			return usage("--baseline: unknown %q (want loopback or native)", b)
		}
	}
	switch {
	case len(targets) == 0:
		return usage("nothing to run: give --modes and --impls, or --baseline")
	case !slices.Contains(workloads, cfg.Workload):
		return usage("--workload: unknown %q (want %s)", cfg.Workload, strings.Join(workloads, ", "))
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
	if cfg.Reference, err = resolveReference(*reference, targets); err != nil {
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
	if err := benchPrereqs(cfg, targets); err != nil {
		return err
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

	res := &benchreport.Results{Version: Version, Started: time.Now(), Machine: machineInfo(), Config: cfg, Targets: targets, Warnings: warnings}
	b := &bencher{cfg: cfg, res: res, progress: !*noProgress, readyEnv: readyEnv}
	fmt.Fprintf(os.Stderr, "xlogfs bench: %d targets × %d rounds of %v, device %s; order seed %d (--seed %d repeats it)\n",
		len(targets), cfg.Rounds, cfg.Duration, cfg.Device, cfg.Seed, cfg.Seed)
	if err := b.run(targets); err != nil {
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

func modeNames() []string {
	var n []string
	for _, m := range cksum.Modes() {
		n = append(n, m.String())
	}
	return n
}

// factorialTargets makes a target of every mode × implementation, in the
// order given. "best" resolves to this CPU's fastest kernel; two names
// for one implementation (best and avx512) make one target.
func factorialTargets(cfg *benchreport.Config, modes, impls string) ([]benchreport.Target, error) {
	var ms []cksum.Mode
	for _, s := range strings.Split(modes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		m, err := cksum.ParseMode(s)
		if err != nil {
			return nil, fmt.Errorf("--modes: %v", err)
		}
		if !slices.Contains(ms, m) {
			ms = append(ms, m)
			cfg.Modes = append(cfg.Modes, m.String())
		}
	}
	type impl struct{ spec, name string }
	var is []impl
	for _, s := range strings.Split(impls, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		spec := s
		if s == benchreport.BestImpl || s == "auto" {
			s, spec = "auto", benchreport.BestImpl
		}
		im, err := cksum.Lookup(s)
		if err != nil {
			return nil, fmt.Errorf("--impls: %v", err)
		}
		if slices.ContainsFunc(is, func(x impl) bool { return x.name == im.Name }) {
			continue
		}
		is = append(is, impl{spec, im.Name})
		cfg.Impls = append(cfg.Impls, spec)
	}
	if len(ms) > 0 && len(is) == 0 {
		return nil, errors.New("--impls: none given")
	}
	var ts []benchreport.Target
	for _, m := range ms {
		for _, im := range is {
			ts = append(ts, benchreport.Target{Name: m.String() + "/" + im.name, Kind: "xlogfs", Mode: m.String(), Impl: im.name, ImplSpec: im.spec})
		}
	}
	return ts, nil
}

// resolveReference finds the target spec names: a target's name, or
// MODE/IMPL with IMPL as asked (best).
func resolveReference(spec string, targets []benchreport.Target) (string, error) {
	for _, t := range targets {
		if t.Name == spec {
			return t.Name, nil
		}
	}
	if m, im, ok := strings.Cut(spec, "/"); ok {
		if mode, err := cksum.ParseMode(m); err == nil {
			m = mode.String()
		}
		for _, t := range targets {
			if t.Mode == m && (t.ImplSpec == im || t.Impl == im) {
				return t.Name, nil
			}
		}
	}
	var names []string
	for _, t := range targets {
		names = append(names, t.Name)
	}
	return "", fmt.Errorf("%q is none of the targets (%s)", spec, strings.Join(names, ", "))
}

// roundOrder is the order targets run in, in round r (from 1): a
// permutation of 0..n-1 drawn from a generator seeded with the bench's seed
// and the round, so any round's order can be rebuilt from the seed alone.
func roundOrder(seed uint64, round, n int) []int {
	return rand.New(rand.NewPCG(seed, uint64(round))).Perm(n)
}

// benchPrereqs checks that what the bench needs is installed. It installs
// nothing: a missing package is named, with the command that installs it
// (make bench does, for what the default bench needs).
func benchPrereqs(cfg benchreport.Config, targets []benchreport.Target) error {
	needFuse := slices.ContainsFunc(targets, func(t benchreport.Target) bool { return t.Kind != "native" })
	if needFuse {
		if _, err := os.Stat("/dev/fuse"); err != nil {
			return errors.New("/dev/fuse is missing: this machine cannot mount FUSE filesystems")
		}
		if err := requireCommand("fusermount3", "fuse3"); err != nil {
			return err
		}
	}
	switch cfg.Workload {
	case "dbench":
		return requireCommand("dbench", "dbench")
	case "mariadb":
		return mariadbPrereqs()
	}
	return nil
}

// requireCommand fails, naming the Debian package pkg that has it, when
// cmd is not on PATH.
func requireCommand(cmd, pkg string) error {
	if _, err := exec.LookPath(cmd); err != nil {
		return missingPackages(cmd, pkg)
	}
	return nil
}

// missingPackages is the error for a program the bench needs that is not
// installed, with how to install it.
func missingPackages(what string, pkgs ...string) error {
	return fmt.Errorf("%s not found: install it with apt-get install %s, or make bench (which installs what the workload needs)",
		what, strings.Join(pkgs, " "))
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func machineInfo() benchreport.Machine {
	m := benchreport.Machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), CksumImpl: cksum.Best().Name}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				m.CPU = strings.TrimSpace(l[strings.Index(l, ":")+1:])
				break
			}
		}
	}
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		var b []byte
		for _, c := range u.Release {
			if c == 0 {
				break
			}
			b = append(b, byte(c))
		}
		m.Kernel = string(b)
	}
	return m
}

// bencher runs the rounds.
type bencher struct {
	cfg      benchreport.Config
	res      *benchreport.Results
	progress bool
	storeDir string // where stores go: a tmpfs for --device ram, else OUT/work
	readyEnv string // the variable naming the fd a daemonized mount reports readiness on
}

func (b *bencher) run(targets []benchreport.Target) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	interrupted := make(chan struct{})
	go func() {
		if _, ok := <-sigs; ok {
			close(interrupted)
		}
	}()
	b.storeDir = filepath.Join(b.cfg.Out, "work")
	if b.cfg.Device == "ram" {
		dir, cleanup, how, err := ramStore(b.cfg.Out)
		if err != nil {
			return err
		}
		defer cleanup()
		b.storeDir = dir
		fmt.Fprintf(os.Stderr, "stores on %s\n", how)
	}
	defer os.RemoveAll(filepath.Join(b.cfg.Out, "work"))
	total := len(targets) * b.cfg.Rounds
	n := 0
	for round := 1; round <= b.cfg.Rounds; round++ {
		for pos, ti := range roundOrder(b.cfg.Seed, round, len(targets)) {
			t := targets[ti]
			n++
			select {
			case <-interrupted:
				return errors.New("interrupted")
			default:
			}
			label := fmt.Sprintf("[%d/%d] round %d/%d %s", n, total, round, b.cfg.Rounds, t.Name)
			r, err := b.runOne(t, round, label, interrupted)
			if err != nil {
				return fmt.Errorf("%s round %d: %w", t.Name, round, err)
			}
			r.Order = pos + 1
			b.res.Runs = append(b.res.Runs, r)
		}
	}
	return nil
}

// tmpfsMagic is statfs's f_type of a tmpfs.
const tmpfsMagic = 0x01021994

// ramStore gives the bench a tmpfs to put stores on: one it mounts at
// OUT/ram (as root), else a folder in /dev/shm if that is a tmpfs. cleanup
// unmounts or removes it.
func ramStore(out string) (dir string, cleanup func(), how string, err error) {
	dir = filepath.Join(out, "ram")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, "", err
	}
	merr := unix.Mount("xlogfs-bench", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=75%")
	if merr == nil {
		return dir, func() {
			if unix.Unmount(dir, 0) != nil {
				unix.Unmount(dir, unix.MNT_DETACH)
			}
			os.Remove(dir)
		}, "a tmpfs mounted at " + dir, nil
	}
	os.Remove(dir)
	var st unix.Statfs_t
	if unix.Statfs("/dev/shm", &st) == nil && st.Type == tmpfsMagic {
		if d, err := os.MkdirTemp("/dev/shm", "xlogfs-bench-"); err == nil {
			return d, func() { os.RemoveAll(d) }, "tmpfs " + d + " (mounting one failed: " + merr.Error() + ")", nil
		}
	}
	return "", nil, "", fmt.Errorf("--device ram: cannot mount a tmpfs at %s (%v), and /dev/shm is no tmpfs", dir, merr)
}

// slug is a target's name as a file name part: sector/avx512 → sector-avx512.
func slug(name string) string { return strings.ReplaceAll(name, "/", "-") }

// runOne mounts the target, drives the workload, reads the counters before
// and after, unmounts, and measures.
func (b *bencher) runOne(t benchreport.Target, round int, label string, interrupted <-chan struct{}) (benchreport.Run, error) {
	r := benchreport.Run{Target: t.Name, Round: round, Values: map[string]float64{}}
	id := fmt.Sprintf("%s-%d", slug(t.Name), round)
	work := filepath.Join(b.cfg.Out, "work", id)
	store := filepath.Join(b.storeDir, id, "store")
	os.RemoveAll(work)
	os.RemoveAll(filepath.Dir(store))
	defer os.RemoveAll(work)
	defer os.RemoveAll(filepath.Dir(store))
	mnt := filepath.Join(work, "mnt")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return r, err
	}
	dir := mnt
	var m *mounted
	if t.Kind != "native" {
		r.Profile = fmt.Sprintf("cpu-%s.pprof", id)
		var err error
		m, err = b.mount(t, store, mnt, filepath.Join(b.cfg.Out, r.Profile), filepath.Join(b.cfg.Out, fmt.Sprintf("mount-%s.log", id)))
		if err != nil {
			return r, err
		}
		defer m.kill()
	} else {
		dir = store
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return r, err
		}
	}
	var before *journal.StatsFile
	if t.Kind == "xlogfs" {
		var err error
		if before, err = readStats(mnt); err != nil {
			return r, err
		}
	}
	// The device's flushes (all of its users'), for a store on disk.
	flushesBefore, flushesOK := deviceFlushes(store)

	bar := newProgress(label+" "+b.cfg.Workload, b.cfg.Duration, b.progress)
	w, err := runWorkload(b.cfg, dir, t, bar, interrupted)
	bar.done()
	if err != nil {
		return r, err
	}
	r.Seconds, r.Bytes, r.Ops, r.Extra = w.seconds, w.bytes, w.ops, w.extra
	for _, wn := range w.warnings {
		b.warn(t, round, wn)
	}
	r.Values["throughput"] = float64(w.bytes) / w.seconds / 1e6
	if tps, ok := w.extra["tps"]; ok {
		r.Values["throughput"] = tps
	}
	if p95, ok := w.extra["p95_ms"]; ok {
		r.Values["p95_ms"] = p95
	}
	if us, ok := w.extra["pwrite_mean_us"]; ok {
		r.Values["pwrite_us"] = us
	}
	if len(w.fsyncLatencies) > 0 {
		r.Values["fsync_p50"], r.Values["fsync_p99"] = percentile(w.fsyncLatencies, 50), percentile(w.fsyncLatencies, 99)
		r.FsyncSource = "client"
	}
	flushes := math.NaN()
	if after, ok := deviceFlushes(store); ok && flushesOK && b.cfg.Device == "disk" {
		flushes = after - flushesBefore
	}
	if m == nil {
		return r, nil
	}
	if t.Kind == "xlogfs" {
		after, err := readStats(mnt)
		if err != nil {
			return r, err
		}
		st := statsNumbers(after)
		r.Stats = st
		r.Histograms = map[string][]journal.Bucket{}
		for _, h := range after.Hists {
			r.Histograms[h.Name] = h.Buckets
		}
		r.Requests = requestValues(r.Values, before.Numbers(), st, float64(r.Ops), flushes)
		if fsyncs := after.Hist(journal.HistFsync).Sub(before.Hist(journal.HistFsync)); r.FsyncSource == "" && fsyncs.Count() > 0 {
			r.Values["fsync_p50"], r.Values["fsync_p99"], r.FsyncSource = fsyncs.Percentile(50), fsyncs.Percentile(99), "filesystem"
		}
		journalValues(r.Values, before, after)
		if st["flush_overruns"] > 0 {
			b.warn(t, round, fmt.Sprintf("%.0f of %.0f flushes took longer than --flush-latency %v by themselves", st["flush_overruns"], st["flushes_emulated"], b.cfg.FlushLatency))
		}
	}
	cpu, err := m.unmount()
	if err != nil {
		return r, err
	}
	r.DaemonCPU = cpu
	if t.Kind == "loopback" {
		// Its requests, counted over the mount's life (the mount
		// itself adds a handful).
		if f, err := readStatsFile(loopbackStats(mnt)); err == nil {
			st := statsNumbers(f)
			r.Stats = st
			r.Requests = requestValues(r.Values, nil, st, float64(r.Ops), flushes)
		} else {
			b.warn(t, round, fmt.Sprintf("loopback request counts: %v", err))
		}
	}
	share, err := profiling.AnalyzeFiles(filepath.Join(b.cfg.Out, r.Profile))
	if err != nil {
		b.warn(t, round, fmt.Sprintf("profile: %v", err))
	} else {
		r.ProfileSamples, r.ProfileCPUSeconds, r.ProfileCksumSeconds = share.Samples, share.CPUSeconds, share.ChecksumSeconds
		if share.CPUSeconds > 0 {
			// Every sample of a Go CPU profile weighs one period.
			r.ProfileCksumSamples = int64(math.Round(float64(share.Samples) * share.ChecksumSeconds / share.CPUSeconds))
		}
		if t.Kind == "xlogfs" {
			r.Values["cksum_cpu_profile"] = share.ChecksumShare
		}
	}
	if t.Kind == "xlogfs" {
		if out, err := exec.Command(selfExe(), "check", store).CombinedOutput(); err != nil {
			return r, fmt.Errorf("xlogfs check after the run failed:\n%s", out)
		}
	}
	return r, nil
}

func (b *bencher) warn(t benchreport.Target, round int, msg string) {
	b.res.Warnings = append(b.res.Warnings, fmt.Sprintf("%s round %d: %s", t.Name, round, msg))
}

// journalValues derives the journal's metrics of a run from its .stats
// before and after the workload: totals and histograms as differences
// over the workload.
func journalValues(v map[string]float64, beforeFile, afterFile *journal.StatsFile) {
	before, after := beforeFile.Numbers(), afterFile.Numbers()
	d := func(k string) float64 { return after[k] - before[k] }
	if cpu := d("process_cpu_ns"); cpu > 0 {
		v["cksum_cpu"] = d("cksum_ns") / cpu
	}
	if kib := d("cksum_bytes") / 1024; kib > 0 {
		v["cksum_ns_per_kib"] = d("cksum_ns") / kib
	}
	if rec := afterFile.Hist(journal.HistCksumRecord).Sub(beforeFile.Hist(journal.HistCksumRecord)); rec.Count() > 0 {
		v["cksum_rec_p50_ns"], v["cksum_rec_p99_ns"] = rec.Percentile(50), rec.Percentile(99)
	}
	if f := d("force_ns"); f > 0 {
		v["force_cksum_share"] = d("force_cksum_ns") / f
	}
	if n := d("forces_timed"); n > 0 {
		v["cksum_force_ns"] = d("force_cksum_cpu_ns") / n
	}
}

// requestValues derives a run's round-trip and flush metrics from its
// counters before and after the workload (before nil: counted from zero):
// FUSE requests per workload operation, the filesystem's syncs per fsync
// (the journal's own count; the loopback makes one fsync(2) per FSYNC or
// FSYNCDIR request), and the device's flushes per fsync (NaN: not
// counted). It returns the requests per operation by opcode.
func requestValues(v, before, after map[string]float64, ops, devFlushes float64) map[string]float64 {
	d := func(k string) float64 { return after[k] - before[k] }
	var byOp map[string]float64
	if ops > 0 && after["fuse_requests"] > 0 {
		v["requests_per_op"] = d("fuse_requests") / ops
		byOp = map[string]float64{}
		for k := range after {
			if op, ok := strings.CutPrefix(k, "fuse_"); ok && op != "requests" && d(k) > 0 {
				byOp[op] = d(k) / ops
			}
		}
	}
	fsyncs := d("fsyncs")
	syncs := d("syncs")
	if _, journal := after["syncs"]; !journal {
		fsyncs = d("fuse_FSYNC") + d("fuse_FSYNCDIR")
		syncs = fsyncs
	}
	if fsyncs > 0 {
		v["syncs_per_fsync"] = syncs / fsyncs
		if !math.IsNaN(devFlushes) {
			v["dev_flushes_per_fsync"] = devFlushes / fsyncs
		}
	}
	return byOp
}

// deviceFlushes reads the flush requests the block device under path has
// completed (/sys/dev/block/MAJ:MIN/stat, its 16th field, Linux 5.5 and
// later), counting every user of the device.
func deviceFlushes(path string) (float64, bool) {
	for p := path; ; p = filepath.Dir(p) {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil {
			b, err := os.ReadFile(fmt.Sprintf("/sys/dev/block/%d:%d/stat", unix.Major(st.Dev), unix.Minor(st.Dev)))
			if err != nil {
				return 0, false
			}
			f := strings.Fields(string(b))
			if len(f) < 16 {
				return 0, false
			}
			n, err := strconv.ParseFloat(f[15], 64)
			return n, err == nil
		}
		if filepath.Dir(p) == p {
			return 0, false
		}
	}
}

func selfExe() string {
	exe, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return exe
}

// mounted is a filesystem daemon the bench started.
type mounted struct {
	cmd  *exec.Cmd
	mnt  string
	done bool
}

// mount starts a daemon in the foreground (its CPU profile then holds the
// filesystem alone) and waits until it reports the mount ready.
func (b *bencher) mount(t benchreport.Target, store, mnt, profile, logFile string) (*mounted, error) {
	var args []string
	switch t.Kind {
	case "xlogfs":
		args = []string{"mount", "--foreground", "--cksum-mode", t.Mode, "--journal", b.cfg.Journal,
			"--cksum-impl", t.Impl, "--cpuprofile", profile, "--cpuprofile-rate", strconv.Itoa(b.cfg.ProfileRate), "--log", logFile}
		if b.cfg.FlushLatency > 0 {
			args = append(args, "--flush-latency", b.cfg.FlushLatency.String())
		}
		args = append(append(args, b.cfg.MountFlags...), store, mnt)
	case "loopback":
		if err := os.MkdirAll(store, 0o755); err != nil {
			return nil, err
		}
		// The best loopback: with HANDLE_KILLPRIV_V2, as xlogfs mounts,
		// no GETXATTR before every write.
		args = []string{"loopback-mount", "--cpuprofile", profile, "--handle-killpriv-v2", "--stats", loopbackStats(mnt), store, mnt}
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(selfExe(), args...)
	cmd.Env = append(os.Environ(), b.readyEnv+"=3")
	cmd.ExtraFiles = []*os.File{wr}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	wr.Close()
	m := &mounted{cmd: cmd, mnt: mnt}
	sc := bufio.NewScanner(rd)
	var msgs []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "ready "):
			rd.Close()
			return m, nil
		case strings.HasPrefix(line, "error "):
			m.kill()
			return nil, errors.New(strings.TrimPrefix(line, "error "))
		default:
			msgs = append(msgs, line)
		}
	}
	m.kill()
	return nil, fmt.Errorf("the %s daemon exited before the mount was ready: %s", t.Kind, strings.Join(msgs, "; "))
}

// unmount asks the daemon to unmount (SIGTERM: checkpoint, unmount record,
// profile written) and returns the CPU time it used.
func (m *mounted) unmount() (float64, error) {
	if m.done {
		return 0, nil
	}
	m.cmd.Process.Signal(syscall.SIGTERM)
	errc := make(chan error, 1)
	go func() { errc <- m.cmd.Wait() }()
	select {
	case err := <-errc:
		m.done = true
		if err != nil {
			return 0, fmt.Errorf("daemon for %s: %v", m.mnt, err)
		}
	case <-time.After(60 * time.Second):
		m.kill()
		return 0, fmt.Errorf("daemon for %s did not exit within 60 s of SIGTERM", m.mnt)
	}
	ru, ok := m.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, nil
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds(), nil
}

// kill tears a mount down however it can (after a failure).
func (m *mounted) kill() {
	if m.done {
		return
	}
	m.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { m.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		m.cmd.Process.Kill()
		<-done
	}
	exec.Command("fusermount3", "-u", "-z", m.mnt).Run()
	m.done = true
}

// readStats reads MNT/.stats.
func readStats(mnt string) (*journal.StatsFile, error) {
	return readStatsFile(filepath.Join(mnt, fusefs.StatsName))
}

// loopbackStats is where the loopback baseline mounted at mnt writes its
// request counts, in the .stats format.
func loopbackStats(mnt string) string { return filepath.Join(filepath.Dir(mnt), "loopback.stats") }

func readStatsFile(path string) (*journal.StatsFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return journal.ParseStats(b)
}

// statsNumbers is f's numbers, with "passthrough on" and "off" as
// passthrough_on 1 and 0.
func statsNumbers(f *journal.StatsFile) map[string]float64 {
	st := f.Numbers()
	if v, ok := f.Value("passthrough"); ok {
		st["passthrough_on"] = 0
		if v == "on" {
			st["passthrough_on"] = 1
		}
	}
	return st
}

// percentile of durations in microseconds (exact: sorts a copy).
func percentile(lat []time.Duration, p float64) float64 {
	s := slices.Clone(lat)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	i = max(0, min(i, len(s)-1))
	return float64(s[i]) / 1e3
}
