package algobench

import (
	"math/rand/v2"
	"time"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchstat"
)

// SpeedCell is one algorithm's throughput at one size.
type SpeedCell struct {
	Bytes int     `json:"bytes"`
	GBps  float64 `json:"gbps"`
	// Ratio is GBps over crc32c/best's at the same size in the same run.
	Ratio float64 `json:"ratio"`
	// NA: the algorithm is not defined at this size (pg-fnv needs whole
	// 128-byte rows).
	NA bool `json:"na,omitempty"`
}

// SpeedConfig sets the speed measurement.
type SpeedConfig struct {
	Sizes  []int
	Total  time.Duration // measuring time for everything, warm-up excluded
	Rounds int           // samples per cell; the median is kept
}

// Speed measures every algorithm at every size on one goroutine. The usual
// care: each (algorithm, size) runs once untimed and calibrates its
// iteration count first (caches, branch predictors and CPU frequency settle),
// samples are taken round-robin so drift of a shared machine falls on all
// cells alike, and the median of the rounds is kept.
func Speed(cfg SpeedConfig, algos []*Algo, seed uint64) map[string][]SpeedCell {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	bufs := make([][]byte, len(cfg.Sizes))
	for i, n := range cfg.Sizes {
		bufs[i] = make([]byte, n)
		fillContent(r, bufs[i])
	}
	cells := len(algos) * len(cfg.Sizes)
	per := cfg.Total / time.Duration(max(1, cells*cfg.Rounds))
	iters := make([][]int, len(algos))
	samples := make([][][]float64, len(algos))
	for ai, a := range algos {
		iters[ai] = make([]int, len(cfg.Sizes))
		samples[ai] = make([][]float64, len(cfg.Sizes))
		for si, b := range bufs {
			if a.defined(len(b)) {
				iters[ai][si] = calibrate(a, b, per)
			}
		}
	}
	for range cfg.Rounds {
		for si, b := range bufs {
			for ai, a := range algos {
				if iters[ai][si] == 0 {
					continue
				}
				samples[ai][si] = append(samples[ai][si], timeIters(a, b, iters[ai][si]))
			}
		}
	}
	out := map[string][]SpeedCell{}
	for ai, a := range algos {
		for si, n := range cfg.Sizes {
			c := SpeedCell{Bytes: n}
			if iters[ai][si] == 0 {
				c.NA = true
			} else {
				c.GBps = benchstat.MedianValue(samples[ai][si]) / 1e9
				if ref := benchstat.MedianValue(samples[0][si]); ref > 0 {
					c.Ratio = c.GBps * 1e9 / ref
				}
			}
			out[a.Name] = append(out[a.Name], c)
		}
	}
	return out
}

// sink keeps the compiler from dropping the work measured.
var sink uint64

// calibrate finds how many calls of a on b take about d (at least one).
func calibrate(a *Algo, b []byte, d time.Duration) int {
	n := 1
	for {
		start := time.Now()
		for range n {
			sink ^= a.Sum(b)
		}
		el := time.Since(start)
		if el >= d/2 {
			return max(1, int(float64(n)*float64(d)/float64(el)))
		}
		if el < d/100 {
			n *= 10
		} else {
			n = int(float64(n)*float64(d)/float64(el)) + 1
		}
	}
}

// timeIters returns the bytes per second of n calls of a on b.
func timeIters(a *Algo, b []byte, n int) float64 {
	start := time.Now()
	for range n {
		sink ^= a.Sum(b)
	}
	return float64(len(b)) * float64(n) / time.Since(start).Seconds()
}
