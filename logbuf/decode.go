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
	Durable   LSN      // h_durable_lsn: the log was durable up to here when this was written (0: unknown)
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
		Durable:   LSN(be.Uint64(b[offDurable:])),
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
	case h.Durable >= h.LSN:
		return nil, fmt.Errorf("record header: durable watermark %v is not below the record's LSN %v", h.Durable, h.LSN)
	}
	return h, nil
}

var zeroCRC [4]byte

// ComputeCRC returns the CRC-32C under coverage cov of rec, a record as
// stored: hdrLen bytes of header blocks, then the payload (h_len bytes),
// with h_crc read as zero. It does not modify rec, so it makes three calls
// for the record header's covered part (before, instead of, and after
// h_crc); the writer zeroes the field and makes one.
func ComputeCRC(rec []byte, hdrLen int, cov Coverage) uint32 {
	return crcOf(rec[:hdrLen], rec[hdrLen:], cov)
}

// crcOf is ComputeCRC of a record whose header blocks are hdr and whose
// payload is payload.
func crcOf(hdr, payload []byte, cov Coverage) uint32 {
	var buf [cksum.MaxRegions][]byte
	regions := cov.HeaderRegions(buf[:0], hdr, len(payload))
	first := regions[0]
	crc := cksum.Update(0, first[:offCRC])
	crc = cksum.Update(crc, zeroCRC[:])
	crc = cksum.Update(crc, first[offCRC+4:])
	for _, r := range regions[1:] {
		crc = cksum.Update(crc, r)
	}
	return cksum.Update(crc, payload)
}

// DecodeRecord verifies the record at the start of rec under coverage cov,
// unstamps its payload in place and decodes its ops. rec must hold at least
// the whole record (Header.RecordBytes); the Ops' Data alias rec.
func DecodeRecord(rec []byte, cov Coverage) (*Record, error) {
	h, _, err := VerifyRecord(rec, cov)
	if err != nil {
		return nil, err
	}
	return UnpackRecord(rec, h)
}

// VerifyRecord parses the header of the record at the start of rec and
// checks its CRC under coverage cov, changing nothing; under CoverXFS it
// also checks what the CRC does not cover (Uncovered). It returns the
// header (nil if it does not parse) and the CRC computed over the record's
// bytes; when that is not the stored one the error wraps a *CRCError and
// names the record's LSN.
func VerifyRecord(rec []byte, cov Coverage) (*Header, uint32, error) {
	h, err := ParseHeader(rec)
	if err != nil {
		return nil, 0, err
	}
	n := h.RecordBytes()
	if len(rec) < n {
		return h, 0, fmt.Errorf("record %v: %d bytes, record needs %d", h.LSN, len(rec), n)
	}
	crc := ComputeCRC(rec[:n], h.HeaderBytes(), cov)
	if crc != h.CRC {
		return h, crc, fmt.Errorf("record %v: %w", h.LSN, &CRCError{Stored: h.CRC, Computed: crc})
	}
	if cov == CoverXFS {
		if err := Uncovered(rec, h); err != nil {
			return h, crc, err
		}
	}
	return h, crc, nil
}

// Uncovered checks the bytes of the record at the start of rec (whose
// header is h) that CoverXFS leaves out of the CRC, as the package
// documentation (CRC coverage) requires them: the durable watermark's
// complement beside it, the rest of the record header's h_reserved zero,
// the covered extension headers' xh_reserved zero, and each extension
// header past those h_len needs carrying the record's cycle and otherwise
// zero. rec must hold the whole record.
func Uncovered(rec []byte, h *Header) error {
	b := rec[:BBSize]
	if x := be.Uint64(b[offDurableX:]); x != ^uint64(h.Durable) {
		return fmt.Errorf("record %v: durable watermark %v (h_durable_lsn, at header offset %d) disagrees with its complement %#016x (at %d): one is damaged",
			h.LSN, h.Durable, offDurable, x, offDurableX)
	}
	if i := nonZero(b[offReserved:]); i >= 0 {
		return fmt.Errorf("record %v: reserved byte %d of the record header is %#02x, want zero", h.LSN, offReserved+i, b[offReserved+i])
	}
	xheads := cksum.ExtHeaders(int(h.Len))
	for x := 1; x < h.HeaderBytes()/BBSize; x++ {
		xh := rec[x*BBSize:][:BBSize]
		from := xoffReserved
		if x > xheads {
			if c := be.Uint32(xh[xoffCycle:]); c != h.Cycle {
				return fmt.Errorf("record %v: extension header block %d (not covered by the CRC) carries cycle %d, not the record's %d", h.LSN, x, c, h.Cycle)
			}
			from = xoffCycleData
		}
		if i := nonZero(xh[from:]); i >= 0 {
			return fmt.Errorf("record %v: byte %d of extension header block %d is %#02x, want zero (not covered by the CRC)", h.LSN, from+i, x, xh[from+i])
		}
	}
	return nil
}

// nonZero returns the index of the first non-zero byte of b, or -1.
func nonZero(b []byte) int {
	for i, c := range b {
		if c != 0 {
			return i
		}
	}
	return -1
}

// UnpackRecord unstamps a record that VerifyRecord accepted, in place, and
// decodes its ops.
func UnpackRecord(rec []byte, h *Header) (*Record, error) {
	rec = rec[:h.RecordBytes()]
	// With the CRC good these hold unless the writer is broken; checking them
	// is what xfs_logprint does, and cheap.
	if b := Uncarried(rec, h); len(b) > 0 {
		return nil, fmt.Errorf("record %v: block %d does not carry the record's cycle %d", h.LSN, b[0], h.Cycle)
	}
	hsize := h.HeaderBytes()
	unpack(rec, hsize)
	ops, err := DecodeOps(rec[hsize:], int(h.NumLogOps))
	if err != nil {
		return nil, fmt.Errorf("record %v: %w", h.LSN, err)
	}
	return &Record{Header: *h, Ops: ops}, nil
}

// DecodeDamaged decodes what it can of a record that failed verification,
// to name the transactions it held: it unstamps a copy and decodes its ops
// up to the first that does not fit, without checking the CRC, the cycle
// words or the padding. What it returns is unverified and must never be
// replayed.
func DecodeDamaged(rec []byte) (*Record, error) {
	h, err := ParseHeader(rec)
	if err != nil {
		return nil, err
	}
	rec = append([]byte(nil), rec[:min(len(rec), h.RecordBytes())]...)
	if len(rec) < h.HeaderBytes() {
		return nil, fmt.Errorf("record %v: %d bytes, its headers need %d", h.LSN, len(rec), h.HeaderBytes())
	}
	unpackPartial(rec, h.HeaderBytes())
	ops, _ := decodeOps(rec[h.HeaderBytes():], int(h.NumLogOps))
	return &Record{Header: *h, Ops: ops}, nil
}

// Identity reports which of the words that identify the header block b as
// that of the record at lsn are there: the magic, h_cycle (lsn's cycle) and
// h_lsn. A block left from an earlier cycle has at most the magic; the
// header written at lsn has all three, unless damaged since.
func Identity(b []byte, lsn LSN) (magic, cycle, lsnOK bool) {
	if len(b) < BBSize {
		return false, false, false
	}
	return be.Uint32(b[offMagic:]) == HeaderMagic, be.Uint32(b[offCycle:]) == lsn.Cycle(), LSN(be.Uint64(b[offLSN:])) == lsn
}

// Uncarried returns the blocks of the record at the start of rec (numbered
// from its header, 0) that do not carry the record's cycle h.Cycle: header
// blocks whose cycle word (h_cycle after the magic, xh_cycle) is not it, and
// payload blocks whose stamp is not it. rec must hold the whole record.
func Uncarried(rec []byte, h *Header) []int {
	var out []int
	if be.Uint32(rec[offMagic:]) != HeaderMagic || be.Uint32(rec[offCycle:]) != h.Cycle {
		out = append(out, 0)
	}
	for off := BBSize; off < h.RecordBytes(); off += BBSize {
		// xh_cycle and a payload block's stamp are both the first word.
		if be.Uint32(rec[off:]) != h.Cycle {
			out = append(out, off/BBSize)
		}
	}
	return out
}

// Restamp rewrites, in place, every cycle word of the record at the start
// of rec as the record at lsn has it: the header's magic and h_cycle, each
// extension header's xh_cycle and each payload block's stamp. It returns how
// many blocks it changed. If the record then verifies, every byte that is
// not a cycle word is as written: only cycle words differed (damaged, or
// left by an earlier write of the very same bytes). The rest of the header
// must parse.
func Restamp(rec []byte, lsn LSN) (int, error) {
	if len(rec) < BBSize {
		return 0, fmt.Errorf("record header: %d bytes, want %d", len(rec), BBSize)
	}
	changed := 0
	if be.Uint32(rec[offMagic:]) != HeaderMagic || be.Uint32(rec[offCycle:]) != lsn.Cycle() {
		be.PutUint32(rec[offMagic:], HeaderMagic)
		be.PutUint32(rec[offCycle:], lsn.Cycle())
		changed++
	}
	h, err := ParseHeader(rec)
	if err != nil {
		return changed, err
	}
	if len(rec) < h.RecordBytes() {
		return changed, fmt.Errorf("record %v: %d bytes, record needs %d", h.LSN, len(rec), h.RecordBytes())
	}
	for off := BBSize; off < h.RecordBytes(); off += BBSize {
		if be.Uint32(rec[off:]) != h.Cycle {
			be.PutUint32(rec[off:], h.Cycle)
			changed++
		}
	}
	return changed, nil
}

// LengthDamaged reports whether the record at the start of rec verifies
// under coverage cov with one bit of its h_len cleared: then every byte of
// it was written, and only the stored length, grown by a flipped bit,
// reaches past its end (a torn write never changes h_len, which sits in the
// atomic header block). It does not modify rec.
func LengthDamaged(rec []byte, h *Header, cov Coverage) bool {
	hdr := append([]byte(nil), rec[:h.HeaderBytes()]...)
	for bit := BBShift; bit < 32; bit++ {
		l := h.Len &^ (1 << bit)
		if l == h.Len || l == 0 {
			continue
		}
		be.PutUint32(hdr[offLen:], l)
		if _, err := ParseHeader(hdr); err != nil {
			continue
		}
		if crcOf(hdr, rec[len(hdr):len(hdr)+int(l)], cov) == h.CRC {
			return true
		}
	}
	return false
}

// DecodeOps decodes n op headers and their regions from an unstamped
// payload; what follows the last op must be zero padding shorter than a block.
func DecodeOps(payload []byte, n int) ([]Op, error) {
	ops, off := decodeOps(payload, n)
	if len(ops) < n {
		return nil, fmt.Errorf("op %d: %w", len(ops), opErr(payload, off))
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

// decodeOps decodes up to n ops, stopping at the first that does not fit;
// it returns them and the payload offset after the last.
func decodeOps(payload []byte, n int) ([]Op, int) {
	ops := make([]Op, 0, min(n, len(payload)/OpHeaderSize))
	off := 0
	for range n {
		if len(payload)-off < OpHeaderSize {
			break
		}
		p := payload[off:]
		l := be.Uint32(p[4:])
		if uint64(l) > uint64(len(p)-OpHeaderSize) {
			break
		}
		ops = append(ops, Op{
			TID:      be.Uint32(p[0:]),
			ClientID: p[8],
			Flags:    p[9],
			Data:     p[OpHeaderSize : OpHeaderSize+int(l)],
		})
		off += OpHeaderSize + int(l)
	}
	return ops, off
}

// opErr says why the op at payload offset off does not fit.
func opErr(payload []byte, off int) error {
	if len(payload)-off < OpHeaderSize {
		return fmt.Errorf("header at payload offset %d runs past the end (%d bytes)", off, len(payload))
	}
	return fmt.Errorf("at payload offset %d: length %d runs past the end (%d bytes)", off, be.Uint32(payload[off+4:]), len(payload))
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
