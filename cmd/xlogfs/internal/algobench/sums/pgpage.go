package sums

import "encoding/binary"

// PostgreSQL's data page checksum (since 9.3), written from the description
// in its source. The page is read as rows of 32 little-endian 32-bit words
// (128 bytes a row); column j of every row goes into its own running hash
// h_j, started from a fixed per-column basis, by an FNV-1a-like step
//
//	t = h ^ v;  h = t·16777619 ^ (t >> 17)
//
// (FNV-1a's prime; the shift by 17 carries high bits down, which the plain
// multiply never does). Thirty-two columns let the multiplies run in
// parallel. After the last row every column takes two more steps with v = 0,
// then the 32 hashes are XORed into one 32-bit value. The page checksum
// XORs in the block number and keeps (value mod 65535) + 1: 16 bits, never
// zero (mod 2^16−1, as PostgreSQL's description says; its regression test's
// published outputs, which the tests here check, agree), stored in the page header's pd_checksum field (bytes 8–9), which is
// taken as zero while checksumming.
//
// PostgreSQL reads the words in the machine's byte order, so its checksums
// differ between little- and big-endian hosts; this is the little-endian one
// on every host.

// PGRowBytes is the width of one row of columns: 32 words of 4 bytes.
const PGRowBytes = pgColumns * 4

const (
	pgColumns = 32
	fnvPrime  = 16777619
)

// pgBasis holds the starting value of each column, the constants PostgreSQL
// publishes (its authors chose them at random).
var pgBasis = [pgColumns]uint32{
	0x5B1F36E9, 0xB8525960, 0x02AB50AA, 0x1DE66D2A,
	0x79FF467A, 0x9BB9F8A3, 0x217E7CD2, 0x83E13D2C,
	0xF8D4474F, 0xE39EB970, 0x42C6AE16, 0x993216FA,
	0x7B093B5D, 0x98DAFF3C, 0xF718902A, 0x0B1C9CDB,
	0xE58F764B, 0x187636BC, 0x5D7B3BB1, 0xE73DE7DE,
	0x92BEC979, 0xCCA6C0B2, 0x304A0979, 0x85AA43D4,
	0x783125BB, 0x6CA8EAA2, 0xE407EAC6, 0x4B5CFC3E,
	0x9FBF8C76, 0x15CA20BE, 0xF2CA9FD3, 0x959BD756,
}

func pgStep(h, v uint32) uint32 {
	t := h ^ v
	return (t * fnvPrime) ^ (t >> 17)
}

// PGBlock is the streaming form of PostgreSQL's block hash (the 32-bit value
// before the block number and the fold to 16 bits). PostgreSQL only hashes
// whole 8 KiB pages; here any whole number of 128-byte rows may be written,
// in pieces of any size, and a partial last row counts as zero-padded.
// Use NewPGBlock: the zero value is not ready.
type PGBlock struct {
	h    [pgColumns]uint32
	row  [PGRowBytes]byte // a row written in part
	nrow int
}

// NewPGBlock returns a PGBlock with every column at its basis.
func NewPGBlock() *PGBlock {
	return &PGBlock{h: pgBasis}
}

// Reset puts every column back to its basis.
func (b *PGBlock) Reset() { *b = PGBlock{h: pgBasis} }

// Write adds p to the hash.
func (b *PGBlock) Write(p []byte) {
	if b.nrow > 0 {
		n := copy(b.row[b.nrow:], p)
		b.nrow += n
		p = p[n:]
		if b.nrow < PGRowBytes {
			return
		}
		b.rows(b.row[:])
		b.nrow = 0
	}
	whole := len(p) / PGRowBytes * PGRowBytes
	b.rows(p[:whole])
	b.nrow = copy(b.row[:], p[whole:])
}

// rows hashes whole rows. The 32 columns are plain locals-in-an-array; each
// step of a row is independent of the others, so the CPU overlaps them.
func (b *PGBlock) rows(p []byte) {
	h := &b.h
	for ; len(p) >= PGRowBytes; p = p[PGRowBytes:] {
		r := p[:PGRowBytes:PGRowBytes]
		for j := range pgColumns {
			h[j] = pgStep(h[j], binary.LittleEndian.Uint32(r[4*j:]))
		}
	}
}

// Sum32 returns the block hash of what was written: two zero steps per
// column, then the XOR of all columns. It does not change the state.
func (b *PGBlock) Sum32() uint32 {
	h := b.h
	if b.nrow > 0 {
		var row [PGRowBytes]byte
		copy(row[:], b.row[:b.nrow])
		for j := range pgColumns {
			h[j] = pgStep(h[j], binary.LittleEndian.Uint32(row[4*j:]))
		}
	}
	var x uint32
	for j := range pgColumns {
		x ^= pgStep(pgStep(h[j], 0), 0)
	}
	return x
}

// PGBlockHash returns PostgreSQL's 32-bit block hash of p.
func PGBlockHash(p []byte) uint32 {
	b := PGBlock{h: pgBasis}
	b.Write(p)
	return b.Sum32()
}

// PGFold turns a block hash into the 16-bit page checksum for block blkno.
func PGFold(hash, blkno uint32) uint16 {
	return uint16((hash^blkno)%65535 + 1)
}

// PGPageChecksum returns the checksum PostgreSQL stores in pd_checksum for
// page (normally 8 KiB) as block blkno: the hash of the page with its
// pd_checksum field (bytes 8–9) taken as zero, folded with the block number.
// page is not changed.
func PGPageChecksum(page []byte, blkno uint32) uint16 {
	b := PGBlock{h: pgBasis}
	var first [PGRowBytes]byte
	n := copy(first[:], page)
	if n > 9 {
		first[8], first[9] = 0, 0
	}
	b.Write(first[:n])
	b.Write(page[n:])
	return PGFold(b.Sum32(), blkno)
}
