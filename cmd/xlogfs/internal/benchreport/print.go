package benchreport

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchstat"
)

// Print writes the whole report: the answer (Answer) under a line saying
// what ran where, then the tables, comparisons, attribution, verdict and
// warnings. Unless wide, every line fits in MaxWidth columns: a table
// keeps the columns that fit and names the others (results.json has
// them all).
func Print(w io.Writer, res *Results, wide bool) {
	PrintHeader(w, res)
	if res.Partial {
		wrap(w, "PARTIAL: "+res.PartialWhy+".", "  ")
	}
	fmt.Fprintln(w)
	for _, s := range Answer(res) {
		wrap(w, s, "")
	}
	if note := TooFewRoundsNote(res); note != "" {
		wrap(w, note, "")
	}
	if len(res.Runs) == 0 {
		fmt.Fprintln(w, "\nNo run completed: nothing to report.")
		return
	}
	fmt.Fprintln(w)
	PrintTable(w, res, wide)
	if slices.ContainsFunc(res.Rows, hasRequests) || slices.ContainsFunc(res.Rows, hasSyncs) || len(res.FlushReach) > 0 {
		fmt.Fprintln(w)
		PrintRequests(w, res, wide)
	}
	if slices.ContainsFunc(res.Rows, hasLog) {
		fmt.Fprintln(w)
		PrintLog(w, res, wide)
	}
	if len(res.Comparisons) > 0 {
		fmt.Fprintln(w)
		PrintComparisons(w, res, wide)
	}
	if len(res.Attribution) > 0 {
		fmt.Fprintln(w)
		PrintAttribution(w, res, wide)
	}
	fmt.Fprintln(w)
	PrintVerdict(w, res)
	for _, wn := range res.Warnings {
		wrap(w, "warning: "+wn, "  ")
	}
}

// PrintHeader says what ran where.
func PrintHeader(w io.Writer, res *Results) {
	c := res.Config
	dev := c.Device
	if c.FlushLatency > 0 {
		dev += fmt.Sprintf(", every flush %v", c.FlushLatency)
	}
	crc := c.CRC
	if crc == "" {
		crc = "whole"
	}
	wrap(w, fmt.Sprintf("xlogfs bench: %s workload, journal %s, crc %s, device %s, %d clients, %d rounds of %v, order seed %d",
		c.Workload, c.Journal, crc, dev, c.Clients, c.Rounds, c.Duration, c.Seed), "  ")
	m := res.Machine
	wrap(w, fmt.Sprintf("machine: %s, %d CPUs, kernel %s, %s, fastest crc32c %s", m.CPU, m.CPUs, m.Kernel, m.Go, m.CksumImpl), "  ")
}

// PrintTable writes a row per target: medians over rounds, and for the
// checksum's CPU share its interval, its ratio to the reference and the
// profile's view with the samples behind it. The columns go by
// importance: those that do not fit in MaxWidth are left to --wide.
func PrintTable(w io.Writer, res *Results, wide bool) {
	tw := newTable(w, wide, 1)
	tput, _ := res.MetricByName("throughput")
	head := []string{"target", tput.Unit, "fsync p50/p99 µs", "cksum % CPU (95% CI)", "× " + res.Config.Reference, "ns/KiB", "copy+cksum % CPU", "profile % (samples)", "passthrough", "crc calls/rec", "rec KiB hdr+payload", "cksum ns/rec p50/p99", "ns/force", "% of force"}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range res.Rows {
		v := func(m, format string) string {
			iv, ok := r.Values[m]
			if !ok || math.IsNaN(iv.Center) {
				return "–"
			}
			meta, _ := res.MetricByName(m)
			return fmt.Sprintf(format, iv.Center*meta.Scale)
		}
		row := []string{r.Target, v("throughput", "%.1f"), v("fsync_p50", "%.0f") + " / " + v("fsync_p99", "%.0f")}
		if _, ok := r.Values["cksum_cpu"]; !ok {
			row = append(row, "–", "–", "–", "–")
			if r.ProfileSamples > 0 {
				row = append(row, fmt.Sprintf("%.3f (%s/%s)", 100*r.ProfileShare, count(r.ProfileCksumSamples), count(r.ProfileSamples)))
			} else {
				row = append(row, "–")
			}
			row = append(row, dash(r.Passthrough), "–", "–", "–", "–", "–")
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
			continue
		}
		share := r.Values["cksum_cpu"]
		shareText := fmt.Sprintf("%.3f", 100*share.Center)
		if share.Finite() {
			shareText += fmt.Sprintf(" (%.3f–%.3f)", 100*share.Lo, 100*share.Hi)
		}
		vsRef := "–"
		if c, ok := res.Comparison("cksum_cpu", r.Target); ok {
			vsRef = ratioText(c.Interval())
		} else if r.Target == res.Config.Reference {
			vsRef = "1 (reference)"
		}
		row = append(row, shareText, vsRef, v("cksum_ns_per_kib", "%.1f"), v("copy_cksum_cpu", "%.3f"),
			fmt.Sprintf("%.3f (%s/%s)", 100*r.ProfileShare, count(r.ProfileCksumSamples), count(r.ProfileSamples)),
			dash(r.Passthrough), fmt.Sprintf("%.1f", r.CallsPerRecord), recordKiB(r),
			v("cksum_rec_p50_ns", "%.0f")+" / "+v("cksum_rec_p99_ns", "%.0f"),
			v("cksum_force_ns", "%.0f"), v("force_cksum_share", "%.2f"))
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	fmt.Fprintln(w)
	wrap(w, "medians over the rounds. cksum % CPU: checksum CPU time ÷ the daemon's CPU time during the workload (journal "+
		"counters), with its 95 % interval; × reference: median of the rounds' ratios with its 95 % interval, * where it "+
		"excludes 1; ns/KiB, cksum ns/rec and % CPU count all the checksum work, inline mode's at copy time too (which "+
		"includes the copy it fuses); copy+cksum % CPU: copying ops into iclogs, stamping and checksumming, in every mode: "+
		"the fair total to compare inline with; profile: checksum share of all rounds' CPU profiles (checksum "+
		"samples/samples); ns/force: checksum CPU time on the log-force path per force (at seal); % of force: the "+
		"checksum's share of log-force latency.", "")
	var rates []string
	for _, r := range res.Rows {
		if r.ProfileRateHz > 0 {
			rates = append(rates, fmt.Sprintf("%.0f", r.ProfileRateHz))
		}
	}
	if len(rates) > 0 && res.Config.ProfileRate > 0 {
		wrap(w, fmt.Sprintf("profile: %d Hz asked; samples per second of daemon CPU reached: %s (Linux samples a thread at most once per scheduler tick).",
			res.Config.ProfileRate, strings.Join(rates, ", ")), "  ")
	}
	if lo, hi, ok := valueRange(res, "profile_cpu_total"); ok {
		wrap(w, fmt.Sprintf("profile: each written scaled to the daemon's CPU time (getrusage); the unscaled samples' total was %s of it.",
			percentRange(lo, hi)), "  ")
	}
	if _, hi, ok := valueRange(res, "cksum_timing_share"); ok {
		wrap(w, fmt.Sprintf("timing the checksum (a cycle counter read around a sample of records) cost at most %.2f %% of the checksum CPU it measured.",
			100*hi), "  ")
	}
	off := 0.0
	for _, r := range res.Rows {
		off = max(off, r.OffCPURecords)
	}
	if off > 0 {
		wrap(w, fmt.Sprintf("records whose timed span was too long for their bytes (the thread lost its CPU), their time estimated from their bytes: up to %.2f %% of a target's.", 100*off), "  ")
	}
	if src := fsyncSource(res); src != "" {
		fmt.Fprintf(w, "fsync latency: %s.\n", src)
	}
}

// valueRange is the lowest and highest median of metric over the rows
// that measured it.
func valueRange(res *Results, metric string) (lo, hi float64, ok bool) {
	for _, r := range res.Rows {
		iv, has := r.Values[metric]
		if !has || math.IsNaN(iv.Center) {
			continue
		}
		if !ok {
			lo, hi, ok = iv.Center, iv.Center, true
		}
		lo, hi = min(lo, iv.Center), max(hi, iv.Center)
	}
	return lo, hi, ok
}

// percentRange says a range of fractions as percentages.
func percentRange(lo, hi float64) string {
	if fmt.Sprintf("%.0f", 100*lo) == fmt.Sprintf("%.0f", 100*hi) {
		return fmt.Sprintf("%.0f %%", 100*hi)
	}
	return fmt.Sprintf("%.0f–%.0f %%", 100*lo, 100*hi)
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func hasRequests(r Row) bool { _, ok := r.Values["requests_per_op"]; return ok }

// PrintRequests writes what each target's workload cost in round trips
// and flushes: FUSE requests per workload operation, in all and for the
// opcodes that cost most, and the syncs and device flushes per fsync; then
// the sync-write routes and the flushes per fsync by what they flushed
// (PrintSyncs).
func PrintRequests(w io.Writer, res *Results, wide bool) {
	fmt.Fprintln(w, "round trips and flushes (medians over the rounds)")
	if slices.ContainsFunc(res.Rows, hasRequests) {
		fmt.Fprintln(w)
		printRequestTable(w, res, wide)
	}
	if slices.ContainsFunc(res.Rows, hasSyncs) || len(res.FlushReach) > 0 {
		fmt.Fprintln(w)
		PrintSyncs(w, res, wide)
	}
}

func printRequestTable(w io.Writer, res *Results, wide bool) {
	tw := newTable(w, wide, 1)
	fmt.Fprintln(tw, "target	req/op	syncs/fsync	device flushes/fsync	passthrough	most per op	")
	for _, r := range res.Rows {
		v := func(m, format string) string {
			if iv, ok := r.Values[m]; ok && !math.IsNaN(iv.Center) {
				return fmt.Sprintf(format, iv.Center)
			}
			return "–"
		}
		ops := slices.SortedFunc(maps.Keys(r.Requests), func(a, b string) int {
			if c := cmp.Compare(r.Requests[b], r.Requests[a]); c != 0 {
				return c
			}
			return strings.Compare(a, b)
		})
		var mostOps []string
		most := 6
		if !wide {
			most = 3
		}
		for _, op := range ops[:min(len(ops), most)] {
			mostOps = append(mostOps, fmt.Sprintf("%s %.2f", op, r.Requests[op]))
		}
		fmt.Fprintf(tw, "%s	%s	%s	%s	%s	%s	\n", r.Target, v("requests_per_op", "%.2f"), v("syncs_per_fsync", "%.2f"),
			v("dev_flushes_per_fsync", "%.2f"), dash(r.Passthrough), dash(strings.Join(mostOps, ", ")))
	}
	tw.Flush()
	fmt.Fprintln(w)
	wrap(w, "req/op: FUSE requests per workload operation (dbench's operations, sysbench's transactions, the builtin's "+
		"write+fsync); syncs/fsync: fdatasync/fsync calls the filesystem made per fsync it served (xlogfs: log, data files, "+
		"data directory, checkpoint; the loopback: one per request); device flushes: the store's block device's, all of its "+
		"users' (--device disk only); most per op: the opcodes that cost most, per operation.", "")
}

// syncMetrics are the sync-write table's metrics: a row with none of them
// (nor a reason for one) is not in the table.
var syncMetrics = []string{"opens", "opens_passthrough_share", "opens_log_route_share", "opens_daemon_share",
	"emulated_flushes_per_fsync", "log_syncs_per_fsync", "data_syncs_per_fsync", "dir_syncs_per_fsync",
	"force_requests_per_fsync", "force_caller_rounds_per_fsync", "force_sleeps_per_fsync"}

func hasSyncs(r Row) bool {
	if r.SyncWrites != "" {
		return true
	}
	for _, m := range syncMetrics {
		if _, ok := r.Values[m]; ok {
			return true
		}
		if _, ok := r.Unmeasured[m]; ok {
			return true
		}
	}
	return false
}

// flushMetric is the metric the sync table's flushes column shows: the
// emulated device's with --flush-latency, else the block device's.
func flushMetric(res *Results) string {
	if res.Config.FlushLatency > 0 {
		return "emulated_flushes_per_fsync"
	}
	return "dev_flushes_per_fsync"
}

// PrintSyncs writes, per target, how its opens of regular files were
// routed (the sync-write route), its flushes per fsync and its syncs per
// fsync by what they made durable (log, data files, data directory), and
// the log forces behind them; then which targets --flush-latency reached,
// and how. A value a target has no count of (a baseline, or a daemon older
// than the count) is "–"; one it could not measure "not measured", with
// why below.
func PrintSyncs(w io.Writer, res *Results, wide bool) {
	tw := newTable(w, wide, 2)
	fmt.Fprintln(tw, "\tsync\topens\troutes %\tflushes\tsyncs per fsync\tforces per fsync\t")
	fmt.Fprintln(tw, "target\twrites\t\tpt / log / dmn\tper fsync\tlog / data / dir\treq / rounds / sleeps\t")
	flushes := flushMetric(res)
	var notes []string
	for _, r := range res.Rows {
		if !hasSyncs(r) && !slices.ContainsFunc(res.FlushReach, func(f FlushReach) bool { return f.Target == r.Target }) {
			continue
		}
		has := func(m string) bool { iv, ok := r.Values[m]; return ok && !math.IsNaN(iv.Center) }
		v := func(m, format string) string {
			if !has(m) {
				return "–"
			}
			meta, _ := res.MetricByName(m)
			return fmt.Sprintf(format, r.Values[m].Center*meta.Scale)
		}
		// A group of values: "–" where the target has none of them.
		group := func(format string, ms ...string) string {
			if !slices.ContainsFunc(ms, has) {
				return "–"
			}
			var parts []string
			for _, m := range ms {
				parts = append(parts, v(m, format))
			}
			return strings.Join(parts, " / ")
		}
		opens := "–"
		if has("opens") {
			opens = count(int64(math.Round(r.Values["opens"].Center)))
		}
		flush := v(flushes, "%.2f")
		if why := r.Unmeasured[flushes]; !has(flushes) && why != "" {
			flush = NotMeasured
			meta, _ := res.MetricByName(flushes)
			notes = append(notes, fmt.Sprintf("%s: %s: %s (%s)", r.Target, meta.Label, NotMeasured, why))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Target, dash(r.SyncWrites), opens,
			group("%.0f", "opens_passthrough_share", "opens_log_route_share", "opens_daemon_share"), flush,
			group("%.2f", "log_syncs_per_fsync", "data_syncs_per_fsync", "dir_syncs_per_fsync"),
			group("%.2f", "force_requests_per_fsync", "force_caller_rounds_per_fsync", "force_sleeps_per_fsync"))
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, n := range notes {
		wrap(w, n, "  ")
	}
	printFlushReach(w, res)
	flushText := "the store's block device's flushes per fsync (--device disk; all of its users')"
	if res.Config.FlushLatency > 0 {
		flushText = "the emulated device's flushes per fsync (xlogfs: its flushes_emulated, every log flush and data-file sync; " +
			"the loopback: its own, every FSYNC and FSYNCDIR; a dm-delay device: the flushes of the loop device under it)"
	}
	wrap(w, "sync writes: the mount's policy (auto, log, passthrough); opens: regular files opened over the workload; routes: "+
		"their shares by the route taken (pt: passthrough, log: the log route, dmn: the daemon); flushes per fsync: "+flushText+
		"; syncs: the log's, the data files' and the data directory's syncs per fsync served; forces: log force requests, "+
		"the callers' rounds of log I/O, and sleeps on another's log I/O, per fsync served. –: the target keeps no such count "+
		"(a baseline, or a daemon older than the count).", "")
}

// printFlushReach says which targets --flush-latency reached and how, and
// which it did not and why, targets sharing a way on one line.
func printFlushReach(w io.Writer, res *Results) {
	if len(res.FlushReach) == 0 {
		return
	}
	type group struct {
		reached bool
		text    string
		targets []string
	}
	var groups []*group
	for _, f := range res.FlushReach {
		text := f.How
		if !f.Reached {
			text = f.Why
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.reached == f.Reached && g.text == text })
		if i < 0 {
			groups = append(groups, &group{reached: f.Reached, text: text})
			i = len(groups) - 1
		}
		groups[i].targets = append(groups[i].targets, f.Target)
	}
	fmt.Fprintf(w, "--flush-latency %v:\n", res.Config.FlushLatency)
	for _, g := range groups {
		verb := "reaches"
		if !g.reached {
			verb = "does not reach"
		}
		wrap(w, fmt.Sprintf("  %s %s: %s", verb, strings.Join(g.targets, ", "), g.text), "    ")
	}
	if res.FlushProbe != "" {
		wrap(w, "  the kernel's delayed block devices: "+res.FlushProbe, "    ")
	}
}

// logMetrics are the log table's columns after the target's name, with
// their headers and formats.
var logMetrics = []struct{ metric, head, format string }{
	{"fsyncs", "fsyncs", "count"},
	{"log_writes", "writes", "count"},
	{"log_payload_blocks_per_write", "pay/w", "%.1f"},
	{"log_meta_payload_blocks_per_write", "meta/w", "%.1f"},
	{"log_blocks_per_fsync", "blk/f", "%.2f"},
	{"log_meta_blocks_per_fsync", "meta/f", "%.2f"},
	{"cksum_bytes_per_fsync", "ck B/fsync", "%.0f"},
	{"cksum_cpu_per_fsync", "ck ns/fsync", "%.0f"},
	{"cksum_busy_share", "ck % busy", "%.3f"},
}

func hasLog(r Row) bool {
	for _, m := range logMetrics {
		if _, ok := r.Values[m.metric]; ok {
			return true
		}
		if _, ok := r.Unmeasured[m.metric]; ok {
			return true
		}
	}
	return false
}

// NotMeasured is what a table cell says of a value a target could not
// measure; the reason follows the table.
const NotMeasured = "not measured"

// PrintLog writes what each target's log wrote and what its checksum
// cost, per log write and per fsync, xlogfs's targets beside the kernel's
// XFS: a value a target could not measure says so, with why below.
func PrintLog(w io.Writer, res *Results, wide bool) {
	fmt.Fprintln(w, "the log: writes, blocks and checksum per fsync (medians over the rounds)")
	fmt.Fprintln(w)
	tw := newTable(w, wide, 1)
	head := []string{"target"}
	for _, m := range logMetrics {
		head = append(head, m.head)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	var notes []string
	for _, r := range res.Rows {
		if !hasLog(r) {
			continue
		}
		row := []string{r.Target}
		why := map[string][]string{}
		var whyOrder []string
		for _, m := range logMetrics {
			iv, ok := r.Values[m.metric]
			switch {
			case ok && !math.IsNaN(iv.Center):
				meta, _ := res.MetricByName(m.metric)
				x := iv.Center * meta.Scale
				cell := fmt.Sprintf(m.format, x)
				if m.format == "count" {
					cell = count(int64(math.Round(x)))
				}
				if m.metric == "cksum_bytes_per_fsync" && r.XFS != nil {
					cell = "≈" + cell // estimated from its blocks
				}
				row = append(row, cell)
			case r.Unmeasured[m.metric] != "":
				row = append(row, NotMeasured)
				reason := r.Unmeasured[m.metric]
				if _, seen := why[reason]; !seen {
					whyOrder = append(whyOrder, reason)
				}
				meta, _ := res.MetricByName(m.metric)
				why[reason] = append(why[reason], meta.Label)
			default:
				row = append(row, "–")
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
		for _, reason := range whyOrder {
			notes = append(notes, fmt.Sprintf("%s: %s: %s (%s)", r.Target, strings.Join(why[reason], ", "), NotMeasured, reason))
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, n := range notes {
		wrap(w, n, "  ")
	}
	wrap(w, "writes: log records (iclogs) written over the workload; pay/w: the 512-byte blocks per write less a record's "+
		"header blocks (one per 32 KiB of the log buffer); blk/f: all the log's blocks (headers, payload, padding) per fsync; "+
		"meta/w, meta/f: the same less the file bytes logged with their writes (--journal data, the log route, immediate writes), "+
		"as the kernel's XFS logs metadata alone; per fsync: "+
		"per fsync"+fsyncCounts(res)+"; ck: the log checksum: the bytes it covered and its CPU per fsync, "+
		"and its share of the whole machine's busy CPU (xlogfs: its counters ÷ /proc/stat; xfs: perf's samples in xlog_cksum "+
		"÷ its non-idle samples, perf's own excluded).", "")
	if _, ok := res.Target(XFSTarget); ok && res.Config.Journal == "data" {
		wrap(w, "journal data: xlogfs logs the files' data too, the kernel's XFS its metadata alone (--journal meta compares "+
			"like with like).", "")
	}
	for _, r := range res.Rows {
		if r.XFS != nil {
			printXFSNotes(w, res, r)
		}
	}
}

// fsyncCounts says who counted the fsyncs.
func fsyncCounts(res *Results) string {
	var by []string
	for _, r := range res.Rows {
		if r.FsyncCounts != "" && r.FsyncCounts != "filesystem" {
			by = append(by, r.Target+": "+r.FsyncCounts)
		}
	}
	s := " the filesystem served (xlogfs: its .stats; XFS: its fsync tracepoints, counted by perf"
	if len(by) > 0 {
		s += "; counted by the workload for " + strings.Join(by, ", ")
	}
	return s + ")"
}

// printXFSNotes says how the kernel XFS baseline ran and what else its
// counters say.
func printXFSNotes(w io.Writer, res *Results, r Row) {
	x := r.XFS
	fmt.Fprintln(w)
	var mkfs []string
	for i := 0; i+1 < len(x.MkfsArgs); i++ {
		if x.MkfsArgs[i] == "-l" {
			mkfs = append(mkfs, "-l", x.MkfsArgs[i+1])
		}
	}
	on := "on a loop device"
	if x.DelayTable != "" {
		on = fmt.Sprintf("on dm-delay (table %q: its flushes delayed) over a loop device", x.DelayTable)
	}
	wrap(w, fmt.Sprintf("%s: the kernel's XFS (mkfs.xfs %s, mount -o %s: %d header blocks per write) %s "+
		"over an image in %s, direct I/O %s: %s.", r.Target, strings.Join(mkfs, " "), x.MountOptions, x.HeaderBlocks, on,
		filepath.Dir(filepath.Dir(x.Image)), x.LoopDirectIO, x.LoopWhy), "  ")
	others := "no other XFS is mounted"
	if len(x.OtherMounts) > 0 {
		others = "other XFS mounted, whose work counts too: " + strings.Join(x.OtherMounts, ", ")
	}
	wrap(w, fmt.Sprintf("  /proc/fs/xfs/stat counts every XFS on the machine (%s). Its ck B/fsync is estimated from its "+
		"blocks: 328 B of record header and the payload per write, and 260 B per extension header of the mean record.", others), "  ")
	c := x.Counters
	wrap(w, fmt.Sprintf("  Median per round: log forces %.0f (slept %.0f), no free iclog %.0f, transactions sync/async/empty "+
		"%.0f/%.0f/%.0f, AIL pushes %.0f (log space tries %.0f, sleeps %.0f, pinned %.0f), xstrat quick/split %.0f/%.0f.",
		c["log_force"], c["log_force_sleep"], c["log_noiclogs"], c["trans_sync"], c["trans_async"], c["trans_empty"],
		c["push_ail"], c["push_ail_try_logspace"], c["push_ail_sleep_logspace"], c["push_ail_pinned"], c["xstrat_quick"], c["xstrat_split"]), "  ")
	if x.PerfRounds > 0 {
		wrap(w, fmt.Sprintf("  perf: cpu-clock at %d Hz on every CPU, %s: %s samples, %s busy, %s in xlog_cksum (%s of them in crc32c).",
			x.PerfRateHz, plural(x.PerfRounds, "round"), count(x.PerfSamples), count(x.PerfBusy), count(x.PerfCksum), count(x.PerfCksumCRC)), "  ")
	}
}

// lineWidth is the widest a line of the report's prose may be.
const lineWidth = 118

// wrap writes text in lines of at most lineWidth, the lines after the
// first indented.
func wrap(w io.Writer, text, indent string) {
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > lineWidth {
			fmt.Fprintln(w, line)
			line = indent + word
			continue
		}
		if line == "" {
			line = strings.Repeat(" ", len(text)-len(strings.TrimLeft(text, " "))) + word
		} else {
			line += " " + word
		}
	}
	if line != "" {
		fmt.Fprintln(w, line)
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func fsyncSource(res *Results) string {
	for _, r := range res.Runs {
		switch r.FsyncSource {
		case "client":
			return "measured by the clients around fsync(2)"
		case "filesystem":
			return "measured inside the filesystem (its .stats histogram, 12.5 % buckets)"
		}
	}
	return ""
}

// ratioText is "1.51 [1.44, 1.58]*" (* when significant).
func ratioText(iv benchstat.Interval) string {
	if !iv.Finite() {
		// No interval: the report's TooFewRoundsNote says so once.
		return trimFloat(iv.Center)
	}
	s := fmt.Sprintf("%s [%s, %s]", trimFloat(iv.Center), trimFloat(iv.Lo), trimFloat(iv.Hi))
	if iv.Excludes(1) {
		s += "*"
	}
	return s
}

func count(n int64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// PrintComparisons writes every target against the reference, per metric.
func PrintComparisons(w io.Writer, res *Results, wide bool) {
	wrap(w, fmt.Sprintf("each target ÷ %s, same round (median ratio, 95 %% CI; * significant: the interval excludes 1)", res.Config.Reference), "  ")
	fmt.Fprintln(w)
	printRatioTable(w, res, res.Comparisons, func(c Comparison) (string, string) { return c.Target, c.Reference }, wide)
}

func printRatioTable(w io.Writer, res *Results, cs []Comparison, rowCol func(Comparison) (string, string), wide bool) {
	var metrics, rows []string
	cell := map[[2]string]string{}
	for _, c := range cs {
		if !slices.Contains(metrics, c.Metric) {
			metrics = append(metrics, c.Metric)
		}
		r, ref := rowCol(c)
		key := r + " vs " + ref
		if !slices.Contains(rows, key) {
			rows = append(rows, key)
		}
		cell[[2]string{key, c.Metric}] = ratioText(c.Interval())
	}
	// The answer's metrics first: the columns that fit are those.
	slices.SortStableFunc(metrics, func(a, b string) int { return cmp.Compare(metricRank(a), metricRank(b)) })
	tw := newTable(w, wide, 1)
	head := []string{""}
	for _, m := range metrics {
		meta, _ := res.MetricByName(m)
		head = append(head, meta.Label)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range rows {
		line := []string{r}
		for _, m := range metrics {
			if v, ok := cell[[2]string{r, m}]; ok {
				line = append(line, v)
			} else {
				line = append(line, "–")
			}
		}
		fmt.Fprintln(tw, strings.Join(line, "\t")+"\t")
	}
	tw.Flush()
}

// firstMetrics go first in a table of ratios: the others follow in the
// order they came.
var firstMetrics = []string{"cksum_cpu", "throughput", "fsync_p99"}

func metricRank(m string) int {
	if i := slices.Index(firstMetrics, m); i >= 0 {
		return i
	}
	return len(firstMetrics)
}

// PrintAttribution writes the effect of batching at each kernel and of the
// kernel at each mode, and the decomposition.
func PrintAttribution(w io.Writer, res *Results, wide bool) {
	wrap(w, "attribution: the effect of one factor with the other held (ratio after ÷ before, same round, 95 % CI)", "  ")
	fmt.Fprintln(w)
	var cs []Comparison
	label := map[string]string{}
	for _, a := range res.Attribution {
		var key string
		if a.Factor == "batching" {
			key = fmt.Sprintf("batching at %s: %s → batched", a.At, modeOf(res, a.From))
		} else {
			key = fmt.Sprintf("kernel at %s: %s → %s", a.At, implOf(res, a.From), implOf(res, a.To))
		}
		label[a.From+"|"+a.To] = key
		cs = append(cs, Comparison{Metric: a.Metric, Target: a.From, Reference: a.To, RatioCI: a.RatioCI})
	}
	tw := newTable(w, wide, 1)
	var metrics, rows []string
	cell := map[[2]string]string{}
	for _, c := range cs {
		if !slices.Contains(metrics, c.Metric) {
			metrics = append(metrics, c.Metric)
		}
		key := label[c.Target+"|"+c.Reference]
		if !slices.Contains(rows, key) {
			rows = append(rows, key)
		}
		cell[[2]string{key, c.Metric}] = ratioText(c.Interval())
	}
	head := []string{""}
	for _, m := range metrics {
		meta, _ := res.MetricByName(m)
		head = append(head, meta.Label)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range rows {
		line := []string{r}
		for _, m := range metrics {
			v, ok := cell[[2]string{r, m}]
			if !ok {
				v = "–"
			}
			line = append(line, v)
		}
		fmt.Fprintln(tw, strings.Join(line, "\t")+"\t")
	}
	tw.Flush()
	if len(res.Decomposition) > 0 {
		fmt.Fprintln(w)
		wrap(w, "share of the change in checksum CPU due to each factor (log scale, averaged over both orders; median and 95 % CI over rounds)", "  ")
		fmt.Fprintln(w)
		tw = newTable(w, wide, 1)
		fmt.Fprintln(tw, "from → to\ttotal ratio\tbatching\tkernel\t")
		for _, d := range res.Decomposition {
			fmt.Fprintf(tw, "%s → %s\t%s\t%s\t%s\t\n", d.From, d.To, ratioText(d.Total), describeShare(d.Batching), describeShare(d.Kernel))
		}
		tw.Flush()
	}
}

func modeOf(res *Results, target string) string {
	if t, ok := res.Target(target); ok {
		return t.Mode
	}
	return target
}

func implOf(res *Results, target string) string {
	if t, ok := res.Target(target); ok {
		return t.Impl
	}
	return target
}

// PrintVerdict writes the verdict, one finding a line.
func PrintVerdict(w io.Writer, res *Results) {
	fmt.Fprintln(w, "verdict:")
	for _, v := range res.Verdict {
		wrap(w, "  "+v, "    ")
	}
}

// WriteBenchfmt writes every run in Go's benchmark format, one line per
// target and round, so that benchstat can compare two runs or two machines
// (e.g. "benchstat -col /mode bench.txt", or "benchstat old/bench.txt
// new/bench.txt"). Target names become sub-benchmark keys: mode=, impl=
// (the name asked for, so best matches best on another CPU) and kernel=.
func WriteBenchfmt(w io.Writer, res *Results) {
	c := res.Config
	fmt.Fprintf(w, "goos: linux\ncpu: %s\npkg: github.com/xlogfs/xlogfs/bench\n", res.Machine.CPU)
	fmt.Fprintf(w, "workload: %s\njournal: %s\ndevice: %s\nflush-latency: %v\nclients: %d\nrun-time: %v\nseed: %d\n",
		c.Workload, c.Journal, c.Device, c.FlushLatency, c.Clients, c.Duration, c.Seed)
	units := []struct{ metric, unit string }{
		{"throughput", "MB/s"}, {"cksum_cpu", "cksum-cpu-%"}, {"fsync_p50", "fsync-p50-µs"}, {"fsync_p99", "fsync-p99-µs"},
		{"cksum_ns_per_kib", "cksum-ns/KiB"}, {"cksum_rec_p50_ns", "cksum-rec-p50-ns"}, {"cksum_rec_p99_ns", "cksum-rec-p99-ns"},
		{"force_cksum_share", "cksum-force-%"}, {"cksum_cpu_profile", "cksum-cpu-profile-%"}, {"p95_ms", "p95-ms"},
		{"cksum_force_ns", "cksum-force-ns"}, {"pwrite_us", "pwrite-µs"}, {"copy_cksum_cpu", "copy-cksum-cpu-%"},
		{"log_payload_blocks_per_write", "payload-blocks/log-write"}, {"log_blocks_per_fsync", "log-blocks/fsync"},
		{"log_meta_payload_blocks_per_write", "meta-payload-blocks/log-write"}, {"log_meta_blocks_per_fsync", "meta-log-blocks/fsync"},
		{"cksum_bytes_per_fsync", "cksum-B/fsync"}, {"cksum_cpu_per_fsync", "cksum-ns/fsync"},
		{"cksum_busy_share", "cksum-busy-cpu-%"},
	}
	if c.Workload == "mariadb" {
		units[0].unit = "TPS"
	}
	runs := slices.Clone(res.Runs)
	slices.SortStableFunc(runs, func(a, b Run) int { return a.Round - b.Round })
	for _, r := range runs {
		t, _ := res.Target(r.Target)
		name := "BenchmarkXlogfs/target=" + t.Kind
		if t.Kind == "xlogfs" {
			name = fmt.Sprintf("BenchmarkXlogfs/mode=%s/impl=%s/kernel=%s", t.Mode, t.ImplSpec, t.Impl)
		}
		line := fmt.Sprintf("%s\t%d", name, max(r.Ops, 1))
		for _, u := range units {
			v, ok := r.Values[u.metric]
			if !ok || math.IsNaN(v) {
				continue
			}
			meta, _ := res.MetricByName(u.metric)
			line += fmt.Sprintf("\t%.6g %s", v*meta.Scale, u.unit)
		}
		fmt.Fprintln(w, line)
	}
}

// Compare writes two saved runs side by side: each target's medians in
// both, the ratio b ÷ a with the U test's p-value (the runs are not paired
// rounds, so no interval), and the two runs' comparisons with their own
// references. Targets are matched by name, else by mode and the
// implementation asked for (so batched/best on one CPU meets batched/best on
// another whatever its kernel is called).
func Compare(w io.Writer, a, b *Results, nameA, nameB string) {
	fmt.Fprintf(w, "A: %s\n   ", nameA)
	PrintHeader(w, a)
	fmt.Fprintf(w, "B: %s\n   ", nameB)
	PrintHeader(w, b)
	fmt.Fprintln(w)
	metrics := []string{"throughput", "cksum_cpu", "copy_cksum_cpu", "cksum_force_ns", "fsync_p99", "cksum_ns_per_kib"}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tmetric\tA median\tB median\tB ÷ A\tp (U test)\t")
	for _, ta := range a.Targets {
		tb, ok := match(b, ta)
		if !ok {
			continue
		}
		for _, m := range metrics {
			if !a.has(ta.Name, m) || !b.has(tb.Name, m) {
				continue
			}
			meta, _ := a.MetricByName(m)
			xa, xb := a.series(ta.Name, m), b.series(tb.Name, m)
			ratio, p := benchstat.Unpaired(xa, xb)
			sig := ""
			if p < benchstat.Alpha {
				sig = "*"
			}
			name := ta.Name
			if tb.Name != ta.Name {
				name += " ~ " + tb.Name
			}
			fmt.Fprintf(tw, "%s\t%s\t%.4g\t%.4g\t%s%s\t%.3f\t\n", name, meta.Label,
				benchstat.Median(xa).Center*meta.Scale, benchstat.Median(xb).Center*meta.Scale, trimFloat(ratio), sig, p)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\n* p < %.2f: the two runs differ (Mann-Whitney U test over their rounds).\n", benchstat.Alpha)

	fmt.Fprintln(w, "\neach run's own comparisons with its reference (median ratio, 95 % CI):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "comparison\tmetric\tA\tB\t")
	for _, ca := range a.Comparisons {
		if ca.Metric != "cksum_cpu" && ca.Metric != "throughput" && ca.Metric != "fsync_p99" {
			continue
		}
		ta, _ := a.Target(ca.Target)
		ra, _ := a.Target(ca.Reference)
		tb, ok1 := match(b, ta)
		rb, ok2 := match(b, ra)
		bText := "–"
		if ok1 && ok2 {
			for _, cb := range b.Comparisons {
				if cb.Metric == ca.Metric && cb.Target == tb.Name && cb.Reference == rb.Name {
					bText = ratioText(cb.Interval())
				}
			}
		}
		meta, _ := a.MetricByName(ca.Metric)
		fmt.Fprintf(tw, "%s vs %s\t%s\t%s\t%s\t\n", ca.Target, ca.Reference, meta.Label, ratioText(ca.Interval()), bText)
	}
	tw.Flush()
}

func match(res *Results, t Target) (Target, bool) {
	if u, ok := res.Target(t.Name); ok {
		return u, true
	}
	for _, u := range res.Targets {
		if u.Kind == t.Kind && u.Mode == t.Mode && u.ImplSpec != "" && u.ImplSpec == t.ImplSpec {
			return u, true
		}
	}
	return Target{}, false
}

// recordKiB is a record's size in KiB as header blocks + payload, or the
// checksummed bytes per record for a run from before .stats split them.
func recordKiB(r Row) string {
	if r.RecordHeaderBytes > 0 {
		return fmt.Sprintf("%.1f+%.1f", r.RecordHeaderBytes/1024, r.RecordPayloadBytes/1024)
	}
	return fmt.Sprintf("%.1f", r.MeanRecordBytes/1024)
}
