package benchreport

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchstat"
)

// modeAgainst names what batching is compared with, by mode.
var modeAgainst = map[string]string{
	"sector": "one call per sector",
	"xfs":    "XFS's per-region calls",
}

// answerMetric is the checksum cost the answer compares: its CPU time per
// fsync served, where both targets have it (the work a unit of the
// workload costs, whatever the throughput), else its share of the
// daemon's CPU.
func (res *Results) answerMetric(a, b string) (metric, what string) {
	if res.has(a, "cksum_cpu_per_fsync") && res.has(b, "cksum_cpu_per_fsync") {
		return "cksum_cpu_per_fsync", "the checksum's CPU per fsync"
	}
	return "cksum_cpu", "the checksum's share of the daemon's CPU"
}

// saving says what going from → to does to a cost, as a verb phrase:
// "saves 42 % (35–48 %)", "saves nothing measurable (−3–+5 %)", "costs
// 12 % (5–20 %) more", or the figure alone without an interval (the
// report's TooFewRoundsNote says once why).
func saving(iv benchstat.Interval) string {
	pct := func(r float64) string { return fmt.Sprintf("%.0f", 100*math.Abs(1-r)) }
	if !iv.Finite() {
		if iv.Center <= 1 {
			return "saves " + pct(iv.Center) + " %"
		}
		return "costs " + pct(iv.Center) + " % more"
	}
	switch {
	case !iv.Excludes(1):
		return "saves nothing measurable"
	case iv.Center < 1:
		return fmt.Sprintf("saves %s %% (%s–%s %%)", pct(iv.Center), pct(iv.Hi), pct(iv.Lo))
	default:
		return fmt.Sprintf("costs %s %% (%s–%s %%) more", pct(iv.Center), pct(iv.Lo), pct(iv.Hi))
	}
}

// percent is a share as "2.1 %" with its interval where there is one.
func percent(iv benchstat.Interval) string {
	f := func(x float64) string {
		x *= 100
		switch {
		case x >= 10:
			return fmt.Sprintf("%.0f", x)
		case x >= 1:
			return fmt.Sprintf("%.1f", x)
		}
		return fmt.Sprintf("%.2f", x)
	}
	if iv.Finite() {
		return fmt.Sprintf("%s %% (%s–%s %%)", f(iv.Center), f(iv.Lo), f(iv.Hi))
	}
	return f(iv.Center) + " %"
}

// implDesc names an implementation for people: "generic (pure Go
// slicing-by-8)".
func implDesc(name string) string {
	if im, err := cksum.Lookup(name); err == nil && im.Desc != "" {
		// Its gist: up to the first colon or bracket.
		desc := im.Desc
		if i := strings.IndexAny(desc, ":("); i > 0 {
			desc = desc[:i]
		}
		return fmt.Sprintf("%s (%s)", name, strings.TrimSpace(desc))
	}
	return name
}

// Saving is what one factor saves of the checksum's cost with the other
// held: batching, at the fastest kernel, against another mode; or the
// fastest kernel, in batched mode (else the reference's), against another
// implementation.
type Saving struct {
	Factor   string // "batching" or "kernel"
	From, To string // the targets before and after
	Against  string // for people: "one call per sector", "generic (pure Go slicing-by-8)"
	Short    string // the mode or implementation saved against: "sector", "generic"
	At       string // the level the other factor is held at: the kernel, or the mode
	Metric   string // cksum_cpu_per_fsync, else cksum_cpu (answerMetric)
	What     string // the metric for people
	// Ratio is To ÷ From, the median of the rounds' ratios with its
	// interval: the saving is 1 − Ratio.
	Ratio benchstat.Interval
}

// Savings are the answer's comparisons: batching's, then the kernel's.
func Savings(res *Results) []Saving {
	var out []Saving
	modes, impls, cell := res.factorial()
	best := res.bestImpl(impls)
	add := func(factor, from, to, against, short, at string) {
		if !res.has(from, "cksum_cpu") || !res.has(to, "cksum_cpu") {
			return
		}
		m, what := res.answerMetric(from, to)
		iv := benchstat.PairedRatio(res.series(to, m), res.series(from, m))
		if iv.N == 0 {
			return
		}
		out = append(out, Saving{Factor: factor, From: from, To: to, Against: against, Short: short, At: at, Metric: m, What: what, Ratio: iv})
	}
	if to, ok := cell(BatchedMode, best); ok {
		for _, mode := range modes {
			from, ok := cell(mode, best)
			if against, known := modeAgainst[mode]; ok && known {
				add("batching", from, to, against, mode, best)
			}
		}
	}
	mode := BatchedMode
	if !slices.Contains(modes, mode) {
		if t, ok := res.Target(res.Config.Reference); ok && t.Kind == "xlogfs" {
			mode = t.Mode
		}
	}
	if to, ok := cell(mode, best); ok {
		for _, im := range impls {
			if from, ok := cell(mode, im); ok && im != best {
				add("kernel", from, to, implDesc(im), im, mode)
			}
		}
	}
	return out
}

// Answer is the bench's answer in two to five plain sentences, computed
// from the runs (Analyze first): what batching saves against the other
// modes at the fastest kernel, what the fastest kernel saves against the
// others in batched mode (Savings), the checksum's share of the daemon's
// CPU, and with the kernel XFS baseline how the reference compares with
// it. A figure with no interval (too few rounds) stands alone;
// TooFewRoundsNote says why, once.
func Answer(res *Results) []string {
	var out []string
	where := "On this machine"
	if res.Machine.CPU != "" {
		where = "On this machine (" + res.Machine.CPU + ")"
	}
	sentence := func(factor string, lead func(s Saving) string) {
		var parts []string
		prev := ""
		for _, s := range Savings(res) {
			if s.Factor != factor {
				continue
			}
			phrase := saving(s.Ratio)
			if len(parts) == 0 {
				parts = append(parts, fmt.Sprintf("%s %s of %s against %s", lead(s), phrase, s.What, s.Against))
			} else if strings.HasPrefix(prev, "saves ") && strings.HasPrefix(phrase, "saves ") {
				// "saves 9 % ..., and nothing measurable against ...".
				parts = append(parts, fmt.Sprintf("%s against %s", strings.TrimPrefix(phrase, "saves "), s.Against))
			} else {
				parts = append(parts, fmt.Sprintf("%s against %s", phrase, s.Against))
			}
			prev = phrase
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("%s, %s.", where, strings.Join(parts, ", and ")))
			where = "In the same rounds"
		}
	}
	sentence("batching", func(s Saving) string { return fmt.Sprintf("with the %s kernel, batching", s.At) })
	sentence("kernel", func(s Saving) string { return fmt.Sprintf("in %s mode, the %s kernel", s.At, res.targetImpl(s.To)) })
	// The checksum's share of the daemon's CPU, at the reference.
	ref := res.Config.Reference
	if r, ok := res.rowOf(ref); ok {
		if iv, ok := r.Values["cksum_cpu"]; ok && !math.IsNaN(iv.Center) {
			s := fmt.Sprintf("The checksum is %s of the daemon's CPU with %s.", percent(iv), ref)
			if len(out) == 0 {
				s = fmt.Sprintf("%s, the checksum is %s of the daemon's CPU with %s.", where, percent(iv), ref)
			}
			out = append(out, s)
		}
	}
	if s := res.answerXFS(); s != "" {
		out = append(out, s)
	}
	if res.Partial {
		out = append(out, fmt.Sprintf("This run is partial (%s): the figures are from the %s completed.",
			res.PartialWhy, plural(len(res.Runs), "run")))
	}
	return out
}

// targetImpl is a target's implementation's name.
func (res *Results) targetImpl(name string) string {
	if t, ok := res.Target(name); ok {
		return t.Impl
	}
	return name
}

// rowOf finds a target's row.
func (res *Results) rowOf(target string) (Row, bool) {
	for _, r := range res.Rows {
		if r.Target == target {
			return r, true
		}
	}
	return Row{}, false
}

// answerXFS compares the reference with the kernel's XFS in a sentence:
// the checksum's CPU per fsync and its share of the machine's busy CPU
// (the kernel's from perf), and the log blocks written per fsync. Empty
// without the baseline.
func (res *Results) answerXFS() string {
	x, ok := res.rowOf(XFSTarget)
	ref := res.Config.Reference
	r, ok2 := res.rowOf(ref)
	if !ok || !ok2 || ref == XFSTarget {
		return ""
	}
	val := func(row Row, m string) (float64, bool) {
		iv, ok := row.Values[m]
		return iv.Center, ok && !math.IsNaN(iv.Center)
	}
	var parts []string
	xc, okx := val(x, "cksum_cpu_per_fsync")
	rc, okr := val(r, "cksum_cpu_per_fsync")
	switch {
	case okx && okr:
		s := fmt.Sprintf("its checksum takes %s ns of CPU per fsync to %s's %s ns", count(int64(math.Round(xc))), ref, count(int64(math.Round(rc))))
		xs, ok1 := val(x, "cksum_busy_share")
		rs, ok2 := val(r, "cksum_busy_share")
		if ok1 && ok2 {
			s += fmt.Sprintf(" (%s %% of the machine's busy CPU, from perf, to %s %%)", trimFloat(100*xs), trimFloat(100*rs))
		}
		parts = append(parts, s)
	case x.Unmeasured["cksum_cpu_per_fsync"] != "":
		parts = append(parts, "its checksum CPU was not measured ("+x.Unmeasured["cksum_cpu_per_fsync"]+")")
	}
	xb, okx := val(x, "log_blocks_per_fsync")
	rb, okr := val(r, "log_blocks_per_fsync")
	if okx && okr {
		parts = append(parts, fmt.Sprintf("it writes %.1f log blocks per fsync to %s's %.1f", xb, ref, rb))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("The kernel's XFS at the same log geometry: %s.", strings.Join(parts, "; "))
}

// TooFewRoundsNote is said once in a report whose figures lack an
// interval: why they are not significant. Empty when every figure has its
// interval.
func TooFewRoundsNote(res *Results) string {
	missing := res.Config.Rounds < benchstat.MinRounds()
	for _, c := range res.Comparisons {
		if !c.Interval().Finite() {
			missing = true
		}
	}
	if !missing {
		return ""
	}
	return fmt.Sprintf("A figure without an interval is not significant (too few rounds for an interval): "+
		"an interval at %.0f %% takes %d rounds of every target, and this run has %s.",
		100*benchstat.Confidence, benchstat.MinRounds(), roundsDone(res))
}

// roundsDone says how many rounds the run has: "2 rounds", or for a
// partial run "1 complete round of 10 (5 runs)".
func roundsDone(res *Results) string {
	if !res.Partial {
		return plural(res.Config.Rounds, "round")
	}
	per := map[int]int{}
	for _, r := range res.Runs {
		per[r.Round]++
	}
	full := 0
	for _, n := range per {
		if n == len(res.Targets) {
			full++
		}
	}
	return fmt.Sprintf("%s of %d (%s)", plural(full, "complete round"), res.Config.Rounds, plural(len(res.Runs), "run"))
}
