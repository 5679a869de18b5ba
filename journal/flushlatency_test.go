package journal

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/statsfile"
)

// TestFlushLatencyAndCksumTimes mounts with an emulated flush latency in
// both journal modes and checks that every fsync took at least that long
// (the emulation waits out the rest of each flush; it can only be late),
// that log flushes and, in meta mode, data-file syncs were emulated, and
// that the checksum-time histograms account for every record and force;
// in inline mode too, whose work at copy time is checksum CPU but not on
// the force path.
func TestFlushLatencyAndCksumTimes(t *testing.T) {
	const lat = 3 * time.Millisecond
	for _, c := range []struct {
		jm   JournalMode
		mode cksum.Mode
	}{{JournalMeta, cksum.Sector}, {JournalData, cksum.Sector}, {JournalData, cksum.Inline}} {
		jm := c.jm
		t.Run(jm.String()+"/"+c.mode.String(), func(t *testing.T) {
			dir := mkfs(t, 16<<20, 0)
			fs := mount(t, dir, Options{Mode: c.mode, Journal: jm, FlushLatency: lat})
			f := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
			check(t, fs.Open(f.Ino))
			buf := bytes.Repeat([]byte("x"), 64<<10)
			const fsyncs = 5
			for i := range fsyncs {
				must[int](t)(fs.Write(f.Ino, buf, int64(i*len(buf))))
				start := time.Now()
				check(t, fs.Fsync(f.Ino, false))
				if d := time.Since(start); d < lat {
					t.Errorf("fsync %d took %v, less than the emulated flush latency %v", i, d, lat)
				}
			}
			check(t, fs.Release(f.Ino))
			st := fs.Stats()
			check(t, fs.Close())

			if st.FlushLatency != lat || st.Flushes < st.LogSyncs || st.LogSyncs < fsyncs {
				t.Errorf("latency %v, %d flushes emulated for %d log forces; want %v and every force's flush", st.FlushLatency, st.Flushes, st.LogSyncs, lat)
			}
			// Meta mode syncs the data file beside each force.
			if jm == JournalMeta && st.Flushes < st.LogSyncs+fsyncs {
				t.Errorf("meta mode: %d flushes emulated, want at least %d log forces + %d data-file syncs", st.Flushes, st.LogSyncs, fsyncs)
			}
			if p := statsfile.HistPercentile(st.FsyncHist, 50); p < float64(lat/time.Microsecond)*0.875 {
				t.Errorf("fsync p50 %v µs, below the %v flush", p, lat)
			}
			var recs, forces uint64
			for _, c := range st.CksumRecordHist {
				recs += c
			}
			for _, c := range st.ForceHist {
				forces += c
			}
			if recs != st.Cksum.Records || recs == 0 {
				t.Errorf("%d records in the checksum-time histogram, %d checksummed", recs, st.Cksum.Records)
			}
			if forces == 0 || forces > st.ForceSyncs || forces != st.Forces {
				t.Errorf("%d forces in the force histogram, %d syncs a force waited for, %d forces timed", forces, st.ForceSyncs, st.Forces)
			}
			// The force path's checksum CPU is part of the work at seal,
			// and no more than its wall time.
			if st.ForceCksumCPUNanos == 0 || st.ForceCksumCPUNanos > st.Cksum.Nanos || st.ForceCksumCPUNanos > st.ForceCksumNanos ||
				st.ForceCksumCPUPerForce() != float64(st.ForceCksumCPUNanos)/float64(forces) {
				t.Errorf("checksum CPU on the force path %d ns (%.0f per force), at seal %d ns, wall on the force path %d ns",
					st.ForceCksumCPUNanos, st.ForceCksumCPUPerForce(), st.Cksum.Nanos, st.ForceCksumNanos)
			}
			if inline := c.mode == cksum.Inline; inline != (st.Cksum.CopyNanos > 0) || inline != (st.Cksum.CopyBytes > st.Cksum.Bytes) {
				t.Errorf("%s mode: checksum at copy time %d ns over %d bytes, at seal %d bytes", c.mode, st.Cksum.CopyNanos, st.Cksum.CopyBytes, st.Cksum.Bytes)
			}
			if st.ForceNanos < forces*uint64(lat) {
				t.Errorf("forces took %v in all, less than %d × %v", time.Duration(st.ForceNanos), forces, lat)
			}
			if sh := st.ForceCksumShare(); sh <= 0 || sh >= 1 {
				t.Errorf("checksum share of the forces' latency %v, want a fraction", sh)
			}
			if st.Cksum.Nanos > st.Cksum.WallNanos || st.CksumNanosPerKiB() <= 0 {
				t.Errorf("checksum CPU %d ns, wall %d ns, %.1f ns/KiB", st.Cksum.Nanos, st.Cksum.WallNanos, st.CksumNanosPerKiB())
			}
			var out strings.Builder
			st.WriteTo(&out)
			for _, name := range []string{"cksum_record_p99_ns ", "force_cksum_pct ", "flush_latency_ns 3000000\n", "cksum_clock ",
				fmt.Sprintf("cksum_ns %d\n", st.Cksum.TotalNanos()), fmt.Sprintf("force_cksum_cpu_ns %d\n", st.ForceCksumCPUNanos)} {
				if !strings.Contains(out.String(), name) {
					t.Errorf(".stats lacks %q:\n%s", name, out.String())
				}
			}
		})
	}
}

// The journal's observer puts a timed record's whole checksum CPU time (at
// copy time and at seal) in the per-record histogram, leaves out a record
// whose time is an estimate from its bytes (not timed: cksum's stride),
// and puts only the work at seal in the force's account, estimated or not.
func TestCksumTimesObserve(t *testing.T) {
	var c statsfile.CksumTimes
	c.StartRound()
	c.Observe(cksum.Cost{CPU: 100, Wall: 150, CopyCPU: 900, Timed: true})
	c.Observe(cksum.Cost{CPU: 50, Wall: 60, Timed: true})
	c.Observe(cksum.Cost{CPU: 5000, Wall: 5000}) // estimated: no histogram entry
	c.Forced(10000)
	h := c.Record.Snapshot()
	var n uint64
	for _, x := range h {
		n += x
	}
	if h[statsfile.HistBucket(1000)] != 1 || h[statsfile.HistBucket(50)] != 1 || n != 2 {
		t.Errorf("record histogram %v: want one record of 1000 ns (copy + seal) and one of 50, and not the estimated one", h)
	}
	if c.ForceCksumN.Load() != 5210 || c.ForceCksumCPU.Load() != 5150 || c.Forces.Load() != 1 || c.ForceNanos.Load() != 10000 {
		t.Errorf("force: checksum wall %d, CPU %d, %d forces, %d ns; want 5210, 5150 (seal only), 1, 10000",
			c.ForceCksumN.Load(), c.ForceCksumCPU.Load(), c.Forces.Load(), c.ForceNanos.Load())
	}
	c.StartRound()
	c.Forced(5000)
	if c.ForceCksumCPU.Load() != 5150 || c.ForceCksumN.Load() != 5210 {
		t.Error("a new round did not start from no checksum time")
	}
}
