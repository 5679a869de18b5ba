package cksum

import "fmt"

// Coverage is which bytes of a log record its CRC covers. It is a property
// of the store (mkfs --crc, recorded in the superblock), so every record of
// a store is checksummed and verified under the same one, whatever the
// mode: a Mode decides only how the covered bytes are cut into crc32c calls
// and when they run, and every mode computes the same CRC under a given
// coverage. Package logbuf's documentation (CRC coverage) has what each
// coverage means for the record format.
type Coverage uint8

const (
	// CoverWhole covers the record's contiguous bytes: every header block
	// in full (h_crc read as zero), then the payload. It is xlogfs's first
	// format and the zero value, which stores made before coverage was a
	// choice hold.
	CoverWhole Coverage = iota
	// CoverXFS covers what XFS's xlog_cksum covers: the first
	// RecHeaderSize bytes of the record header block (XLOG_REC_SIZE, with
	// h_crc read as zero), the first ExtHeaderSize bytes
	// (XLOG_REC_EXT_SIZE) of each of the ExtHeaders(h_len) extension
	// headers the payload needs, then the h_len bytes of payload, in that
	// order: 1 + ExtHeaders(h_len) + 1 regions.
	CoverXFS
)

// The parts of a record's header blocks CoverXFS covers, as XFS sizes them.
const (
	RecHeaderSize   = 328      // XLOG_REC_SIZE: struct xlog_rec_header up to and including h_pad0
	ExtHeaderSize   = 260      // XLOG_REC_EXT_SIZE: xh_cycle and xh_cycle_data
	HeaderCycleSize = 32 << 10 // XLOG_HEADER_CYCLE_SIZE: the payload one header's cycle data covers
	// MaxRegions is the most regions a record has under any coverage:
	// the eight header blocks of a 256 KiB iclog and the payload.
	MaxRegions = 256<<10/HeaderCycleSize + 1
)

var coverageNames = [...]string{CoverWhole: "whole", CoverXFS: "xfs"}

// Coverages lists every coverage.
func Coverages() []Coverage { return []Coverage{CoverWhole, CoverXFS} }

func (c Coverage) String() string {
	if int(c) < len(coverageNames) {
		return coverageNames[c]
	}
	return fmt.Sprintf("Coverage(%d)", c)
}

// Valid reports whether c is a coverage this xlogfs knows.
func (c Coverage) Valid() bool { return int(c) < len(coverageNames) }

// ParseCoverage accepts whole and xfs.
func ParseCoverage(s string) (Coverage, error) {
	for c, name := range coverageNames {
		if s == name {
			return Coverage(c), nil
		}
	}
	return 0, fmt.Errorf("unknown CRC coverage %q (want whole or xfs)", s)
}

// ExtHeaders is how many extension headers XFS's xlog_cksum covers for a
// payload of payloadLen bytes (h_len): DIV_ROUND_UP(h_len, 32 KiB) − 1,
// those whose cycle data the payload's blocks use; none for an empty one.
func ExtHeaders(payloadLen int) int {
	return max(0, (payloadLen+HeaderCycleSize-1)/HeaderCycleSize-1)
}

// HeaderRegions appends to dst the parts of hdr, a record's header blocks,
// that c covers when the payload is payloadLen bytes, in the order the CRC
// takes them: under CoverWhole every block, under CoverXFS the record
// header's first RecHeaderSize bytes and the first ExtHeaderSize bytes of
// ExtHeaders(payloadLen) extension headers. The regions alias hdr. A hdr
// too short for the payload's extension headers is a bug in the caller
// (HeaderRegions panics): a record's header blocks always have room.
func (c Coverage) HeaderRegions(dst [][]byte, hdr []byte, payloadLen int) [][]byte {
	switch c {
	case CoverWhole:
		for off := 0; off < len(hdr); off += BlockSize {
			dst = append(dst, hdr[off:off+BlockSize])
		}
	case CoverXFS:
		dst = append(dst, hdr[:RecHeaderSize])
		for i := 1; i <= ExtHeaders(payloadLen); i++ {
			dst = append(dst, hdr[i*BlockSize:][:ExtHeaderSize])
		}
	default:
		panic(fmt.Sprintf("cksum: unknown coverage %d", c))
	}
	return dst
}

// Regions appends to dst the regions of rec (hdrLen bytes of header blocks,
// then the payload) that c covers, in order: HeaderRegions, then the
// payload (always, even empty).
func (c Coverage) Regions(dst [][]byte, rec []byte, hdrLen int) [][]byte {
	return append(c.HeaderRegions(dst, rec[:hdrLen], len(rec)-hdrLen), rec[hdrLen:])
}

// CoveredBytes is how many bytes of a record with hdrLen bytes of header
// blocks and payloadLen bytes of payload c covers.
func (c Coverage) CoveredBytes(hdrLen, payloadLen int) int {
	if c == CoverXFS {
		return RecHeaderSize + ExtHeaderSize*ExtHeaders(payloadLen) + payloadLen
	}
	return hdrLen + payloadLen
}
