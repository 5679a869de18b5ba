package cksum

import (
	"fmt"
	"sync/atomic"
	"time"
)

// BlockSize is the log's basic block (XFS's BB): the unit of cycle stamping,
// of header blocks, and of sector mode's checksum calls.
const BlockSize = 512

// Mode is how a log record's CRC is computed. Every mode computes the same
// value, the standard CRC-32C of the record's contiguous bytes (header blocks
// with h_crc zeroed, then the stamped payload); they differ only in how many
// crc32c calls it takes, which is what xlogfs measures.
type Mode uint8

const (
	// Batched: one call over the whole record (the "larger batches" idea).
	Batched Mode = iota
	// XFS: one call for the record header block, one per extension header
	// block, one for the payload, as XFS's xlog_cksum does.
	XFS
	// Sector: one call per 512-byte block.
	Sector
)

var modeNames = [...]string{Batched: "batched", XFS: "xfs", Sector: "sector"}

// Modes lists every mode, in the order the bench compares them.
func Modes() []Mode { return []Mode{Batched, XFS, Sector} }

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", m)
}

// ParseMode accepts batched, xfs (alias per-chunk) and sector.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "batched":
		return Batched, nil
	case "xfs", "per-chunk":
		return XFS, nil
	case "sector":
		return Sector, nil
	}
	return 0, fmt.Errorf("unknown checksum mode %q (want batched, xfs or sector)", s)
}

// Sum computes the CRC-32C of rec in mode m with update. rec is a log
// record's contiguous bytes: hdrLen bytes of header blocks (a multiple of
// BlockSize, at least one block) followed by the payload. It returns the CRC
// and the number of crc32c calls made.
func Sum(m Mode, update func(uint32, []byte) uint32, rec []byte, hdrLen int) (crc uint32, calls int) {
	switch m {
	case XFS:
		// Header block, each extension header block, then the payload.
		for off := 0; off < hdrLen; off += BlockSize {
			crc = update(crc, rec[off:off+BlockSize])
			calls++
		}
		return update(crc, rec[hdrLen:]), calls + 1
	case Sector:
		for off := 0; off < len(rec); off += BlockSize {
			crc = update(crc, rec[off:min(off+BlockSize, len(rec))])
			calls++
		}
		return crc, calls
	default:
		return update(0, rec), 1
	}
}

// Stats is a snapshot of the checksum work a Summer has done.
type Stats struct {
	Records uint64 `json:"records"` // records checksummed
	Calls   uint64 `json:"calls"`   // crc32c calls
	Bytes   uint64 `json:"bytes"`   // bytes checksummed
	// Nanos is the CPU time spent checksumming (see Summer), WallNanos
	// the wall time, and OffCPU the number of records whose wall time
	// included time off the CPU and so was replaced by the thread's CPU
	// clock.
	Nanos     uint64 `json:"nanos"`
	WallNanos uint64 `json:"wall_nanos"`
	OffCPU    uint64 `json:"off_cpu_records"`
	// Clock says how Nanos is measured: "thread" (wall time, corrected
	// with the thread's CPU clock) or "wall" (no CPU clock here).
	Clock string `json:"clock"`
}

// Cost is what checksumming one record took.
type Cost struct {
	Bytes int           // bytes checksummed
	Calls int           // crc32c calls
	CPU   time.Duration // CPU time (see Summer)
	Wall  time.Duration // wall time, time off the CPU included
}

// Summer checksums records in one mode with one implementation and counts
// the work. It is safe for concurrent use.
//
// Time is counted per record, as CPU time: the checksum is what a record
// costs the CPU, and a thread that loses its CPU in the middle of a record
// (the kernel runs another thread, or the Go scheduler another goroutine)
// must not charge the wait to the checksum. A record is timed by the wall
// clock (a vDSO read, tens of nanoseconds, precise) inside a pair of reads
// of the thread's CPU clock (a system call, a few hundred nanoseconds).
// While the thread keeps its CPU, the CPU clock advances by the wall time
// plus the clock reads' own cost, and the wall time is the CPU time. When
// the CPU clock advanced less than the wall clock, the thread was off the
// CPU for part of the record, and the CPU clock's advance, less the
// calibrated cost of the reads, is the CPU time instead (OffCPU counts
// those records). Both clocks' own cost is calibrated once per process
// (the median of empty measurements) and taken off. Where the system has
// no thread CPU clock, wall time is all there is (Stats.Clock says so).
type Summer struct {
	mode                         Mode
	impl                         Impl
	records, calls, bytes, nanos atomic.Uint64
	wallNanos, offCPU            atomic.Uint64
	observe                      func(Cost)
}

// NewSummer returns a Summer for mode m using impl.
func NewSummer(m Mode, impl Impl) *Summer {
	calibrateClocks()
	return &Summer{mode: m, impl: impl}
}

// Observe makes s call f with the cost of every record, on the goroutine
// that checksummed it, after the counters are updated. Call it before the
// first Record; f must be quick and safe for concurrent use if Record is
// called concurrently.
func (s *Summer) Observe(f func(Cost)) { s.observe = f }

// Mode is the mode s checksums in.
func (s *Summer) Mode() Mode { return s.mode }

// Impl is the implementation s uses.
func (s *Summer) Impl() Impl { return s.impl }

// Record returns the CRC-32C of a record (see Sum) and counts the work.
func (s *Summer) Record(rec []byte, hdrLen int) uint32 {
	c0, haveCPU := threadCPUTime()
	start := time.Now()
	crc, calls := Sum(s.mode, s.impl.Update, rec, hdrLen)
	wall := max(0, time.Since(start)-clocks.wall)
	c1, _ := threadCPUTime()
	cpu := wall
	if d := c1 - c0; haveCPU && d < wall {
		// Off the CPU for part of the record: its CPU time is the
		// CPU clock's advance, less what reading the clocks costs.
		cpu = max(0, d-clocks.cpu)
		s.offCPU.Add(1)
	}
	s.nanos.Add(uint64(cpu))
	s.wallNanos.Add(uint64(wall))
	s.records.Add(1)
	s.calls.Add(uint64(calls))
	s.bytes.Add(uint64(len(rec)))
	if s.observe != nil {
		s.observe(Cost{Bytes: len(rec), Calls: calls, CPU: cpu, Wall: wall})
	}
	return crc
}

// Stats returns the counters so far.
func (s *Summer) Stats() Stats {
	return Stats{Records: s.records.Load(), Calls: s.calls.Load(), Bytes: s.bytes.Load(), Nanos: s.nanos.Load(),
		WallNanos: s.wallNanos.Load(), OffCPU: s.offCPU.Load(), Clock: clocks.name}
}
