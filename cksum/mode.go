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
// with h_crc zeroed, then the stamped payload); they differ in how many
// crc32c calls it takes and when they run, which is what xlogfs measures.
type Mode uint8

const (
	// Batched: one call over the whole record (the "larger batches" idea).
	Batched Mode = iota
	// XFS: one call for the record header block, one per extension header
	// block, one for the payload, as XFS's xlog_cksum does.
	XFS
	// Sector: one call per 512-byte block.
	Sector
	// Inline: each op is checksummed as it is copied into the iclog
	// (CopyUpdate, with the cycle stamps folded in: inline.go), so sealing
	// checksums only the header blocks and combines (Summer.Seal). A
	// record handed to Sum whole takes two calls: header blocks, payload.
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
	case Inline:
		// A record whose payload was not checksummed as it was copied.
		return update(update(0, rec[:hdrLen]), rec[hdrLen:]), 2
	default:
		return update(0, rec), 1
	}
}

// Stats is a snapshot of the checksum work a Summer has done: at seal, on
// the log force's path (Records, Calls, Bytes, Nanos), and at copy time,
// while ops are copied into iclogs (Copy*, inline mode only).
type Stats struct {
	Records uint64 `json:"records"` // records checksummed
	Calls   uint64 `json:"calls"`   // crc32c calls at seal
	Bytes   uint64 `json:"bytes"`   // bytes checksummed at seal
	Nanos   uint64 `json:"nanos"`   // wall time checksumming at seal, one clock read pair per record

	CopyCalls uint64 `json:"copy_calls"` // crc32c calls at copy time
	CopyBytes uint64 `json:"copy_bytes"` // bytes checksummed at copy time
	// Wall time of the copy-time work, one clock read pair per op. It
	// includes the copy itself, which CopyUpdate does in the same pass
	// and the other modes do outside the checksum.
	CopyNanos uint64 `json:"copy_nanos"`
}

// TotalCalls, TotalBytes and TotalNanos add the work at copy time and at seal.
func (s Stats) TotalCalls() uint64 { return s.Calls + s.CopyCalls }
func (s Stats) TotalBytes() uint64 { return s.Bytes + s.CopyBytes }
func (s Stats) TotalNanos() uint64 { return s.Nanos + s.CopyNanos }

// Summer checksums records in one mode with one implementation and counts
// the work. It is safe for concurrent use.
type Summer struct {
	mode                         Mode
	impl                         Impl
	records, calls, bytes, nanos atomic.Uint64

	copyCalls, copyBytes, copyNanos atomic.Uint64
}

// NewSummer returns a Summer for mode m using impl.
func NewSummer(m Mode, impl Impl) *Summer { return &Summer{mode: m, impl: impl} }

// Mode is the mode s checksums in.
func (s *Summer) Mode() Mode { return s.mode }

// Impl is the implementation s uses.
func (s *Summer) Impl() Impl { return s.impl }

// Record returns the CRC-32C of a record (see Sum) and counts the work.
func (s *Summer) Record(rec []byte, hdrLen int) uint32 {
	start := time.Now()
	crc, calls := Sum(s.mode, s.impl.Update, rec, hdrLen)
	s.nanos.Add(uint64(time.Since(start)))
	s.records.Add(1)
	s.calls.Add(uint64(calls))
	s.bytes.Add(uint64(len(rec)))
	return crc
}

// Copy is the inline mode's work for one op at copy time: p learns hdr
// (the op header, already in place in the iclog), then src is copied into
// dst with p learning it in the same pass. stamp, if not nil, runs last,
// inside the timing: it stamps the blocks the op completed (p.Stamp).
func (s *Summer) Copy(p *Payload, hdr, dst, src []byte, stamp func()) {
	start := time.Now()
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
	s.copyNanos.Add(uint64(time.Since(start)))
	s.copyCalls.Add(uint64(calls))
	s.copyBytes.Add(uint64(len(hdr) + len(src)))
}

// Seal is the inline mode's work at seal: p learns pad (the zeros that
// round the payload up to a block, already in place), then stamp, if not
// nil, stamps the blocks left (a last block whose first word ends in the
// padding: it must see the zeros before they are stamped over), and the
// record's CRC is that of hdr (its header blocks, h_crc zeroed, cycle data
// complete) combined with p's. Every payload block must be stamped by then
// (see Payload.Sum).
func (s *Summer) Seal(p *Payload, pad, hdr []byte, stamp func()) uint32 {
	start := time.Now()
	calls := 1
	if len(pad) > 0 {
		p.Write(pad)
		calls++
	}
	if stamp != nil {
		stamp()
	}
	crc := s.impl.Combine(s.impl.Update(0, hdr), p.Sum(), p.Len())
	s.nanos.Add(uint64(time.Since(start)))
	s.records.Add(1)
	s.calls.Add(uint64(calls))
	s.bytes.Add(uint64(len(hdr) + len(pad)))
	return crc
}

// Stats returns the counters so far.
func (s *Summer) Stats() Stats {
	return Stats{Records: s.records.Load(), Calls: s.calls.Load(), Bytes: s.bytes.Load(), Nanos: s.nanos.Load(),
		CopyCalls: s.copyCalls.Load(), CopyBytes: s.copyBytes.Load(), CopyNanos: s.copyNanos.Load()}
}
