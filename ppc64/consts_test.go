package ppc64

import (
	"hash/crc32"
	"math/big"
	"math/bits"
	"testing"
)

// slowXnModP is x^n mod P by schoolbook long division of x^n as a big
// integer: a reference sharing no code with xnModP.
func slowXnModP(n int) uint64 {
	a := new(big.Int).Lsh(big.NewInt(1), uint(n))
	p := big.NewInt(poly)
	for d := a.BitLen() - 1; d >= 32; d-- {
		if a.Bit(d) == 1 {
			a.Xor(a, new(big.Int).Lsh(p, uint(d-32)))
		}
	}
	return a.Uint64()
}

// crcXnModP derives x^e mod P (e >= 32) from hash/crc32 alone: the raw CRC
// of a message whose only set bit is x^(e-32) is x^(e-32)·x^32 mod P.
// hash/crc32 inverts before and after, so the raw CRC is the XOR of the
// message's CRC and the CRC of as many zero bytes (CRC is affine).
func crcXnModP(e int) uint64 {
	n := (e-32)/8 + 1
	t := 8*n - 1 - (e - 32) // message bit index, LSB first within bytes
	m := make([]byte, n)
	m[t/8] = 1 << (t % 8)
	raw := crc32.Update(0, castagnoliTable, m) ^ crc32.Update(0, castagnoliTable, make([]byte, n))
	return uint64(bits.Reverse32(raw)) // reflected (x^0 at bit 31) to normal
}

func TestXnModP(t *testing.T) {
	for n := 0; n <= 2200; n++ {
		got, want := xnModP(n), slowXnModP(n)
		if got != want {
			t.Fatalf("x^%d mod P = %#x, slow reference %#x", n, got, want)
		}
		if n >= 32 {
			if c := crcXnModP(n); c != want {
				t.Fatalf("x^%d mod P: hash/crc32 gives %#x, slow reference %#x", n, c, want)
			}
		}
	}
}

func TestTableConstants(t *testing.T) {
	tab := makeTable()
	// unrefl undoes refl64, insisting the constant sat in the high half.
	unrefl := func(what string, c uint64) uint64 {
		if c&0xffffffff != 0 {
			t.Errorf("%s = %#x: low half not clear", what, c)
		}
		return bits.Reverse64(c)
	}
	check := func(what string, c uint64, e int) {
		if got, want := unrefl(what, c), slowXnModP(e); got != want {
			t.Errorf("%s = x^%d mod P: got %#x, want %#x", what, e, got, want)
		}
	}
	for n, k := range tab.fold {
		d := 128*n + 32
		check("fold dw0", k[0], d-1)
		check("fold dw1", k[1], d+63)
	}
	for i, k := range tab.loop {
		d := 1024 << i
		check("loop dw0", k[0], d-1)
		check("loop dw1", k[1], d+63)
	}
	if tab.reduce[0] != 0 {
		t.Errorf("reduce dw0 = %#x, want 0", tab.reduce[0])
	}
	check("reduce dw1", tab.reduce[1], 63)

	// μ = floor(x^64/P) exactly when μ·P = x^64 + r with deg r < 32.
	mu := bits.Reverse64(tab.mu[0] << 31)
	if hi, lo := clmul(mu, poly); hi != 1 || lo>>32 != 0 {
		t.Errorf("μ = %#x: μ·P = %#x:%016x, want x^64 + (degree < 32)", mu, hi, lo)
	}
	if tab.mu[1] != 0 || tab.p[0] != 0 {
		t.Errorf("μ and P must be alone in their doublewords: %#x %#x", tab.mu, tab.p)
	}
	if tab.p[1] != 0x105ec76f1 {
		t.Errorf("reflected P = %#x, want 0x105ec76f1", tab.p[1])
	}
	if tab.mask != [2]uint64{0, 0xffffffff} {
		t.Errorf("mask = %#x", tab.mask)
	}
}
