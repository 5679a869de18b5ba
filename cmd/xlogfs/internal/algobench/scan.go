package algobench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// ScanPage is the page size of the read-path scan: PostgreSQL's.
const ScanPage = 8192

// ScanConfig sets the read-path scan.
type ScanConfig struct {
	Bytes  int64  // file size
	Dir    string // where the file is made (and removed after)
	Rounds int
}

// ScanAlgo is one algorithm's scan result.
type ScanAlgo struct {
	// Slowdown is the scan's time with verification over the same round's
	// scan without, minus one (0.25 = 25 % slower); the median of rounds.
	Slowdown    float64 `json:"slowdown"`
	SlowdownMin float64 `json:"slowdown_min"`
	SlowdownMax float64 `json:"slowdown_max"`
	GBps        float64 `json:"gbps"`
}

// ScanResult is the whole read-path measurement.
type ScanResult struct {
	Bytes        int64               `json:"bytes"`
	PageBytes    int                 `json:"page_bytes"`
	Rounds       int                 `json:"rounds"`
	BaselineGBps float64             `json:"baseline_gbps"` // preads alone
	Algos        map[string]ScanAlgo `json:"-"`
}

// scanPool is how many distinct pages the file cycles through: enough that
// the expected checksums are not all one value, few enough to precompute.
const scanPool = 256

// Scan repeats the experiment of PostgreSQL's page-checksum thread: a file
// read from the page cache in 8 KiB preads, each page verified against its
// expected checksum, timed against the same scan without verification. The
// file is written and fsynced first and read once untimed, so every timed
// scan is served by the page cache. Each round scans once without
// verification and once per algorithm, in an order that rotates by round.
func Scan(cfg ScanConfig, algos []*Algo, seed uint64) (ScanResult, error) {
	res := ScanResult{PageBytes: ScanPage, Rounds: cfg.Rounds, Algos: map[string]ScanAlgo{}}
	pages := cfg.Bytes / ScanPage
	if pages < 1 {
		return res, fmt.Errorf("scan file of %d bytes holds no %d-byte page", cfg.Bytes, ScanPage)
	}
	res.Bytes = pages * ScanPage
	r := rand.New(rand.NewPCG(seed, 0x5ca9))
	pool := make([]byte, scanPool*ScanPage)
	for p := range scanPool {
		Shapes[0].fill(r, pool[p*ScanPage:(p+1)*ScanPage])
	}
	want := make([][]uint64, len(algos))
	for ai, a := range algos {
		if !a.defined(ScanPage) {
			continue
		}
		want[ai] = make([]uint64, scanPool)
		for p := range scanPool {
			want[ai][p] = a.Sum(pool[p*ScanPage : (p+1)*ScanPage])
		}
	}

	f, err := os.CreateTemp(cfg.Dir, "algo-bench-scan-*")
	if err != nil {
		return res, fmt.Errorf("scan file: %w", err)
	}
	name := f.Name()
	defer os.Remove(name)
	defer f.Close()
	for off := int64(0); off < res.Bytes; off += int64(len(pool)) {
		chunk := pool[:min(int64(len(pool)), res.Bytes-off)]
		if _, err := f.WriteAt(chunk, off); err != nil {
			return res, fmt.Errorf("scan file %s at offset %d: %w", name, off, err)
		}
	}
	if err := f.Sync(); err != nil {
		return res, fmt.Errorf("scan file %s: fsync: %w", name, err)
	}
	fd := int(f.Fd())
	buf := make([]byte, ScanPage)
	if _, err := scanOnce(fd, name, res.Bytes, buf, nil, nil); err != nil { // into the page cache
		return res, err
	}

	order := make([]int, len(algos)+1) // -1: no verification
	for i := range order {
		order[i] = i - 1
	}
	base := make([]float64, cfg.Rounds)
	times := make([][]float64, len(algos))
	for round := range cfg.Rounds {
		for k := range order {
			ai := order[(k+round)%len(order)]
			if ai >= 0 && want[ai] == nil {
				continue
			}
			var a *Algo
			var w []uint64
			if ai >= 0 {
				a, w = algos[ai], want[ai]
			}
			el, err := scanOnce(fd, name, res.Bytes, buf, a, w)
			if err != nil {
				return res, err
			}
			if ai < 0 {
				base[round] = el.Seconds()
			} else {
				times[ai] = append(times[ai], el.Seconds())
			}
		}
	}
	res.BaselineGBps = float64(res.Bytes) / median(base) / 1e9
	for ai, a := range algos {
		if len(times[ai]) == 0 {
			continue
		}
		var slow []float64
		for round, t := range times[ai] {
			slow = append(slow, t/base[round]-1)
		}
		res.Algos[a.Name] = ScanAlgo{
			Slowdown: median(slow), SlowdownMin: slices.Min(slow), SlowdownMax: slices.Max(slow),
			GBps: float64(res.Bytes) / median(times[ai]) / 1e9,
		}
	}
	return res, nil
}

// scanOnce preads the file page by page; with an algorithm, it checksums
// each page and compares with the expected value (want, by page mod
// scanPool).
func scanOnce(fd int, name string, size int64, buf []byte, a *Algo, want []uint64) (time.Duration, error) {
	start := time.Now()
	page := 0
	for off := int64(0); off < size; off += ScanPage {
		n, err := unix.Pread(fd, buf, off)
		if err != nil {
			return 0, fmt.Errorf("scan file %s at offset %d: pread: %w", name, off, err)
		}
		if n != ScanPage {
			return 0, fmt.Errorf("scan file %s at offset %d: short read of %d bytes", name, off, n)
		}
		if a != nil && a.Sum(buf) != want[page%scanPool] {
			return 0, fmt.Errorf("scan file %s at offset %d: %s checksum mismatch (the file changed under the scan?)", name, off, a.Name)
		}
		page++
	}
	return time.Since(start), nil
}
