package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
)

func init() {
	register(command{name: "cksum-bench", summary: "measure crc32c implementations and checksum modes", run: runCksumBench})
}

const cksumBenchAbout = `
Measures the throughput of every crc32c implementation this CPU has at each
size, as a ratio to Go's hash/crc32 measured in the same run, then the cost of
each checksum mode on a full 256 KiB log record (8 header blocks + payload):
crc32c calls per record, GB/s and ratio to batched; then CopyUpdate, the
one-pass copy and checksum, against copy alone and copy then Update.

Samples of every implementation and size are taken in turns (round robin),
so that drift of the machine falls on all of them alike; the median is shown.`

type cksumSizeResult struct {
	Bytes       int64   `json:"bytes"`
	GBps        float64 `json:"gbps"`
	RatioStdlib float64 `json:"ratio_stdlib"`
}

type cksumImplResult struct {
	Name  string            `json:"name"`
	Desc  string            `json:"desc"`
	Sizes []cksumSizeResult `json:"sizes"`
}

type cksumModeResult struct {
	Mode           string  `json:"mode"`
	CallsPerRecord int     `json:"calls_per_record"`
	GBps           float64 `json:"gbps"`
	RatioBatched   float64 `json:"ratio_batched"`
}

type cksumBenchResult struct {
	Best        string            `json:"best"`
	Impls       []cksumImplResult `json:"impls"`
	ModeImpl    string            `json:"mode_impl"`
	RecordBytes int               `json:"record_bytes"`
	Modes       []cksumModeResult `json:"modes"`
	CopyUpdate  []cksumCopyResult `json:"copy_update,omitempty"`
}

func runCksumBench(args []string) error {
	fs := newFlags("cksum-bench", "[--impls a,b] [--sizes 64,512,4k,32k,256k] [--time 2s] [--copy=false] [--json]", cksumBenchAbout)
	implsFlag := fs.String("impls", "all", "implementations to measure, comma-separated (stdlib is always measured, as the reference)")
	sizesFlag := fs.String("sizes", "64,512,4k,32k,256k", "buffer sizes, comma-separated, with k/m suffixes")
	modesFlag := fs.String("modes", "batched,xfs,sector", "checksum modes to compare on a 256 KiB record ('' to skip)")
	modeImpl := fs.String("mode-impl", "auto", "implementation the mode comparison uses")
	total := fs.Duration("time", 2*time.Second, "approximate measuring time per implementation")
	rounds := fs.Int("rounds", 7, "samples per measurement (the median is reported)")
	copyUpd := fs.Bool("copy", true, "measure CopyUpdate against copy and copy+Update")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	impls, err := selectImpls(*implsFlag)
	if err != nil {
		return err
	}
	var sizes []int64
	for _, s := range strings.Split(*sizesFlag, ",") {
		n, err := parseSize(s)
		if err != nil {
			return fmt.Errorf("--sizes: %v", err)
		}
		if n == 0 || n > 64<<20 {
			return fmt.Errorf("--sizes: %s out of range (1 byte to 64 MiB)", s)
		}
		sizes = append(sizes, n)
	}
	var modes []cksum.Mode
	if *modesFlag != "" {
		for _, s := range strings.Split(*modesFlag, ",") {
			m, err := cksum.ParseMode(strings.TrimSpace(s))
			if err != nil {
				return fmt.Errorf("--modes: %v", err)
			}
			modes = append(modes, m)
		}
	}
	mimpl, err := cksum.Lookup(*modeImpl)
	if err != nil {
		return fmt.Errorf("--mode-impl: %v", err)
	}
	if *rounds < 1 || *total <= 0 {
		return fmt.Errorf("--rounds and --time must be positive")
	}

	res := cksumBenchResult{Best: cksum.Best().Name, ModeImpl: mimpl.Name, RecordBytes: 256 << 10}
	per := *total / time.Duration(len(sizes)*(*rounds))
	if !*asJSON {
		fmt.Fprintf(os.Stderr, "measuring %d implementations × %d sizes, %d rounds ...\n", len(impls), len(sizes), *rounds)
	}
	// Round-robin samples: every (impl, size) once per round.
	type key struct{ impl, size int }
	samples := map[key][]float64{}
	bufs := make([][]byte, len(sizes))
	for i, n := range sizes {
		bufs[i] = make([]byte, n)
		for j := range bufs[i] {
			bufs[i][j] = byte(j*131 + 7)
		}
	}
	for range *rounds {
		for si := range sizes {
			for ii, im := range impls {
				buf := bufs[si]
				samples[key{ii, si}] = append(samples[key{ii, si}], throughput(per, len(buf), func() { sink ^= im.Update(sink, buf) }))
			}
		}
	}
	stdlibIdx := slices.IndexFunc(impls, func(im cksum.Impl) bool { return im.Name == "stdlib" })
	for ii, im := range impls {
		r := cksumImplResult{Name: im.Name, Desc: im.Desc}
		for si, n := range sizes {
			g := median(samples[key{ii, si}])
			r.Sizes = append(r.Sizes, cksumSizeResult{Bytes: n, GBps: g / 1e9, RatioStdlib: g / median(samples[key{stdlibIdx, si}])})
		}
		res.Impls = append(res.Impls, r)
	}

	// Modes: a full 256 KiB record from a 256 KiB iclog, 8 header blocks.
	if len(modes) > 0 {
		rec := make([]byte, res.RecordBytes)
		hdr := 8 * cksum.BlockSize
		msamples := make([][]float64, len(modes))
		calls := make([]int, len(modes))
		mper := *total / time.Duration(len(modes)*(*rounds))
		for range *rounds {
			for mi, m := range modes {
				_, calls[mi] = cksum.Sum(m, mimpl.Update, rec, hdr)
				msamples[mi] = append(msamples[mi], throughput(mper, len(rec), func() {
					c, _ := cksum.Sum(m, mimpl.Update, rec, hdr)
					sink ^= c
				}))
			}
		}
		base := median(msamples[0])
		if i := slices.Index(modes, cksum.Batched); i >= 0 {
			base = median(msamples[i])
		}
		for mi, m := range modes {
			g := median(msamples[mi])
			res.Modes = append(res.Modes, cksumModeResult{Mode: m.String(), CallsPerRecord: calls[mi], GBps: g / 1e9, RatioBatched: g / base})
		}
	}

	if *copyUpd {
		res.CopyUpdate = measureCopyUpdate(impls, sizes, *total, *rounds)
	}

	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	printCksumBench(os.Stdout, res)
	printCopyUpdate(os.Stdout, res.CopyUpdate)
	return nil
}

// sink keeps the compiler from dropping the work measured.
var sink uint32

// selectImpls resolves --impls, always including stdlib (the reference).
func selectImpls(spec string) ([]cksum.Impl, error) {
	all := cksum.Impls()
	if spec == "all" || spec == "" {
		return all, nil
	}
	var out []cksum.Impl
	for _, name := range strings.Split(spec, ",") {
		im, err := cksum.Lookup(strings.TrimSpace(name))
		if err != nil {
			return nil, fmt.Errorf("--impls: %v", err)
		}
		if !slices.ContainsFunc(out, func(o cksum.Impl) bool { return o.Name == im.Name }) {
			out = append(out, im)
		}
	}
	if !slices.ContainsFunc(out, func(o cksum.Impl) bool { return o.Name == "stdlib" }) {
		std, _ := cksum.Lookup("stdlib")
		out = append(out, std)
	}
	return out, nil
}

// throughput runs f (which processes n bytes) for about d and returns bytes
// per second. The iteration count is calibrated first, so the clock is read
// twice per sample, not per call.
func throughput(d time.Duration, n int, f func()) float64 {
	iters := 1
	for {
		start := time.Now()
		for range iters {
			f()
		}
		el := time.Since(start)
		if el >= d || el >= 50*time.Millisecond && iters > 0 {
			return float64(n) * float64(iters) / el.Seconds()
		}
		if el < time.Microsecond {
			iters *= 100
		} else {
			iters = int(float64(iters)*float64(d)/float64(el)) + 1
		}
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func printCksumBench(w io.Writer, r cksumBenchResult) {
	fmt.Fprintf(w, "crc32c throughput, GB/s (ratio to stdlib hash/crc32 in this run); auto = %s\n\n", r.Best)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "impl\t")
	for _, s := range r.Impls[0].Sizes {
		fmt.Fprintf(tw, "%s\t", humanSize(s.Bytes))
	}
	fmt.Fprintln(tw)
	for _, im := range r.Impls {
		fmt.Fprintf(tw, "%s\t", im.Name)
		for _, s := range im.Sizes {
			fmt.Fprintf(tw, "%.2f (%.2f×)\t", s.GBps, s.RatioStdlib)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if len(r.Modes) == 0 {
		return
	}
	fmt.Fprintf(w, "\nchecksum modes on a full %s record (8 header blocks + payload), impl %s\n\n", humanSize(int64(r.RecordBytes)), r.ModeImpl)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tcalls/record\tGB/s\tvs batched\t")
	for _, m := range r.Modes {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f×\t\n", m.Mode, m.CallsPerRecord, m.GBps, m.RatioBatched)
	}
	tw.Flush()
}
