package algobench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchstat"
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
	// Slowdown is how much longer a stretch of the file takes to scan with
	// verification than without (0.25 = 25 % slower): the median over every
	// stretch and round of the ratio to the same stretch's scan without
	// verification in the same round. SlowdownQ1 and SlowdownQ3 are the
	// quartiles of those ratios.
	Slowdown   float64 `json:"slowdown"`
	SlowdownQ1 float64 `json:"slowdown_q1"`
	SlowdownQ3 float64 `json:"slowdown_q3"`
	GBps       float64 `json:"gbps"` // a stretch's bytes over its median scan time
}

// ScanResult is the whole read-path measurement.
type ScanResult struct {
	Bytes        int64               `json:"bytes"`
	PageBytes    int                 `json:"page_bytes"`
	Rounds       int                 `json:"rounds"`
	StretchBytes int64               `json:"stretch_bytes"`
	BaselineGBps float64             `json:"baseline_gbps"` // preads alone
	Algos        map[string]ScanAlgo `json:"-"`
}

// scanStretch is how much of the file is scanned at a time before the next
// algorithm takes the same stretch: short enough that the load of a shared
// machine falls alike on the scans compared, long enough (tens of
// milliseconds) to time well.
const scanStretch = 64 << 20

// scanPool is how many distinct pages the file cycles through: enough that
// the expected checksums are not all one value, few enough to precompute.
const scanPool = 256

// Scan repeats the experiment of PostgreSQL's page-checksum thread: a file
// read from the page cache in 8 KiB preads, each page verified against its
// expected checksum, timed against the same scan without verification. The
// file is written and fsynced first and read once untimed, so every timed
// scan is served by the page cache. Every round scans the whole file once
// per algorithm and once without verification, a stretch at a time: each
// stretch is scanned by all of them in turn (in an order that rotates), so
// they are compared on the same bytes at nearly the same moment.
func Scan(cfg ScanConfig, algos []*Algo, seed uint64) (ScanResult, error) {
	res := ScanResult{PageBytes: ScanPage, Rounds: cfg.Rounds, Algos: map[string]ScanAlgo{}}
	pages := cfg.Bytes / ScanPage
	if pages < 1 {
		return res, fmt.Errorf("scan file of %d bytes holds no %d-byte page", cfg.Bytes, ScanPage)
	}
	res.Bytes = pages * ScanPage
	res.StretchBytes = min(res.Bytes, scanStretch)
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
	if _, err := scanRange(fd, name, 0, res.Bytes, buf, nil, nil); err != nil { // into the page cache
		return res, err
	}

	order := make([]int, len(algos)+1) // -1: no verification
	for i := range order {
		order[i] = i - 1
	}
	var baseTimes []float64
	ratios := make([][]float64, len(algos))
	times := make([][]float64, len(algos))
	stretch := 0
	for range cfg.Rounds {
		for from := int64(0); from < res.Bytes; from, stretch = from+res.StretchBytes, stretch+1 {
			to := min(res.Bytes, from+res.StretchBytes)
			el := make([]float64, len(algos))
			var base float64
			for k := range order {
				ai := order[(k+stretch)%len(order)]
				if ai >= 0 && want[ai] == nil {
					continue
				}
				var a *Algo
				var w []uint64
				if ai >= 0 {
					a, w = algos[ai], want[ai]
				}
				d, err := scanRange(fd, name, from, to, buf, a, w)
				if err != nil {
					return res, err
				}
				if ai < 0 {
					base = d.Seconds()
				} else {
					el[ai] = d.Seconds()
				}
			}
			if to-from < res.StretchBytes {
				continue // a short last stretch would skew the GB/s
			}
			baseTimes = append(baseTimes, base)
			for ai := range algos {
				if want[ai] != nil {
					ratios[ai] = append(ratios[ai], el[ai]/base-1)
					times[ai] = append(times[ai], el[ai])
				}
			}
		}
	}
	if len(baseTimes) == 0 {
		return res, fmt.Errorf("scan file %s: no full %d-byte stretch timed", name, res.StretchBytes)
	}
	res.BaselineGBps = float64(res.StretchBytes) / benchstat.MedianValue(baseTimes) / 1e9
	for ai, a := range algos {
		if len(ratios[ai]) == 0 {
			continue
		}
		res.Algos[a.Name] = ScanAlgo{
			Slowdown: benchstat.MedianValue(ratios[ai]), SlowdownQ1: quantile(ratios[ai], 0.25), SlowdownQ3: quantile(ratios[ai], 0.75),
			GBps: float64(res.StretchBytes) / benchstat.MedianValue(times[ai]) / 1e9,
		}
	}
	return res, nil
}

// quantile returns the q-quantile of xs (nearest rank).
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// scanRange preads the file's pages in [from, to); with an algorithm, it
// checksums each page and compares with the expected value (want, by page
// number mod scanPool).
func scanRange(fd int, name string, from, to int64, buf []byte, a *Algo, want []uint64) (time.Duration, error) {
	start := time.Now()
	for off := from; off < to; off += ScanPage {
		n, err := unix.Pread(fd, buf, off)
		if err != nil {
			return 0, fmt.Errorf("scan file %s at offset %d: pread: %w", name, off, err)
		}
		if n != ScanPage {
			return 0, fmt.Errorf("scan file %s at offset %d: short read of %d bytes", name, off, n)
		}
		if a != nil && a.Sum(buf) != want[(off/ScanPage)%scanPool] {
			return 0, fmt.Errorf("scan file %s at offset %d: %s checksum mismatch (the file changed under the scan?)", name, off, a.Name)
		}
	}
	return time.Since(start), nil
}
