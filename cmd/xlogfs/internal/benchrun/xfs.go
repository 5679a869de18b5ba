package benchrun

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/xfsbase"
	"golang.org/x/sys/unix"
)

// The kernel XFS baseline's part of a round: an XFS image with the xlogfs
// stores' log geometry on the same device as their stores (the bench's
// tmpfs for --device ram, under --out for disk), loop-mounted; the
// kernel's XFS counters read around the workload, and where perf can, a
// system-wide profile of the workload.

// XFSPrereqs finds out what the kernel XFS baseline can do on env's
// machine. It fails, saying why, where XFS cannot run at all; where only
// perf cannot, the baseline runs and its checksum CPU is not measured, for
// the reason the warning gives.
func XFSPrereqs(env xfsbase.Env) (xfsbase.Readiness, []string, error) {
	r := xfsbase.Probe(env)
	if r.XFS != nil {
		return r, nil, fmt.Errorf("--baseline xfs: kernel XFS cannot run here: %w", r.XFS)
	}
	var warnings []string
	if r.Perf != nil {
		warnings = append(warnings, fmt.Sprintf("xfs: checksum CPU: not measured (%v)", r.Perf))
	}
	return r, warnings, nil
}

// xfsImageSize is the image's size: room for the workload (dbench's
// clients each make a few hundred MiB at most, the builtin's 64 MiB files,
// MariaDB its tables, logs and undo) with plenty to spare, as the image is
// sparse and takes room only as it is written.
func xfsImageSize(cfg benchreport.Config) int64 {
	size := int64(2<<30) + int64(cfg.Clients)*(256<<20)
	if cfg.Workload == "mariadb" {
		size += int64(cfg.Tables) * int64(cfg.TableSize) * 1024
	}
	return size
}

// xfsRound is the baseline in one round.
type xfsRound struct {
	b        *Bencher
	img      *xfsbase.Image
	dd       *delayed // the device with delayed flushes it is made on; nil: its own loop device
	rec      *xfsbase.Recorder
	counter  *xfsbase.Counter
	before   xfsbase.Stat
	run      *benchreport.XFSRun
	perfWhy  string // why the checksum CPU is not measured; "" if it is
	countWhy string // why XFS's fsyncs are not counted; "" if they are
}

// startXFS makes and mounts the round's image at mnt, with its image file
// in dir, and starts perf, its events off. The caller closes it.
func (b *Bencher) startXFS(t benchreport.Target, round int, id, dir, mnt string) (*xfsRound, error) {
	spec := xfsbase.Spec{Dir: dir, Mnt: mnt, Size: xfsImageSize(b.Cfg), LogBytes: b.Geom.LogBytes, LogBSize: b.Geom.LogBSize,
		LogBufs: b.Geom.LogBufs, DirectIO: b.Cfg.Device == "disk", Mkfs: b.XFS.Mkfs, Losetup: b.XFS.Losetup}
	var st unix.Statfs_t
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if unix.Statfs(dir, &st) == nil {
		if free := int64(st.Bavail) * st.Bsize; free < spec.Size {
			b.warn(t, round, fmt.Sprintf("the XFS image (%d MiB, sparse) is larger than the %d MiB free in %s: a workload that fills it fails",
				spec.Size>>20, free>>20, dir))
		}
	}
	var dd *delayed
	if b.delayed(t) {
		// XFS on a device whose flushes take --flush-latency.
		var err error
		if dd, err = b.makeDelayed(dir, id); err != nil {
			return nil, err
		}
		spec.Device = dd.Dev
	}
	img, err := xfsbase.Setup(spec)
	if err != nil {
		if dd != nil {
			if terr := dd.teardown(); terr != nil {
				err = fmt.Errorf("%w (and undoing the delayed device: %v)", err, terr)
			}
		}
		return nil, err
	}
	x := &xfsRound{b: b, img: img, dd: dd}
	x.run = &benchreport.XFSRun{Image: img.Path, ImageBytes: spec.Size, Loop: img.Loop, LoopDirectIO: img.DirectIO,
		LoopWhy: loopWhy(b.Cfg.Device, spec.DirectIO, img.DirectIO), LogBytes: spec.LogBytes, LogBSize: spec.LogBSize,
		LogBufs: spec.LogBufs, HeaderBlocks: xfsbase.HeaderBlocks(spec.LogBSize), MkfsArgs: img.MkfsArgs, MountOptions: img.MountOpts}
	if dd != nil {
		x.run.Image, x.run.Loop = dd.Image, dd.Loop
		if dio, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dd.Loop), "loop", "dio")); err == nil {
			x.run.LoopDirectIO = strings.TrimSpace(string(dio)) == "1"
		}
		x.run.LoopWhy = loopWhy(b.Cfg.Device, spec.DirectIO, x.run.LoopDirectIO)
		x.run.DelayDevice, x.run.DelayTable = dd.Dev, dd.Table
	}
	if spec.DirectIO && !img.DirectIO {
		b.warn(t, round, "the loop device would not take direct I/O on its image: the image's blocks are cached twice")
	}
	if others, err := xfsbase.OtherMounts(mnt); err == nil {
		x.run.OtherMounts = others
	} else {
		b.warn(t, round, err.Error())
	}
	x.perfWhy = b.perfWhy()
	x.countWhy = x.perfWhy
	if x.perfWhy == "" {
		c, err := xfsbase.StartCount(b.XFS.PerfPath, filepath.Join(b.Cfg.Out, fmt.Sprintf("perf-stat-%s.csv", id)), xfsbase.FsyncEvents...)
		if err != nil {
			x.countWhy = err.Error()
		} else {
			x.counter = c
		}
		// xfs may be a module, loaded by the mount: its symbols are known now.
		if err := xfsbase.KernelSymbol(os.ReadFile, xfsbase.CksumSymbol); err != nil {
			x.perfWhy = err.Error()
		}
	}
	if x.perfWhy == "" {
		data := fmt.Sprintf("perf-%s.data", id)
		rec, err := xfsbase.StartRecord(b.XFS.PerfPath, filepath.Join(b.Cfg.Out, data), b.Cfg.PerfRate)
		if err != nil {
			x.perfWhy = err.Error()
		} else {
			x.rec = rec
			x.run.Perf = &benchreport.PerfRun{RateHz: b.Cfg.PerfRate, Data: data}
		}
	}
	return x, nil
}

// perfWhy is why the bench cannot profile the baseline; "" if it can.
func (b *Bencher) perfWhy() string {
	if b.XFS.Perf != nil {
		return b.XFS.Perf.Error()
	}
	return ""
}

func loopWhy(device string, asked, got bool) string {
	switch {
	case device == "ram":
		return "the image is on tmpfs, which has no direct I/O, and whose pages are the image's only copy"
	case got:
		return "so that the image's blocks are cached once, by XFS, not again as the image file's pages"
	case asked:
		return "asked for, but the loop device could not take it on the image's filesystem: the blocks are cached twice"
	}
	return "not asked for"
}

// begin reads the counters and starts sampling: the workload follows.
func (x *xfsRound) begin() error {
	var err error
	if x.before, err = xfsbase.ReadStat(xfsbase.StatPath); err != nil {
		return err
	}
	if x.counter != nil {
		if err := x.counter.Enable(); err != nil {
			x.stopCount(err)
		}
	}
	if x.rec != nil {
		if err := x.rec.Enable(); err != nil {
			x.stopPerf(err)
		}
	}
	return nil
}

// stopCount gives up counting XFS's fsyncs, for why.
func (x *xfsRound) stopCount(why error) {
	x.countWhy = why.Error()
	if x.counter != nil {
		x.counter.Kill()
		x.counter = nil
	}
}

// stopPerf gives up the profile, for why.
func (x *xfsRound) stopPerf(why error) {
	x.perfWhy = why.Error()
	x.run.Perf = nil
	if x.rec != nil {
		x.rec.Kill()
		x.rec = nil
	}
}

// end reads the counters and stops sampling, right after the workload,
// and derives the round's values. The fsyncs are XFS's count (its fsync
// tracepoints), else the workload's (wf; NaN: it has none over the run,
// for wfWhy).
func (x *xfsRound) end(r *benchreport.Run, wf float64, wfWhy string) error {
	after, err := xfsbase.ReadStat(xfsbase.StatPath)
	if err != nil {
		return err
	}
	if c := x.counter; c != nil {
		x.counter = nil
		if err := c.Stop(); err != nil {
			x.stopCount(err)
		} else if counts, err := c.Counts(); err != nil {
			x.stopCount(err)
		} else {
			x.run.FsyncEvents = counts
		}
	}
	fsyncs, source, why := xfsFsyncs(x.run.FsyncEvents, x.countWhy, wf, wfWhy)
	if source != "" {
		r.Fsyncs, r.FsyncCounts = int64(fsyncs), source
	}
	var prof *xfsbase.Profile
	if x.rec != nil {
		rec := x.rec
		x.rec = nil
		if err := rec.Stop(); err != nil {
			x.stopPerf(err)
		} else if p, err := xfsbase.Script(x.b.XFS.PerfPath, rec.Out, rec.Pid(), rec.RateHz); err != nil {
			x.stopPerf(err)
		} else {
			prof = &p
			pr := x.run.Perf
			pr.Samples, pr.Idle, pr.Self, pr.Busy = p.Samples, p.Idle, p.Self, p.Busy
			pr.Cksum, pr.CksumCRC, pr.CRC32C, pr.UnresolvedKernel = p.Cksum, p.CksumCRC, p.CRC32C, p.UnresolvedKernel
			pr.TotalNs, pr.IdleNs, pr.SelfNs, pr.BusyNs = p.TotalNs, p.IdleNs, p.SelfNs, p.BusyNs
			pr.CksumNs, pr.CksumCRCNs, pr.CRC32CNs = p.CksumNs, p.CksumCRCNs, p.CRC32CNs
			pr.Lost = rec.Lost()
		}
	}
	d, err := xfsbase.Delta(x.before, after)
	if err != nil {
		return err
	}
	named, err := d.Named()
	if err != nil {
		return err
	}
	x.run.Stat, x.run.Counters = d.Fields, named
	r.XFS = x.run
	if r.Unmeasured == nil {
		r.Unmeasured = map[string]string{}
	}
	xfsValues(r.Values, r.Unmeasured, named["log_writes"], named["log_blocks"], x.run.LogBSize, fsyncs, why, prof, x.perfWhy)
	return nil
}

// xfsFsyncs is the fsyncs of the baseline's round and who counted them:
// XFS's fsync tracepoints (counts; nil: not counted, for countWhy), else
// the workload's count where it covers the run (wf; NaN: it does not, for
// wfWhy), else NaN and why.
func xfsFsyncs(counts map[string]uint64, countWhy string, wf float64, wfWhy string) (fsyncs float64, source, why string) {
	if counts != nil {
		for _, e := range xfsbase.FsyncEvents {
			fsyncs += float64(counts[e])
		}
		return fsyncs, "filesystem", ""
	}
	if !math.IsNaN(wf) {
		return wf, "workload", ""
	}
	return math.NaN(), "", fmt.Sprintf("%s, and XFS's fsyncs are not counted: %s", wfWhy, countWhy)
}

// xfsValues derives the baseline's log metrics from its counters' log
// writes and blocks (log buffers of logbsize bytes), the workload's
// fsyncs (NaN: not counted, for why), and its profile (nil: none, for
// perfWhy).
func xfsValues(v map[string]float64, unmeasured map[string]string, writes, blocks uint64, logbsize int,
	fsyncs float64, why string, prof *xfsbase.Profile, perfWhy string) {
	w, bl := float64(writes), float64(blocks)
	v["log_writes"], v["log_blocks"] = w, bl
	if writes > 0 {
		v["log_blocks_per_write"] = bl / w
		v["log_payload_blocks_per_write"] = bl/w - float64(xfsbase.HeaderBlocks(logbsize))
		// XFS logs metadata alone: all of its payload is metadata.
		v["log_meta_payload_blocks_per_write"] = v["log_payload_blocks_per_write"]
	} else {
		for _, k := range []string{"log_blocks_per_write", "log_payload_blocks_per_write", "log_meta_payload_blocks_per_write"} {
			unmeasured[k] = "no log writes during the workload"
		}
	}
	cksumNs := math.NaN()
	if prof != nil {
		cksumNs = float64(prof.CksumNs)
		if prof.BusyNs > 0 {
			v["cksum_busy_share"] = float64(prof.CksumNs) / float64(prof.BusyNs)
		} else {
			unmeasured["cksum_busy_share"] = "perf took no busy samples"
		}
	} else {
		unmeasured["cksum_cpu_per_fsync"] = perfWhy
		unmeasured["cksum_busy_share"] = perfWhy
	}
	perFsync(v, unmeasured, fsyncs, why, map[string]float64{
		"log_blocks_per_fsync":      bl,
		"log_meta_blocks_per_fsync": bl,
		"cksum_bytes_per_fsync":     xfsbase.CksumBytes(writes, blocks, logbsize),
		"cksum_cpu_per_fsync":       cksumNs,
	})
}

// close stops perf if it still runs, and unmounts, detaches and removes
// the image.
func (x *xfsRound) close() error {
	if x.rec != nil {
		x.rec.Kill()
		x.rec = nil
	}
	if x.counter != nil {
		x.counter.Kill()
		x.counter = nil
	}
	err := x.img.Teardown()
	if x.dd != nil {
		err = errors.Join(err, x.dd.teardown())
		x.dd = nil
	}
	return err
}
