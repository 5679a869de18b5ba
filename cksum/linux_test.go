package cksum

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// The linux implementation is checked against hash/crc32 with every other
// implementation (Impls). These tests hold its rules: which method runs at
// which length.

// Linux's crc32c_base is a table lookup per byte.
func TestTableUpdate(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	buf := randBytes(r, 600)
	for n := range len(buf) + 1 {
		c := r.Uint32()
		if got, want := crc32cTable(c, buf[:n]), oracle(c, buf[:n]); got != want {
			t.Fatalf("len %d: got %#08x, want %#08x", n, got, want)
		}
	}
}

// POWER: the table below 528 bytes; from 528, vpmsum over the 16-byte
// aligned whole blocks (at least 512 bytes of them) and the table around.
func TestLinuxPowerRule(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	buf := randBytes(r, 2000+16)
	for _, n := range []int{0, 1, 15, 16, 511, 512, 527, 528, 529, 543, 544, 1000, 2000} {
		for align := range 16 {
			p := buf[align : align+n]
			var calls []int
			vp := func(crc uint32, q []byte) uint32 {
				if uintptr(unsafe.Pointer(unsafe.SliceData(q)))&15 != 0 || len(q)%16 != 0 {
					t.Fatalf("len %d align %d: vpmsum given %d bytes at alignment %d", n, align, len(q), uintptr(unsafe.Pointer(unsafe.SliceData(q)))&15)
				}
				calls = append(calls, len(q))
				return oracle(crc, q)
			}
			c := r.Uint32()
			if got, want := crc32cLinuxPower(vp)(c, p), oracle(c, p); got != want {
				t.Fatalf("len %d align %d: got %#08x, want %#08x", n, align, got, want)
			}
			switch {
			case n < 528 && len(calls) != 0:
				t.Errorf("len %d align %d: vpmsum called below 528 bytes", n, align)
			case n >= 528 && (len(calls) != 1 || calls[0] < 512):
				t.Errorf("len %d align %d: vpmsum calls %v, want one of at least 512 bytes", n, align, calls)
			}
		}
	}
}
