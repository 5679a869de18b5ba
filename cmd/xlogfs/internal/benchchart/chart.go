// Package benchchart draws xlogfs bench's chart: for the factorial of
// checksum modes × crc32c implementations, grouped bars (a group per mode,
// a bar per implementation) of the checksum's share of CPU, throughput and
// fsync p99, each bar the median over rounds with a whisker for its 95 %
// confidence interval and a dashed line at the reference's median; the
// answer's savings (what batching and the kernel each save of the
// checksum's cost, benchreport.Savings); and every target's checksum CPU ÷
// the reference's on a log scale, the reference marked at 1. Axis numbers
// are plain (0, 2500, 5000). Drawn with gonum.org/v1/plot, as SVG and PNG.
package benchchart

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchstat"
)

// panels are the metrics drawn, top to bottom; ratioPanel is the one
// drawn as the ratio to the reference, on a log scale.
var panels = []string{"cksum_cpu", savingsPanel, ratioPanel, "throughput", "fsync_p99"}

const (
	ratioPanel   = "cksum_cpu ÷ reference"
	savingsPanel = "batching vs kernel"
)

// palette colours the implementations, in the order the bench ran them.
var palette = []color.RGBA{
	{0x48, 0x78, 0xa8, 0xff}, {0xd0, 0x70, 0x3c, 0xff}, {0x6a, 0xa8, 0x4f, 0xff},
	{0x9b, 0x59, 0xb6, 0xff}, {0xc0, 0x39, 0x2b, 0xff}, {0x7f, 0x8c, 0x8d, 0xff},
}

// Size of the whole chart.
const (
	width  = 7 * vg.Inch
	height = 13 * vg.Inch
)

// Write draws res's chart into dir as chart.svg and chart.png.
func Write(res *benchreport.Results, dir string) error {
	svg, png, err := Render(res)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "chart.svg"), svg, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "chart.png"), png, 0o644)
}

// plainTicks labels another ticker's ticks with plain numbers: 0, 2500,
// 5000, 0.5 (not 0.00, 2500.00, 5e+03).
type plainTicks struct{ plot.Ticker }

func (p plainTicks) Ticks(min, max float64) []plot.Tick {
	ts := p.Ticker.Ticks(min, max)
	labelled := 0
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = plainNumber(ts[i].Value)
			labelled++
		}
	}
	if labelled >= 3 {
		return ts
	}
	// Too few numbers to read the axis by (0 and 25): marks every 1,
	// 2, 2.5 or 5 × a power of ten, whichever gives 3 to 6 of them.
	for e := math.Floor(math.Log10(max-min)) - 1; e <= math.Ceil(math.Log10(max-min)); e++ {
		for _, m := range []float64{1, 2, 2.5, 5} {
			step := m * math.Pow(10, e)
			first := math.Ceil(min/step) * step
			if n := math.Floor((max-first)/step) + 1; n < 3 || n > 6 {
				continue
			}
			var out []plot.Tick
			for i := 0.0; first+i*step <= max+step*1e-9; i++ {
				// Whole multiples of the step: 0, not −1.4e-14.
				v := math.Round(first/step+i) * step
				out = append(out, plot.Tick{Value: v, Label: plainNumber(v)})
			}
			return out
		}
	}
	return ts
}

// plainNumber is x with at most 6 significant digits, no exponent and no
// trailing zeros.
func plainNumber(x float64) string {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	if r == 0 {
		return "0" // not −0
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// ratioTicks marks a log axis at 1, 2 and 5 times the powers of ten in
// [min, max], labelled plainly.
func ratioTicks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(min)) - 1; e <= math.Ceil(math.Log10(max))+1; e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= min && v <= max {
				ts = append(ts, plot.Tick{Value: v, Label: plainNumber(v)})
			}
		}
	}
	if len(ts) < 2 {
		return plot.LogTicks{Prec: -1}.Ticks(min, max)
	}
	return ts
}

// referenceLine is a dashed horizontal line across the panel at y.
func referenceLine(y float64, modes int) (*plotter.Line, error) {
	l, err := plotter.NewLine(plotter.XYs{{X: -0.6, Y: y}, {X: float64(modes) - 0.4, Y: y}})
	if err != nil {
		return nil, err
	}
	l.LineStyle.Width = vg.Points(1.2)
	l.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	l.LineStyle.Color = color.Black
	return l, nil
}

// Render draws res's chart and returns it as SVG and PNG.
func Render(res *benchreport.Results) (svg, png []byte, err error) {
	plots, err := build(res)
	if err != nil {
		return nil, nil, err
	}
	sc := vgsvg.New(width, height)
	draw2(plots, sc)
	var sb bytes.Buffer
	if _, err := sc.WriteTo(&sb); err != nil {
		return nil, nil, err
	}
	ic := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(110))
	draw2(plots, ic)
	var pb bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: ic}).WriteTo(&pb); err != nil {
		return nil, nil, err
	}
	return sb.Bytes(), pb.Bytes(), nil
}

func draw2(plots [][]*plot.Plot, c vg.CanvasSizer) {
	dc := draw.New(c)
	// A white background: PNG viewers would show transparency as black.
	c.SetColor(color.White)
	var bg vg.Path
	bg.Move(vg.Point{})
	bg.Line(vg.Point{X: width})
	bg.Line(vg.Point{X: width, Y: height})
	bg.Line(vg.Point{Y: height})
	bg.Close()
	c.Fill(bg)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadTop: 8, PadBottom: 8, PadLeft: 8, PadRight: 8, PadY: 14}
	cs := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(cs[i][0])
	}
}

// whiskers are the error bars: a point per bar, with distances down and up.
type whiskers []struct{ x, y, lo, hi float64 }

func (w whiskers) Len() int                        { return len(w) }
func (w whiskers) XY(i int) (float64, float64)     { return w[i].x, w[i].y }
func (w whiskers) YError(i int) (float64, float64) { return w[i].y - w[i].lo, w[i].hi - w[i].y }

func build(res *benchreport.Results) ([][]*plot.Plot, error) {
	var modes, impls []string
	cells := map[[2]string]benchreport.Row{}
	for _, t := range res.Targets {
		if t.Kind != "xlogfs" {
			continue
		}
		if !contains(modes, t.Mode) {
			modes = append(modes, t.Mode)
		}
		if !contains(impls, t.Impl) {
			impls = append(impls, t.Impl)
		}
		for _, r := range res.Rows {
			if r.Target == t.Name {
				cells[[2]string{t.Mode, t.Impl}] = r
			}
		}
	}
	if len(modes) == 0 {
		return nil, errors.New("benchchart: no xlogfs targets to draw")
	}
	var out [][]*plot.Plot
	for pi, metric := range panels {
		if metric == savingsPanel {
			p, err := savingsPlot(res)
			if err != nil {
				return nil, err
			}
			if p != nil {
				out = append(out, []*plot.Plot{p})
			}
			continue
		}
		if metric == ratioPanel {
			p, err := ratioPlot(res, modes, impls)
			if err != nil {
				return nil, err
			}
			if p != nil {
				out = append(out, []*plot.Plot{p})
			}
			continue
		}
		meta, ok := res.MetricByName(metric)
		if !ok {
			continue
		}
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s, %s (median over rounds, whisker: 95 %% CI)", meta.Label, meta.Unit)
		if pi == 0 {
			p.Title.Text = fmt.Sprintf("xlogfs bench: %s workload, journal %s, device %s, %d rounds\n%s",
				res.Config.Workload, res.Config.Journal, res.Config.Device, res.Config.Rounds, p.Title.Text)
		}
		p.Y.Min = 0
		p.Y.Tick.Marker = plainTicks{plot.DefaultTicks{}}
		p.X.Label.Text = "checksum mode"
		const groupWidth = 0.8
		barW := groupWidth / float64(len(impls))
		var ws whiskers
		noCI := false
		top := 0.0
		for ii, im := range impls {
			var bars []plot.Thumbnailer
			for mi, m := range modes {
				r, ok := cells[[2]string{m, im}]
				if !ok {
					continue
				}
				iv, ok := r.Values[metric]
				if !ok || math.IsNaN(iv.Center) {
					continue
				}
				x0 := float64(mi) - groupWidth/2 + float64(ii)*barW
				y := iv.Center * meta.Scale
				poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: 0}, {X: x0 + barW*0.92, Y: 0}, {X: x0 + barW*0.92, Y: y}, {X: x0, Y: y}})
				if err != nil {
					return nil, err
				}
				poly.Color = palette[ii%len(palette)]
				poly.LineStyle.Width = 0
				p.Add(poly)
				bars = append(bars, poly)
				top = max(top, y)
				if iv.Finite() {
					ws = append(ws, struct{ x, y, lo, hi float64 }{x0 + barW*0.46, y, iv.Lo * meta.Scale, iv.Hi * meta.Scale})
					top = max(top, iv.Hi*meta.Scale)
				} else {
					noCI = true
				}
			}
			if len(bars) > 0 {
				p.Legend.Add(im, bars[0])
			}
		}
		if err := addWhiskers(p, ws); err != nil {
			return nil, err
		}
		if noCI {
			p.Title.Text += fmt.Sprintf("\n(no whisker: fewer than %d rounds)", benchstat.MinRounds())
		}
		// The reference's median, across the panel: what every bar is
		// compared with.
		if ref, ok := res.Target(res.Config.Reference); ok && ref.Kind == "xlogfs" {
			if iv, ok := cells[[2]string{ref.Mode, ref.Impl}].Values[metric]; ok && !math.IsNaN(iv.Center) {
				l, err := referenceLine(iv.Center*meta.Scale, len(modes))
				if err != nil {
					return nil, err
				}
				p.Add(l)
				p.Legend.Add("reference: "+ref.Name, l)
			}
		}
		// Room above the bars for the legend: a row per kernel and the
		// reference's.
		p.Y.Max = top * (1.2 + 0.13*float64(len(impls)+1))
		if p.Y.Max == 0 {
			p.Y.Max = 1
		}
		p.NominalX(modes...)
		p.X.Min, p.X.Max = -0.6, float64(len(modes))-0.4
		p.Legend.Top = true
		p.Legend.Left = metric == "throughput"
		out = append(out, []*plot.Plot{p})
	}
	return out, nil
}

// ratioPlot draws each target's checksum CPU ÷ the reference's (the median
// of the rounds' ratios, whisker its interval) as bars from 1 on a log
// scale, where ×2 up and ×½ down look alike. Nil without comparisons.
func ratioPlot(res *benchreport.Results, modes, impls []string) (*plot.Plot, error) {
	type bar struct {
		x  float64
		iv benchstat.Interval
		ii int
	}
	var bars []bar
	const groupWidth = 0.8
	barW := groupWidth / float64(len(impls))
	lo, hi := 1.0, 1.0
	for _, t := range res.Targets {
		c, ok := res.Comparison("cksum_cpu", t.Name)
		if !ok || t.Kind != "xlogfs" || !(c.Ratio > 0) {
			continue
		}
		mi, ii := index(modes, t.Mode), index(impls, t.Impl)
		iv := c.Interval()
		bars = append(bars, bar{float64(mi) - groupWidth/2 + float64(ii)*barW, iv, ii})
		lo, hi = math.Min(lo, iv.Center), math.Max(hi, iv.Center)
		if iv.Finite() && iv.Lo > 0 {
			lo, hi = math.Min(lo, iv.Lo), math.Max(hi, iv.Hi)
		}
	}
	if len(bars) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = "checksum CPU ÷ the reference's, same round (median ratio, whisker: 95 % CI; log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.TickerFunc(ratioTicks)
	// Room above the bars for the legend: on the log scale, a factor per
	// row (a kernel each, and the reference).
	p.Y.Min, p.Y.Max = lo/1.5, hi*math.Pow(1.8, float64(len(impls)+1))
	p.X.Label.Text = "checksum mode"
	var ws whiskers
	legend := make([]plot.Thumbnailer, len(impls))
	for _, b := range bars {
		y := b.iv.Center
		poly, err := plotter.NewPolygon(plotter.XYs{{X: b.x, Y: 1}, {X: b.x + barW*0.92, Y: 1}, {X: b.x + barW*0.92, Y: y}, {X: b.x, Y: y}})
		if err != nil {
			return nil, err
		}
		poly.Color = palette[b.ii%len(palette)]
		poly.LineStyle.Width = 0
		p.Add(poly)
		legend[b.ii] = poly
		if b.iv.Finite() && b.iv.Lo > 0 {
			ws = append(ws, struct{ x, y, lo, hi float64 }{b.x + barW*0.46, y, b.iv.Lo, b.iv.Hi})
		}
	}
	for ii, th := range legend {
		if th != nil {
			p.Legend.Add(impls[ii], th)
		}
	}
	// The reference itself: 1 by definition, so no bar; a dashed line
	// at 1 across the panel and a mark in its own place.
	one, err := referenceLine(1, len(modes))
	if err != nil {
		return nil, err
	}
	p.Add(one)
	p.Legend.Add("reference "+res.Config.Reference+" = 1", one)
	if ref, ok := res.Target(res.Config.Reference); ok && ref.Kind == "xlogfs" {
		mi, ii := index(modes, ref.Mode), index(impls, ref.Impl)
		if mi >= 0 && ii >= 0 {
			mark, err := plotter.NewScatter(plotter.XYs{{X: float64(mi) - groupWidth/2 + (float64(ii)+0.46)*barW, Y: 1}})
			if err != nil {
				return nil, err
			}
			mark.GlyphStyle.Shape = draw.BoxGlyph{}
			mark.GlyphStyle.Radius = vg.Points(4)
			mark.GlyphStyle.Color = palette[ii%len(palette)]
			p.Add(mark)
		}
	}
	if err := addWhiskers(p, ws); err != nil {
		return nil, err
	}
	p.NominalX(modes...)
	p.X.Min, p.X.Max = -0.6, float64(len(modes))-0.4
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}

func index(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// savingsPlot draws the answer's savings (benchreport.Savings): what
// batching saves of the checksum's cost against each other mode, at the
// fastest kernel, and what the fastest kernel saves against each other
// implementation, in batched mode; a bar each, % saved, whisker its 95 %
// interval. Nil without any.
func savingsPlot(res *benchreport.Results) (*plot.Plot, error) {
	ss := benchreport.Savings(res)
	if len(ss) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("what batching and the kernel save: %% of %s (median, whisker: 95 %% CI)", ss[0].What)
	p.Y.Tick.Marker = plainTicks{plot.DefaultTicks{}}
	p.Y.Label.Text = "% saved"
	var names []string
	var ws whiskers
	lo, hi := 0.0, 10.0
	legend := map[string]bool{}
	for i, s := range ss {
		names = append(names, fmt.Sprintf("%s vs %s", s.Factor, s.Short))
		y := 100 * (1 - s.Ratio.Center)
		x0 := float64(i) - 0.3
		poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: 0}, {X: x0 + 0.6, Y: 0}, {X: x0 + 0.6, Y: y}, {X: x0, Y: y}})
		if err != nil {
			return nil, err
		}
		ci := 0
		if s.Factor == "kernel" {
			ci = 1
		}
		poly.Color = palette[ci]
		poly.LineStyle.Width = 0
		p.Add(poly)
		if !legend[s.Factor] {
			legend[s.Factor] = true
			p.Legend.Add(map[string]string{"batching": "batching, at the " + s.At + " kernel", "kernel": "the kernel, in " + s.At + " mode"}[s.Factor], poly)
		}
		lo, hi = math.Min(lo, y), math.Max(hi, y)
		if s.Ratio.Finite() {
			// Saving is 1 − ratio: the ratio's upper bound is the
			// saving's lower one.
			ws = append(ws, struct{ x, y, lo, hi float64 }{float64(i), y, 100 * (1 - s.Ratio.Hi), 100 * (1 - s.Ratio.Lo)})
			lo, hi = math.Min(lo, 100*(1-s.Ratio.Hi)), math.Max(hi, 100*(1-s.Ratio.Lo))
		}
	}
	if err := addWhiskers(p, ws); err != nil {
		return nil, err
	}
	if len(ws) == 0 {
		p.Title.Text += fmt.Sprintf("\n(no whisker: fewer than %d rounds)", benchstat.MinRounds())
	}
	zero, err := referenceLine(0, len(ss))
	if err != nil {
		return nil, err
	}
	zero.LineStyle.Dashes = nil
	zero.LineStyle.Width = vg.Points(0.5)
	p.Add(zero)
	p.Y.Min, p.Y.Max = math.Min(0, lo*1.2), hi*1.35 // room for the legend above the bars
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(ss))-0.4
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}

// addWhiskers draws the 95 % intervals ws on p, if there are any.
func addWhiskers(p *plot.Plot, ws whiskers) error {
	if len(ws) == 0 {
		return nil
	}
	eb, err := plotter.NewYErrorBars(ws)
	if err != nil {
		return err
	}
	eb.LineStyle.Width = vg.Points(1.2)
	eb.CapWidth = vg.Points(6)
	p.Add(eb)
	return nil
}
