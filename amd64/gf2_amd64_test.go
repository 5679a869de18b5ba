package amd64

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/xlogfs/xlogfs/internal/crctest"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// rawCRC is the CRC state after p from state 0, without the inversions.
func rawCRC(p []byte) uint32 { return ^crc32.Update(0xffffffff, castagnoli, p) }

func TestMulmod(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 10000 {
		a, b := r.Uint32(), r.Uint32()
		if got, want := mulmod(a, b), crctest.NaiveMulmod(a, b); got != want {
			t.Fatalf("mulmod(%#x, %#x) = %#x, want %#x", a, b, got, want)
		}
	}
}

func TestXinv(t *testing.T) {
	if got := mulmod(xinv, polyX); got != polyOne {
		t.Fatalf("x·x^-1 = %#x, want 1", got)
	}
	for _, e := range []int64{1, 33, 64, 1000, 1 << 40} {
		if got := mulmod(xpow(e), xpow(-e)); got != polyOne {
			t.Errorf("x^%d·x^-%d = %#x, want 1", e, e, got)
		}
	}
}

// The CRC state of a one-bit message 0x01 (that bit is x^7) followed by n
// zero bytes is x^(7+8n)·x^32 mod P: xpow checked against hash/crc32.
func TestXpowAgainstCRC(t *testing.T) {
	for n := range 600 {
		msg := make([]byte, 1+n)
		msg[0] = 1
		if got, want := xpow(int64(39+8*n)), rawCRC(msg); got != want {
			t.Fatalf("x^%d = %#x, CRC of 0x01 and %d zeros = %#x", 39+8*n, got, n, want)
		}
	}
}

func TestXpow8Table(t *testing.T) {
	for i := range 58 {
		if got, want := xpow8[i], uint64(xpow(8<<i-33)); got != want {
			t.Errorf("xpow8[%d] = %#x, want x^%d = %#x", i, got, 8<<i-33, want)
		}
	}
	if xpowNeg33 != uint64(xpow(-33)) {
		t.Error("xpowNeg33 wrong")
	}
}

// The run-time shift constants (shift_amd64.s) against the slow reference,
// and shift against the defining property: shifting the state of A over
// len(B) bytes and adding the state of B gives the state of A‖B.
func TestShift(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	ns := []uint64{0, 1, 2, 3, 7, 8, 63, 64, 65, 1000, 4096, 1<<20 + 3, 1<<40 - 1, 1<<62 + 5, 1<<64 - 1}
	for range 300 {
		ns = append(ns, uint64(r.IntN(1<<21)), r.Uint64()>>r.IntN(64))
	}
	for _, n := range ns {
		var want uint32
		if n < 1<<58 {
			want = xpow(int64(8*n) - 33)
		} else { // T(8n) as a product of the table entries
			want = uint32(xpowNeg33)
			for i := range 64 {
				if n>>i&1 != 0 {
					want = mulmod(mulmod(want, uint32(xpow8[i])), xpow(33))
				}
			}
		}
		if got := xpow8n(n); got != uint64(want) {
			t.Errorf("xpow8n(%d) = %#x, want %#x", n, got, want)
		}
		c := r.Uint32()
		if got, want := shift(c, n), mulmod(c, mulmod(want, xpow(33))); got != want {
			t.Errorf("shift(%#x, %d) = %#x, want %#x", c, n, got, want)
		}
	}
	for range 200 {
		a := make([]byte, r.IntN(3000))
		b := make([]byte, r.IntN(3000))
		for i := range a {
			a[i] = byte(r.Uint32())
		}
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if got, want := shift(rawCRC(a), uint64(len(b)))^rawCRC(b), rawCRC(append(a, b...)); got != want {
			t.Fatalf("merge of %d+%d bytes = %#x, want %#x", len(a), len(b), got, want)
		}
	}
}

// clmul is PCLMULQDQ in Go: the 128-bit carry-less product of a and b.
func clmul(a, b uint64) (lo, hi uint64) {
	for i := range 64 {
		if b>>i&1 != 0 {
			lo ^= a << i
			if i > 0 {
				hi ^= a >> (64 - i)
			}
		}
	}
	return
}

// TestFoldConst checks the folding formula with the constants the kernels
// load: a 16-byte block A followed by d zero bytes has the same CRC as the
// block clmul(A.lo, k[0]) ^ clmul(A.hi, k[1]) alone, for every distance
// the kernels fold over, including d = 0 (the identity pair).
func TestFoldConst(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	for _, d := range []int{0, 16, 32, 48, 64, 128, 192, 256, 1000} {
		k := foldConst(d)
		for range 50 {
			var a [16]byte
			for i := range a {
				a[i] = byte(r.Uint32())
			}
			alo := binary.LittleEndian.Uint64(a[:8])
			ahi := binary.LittleEndian.Uint64(a[8:])
			l1, h1 := clmul(alo, k[0])
			l2, h2 := clmul(ahi, k[1])
			var f [16]byte
			binary.LittleEndian.PutUint64(f[:8], l1^l2)
			binary.LittleEndian.PutUint64(f[8:], h1^h2)
			if got, want := rawCRC(f[:]), rawCRC(append(a[:], make([]byte, d)...)); got != want {
				t.Fatalf("d %d: folded block CRC %#x, want %#x", d, got, want)
			}
		}
	}
	// The per-lane tables fold lane j of n to the last lane.
	for j, want := range [][2]uint64{kX48, kX32, kX16, kX0} {
		if got := [2]uint64(kZLanes[2*j : 2*j+2]); got != want {
			t.Errorf("kZLanes lane %d = %x, want %x", j, got, want)
		}
	}
	if kYLanes != [4]uint64{kX16[0], kX16[1], kX0[0], kX0[1]} {
		t.Errorf("kYLanes = %x", kYLanes)
	}
}
