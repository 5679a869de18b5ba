package main

import (
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/algobench"
)

func init() {
	register(command{name: "algo-bench", summary: "compare checksum algorithms: speed, damage detected, read-path cost", args: "", min: 0, max: 0, setup: runAlgoBench})
}

const algoBenchAbout = `
Puts the checksums of the log- and page-checksum debates side by side on this
machine: crc32c (cksum's best kernel, and its slicing-by-8), CRC-32/IEEE,
CRC-64/ECMA, Adler-32, Fletcher-16, Fletcher-32, PostgreSQL's page checksum,
xxHash64 and XXH3.

  1. speed: GB/s at each --sizes, as a ratio to crc32c/best in the same run;
  2. detection: the share of damages each misses, with a 95 % upper bound,
     on 8 KiB pages and 256 KiB log records, at its own width and at 16 bits:
     1-3 bit flips, bursts of <=32, 33-64 and 65-4096 bits, a zeroed block,
     a stale block, two blocks swapped, truncation at a block boundary, and
     every 0x00 byte turned 0xFF;
  3. scan: the slowdown of reading a file from the page cache in 8 KiB
     preads when every page is verified, beside PostgreSQL's figures.

Speed and scan run alone on one core; detection uses --workers cores. Cells
that would take too long with full recomputation run fewer trials (marked †,
and "trials" in results.json is per cell). Keeps results.json, report.txt
and chart.svg in --out.`

func runAlgoBench(fs *flagSet) func(pos []string) error {
	fs.about = algoBenchAbout
	algosFlag := fs.String("algos", "all", "algorithms, comma-separated (crc32c/best, the reference, is always included)")
	sizesFlag := fs.String("sizes", "64,512,8k,256k", "buffer sizes for the speed table, comma-separated")
	trials := fs.Int("trials", 200000, "trials per detection cell")
	asJSON := fs.Bool("json", false, "print results.json to stdout instead of the tables")
	out := fs.String("out", "", "directory for results.json, report.txt and chart.svg (default: a new algo-bench-<timestamp>)")
	seed := fs.Uint64("seed", 1, "seed of every random choice (the same seed gives the same detection counts)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "goroutines for detection")
	sections := fs.String("sections", "speed,scan,detection", "what to run, comma-separated")
	speedTime := fs.Duration("speed-time", 8*time.Second, "measuring time of the speed table, all cells together")
	speedRounds := fs.Int("speed-rounds", 5, "samples per speed cell (the median is shown)")
	scanSize := &sizeFlag{n: 1 << 30}
	fs.Var(scanSize, "scan-size", "size of the scan's file")
	scanDir := fs.String("scan-dir", "", "directory for the scan's file, removed after (default: the system's temporary directory)")
	scanRounds := fs.Int("scan-rounds", 3, "scans per algorithm (the median slowdown is shown)")
	recompute := &sizeFlag{n: 8 << 30}
	fs.Var(recompute, "recompute-budget", "bytes of full recomputation a cell may cost; cells of algorithms without an exact shortcut run at most this ÷ buffer size trials")
	fresh := &sizeFlag{n: 2 << 30}
	fs.Var(fresh, "fresh-budget", "bytes of new buffers a 00→FF or truncation cell may make")
	return func(_ []string) (err error) {
		usage := fs.usagef
		algos, err := algobench.SelectAlgos(*algosFlag)
		if err != nil {
			return usage("--algos: %v", err)
		}
		var sizes []int
		for _, s := range strings.Split(*sizesFlag, ",") {
			n, err := parseSize(s)
			if err != nil {
				return usage("--sizes: %v", err)
			}
			if n < 1 || n > 64<<20 {
				return usage("--sizes: %s out of range (1 byte to 64 MiB)", s)
			}
			sizes = append(sizes, int(n))
		}
		secs := map[string]bool{}
		for _, s := range strings.Split(*sections, ",") {
			switch s = strings.TrimSpace(s); s {
			case "speed", "scan", "detection":
				secs[s] = true
			default:
				return usage("--sections: unknown section %q (have speed, scan, detection)", s)
			}
		}
		switch {
		case *trials < 1:
			return usage("--trials must be at least 1")
		case *workers < 1:
			return usage("--workers must be at least 1")
		case *speedRounds < 1 || *speedTime <= 0:
			return usage("--speed-rounds and --speed-time must be positive")
		case *scanRounds < 1:
			return usage("--scan-rounds must be at least 1")
		case scanSize.n < algobench.ScanPage:
			return usage("--scan-size must hold at least one %d-byte page", algobench.ScanPage)
		case recompute.n < 1 || fresh.n < 1:
			return usage("--recompute-budget and --fresh-budget must be positive")
		}
		if *out == "" {
			*out = "algo-bench-" + time.Now().Format("20060102-150405")
		}
		opts := algobench.Options{
			Algos: algos, SpeedSizes: sizes, SpeedTime: *speedTime, SpeedRounds: *speedRounds,
			Detect: algobench.DetectConfig{Trials: *trials, Seed: *seed, Workers: *workers,
				RecomputeBudget: recompute.n, FreshBudget: fresh.n},
			Scan:     algobench.ScanConfig{Bytes: scanSize.n, Dir: *scanDir, Rounds: *scanRounds},
			Sections: secs, Out: *out, Log: os.Stderr,
		}
		_, err = algobench.Run(opts, os.Stdout, *asJSON)
		return err
	}
}
