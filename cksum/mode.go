package cksum

import (
	"fmt"
	"sync/atomic"
	"time"
)

// BlockSize is the log's basic block (XFS's BB): the unit of cycle stamping,
// of header blocks, and of sector mode's checksum calls.
const BlockSize = 512

// Mode is how a log record's CRC is computed. Under a given Coverage every
// mode computes the same value, the standard CRC-32C of the bytes the
// coverage covers, in order (header blocks or parts of them, h_crc read as
// zero, then the stamped payload); they differ in how many crc32c calls it
// takes and when they run, which is what xlogfs measures.
//
// Under CoverWhole the covered bytes are contiguous: Batched makes one call,
// XFS one per header block and one for the payload. Under CoverXFS they are
// xlog_cksum's regions (the record header's first 328 bytes, the first 260
// of each extension header h_len needs, the payload), which are not
// contiguous: XFS makes exactly xlog_cksum's calls, one per region, and
// Batched, which cannot make one call over them, makes the same.
type Mode uint8

const (
	// Batched: one call over the whole record (the "larger batches" idea)
	// under CoverWhole; one call per region under CoverXFS, whose regions
	// are not contiguous.
	Batched Mode = iota
	// XFS: one call per covered region, as XFS's xlog_cksum makes them:
	// under CoverXFS exactly xlog_cksum's calls and bytes for the record's
	// h_len; under CoverWhole one per header block and one for the payload.
	XFS
	// Sector: one call per 512-byte piece of each covered region.
	Sector
	// Inline: each op is checksummed as it is copied into the iclog
	// (CopyUpdate, with the cycle stamps folded in: inline.go), so sealing
	// checksums only the header blocks and combines (Summer.Seal). A
	// record handed to Sum whole takes two calls under CoverWhole (header
	// blocks, payload) and one per region under CoverXFS.
	Inline
)

var modeNames = [...]string{Batched: "batched", XFS: "xfs", Sector: "sector", Inline: "inline"}

// Modes lists every mode, in the order the bench compares them.
func Modes() []Mode { return []Mode{Batched, XFS, Sector, Inline} }

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", m)
}

// ParseMode accepts batched, xfs (alias per-chunk), sector and inline.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "batched":
		return Batched, nil
	case "xfs", "per-chunk":
		return XFS, nil
	case "sector":
		return Sector, nil
	case "inline":
		return Inline, nil
	}
	return 0, fmt.Errorf("unknown checksum mode %q (want batched, xfs, sector or inline)", s)
}

// Sum computes the CRC-32C of rec in mode m with update under CoverWhole
// (SumCovered) and returns it and the number of crc32c calls made.
func Sum(m Mode, update func(uint32, []byte) uint32, rec []byte, hdrLen int) (crc uint32, calls int) {
	crc, calls, _ = SumCovered(m, CoverWhole, update, rec, hdrLen)
	return crc, calls
}

// SumCovered computes the CRC-32C of rec under coverage c in mode m with
// update. rec is a log record's contiguous bytes: hdrLen bytes of header
// blocks (a multiple of BlockSize, at least one block) followed by the
// payload, with h_crc zeroed. It returns the CRC, the number of crc32c
// calls made and the bytes they covered.
func SumCovered(m Mode, c Coverage, update func(uint32, []byte) uint32, rec []byte, hdrLen int) (crc uint32, calls, bytes int) {
	if c == CoverWhole {
		switch m {
		case Batched:
			return update(0, rec), 1, len(rec)
		case Inline:
			// A record whose payload was not checksummed as it was copied.
			return update(update(0, rec[:hdrLen]), rec[hdrLen:]), 2, len(rec)
		}
	}
	var buf [MaxRegions][]byte
	for _, r := range c.Regions(buf[:0], rec, hdrLen) {
		bytes += len(r)
		if m != Sector {
			crc = update(crc, r)
			calls++
			continue
		}
		for off := 0; off < len(r); off += BlockSize {
			crc = update(crc, r[off:min(off+BlockSize, len(r))])
			calls++
		}
	}
	return crc, calls, bytes
}

// Stats is a snapshot of the checksum work a Summer has done: at seal, on
// the log force's path (Records, Calls, Bytes, Nanos, WallNanos, OffCPU),
// and at copy time, while ops are copied into iclogs (Copy*, inline mode
// only). Both are timed the same way (see Summer).
type Stats struct {
	Records uint64 `json:"records"` // records checksummed
	Calls   uint64 `json:"calls"`   // crc32c calls at seal
	Bytes   uint64 `json:"bytes"`   // bytes checksummed at seal
	// Nanos is the CPU time spent checksumming at seal (see Summer),
	// WallNanos the wall time, and OffCPU the number of records whose
	// wall time included time off the CPU and so was replaced by the
	// thread's CPU clock.
	Nanos     uint64 `json:"nanos"`
	WallNanos uint64 `json:"wall_nanos"`
	OffCPU    uint64 `json:"off_cpu_records"`

	CopyCalls uint64 `json:"copy_calls"` // crc32c calls at copy time
	CopyBytes uint64 `json:"copy_bytes"` // bytes checksummed at copy time
	// CopyNanos is the CPU time of the work at copy time, timed per op as
	// Nanos is per record; CopyWallNanos and CopyOffCPU (ops) as above.
	// It includes the copy itself, which CopyUpdate does in the same
	// pass and the other modes do outside the checksum, and the cycle
	// stamps of the blocks an op completes.
	CopyNanos     uint64 `json:"copy_nanos"`
	CopyWallNanos uint64 `json:"copy_wall_nanos"`
	CopyOffCPU    uint64 `json:"copy_off_cpu_ops"`

	// Plain* count the work the modes that checksum at seal do outside
	// the checksum, which inline mode's Copy* include: copying ops into
	// iclogs (PlainOps ops, PlainBytes bytes) and stamping the cycle into
	// their blocks at seal, timed as Copy* are (CopyPlain, PackRecord).
	// None of it is checksum work, so no Total* and no Nanos count it; it
	// is there so that CopyCksumNanos is the same work in every mode.
	PlainOps       uint64 `json:"plain_ops"`
	PlainBytes     uint64 `json:"plain_bytes"`
	PlainNanos     uint64 `json:"plain_nanos"`
	PlainWallNanos uint64 `json:"plain_wall_nanos"`
	PlainOffCPU    uint64 `json:"plain_off_cpu"`

	// Clock says how Nanos and CopyNanos are measured: "thread" (wall
	// time, corrected with the thread's CPU clock) or "wall" (no CPU
	// clock here).
	Clock string `json:"clock"`
}

// TotalCalls, TotalBytes, TotalNanos and TotalWallNanos add the work at
// copy time and at seal: all the checksum work, wherever it ran.
func (s Stats) TotalCalls() uint64     { return s.Calls + s.CopyCalls }
func (s Stats) TotalBytes() uint64     { return s.Bytes + s.CopyBytes }
func (s Stats) TotalNanos() uint64     { return s.Nanos + s.CopyNanos }
func (s Stats) TotalWallNanos() uint64 { return s.WallNanos + s.CopyWallNanos }

// CopyCksumNanos is the CPU time of copying ops into iclogs, stamping
// their blocks and checksumming the records, in all: the same work in
// every mode, however it is split, so the modes' totals compare fairly.
// TotalNanos is checksum work alone, but in inline mode it includes the
// copy and the stamps, which CopyUpdate and Copy do in the same pass.
func (s Stats) CopyCksumNanos() uint64 { return s.Nanos + s.CopyNanos + s.PlainNanos }

// Cost is what checksumming one record took: at seal, on the log force's
// path (Bytes, Calls, CPU, Wall), and in inline mode also at copy time,
// as its ops were copied in before the seal (Copy*; zero in the other
// modes).
type Cost struct {
	Bytes int           // bytes checksummed at seal
	Calls int           // crc32c calls at seal
	CPU   time.Duration // CPU time at seal (see Summer)
	Wall  time.Duration // wall time at seal, time off the CPU included

	CopyBytes int           // bytes checksummed at copy time
	CopyCalls int           // crc32c calls at copy time
	CopyCPU   time.Duration // CPU time at copy time
}

// TotalCPU is the record's checksum CPU time, at copy time and at seal.
func (c Cost) TotalCPU() time.Duration { return c.CPU + c.CopyCPU }

// Summer checksums records in one mode with one implementation and counts
// the work. It is safe for concurrent use.
//
// Time is counted per record (Record, Seal) and, in inline mode, per op
// copied in (Copy), as CPU time: the checksum is what a record costs the
// CPU, and a thread that loses its CPU in the middle of a record (the
// kernel runs another thread, or the Go scheduler another goroutine) must
// not charge the wait to the checksum. A piece of work is timed by the wall
// clock (a vDSO read, tens of nanoseconds, precise) inside a pair of reads
// of the thread's CPU clock (a system call, a few hundred nanoseconds).
// While the thread keeps its CPU, the CPU clock advances by the wall time
// plus the clock reads' own cost, and the wall time is the CPU time. When
// the CPU clock advanced less than the wall clock, the thread was off the
// CPU for part of the work, and the CPU clock's advance, less the
// calibrated cost of the reads, is the CPU time instead (OffCPU and
// CopyOffCPU count those). Both clocks' own cost is calibrated once per
// process (the median of empty measurements) and taken off. Where the
// system has no thread CPU clock, wall time is all there is (Stats.Clock
// says so).
type Summer struct {
	mode    Mode
	impl    Impl
	records atomic.Uint64
	seal    tally // at seal: Record, Seal
	copy    tally // at copy time: Copy
	plain   tally // not checksum work: CopyPlain, PackRecord
	observe func(Cost)
}

// tally counts one kind of checksum work.
type tally struct{ calls, bytes, nanos, wallNanos, offCPU atomic.Uint64 }

func (t *tally) add(calls, bytes int, m measured) {
	t.calls.Add(uint64(calls))
	t.bytes.Add(uint64(bytes))
	t.nanos.Add(uint64(m.cpu))
	t.wallNanos.Add(uint64(m.wall))
	if m.offCPU {
		t.offCPU.Add(1)
	}
}

// timing is one measurement in progress, as Summer describes: started
// with startTiming, ended with stop.
type timing struct {
	cpu0    time.Duration
	haveCPU bool
	start   time.Time
}

// measured is what stop found: the work's CPU and wall time, and whether
// the thread was off the CPU for part of it.
type measured struct {
	cpu, wall time.Duration
	offCPU    bool
}

func startTiming() timing {
	c0, haveCPU := threadCPUTime()
	return timing{cpu0: c0, haveCPU: haveCPU, start: time.Now()}
}

func (t timing) stop() measured {
	wall := max(0, time.Since(t.start)-clocks.wall)
	c1, _ := threadCPUTime()
	m := measured{cpu: wall, wall: wall}
	if d := c1 - t.cpu0; t.haveCPU && d < wall {
		// Off the CPU for part of the work: its CPU time is the CPU
		// clock's advance, less what reading the clocks costs.
		m.cpu, m.offCPU = max(0, d-clocks.cpu), true
	}
	return m
}

// NewSummer returns a Summer for mode m using impl.
func NewSummer(m Mode, impl Impl) *Summer {
	calibrateClocks()
	return &Summer{mode: m, impl: impl}
}

// Observe makes s call f with the cost of every record (Record, PackRecord,
// Seal), on the goroutine that checksummed it, after the counters are
// updated. Call it before the first Record; f must be quick and safe for concurrent use
// if records are checksummed concurrently. Copy does not call it: an op's
// cost goes into its record's Payload, and reaches f with the record's.
func (s *Summer) Observe(f func(Cost)) { s.observe = f }

// Mode is the mode s checksums in.
func (s *Summer) Mode() Mode { return s.mode }

// Impl is the implementation s uses.
func (s *Summer) Impl() Impl { return s.impl }

// Record returns the CRC-32C of a record under CoverWhole (see Sum) and
// counts the work.
func (s *Summer) Record(rec []byte, hdrLen int) uint32 {
	return s.RecordCovered(rec, hdrLen, CoverWhole)
}

// RecordCovered returns the CRC-32C of a record under coverage c (see
// SumCovered) and counts the work.
func (s *Summer) RecordCovered(rec []byte, hdrLen int, c Coverage) uint32 {
	t := startTiming()
	crc, calls, n := SumCovered(s.mode, c, s.impl.Update, rec, hdrLen)
	m := t.stop()
	s.sealed(Cost{Bytes: n, Calls: calls, CPU: m.cpu, Wall: m.wall}, m)
	return crc
}

// PackRecord runs pack (stamping the record's blocks, not checksum work)
// and then returns the record's CRC under coverage c as RecordCovered does.
// Both are timed inside one pair of CPU clock reads, each by the wall
// clock: pack's time goes to the Plain* counters, the checksum's to the
// seal's, as Record counts it.
// Had the thread lost its CPU, the CPU clock's advance is split between the
// two in proportion to their wall times.
func (s *Summer) PackRecord(rec []byte, hdrLen int, c Coverage, pack func()) uint32 {
	t := startTiming()
	pack()
	w1 := time.Now()
	crc, calls, n := SumCovered(s.mode, c, s.impl.Update, rec, hdrLen)
	m := t.stop()
	pw := min(m.wall, max(0, w1.Sub(t.start)-clocks.wall/2))
	pm := measured{cpu: pw, wall: pw}
	m.wall -= pw
	if m.offCPU {
		if total := pw + m.wall; total > 0 {
			pm.cpu = time.Duration(float64(m.cpu) * float64(pw) / float64(total))
			pm.offCPU = true
		}
		m.cpu -= pm.cpu
	} else {
		m.cpu = m.wall
	}
	s.plain.add(0, 0, pm)
	s.sealed(Cost{Bytes: n, Calls: calls, CPU: m.cpu, Wall: m.wall}, m)
	return crc
}

// sealed counts a record's work at seal and tells the observer.
func (s *Summer) sealed(c Cost, m measured) {
	s.seal.add(c.Calls, c.Bytes, m)
	s.records.Add(1)
	if s.observe != nil {
		s.observe(c)
	}
}

// Copy is the inline mode's work for one op at copy time: p learns hdr
// (the op header, already in place in the iclog), then src is copied into
// dst with p learning it in the same pass. stamp, if not nil, runs last,
// inside the timing: it stamps the blocks the op completed (p.Stamp). The
// work is counted in s's Copy* counters and in p, whose record's Cost
// carries it to the observer when it is sealed.
func (s *Summer) Copy(p *Payload, hdr, dst, src []byte, stamp func()) {
	t := startTiming()
	calls := 0
	if len(hdr) > 0 {
		p.Write(hdr)
		calls++
	}
	if len(src) > 0 {
		p.Copy(dst, src)
		calls++
	}
	if stamp != nil {
		stamp()
	}
	m := t.stop()
	s.copy.add(calls, len(hdr)+len(src), m)
	p.copyCalls += calls
	p.copyBytes += len(hdr) + len(src)
	p.copyCPU += m.cpu
}

// Seal is SealRegions with the header as one region: the inline mode's
// work at seal under CoverWhole, where hdr is the record's header blocks
// (or those before p's prefix: Payload.Restart).
func (s *Summer) Seal(p *Payload, pad, hdr []byte, stamp func()) uint32 {
	return s.SealRegions(p, pad, [][]byte{hdr}, stamp)
}

// SealRegions is the inline mode's work at seal: p learns pad (the zeros
// that round the payload up to a block, already in place), then stamp, if
// not nil, stamps the blocks left (a last block whose first word ends in
// the padding: it must see the zeros before they are stamped over), and
// the record's CRC is that of hdr, the covered regions of its header blocks
// in order (one call each, read after stamp: h_crc zeroed, cycle data
// complete; under CoverWhole the blocks before p's prefix, Payload.Restart,
// as one region), combined with p's. Every payload block must be stamped by
// then (see Payload.Sum). The observer sees the record's cost at seal and,
// in Cost.Copy*, what its ops cost at copy time.
func (s *Summer) SealRegions(p *Payload, pad []byte, hdr [][]byte, stamp func()) uint32 {
	t := startTiming()
	calls, n := len(hdr), len(pad)
	if len(pad) > 0 {
		p.Write(pad)
		calls++
	}
	if stamp != nil {
		stamp()
	}
	var crc uint32
	for _, r := range hdr {
		crc = s.impl.Update(crc, r)
		n += len(r)
	}
	crc = s.impl.Combine(crc, p.Sum(), p.PrefixLen()+p.Len())
	m := t.stop()
	// A prefix (Restart) was checksummed before the payload: its bytes
	// count at copy time.
	s.copy.bytes.Add(uint64(p.PrefixLen()))
	s.sealed(Cost{Bytes: n, Calls: calls, CPU: m.cpu, Wall: m.wall,
		CopyBytes: p.copyBytes + p.PrefixLen(), CopyCalls: p.copyCalls, CopyCPU: p.copyCPU}, m)
	return crc
}

// CopyPlain copies src into dst (an op into an iclog, in the modes that
// checksum at seal) and counts the time in the Plain* counters, timed as
// Copy is, so that CopyCksumNanos holds the same work in every mode.
func (s *Summer) CopyPlain(dst, src []byte) {
	t := startTiming()
	copy(dst, src)
	m := t.stop()
	s.plain.add(1, len(src), m)
}

// Stats returns the counters so far.
func (s *Summer) Stats() Stats {
	return Stats{Records: s.records.Load(),
		Calls: s.seal.calls.Load(), Bytes: s.seal.bytes.Load(), Nanos: s.seal.nanos.Load(),
		WallNanos: s.seal.wallNanos.Load(), OffCPU: s.seal.offCPU.Load(),
		CopyCalls: s.copy.calls.Load(), CopyBytes: s.copy.bytes.Load(), CopyNanos: s.copy.nanos.Load(),
		CopyWallNanos: s.copy.wallNanos.Load(), CopyOffCPU: s.copy.offCPU.Load(),
		PlainOps: s.plain.calls.Load(), PlainBytes: s.plain.bytes.Load(), PlainNanos: s.plain.nanos.Load(),
		PlainWallNanos: s.plain.wallNanos.Load(), PlainOffCPU: s.plain.offCPU.Load(),
		Clock: clocks.name}
}
