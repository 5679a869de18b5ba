package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchstat"
	"github.com/xlogfs/xlogfs/logbuf"
)

func init() {
	register(command{name: "cksum-bench", summary: "measure crc32c implementations and checksum modes", args: "", min: 0, max: 0, setup: runCksumBench})
}

const cksumBenchAbout = `
Measures the throughput of every crc32c implementation this CPU has at each
size, as a ratio to Go's hash/crc32 measured in the same run: our kernels
(auto is the one xlogfs uses, and the output says why: the CPU's features
and where each kernel changes method by length, as calibrated at start),
stdlib, linux (Linux's own crc32c dispatch for this CPU, mirrored from our
code: on x86 one CRC32Q chain below 512 bytes, so 512-byte sectors and
XFS's per-region calls stay on its short path) and generic; then sweeps the
checksum modes over record sizes for each implementation: crc32c calls per
record, ns per record, and the ratio to batched at the same size and
implementation. That is where batching pays: many short calls cost a fast
kernel far more than one long call, a slow kernel hardly more. Then
CopyUpdate, the one-pass copy and checksum, against copy alone and copy then
Update.

A record of the sweep is laid out as from the smallest iclog that holds it:
one header block per 32 KiB (1 for records up to 32 KiB, 8 for 256 KiB),
the rest payload, under a store's default (whole) CRC coverage: xfs mode
makes one call per header block plus one for the payload (on a store made
with mkfs --crc xfs it makes xlog_cksum's calls instead), sector mode one
per 512-byte block. Inline mode's cell is its work
at seal, on the log force's path: one call over the header blocks and the
Combine with the payload's CRC, which it computed as the ops were copied in
(that work is the CopyUpdate section's).

Samples of every implementation and size (and of every cell of the sweep)
are taken in turns (round robin), so that drift of the machine falls on all
of them alike; the median is shown.`

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

// cksumSweepResult is one cell of the record-size sweep.
type cksumSweepResult struct {
	Impl           string  `json:"impl"`
	RecordBytes    int     `json:"record_bytes"`
	HeaderBlocks   int     `json:"header_blocks"`
	Mode           string  `json:"mode"`
	CallsPerRecord int     `json:"calls_per_record"`
	NsPerRecord    float64 `json:"ns_per_record"`
	RatioBatched   float64 `json:"ratio_batched"` // ns per record ÷ batched's, same impl and size
}

type cksumBenchResult struct {
	Best       string             `json:"best"`
	Choice     cksum.Choice       `json:"choice"` // why Best, and each kernel's methods by length
	Impls      []cksumImplResult  `json:"impls"`
	Sweep      []cksumSweepResult `json:"sweep"`
	CopyUpdate []cksumCopyResult  `json:"copy_update,omitempty"`
}

func runCksumBench(fs *flagSet) func(pos []string) error {
	fs.about = cksumBenchAbout
	implsFlag := fs.String("impls", "all", "implementations to measure, comma-separated (stdlib is always measured, as the reference)")
	sizesFlag := fs.String("sizes", "64,512,4k,32k,256k", "buffer sizes, comma-separated, with k/m suffixes")
	modesFlag := fs.String("modes", "batched,xfs,sector,inline", "checksum modes of the record-size sweep: batched, xfs (or per-chunk), sector, inline ('' to skip it); inline's is its work at seal")
	recSizes := fs.String("record-sizes", "4k,8k,16k,32k,64k,128k,256k", "record sizes of the sweep, comma-separated, multiples of 512 from 1k to 256k")
	total := fs.Duration("time", 2*time.Second, "approximate measuring time per implementation, for the sizes and again for the sweep")
	rounds := fs.Int("rounds", 7, "samples per measurement (the median is reported)")
	copyUpd := fs.Bool("copy", true, "measure CopyUpdate against copy and copy+Update")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	return func(_ []string) (err error) {
		impls, err := selectImpls(*implsFlag)
		if err != nil {
			return fs.usagef("%v", err)
		}
		var sizes []int64
		for _, s := range strings.Split(*sizesFlag, ",") {
			n, err := parseSize(s)
			if err != nil {
				return fs.usagef("--sizes: %v", err)
			}
			if n == 0 || n > 64<<20 {
				return fs.usagef("--sizes: %s out of range (1 byte to 64 MiB)", s)
			}
			sizes = append(sizes, n)
		}
		var modes []cksum.Mode
		if *modesFlag != "" {
			for _, s := range strings.Split(*modesFlag, ",") {
				m, err := cksum.ParseMode(strings.TrimSpace(s))
				if err != nil {
					return fs.usagef("--modes: %v", err)
				}
				modes = append(modes, m)
			}
		}
		var records []int
		if len(modes) > 0 {
			for _, s := range strings.Split(*recSizes, ",") {
				n, err := parseSize(s)
				if err != nil {
					return fs.usagef("--record-sizes: %v", err)
				}
				if n < 2*cksum.BlockSize || n > logbuf.MaxLogBSize || n%cksum.BlockSize != 0 {
					return fs.usagef("--record-sizes: %s is not a multiple of 512 from 1k to 256k", s)
				}
				records = append(records, int(n))
			}
		}
		if *rounds < 1 || *total <= 0 {
			return fs.usagef("--rounds and --time must be positive")
		}

		res := cksumBenchResult{Best: cksum.Best().Name, Choice: cksum.Chosen()}
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
				g := benchstat.MedianValue(samples[key{ii, si}])
				r.Sizes = append(r.Sizes, cksumSizeResult{Bytes: n, GBps: g / 1e9, RatioStdlib: g / benchstat.MedianValue(samples[key{stdlibIdx, si}])})
			}
			res.Impls = append(res.Impls, r)
		}

		if len(modes) > 0 && len(records) > 0 {
			res.Sweep = sweepModes(impls, modes, records, *rounds, *total)
		}

		if *copyUpd {
			res.CopyUpdate = measureCopyUpdate(impls, sizes, *total, *rounds)
		}

		if *asJSON {
			return printJSON(os.Stdout, res)
		}
		printCksumBench(os.Stdout, res)
		printCopyUpdate(os.Stdout, res.CopyUpdate)
		return nil
	}
}

// sweepModes measures every mode at every record size with every
// implementation, in turns, and gives each cell's ns per record and its
// ratio to batched at the same size and implementation. The sweep gets
// about total per implementation.
func sweepModes(impls []cksum.Impl, modes []cksum.Mode, records []int, rounds int, total time.Duration) []cksumSweepResult {
	type cell struct{ impl, rec, mode int }
	samples := map[cell][]float64{}
	calls := map[cell]int{}
	bufs := make([][]byte, len(records))
	for i, n := range records {
		bufs[i] = make([]byte, n)
		for j := range bufs[i] {
			bufs[i][j] = byte(j*151 + 3)
		}
	}
	hdr := func(n int) int { return logbuf.HeaderBlocks(n) * cksum.BlockSize }
	per := total / time.Duration(len(records)*len(modes)*rounds)
	for range rounds {
		for ri, rec := range bufs {
			for ii, im := range impls {
				for mi, m := range modes {
					c := cell{ii, ri, mi}
					h := hdr(len(rec))
					var f func()
					if m == cksum.Inline {
						// At seal: the header blocks, combined with
						// the payload's CRC, kept since the copy.
						pay := im.Update(0, rec[h:])
						calls[c] = 1
						f = func() { sink ^= im.Combine(im.Update(0, rec[:h]), pay, len(rec)-h) }
					} else {
						_, calls[c] = cksum.Sum(m, im.Update, rec, h)
						f = func() {
							crc, _ := cksum.Sum(m, im.Update, rec, h)
							sink ^= crc
						}
					}
					bps := throughput(per, len(rec), f)
					samples[c] = append(samples[c], float64(len(rec))/bps*1e9)
				}
			}
		}
	}
	batched := slices.Index(modes, cksum.Batched)
	var out []cksumSweepResult
	for ii, im := range impls {
		for ri, n := range records {
			for mi, m := range modes {
				c := cell{ii, ri, mi}
				ns := benchstat.MedianValue(samples[c])
				r := cksumSweepResult{Impl: im.Name, RecordBytes: n, HeaderBlocks: hdr(n) / cksum.BlockSize, Mode: m.String(),
					CallsPerRecord: calls[c], NsPerRecord: ns}
				if batched >= 0 {
					r.RatioBatched = ns / benchstat.MedianValue(samples[cell{ii, ri, batched}])
				}
				out = append(out, r)
			}
		}
	}
	return out
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

func printCksumBench(w io.Writer, r cksumBenchResult) {
	fmt.Fprintf(w, "crc32c throughput, GB/s (ratio to stdlib hash/crc32 in this run); auto = %s\n", r.Best)
	c := r.Choice
	printChoice(w, "  ", c.Reason, c.CPU, c.Calibration, c.Plans, c.Linux)
	fmt.Fprintln(w)
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
	if len(r.Sweep) == 0 {
		return
	}
	fmt.Fprintln(w, "\nchecksum modes by record size (header blocks: one per 32 KiB), per implementation;")
	fmt.Fprintln(w, "each cell: crc32c calls per record: ns per record (× batched at that size)")
	if slices.ContainsFunc(r.Sweep, func(c cksumSweepResult) bool { return c.Mode == cksum.Inline.String() }) {
		fmt.Fprintln(w, "inline: the work at seal only (header blocks + Combine); its payload is checksummed as it is copied in (CopyUpdate, below)")
	}
	var modes []string
	for _, c := range r.Sweep {
		if !slices.Contains(modes, c.Mode) {
			modes = append(modes, c.Mode)
		}
	}
	impl := ""
	for _, c := range r.Sweep {
		if c.Impl != impl {
			if impl != "" {
				tw.Flush()
			}
			impl = c.Impl
			fmt.Fprintf(w, "\n%s\n", impl)
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprint(tw, "record\t")
			for _, m := range modes {
				fmt.Fprintf(tw, "%s\t", m)
			}
			fmt.Fprintln(tw)
		}
		if c.Mode == modes[0] {
			fmt.Fprintf(tw, "%s\t", humanSize(int64(c.RecordBytes)))
		}
		cellText := fmt.Sprintf("%d: %s ns", c.CallsPerRecord, fmtNs(c.NsPerRecord))
		if c.RatioBatched > 0 && c.Mode != "batched" {
			cellText += fmt.Sprintf(" (%.2f×)", c.RatioBatched)
		}
		fmt.Fprintf(tw, "%s\t", cellText)
		if c.Mode == modes[len(modes)-1] {
			fmt.Fprintln(tw)
		}
	}
	tw.Flush()
}

func fmtNs(ns float64) string {
	if ns >= 100 {
		return fmt.Sprintf("%.0f", ns)
	}
	return fmt.Sprintf("%.1f", ns)
}
