package cksum

import (
	"math/rand/v2"
	"testing"

	"github.com/xlogfs/xlogfs/internal/crctest"
)

func TestMulmodP(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	cases := [][2]uint32{{0, 0}, {1 << 31, 1 << 31}, {0xffffffff, 0xffffffff}, {1, 1}, {0xffffffff, 1 << 31}}
	for range 20000 {
		cases = append(cases, [2]uint32{r.Uint32(), r.Uint32()})
	}
	for _, c := range cases {
		if got, want := mulmodP(c[0], c[1]), crctest.NaiveMulmod(c[0], c[1]); got != want {
			t.Fatalf("mulmodP(%#x, %#x) = %#x, want %#x", c[0], c[1], got, want)
		}
	}
}

// combineLens are the lengths of B the combine tests use: every length to
// 600 (every low bit pattern), powers of two and their neighbours, and the
// sizes of log records.
func combineLens(r *rand.Rand) []int {
	var ns []int
	for n := 0; n <= 600; n++ {
		ns = append(ns, n)
	}
	for s := 10; s <= 21; s++ {
		ns = append(ns, 1<<s-1, 1<<s, 1<<s+1)
	}
	for range 20 {
		ns = append(ns, r.IntN(1<<21))
	}
	return append(ns, 32<<10-512, 256<<10-4096, 3<<20+7)
}

// Combine of the CRCs of A and B is the CRC of A‖B, for every
// implementation, with A's CRC started from 0 or from any state.
func TestCombine(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	ns := combineLens(r)
	buf := randBytes(r, 3<<20+8)
	for _, n := range ns {
		// The oracle's work once per length, shared by the implementations.
		a := buf[:r.IntN(300)]
		b := buf[len(buf)-n:]
		crcA := oracle(r.Uint32()>>(r.IntN(2)*32), a) // from 0 half the time
		crcB := oracle(0, b)
		want := oracle(crcA, b)
		for _, im := range Impls() {
			if got := im.Combine(crcA, crcB, n); got != want {
				t.Fatalf("%s: Combine(%#x, %#x, %d) = %#08x, want %#08x", im.Name, crcA, crcB, n, got, want)
			}
		}
	}
	if got, want := Combine(oracle(0, buf[:10]), oracle(0, buf[10:99]), 89), oracle(0, buf[:99]); got != want {
		t.Errorf("Combine = %#08x, want %#08x", got, want)
	}
}

// Lengths too long to hold in memory: every implementation agrees, and
// shifting over n then m bytes is shifting over n+m (Combine with crcB = 0
// is the pure shift crcA·x^(8n)), against a materialized 16 MiB of zeros
// for the start of the chain.
func TestCombineHuge(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	zeros := make([]byte, 16<<20)
	im := Impls()
	for range 200 {
		a := r.Uint32()
		n := int(r.Uint64() >> (1 + r.IntN(63)))
		m := int(r.Uint64() >> (2 + r.IntN(62)))
		n, m = n/2, m/2 // n+m cannot overflow
		want := im[0].Combine(a, 0, n+m)
		for _, x := range im {
			if got := x.Combine(a, 0, n+m); got != want {
				t.Fatalf("%s and %s disagree on shifting %#x over %d bytes: %#x, %#x", x.Name, im[0].Name, a, n+m, got, want)
			}
			if got := x.Combine(x.Combine(a, 0, n), 0, m); got != want {
				t.Fatalf("%s: shift over %d then %d = %#x, over %d = %#x", x.Name, n, m, got, n+m, want)
			}
		}
	}
	// Pure shift = the CRC state carried over zeros: Update(a, zeros) is
	// the shift of a plus the CRC of the zeros themselves.
	for _, x := range im {
		a := r.Uint32()
		if got, want := x.Combine(a, oracle(0, zeros), len(zeros)), oracle(a, zeros); got != want {
			t.Errorf("%s: over 16 MiB of zeros: %#x, want %#x", x.Name, got, want)
		}
	}
}

func TestCombineNegativePanics(t *testing.T) {
	for _, im := range Impls() {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Combine with length -1 did not panic", im.Name)
				}
			}()
			im.Combine(1, 2, -1)
		}()
	}
}

func BenchmarkCombine(b *testing.B) {
	for _, im := range Impls() {
		b.Run(im.Name, func(b *testing.B) {
			var c uint32
			for b.Loop() {
				c = im.Combine(c, 1, 256<<10-4096-1) // 17 set bits
			}
		})
	}
}

// xpow8n's table lookups agree with a multiplication per set bit, at
// every length around the tables' joints and at random ones.
func TestXpow8nTables(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ns := []uint64{0, 1, 2, 511, 512, 513, 1023, 1024, 4096 + 3, 1024*BlockSize - 1, 1024 * BlockSize, 1024*BlockSize + 1, 1 << 40}
	for range 2000 {
		ns = append(ns, r.Uint64N(1024*BlockSize+1000))
	}
	for _, n := range ns {
		if got, want := xpow8n(n), xpow8nSlow(n); got != want {
			t.Fatalf("xpow8n(%d) = %#08x, want %#08x", n, got, want)
		}
	}
}
