package algobench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
)

// Options is one algo-bench run.
type Options struct {
	Algos       []*Algo
	SpeedSizes  []int
	SpeedTime   time.Duration
	SpeedRounds int
	Detect      DetectConfig
	Scan        ScanConfig
	// Sections to run: "speed", "detection", "scan".
	Sections map[string]bool
	// Out is where results.json, report.txt and chart.svg go ("" = nowhere).
	Out string
	// Log gets progress notes (nil: none).
	Log io.Writer
}

// Results is results.json.
type Results struct {
	GoVersion    string            `json:"go_version"`
	GOARCH       string            `json:"goarch"`
	CPUs         int               `json:"cpus"`
	CRC32CKernel string            `json:"crc32c_kernel"`
	Trials       int               `json:"trials"` // asked per detection cell
	Seed         uint64            `json:"seed"`
	Workers      int               `json:"workers"`
	Seconds      map[string]int64  `json:"seconds"` // wall time per section
	Shapes       []Shape           `json:"records"`
	Models       []ModelResult     `json:"models"`
	Methods      map[string]string `json:"methods"`
	Scan         *ScanResult       `json:"scan,omitempty"`
	Algos        []AlgoResult      `json:"algorithms"`
	Goal         *Goal             `json:"goal,omitempty"`
	Summary      []string          `json:"summary"`
}

// ModelResult describes a damage model in results.json.
type ModelResult struct {
	Key    string `json:"key"`
	Desc   string `json:"desc"`
	UpTo32 bool   `json:"up_to_32_bits"`
}

// AlgoResult is everything measured for one algorithm.
type AlgoResult struct {
	Name         string      `json:"name"`
	Desc         string      `json:"desc"`
	Source       string      `json:"source"`
	Width        int         `json:"width"`
	SameAs       string      `json:"same_as,omitempty"`
	Speed        []SpeedCell `json:"speed"`
	Detection    []DetCell   `json:"detection"`
	ScanSlowdown *float64    `json:"scan_slowdown"` // fraction: 0.25 = 25 % slower
	Scan         *ScanAlgo   `json:"scan,omitempty"`
	// PGThread is the figure PostgreSQL's page-checksum thread reported
	// for the comparable algorithm, for the scan table.
	PGThread string `json:"pg_thread,omitempty"`
}

// Goal is the goal, as measured: crc32c/best costs under 5 % on the
// scan and misses nothing of up to 32 bits.
type Goal struct {
	ScanSlowdown  *float64 `json:"scan_slowdown"`
	ScanUnder5    bool     `json:"scan_under_5_percent"`
	TrialsUpTo32  int64    `json:"trials_up_to_32_bits"`
	MissedUpTo32  int64    `json:"missed_up_to_32_bits"`
	NoMissUpTo32  bool     `json:"no_miss_up_to_32_bits"`
	Met           bool     `json:"met"`
	MeasuredParts []string `json:"measured"`
}

// pgThread holds the read-path figures from PostgreSQL's page-checksum
// thread, by the algorithm here closest to what was measured there.
var pgThread = map[string]string{
	"fletcher16":     "Fletcher-16: 24–32 %",
	"pg-fnv":         "FNV-1a (committed): 19–27 %",
	"crc32c/generic": "truncated CRC, table-driven: 146–224 %",
	"crc32-ieee":     "truncated CRC, table-driven: 146–224 %",
}

// Run measures, writes the report to w (or results.json with asJSON), and
// keeps results.json, report.txt and chart.svg in o.Out.
func Run(o Options, w io.Writer, asJSON bool) (*Results, error) {
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	res := &Results{
		GoVersion: runtime.Version(), GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(),
		CRC32CKernel: cksum.Best().Name, Trials: o.Detect.Trials, Seed: o.Detect.Seed,
		Workers: o.Detect.Workers, Seconds: map[string]int64{}, Shapes: Shapes,
		Methods: MethodDesc,
	}
	for _, m := range Models() {
		in := m.Info()
		res.Models = append(res.Models, ModelResult{Key: in.Key, Desc: in.Desc, UpTo32: in.UpTo32})
	}
	for _, a := range o.Algos {
		res.Algos = append(res.Algos, AlgoResult{Name: a.Name, Desc: a.Desc, Source: a.Source,
			Width: a.Width, SameAs: a.SameAs, PGThread: pgThread[a.Name]})
	}
	if o.Out != "" {
		if err := os.MkdirAll(o.Out, 0o755); err != nil {
			return nil, fmt.Errorf("--out: %w", err)
		}
	}

	// Speed and the scan first, one goroutine each and nothing else running;
	// detection, which uses every core, last.
	if o.Sections["speed"] {
		logf("speed: %d algorithms × %d sizes, %d rounds, about %v ...", len(o.Algos), len(o.SpeedSizes), o.SpeedRounds, o.SpeedTime)
		start := time.Now()
		sp := Speed(SpeedConfig{Sizes: o.SpeedSizes, Total: o.SpeedTime, Rounds: o.SpeedRounds}, o.Algos, o.Detect.Seed)
		for i := range res.Algos {
			res.Algos[i].Speed = sp[res.Algos[i].Name]
		}
		res.Seconds["speed"] = int64(time.Since(start).Seconds() + 0.5)
	}
	if o.Sections["scan"] {
		logf("scan: %s file in %s, 8 KiB preads, %d rounds ...", humanBytes(o.Scan.Bytes), dirName(o.Scan.Dir), o.Scan.Rounds)
		start := time.Now()
		sc, err := Scan(o.Scan, o.Algos, o.Detect.Seed)
		if err != nil {
			return nil, err
		}
		res.Scan = &sc
		for i := range res.Algos {
			if s, ok := sc.Algos[res.Algos[i].Name]; ok {
				s := s
				res.Algos[i].Scan = &s
				res.Algos[i].ScanSlowdown = &s.Slowdown
			}
		}
		res.Seconds["scan"] = int64(time.Since(start).Seconds() + 0.5)
	}
	if o.Sections["detection"] {
		logf("detection: %d trials per cell, %d models × 2 buffers, %d workers ...", o.Detect.Trials, numModels, o.Detect.Workers)
		start := time.Now()
		det := Detect(o.Detect, o.Algos, Shapes, Models())
		for i := range res.Algos {
			res.Algos[i].Detection = det[res.Algos[i].Name]
		}
		res.Seconds["detection"] = int64(time.Since(start).Seconds() + 0.5)
	}
	res.Goal = goal(res, o.Sections)
	res.Summary = summarize(res)

	var report strings.Builder
	writeReport(&report, res)
	if o.Out != "" {
		if err := writeJSON(filepath.Join(o.Out, "results.json"), res); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(o.Out, "report.txt"), []byte(report.String()), 0o644); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		if o.Sections["speed"] && o.Sections["detection"] {
			if err := writeChart(filepath.Join(o.Out, "chart.svg"), res); err != nil {
				return nil, err
			}
		}
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return res, enc.Encode(res)
	}
	_, err := io.WriteString(w, report.String())
	if err == nil && o.Out != "" {
		_, err = fmt.Fprintf(w, "\nresults.json, report.txt%s in %s\n", map[bool]string{true: " and chart.svg"}[o.Sections["speed"] && o.Sections["detection"]], o.Out)
	}
	return res, err
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func dirName(d string) string {
	if d == "" {
		return os.TempDir()
	}
	return d
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
