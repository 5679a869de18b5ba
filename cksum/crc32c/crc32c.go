// Package crc32c is the leaf that every CRC-32C (Castagnoli) implementation
// of xlogfs shares: the polynomial, the Kernel type each implementation is
// described by, and the portable slicing-by-8 method.
//
// Where it sits. Imports flow cmd → fusefs → journal → logbuf → cksum →
// amd64/ppc64: package cksum chooses among the architecture kernels, so the
// architecture packages cannot import cksum. What they have in common with it
// (the type a kernel is handed over in, and the table-driven method ppc64
// runs on short inputs and that cksum offers as "generic") therefore lives
// below all three, here, importing nothing of the project:
//
//	cksum → amd64, ppc64 → cksum/crc32c
//	cksum → cksum/crc32c
//
// It is under cksum/ because it is the checksum's own definition, but it is
// not internal: Go's internal visibility is per tree, and amd64/ and ppc64/
// are outside cksum/.
package crc32c

import "encoding/binary"

// Castagnoli is the CRC-32C polynomial in reversed (LSB-first) bit order,
// x^0 in bit 31: the form a reflected table-driven CRC shifts right with.
const Castagnoli = 0x82f63b78

// Kernel is one CRC-32C implementation.
//
// Update(crc, p) has exactly the semantics of hash/crc32.Update(crc,
// crc32.MakeTable(crc32.Castagnoli), p): crc is the previous finalized CRC,
// and Update(0, p) is the CRC-32C of p.
//
// Combine(crcA, crcB, lenB) is the CRC-32C of A‖B given crcA, the CRC of A
// (or any CRC state, as Update takes), and crcB, the CRC of B, len(B) =
// lenB: Update(crcA, B) without reading B. lenB < 0 panics. A kernel
// without a fast way to shift a CRC leaves it nil, and package cksum fills
// in its portable one.
//
// CopyUpdate(dst, src, crc) copies src into dst as copy does (n =
// min(len(dst), len(src)) bytes) and returns Update(crc, src[:n]), reading
// each byte once: the copy rides along with the checksum. Overlapping
// buffers get copy's result and the CRC of what src held before the call.
type Kernel struct {
	Name       string // short name, used by --cksum-impl
	Desc       string // one line for humans
	Update     func(crc uint32, p []byte) uint32
	Combine    func(crcA, crcB uint32, lenB int) uint32
	CopyUpdate func(dst, src []byte, crc uint32) uint32
}

// slicing8 holds the tables of the slicing-by-8 method: slicing8[0] is the
// classic byte-at-a-time table, and slicing8[k][b] is the CRC of byte b
// followed by k zero bytes. Eight bytes are then folded with eight
// independent lookups, because the CRC of a word is the XOR of the CRCs of
// its bytes, each shifted by the number of bytes after it (CRC is linear
// over GF(2)).
var slicing8 = func() *[8][256]uint32 {
	t := new([8][256]uint32)
	for i := range 256 {
		c := uint32(i)
		for range 8 {
			c = c>>1 ^ Castagnoli&-(c&1)
		}
		t[0][i] = c
	}
	for i := range 256 {
		for k := 1; k < 8; k++ {
			t[k][i] = t[0][t[k-1][i]&0xff] ^ t[k-1][i]>>8
		}
	}
	return t
}()

// Slicing8Tables returns the slicing-by-8 tables: [0] the byte-at-a-time
// table, [k][b] the CRC of byte b followed by k zero bytes. They are shared:
// the caller must not modify them.
func Slicing8Tables() *[8][256]uint32 { return slicing8 }

// Slicing8Update is Update in portable Go: slicing-by-8 over the bulk, a
// byte at a time over the tail. It is right on either byte order, because
// binary.LittleEndian compiles to a byte-reversed load on big-endian
// machines (ppc64 runs it there).
func Slicing8Update(crc uint32, p []byte) uint32 {
	t := slicing8
	crc = ^crc
	for len(p) >= 8 {
		// The running CRC lines up with the first four bytes (the reflected
		// CRC's x^31 is the first message bit), so it is XORed into them;
		// the high four are looked up alone.
		lo := binary.LittleEndian.Uint32(p) ^ crc
		hi := binary.LittleEndian.Uint32(p[4:])
		crc = t[7][lo&0xff] ^ t[6][lo>>8&0xff] ^ t[5][lo>>16&0xff] ^ t[4][lo>>24] ^
			t[3][hi&0xff] ^ t[2][hi>>8&0xff] ^ t[1][hi>>16&0xff] ^ t[0][hi>>24]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	return ^crc
}
