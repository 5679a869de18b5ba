package ppc64

import "math/bits"

// The math of the vector kernel.
//
// Polynomials over GF(2) are held here in "normal" form, bit i the
// coefficient of x^i, and P = x^32 + 0x1edc6f41 is CRC-32C's polynomial. The
// raw CRC of a message M (no pre/post inversion) is M(x)·x^32 mod P, where
// the message's first bit is its highest coefficient and each byte is read
// from its least significant bit ("reflected" CRC).
//
// Layout. The kernel loads 16 bytes so that the register, as a 128-bit
// integer, is their little-endian value: integer bit k is message bit k,
// coefficient x^(127-k) of the block. (LVX does that on ppc64le; on ppc64 it
// gives the big-endian value and one VPERM reverses the bytes.) So the low
// doubleword dw1 holds the block's first 8 bytes, B1 = the x^64..x^127 part,
// and the high doubleword dw0 the last 8, B0 = x^0..x^63; each doubleword is
// "reflected": its bit i is the coefficient of x^(63-i) of its half.
//
// Folding. VPMSUMD a, k = clmul(a.dw0, k.dw0) ^ clmul(a.dw1, k.dw1), a
// 127-bit product of the doublewords' integers. For two reflected 64-bit
// values the product's integer bit i+j holds x^(63-i)·x^(63-j) = x^(126-(i+j)),
// so read back in the 128-bit layout (bit k = x^(127-k)) it is the true
// product times x. Moving a block d bits forward is
//
//	(B1·x^64 + B0)·x^d = B1·x^(d+64) + B0·x^d ≡ B1·c1 + B0·c0 (mod P)
//
// so the constant pair is c0 = x^(d-1) mod P and c1 = x^(d+63) mod P (the -1
// pays for the extra x), each reflected into the high half of a doubleword
// (x^e at bit 63-e). The product has degree < 96, fits the layout, and is
// XORed onto the block d bits later. The kernel's blocks all end up folded
// d = 128·n + 32 bits for a block n blocks before the end: the +32 is the
// x^32 of the CRC's definition, so their XOR G ≡ M·x^32 (mod P) directly and
// only has to be cut from 96 bits to 32.
//
// 96 to 64 bits. G's integer bits 0..31 are zero; its x^64..x^95 part g2 sits
// in dw1 as a reflected 64-bit value of degree < 32. One more VPMSUMD, by
// x^63 mod P in dw1 only (d = 64, the -1 again), gives g2·x^64 mod P, which
// lands entirely in dw0: XORed onto G, dw0 is Y ≡ G, of degree < 64.
//
// 64 to 32 bits: Barrett. With μ = floor(x^64/P) (degree 32), for Y = Yh·x^32
// + Yl the quotient is q = floor(Yh·μ/x^32) and Y mod P = Yl + (q·P mod x^32).
// Reflected, Yh is dw0's low 32 bits. A 32-bit value times a 33-bit one
// reflected with x^e at bit 32-e has x^e at bit 63-e: the product's low 32
// bits are its x^32..x^63, the high half. So clmul(dw0, μ) has q in its low
// 32 bits (Yl only reaches higher ones), and clmul(q, P) has q·P mod x^32 in
// bits 32..63, the bits Yl has in dw0. Both products come out in dw1; one
// VSLDOI moves the second to dw0, and the CRC is dw0's bits 32..63 XOR it.

// poly is P in normal form, with its x^32 term.
const poly = 1<<32 | 0x1edc6f41

// xnModP returns x^n mod P in normal form (degree < 32).
func xnModP(n int) uint64 {
	r := uint64(1)
	for range n {
		r <<= 1
		if r&(1<<32) != 0 {
			r ^= poly
		}
	}
	return r
}

// divP returns floor(a/P) for a polynomial a of degree < 64.
func divP(a uint64) uint64 {
	var q uint64
	for i := 63; i >= 32; i-- {
		if a&(1<<i) != 0 {
			q |= 1 << (i - 32)
			a ^= poly << (i - 32)
		}
	}
	return q
}

// refl64 reflects a polynomial of degree < 32 into a doubleword the way the
// folding math wants it: x^e at bit 63-e.
func refl64(c uint64) uint64 { return bits.Reverse64(c) }

// refl33 reflects a polynomial of degree <= 32 into bits 0..32: x^e at bit
// 32-e.
func refl33(c uint64) uint64 { return bits.Reverse64(c) >> 31 }

// foldBy returns the constant pair {dw0, dw1} that moves a block d bits on.
func foldBy(d int) [2]uint64 {
	return [2]uint64{refl64(xnModP(d - 1)), refl64(xnModP(d + 63))}
}

// foldN is how many blocks the kernel's final folds reach back: after the
// main loop, 8 accumulators plus up to 15 blocks of tail.
const foldN = 8 + 15

// table is every constant the kernel reads, each a VSR's worth: element 0
// is loaded into dw0 and element 1 into dw1 (LXVD2X does that on both byte
// orders). Its layout is fixed: vpmsum_ppc64x.s has the offsets, and
// TestTableLayout checks them.
type table struct {
	fold   [foldN][2]uint64 // fold[n]: a block n blocks before the end, times x^32 (d = 128n+32)
	loop   [2][2]uint64     // the main loop's folds by 128 and 256 bytes
	reduce [2]uint64        // g2·x^64: 96 to 64 bits
	mu     [2]uint64        // Barrett's μ = floor(x^64/P), reflected to 33 bits, in dw0
	p      [2]uint64        // P reflected to 33 bits, in dw1
	mask   [2]uint64        // dw1's low 32 bits: q
	bswap  [2]uint64        // VPERM control reversing 16 bytes (ppc64 loads)
}

func makeTable() *table {
	t := new(table)
	for n := range t.fold {
		t.fold[n] = foldBy(128*n + 32)
	}
	t.loop[0] = foldBy(128 * 8)
	t.loop[1] = foldBy(256 * 8)
	t.reduce = [2]uint64{0, refl64(xnModP(63))}
	// x^64 = x^32·P + x^32·(P - x^32), and the last term has degree < 64.
	mu := 1<<32 | divP((poly^1<<32)<<32)
	t.mu = [2]uint64{refl33(mu), 0}
	t.p = [2]uint64{0, refl33(poly)}
	t.mask = [2]uint64{0, 0xffffffff}
	// VPERM numbers the bytes of a register from the most significant;
	// byte i of the result is byte 15-i of the source.
	t.bswap = [2]uint64{0x0f0e0d0c0b0a0908, 0x0706050403020100}
	return t
}
