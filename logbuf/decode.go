package logbuf

import (
	"encoding/binary"
	"fmt"

	"github.com/xlogfs/xlogfs/cksum"
)

// Header is a decoded record header (struct xlog_rec_header).
type Header struct {
	Cycle     uint32   // h_cycle
	Version   uint32   // h_version
	Len       uint32   // h_len: payload bytes, a multiple of BBSize
	LSN       LSN      // h_lsn
	TailLSN   LSN      // h_tail_lsn
	CRC       uint32   // h_crc as stored
	PrevBlock uint32   // h_prev_block
	NumLogOps uint32   // h_num_logops
	Fmt       uint32   // h_fmt
	UUID      [16]byte // h_fs_uuid
	Size      uint32   // h_size: iclog size the record came from
}

// HeaderBytes is the size of the record's header blocks.
func (h *Header) HeaderBytes() int { return HeaderBlocks(int(h.Size)) * BBSize }

// RecordBytes is the record's size on disk.
func (h *Header) RecordBytes() int { return h.HeaderBytes() + int(h.Len) }

// RecordBlocks is the record's size on disk in basic blocks.
func (h *Header) RecordBlocks() int { return h.RecordBytes() / BBSize }

// Op is one decoded op header with its region.
type Op struct {
	TID      uint32 // oh_tid
	ClientID uint8  // oh_clientid
	Flags    uint8  // oh_flags
	Data     []byte // the oh_len bytes after the header
}

// Record is a verified, unpacked, decoded log record.
type Record struct {
	Header
	Ops []Op
}

// CRCError reports a record whose stored CRC does not match its bytes.
type CRCError struct{ Stored, Computed uint32 }

func (e *CRCError) Error() string {
	return fmt.Sprintf("CRC mismatch: stored %#08x, computed %#08x", e.Stored, e.Computed)
}

// ParseHeader decodes a record header block and checks that it describes a
// record xlogfs could have written (xlog_valid_rec_header, and more).
func ParseHeader(b []byte) (*Header, error) {
	if len(b) < BBSize {
		return nil, fmt.Errorf("record header: %d bytes, want %d", len(b), BBSize)
	}
	if m := be.Uint32(b[offMagic:]); m != HeaderMagic {
		return nil, fmt.Errorf("record header: bad magic %#08x, want %#08x", m, uint32(HeaderMagic))
	}
	h := &Header{
		Cycle:     be.Uint32(b[offCycle:]),
		Version:   be.Uint32(b[offVersion:]),
		Len:       be.Uint32(b[offLen:]),
		LSN:       LSN(be.Uint64(b[offLSN:])),
		TailLSN:   LSN(be.Uint64(b[offTailLSN:])),
		CRC:       binary.LittleEndian.Uint32(b[offCRC:]),
		PrevBlock: be.Uint32(b[offPrevBlock:]),
		NumLogOps: be.Uint32(b[offNumLogOps:]),
		Fmt:       be.Uint32(b[offFmt:]),
		Size:      be.Uint32(b[offSize:]),
	}
	copy(h.UUID[:], b[offUUID:])
	switch {
	case h.Version != Version2:
		return nil, fmt.Errorf("record header: version %d, want %d", h.Version, Version2)
	case h.Fmt != FmtLinuxLE:
		return nil, fmt.Errorf("record header: format %d, want %d (little-endian Linux)", h.Fmt, FmtLinuxLE)
	case CheckLogBSize(int(h.Size)) != nil:
		return nil, fmt.Errorf("record header: h_size %d is not a valid iclog size", h.Size)
	case h.Cycle == 0 || h.Cycle == HeaderMagic || h.LSN.Cycle() != h.Cycle:
		return nil, fmt.Errorf("record header: cycle %d does not match LSN %v", h.Cycle, h.LSN)
	case h.Len%BBSize != 0 || int(h.Len) > int(h.Size)-h.HeaderBytes():
		return nil, fmt.Errorf("record header: h_len %d invalid for h_size %d", h.Len, h.Size)
	case uint64(h.NumLogOps)*OpHeaderSize > uint64(h.Len):
		return nil, fmt.Errorf("record header: %d ops cannot fit in %d bytes", h.NumLogOps, h.Len)
	}
	return h, nil
}

var zeroCRC [4]byte

// ComputeCRC returns the CRC-32C of a record as stored (header blocks then
// payload), reading h_crc as zero. It does not modify rec, so it takes three
// calls (before, instead of, and after h_crc); the writer zeroes the field
// and makes one.
func ComputeCRC(rec []byte) uint32 {
	crc := cksum.Update(0, rec[:offCRC])
	crc = cksum.Update(crc, zeroCRC[:])
	return cksum.Update(crc, rec[offCRC+4:])
}

// DecodeRecord verifies the record at the start of rec, unstamps its payload
// in place and decodes its ops. rec must hold at least the whole record
// (Header.RecordBytes); the Ops' Data alias rec.
func DecodeRecord(rec []byte) (*Record, error) {
	h, err := ParseHeader(rec)
	if err != nil {
		return nil, err
	}
	n := h.RecordBytes()
	if len(rec) < n {
		return nil, fmt.Errorf("record %v: %d bytes, record needs %d", h.LSN, len(rec), n)
	}
	rec = rec[:n]
	if crc := ComputeCRC(rec); crc != h.CRC {
		return nil, &CRCError{Stored: h.CRC, Computed: crc}
	}
	// With the CRC good these hold unless the writer is broken; checking them
	// is what xfs_logprint does, and cheap.
	hsize := h.HeaderBytes()
	for x := BBSize; x < hsize; x += BBSize {
		if c := be.Uint32(rec[x+xoffCycle:]); c != h.Cycle {
			return nil, fmt.Errorf("record %v: extension header %d has cycle %d, want %d", h.LSN, x/BBSize, c, h.Cycle)
		}
	}
	for off := hsize; off < n; off += BBSize {
		if c := be.Uint32(rec[off:]); c != h.Cycle {
			return nil, fmt.Errorf("record %v: payload block %d stamped with cycle %d, want %d", h.LSN, (off-hsize)/BBSize, c, h.Cycle)
		}
	}
	unpack(rec, hsize)
	ops, err := DecodeOps(rec[hsize:], int(h.NumLogOps))
	if err != nil {
		return nil, fmt.Errorf("record %v: %w", h.LSN, err)
	}
	return &Record{Header: *h, Ops: ops}, nil
}

// DecodeOps decodes n op headers and their regions from an unstamped
// payload; what follows the last op must be zero padding shorter than a block.
func DecodeOps(payload []byte, n int) ([]Op, error) {
	ops := make([]Op, 0, n)
	off := 0
	for i := range n {
		if len(payload)-off < OpHeaderSize {
			return nil, fmt.Errorf("op %d: header at payload offset %d runs past the end (%d bytes)", i, off, len(payload))
		}
		p := payload[off:]
		l := be.Uint32(p[4:])
		if uint64(l) > uint64(len(p)-OpHeaderSize) {
			return nil, fmt.Errorf("op %d at payload offset %d: length %d runs past the end (%d bytes)", i, off, l, len(payload))
		}
		ops = append(ops, Op{
			TID:      be.Uint32(p[0:]),
			ClientID: p[8],
			Flags:    p[9],
			Data:     p[OpHeaderSize : OpHeaderSize+int(l)],
		})
		off += OpHeaderSize + int(l)
	}
	if len(payload)-off >= BBSize {
		return nil, fmt.Errorf("%d bytes after the last op at payload offset %d (padding is under %d)", len(payload)-off, off, BBSize)
	}
	for i, b := range payload[off:] {
		if b != 0 {
			return nil, fmt.Errorf("non-zero padding byte at payload offset %d", off+i)
		}
	}
	return ops, nil
}

// FlagString names op flags as xfs_logprint does.
func FlagString(f uint8) string {
	names := []struct {
		bit  uint8
		name string
	}{{FlagStart, "START"}, {FlagCommit, "COMMIT"}, {FlagWasCont, "WAS_CONT"}, {FlagUnmount, "UNMOUNT"}, {FlagContinue, "CONTINUE"}, {FlagEnd, "END"}}
	s := ""
	for _, n := range names {
		if f&n.bit != 0 {
			if s != "" {
				s += " "
			}
			s += n.name
			f &^= n.bit
		}
	}
	if f != 0 {
		s += fmt.Sprintf(" %#x", f)
	}
	if s == "" {
		return "none"
	}
	return s
}
