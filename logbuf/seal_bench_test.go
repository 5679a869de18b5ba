package logbuf

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
)

// BenchmarkSealOnly times Seal alone (the work on the log force's path) for a
// full 256 KiB and 32 KiB record and for a 4.6 KB payload in a 256 KiB
// iclog (the bench's default record, whose 4 KiB of header blocks
// outweigh its payload), batched against inline, with the best kernel and
// hash/crc32. The ops are copied in each iteration but only the seal is
// timed (seal-ns): in inline mode the copy is where most of the checksum
// went. ns/op is the copy and the seal.
func BenchmarkSealOnly(b *testing.B) {
	impls := []cksum.Impl{cksum.Best()}
	if std, err := cksum.Lookup("stdlib"); err == nil && std.Name != cksum.Best().Name {
		impls = append(impls, std)
	}
	cases := []struct {
		name             string
		logbsize, filled int
	}{
		{"256K-full", 256 << 10, 1 << 30},
		{"32K-full", 32 << 10, 1 << 30},
		{"256K-4.6K", 256 << 10, 4600},
	}
	region := make([]byte, 4000)
	for i := range region {
		region[i] = byte(i*7 + 1)
	}
	for _, c := range cases {
		for _, im := range impls {
			for _, m := range []cksum.Mode{cksum.Batched, cksum.Inline} {
				b.Run(fmt.Sprintf("rec=%s/impl=%s/mode=%s", c.name, im.Name, m), func(b *testing.B) {
					ic := mustIclog(b, c.logbsize)
					s := cksum.NewSummer(m, im)
					var cpu []time.Duration
					s.Observe(func(c cksum.Cost) { cpu = append(cpu, c.CPU) })
					var seal []time.Duration
					for b.Loop() {
						ic.Start(5, s)
						for ic.Used() < c.filled && ic.Free() > 2*OpHeaderSize {
							ic.AppendOp(1, ClientTransaction, 0, region[:min(len(region), c.filled-ic.Used())], false)
						}
						t0 := time.Now()
						ic.Seal(MakeLSN(5, 100), MakeLSN(5, 0), MakeLSN(5, 99), 90, s)
						seal = append(seal, time.Since(t0))
					}
					slices.Sort(seal)
					slices.Sort(cpu)
					// seal-ns: the median Seal, clock reads and the Summer's
					// timing included; seal-cksum-ns: the median of the
					// Summer's count of the checksum work in it (CPU time,
					// the clocks' cost taken off), the bench's ns/force
					// for one record a force.
					b.ReportMetric(float64(seal[len(seal)/2].Nanoseconds()), "seal-ns")
					b.ReportMetric(float64(cpu[len(cpu)/2].Nanoseconds()), "seal-cksum-ns")
				})
			}
		}
	}
}
