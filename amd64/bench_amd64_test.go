package amd64

import (
	"fmt"
	"hash/crc32"
	"slices"
	"testing"
	"time"
)

// Compare ratios to hash/crc32 from one run (go test -bench . -count 5,
// then benchstat): the machine's clock and load vary between runs.

var benchSizes = []int{64, 512, 4096, 32768, 262144}

type benchKernel struct {
	name   string
	update func(uint32, []byte) uint32
}

func benchKernels() []benchKernel {
	ks := []benchKernel{{"stdlib", func(c uint32, p []byte) uint32 { return crc32.Update(c, castagnoli, p) }}}
	for _, k := range Kernels() {
		ks = append(ks, benchKernel{k.Name, k.Update})
	}
	return ks
}

// BenchmarkKernel chains each call on the previous CRC, as a caller
// checksumming a record piecewise does, so latency counts as well as
// throughput.
func BenchmarkKernel(b *testing.B) {
	for _, n := range benchSizes {
		buf := make([]byte, n)
		for _, k := range benchKernels() {
			b.Run(fmt.Sprintf("n=%d/kernel=%s", n, k.name), func(b *testing.B) {
				b.SetBytes(int64(n))
				var crc uint32
				for b.Loop() {
					crc = k.update(crc, buf)
				}
			})
		}
	}
}

// BenchmarkShortAfterLong checksums 256 KiB then a short buffer in each
// iteration: the short call runs right after a long one, so it pays any
// frequency change or vector state the long call left behind. short-ns is
// the median time of the short call alone, timed with the clock: that adds
// tens of ns, the same for every kernel, and the median drops interrupts.
func BenchmarkShortAfterLong(b *testing.B) {
	long := make([]byte, 262144)
	for _, n := range []int{64, 512} {
		short := make([]byte, n)
		for _, k := range benchKernels() {
			b.Run(fmt.Sprintf("n=%d/kernel=%s", n, k.name), func(b *testing.B) {
				b.SetBytes(int64(len(long) + n))
				var crc uint32
				var shortTimes []time.Duration
				for b.Loop() {
					crc = k.update(crc, long)
					t0 := time.Now()
					crc = k.update(crc, short)
					shortTimes = append(shortTimes, time.Since(t0))
				}
				slices.Sort(shortTimes)
				b.ReportMetric(float64(shortTimes[len(shortTimes)/2].Nanoseconds()), "short-ns/op")
			})
		}
	}
}

// BenchmarkPath runs each assembly routine on its own, to see where the
// kernels should switch between them.
func BenchmarkPath(b *testing.B) {
	for _, n := range []int{64, 128, 256, 512, 1024, 2048, 4096, 8192, 32768, 262144} {
		buf := make([]byte, n)
		for _, pt := range paths() {
			if !pt.ok || n < pt.min {
				continue
			}
			b.Run(fmt.Sprintf("n=%d/path=%s", n, pt.name), func(b *testing.B) {
				b.SetBytes(int64(n))
				var crc uint32
				for b.Loop() {
					crc = pt.f(crc, buf)
				}
			})
		}
	}
}
