package benchrun

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xlogfs/xlogfs/fusefs"
	"github.com/xlogfs/xlogfs/journal/statsfile"
	"github.com/xlogfs/xlogfs/logbuf"
	"golang.org/x/sys/unix"
)

// journalValues derives the journal's metrics of a run from its .stats
// before and after the workload: totals and histograms as differences
// over the workload.
func journalValues(v map[string]float64, beforeFile, afterFile *statsfile.File) {
	before, after := beforeFile.Numbers(), afterFile.Numbers()
	d := func(k string) float64 { return after[k] - before[k] }
	if cpu := d("process_cpu_ns"); cpu > 0 {
		v["cksum_cpu"] = d("cksum_ns") / cpu
		if _, ok := after["copy_cksum_ns"]; ok {
			v["copy_cksum_cpu"] = d("copy_cksum_ns") / cpu
		}
	}
	if kib := d("cksum_bytes") / 1024; kib > 0 {
		v["cksum_ns_per_kib"] = d("cksum_ns") / kib
	}
	if _, ok := after["cksum_timing_ns"]; ok && d("cksum_ns") > 0 {
		v["cksum_timing_share"] = d("cksum_timing_ns") / d("cksum_ns")
	}
	if rec := afterFile.Hist(statsfile.HistCksumRecord).Sub(beforeFile.Hist(statsfile.HistCksumRecord)); rec.Count() > 0 {
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
			return statFlushes(b)
		}
		if filepath.Dir(p) == p {
			return 0, false
		}
	}
}

// blockFlushes reads the flush requests block device dev (/dev/loop0) has
// completed.
func blockFlushes(dev string) (float64, bool) {
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "stat"))
	if err != nil {
		return 0, false
	}
	return statFlushes(b)
}

// statFlushes is a block device's stat file's flush requests completed,
// its 16th field (Linux 5.5 and later).
func statFlushes(b []byte) (float64, bool) {
	f := strings.Fields(string(b))
	if len(f) < 16 {
		return 0, false
	}
	n, err := strconv.ParseFloat(f[15], 64)
	return n, err == nil
}

// syncValues derives an xlogfs run's sync-write route and its syncs and
// log forces per fsync from its .stats before and after the workload: the
// opens of regular files by route (as shares), the log's, data files' and
// data directory's syncs, the log force requests, caller rounds and
// sleeps, and the immediate write bytes, each per fsync served (fsyncs).
// A line the daemon does not write (one older than the count) gives no
// value: the report shows "–".
func syncValues(v map[string]float64, before, after map[string]float64, fsyncs float64) {
	d := func(k string) float64 { return after[k] - before[k] }
	has := func(ks ...string) bool {
		for _, k := range ks {
			if _, ok := after[k]; !ok {
				return false
			}
		}
		return true
	}
	routes := []string{"opens_passthrough", "opens_log_route", "opens_daemon"}
	if has(routes...) {
		opens := d(routes[0]) + d(routes[1]) + d(routes[2])
		v["opens"] = opens
		if opens > 0 {
			for _, k := range routes {
				v[k+"_share"] = d(k) / opens
			}
		}
	}
	if !(fsyncs > 0) {
		return
	}
	for metric, k := range map[string]string{
		"log_syncs_per_fsync": "log_syncs", "data_syncs_per_fsync": "syncs_data", "dir_syncs_per_fsync": "syncs_dir",
		"force_requests_per_fsync": "force_requests", "force_caller_rounds_per_fsync": "force_caller_rounds",
		"force_sleeps_per_fsync": "force_sleeps", "immediate_write_bytes_per_fsync": "immediate_write_bytes",
	} {
		if has(k) {
			v[metric] = d(k) / fsyncs
		}
	}
}

// emulatedFlushes sets a run's flushes of the --flush-latency device per
// fsync served, or says why it cannot: flushes is NaN where they were not
// counted (flushWhy), fsyncs NaN where the fsyncs were not (fsyncWhy).
func emulatedFlushes(v map[string]float64, unmeasured map[string]string, flushes float64, flushWhy string, fsyncs float64, fsyncWhy string) {
	const m = "emulated_flushes_per_fsync"
	switch {
	case math.IsNaN(flushes):
		unmeasured[m] = flushWhy
	case math.IsNaN(fsyncs):
		unmeasured[m] = fsyncWhy
	case fsyncs == 0:
		unmeasured[m] = "the workload made no fsync"
	default:
		v[m] = flushes / fsyncs
	}
}

// readStats reads MNT/.stats.
func readStats(mnt string) (*statsfile.File, error) {
	return readStatsFile(filepath.Join(mnt, fusefs.StatsName))
}

// loopbackStats is where the loopback baseline mounted at mnt writes its
// request counts, in the .stats format.
func loopbackStats(mnt string) string { return filepath.Join(filepath.Dir(mnt), "loopback.stats") }

func readStatsFile(path string) (*statsfile.File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return statsfile.Parse(b)
}

// statsNumbers is f's numbers, with "passthrough on" and "off" as
// passthrough_on 1 and 0.
func statsNumbers(f *statsfile.File) map[string]float64 {
	st := f.Numbers()
	if v, ok := f.Value("passthrough"); ok {
		st["passthrough_on"] = 0
		if v == "on" {
			st["passthrough_on"] = 1
		}
	}
	return st
}

// userHZ is /proc/stat's unit, USER_HZ: 100 on every Linux the bench runs
// on (it is fixed in the kernel's ABI, whatever HZ is).
const userHZ = 100

// parseProcStat reads the whole machine's busy CPU time in seconds from
// /proc/stat's "cpu" line: user, nice, system, irq and softirq (guest time
// is inside user); idle, iowait and steal (time the hypervisor gave
// another guest) are not busy.
func parseProcStat(b []byte) (float64, error) {
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		if len(f) < 8 {
			return 0, fmt.Errorf("/proc/stat: cpu line %q is short", l)
		}
		var busy float64
		for _, i := range []int{1, 2, 3, 6, 7} { // user nice system irq softirq
			n, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/stat: cpu field %d: %q", i, f[i])
			}
			busy += float64(n)
		}
		return busy / userHZ, nil
	}
	return 0, fmt.Errorf("/proc/stat has no cpu line")
}

// busyCPU reads the machine's busy CPU seconds so far.
func busyCPU() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseProcStat(b)
}

// logValues derives an xlogfs run's log metrics from its .stats before and
// after the workload: log writes and blocks, per write and per fsync, the
// checksum's bytes and CPU per fsync and its share of the machine's busy
// CPU. fsyncs is NaN where nobody counted them (why says why), busy NaN
// where /proc/stat could not be read (busyWhy). What cannot be derived
// goes into unmeasured with its reason.
func logValues(v map[string]float64, unmeasured map[string]string, before, after map[string]float64,
	fsyncs float64, why string, busy float64, busyWhy string) {
	d := func(k string) float64 { return after[k] - before[k] }
	writes, blocks, hdr := d("log_records"), d("log_bytes")/logbuf.BBSize, d("log_header_bytes")/logbuf.BBSize
	// File bytes logged with their writes (--journal data, the log route,
	// immediate writes) are what the kernel's XFS never logs: the meta
	// figures leave them out, to compare like with like.
	fileData := d("log_file_data_bytes") / logbuf.BBSize
	v["log_writes"], v["log_blocks"] = writes, blocks
	if writes > 0 {
		v["log_blocks_per_write"] = blocks / writes
		v["log_payload_blocks_per_write"] = (blocks - hdr) / writes
		v["log_meta_payload_blocks_per_write"] = (blocks - hdr - fileData) / writes
	} else {
		for _, k := range []string{"log_blocks_per_write", "log_payload_blocks_per_write", "log_meta_payload_blocks_per_write"} {
			unmeasured[k] = "no log writes during the workload"
		}
	}
	perFsync(v, unmeasured, fsyncs, why, map[string]float64{
		"log_blocks_per_fsync": blocks, "log_meta_blocks_per_fsync": blocks - fileData,
		"cksum_bytes_per_fsync": d("cksum_bytes"), "cksum_cpu_per_fsync": d("cksum_ns"),
	})
	if busy > 0 {
		v["cksum_busy_share"] = d("cksum_ns") / 1e9 / busy
	} else {
		unmeasured["cksum_busy_share"] = busyWhy
	}
}

// perFsync sets each of totals per fsync, or says why it cannot.
func perFsync(v map[string]float64, unmeasured map[string]string, fsyncs float64, why string, totals map[string]float64) {
	if !math.IsNaN(fsyncs) {
		v["fsyncs"] = fsyncs
	}
	for k, total := range totals {
		switch {
		case math.IsNaN(fsyncs):
			unmeasured[k] = why
		case fsyncs == 0:
			unmeasured[k] = "the workload made no fsync"
		case math.IsNaN(total):
			// its own reason is set already
		default:
			v[k] = total / fsyncs
		}
	}
}
