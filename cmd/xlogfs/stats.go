package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/xlogfs/xlogfs/fusefs"
	"github.com/xlogfs/xlogfs/journal/statsfile"
)

func init() {
	register(command{name: "stats", summary: "print a mounted filesystem's counters, once or every interval (MOUNTPOINT/.stats)", args: "MOUNTPOINT", min: 1, max: 1, setup: runStats})
}

const statsAbout = `
Prints the counters of the xlogfs mounted at MOUNTPOINT, read from its
hidden, read-only .stats file, a "name value" line each. The first, "state",
is the journal's: ok; "degraded: checkpoint failed: ..." while checkpoints
fail but the log has room; "failed: <reason>" once it takes no more changes
(also said on stderr).

The log's syncs and forces, as XFS counts them:
  log_syncs        fdatasyncs of the log file (xfs_log_writes counts the
                   records written, log_records here)
  force_requests   log forces asked for (an fsync, a checkpoint), whether the
                   log was durable already or not (XFS's xs_log_force)
  log_forces       of those, the forces that waited for a log write (XFS's
                   xs_log_force_sleep)
  force_sleeps     forces that slept on another caller's round of log I/O
                   and were served by a later one (group commit)
  force_syncs      log syncs that at least one force waited for
  forces_per_sync  log_forces / force_syncs: waiting forces served per such
                   sync (group commit; 1.00: none shared)
  fsyncs           fsync and fdatasync calls served; syncs_per_fsync is every
                   sync (log, data files, directory, checkpoint) per fsync

Units: a name says its unit. Times are in ns (_ns) but for fsync latency,
in µs (_us) as its histogram is; shares are in percent (_pct):
cksum_cpu_pct is the checksum's share of the daemon's CPU time over the
mount's life (cksum_ns / process_cpu_ns), force_cksum_pct its share of
the log forces' wall time (force_cksum_ns / force_ns).

Histograms (fsync latency, checksum time per record, checksum and wall time
per log force) are summarised as count, p50, p90, p99 and max, each the
middle of its log-linear bucket (at most 12.5 % wide); --histogram prints
their buckets too.

With --interval D it prints a line every D, as iostat does, of what
happened in that interval, each column the difference of .stats counters:
  syncs/s       log_syncs per second
  records/s     log_records per second
  MB/s          log_bytes per second, in 10^6 bytes
  fsyncs/s      fsyncs per second
  forces/sync   log_forces / force_syncs (forces_per_sync of the interval)
  cksum ns/s    cksum_ns per second: checksum CPU time
  cksum cpu%    cksum_ns / process_cpu_ns, in percent (cksum_cpu_pct)
  fsync p99     the interval's fsync latency p99, in µs
--count N stops after N lines (default: until interrupted).

--json prints the same as JSON: one object of every .stats name (numbers as
numbers) and "histograms"; with --interval, one object per line and
interval, with the columns under the names above ("log_syncs_per_s",
"forces_per_sync", "cksum_cpu_pct", ...), the counters' differences
("delta") and their values at the interval's end ("totals"). expvar (mount
--pprof) serves the same names.`

func runStats(fs *flagSet) func(pos []string) error {
	fs.about = statsAbout
	asJSON := fs.Bool("json", false, "print JSON")
	histogram := fs.Bool("histogram", false, "print every histogram's buckets, not only its summary")
	interval := fs.DurationP("interval", "i", 0, "print the rates of every interval of this length (e.g. 1s) instead of the totals")
	count := fs.IntP("count", "c", 0, "with --interval: stop after this many intervals (0: until interrupted)")
	xfsLine := fs.Bool("xfs", false, "print the log's counters as the log line of XFS's /proc/fs/xfs/stat: writes, blocks, noiclogs, force, force_sleep")
	return func(pos []string) (err error) {
		switch {
		case fs.Changed("interval") && *interval < 10*time.Millisecond:
			return fs.usagef("--interval %v: want 10ms or more", *interval)
		case *count < 0:
			return fs.usagef("--count %d: want 0 (until interrupted) or more", *count)
		case *count > 0 && *interval == 0:
			return fs.usagef("--count needs --interval")
		case *xfsLine && (*interval > 0 || *asJSON || *histogram):
			return fs.usagef("--xfs prints one line: not with --interval, --json or --histogram")
		}
		mnt := pos[0]
		first, err := readMountStats(mnt)
		if err != nil {
			return err
		}
		if *xfsLine {
			line, err := xfsLogLine(first.file)
			if err != nil {
				return fmt.Errorf("%s: %w", mnt, err)
			}
			fmt.Println(line)
			return nil
		}
		if *interval > 0 {
			return statsIntervals(os.Stdout, mnt, first, *interval, *count, *asJSON)
		}
		if *asJSON {
			out := first.file.JSON(*histogram)
			out["mountpoint"] = first.mnt
			if err := printJSON(os.Stdout, out); err != nil {
				return err
			}
		} else {
			printStats(os.Stdout, first.file, *histogram)
		}
		// The journal's state leads the counters; one that is not "ok" is
		// also said on stderr, where a script's reader will see it.
		if state, ok := first.file.Value("state"); ok && state != "ok" {
			fmt.Fprintf(os.Stderr, "xlogfs: %s: journal %s\n", mnt, state)
		}
		return nil
	}
}

// mountStats is one reading of a mount's .stats.
type mountStats struct {
	mnt  string // absolute
	at   time.Time
	file *statsfile.File
}

func readMountStats(mnt string) (mountStats, error) {
	abs, err := filepath.Abs(mnt)
	if err != nil {
		return mountStats{}, err
	}
	if _, err := os.Stat(abs); err != nil {
		return mountStats{}, fmt.Errorf("%s: %w", mnt, unwrapPath(err))
	}
	b, err := os.ReadFile(filepath.Join(abs, fusefs.StatsName))
	at := time.Now()
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return mountStats{}, fmt.Errorf("%s is not an xlogfs mount (it has no %s)", mnt, fusefs.StatsName)
		}
		return mountStats{}, fmt.Errorf("%s: %w", mnt, unwrapPath(err))
	}
	f, err := statsfile.Parse(b)
	if err != nil {
		return mountStats{}, fmt.Errorf("%s: %w", filepath.Join(mnt, fusefs.StatsName), err)
	}
	return mountStats{mnt: abs, at: at, file: f}, nil
}

// histUnits are the units of the histograms' values.
var histUnits = map[string]string{statsfile.HistFsync: "µs", statsfile.HistCksumRecord: "ns", statsfile.HistForceCksum: "ns", statsfile.HistForce: "ns"}

func histUnit(name string) string {
	if u, ok := histUnits[name]; ok {
		return u
	}
	switch {
	case strings.Contains(name, "_us_"):
		return "µs"
	case strings.Contains(name, "_ns_"):
		return "ns"
	}
	return ""
}

// printStats prints the counters as .stats has them, "name value" lines
// (so "xlogfs stats MNT | grep" finds what .stats holds), then each
// histogram's summary (and buckets).
func printStats(w io.Writer, f *statsfile.File, buckets bool) {
	for _, l := range f.Lines {
		fmt.Fprintf(w, "%s %s\n", l.Name, l.Value)
	}
	// A record's bytes are header blocks (one per 32 KiB of iclog, however
	// little the record holds), payload, and padding to a block.
	if recs, _ := f.Number("log_records"); recs > 0 {
		total, _ := f.Number("log_bytes")
		hdr, _ := f.Number("log_header_bytes")
		payload, _ := f.Number("log_payload_bytes")
		fmt.Fprintf(w, "\nper log record: %.0f bytes = %.0f header + %.0f payload + %.0f padding (means over %.0f records)\n",
			total/recs, hdr/recs, payload/recs, (total-hdr-payload)/recs, recs)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "histogram\tcount\tp50\tp90\tp99\tmax\tunit\t")
	names := slices.Clone(statsfile.HistNames)
	for _, h := range f.Hists {
		if !slices.Contains(names, h.Name) {
			names = append(names, h.Name)
		}
	}
	for _, name := range names {
		h := f.Hist(name)
		s := h.Summary(false)
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t%s\t\n", h.Name, s.Count, s.P50, s.P90, s.P99, s.Max, histUnit(h.Name))
	}
	tw.Flush()
	if !buckets {
		return
	}
	for _, h := range f.Hists {
		fmt.Fprintf(w, "\n%s (%s)\n", h.Name, histUnit(h.Name))
		var most uint64
		for _, b := range h.Buckets {
			most = max(most, b.Count)
		}
		tw = tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
		for _, b := range h.Buckets {
			bar := strings.Repeat("#", int((b.Count*40+most-1)/most))
			fmt.Fprintf(tw, "[%d,\t%d)\t%d\t %s\n", b.Lo, b.Hi, b.Count, bar)
		}
		tw.Flush()
	}
}

// intervalRates is what one interval of "xlogfs stats --interval" shows:
// rates over the interval, the counters' differences and values at its
// end, by their .stats names.
type intervalRates struct {
	Time          time.Time                        `json:"time"`
	Seconds       float64                          `json:"seconds"`
	SyncsPerS     float64                          `json:"log_syncs_per_s"`
	RecordsPerS   float64                          `json:"log_records_per_s"`
	BytesPerS     float64                          `json:"log_bytes_per_s"`
	FsyncsPerS    float64                          `json:"fsyncs_per_s"`
	ForcesPerSync float64                          `json:"forces_per_sync"`
	CksumNsPerS   float64                          `json:"cksum_ns_per_s"`
	CksumCPUPct   float64                          `json:"cksum_cpu_pct"` // of the daemon's CPU time in the interval
	Delta         map[string]float64               `json:"delta"`
	Totals        map[string]float64               `json:"totals"`
	Histograms    map[string]statsfile.HistSummary `json:"histograms"` // of the interval's values
}

// statsColumn is a column of "stats --interval": the interval's growth of
// the .stats counter num over den's (den "": per second), times scale, is
// its --json field; the line shows that times show.
// TestStatsColumnsSayWhatTheyCount ties each label to its counters.
type statsColumn struct {
	label       string
	num, den    string
	scale, show float64
	width       int
	format      string
	field       func(*intervalRates) *float64
}

var statsColumns = []statsColumn{
	{"syncs/s", "log_syncs", "", 1, 1, 9, "%*.0f", func(r *intervalRates) *float64 { return &r.SyncsPerS }},
	{"records/s", "log_records", "", 1, 1, 9, "%*.0f", func(r *intervalRates) *float64 { return &r.RecordsPerS }},
	{"MB/s", "log_bytes", "", 1, 1e-6, 8, "%*.2f", func(r *intervalRates) *float64 { return &r.BytesPerS }},
	{"fsyncs/s", "fsyncs", "", 1, 1, 9, "%*.0f", func(r *intervalRates) *float64 { return &r.FsyncsPerS }},
	{"forces/sync", "log_forces", "force_syncs", 1, 1, 11, "%*.2f", func(r *intervalRates) *float64 { return &r.ForcesPerSync }},
	{"cksum ns/s", "cksum_ns", "", 1, 1, 11, "%*.0f", func(r *intervalRates) *float64 { return &r.CksumNsPerS }},
	{"cksum cpu%", "cksum_ns", "process_cpu_ns", 100, 1, 10, "%*.3f", func(r *intervalRates) *float64 { return &r.CksumCPUPct }},
}

// intervalCounters are the counters an interval's rates come from.
var intervalCounters = []string{"log_syncs", "log_records", "log_bytes", "log_header_bytes", "log_payload_bytes",
	"fsyncs", "log_forces", "force_syncs", "transactions", "cksum_ns", "cksum_bytes", "cksum_calls", "process_cpu_ns"}

func rates(prev, cur mountStats) intervalRates {
	r := intervalRates{Time: cur.at, Seconds: cur.at.Sub(prev.at).Seconds(), Delta: map[string]float64{}, Totals: map[string]float64{},
		Histograms: map[string]statsfile.HistSummary{}}
	p, c := prev.file.Numbers(), cur.file.Numbers()
	for _, name := range intervalCounters {
		if v, ok := c[name]; ok {
			r.Totals[name] = v
			r.Delta[name] = v - p[name]
		}
	}
	for _, col := range statsColumns {
		den := r.Seconds
		if col.den != "" {
			den = r.Delta[col.den]
		}
		if den > 0 {
			*col.field(&r) = r.Delta[col.num] / den * col.scale
		}
	}
	for _, name := range statsfile.HistNames {
		r.Histograms[name] = cur.file.Hist(name).Sub(prev.file.Hist(name)).Summary(false)
	}
	return r
}

// statsIntervals prints a line of rates every interval, count times (0:
// until SIGINT or SIGTERM).
func statsIntervals(w io.Writer, mnt string, prev mountStats, interval time.Duration, count int, asJSON bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	enc := json.NewEncoder(w)
	start := prev.at
	for n := 1; count == 0 || n <= count; n++ {
		// Ticks are kept to the first reading's clock, so that lines do
		// not drift by the time each reading takes.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(start.Add(time.Duration(n) * interval))):
		}
		cur, err := readMountStats(mnt)
		if err != nil {
			return err
		}
		r := rates(prev, cur)
		prev = cur
		if asJSON {
			if err := enc.Encode(r); err != nil {
				return err
			}
			continue
		}
		if (n-1)%20 == 0 {
			fmt.Fprintf(w, "%-8s", "time")
			for _, col := range statsColumns {
				fmt.Fprintf(w, " %*s", col.width, col.label)
			}
			fmt.Fprintf(w, " %9s\n", "fsync p99")
		}
		fmt.Fprintf(w, "%-8s", cur.at.Format("15:04:05"))
		for _, col := range statsColumns {
			fmt.Fprintf(w, " "+col.format, col.width, *col.field(&r)*col.show)
		}
		fmt.Fprintf(w, " %7.0fµs\n", r.Histograms[statsfile.HistFsync].P99)
	}
	return nil
}

// xfsLogLine is the log line of /proc/fs/xfs/stat from a mount's .stats.
func xfsLogLine(f *statsfile.File) (string, error) {
	names := []string{"xfs_log_writes", "xfs_log_blocks", "xfs_log_noiclogs", "xfs_log_force", "xfs_log_force_sleep"}
	var v [5]uint64
	for i, n := range names {
		x, ok := f.Number(n)
		if !ok {
			return "", fmt.Errorf(".stats has no %s (a daemon older than this xlogfs?)", n)
		}
		v[i] = uint64(x)
	}
	return statsfile.XFSLog{Writes: v[0], Blocks: v[1], NoIclogs: v[2], Force: v[3], ForceSleep: v[4]}.Line(), nil
}
