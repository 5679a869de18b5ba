package profiling_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/xlogfs/xlogfs/profiling"
)

const ms = 1e6 // nanoseconds

// handProfile builds a CPU profile with known samples, laid out as
// runtime/pprof lays out its own (samples/count, cpu/nanoseconds). Of its
// 170 ms, 70 are checksum code, and 30 the checksum counters' bookkeeping
// (their clock reads, and Record's own code):
//
//	stack (leaf first)                       labels                ms  count
//	crc32cAVX512, Sum, Record, main          batched, checksum     30  3
//	sha256.block, main                       -                     50  5
//	crc32.Update, main                       xfs, checksum         10  1
//	[Sum inlined in force], main             sector, checksum      20  2
//	futex, force                             sector, phase=flush   10  1
//	busy                                     batched               10  1
//	Checksum, fusefs.write                   -                     10  1
//	RawSyscall6, [ticks in Record]           batched, checksum     20  2
//	time.now, Record, main                   batched, checksum     10  1
func handProfile() *profile.Profile {
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        10 * ms,
		DurationNanos: 1000 * ms,
	}
	funcs := map[string]*profile.Function{}
	fn := func(name string) *profile.Function {
		if f, ok := funcs[name]; ok {
			return f
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		funcs[name] = f
		p.Function = append(p.Function, f)
		return f
	}
	locs := map[string]*profile.Location{}
	// loc returns the location of names, the first inlined into the next.
	loc := func(names ...string) *profile.Location {
		key := strings.Join(names, "|")
		if l, ok := locs[key]; ok {
			return l
		}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Address: 0x1000 * uint64(len(p.Location)+1)}
		for _, n := range names {
			l.Line = append(l.Line, profile.Line{Function: fn(n), Line: 1})
		}
		locs[key] = l
		p.Location = append(p.Location, l)
		return l
	}
	sample := func(count, nanos int64, labels map[string][]string, stack ...*profile.Location) {
		p.Sample = append(p.Sample, &profile.Sample{Location: stack, Value: []int64{count, nanos}, Label: labels})
	}
	const (
		record  = "github.com/xlogfs/xlogfs/cksum.(*Summer).Record"
		sum     = "github.com/xlogfs/xlogfs/cksum.Sum"
		avx512  = "github.com/xlogfs/xlogfs/amd64.crc32cAVX512"
		stdlib  = "hash/crc32.Update"
		force   = "github.com/xlogfs/xlogfs/journal.(*Log).force"
		write   = "github.com/xlogfs/xlogfs/fusefs.(*file).Write"
		summain = "main.main"
		clock   = "github.com/xlogfs/xlogfs/cksum.ticks"
	)
	labels := func(kv ...string) map[string][]string {
		m := map[string][]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = append(m[kv[i]], kv[i+1])
		}
		return m
	}
	sample(3, 30*ms, labels("cksum_mode", "batched", "phase", "checksum"), loc(avx512), loc(sum), loc(record), loc(summain))
	sample(5, 50*ms, nil, loc("crypto/sha256.block"), loc(summain))
	sample(1, 10*ms, labels("cksum_mode", "xfs", "phase", "checksum"), loc(stdlib), loc(summain))
	sample(2, 20*ms, labels("cksum_mode", "sector", "phase", "checksum"), loc(sum, force), loc(summain))
	sample(1, 10*ms, labels("cksum_mode", "sector", "phase", "flush"), loc("runtime.futex"), loc(force))
	sample(1, 10*ms, labels("cksum_mode", "batched"), loc("main.busy"))
	sample(1, 10*ms, nil, loc("github.com/xlogfs/xlogfs/cksum.Checksum"), loc(write))
	sample(2, 20*ms, labels("cksum_mode", "batched", "phase", "checksum"), loc("syscall.RawSyscall6"), loc(clock, record), loc(summain))
	sample(1, 10*ms, labels("cksum_mode", "batched", "phase", "checksum"), loc("time.now"), loc(record), loc(summain))
	if err := p.CheckValid(); err != nil {
		panic(err)
	}
	return p
}

// wantHand is handProfile's Share, times n (for n copies of it).
func wantHand(n int) profiling.Share {
	k := float64(n)
	sec := func(v float64) float64 { return k * v * ms / 1e9 }
	return profiling.Share{
		Profiles:        n,
		Samples:         17 * int64(n),
		DurationSeconds: k,
		CPUSeconds:      sec(170),
		ChecksumSeconds: sec(70),
		ChecksumShare:   70.0 / 170,
		PhaseSeconds:    sec(60),
		PhaseShare:      60.0 / 170,
		TimingSeconds:   sec(30),
		TimingShare:     30.0 / 170,
		Modes: []profiling.ModeShare{
			{Mode: "batched", CPUSeconds: sec(70), Share: 70.0 / 170, ChecksumSeconds: sec(30), ChecksumShare: 30.0 / 170},
			{Mode: "xfs", CPUSeconds: sec(10), Share: 10.0 / 170, ChecksumSeconds: sec(10), ChecksumShare: 10.0 / 170},
			{Mode: "sector", CPUSeconds: sec(30), Share: 30.0 / 170, ChecksumSeconds: sec(20), ChecksumShare: 20.0 / 170},
		},
	}
}

func checkShare(t *testing.T, got, want profiling.Share) {
	t.Helper()
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
	if got.Profiles != want.Profiles || got.Samples != want.Samples ||
		!near(got.DurationSeconds, want.DurationSeconds) || !near(got.CPUSeconds, want.CPUSeconds) ||
		!near(got.ChecksumSeconds, want.ChecksumSeconds) || !near(got.ChecksumShare, want.ChecksumShare) ||
		!near(got.PhaseSeconds, want.PhaseSeconds) || !near(got.PhaseShare, want.PhaseShare) ||
		!near(got.TimingSeconds, want.TimingSeconds) || !near(got.TimingShare, want.TimingShare) ||
		len(got.Modes) != len(want.Modes) {
		t.Fatalf("Share:\n got %+v\nwant %+v", got, want)
	}
	for i, g := range got.Modes {
		w := want.Modes[i]
		if g.Mode != w.Mode || !near(g.CPUSeconds, w.CPUSeconds) || !near(g.Share, w.Share) ||
			!near(g.ChecksumSeconds, w.ChecksumSeconds) || !near(g.ChecksumShare, w.ChecksumShare) {
			t.Errorf("Modes[%d]:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func TestAnalyzeHandBuilt(t *testing.T) {
	got, err := profiling.Analyze(handProfile())
	if err != nil {
		t.Fatal(err)
	}
	checkShare(t, got, wantHand(1))
}

func TestAnalyzeSeveral(t *testing.T) {
	// Three profiles analysed together, or merged first, or written to
	// files (gzipped, as runtime/pprof writes them) and read back, all
	// give three times the seconds and the same shares.
	three := []*profile.Profile{handProfile(), handProfile(), handProfile()}
	got, err := profiling.Analyze(three...)
	if err != nil {
		t.Fatal(err)
	}
	checkShare(t, got, wantHand(3))

	merged, err := profile.Merge(three)
	if err != nil {
		t.Fatal(err)
	}
	got, err = profiling.Analyze(merged)
	if err != nil {
		t.Fatal(err)
	}
	want := wantHand(3)
	want.Profiles = 1
	checkShare(t, got, want)

	var paths []string
	for i, p := range three {
		path := filepath.Join(t.TempDir(), "cpu"+string(rune('0'+i))+".pprof")
		writeProfile(t, path, p)
		paths = append(paths, path)
	}
	got, err = profiling.AnalyzeFiles(paths...)
	if err != nil {
		t.Fatal(err)
	}
	checkShare(t, got, wantHand(3))
}

func writeProfile(t *testing.T, path string, p *profile.Profile) {
	t.Helper()
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAnalyzeEmpty(t *testing.T) {
	// A profile of an idle process has no samples: zero shares, not NaN.
	p := handProfile()
	p.Sample = nil
	got, err := profiling.Analyze(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.CPUSeconds != 0 || got.ChecksumShare != 0 || got.PhaseShare != 0 || len(got.Modes) != 0 || got.Modes == nil {
		t.Errorf("empty profile: %+v", got)
	}
}

func TestAnalyzeNotCPU(t *testing.T) {
	heap := handProfile()
	heap.SampleType = []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}}
	_, err := profiling.Analyze(heap)
	if err == nil || !strings.Contains(err.Error(), "not a CPU profile") || !strings.Contains(err.Error(), "alloc_space/bytes") {
		t.Errorf("heap profile: err = %v, want not a CPU profile naming its sample types", err)
	}
	_, err = profiling.Analyze(handProfile(), heap)
	if err == nil || !strings.Contains(err.Error(), "profile 2 of 2") {
		t.Errorf("second profile a heap profile: err = %v, want it to say which", err)
	}

	bare := handProfile()
	for _, l := range bare.Location {
		l.Line = nil
	}
	if _, err := profiling.Analyze(bare); err == nil || !strings.Contains(err.Error(), "symbolized") {
		t.Errorf("unsymbolized profile: err = %v", err)
	}
}

func TestAnalyzeFilesErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.pprof")
	writeProfile(t, good, handProfile())
	files := map[string][]byte{
		"empty.pprof":     {},
		"text.pprof":      []byte("this is not a profile\n"),
		"garbage.pprof":   {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x34},
		"truncated.pprof": nil, // filled below
	}
	var b bytes.Buffer
	handProfile().Write(&b)
	files["truncated.pprof"] = b.Bytes()[:b.Len()/2]
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := profiling.AnalyzeFiles(good, path)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err = %v, want an error naming the file", name, err)
		}
	}
	missing := filepath.Join(dir, "missing.pprof")
	if _, err := profiling.AnalyzeFiles(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: err = %v, want an error naming it", err)
	}
	if _, err := profiling.AnalyzeFiles(); err == nil {
		t.Error("no files: no error")
	}
}
