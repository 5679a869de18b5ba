package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/xlogfs/xlogfs/profiling"
)

func init() {
	register(command{name: "bench", summary: "compare checksum modes side by side under a workload (the README's main job)", run: runBench})
}

const benchAbout = `
For each checksum mode, makes and mounts a fresh store, runs the workload
while recording a CPU profile of the filesystem, and unmounts; rounds go in
alternating order (A B C A B C ...) so that drift of the machine falls on
every mode alike. Then prints one row per mode: throughput, fsync p50/p99,
log forces, records, mean record size, crc32c calls per record, bytes
checksummed, the checksum time on the log-force path per force and the
checksum time in all (inline mode does most of its work as ops are copied
into the log, and that time includes the copy, done in the same pass), and
the checksum's share of the filesystem's CPU time, from the profile and from
the journal's own counters (median, with min–max over rounds).

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

--baseline adds targets run the same way: loopback (go-fuse's loopback
filesystem over a plain directory: what FUSE itself costs) and native (the
plain directory, no FUSE).

Everything is kept in --out: results.json, every cpu-<target>-<round>.pprof,
and chart.svg (throughput and checksum share per mode).`

type benchConfig struct {
	Modes     []string      `json:"modes"`
	Baselines []string      `json:"baselines,omitempty"`
	Workload  string        `json:"workload"`
	Journal   string        `json:"journal"`
	Duration  time.Duration `json:"duration_ns"`
	Clients   int           `json:"clients"`
	Rounds    int           `json:"rounds"`
	WriteSize int           `json:"write_size"`
	Out       string        `json:"out"`
	// extra flags for every xlogfs mount (a lever under test)
	MountFlags []string `json:"mount_flags,omitempty"`
	CksumImpl  string   `json:"cksum_impl"`
	Tables     int      `json:"tables,omitempty"`
	TableSize  int      `json:"table_size,omitempty"`
}

// target is one thing measured: an xlogfs checksum mode or a baseline.
type target struct {
	name string // batched, xfs, sector, loopback, native
	kind string // "xlogfs", "loopback", "native"
}

// runResult is one round of one target.
type runResult struct {
	Target      string             `json:"target"`
	Round       int                `json:"round"`
	Seconds     float64            `json:"seconds"`
	Bytes       int64              `json:"bytes"`
	Ops         int64              `json:"ops"`
	MBps        float64            `json:"mb_per_s"`
	FsyncP50us  float64            `json:"fsync_p50_us"`
	FsyncP99us  float64            `json:"fsync_p99_us"`
	FsyncSource string             `json:"fsync_latency_source,omitempty"` // client or filesystem
	Stats       map[string]float64 `json:"stats,omitempty"`                // the mount's .stats at the end
	DaemonCPU   float64            `json:"daemon_cpu_seconds,omitempty"`
	Profile     string             `json:"profile,omitempty"`
	// Checksum share of the filesystem's CPU time: from the profile, and
	// from the journal's counters (ns in checksum / daemon CPU time).
	ShareProfile  float64            `json:"checksum_share_profile"`
	ShareCounters float64            `json:"checksum_share_counters"`
	Extra         map[string]float64 `json:"extra,omitempty"` // workload-specific (tps, p95_ms, ...)
}

type benchResults struct {
	Version  string        `json:"version"`
	Started  time.Time     `json:"started"`
	Machine  benchMachine  `json:"machine"`
	Config   benchConfig   `json:"config"`
	Runs     []runResult   `json:"runs"`
	Summary  []benchSumRow `json:"summary"`
	Warnings []string      `json:"warnings,omitempty"`
}

type benchMachine struct {
	CPU       string `json:"cpu"`
	CPUs      int    `json:"cpus"`
	Go        string `json:"go"`
	Kernel    string `json:"kernel"`
	CksumImpl string `json:"cksum_impl"`
}

func runBench(args []string) error {
	fs := newFlags("bench", "[--modes batched,xfs,sector,inline] [--workload builtin|dbench|mariadb] [--journal meta|data] [--time 20s] [--clients 4] [--rounds 3] [--out DIR] [--json]", benchAbout)
	modes := fs.String("modes", "batched,xfs,sector,inline", "checksum modes to compare, comma-separated")
	workload := fs.String("workload", "builtin", "the workload: "+strings.Join(workloads, ", "))
	jmode := fs.String("journal", "meta", "journal mode of the mounts: meta or data")
	dur := fs.Duration("time", 20*time.Second, "how long each run drives the workload")
	clients := fs.Int("clients", 4, "concurrent clients (writers, dbench processes, sysbench threads)")
	rounds := fs.Int("rounds", 3, "rounds; each runs every target once, in alternating order")
	out := fs.String("out", "", "directory for results.json, profiles and chart.svg (default: a new bench-<timestamp>)")
	asJSON := fs.Bool("json", false, "print results.json to stdout (the table goes to stderr)")
	baseline := fs.String("baseline", "", "also run: loopback, native (comma-separated)")
	writeSize := &sizeFlag{n: 4096}
	fs.Var(writeSize, "write-size", "builtin workload: bytes per write")
	impl := fs.String("cksum-impl", "auto", "crc32c implementation of the mounts")
	noProgress := fs.Bool("no-progress", false, "no progress bar")
	mountFlags := fs.String("mount-flags", "", "extra flags for every xlogfs mount, space-separated (e.g. \"--direct-io --attr-timeout 5s\")")
	tables := fs.Int("tables", 4, "mariadb workload: sysbench tables")
	tableSize := fs.Int("table-size", 20000, "mariadb workload: rows per sysbench table")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	cfg := benchConfig{Workload: *workload, Journal: *jmode, Duration: *dur, Clients: *clients, Rounds: *rounds,
		WriteSize: int(writeSize.n), Out: *out, CksumImpl: *impl}
	if cfg.Workload == "mariadb" {
		cfg.Tables, cfg.TableSize = *tables, *tableSize
	}
	var targets []target
	for _, m := range strings.Split(*modes, ",") {
		if m = strings.TrimSpace(m); m == "" {
			continue
		}
		if _, err := cksum.ParseMode(m); err != nil {
			return fmt.Errorf("--modes: %v", err)
		}
		cfg.Modes = append(cfg.Modes, m)
		targets = append(targets, target{name: m, kind: "xlogfs"})
	}
	for _, b := range strings.Split(*baseline, ",") {
		switch b = strings.TrimSpace(b); b {
		case "":
		case "loopback", "native":
			cfg.Baselines = append(cfg.Baselines, b)
			targets = append(targets, target{name: b, kind: b})
		default:
			return fmt.Errorf("--baseline: unknown %q (want loopback or native)", b)
		}
	}
	switch {
	case len(targets) == 0:
		return errors.New("nothing to run: give --modes or --baseline")
	case !slices.Contains(workloads, cfg.Workload):
		return fmt.Errorf("--workload: unknown %q (want %s)", cfg.Workload, strings.Join(workloads, ", "))
	case cfg.Journal != "meta" && cfg.Journal != "data":
		return fmt.Errorf("--journal: unknown %q (want meta or data)", cfg.Journal)
	case cfg.Duration < time.Second:
		return errors.New("--time: at least 1s")
	case cfg.Clients < 1 || cfg.Clients > 256:
		return errors.New("--clients: 1 to 256")
	case cfg.Rounds < 1:
		return errors.New("--rounds: at least 1")
	case cfg.WriteSize < 1 || cfg.WriteSize > 16<<20:
		return errors.New("--write-size: 1 byte to 16 MiB")
	case cfg.Workload == "mariadb" && (cfg.Tables < 1 || cfg.TableSize < 1):
		return errors.New("--tables and --table-size: at least 1")
	}
	cfg.MountFlags = strings.Fields(*mountFlags)
	if _, err := cksum.Lookup(cfg.CksumImpl); err != nil {
		return fmt.Errorf("--cksum-impl: %v", err)
	}
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

	res := &benchResults{Version: Version, Started: time.Now(), Machine: machineInfo(), Config: cfg}
	b := &bencher{cfg: cfg, res: res, progress: !*noProgress}
	if err := b.run(targets); err != nil {
		return err
	}
	res.Summary = summarize(res.Runs, targets)
	if err := writeJSONFile(filepath.Join(cfg.Out, "results.json"), res); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfg.Out, "chart.svg"), benchSVG(res), 0o644); err != nil {
		return err
	}
	tableOut := os.Stdout
	if *asJSON {
		tableOut = os.Stderr
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	printBenchTable(tableOut, res)
	fmt.Fprintf(tableOut, "\nresults, profiles and chart in %s\n", cfg.Out)
	return nil
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// benchPrereqs checks, and installs where it can, what the bench needs.
func benchPrereqs(cfg benchConfig, targets []target) error {
	needFuse := slices.ContainsFunc(targets, func(t target) bool { return t.kind != "native" })
	if needFuse {
		if _, err := os.Stat("/dev/fuse"); err != nil {
			return errors.New("/dev/fuse is missing: this machine cannot mount FUSE filesystems")
		}
		if err := ensureCommand("fusermount3", "fuse3"); err != nil {
			return err
		}
	}
	switch cfg.Workload {
	case "dbench":
		return ensureCommand("dbench", "dbench")
	case "mariadb":
		return mariadbPrereqs()
	}
	return nil
}

// ensureCommand installs Debian package pkg when cmd is not on PATH.
func ensureCommand(cmd, pkg string) error {
	if _, err := exec.LookPath(cmd); err == nil {
		return nil
	}
	return aptInstall(pkg)
}

func aptInstall(pkgs ...string) error {
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("%s not installed, and no apt-get to install it with", strings.Join(pkgs, ", "))
	}
	fmt.Fprintf(os.Stderr, "installing %s ...\n", strings.Join(pkgs, " "))
	install := func() error {
		c := exec.Command("apt-get", append([]string{"install", "-y", "--no-install-recommends"}, pkgs...)...)
		c.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := c.CombinedOutput()
		if err != nil {
			return fmt.Errorf("apt-get install %s: %v\n%s", strings.Join(pkgs, " "), err, tail(string(out), 15))
		}
		return nil
	}
	if err := install(); err == nil {
		return nil
	}
	if out, err := exec.Command("apt-get", "update").CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get update: %v\n%s", err, tail(string(out), 10))
	}
	return install()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func machineInfo() benchMachine {
	m := benchMachine{CPUs: runtime.NumCPU(), Go: runtime.Version(), CksumImpl: cksum.Best().Name}
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
	cfg      benchConfig
	res      *benchResults
	progress bool
	// the mount being measured, for cleanup on interrupt
	current *mounted
}

func (b *bencher) run(targets []target) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	interrupted := make(chan struct{})
	go func() {
		if _, ok := <-sigs; ok {
			close(interrupted)
		}
	}()
	total := len(targets) * b.cfg.Rounds
	n := 0
	for round := 1; round <= b.cfg.Rounds; round++ {
		for _, t := range targets {
			n++
			select {
			case <-interrupted:
				return errors.New("interrupted")
			default:
			}
			label := fmt.Sprintf("[%d/%d] round %d/%d %s", n, total, round, b.cfg.Rounds, t.name)
			r, err := b.runOne(t, round, label, interrupted)
			if err != nil {
				return fmt.Errorf("%s round %d: %w", t.name, round, err)
			}
			b.res.Runs = append(b.res.Runs, r)
		}
	}
	return nil
}

// runOne mounts the target, drives the workload, unmounts, and measures.
func (b *bencher) runOne(t target, round int, label string, interrupted <-chan struct{}) (runResult, error) {
	r := runResult{Target: t.name, Round: round}
	work := filepath.Join(b.cfg.Out, "work", fmt.Sprintf("%s-%d", t.name, round))
	os.RemoveAll(work)
	defer os.RemoveAll(work)
	store, mnt := filepath.Join(work, "store"), filepath.Join(work, "mnt")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return r, err
	}
	dir := mnt
	var m *mounted
	if t.kind != "native" {
		r.Profile = fmt.Sprintf("cpu-%s-%d.pprof", t.name, round)
		var err error
		m, err = b.mount(t, store, mnt, filepath.Join(b.cfg.Out, r.Profile), filepath.Join(b.cfg.Out, fmt.Sprintf("mount-%s-%d.log", t.name, round)))
		if err != nil {
			return r, err
		}
		b.current = m
		defer func() {
			m.kill()
			b.current = nil
		}()
	} else {
		dir = store
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return r, err
		}
	}

	bar := newProgress(label+" "+b.cfg.Workload, b.cfg.Duration, b.progress)
	w, err := runWorkload(b.cfg, dir, t, bar, interrupted)
	bar.done()
	if err != nil {
		return r, err
	}
	r.Seconds, r.Bytes, r.Ops, r.Extra = w.seconds, w.bytes, w.ops, w.extra
	for _, wn := range w.warnings {
		b.res.Warnings = append(b.res.Warnings, fmt.Sprintf("%s round %d: %s", t.name, round, wn))
	}
	r.MBps = float64(w.bytes) / w.seconds / 1e6
	if len(w.fsyncLatencies) > 0 {
		r.FsyncP50us, r.FsyncP99us = percentile(w.fsyncLatencies, 50), percentile(w.fsyncLatencies, 99)
		r.FsyncSource = "client"
	}
	if m == nil {
		return r, nil
	}
	if t.kind == "xlogfs" {
		st, err := readStats(mnt)
		if err != nil {
			return r, err
		}
		r.Stats = st
		if r.FsyncSource == "" && st["fsyncs"] > 0 {
			r.FsyncP50us, r.FsyncP99us, r.FsyncSource = st["fsync_p50_us"], st["fsync_p99_us"], "filesystem"
		}
	}
	cpu, err := m.unmount()
	if err != nil {
		return r, err
	}
	r.DaemonCPU = cpu
	if r.Stats != nil && cpu > 0 {
		r.ShareCounters = r.Stats["cksum_ns"] / 1e9 / cpu
	}
	share, err := profiling.AnalyzeFiles(filepath.Join(b.cfg.Out, r.Profile))
	if err != nil {
		b.res.Warnings = append(b.res.Warnings, fmt.Sprintf("%s round %d: profile: %v", t.name, round, err))
	} else {
		r.ShareProfile = share.ChecksumShare
	}
	if t.kind == "xlogfs" {
		if out, err := exec.Command(selfExe(), "check", store).CombinedOutput(); err != nil {
			return r, fmt.Errorf("xlogfs check after the run failed:\n%s", out)
		}
	}
	return r, nil
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
func (b *bencher) mount(t target, store, mnt, profile, logFile string) (*mounted, error) {
	var args []string
	switch t.kind {
	case "xlogfs":
		args = []string{"mount", "--foreground", "--cksum-mode", t.name, "--journal", b.cfg.Journal,
			"--cksum-impl", b.cfg.CksumImpl, "--cpuprofile", profile, "--log", logFile}
		args = append(append(args, b.cfg.MountFlags...), store, mnt)
	case "loopback":
		if err := os.MkdirAll(store, 0o755); err != nil {
			return nil, err
		}
		args = []string{"loopback-mount", "--cpuprofile", profile, store, mnt}
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(selfExe(), args...)
	cmd.Env = append(os.Environ(), readyEnv+"=3")
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
	return nil, fmt.Errorf("the %s daemon exited before the mount was ready: %s", t.kind, strings.Join(msgs, "; "))
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

// readStats parses MNT/.stats ("name value" lines) into numbers.
func readStats(mnt string) (map[string]float64, error) {
	b, err := os.ReadFile(filepath.Join(mnt, ".stats"))
	if err != nil {
		return nil, err
	}
	st := map[string]float64{}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			st[k] = f
		}
	}
	return st, nil
}

// percentile of durations in microseconds (exact: sorts a copy).
func percentile(lat []time.Duration, p float64) float64 {
	s := slices.Clone(lat)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	i = max(0, min(i, len(s)-1))
	return float64(s[i]) / 1e3
}
