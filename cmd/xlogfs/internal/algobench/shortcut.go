package algobench

import (
	"crypto/subtle"
	"sync"
)

// Exact shortcuts for the damage models that keep a buffer's length. Each
// computes the change a damage makes to the checksum, in the algorithm's own
// layout, so the damage is missed at full width iff the change is zero and
// missed in the low 16 bits iff its low 16 bits are zero. The tests prove
// each equal to recomputing the checksum on random buffers and damages.

// --- CRCs -----------------------------------------------------------------
//
// A CRC with an initial value and a final XOR is affine over GF(2): for
// messages of equal length, CRC(m ⊕ e) = CRC(m) ⊕ CRC₀(e), where CRC₀ is
// the bare polynomial remainder (zero initial value, no final XOR). So the
// damage e is missed iff CRC₀(e) = 0, whatever m is.
//
// e is zero except in a few short patches. Zero bytes before a patch do not
// move a bare CRC off zero, and each zero byte after it multiplies the
// remainder by x⁸ mod P. So for a patch d at offset o in a buffer of n bytes,
//
//	CRC₀(e) = ⊕ over patches of  CRC₀(d) · x^(8·(n − o − len d)) mod P,
//
// and CRC₀(d) = CRC(d) ⊕ CRC(0^len d) by the same affinity, which lets the
// fast kernels compute it. Polynomials here are in the reflected order the
// CRCs use: bit width−1−k holds the coefficient of x^k.

type crcLinear struct {
	width  int
	poly   uint64 // reflected, without the x^width term
	update func(crc uint64, p []byte) uint64

	mu     sync.Mutex
	zeros  []uint64 // zeros[l] = CRC(0^l)
	powers map[int][]uint64
}

func newCRCLinear(width int, poly uint64, update func(uint64, []byte) uint64) *crcLinear {
	c := &crcLinear{width: width, poly: poly, update: update, powers: map[int][]uint64{}}
	z := make([]byte, maxPatch)
	c.zeros = make([]uint64, maxPatch+1)
	for l := range c.zeros {
		c.zeros[l] = update(0, z[:l])
	}
	return c
}

// maxPatch bounds the patches the CRC shortcut handles from its table; a
// longer one has its zero CRC computed on the spot.
const maxPatch = 1024

func (c *crcLinear) one() uint64 { return 1 << (c.width - 1) }

// timesX returns a·x mod P.
func (c *crcLinear) timesX(a uint64) uint64 {
	if a&1 != 0 { // the x^(width−1) term overflows into x^width ≡ P − x^width
		return a>>1 ^ c.poly
	}
	return a >> 1
}

// mulmod returns a·b mod P: b·x^k is added for every x^k term of a. The
// loop has no data-dependent branches (it runs on random values, which a
// branch predictor cannot guess): a's terms are taken from its top bit,
// and masks made from single bits choose whether to add and to reduce.
func (c *crcLinear) mulmod(a, b uint64) uint64 {
	poly := c.poly
	a <<= 64 - c.width // x^0 at bit 63
	var p uint64
	for a != 0 {
		p ^= b & -(a >> 63)
		a <<= 1
		b = b>>1 ^ poly&-(b&1)
	}
	return p
}

// powerTable returns t with t[z] = x^(8z) mod P for z in [0, n], made once
// per buffer length.
func (c *crcLinear) powerTable(n int) []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.powers[n]; ok {
		return t
	}
	t := make([]uint64, n+1)
	v := c.one()
	for z := range t {
		t[z] = v
		for range 8 {
			v = c.timesX(v)
		}
	}
	c.powers[n] = t
	return t
}

// bare returns CRC₀(d).
func (c *crcLinear) bare(d []byte) uint64 {
	z := c.update(0, d)
	if len(d) <= maxPatch {
		return z ^ c.zeros[len(d)]
	}
	return z ^ c.update(0, make([]byte, len(d)))
}

// crcDelta returns CRC(m) ⊕ CRC(m') for the damage d to a buffer of n bytes
// (pow from powerTable(n)).
func (c *crcLinear) crcDelta(n int, d *Damage, pow []uint64) uint64 {
	var acc uint64
	for i, p := range d.Patches {
		x := d.xor(i)
		acc ^= c.mulmod(c.bare(x), pow[n-p.Off-len(x)])
	}
	return acc
}

// --- Adler-32 and Fletcher ---------------------------------------------------
//
// Both keep s1 = Σ w_i and s2 = Σ (m − i)·w_i modulo M over m words (Adler
// adds constants for its initial 1, which cancel between two buffers of the
// same length). Changing word i by δ changes s1 by δ and s2 by (m − i)·δ, so
// a damage is missed iff Σδ ≡ 0 and Σ(m − i)·δ ≡ 0 (mod M). Fletcher-32's
// word i is bytes 2i and 2i+1, little-endian, so a byte's change counts once
// or 256 times in its word.

// modDelta returns the change from checksum a to b for sums s2<<shift | s1
// modulo m, in the same layout, each half in [0, m).
func modDelta(m uint64, shift uint) func(a, b uint64) uint64 {
	mask := uint64(1)<<shift - 1
	return func(a, b uint64) uint64 {
		d1 := (b&mask + m - a&mask) % m
		d2 := (b>>shift + m - a>>shift) % m
		return d2<<shift | d1
	}
}

// weightedDelta returns (Σ c·δ mod m, Σ c·(words − w)·δ mod m) over every
// changed byte, where w is the byte's word and c its scale in that word.
func weightedDelta(d *Damage, m int64, wordBytes int) (d1, d2 uint64) {
	s1, s2 := d.rawSums(wordBytes)
	return uint64((s1%m + m) % m), uint64((s2%m + m) % m)
}

// rawSums returns Σ c·δ and Σ c·(words − w)·δ over the damage's changed
// bytes, unreduced, computed once per damage and word size (Adler-32 and
// Fletcher-16 share the byte sums). No overflow: |δ·c| < 2^16, words ≤
// 2^18 and at most 2^18 bytes change, so |s2| < 2^52.
func (d *Damage) rawSums(wordBytes int) (s1, s2 int64) {
	k := wordBytes - 1
	if d.sumsValid[k] {
		return d.sums[k][0], d.sums[k][1]
	}
	words := int64((d.N + wordBytes - 1) / wordBytes)
	for _, p := range d.Patches {
		if wordBytes == 1 {
			// Σ (words − off − j)·δ_j = (words − off)·Σδ − Σ j·δ_j.
			var sd, sjd int64
			for j := range p.Old {
				delta := int64(p.New[j]) - int64(p.Old[j])
				sd += delta
				sjd += int64(j) * delta
			}
			s1 += sd
			s2 += (words-int64(p.Off))*sd - sjd
			continue
		}
		for j := range p.Old {
			i := p.Off + j
			delta := (int64(p.New[j]) - int64(p.Old[j])) << (8 * (i & 1))
			s1 += delta
			s2 += (words - int64(i>>1)) * delta
		}
	}
	d.sums[k] = [2]int64{s1, s2}
	d.sumsValid[k] = true
	return s1, s2
}

func adlerDelta(n int, d *Damage) uint64 {
	a, b := weightedDelta(d, 65521, 1)
	return b<<16 | a
}

func fletcher16Delta(n int, d *Damage) uint64 {
	a, b := weightedDelta(d, 255, 1)
	return b<<8 | a
}

func fletcher32Delta(n int, d *Damage) uint64 {
	a, b := weightedDelta(d, 65535, 2)
	return b<<16 | a
}

// xor returns Old ⊕ New of patch i, computed once per damage (the three
// CRCs share it).
func (d *Damage) xor(i int) []byte {
	for len(d.xors) <= i {
		d.xors = append(d.xors, nil)
	}
	if d.xors[i] == nil {
		p := d.Patches[i]
		x := d.xorStore[len(d.xorStore):][:len(p.Old)]
		if cap(d.xorStore)-len(d.xorStore) < len(p.Old) {
			x = make([]byte, len(p.Old))
		} else {
			d.xorStore = d.xorStore[:len(d.xorStore)+len(p.Old)]
		}
		subtle.XORBytes(x, p.Old, p.New)
		d.xors[i] = x
	}
	return d.xors[i]
}
