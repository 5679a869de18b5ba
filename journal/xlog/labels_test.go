package xlog

import (
	"context"
	"runtime/pprof"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/profiling"
)

// TestWriterLabelsAreTheAnalysers ties the labels the log writer runs
// under to what the profile analyser reads: a sample taken under the
// writer's checksum labels, in checksum code, counts as phase=checksum
// work of its mode, and one under its base labels does not.
func TestWriterLabelsAreTheAnalysers(t *testing.T) {
	for _, mode := range cksum.Modes() {
		base, checksum := writerLabels(mode)
		p := &profile.Profile{
			SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
			PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
			Period:     10_000_000,
		}
		fn := &profile.Function{ID: 1, Name: "github.com/xlogfs/xlogfs/cksum.Sum"}
		p.Function = []*profile.Function{fn}
		loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
		p.Location = []*profile.Location{loc}
		for _, c := range []struct {
			ctx   context.Context
			nanos int64
		}{{checksum, 30_000_000}, {base, 10_000_000}} {
			p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{1, c.nanos}, Label: labelMap(c.ctx)})
		}
		if err := p.CheckValid(); err != nil {
			t.Fatal(err)
		}
		sh, err := profiling.Analyze(p)
		if err != nil {
			t.Fatal(err)
		}
		if sh.PhaseSeconds != 0.03 {
			t.Errorf("%s: phase=checksum time %v s, want 0.03 (the sample under the checksum labels only)", mode, sh.PhaseSeconds)
		}
		if len(sh.Modes) != 1 || sh.Modes[0].Mode != mode.String() || sh.Modes[0].CPUSeconds != 0.03 {
			t.Errorf("%s: modes %+v, want one entry %q of 0.03 s", mode, sh.Modes, mode)
		}
	}
}

// labelMap is ctx's pprof labels as a profile sample holds them.
func labelMap(ctx context.Context) map[string][]string {
	m := map[string][]string{}
	pprof.ForLabels(ctx, func(k, v string) bool {
		m[k] = append(m[k], v)
		return true
	})
	return m
}
