package ppc64

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// This file runs the vector kernel's algorithm in plain Go, one function per
// instruction, so that the math and the constants are checked on any machine
// (the assembly itself can only run on POWER, or under qemu).

// vec is a vector register: dw0 is the most significant doubleword.
type vec struct{ dw0, dw1 uint64 }

func clmul(a, b uint64) (hi, lo uint64) {
	for i := range 64 {
		if b&(1<<i) != 0 {
			lo ^= a << i
			if i > 0 {
				hi ^= a >> (64 - i)
			}
		}
	}
	return
}

func vpmsumd(a, b vec) vec {
	h0, l0 := clmul(a.dw0, b.dw0)
	h1, l1 := clmul(a.dw1, b.dw1)
	return vec{h0 ^ h1, l0 ^ l1}
}

func vxor(a, b vec) vec { return vec{a.dw0 ^ b.dw0, a.dw1 ^ b.dw1} }
func vand(a, b vec) vec { return vec{a.dw0 & b.dw0, a.dw1 & b.dw1} }
func vswap(a vec) vec   { return vec{a.dw1, a.dw0} } // VSLDOI $8, a, a
func lxvd2x(c [2]uint64) vec {
	return vec{c[0], c[1]}
}

// lvx is the aligned load after the byte-order fix: the 16 bytes'
// little-endian value.
func lvx(p []byte) vec {
	return vec{binary.LittleEndian.Uint64(p[8:]), binary.LittleEndian.Uint64(p)}
}

// modelVpmsum mirrors vpmsum_ppc64x.s step by step; len(p) is a non-zero
// multiple of 16.
func modelVpmsum(crc uint32, p []byte, t *table) uint32 {
	vc := vec{0, uint64(^crc)}
	var g vec
	n := len(p) / 16
	if n >= 8 {
		var a [8]vec
		for i := range a {
			a[i] = lvx(p[16*i:])
		}
		a[0] = vxor(a[0], vc)
		vc = vec{}
		p, n = p[128:], n-8
		k1, k2 := lxvd2x(t.loop[0]), lxvd2x(t.loop[1])
		for ; n >= 16; n -= 16 {
			for i := range a {
				d := vxor(vpmsumd(lvx(p[16*i:]), k1), lvx(p[128+16*i:]))
				a[i] = vxor(vpmsumd(a[i], k2), d)
			}
			p = p[256:]
		}
		for i := range a {
			g = vxor(g, vpmsumd(a[i], lxvd2x(t.fold[7-i+n])))
		}
	}
	for ; n > 0; n-- {
		x := vxor(lvx(p), vc)
		vc = vec{}
		g = vxor(g, vpmsumd(x, lxvd2x(t.fold[n-1])))
		p = p[16:]
	}
	y := vxor(vpmsumd(g, lxvd2x(t.reduce)), g)
	q := vand(vpmsumd(y, lxvd2x(t.mu)), lxvd2x(t.mask))
	r := vxor(vswap(vpmsumd(q, lxvd2x(t.p))), y)
	return ^uint32(r.dw0 >> 32)
}

func TestModel(t *testing.T) {
	tab := makeTable()
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	r := rand.New(rand.NewPCG(1, 1))
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for n := 16; n <= len(buf); n += 16 {
		crc := r.Uint32()
		if got, want := modelVpmsum(crc, buf[:n], tab), crc32.Update(crc, castagnoli, buf[:n]); got != want {
			t.Fatalf("len %d: model %#08x, want %#08x", n, got, want)
		}
	}
}
