package benchrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchwork"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/xfsbase"
	"github.com/xlogfs/xlogfs/journal/statsfile"
	"github.com/xlogfs/xlogfs/profiling"
)

// Bencher runs the rounds.
type Bencher struct {
	Cfg      benchreport.Config
	Res      *benchreport.Results
	Progress bool
	storeDir string // where stores go: a tmpfs for --device ram, else OUT/work
	ReadyEnv string // the variable naming the fd a daemonized mount reports readiness on
	// XFS is what the kernel XFS baseline can do here (XFSPrereqs), Geom
	// the xlogfs stores' log geometry it copies (XlogfsGeometry).
	XFS  xfsbase.Readiness
	Geom Geometry
	// Delay is what ProbeDelay found, with --flush-latency and a
	// baseline (nil: not probed): where dm-delay can, the baselines'
	// stores go on a device of its whose flushes take the latency.
	Delay *DelayReadiness
	// geomWarned: targets whose log geometry was found to differ from the
	// baseline's (warned once).
	geomWarned map[string]bool
}

// Run runs every target in every round, appending each completed run to
// b.Res.Runs. When ctx is cancelled (SIGINT, SIGTERM) it stops the run in
// progress, drops it (its workload did not run its time), tears its mount
// down, marks b.Res partial with why, and returns an error wrapping
// ErrInterrupted. A run that fails because ctx was cancelled under it (a
// workload or daemon that received the terminal's signal too) is an
// interruption, not a failure; so is a workload child killed by SIGINT or
// SIGTERM from elsewhere.
func (b *Bencher) Run(ctx context.Context, targets []benchreport.Target) error {
	b.storeDir = filepath.Join(b.Cfg.Out, "work")
	if b.Cfg.Device == "ram" {
		dir, cleanup, how, err := ramStore(b.Cfg.Out)
		if err != nil {
			return err
		}
		defer cleanup()
		b.storeDir = dir
		fmt.Fprintf(os.Stderr, "stores on %s\n", how)
	}
	defer os.RemoveAll(filepath.Join(b.Cfg.Out, "work"))
	total := len(targets) * b.Cfg.Rounds
	n := 0
	for round := 1; round <= b.Cfg.Rounds; round++ {
		for pos, ti := range RoundOrder(b.Cfg.Seed, round, len(targets)) {
			t := targets[ti]
			n++
			if ctx.Err() != nil {
				return b.interrupted(ctx, round, t.Name, nil)
			}
			label := fmt.Sprintf("[%d/%d] round %d/%d %s", n, total, round, b.Cfg.Rounds, t.Name)
			r, err := b.runOne(ctx, t, round, label)
			if ctx.Err() != nil || (err != nil && killedBySignal(err)) {
				return b.interrupted(ctx, round, t.Name, err)
			}
			if err != nil {
				return fmt.Errorf("%s round %d: %w", t.Name, round, err)
			}
			r.Order = pos + 1
			b.Res.Runs = append(b.Res.Runs, r)
		}
	}
	return nil
}

// interrupted marks the results partial: where the bench stopped and why.
func (b *Bencher) interrupted(ctx context.Context, round int, target string, err error) error {
	why := "interrupted"
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		why = "interrupted (" + cause.Error() + ")"
	} else if ctx.Err() == nil && err != nil {
		why = "interrupted: the workload was stopped by a signal"
	}
	b.Res.Partial = true
	b.Res.PartialWhy = fmt.Sprintf("%s in round %d of %d, running %s; %d of %d runs done",
		why, round, b.Cfg.Rounds, target, len(b.Res.Runs), len(b.Res.Targets)*b.Cfg.Rounds)
	return fmt.Errorf("%w in round %d of %d", ErrInterrupted, round, b.Cfg.Rounds)
}

// killedBySignal reports whether err comes from a child process that
// SIGINT or SIGTERM ended (a workload a signal reached, not the bench).
func killedBySignal(err error) bool {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws.Signal() == syscall.SIGINT || ws.Signal() == syscall.SIGTERM
		}
	}
	return false
}

// slug is a target's name as a file name part: sector/avx512 → sector-avx512.
func slug(name string) string { return strings.ReplaceAll(name, "/", "-") }

// runOne mounts the target, drives the workload, reads the counters before
// and after, unmounts, and measures.
func (b *Bencher) runOne(ctx context.Context, t benchreport.Target, round int, label string) (r benchreport.Run, err error) {
	r = benchreport.Run{Target: t.Name, Round: round, Values: map[string]float64{}, Unmeasured: map[string]string{}}
	defer func() {
		if len(r.Unmeasured) == 0 {
			r.Unmeasured = nil
		}
	}()
	id := fmt.Sprintf("%s-%d", slug(t.Name), round)
	work := filepath.Join(b.Cfg.Out, "work", id)
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
	var xr *xfsRound
	if reach, ok := b.reach(t); ok && !reach.Reached {
		r.Unmeasured["emulated_flushes_per_fsync"] = benchreport.NotReached(t.Name, reach.Why)
	}
	// native's and the loopback's store: ext4 on a device whose flushes
	// take --flush-latency, where dm-delay can make one.
	var dd *delayed
	if b.delayed(t) && t.Kind != benchreport.XFSTarget {
		if dd, err = b.makeDelayed(filepath.Dir(store), id); err != nil {
			return r, err
		}
		defer func() {
			if terr := dd.teardown(); terr != nil && err == nil {
				err = terr
			}
		}()
		if err := dd.mkfsMount(b.Delay.Mkfs, ext4Args, "ext4", store); err != nil {
			return r, err
		}
	}
	switch t.Kind {
	case "native":
		dir = store
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return r, err
		}
	case benchreport.XFSTarget:
		// The image goes where the store would: the tmpfs, or OUT/work.
		if xr, err = b.startXFS(t, round, id, filepath.Dir(store), mnt); err != nil {
			return r, err
		}
		defer func() {
			if cerr := xr.close(); cerr != nil && err == nil {
				err = cerr
			}
		}()
	default:
		// A store whose CRCs cover xlog_cksum's regions is made before the
		// mount (which makes one with the whole coverage otherwise).
		if b.Cfg.CRC == "xfs" {
			if out, err := exec.Command(selfExe(), "mkfs", "--crc", "xfs", store).CombinedOutput(); err != nil {
				return r, fmt.Errorf("xlogfs mkfs --crc xfs %s: %v: %s", store, err, bytes.TrimSpace(out))
			}
		}
		r.Profile = fmt.Sprintf("cpu-%s.pprof", id)
		var err error
		m, err = b.mount(t, store, mnt, filepath.Join(b.Cfg.Out, r.Profile), filepath.Join(b.Cfg.Out, fmt.Sprintf("mount-%s.log", id)))
		if err != nil {
			return r, err
		}
		defer m.kill()
	}
	var before *statsfile.File
	if t.Kind == "xlogfs" {
		var err error
		if before, err = readStats(mnt); err != nil {
			return r, err
		}
	}
	// The device's flushes (all of its users'), for a store on disk.
	flushesBefore, flushesOK := deviceFlushes(store)
	// The delayed device's, counted on the loop device under it.
	delayDev := ""
	if dd != nil {
		delayDev = dd.Loop
	} else if xr != nil && xr.dd != nil {
		delayDev = xr.dd.Loop
	}
	var delayBefore float64
	delayOK := false
	if delayDev != "" {
		delayBefore, delayOK = blockFlushes(delayDev)
	}

	// The whole machine's busy CPU over the workload.
	busyBefore, busyErr := busyCPU()
	if xr != nil {
		if err := xr.begin(); err != nil {
			return r, err
		}
	}

	bar := benchwork.NewProgress(label+" "+b.Cfg.Workload, b.Cfg.Duration, b.Progress)
	w, err := benchwork.Run(b.Cfg, dir, t, bar, ctx.Done())
	bar.Done()
	if ctx.Err() != nil {
		// Stopped short: the deferred teardown unmounts; the run is
		// dropped.
		return r, ErrInterrupted
	}
	if err != nil {
		return r, err
	}
	busy, busyWhy := math.NaN(), ""
	if busyAfter, err := busyCPU(); err == nil && busyErr == nil {
		busy = busyAfter - busyBefore
		r.BusyCPU = busy
	} else {
		busyWhy = fmt.Sprintf("the machine's busy CPU: %v", errors.Join(busyErr, err))
	}
	// The workload's own count of its fsyncs, where it covers the run;
	// the filesystems' own counts come first.
	fsyncs, fsyncWhy := float64(w.Fsyncs), ""
	if w.FsyncsUncounted != "" {
		fsyncs, fsyncWhy = math.NaN(), w.FsyncsUncounted
	}
	delayFlushes, delayWhy := math.NaN(), ""
	if delayDev != "" {
		if after, ok := blockFlushes(delayDev); ok && delayOK {
			delayFlushes = after - delayBefore
		} else {
			delayWhy = fmt.Sprintf("%s's flushes: no flush count in /sys/block/%s/stat (Linux 5.5 and later have one)", delayDev, filepath.Base(delayDev))
		}
	}
	if xr != nil {
		if err := xr.end(&r, fsyncs, fsyncWhy); err != nil {
			return r, err
		}
	}
	switch {
	case dd != nil && t.Kind == "native":
		emulatedFlushes(r.Values, r.Unmeasured, delayFlushes, delayWhy, fsyncs, fsyncWhy)
	case xr != nil && xr.dd != nil:
		xfsFs, why := math.NaN(), fsyncWhy
		if r.FsyncCounts != "" {
			xfsFs = float64(r.Fsyncs)
		} else if w := r.Unmeasured["log_blocks_per_fsync"]; w != "" {
			why = w
		}
		emulatedFlushes(r.Values, r.Unmeasured, delayFlushes, delayWhy, xfsFs, why)
	}
	r.Seconds, r.Bytes, r.Ops, r.Extra = w.Seconds, w.Bytes, w.Ops, w.Extra
	for _, wn := range w.Warnings {
		b.warn(t, round, wn)
	}
	r.Values["throughput"] = float64(w.Bytes) / w.Seconds / 1e6
	if tps, ok := w.Extra["tps"]; ok {
		r.Values["throughput"] = tps
	}
	if cps, ok := w.Extra["creates_per_s"]; ok {
		r.Values["throughput"] = cps
	}
	if p95, ok := w.Extra["p95_ms"]; ok {
		r.Values["p95_ms"] = p95
	}
	if us, ok := w.Extra["pwrite_mean_us"]; ok {
		r.Values["pwrite_us"] = us
	}
	if len(w.FsyncLatencies) > 0 {
		r.Values["fsync_p50"], r.Values["fsync_p99"] = benchwork.Percentile(w.FsyncLatencies, 50), benchwork.Percentile(w.FsyncLatencies, 99)
		r.FsyncSource = "client"
	}
	flushes := math.NaN()
	if after, ok := deviceFlushes(store); ok && flushesOK && b.Cfg.Device == "disk" {
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
		r.Histograms = map[string][]statsfile.Bucket{}
		for _, h := range after.Hists {
			r.Histograms[h.Name] = h.Buckets
		}
		r.Requests = requestValues(r.Values, before.Numbers(), st, float64(r.Ops), flushes)
		if fsyncs := after.Hist(statsfile.HistFsync).Sub(before.Hist(statsfile.HistFsync)); r.FsyncSource == "" && fsyncs.Count() > 0 {
			r.Values["fsync_p50"], r.Values["fsync_p99"], r.FsyncSource = fsyncs.Percentile(50), fsyncs.Percentile(99), "filesystem"
		}
		journalValues(r.Values, before, after)
		// The fsyncs the filesystem served, as XFS's are counted.
		fs := st["fsyncs"] - before.Numbers()["fsyncs"]
		r.Fsyncs, r.FsyncCounts = int64(fs), "filesystem"
		r.SyncWrites, _ = after.Value("sync_writes")
		if cov, ok := after.Value("crc_coverage"); ok {
			if msg := checkCoverage(cov, b.Cfg.CRC); msg != "" {
				return r, errors.New(msg)
			}
		}
		syncValues(r.Values, before.Numbers(), st, fs)
		if b.Cfg.FlushLatency > 0 {
			// Every log flush and data-file sync is an emulated flush.
			flushes, why := math.NaN(), ""
			if _, ok := st["flushes_emulated"]; ok {
				flushes = st["flushes_emulated"] - before.Numbers()["flushes_emulated"]
			} else {
				why = "the daemon's .stats has no flushes_emulated"
			}
			emulatedFlushes(r.Values, r.Unmeasured, flushes, why, fs, "")
		}
		if !math.IsNaN(fsyncs) && math.Abs(fs-fsyncs) > max(2, 0.01*fsyncs) {
			b.warn(t, round, fmt.Sprintf("the workload counted %.0f fsyncs, the filesystem %.0f", fsyncs, fs))
		}
		logValues(r.Values, r.Unmeasured, before.Numbers(), st, fs, "", busy, busyWhy)
		if _, ok := b.Res.Target(benchreport.XFSTarget); ok && !b.geomWarned[t.Name] {
			if msg := checkGeometry(st, b.Geom); msg != "" {
				if b.geomWarned == nil {
					b.geomWarned = map[string]bool{}
				}
				b.geomWarned[t.Name] = true
				b.warn(t, round, msg)
			}
		}
		if st["flush_overruns"] > 0 {
			b.warn(t, round, fmt.Sprintf("%.0f of %.0f flushes took longer than --flush-latency %v by themselves", st["flush_overruns"], st["flushes_emulated"], b.Cfg.FlushLatency))
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
			if b.Cfg.FlushLatency > 0 {
				// The fsyncs it served, over the mount's life (the
				// mount itself makes none); its own emulated flushes,
				// or the delayed device's under its directory.
				fs := st["fuse_FSYNC"] + st["fuse_FSYNCDIR"]
				if dd != nil {
					emulatedFlushes(r.Values, r.Unmeasured, delayFlushes, delayWhy, fs, "")
				} else if _, ok := st["flushes_emulated"]; ok {
					emulatedFlushes(r.Values, r.Unmeasured, st["flushes_emulated"], "", fs, "")
					if st["flush_overruns"] > 0 {
						b.warn(t, round, fmt.Sprintf("%.0f of %.0f flushes took longer than --flush-latency %v by themselves", st["flush_overruns"], st["flushes_emulated"], b.Cfg.FlushLatency))
					}
				} else {
					emulatedFlushes(r.Values, r.Unmeasured, math.NaN(), "loopback-mount wrote no flushes_emulated", fs, "")
				}
			}
		} else {
			b.warn(t, round, fmt.Sprintf("loopback request counts: %v", err))
		}
	}
	share, err := profiling.AnalyzeFiles(filepath.Join(b.Cfg.Out, r.Profile))
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
		if r.DaemonCPU > 0 {
			r.Values["profile_cpu_total"] = share.CPUSeconds / r.DaemonCPU
		}
	}
	if t.Kind == "xlogfs" {
		if out, err := exec.Command(selfExe(), "check", store).CombinedOutput(); err != nil {
			return r, fmt.Errorf("xlogfs check after the run failed:\n%s", out)
		}
	}
	return r, nil
}

// reach is how --flush-latency reaches t (ok false: no --flush-latency).
func (b *Bencher) reach(t benchreport.Target) (benchreport.FlushReach, bool) {
	for _, f := range b.Res.FlushReach {
		if f.Target == t.Name {
			return f, true
		}
	}
	return benchreport.FlushReach{}, false
}

// delayed reports whether t's store goes on a device of dm-delay's.
func (b *Bencher) delayed(t benchreport.Target) bool {
	return b.Cfg.FlushLatency > 0 && t.Kind != "xlogfs" && b.Delay != nil && b.Delay.Err == nil
}

// makeDelayed makes the round's delayed device, its image in dir.
func (b *Bencher) makeDelayed(dir, id string) (*delayed, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return makeDelayed(systemDelayOps(*b.Delay), filepath.Join(dir, "delayed.img"), xfsImageSize(b.Cfg),
		fmt.Sprintf("xlogfs-bench-%d-%s", os.Getpid(), id), b.Cfg.FlushLatency, b.Cfg.Device == "disk")
}

func (b *Bencher) warn(t benchreport.Target, round int, msg string) {
	b.Res.Warnings = append(b.Res.Warnings, fmt.Sprintf("%s round %d: %s", t.Name, round, msg))
}
