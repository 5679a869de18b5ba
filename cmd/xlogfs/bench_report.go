package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"
)

// progress draws a one-line progress bar on stderr while a run goes.
type progress struct {
	label string
	total time.Duration
	start time.Time
	tty   bool
	on    bool
}

func newProgress(label string, total time.Duration, on bool) *progress {
	_, err := unix.IoctlGetTermios(int(os.Stderr.Fd()), unix.TCGETS)
	p := &progress{label: label, total: total, start: time.Now(), tty: err == nil, on: on}
	if on && !p.tty {
		fmt.Fprintf(os.Stderr, "%s ...\n", label)
	}
	return p
}

// run redraws the bar twice a second until stop closes; status adds a
// live figure (current throughput).
func (p *progress) run(stop <-chan struct{}, status func() string) {
	if !p.on || !p.tty {
		<-stop
		return
	}
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		el := time.Since(p.start)
		frac := min(1, el.Seconds()/p.total.Seconds())
		const width = 30
		n := int(frac * width)
		fmt.Fprintf(os.Stderr, "\r\033[K%s ▕%s%s▏ %3.0fs/%.0fs %s", p.label, strings.Repeat("█", n), strings.Repeat("░", width-n),
			el.Seconds(), p.total.Seconds(), status())
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

func (p *progress) done() {
	if p.on && p.tty {
		fmt.Fprint(os.Stderr, "\r\033[K")
	}
}

// stat is a metric over rounds: median with min and max.
type stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func statOf(xs []float64) stat {
	if len(xs) == 0 {
		return stat{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stat{Median: med, Min: s[0], Max: s[len(s)-1]}
}

// benchSumRow is one target's row of the table.
type benchSumRow struct {
	Target         string          `json:"target"`
	Rounds         int             `json:"rounds"`
	MBps           stat            `json:"mb_per_s"`
	FsyncP50us     stat            `json:"fsync_p50_us"`
	FsyncP99us     stat            `json:"fsync_p99_us"`
	LogForces      stat            `json:"log_forces"`
	Records        stat            `json:"records"`
	MeanRecord     stat            `json:"mean_record_bytes"`
	CallsPerRecord stat            `json:"crc_calls_per_record"`
	BytesSummed    stat            `json:"bytes_checksummed"`
	FsyncsPerForce stat            `json:"fsyncs_per_force"`
	SealNsPerForce stat            `json:"cksum_seal_ns_per_force"` // checksum time on the log-force path, per force
	CksumSeconds   stat            `json:"cksum_cpu_seconds"`       // checksum time in all, at seal and at copy
	ShareProfile   stat            `json:"checksum_share_profile"`
	ShareCounters  stat            `json:"checksum_share_counters"`
	Extra          map[string]stat `json:"extra,omitempty"`
	FsyncSource    string          `json:"fsync_latency_source,omitempty"`
	IsXlogfs       bool            `json:"xlogfs"`
	// VsNative is the headline figure ÷ the native baseline's in the same
	// round (rounds alternate targets, so a pair shares the machine's drift).
	VsNative *stat `json:"vs_native,omitempty"`
}

// headline is a run's main figure: sysbench's transactions per second for
// the mariadb workload, MB/s for the others.
func headline(r runResult) float64 {
	if tps, ok := r.Extra["tps"]; ok {
		return tps
	}
	return r.MBps
}

// headlineStat is headline over a row's rounds.
func headlineStat(r benchSumRow) stat {
	if tps, ok := r.Extra["tps"]; ok {
		return tps
	}
	return r.MBps
}

func summarize(runs []runResult, targets []target) []benchSumRow {
	var rows []benchSumRow
	nativeByRound := map[int]float64{}
	for _, r := range runs {
		if r.Target == "native" {
			nativeByRound[r.Round] = headline(r)
		}
	}
	for _, t := range targets {
		var rs []runResult
		for _, r := range runs {
			if r.Target == t.name {
				rs = append(rs, r)
			}
		}
		if len(rs) == 0 {
			continue
		}
		col := func(f func(r runResult) float64) stat {
			var xs []float64
			for _, r := range rs {
				xs = append(xs, f(r))
			}
			return statOf(xs)
		}
		row := benchSumRow{Target: t.name, Rounds: len(rs), IsXlogfs: t.kind == "xlogfs", FsyncSource: rs[0].FsyncSource,
			MBps:          col(func(r runResult) float64 { return r.MBps }),
			FsyncP50us:    col(func(r runResult) float64 { return r.FsyncP50us }),
			FsyncP99us:    col(func(r runResult) float64 { return r.FsyncP99us }),
			ShareProfile:  col(func(r runResult) float64 { return r.ShareProfile }),
			ShareCounters: col(func(r runResult) float64 { return r.ShareCounters }),
		}
		if row.IsXlogfs {
			row.LogForces = col(func(r runResult) float64 { return r.Stats["log_forces"] })
			row.Records = col(func(r runResult) float64 { return r.Stats["log_records"] })
			row.MeanRecord = col(func(r runResult) float64 { return r.Stats["log_bytes"] / max(1, r.Stats["log_records"]) })
			row.CallsPerRecord = col(func(r runResult) float64 { return r.Stats["cksum_calls"] / max(1, r.Stats["cksum_records"]) })
			row.BytesSummed = col(func(r runResult) float64 { return r.Stats["cksum_bytes"] })
			row.FsyncsPerForce = col(func(r runResult) float64 { return r.Stats["fsyncs_per_force"] })
			row.SealNsPerForce = col(func(r runResult) float64 { return r.Stats["cksum_seal_ns_per_force"] })
			row.CksumSeconds = col(func(r runResult) float64 { return r.Stats["cksum_ns"] / 1e9 })
		}
		for k := range rs[0].Extra {
			if row.Extra == nil {
				row.Extra = map[string]stat{}
			}
			row.Extra[k] = col(func(r runResult) float64 { return r.Extra[k] })
		}
		if t.kind != "native" {
			var ratios []float64
			for _, r := range rs {
				if n := nativeByRound[r.Round]; n > 0 {
					ratios = append(ratios, headline(r)/n)
				}
			}
			if len(ratios) > 0 {
				vs := statOf(ratios)
				row.VsNative = &vs
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// fmtStat prints median with the range when rounds differ.
func fmtStat(s stat, rounds int, format string) string {
	m := fmt.Sprintf(format, s.Median)
	if rounds < 2 {
		return m
	}
	return fmt.Sprintf("%s ("+format+"–"+format+")", m, s.Min, s.Max)
}

func humanCount(x float64) string {
	switch {
	case x >= 1e9:
		return fmt.Sprintf("%.2fG", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e4:
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

func printBenchTable(w io.Writer, res *benchResults) {
	c := res.Config
	fmt.Fprintf(w, "xlogfs bench: workload %s, journal %s, %d clients, %v per run, %d rounds (median, min–max)\n",
		c.Workload, c.Journal, c.Clients, c.Duration, c.Rounds)
	fmt.Fprintf(w, "machine: %s, %d CPUs, %s, crc32c %s\n\n", res.Machine.CPU, res.Machine.CPUs, res.Machine.Kernel, res.Machine.CksumImpl)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	mariadb := c.Workload == "mariadb"
	vsNative := slices.ContainsFunc(res.Summary, func(r benchSumRow) bool { return r.VsNative != nil })
	head, headFormat := []string{"target", "MB/s"}, "%.1f"
	if mariadb {
		head, headFormat = []string{"target", "TPS"}, "%.0f"
	}
	if vsNative {
		head = append(head, "× native")
	}
	if mariadb {
		head = append(head, "p95 ms")
	}
	head = append(head, "fsync p50 µs", "fsync p99 µs", "log forces", "records", "mean record", "crc calls/rec", "bytes summed", "fsyncs/force", "cksum ns/force", "cksum CPU s", "cksum % CPU (profile)", "cksum % CPU (counters)")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range res.Summary {
		n := r.Rounds
		row := []string{r.Target, fmtStat(headlineStat(r), n, headFormat)}
		if vsNative {
			if r.VsNative != nil {
				row = append(row, fmtStat(*r.VsNative, n, "%.2f"))
			} else {
				row = append(row, "–")
			}
		}
		if mariadb {
			row = append(row, fmtStat(r.Extra["p95_ms"], n, "%.2f"))
		}
		if r.FsyncP50us.Median > 0 {
			row = append(row, fmtStat(r.FsyncP50us, n, "%.0f"), fmtStat(r.FsyncP99us, n, "%.0f"))
		} else {
			row = append(row, "–", "–")
		}
		if r.IsXlogfs {
			row = append(row, humanCount(r.LogForces.Median), humanCount(r.Records.Median),
				humanCount(r.MeanRecord.Median)+"B", fmt.Sprintf("%.1f", r.CallsPerRecord.Median),
				humanCount(r.BytesSummed.Median)+"B", fmt.Sprintf("%.2f", r.FsyncsPerForce.Median),
				fmtStat(r.SealNsPerForce, n, "%.0f"), fmtStat(r.CksumSeconds, n, "%.3f"),
				fmtStat(scale(r.ShareProfile, 100), n, "%.3f"), fmtStat(scale(r.ShareCounters, 100), n, "%.3f"))
		} else {
			row = append(row, "–", "–", "–", "–", "–", "–", "–", "–", fmtStat(scale(r.ShareProfile, 100), n, "%.3f"), "–")
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	if mariadb {
		fmt.Fprintf(w, "\nTPS and p95 ms: sysbench oltp_write_only, %d tables × %d rows, %d threads\n", c.Tables, c.TableSize, c.Clients)
	}
	if vsNative {
		fmt.Fprintln(w, "× native: the target's throughput ÷ native's in the same round")
	}
	if len(res.Summary) > 0 {
		src := res.Summary[0].FsyncSource
		if src == "filesystem" {
			fmt.Fprintln(w, "\nfsync latency: measured inside the filesystem (its .stats histogram, 12.5 % buckets)")
		} else if src == "client" {
			fmt.Fprintln(w, "\nfsync latency: measured by the clients around fsync(2)")
		}
	}
	for _, wn := range res.Warnings {
		fmt.Fprintf(w, "warning: %s\n", wn)
	}
}

func scale(s stat, k float64) stat { return stat{s.Median * k, s.Min * k, s.Max * k} }

// benchSVG draws two bar charts: throughput per target, and the checksum's
// share of the filesystem's CPU per target (profile and counters), each
// bar with a min–max whisker.
func benchSVG(res *benchResults) []byte {
	rows := res.Summary
	const rowH, left, barW, gap = 26, 150, 420, 50
	h1 := 40 + rowH*len(rows)
	nx := 0
	for _, r := range rows {
		if r.IsXlogfs {
			nx++
		}
	}
	h2 := 40 + rowH*2*nx
	height := h1 + gap + h2 + 30
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", left+barW+200, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	title := fmt.Sprintf("xlogfs bench — %s, journal %s, %d clients, %d rounds", res.Config.Workload, res.Config.Journal, res.Config.Clients, res.Config.Rounds)
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="14" font-weight="bold">%s</text>`+"\n", xmlEscape(title))

	panel := func(y0 int, heading string, items []svgBar, unit string) {
		fmt.Fprintf(&b, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", y0+14, xmlEscape(heading))
		hi := 0.0
		for _, it := range items {
			hi = max(hi, it.s.Max, it.s.Median)
		}
		if hi == 0 {
			hi = 1
		}
		for i, it := range items {
			y := y0 + 24 + i*rowH
			wm := it.s.Median / hi * barW
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-8, y+14, xmlEscape(it.label))
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="18" fill="%s"/>`+"\n", left, y+2, wm, it.color)
			x1, x2 := left+int(it.s.Min/hi*barW), left+int(it.s.Max/hi*barW)
			fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", x1, y+11, x2, y+11)
			fmt.Fprintf(&b, `<text x="%.0f" y="%d">%s</text>`+"\n", float64(left)+max(wm, float64(x2-left))+6, y+15, xmlEscape(fmt.Sprintf(unit, it.s.Median)+it.note))
		}
	}
	var tput, share []svgBar
	colors := map[bool]string{true: "#4878a8", false: "#a0a0a0"}
	tputHeading, tputUnit := "throughput, MB/s (median; line: min–max)", "%.1f MB/s"
	if res.Config.Workload == "mariadb" {
		tputHeading, tputUnit = "sysbench oltp_write_only, transactions/s (median; line: min–max)", "%.0f TPS"
	}
	for _, r := range rows {
		bar := svgBar{r.Target, headlineStat(r), colors[r.IsXlogfs], ""}
		if r.VsNative != nil {
			bar.note = fmt.Sprintf(" (%.2f× native)", r.VsNative.Median)
		}
		tput = append(tput, bar)
		if r.IsXlogfs { // baselines have no checksum to share out
			share = append(share, svgBar{r.Target + " profile", scale(r.ShareProfile, 100), "#d0703c", ""},
				svgBar{r.Target + " counters", scale(r.ShareCounters, 100), "#e8b070", ""})
		}
	}
	panel(30, tputHeading, tput, tputUnit)
	panel(30+h1+gap-30, "checksum share of the filesystem's CPU, %", share, "%.3f %%")
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

type svgBar struct {
	label string
	s     stat
	color string
	note  string // after the value, e.g. the ratio to native
}

func xmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	return r.Replace(s)
}
