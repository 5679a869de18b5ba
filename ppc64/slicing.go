package ppc64

import "encoding/binary"

// castagnoli is the CRC-32C polynomial, bit-reversed (x^0 in bit 31), the
// form a reflected table-driven CRC shifts right with.
const castagnoli = 0x82f63b78

// slicing8 holds the slicing-by-8 tables: slicing8[0] is the classic
// byte-at-a-time table, slicing8[k][b] the CRC of byte b followed by k zero
// bytes. The CRC of eight bytes is then the XOR of eight lookups, one per
// byte, because CRC is linear and each byte only needs shifting past the
// bytes after it.
var slicing8 = func() *[8][256]uint32 {
	t := new([8][256]uint32)
	for i := range 256 {
		c := uint32(i)
		for range 8 {
			c = c>>1 ^ castagnoli&-(c&1)
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

// scalarUpdate is the path for short inputs and for the unaligned head and
// the sub-16-byte tail around the vector kernel: slicing-by-8, then a byte
// at a time. It is plain Go so that it is right on either byte order:
// binary.LittleEndian compiles to a byte-reversed load on big-endian POWER.
func scalarUpdate(crc uint32, p []byte) uint32 {
	t := slicing8
	crc = ^crc
	for len(p) >= 8 {
		// The running CRC lines up with the first four bytes (the reflected
		// CRC's x^31 is the first message bit), so it is XORed into them.
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
