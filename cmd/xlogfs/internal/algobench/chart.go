package algobench

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// chartPoint places an algorithm on the detection axis at a width: where
// it missed anything, the largest observed share missed of any model and
// buffer; where it missed nothing, the 95 % upper bound over all its trials
// together (nothing missed in that many damages of these kinds).
func (a *AlgoResult) chartPoint(width int) (y float64, missedAny, ok bool) {
	var trials int64
	for _, c := range a.Detection {
		if c.Width != width || c.Trials == 0 {
			continue
		}
		ok = true
		trials += c.Trials
		if c.Missed > 0 {
			missedAny = true
			y = max(y, c.Observed)
		}
	}
	if ok && !missedAny {
		y = Upper95(0, trials)
	}
	return y, missedAny, ok
}

// writeChart draws speed against detection: one point per algorithm at its
// own width and one at 16 bits, GB/s on the largest size measured across,
// detection up (lower is better; see chartPoint).
func writeChart(path string, r *Results) error {
	p := plot.New()
	largest := 0
	if len(r.Algos) > 0 && len(r.Algos[0].Speed) > 0 {
		largest = r.Algos[0].Speed[len(r.Algos[0].Speed)-1].Bytes
	}
	p.Title.Text = fmt.Sprintf("Speed against detection (%d trials a cell, fewer where marked in the report)", r.Trials)
	p.X.Label.Text = fmt.Sprintf("GB/s on %s", humanBytes(int64(largest)))
	p.Y.Label.Text = "share of damage missed (lower is better)"
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: 1}
	p.Add(plotter.NewGrid())

	type series struct {
		xy     plotter.XYs
		names  []string
		legend string
		glyph  draw.GlyphDrawer
		col    color.Color
	}
	blue := color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	red := color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	sets := []*series{
		{legend: "own width: worst model's share missed", glyph: draw.CircleGlyph{}, col: blue},
		{legend: "own width, none missed: 95% bound over all trials", glyph: draw.RingGlyph{}, col: blue},
		{legend: "low 16 bits: worst model's share missed", glyph: draw.PyramidGlyph{}, col: red},
		{legend: "low 16 bits, none missed: 95% bound", glyph: draw.TriangleGlyph{}, col: red},
	}
	for i := range r.Algos {
		a := &r.Algos[i]
		s, ok := a.speedAt(largest)
		if !ok || s.GBps <= 0 || a.SameAs != "" && len(a.Detection) == 0 {
			continue
		}
		for k, width := range []int{a.Width, 16} {
			if k == 1 && a.Width <= 16 {
				break
			}
			y, missed, ok := a.chartPoint(width)
			if !ok {
				continue
			}
			set := sets[2*k]
			if !missed {
				set = sets[2*k+1]
			}
			set.xy = append(set.xy, plotter.XY{X: s.GBps, Y: y})
			name := ""
			if k == 0 {
				name = fmt.Sprintf("%s (%d)", a.Name, a.Width)
			}
			set.names = append(set.names, name)
		}
	}
	drawn := 0
	var placed plotter.XYs
	for _, set := range sets {
		if len(set.xy) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(set.xy)
		if err != nil {
			return fmt.Errorf("chart %s: %w", path, err)
		}
		sc.GlyphStyle.Shape, sc.GlyphStyle.Color, sc.GlyphStyle.Radius = set.glyph, set.col, vg.Points(3.5)
		p.Add(sc)
		// One label per point, moved down where an earlier label is near,
		// so that algorithms of about the same speed stay readable.
		for i, xy := range set.xy {
			if set.names[i] == "" {
				continue
			}
			near := 0
			for _, q := range placed {
				if xy.X/q.X < 1.3 && q.X/xy.X < 1.3 && xy.Y/q.Y < 3 && q.Y/xy.Y < 3 {
					near++
				}
			}
			placed = append(placed, xy)
			lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{xy}, Labels: []string{set.names[i]}})
			if err != nil {
				return fmt.Errorf("chart %s: %w", path, err)
			}
			lb.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(-2 - 9*float64(near))}
			lb.TextStyle[0].Font.Size = vg.Points(7)
			lb.TextStyle[0].Color = set.col
			p.Add(lb)
		}
		p.Legend.Add(set.legend, sc)
		drawn++
	}
	if drawn == 0 {
		return fmt.Errorf("chart %s: nothing to draw (no algorithm has both speed and detection)", path)
	}
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	if err := p.Save(9*vg.Inch, 6*vg.Inch, path); err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	return nil
}
