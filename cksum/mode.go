package cksum

import (
	"fmt"
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

	// Clock is the tick counter Nanos and CopyNanos are measured with:
	// "tsc", "timebase" or "monotonic" (see timer.go).
	Clock string `json:"clock"`

	// What the counting costs. Regions is the number of pieces of checksum
	// work counted (records at seal, ops at copy time), TimedRegions those
	// timed with the clock; the others' time is estimated from the timed
	// ones' ns per byte (timer.go: one region in a stride is timed, the
	// stride adapted to the work). TimingNanos is what the counters' own
	// bookkeeping cost the CPU for them: TimerNanos per timed region,
	// UntimedNanos per other record and UntimedOpNanos per other op
	// (Copy), all measured at start. The copy and
	// stamps of the Plain* counters are not checksum work and not in
	// these.
	Regions        uint64  `json:"regions"`
	TimedRegions   uint64  `json:"timed_regions"`
	TimingNanos    uint64  `json:"timing_nanos"`
	TimerNanos     float64 `json:"timer_nanos"`
	UntimedNanos   float64 `json:"untimed_nanos"`
	UntimedOpNanos float64 `json:"untimed_op_nanos"`
}

// TimingShare is TimingNanos as a share of the checksum CPU it measures
// (TotalNanos); 0 without any.
func (s Stats) TimingShare() float64 {
	if s.TotalNanos() == 0 {
		return 0
	}
	return float64(s.TimingNanos) / float64(s.TotalNanos())
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

	// Timed says CPU and Wall were measured; else (a record between two
	// the stride times, see timer.go) they are estimated from its bytes.
	Timed bool
}

// TotalCPU is the record's checksum CPU time, at copy time and at seal.
func (c Cost) TotalCPU() time.Duration { return c.CPU + c.CopyCPU }

// Summer checksums records in one mode with one implementation and counts
// the work. It is safe for concurrent use.
//
// Time is counted per record (Record, Seal) and, in inline mode, per op
// copied in (Copy), as CPU time: the checksum is what a record costs the
// CPU, and a thread that loses its CPU in the middle of a record must not
// charge the wait to the checksum. timer.go has how: a tick counter read
// by one instruction, calibrated against the monotonic clock, around one
// region in a stride (the rest estimated from the timed ones' ns per
// byte), and a delta too long for the region's bytes taken for time off
// the CPU (OffCPU and CopyOffCPU count those) and replaced by the
// estimate. The counting's own cost is in Stats (TimingNanos).
type Summer struct {
	mode    Mode
	impl    Impl
	seal    tally // at seal: Record, Seal (a region is a record)
	copy    tally // at copy time: Copy
	plain   tally // not checksum work: CopyPlain
	pack    tally // nor this: PackRecord's pack, counted with plain
	observe func(Cost)
}

// NewSummer returns a Summer for mode m using impl.
func NewSummer(m Mode, impl Impl) *Summer {
	calibrateClock()
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
	t := s.seal.start()
	crc, calls, n := SumCovered(s.mode, c, s.impl.Update, rec, hdrLen)
	m := s.seal.stop(t, calls, n)
	s.sealed(Cost{Bytes: n, Calls: calls, CPU: m.cpu, Wall: m.wall, Timed: m.timed})
	return crc
}

// PackRecord runs pack (stamping the record's blocks, not checksum work)
// and then returns the record's CRC under coverage c as RecordCovered does.
// When the record is one the seal's stride times, a third read of the
// clock between the two splits the time: pack's goes to the Plain*
// counters, the checksum's to the seal's, each clamped on its own; else
// both are estimated, each from its own counters.
func (s *Summer) PackRecord(rec []byte, hdrLen int, c Coverage, pack func()) uint32 {
	t := s.seal.start()
	pack()
	var mid uint64
	if t.on {
		mid = clock.read()
	}
	crc, calls, n := SumCovered(s.mode, c, s.impl.Update, rec, hdrLen)
	var m measured
	// The pack tally's bytes are the record's: what its estimate goes by.
	s.pack.regions.Add(1)
	s.pack.bytes.Add(uint64(len(rec)))
	s.seal.calls.Add(uint64(calls))
	s.seal.bytes.Add(uint64(n))
	if t.on {
		end := clock.read()
		s.pack.timedDelta(mid-t.t0, len(rec))
		m = s.seal.timedDelta(end-mid, n)
	} else {
		m = s.seal.estimated(n)
	}
	s.sealed(Cost{Bytes: n, Calls: calls, CPU: m.cpu, Wall: m.wall, Timed: m.timed})
	return crc
}

// sealed tells the observer of a record (the seal tally counted it).
func (s *Summer) sealed(c Cost) {
	if s.observe != nil {
		s.observe(c)
	}
}

// Copy is the inline mode's work for one op at copy time: p learns hdr
// (the op header, already in place in the iclog), then src is copied into
// dst with p learning it in the same pass. stamp, if not nil, runs last,
// inside the timing: it stamps the blocks the op completed (p.Stamp). The
// work is counted in p, whose record's Cost carries it to the observer
// when it is sealed, and reaches s's Copy* counters then: an op costs no
// atomic operation here, as ops can be a hundred bytes. One op in a stride
// (picked at random, timer.go) is timed; the others' time is estimated at
// seal from the timed ones' ns per byte.
func (s *Summer) Copy(p *Payload, hdr, dst, src []byte, stamp func()) {
	var t0 uint64
	timed := p.sample(s.copy.mask.Load())
	if timed {
		t0 = clock.read()
	}
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
	n := len(hdr) + len(src)
	if timed {
		p.copyCPU += s.copy.timedDelta(clock.read()-t0, n).cpu
		p.copyTimedBytes += n
	}
	p.copyOps++
	p.copyCalls += calls
	p.copyBytes += n
}

// copied moves p's copy-time counts into s's Copy* counters, once, at
// seal, and returns the CPU time of p's ops: the timed ones' and the
// others' bytes at the timed ones' ns per byte.
func (s *Summer) copied(p *Payload) time.Duration {
	s.copy.regions.Add(uint64(p.copyOps))
	s.copy.calls.Add(uint64(p.copyCalls))
	// A prefix (Restart) was checksummed before the payload, outside
	// Copy: its bytes count at copy time, with no time (timedBytes, so
	// that nothing is estimated for them).
	s.copy.bytes.Add(uint64(p.copyBytes + p.PrefixLen()))
	s.copy.timedBytes.Add(uint64(p.PrefixLen()))
	return p.copyCPU + s.copy.estimated(p.copyBytes-p.copyTimedBytes).cpu
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
	t := s.seal.start()
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
	m := s.seal.stop(t, calls, n)
	copyCPU := s.copied(p)
	s.sealed(Cost{Bytes: n, Calls: calls, CPU: m.cpu, Wall: m.wall, Timed: m.timed,
		CopyBytes: p.copyBytes + p.PrefixLen(), CopyCalls: p.copyCalls, CopyCPU: copyCPU})
	return crc
}

// CopyPlain copies src into dst (an op into an iclog, in the modes that
// checksum at seal) and counts the time in the Plain* counters, timed as
// Copy is, so that CopyCksumNanos holds the same work in every mode.
func (s *Summer) CopyPlain(dst, src []byte) {
	t := s.plain.start()
	copy(dst, src)
	s.plain.stop(t, 1, len(src))
}

// Stats returns the counters so far.
func (s *Summer) Stats() Stats {
	seal, sealWall := s.seal.nanos()
	cp, cpWall := s.copy.nanos()
	plain, plainWall := s.plain.nanos()
	pack, packWall := s.pack.nanos()
	return Stats{Records: s.seal.regions.Load(),
		Calls: s.seal.calls.Load(), Bytes: s.seal.bytes.Load(), Nanos: seal,
		WallNanos: sealWall, OffCPU: s.seal.offCPU.Load(),
		CopyCalls: s.copy.calls.Load(), CopyBytes: s.copy.bytes.Load(), CopyNanos: cp,
		CopyWallNanos: cpWall, CopyOffCPU: s.copy.offCPU.Load(),
		PlainOps: s.plain.calls.Load(), PlainBytes: s.plain.bytes.Load(), PlainNanos: plain + pack,
		PlainWallNanos: plainWall + packWall, PlainOffCPU: s.plain.offCPU.Load() + s.pack.offCPU.Load(),
		Clock:   clock.name,
		Regions: s.seal.regions.Load() + s.copy.regions.Load(), TimedRegions: s.seal.timed.Load() + s.copy.timed.Load(),
		TimingNanos: uint64(s.seal.timingNanos(clock.untimed) + s.copy.timingNanos(clock.untimedOp)),
		TimerNanos:  clock.timed, UntimedNanos: clock.untimed, UntimedOpNanos: clock.untimedOp}
}
