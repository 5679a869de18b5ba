package cksum

import (
	"encoding/binary"
	"fmt"
	"time"
	"unsafe"
)

// Inline mode: a record's payload is checksummed while it is copied into
// the iclog, and sealing only checksums the header blocks and joins the two
// with Combine. The catch is cycle stamping: after the copy, the first word
// of every payload block is replaced by the record's cycle (the displaced
// word goes to the headers' cycle data), and the CRC must cover the stamped
// payload, not the bytes as copied.
//
// CRC-32C is affine: for messages M and D of the same length,
// CRC(M ⊕ D) = CRC(M) ⊕ raw(D), raw being the CRC without the inversions.
// Stamping XORs the payload with D, which is zero except for the word
// Δ_i = old_i ⊕ new_i at the start of block i. A word w followed by z more
// bytes contributes w·x^32·x^(8z) to raw (CRC32 of the word alone is w·x^32
// mod P, and each later byte multiplies by x^8), and block i's word has
// z = L - 512i - 4 bytes after it, L = 512n being the payload's length.
// So raw(D) = Σ Δ_i·x^(8(L - 512i)) = Σ Δ_i·K^(n-i) with K = x^4096 mod P,
// and by Horner's rule raw(D) is w_n for
//
//	w_0 = 0,   w_(i+1) = (w_i ⊕ Δ_i)·K
//
// one multiplication by a constant per block, taken by table lookup.
// Payload keeps CRC(M) of the bytes as written and w, so blocks can be
// stamped in order as soon as their first word is written.

// stampK[j][b] is (b << 8j)·K mod P, K = x^(8·BlockSize): the product of any
// reflected value by K is four lookups.
var stampK = func() (t [4][256]uint32) {
	k := xpow8nSlow(BlockSize) // xpow8n's tables are built from this one
	for j := range t {
		for b := range t[j] {
			t[j][b] = mulmodP(uint32(b)<<(8*j), k)
		}
	}
	return t
}()

func mulStampK(w uint32) uint32 {
	return stampK[0][w&0xff] ^ stampK[1][w>>8&0xff] ^ stampK[2][w>>16&0xff] ^ stampK[3][w>>24]
}

// mulX32 returns w·x^32 mod P for a reflected w: what a table CRC
// computes for four zero bytes.
func mulX32(w uint32) uint32 {
	t := slicing8
	return t[3][w&0xff] ^ t[2][w>>8&0xff] ^ t[1][w>>16&0xff] ^ t[0][w>>24]
}

// A prefix (Restart): bytes before the payload whose CRC was taken before
// the payload was written, with some of its words still zero then (a
// record's extension header blocks, whose cycle data fills as the payload's
// blocks are stamped). Such a word w saved at offset o changes the record's
// CRC by w·x^(8d), d being the bytes from o to the end (the same algebra
// as the stamps'). Saved words come in increasing offsets, mostly 4 bytes
// apart, so Horner's rule keeps them in one value, r, relative to the last
// word: r' = r·x^32 ⊕ w for the next word. When a word is not the next one
// (a gap: the next extension header), or at Sum, r is shifted to the end
// of what is written so far with one Combine and XORed into the running
// CRC, which carries it to the record's end from there on: the payload's
// length need not be known.

// Payload is the inline mode's running checksum of one record's payload,
// kept while the payload is written front to back and its blocks stamped
// in order. The zero Payload has no implementation; Reset gives it one.
type Payload struct {
	impl   Impl
	crc    uint32 // CRC-32C of the bytes as written
	w      uint32 // raw CRC term of the stamps so far (Horner, above)
	length int    // bytes written
	blocks int    // blocks stamped

	// the prefix (Restart), and its saved words not yet in crc
	prefix  int    // bytes of prefix before the payload
	r       uint32 // saved words since the last gap, Horner, relative to lastOff
	lastOff int    // prefix offset of the last saved word
	saving  bool   // r holds words

	// Summer.Copy's work on this payload so far, for its record's Cost
	// and, at seal, the Summer's counters: ops, calls, bytes, and the
	// CPU time and bytes of the ops timed (the others' is estimated at
	// seal).
	copyOps, copyCalls, copyBytes int
	copyCPU                       time.Duration
	copyTimedBytes                int
	// rng picks the ops Copy times (xorshift, kept across Reset and
	// Restart so that no op position in a record is favoured).
	rng uint64
}

// Reset empties p, to be computed with impl.
func (p *Payload) Reset(impl Impl) { *p = Payload{impl: impl, rng: p.rng} }

// Restart empties p, to be computed with impl after a prefix of
// prefixLen bytes whose CRC-32C is prefixCRC: Sum is then the CRC of the
// prefix (with the words Save puts in it) followed by the stamped payload.
func (p *Payload) Restart(impl Impl, prefixCRC uint32, prefixLen int) {
	*p = Payload{impl: impl, crc: prefixCRC, prefix: prefixLen, rng: p.rng}
}

// Save records that the 4-byte word at prefix offset off, zero when the
// prefix's CRC was taken, is now word. Offsets must increase from one
// Save to the next (a bug in the caller otherwise; Save panics).
func (p *Payload) Save(word []byte, off int) {
	if off < 0 || off+4 > p.prefix || (p.saving && off < p.lastOff+4) {
		panic(fmt.Sprintf("cksum: Payload.Save at prefix offset %d (prefix of %d bytes, last word at %d)", off, p.prefix, p.lastOff))
	}
	w := binary.LittleEndian.Uint32(word)
	if p.saving && off == p.lastOff+4 {
		p.r = mulX32(p.r) ^ w
	} else {
		p.flushSaved()
		p.r, p.saving = w, true
	}
	p.lastOff = off
}

// flushSaved moves the saved words of r into crc: shifted over the bytes
// from the last one to the end of what is written (CRC's linearity: XORing
// a difference's raw CRC into the state is checksumming the changed bytes).
func (p *Payload) flushSaved() {
	if p.saving {
		p.crc ^= p.impl.Combine(p.r, 0, p.prefix-p.lastOff+p.length)
		p.saving = false
	}
}

// Write extends p over b, the next bytes of the payload, already in place.
func (p *Payload) Write(b []byte) {
	p.crc = p.impl.Update(p.crc, b)
	p.length += len(b)
}

// Copy copies src into dst (len(dst) >= len(src)), the next bytes of the
// payload, extending p over them in the same pass (CopyUpdate).
func (p *Payload) Copy(dst, src []byte) {
	p.crc = p.impl.CopyUpdate(dst, src, p.crc)
	p.length += len(src)
}

// Stamp records that the first word of the next block (block Blocks())
// was old and is now new, both 4 bytes. It may come before or after the
// word's bytes were written with Write or Copy, which see the old word.
func (p *Payload) Stamp(old, new []byte) {
	d := binary.LittleEndian.Uint32(old) ^ binary.LittleEndian.Uint32(new)
	p.w = mulStampK(p.w ^ d)
	p.blocks++
}

// Len is the number of payload bytes written.
func (p *Payload) Len() int { return p.length }

// PrefixLen is the prefix's length (Restart; 0 after Reset).
func (p *Payload) PrefixLen() int { return p.prefix }

// Blocks is the number of blocks stamped.
func (p *Payload) Blocks() int { return p.blocks }

// Sum returns the CRC-32C of the prefix, if any (Restart), and the stamped
// payload: PrefixLen() + Len() bytes. The payload must be whole blocks,
// every one stamped: a record's payload always is, once sealed; anything
// else is a bug in the caller, and Sum panics.
func (p *Payload) Sum() uint32 {
	if p.length != p.blocks*BlockSize {
		panic(fmt.Sprintf("cksum: Payload.Sum over %d bytes with %d blocks stamped", p.length, p.blocks))
	}
	p.flushSaved()
	return p.crc ^ p.w
}

// sample reports whether the next op is one Summer.Copy times: with
// probability 1/(mask+1), from p's xorshift generator.
func (p *Payload) sample(mask uint64) bool {
	x := p.rng
	if x == 0 {
		x = uint64(uintptr(unsafe.Pointer(p))) | 1 ^ clock.read()<<1
	}
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	p.rng = x
	return x&mask == 0
}
