package algobench

import (
	"reflect"
	"sync"
	"testing"
)

func smallConfig(trials, workers int) DetectConfig {
	return DetectConfig{Trials: trials, Seed: 42, Workers: workers,
		RecomputeBudget: 64 << 20, FreshBudget: 8 << 20}
}

// xor8 is a deliberately weak test algorithm of the no-shortcut family:
// the XOR of all bytes ignores their order, so it misses every swap.
func xor8() *Algo {
	sum := func(p []byte) uint64 {
		var x byte
		for _, b := range p {
			x ^= b
		}
		return uint64(x)
	}
	return &Algo{Name: "xor8", Width: 8, Multiple: 1, Sum: sum, family: famHash, delta: xorDelta,
		newStream: func() stream { return &xorStream{} }}
}

type xorStream struct{ x byte }

func (s *xorStream) Write(p []byte) {
	for _, b := range p {
		s.x ^= b
	}
}
func (s *xorStream) Sum() uint64       { return uint64(s.x) }
func (s *xorStream) Clone() stream     { c := *s; return &c }
func (s *xorStream) CopyFrom(o stream) { *s = *o.(*xorStream) }

// Every change the harness computes for a trial, by shortcut or by resumed
// hashing, is the change of the checksum recomputed in full on the buffer
// as it was before and after the damage.
func TestHarnessEqualsFullRecomputation(t *testing.T) {
	var mu sync.Mutex
	checked := map[string]int{}
	algos := append(Algos(), xor8())
	detect(smallConfig(60, 2), algos, Shapes, Models(), func(a *Algo, before, after []byte, delta uint64) {
		want := a.delta(a.Sum(before), a.Sum(after))
		mu.Lock()
		defer mu.Unlock()
		if delta != want {
			t.Errorf("%s: harness change %#x, recomputed %#x", a.Name, delta, want)
		}
		checked[a.Name]++
	})
	for _, a := range algos {
		if a.SameAs == "" && checked[a.Name] == 0 {
			t.Errorf("%s: no trial checked", a.Name)
		}
	}
}

// The counts do not depend on how many workers share the trials.
func TestDetectIndependentOfWorkers(t *testing.T) {
	algos := Algos()
	one := Detect(smallConfig(700, 1), algos, Shapes, Models())
	three := Detect(smallConfig(700, 3), algos, Shapes, Models())
	if !reflect.DeepEqual(one, three) {
		t.Errorf("1 and 3 workers give different cells")
	}
}

// Cells come out as planned: every algorithm, model, shape and width, with
// the trials asked for or the budget's cap, and outcomes the algorithms'
// structure dictates.
func TestDetectCells(t *testing.T) {
	const trials = 500
	algos := append(Algos(), xor8())
	cfg := smallConfig(trials, 2)
	got := Detect(cfg, algos, Shapes, Models())
	find := func(name, shape, model string, width int) DetCell {
		t.Helper()
		for _, c := range got[name] {
			if c.Shape == shape && c.Model == model && c.Width == width {
				return c
			}
		}
		t.Fatalf("no cell %s %s %s %d", name, shape, model, width)
		return DetCell{}
	}
	for _, a := range algos {
		widths := 1
		if a.Width > 16 {
			widths = 2
		}
		if n := len(got[a.Name]); n != len(Shapes)*int(numModels)*widths {
			t.Errorf("%s: %d cells, want %d", a.Name, n, len(Shapes)*int(numModels)*widths)
		}
		for _, c := range got[a.Name] {
			src := a
			if a.SameAs != "" {
				src = algos[0]
			}
			want, _ := cfg.plan(src, modelByKey(c.Model), shapeByKey(c.Shape))
			if c.Trials != int64(want) || c.Capped != (want < trials) {
				t.Errorf("%s %s %s: %d trials (capped %v), planned %d", a.Name, c.Shape, c.Model, c.Trials, c.Capped, want)
			}
			if c.Upper95 < c.Observed || c.Upper95 > 1 {
				t.Errorf("%s %s %s: bound %g against observed %g", a.Name, c.Shape, c.Model, c.Upper95, c.Observed)
			}
		}
	}
	// The budget caps: recomputing a 256 KiB record 500 times is more than
	// 64 MiB, and so is making 500 fresh ones.
	if c := find("xxh3", "record256k", "flip1", 64); c.Trials != 256 || !c.Capped || c.Method != MethodRecompute {
		t.Errorf("xxh3 record flip1: %+v, want 256 recomputed trials", c)
	}
	if c := find("crc32c/best", "record256k", "zerotoff", 32); c.Trials != 32 || c.Method != MethodFresh {
		t.Errorf("crc32c record 00→FF: %+v, want 32 fresh trials", c)
	}
	if c := find("crc32c/generic", "page8k", "flip2", 32); c.Method != MethodSameAs+"crc32c/best "+MethodCRC {
		t.Errorf("crc32c/generic's method %q", c.Method)
	}
	// Structure: Fletcher-16 cannot see 00→FF; Adler-32's and Fletcher-32's
	// low halves are plain sums, blind to order; so is xor8 at any width; a
	// CRC catches every burst of up to its degree.
	for _, s := range Shapes {
		if c := find("fletcher16", s.Key, "zerotoff", 16); c.Missed != c.Trials {
			t.Errorf("fletcher16 %s 00→FF: missed %d of %d, want all", s.Key, c.Missed, c.Trials)
		}
		for _, name := range []string{"adler32", "fletcher32"} {
			if c := find(name, s.Key, "swapblocks", 16); c.Missed != c.Trials {
				t.Errorf("%s low 16 bits %s swap: missed %d of %d, want all", name, s.Key, c.Missed, c.Trials)
			}
		}
		if c := find("xor8", s.Key, "swapblocks", 8); c.Missed != c.Trials || c.Upper95 != 1 {
			t.Errorf("xor8 %s swap: %+v, want all missed", s.Key, c)
		}
		if c := find("xor8", s.Key, "flip1", 8); c.Missed != 0 {
			t.Errorf("xor8 %s flip1: missed %d", s.Key, c.Missed)
		}
		// (At full width only: a CRC's low 16 bits are no CRC-16.)
		for _, name := range []string{"crc32c/best", "crc32-ieee", "crc64-ecma"} {
			a := algoByName(t, name)
			for _, m := range []string{"flip1", "burst32"} {
				if c := find(name, s.Key, m, a.Width); c.Missed != 0 {
					t.Errorf("%s %s %s: missed %d", name, s.Key, m, c.Missed)
				}
			}
		}
	}
}

func shapeByKey(k string) Shape {
	for _, s := range Shapes {
		if s.Key == k {
			return s
		}
	}
	return Shape{}
}
