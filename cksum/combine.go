package cksum

import "fmt"

// Combining CRCs.
//
// CRC-32C works on polynomials over GF(2) modulo P (0x1EDC6F41 with its
// x^32 term). The raw state after a message M, leaving out the inversions,
// is M(x)·x^32 mod P, and appending a message B of n bytes to A gives
//
//	raw(A‖B) = raw(A)·x^(8n) + raw(B)   (mod P)
//
// because A's bits move 8n places further from the end and the sum is
// linear. The finished CRC is the raw state of the message with its first
// 32 bits inverted, then inverted again; the inversions of A‖B and of B
// line up and cancel, which leaves, for finished CRCs,
//
//	CRC(A‖B) = CRC(A)·x^(8n) ⊕ CRC(B)   (mod P)
//
// So combining is one multiplication by x^(8n) mod P. x^(8n) is the product
// of x^(8·2^i) over the set bits i of n, and those 64 powers are a table
// (combinePow), so a combine costs popcount(n) multiplications.
//
// The polynomials are held "reflected", as the CRC itself is: bit i of a
// uint32 is the coefficient of x^(31-i).

// combinePow[i] is x^(8·2^i) mod P, reflected.
var combinePow = func() (t [64]uint32) {
	p := uint32(1 << (31 - 8)) // x^8
	for i := range t {
		t[i] = p
		p = mulmodP(p, p)
	}
	return t
}()

// xpow8n returns x^(8n) mod P, reflected.
func xpow8n(n uint64) uint32 {
	if n < uint64(len(blockPow))*BlockSize {
		// Two lookups and at most one multiplication: the lengths a
		// record's combines use (multiples of a block, and within 512
		// KiB) take only the lookup.
		p := blockPow[n/BlockSize]
		if b := n % BlockSize; b != 0 {
			p = mulmodP(p, bytePow[b])
		}
		return p
	}
	return xpow8nSlow(n)
}

// blockPow[k] is x^(8·BlockSize·k) mod P and bytePow[b] is x^(8b) mod P,
// reflected: x^(8n) for n below 512 KiB is the product of one of each.
// Each entry is the previous one times a constant: x^8 is a table CRC
// step over a zero byte, x^(8·BlockSize) four lookups (mulStampK).
var blockPow, bytePow = func() (k *[1024]uint32, b *[BlockSize]uint32) {
	k, b = new([1024]uint32), new([BlockSize]uint32)
	k[0], b[0] = 1<<31, 1<<31
	for i := 1; i < len(k); i++ {
		k[i] = mulStampK(k[i-1])
	}
	t := slicing8
	for i := 1; i < len(b); i++ {
		b[i] = t[0][b[i-1]&0xff] ^ b[i-1]>>8
	}
	return k, b
}()

// xpow8nSlow is xpow8n for any n: a multiplication per set bit of n.
func xpow8nSlow(n uint64) uint32 {
	r := uint32(1 << 31) // 1
	for i := 0; n != 0; i, n = i+1, n>>1 {
		if n&1 != 0 {
			r = mulmodP(r, combinePow[i])
		}
	}
	return r
}

// mulmodP returns a·b mod P for reflected a and b.
//
// The carry-less product of the two uint32 integers has bit k equal to the
// coefficient of x^(62-k) (bits i and j are x^(31-i) and x^(31-j)), so one
// more shift left makes it a 64-bit reflected value v, bit k = x^(63-k).
// Its high word (bits 32..63) is already the x^0..x^31 part; its low word s
// holds x^32..x^63 as s·x^32, and s·x^32 mod P is what a table CRC computes
// for four zero bytes: four lookups in the slicing tables.
//
// The product is taken 4 bits of a at a time from a 16-entry table of b's
// multiples.
func mulmodP(a, b uint32) uint32 {
	var m [16]uint64
	m[1] = uint64(b)
	for k := 2; k < 16; k++ {
		if k&(k-1) == 0 { // a power of two: the previous one times x
			m[k] = m[k>>1] << 1
		} else { // the sum of its lowest bit and the rest
			m[k] = m[k&-k] ^ m[k&(k-1)]
		}
	}
	var v uint64
	for i := 0; i < 32; i += 4 {
		v ^= m[a>>i&15] << i
	}
	v <<= 1
	t := slicing8
	s := uint32(v)
	return t[3][s&0xff] ^ t[2][s>>8&0xff] ^ t[1][s>>16&0xff] ^ t[0][s>>24] ^ uint32(v>>32)
}

// crc32cCombineGF2 is Combine in portable Go, for the implementations without a
// faster way to multiply by x^(8n).
func crc32cCombineGF2(crcA, crcB uint32, lenB int) uint32 {
	checkLen(lenB)
	return mulmodP(crcA, xpow8n(uint64(lenB))) ^ crcB
}

// checkLen panics on a negative length: a bug in the caller, as a negative
// slice bound is.
func checkLen(lenB int) {
	if lenB < 0 {
		panic(fmt.Sprintf("cksum: Combine with negative length %d", lenB))
	}
}
