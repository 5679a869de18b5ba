package algobench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/gonum/stat/distuv"
)

func (r *Results) algo(name string) *AlgoResult {
	for i := range r.Algos {
		if r.Algos[i].Name == name {
			return &r.Algos[i]
		}
	}
	return nil
}

func (a *AlgoResult) cell(shape, model string, width int) (DetCell, bool) {
	for _, c := range a.Detection {
		if c.Shape == shape && c.Model == model && c.Width == width {
			return c, true
		}
	}
	return DetCell{}, false
}

func (a *AlgoResult) speedAt(bytes int) (SpeedCell, bool) {
	for _, s := range a.Speed {
		if s.Bytes == bytes && !s.NA {
			return s, true
		}
	}
	return SpeedCell{}, false
}

// sci formats a small fraction compactly: 1.5e-5.
func sci(x float64) string {
	if x == 0 {
		return "0"
	}
	s := fmt.Sprintf("%.1e", x)
	s = strings.Replace(s, "e-0", "e-", 1)
	return strings.Replace(s, "e+00", "", 1)
}

func fmtCell(c DetCell, asked int) string {
	var s string
	switch {
	case c.Trials == 0:
		return "–"
	case c.Missed == 0:
		s = "0 ≤" + sci(c.Upper95)
	case c.Missed == c.Trials:
		s = "all"
	default:
		s = sci(c.Observed)
	}
	if c.Trials < int64(asked) {
		s += "†"
	}
	return s
}

func pct(x float64) string { return fmt.Sprintf("%.1f %%", 100*x) }

func writeReport(w io.Writer, r *Results) {
	fmt.Fprintf(w, "xlogfs algo-bench: checksums side by side (%s, %s, %d CPUs; crc32c/best is cksum's %s kernel)\n",
		r.GoVersion, r.GOARCH, r.CPUs, r.CRC32CKernel)
	fmt.Fprintln(w, "Timings mean something only on an otherwise idle machine.")

	if len(r.Algos) > 0 && len(r.Algos[0].Speed) > 0 {
		fmt.Fprintf(w, "\n1. Speed: GB/s (× crc32c/best in this run), median of the rounds\n\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "algorithm\t")
		for _, s := range r.Algos[0].Speed {
			fmt.Fprintf(tw, "%s\t", humanBytes(int64(s.Bytes)))
		}
		fmt.Fprintln(tw)
		for _, a := range r.Algos {
			fmt.Fprintf(tw, "%s\t", a.Name)
			for _, s := range a.Speed {
				if s.NA {
					fmt.Fprint(tw, "n/a\t")
				} else {
					fmt.Fprintf(tw, "%.2f (%.2f×)\t", s.GBps, s.Ratio)
				}
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		for _, a := range r.Algos {
			for _, s := range a.Speed {
				if s.NA {
					fmt.Fprintf(w, "n/a: %s is defined on whole %d-byte rows only.\n", a.Name, 128)
					break
				}
			}
		}
	}

	if len(r.Algos) > 0 && len(r.Algos[0].Detection) > 0 {
		fmt.Fprintf(w, "\n2. Detection: fraction of damages missed; \"0 ≤b\" = none missed, b the one-sided 95 %% Clopper-Pearson upper bound\n")
		for _, s := range r.Shapes {
			for _, own := range []bool{true, false} {
				title := "at each algorithm's own width"
				if !own {
					title = "truncated to its low 16 bits (what PostgreSQL's pages store)"
				}
				fmt.Fprintf(w, "\n%s, %s\n\n", s.Title, title)
				tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
				fmt.Fprint(tw, "algorithm\tbits\t")
				for _, m := range Models() {
					fmt.Fprintf(tw, "%s\t", m.Info().Short)
				}
				fmt.Fprintln(tw)
				for _, a := range r.Algos {
					if a.SameAs != "" {
						continue
					}
					width := a.Width
					if !own {
						width = 16
					}
					if _, ok := a.cell(s.Key, Models()[0].String(), width); !ok {
						continue
					}
					fmt.Fprintf(tw, "%s\t%d\t", a.Name, width)
					for _, m := range Models() {
						c, _ := a.cell(s.Key, m.String(), width)
						fmt.Fprintf(tw, "%s\t", fmtCell(c, r.Trials))
					}
					fmt.Fprintln(tw)
				}
				tw.Flush()
			}
			writeTrialsNote(w, r, s)
		}
		var same []string
		for _, a := range r.Algos {
			if a.SameAs != "" {
				same = append(same, fmt.Sprintf("%s computes the same function as %s (cksum's tests prove them equal), so it has %s's cells.", a.Name, a.SameAs, a.SameAs))
			}
		}
		if len(same) > 0 {
			fmt.Fprintln(w)
			fmt.Fprintln(w, strings.Join(same, "\n"))
		}
		fmt.Fprintln(w, "\nHow each cell was measured:")
		byMethod := map[string][]string{}
		for _, a := range r.Algos {
			for _, c := range a.Detection {
				if strings.HasPrefix(c.Method, MethodSameAs) {
					continue
				}
				key := c.Method
				if !slices.Contains(byMethod[key], a.Name) {
					byMethod[key] = append(byMethod[key], a.Name)
				}
			}
		}
		for _, m := range []string{MethodCRC, MethodSum, MethodRecompute, MethodFresh, MethodPrefix} {
			if names, ok := byMethod[m]; ok {
				where := "the other models"
				switch m {
				case MethodFresh:
					where = "00→FF"
				case MethodPrefix:
					where = "truncate"
				}
				fmt.Fprintf(w, "  %s (%s; %s): %s.\n", m, strings.Join(names, ", "), where, MethodDesc[m])
			}
		}
		fmt.Fprintln(w, "Models:")
		for _, m := range Models() {
			fmt.Fprintf(w, "  %-9s %s\n", m.Info().Short, m.Info().Desc)
		}
	}

	if r.Scan != nil {
		fmt.Fprintf(w, "\n3. Read-path scan: a %s file from the page cache in %d-byte preads, each page verified; %d rounds\n",
			humanBytes(r.Scan.Bytes), r.Scan.PageBytes, r.Scan.Rounds)
		fmt.Fprintf(w, "   every %s stretch scanned by each in turn; slowdown: median and quartiles of the ratios per stretch\n\n", humanBytes(r.Scan.StretchBytes))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "algorithm\tGB/s\tslowdown\tquartiles\tPostgreSQL thread's figure")
		fmt.Fprintf(tw, "(no verification)\t%.2f\t\t\t\n", r.Scan.BaselineGBps)
		for _, a := range r.Algos {
			if a.Scan == nil {
				continue
			}
			fmt.Fprintf(tw, "%s\t%.2f\t%s\t%s – %s\t%s\n", a.Name, a.Scan.GBps, pct(a.Scan.Slowdown),
				pct(a.Scan.SlowdownQ1), pct(a.Scan.SlowdownQ3), a.PGThread)
		}
		tw.Flush()
	}

	if len(r.Summary) > 0 {
		fmt.Fprintf(w, "\nSummary\n\n")
		for _, s := range r.Summary {
			fmt.Fprintf(w, "- %s\n", s)
		}
	}
}

// writeTrialsNote says how many trials the cells of a shape have where
// that is not the number asked for.
func writeTrialsNote(w io.Writer, r *Results, s Shape) {
	type group struct{ algos, models []string }
	groups := map[int64]*group{}
	for _, a := range r.Algos {
		if a.SameAs != "" {
			continue
		}
		for _, c := range a.Detection {
			if c.Shape != s.Key || c.Width != a.Width || c.Trials >= int64(r.Trials) {
				continue
			}
			g := groups[c.Trials]
			if g == nil {
				g = &group{}
				groups[c.Trials] = g
			}
			if !slices.Contains(g.algos, a.Name) {
				g.algos = append(g.algos, a.Name)
			}
			if !slices.Contains(g.models, c.Model) {
				g.models = append(g.models, c.Model)
			}
		}
	}
	fmt.Fprintf(w, "\n%d trials per cell", r.Trials)
	if len(groups) == 0 {
		fmt.Fprintln(w, ".")
		return
	}
	fmt.Fprintln(w, " except † (fewer, to keep the run in its time budget):")
	var keys []int64
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] > keys[j] })
	for _, k := range keys {
		g := groups[k]
		models := strings.Join(g.models, ", ")
		if len(g.models) >= int(numModels)-2 {
			models = fmt.Sprintf("%d models", len(g.models))
		}
		fmt.Fprintf(w, "  %d trials: %s on %s\n", k, strings.Join(g.algos, ", "), models)
	}
}

func goal(r *Results, sections map[string]bool) *Goal {
	if len(r.Algos) == 0 || r.Algos[0].Name != "crc32c/best" {
		return nil
	}
	crc := r.Algos[0]
	g := &Goal{}
	if crc.ScanSlowdown != nil {
		g.ScanSlowdown = crc.ScanSlowdown
		g.ScanUnder5 = *crc.ScanSlowdown < 0.05
		g.MeasuredParts = append(g.MeasuredParts, "scan")
	}
	if len(crc.Detection) > 0 {
		for _, c := range crc.Detection {
			if c.Width == crc.Width && modelByKey(c.Model).Info().UpTo32 {
				g.TrialsUpTo32 += c.Trials
				g.MissedUpTo32 += c.Missed
			}
		}
		g.NoMissUpTo32 = g.MissedUpTo32 == 0 && g.TrialsUpTo32 > 0
		g.MeasuredParts = append(g.MeasuredParts, "detection")
	}
	g.Met = sections["scan"] && sections["detection"] && g.ScanUnder5 && g.NoMissUpTo32
	return g
}

// BeyondChance reports whether a cell's misses are more than a random
// value of the compared width would let through: seeing that many or more
// with a miss probability of 2^−width has a probability under 10⁻⁴. Misses
// at 16 bits within chance are the width's doing, not the algorithm's.
func BeyondChance(c DetCell) bool {
	if c.Missed == 0 {
		return false
	}
	p := math.Ldexp(1, -c.Width)
	return (distuv.Binomial{N: float64(c.Trials), P: p}).Survival(float64(c.Missed-1)) < 1e-4
}

// shortfalls lists the models where a missed more than chance at the given
// width (any miss, with all false), worst first, one cell per model.
func (a *AlgoResult) shortfalls(width int, all bool) []DetCell {
	worst := map[string]DetCell{}
	for _, c := range a.Detection {
		if c.Width != width || c.Missed == 0 || !all && !BeyondChance(c) {
			continue
		}
		if w, ok := worst[c.Model]; !ok || c.Observed > w.Observed {
			worst[c.Model] = c
		}
	}
	var out []DetCell
	for _, c := range worst {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Observed != out[j].Observed {
			return out[i].Observed > out[j].Observed
		}
		return out[i].Model < out[j].Model
	})
	return out
}

func describeMiss(c DetCell) string {
	name := modelByKey(c.Model).Info().Name
	if c.Missed == c.Trials {
		return fmt.Sprintf("all %s", name)
	}
	return fmt.Sprintf("%s of %s (%d/%d, %s)", sci(c.Observed), name, c.Missed, c.Trials, shapeTitle(c.Shape))
}

func shapeTitle(key string) string {
	for _, s := range Shapes {
		if s.Key == key {
			return s.Title
		}
	}
	return key
}

// summarize says in plain words what the run found. Every sentence is built
// from the measurements; none is fixed in advance.
func summarize(r *Results) []string {
	var out []string
	if len(r.Algos) == 0 {
		return nil
	}
	crc := &r.Algos[0]
	largest := 0
	if len(crc.Speed) > 0 {
		largest = crc.Speed[len(crc.Speed)-1].Bytes
	}
	if g := r.Goal; g != nil {
		var parts []string
		if g.ScanSlowdown != nil {
			verdict := "meets"
			if !g.ScanUnder5 {
				verdict = "misses"
			}
			parts = append(parts, fmt.Sprintf("slowed the page-cache scan by %s, which %s the goal of under 5 %%", pct(*g.ScanSlowdown), verdict))
		}
		if g.TrialsUpTo32 > 0 {
			verdict := "meets the goal of none"
			if !g.NoMissUpTo32 {
				verdict = "misses the goal of none"
			}
			parts = append(parts, fmt.Sprintf("missed %d of %d damages of up to 32 bits (1–3 bit flips, bursts ≤ 32 bits, on pages and records), which %s", g.MissedUpTo32, g.TrialsUpTo32, verdict))
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("crc32c/best (cksum's %s kernel) %s.", r.CRC32CKernel, strings.Join(parts, ", and ")))
		}
		if sf := crc.shortfalls(crc.Width, true); len(sf) > 0 {
			var ds []string
			for _, c := range sf {
				ds = append(ds, describeMiss(c))
			}
			out = append(out, fmt.Sprintf("crc32c/best missed %s.", strings.Join(ds, "; ")))
		} else if len(crc.Detection) > 0 {
			out = append(out, "crc32c/best missed nothing in any model at its full 32 bits.")
		}
	}

	var clean []*AlgoResult
	for i := range r.Algos {
		a := &r.Algos[i]
		if i == 0 || a.SameAs != "" {
			continue
		}
		var bits []string
		if len(a.Detection) > 0 {
			sf := a.shortfalls(a.Width, false)
			switch {
			case len(sf) > 0:
				var ds []string
				for _, c := range sf[:min(3, len(sf))] {
					ds = append(ds, describeMiss(c))
				}
				more := ""
				if len(sf) > 3 {
					more = fmt.Sprintf(" and in %d more models", len(sf)-3)
				}
				bits = append(bits, fmt.Sprintf("missed more than chance at %d bits would: %s%s", a.Width, strings.Join(ds, "; "), more))
			case len(a.shortfalls(a.Width, true)) > 0:
				bits = append(bits, fmt.Sprintf("missed only about as often as any %d-bit checksum must (1 in %.0f)", a.Width, math.Ldexp(1, a.Width)))
			default:
				bits = append(bits, "missed nothing")
				clean = append(clean, a)
			}
		}
		if s, ok := a.speedAt(largest); ok {
			bits = append(bits, fmt.Sprintf("ran at %.2f× crc32c/best's speed on %s", s.Ratio, humanBytes(int64(largest))))
		}
		if a.ScanSlowdown != nil {
			bits = append(bits, fmt.Sprintf("cost %s on the scan", pct(*a.ScanSlowdown)))
		}
		if len(bits) > 0 {
			out = append(out, fmt.Sprintf("%s (%d bits) %s.", a.Name, a.Width, strings.Join(bits, ", ")))
		}
	}

	// At 16 bits a random value lets 1 in 65,536 damages through; which
	// algorithms do worse than that?
	if len(crc.Detection) > 0 {
		var blind, chance []string
		lo, hi := math.Inf(1), 0.0
		for i := range r.Algos {
			a := &r.Algos[i]
			if a.SameAs != "" {
				continue
			}
			if sf := a.shortfalls(16, false); len(sf) > 0 {
				var ds []string
				for _, c := range sf[:min(2, len(sf))] {
					ds = append(ds, describeMiss(c))
				}
				blind = append(blind, fmt.Sprintf("%s (%s)", a.Name, strings.Join(ds, "; ")))
				continue
			}
			chance = append(chance, a.Name)
			for _, c := range a.Detection {
				if c.Width == 16 && c.Trials >= int64(r.Trials) {
					lo, hi = min(lo, c.Observed), max(hi, c.Observed)
				}
			}
		}
		line := fmt.Sprintf("Truncated to 16 bits (PostgreSQL's page-checksum width), a random value lets through 1 damage in 65,536 (%s).", sci(1.0/65536))
		if len(chance) > 0 && hi > 0 {
			line += fmt.Sprintf(" %s stayed at that: %s to %s per model where all trials ran.", strings.Join(chance, ", "), sci(lo), sci(hi))
		}
		if len(blind) > 0 {
			line += fmt.Sprintf(" Worse than chance: %s.", strings.Join(blind, "; "))
		}
		out = append(out, line)
	}

	// The recommendation.
	if len(crc.Detection) > 0 && len(crc.Speed) > 0 {
		crcClean := len(crc.shortfalls(crc.Width, true)) == 0
		var faster []string
		cs, _ := crc.speedAt(largest)
		for _, a := range clean {
			if s, ok := a.speedAt(largest); ok && s.GBps > cs.GBps {
				faster = append(faster, fmt.Sprintf("%s (%.2f×)", a.Name, s.Ratio))
			}
		}
		switch {
		case crcClean && len(faster) == 0:
			out = append(out, fmt.Sprintf("A log here should use crc32c/best: it missed nothing and nothing that also missed nothing was faster on %s records. Its catching every burst of up to 32 bits is a property of its polynomial, not only an observation; and it is the checksum the XFS log format stores.", humanBytes(int64(largest))))
		case crcClean:
			out = append(out, fmt.Sprintf("%s missed nothing either and ran faster on %s; a log here should still use crc32c/best, whose catching every burst of up to 32 bits is a property of its polynomial rather than an observation, and which the XFS log format stores; the hashes' misses are bounded only by the trials run.", strings.Join(faster, ", "), humanBytes(int64(largest))))
		default:
			var names []string
			for _, a := range clean {
				names = append(names, a.Name)
			}
			out = append(out, fmt.Sprintf("crc32c/best missed damage in this run; the algorithms that missed nothing: %s.", strings.Join(names, ", ")))
		}
	}
	if r.Scan != nil && math.IsNaN(r.Scan.BaselineGBps) {
		out = append(out, "The scan baseline was not measurable.")
	}
	return out
}
