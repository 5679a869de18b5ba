package cksum

import "encoding/binary"

// Castagnoli is the CRC-32C polynomial in reversed (LSB-first) bit order.
const Castagnoli = 0x82f63b78

// slicing8 holds the tables of the slicing-by-8 method: slicing8[0] is the
// classic byte-at-a-time table, and slicing8[k][b] is the CRC of byte b
// followed by k zero bytes. Eight bytes are then folded with eight independent
// lookups, because the CRC of a word is the XOR of the CRCs of its bytes, each
// shifted by the number of bytes after it (CRC is linear over GF(2)).
var slicing8 = func() *[8][256]uint32 {
	t := new([8][256]uint32)
	for i := range 256 {
		c := uint32(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ Castagnoli
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}()

// genericUpdate is the portable implementation: slicing-by-8 over the bulk,
// byte at a time over the tail.
func genericUpdate(crc uint32, p []byte) uint32 {
	t := slicing8
	crc = ^crc
	for len(p) >= 8 {
		// The low four bytes are XORed into the running CRC (they are the
		// ones it is "aligned" with); the high four are looked up alone.
		lo := binary.LittleEndian.Uint32(p) ^ crc
		crc = t[7][lo&0xff] ^ t[6][lo>>8&0xff] ^ t[5][lo>>16&0xff] ^ t[4][lo>>24] ^
			t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	return ^crc
}
