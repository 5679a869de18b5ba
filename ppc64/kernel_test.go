package ppc64

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/xlogfs/xlogfs/cksum/crc32c"
)

var castagnoliTable = crc32.MakeTable(crc32.Castagnoli)

func oracle(crc uint32, p []byte) uint32 { return crc32.Update(crc, castagnoliTable, p) }

// TestTableLayout pins the offsets vpmsum_ppc64x.s reads the table at.
func TestTableLayout(t *testing.T) {
	var tb table
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"fold", unsafe.Offsetof(tb.fold), 0},
		{"loop[0]", unsafe.Offsetof(tb.loop), 368},
		{"loop[1]", unsafe.Offsetof(tb.loop) + 16, 384},
		{"reduce", unsafe.Offsetof(tb.reduce), 400},
		{"mu", unsafe.Offsetof(tb.mu), 416},
		{"p", unsafe.Offsetof(tb.p), 432},
		{"mask", unsafe.Offsetof(tb.mask), 448},
		{"bswap", unsafe.Offsetof(tb.bswap), 464},
	} {
		if c.got != c.want {
			t.Errorf("offset of %s = %d, vpmsum_ppc64x.s says %d", c.name, c.got, c.want)
		}
	}
}

// TestBoundaries runs each kernel on the lengths where its paths meet: the
// scalar-only cutoff, every block count of the short vector path, the main
// loop's entry and its 256-byte steps with every tail length, at every
// alignment within 16 bytes and from both zero and random starting CRCs.
func TestBoundaries(t *testing.T) {
	ks := Kernels()
	if len(ks) == 0 {
		t.Skip("no POWER8 kernel on this machine")
	}
	r := rand.New(rand.NewPCG(3, 3))
	buf := make([]byte, 4096+32)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for _, k := range ks {
		for align := range 16 {
			for _, n := range boundaryLens() {
				p := buf[align : align+n]
				for _, crc := range []uint32{0, r.Uint32()} {
					if got, want := k.Update(crc, p), oracle(crc, p); got != want {
						t.Fatalf("%s: len %d align %d crc %#x: got %#08x, want %#08x", k.Name, n, align, crc, got, want)
					}
				}
			}
		}
	}
}

// boundaryLens are the lengths where the kernel's paths meet: the
// scalar-only cutoff, every block count of the short vector path, the main
// loop's entry and its 256-byte steps with every tail length.
func boundaryLens() []int {
	var lens []int
	for n := range 160 {
		lens = append(lens, n) // scalar, short vector path, first fold
	}
	for base := 128; base <= 128+3*256; base += 256 {
		for m := 0; m < 16; m++ { // every tail after the main loop
			for d := -1; d <= 16; d += 17 {
				lens = append(lens, base+16*m+d+1)
			}
		}
	}
	return append(lens, 4095, 4096, 4097)
}

// TestAllOnesAndZeros catches a wrong carry or lost top bit that random
// data can hide.
func TestAllOnesAndZeros(t *testing.T) {
	if len(Kernels()) == 0 {
		t.Skip("no POWER8 kernel on this machine")
	}
	for _, k := range Kernels() {
		for _, fill := range []byte{0, 0xff} {
			p := make([]byte, 5000)
			for i := range p {
				p[i] = fill
			}
			for _, n := range []int{64, 128, 256, 384, 1000, 5000} {
				for _, crc := range []uint32{0, 0xffffffff} {
					if got, want := k.Update(crc, p[:n]), oracle(crc, p[:n]); got != want {
						t.Errorf("%s: %d bytes of %#x, crc %#x: got %#08x, want %#08x", k.Name, n, fill, crc, got, want)
					}
				}
			}
		}
	}
}

func FuzzKernel(f *testing.F) {
	f.Add(uint32(0), []byte("123456789"))
	f.Add(uint32(0xffffffff), make([]byte, 64))
	f.Add(uint32(0x12345678), make([]byte, 4097))
	f.Fuzz(func(t *testing.T, crc uint32, p []byte) {
		want := oracle(crc, p)
		for _, k := range Kernels() {
			if got := k.Update(crc, p); got != want {
				t.Fatalf("%s: len %d: got %#08x, want %#08x", k.Name, len(p), got, want)
			}
			dst := make([]byte, len(p))
			if got := k.CopyUpdate(dst, p, crc); got != want || !bytes.Equal(dst, p) {
				t.Fatalf("%s: CopyUpdate len %d: got %#08x, want %#08x; copy equal: %v", k.Name, len(p), got, want, bytes.Equal(dst, p))
			}
		}
		// The model is checked on every machine (crc32c's own tests check
		// the scalar path, Slicing8Update).
		if n := len(p) &^ 15; n > 0 {
			if got, want := modelVpmsum(crc, p[:n], testTable), oracle(crc, p[:n]); got != want {
				t.Fatalf("model: len %d: got %#08x, want %#08x", n, got, want)
			}
		}
	})
}

var testTable = makeTable()

// Under qemu these numbers say nothing about POWER8 speed: the emulator
// turns each VPMSUMD into a software loop. They mean something only on
// real POWER hardware.
func BenchmarkUpdate(b *testing.B) {
	impls := []crc32c.Kernel{{Name: "stdlib", Update: oracle}, {Name: "scalar", Update: crc32c.Slicing8Update}}
	impls = append(impls, Kernels()...)
	for _, n := range []int{64, 512, 4096, 32768, 262144} {
		p := make([]byte, n+16)[16:] // 16-byte aligned on the Go heap
		for _, k := range impls {
			b.Run(fmt.Sprintf("%s/%d", k.Name, n), func(b *testing.B) {
				b.SetBytes(int64(n))
				for b.Loop() {
					k.Update(0, p)
				}
			})
		}
	}
}
