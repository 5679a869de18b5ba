package amd64

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// rawUpdate is the oracle for the raw-state routines: the state after p
// starting from state c, without the inversions.
func rawUpdate(c uint32, p []byte) uint32 { return ^crc32.Update(^c, castagnoli, p) }

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

type path struct {
	name string
	min  int // shortest input the routine accepts
	f    func(uint32, []byte) uint32
	ok   bool // this CPU can run it
}

// skipUnlessOK skips a routine this CPU cannot run, saying so.
func (pt path) skipUnlessOK(t *testing.T) {
	t.Helper()
	if !pt.ok {
		t.Skipf("%s needs instructions this CPU lacks (AVX-512 with VPCLMULQDQ for the YMM and ZMM routines, AVX2 with VPCLMULQDQ for the VEX ones, SSE4.2 with PCLMULQDQ for the others)", pt.name)
	}
}

func paths() []path {
	return []path{
		{"scalar", 0, scalar, hasCLMUL},
		{"threeway", 0, threeway, hasCLMUL},
		{"foldXMM", minFoldXMM, foldXMM, hasCLMUL},
		{"foldYMM", minFoldYMM, foldYMM, hasAVX512},
		{"foldVEX", minFoldYMM, foldVEX, hasVEX},
		{"foldZMM", minFoldZMM, foldZMM, hasAVX512},
		{"fusedZMM", minFusedZMM, updateFusedZMM, hasAVX512},
		{"fusedZMM6", minFusedZ6, updateFusedZMM6, hasAVX512},
		{"fusedXMM", minFusedXMM, updateFusedXMM, hasCLMUL},
		{"fusedVEX", minFusedVEX, updateFusedVEX, hasVEX},
	}
}

// TestPaths runs each routine, not just the kernel that dispatches to it,
// over every length from its minimum to 4 KiB + 300 at every alignment
// 0..63, so every head, tail, extra-block and leftover-quadword case of the
// fused split (which starts at 8 KiB in the kernel) is covered.
func TestPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	buf := randBytes(r, 4096+300+64)
	for _, pt := range paths() {
		t.Run(pt.name, func(t *testing.T) {
			pt.skipUnlessOK(t)
			step := 1
			if testing.Short() {
				step = 7
			}
			for align := 0; align < 64; align++ {
				for n := pt.min; n <= 4096+300; n += step {
					p := buf[align : align+n]
					c := r.Uint32()
					if got, want := pt.f(c, p), rawUpdate(c, p); got != want {
						t.Fatalf("len %d align %d: got %#08x, want %#08x", n, align, got, want)
					}
				}
			}
		})
	}
}

// TestPathsLong checks the long-input paths on random lengths up to 2 MiB.
func TestPathsLong(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	buf := randBytes(r, 2<<20+64)
	for _, pt := range paths() {
		t.Run(pt.name, func(t *testing.T) {
			pt.skipUnlessOK(t)
			for range 30 {
				n := pt.min + r.IntN(len(buf)-64-pt.min)
				off := r.IntN(64)
				p := buf[off : off+n]
				c := r.Uint32()
				if got, want := pt.f(c, p), rawUpdate(c, p); got != want {
					t.Errorf("len %d off %d: got %#08x, want %#08x", n, off, got, want)
				}
			}
		})
	}
}

// TestPlanFused checks the split covers the buffer exactly, with chains of
// whole quadwords and a last chain tail under 8 bytes per chain.
func TestPlanFused(t *testing.T) {
	for _, c := range []struct{ vec, chain, blk, k int }{{fuseZVector, fuseZChain, 64, 3}, {fuseXVector, fuseXChain, 16, 3},
		{fuseVVector, fuseVChain, 32, 3}, {fuseZ6Vector, fuseZ6Chain, 64, 6}} {
		for n := 0; n < 20000; n++ {
			iters, extra, s := planChains(n, c.vec, c.chain, c.blk, c.k)
			tail := n - iters*c.vec - extra*c.blk - c.k*s
			if s%8 != 0 || s < iters*c.chain || tail < 0 || tail >= 8*c.k || extra*c.blk > n-iters*(c.vec+c.k*c.chain) {
				t.Fatalf("%+v n %d: iters %d extra %d s %d tail %d", c, n, iters, extra, s, tail)
			}
		}
	}
}

func TestKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	buf := randBytes(r, 1<<18+64)
	for _, k := range Kernels() {
		for _, n := range []int{0, 1, 7, 8, 63, 64, 100, 319, 320, 511, 512, 4096, 8191, 8192, 8193, 1 << 18} {
			for _, off := range []int{0, 1, 13, 63} {
				p := buf[off : off+n]
				c := r.Uint32()
				if got, want := k.Update(c, p), crc32.Update(c, castagnoli, p); got != want {
					t.Errorf("%s: len %d off %d: got %#08x, want %#08x", k.Name, n, off, got, want)
				}
			}
		}
	}
	if len(Kernels()) == 0 && hasCLMUL {
		t.Error("no kernels on a CPU with SSE4.2 and PCLMULQDQ")
	}
	if len(Kernels()) == 0 {
		t.Skip("no amd64 kernel on this CPU (it lacks SSE4.2 or PCLMULQDQ): nothing was tested")
	}
}

// FuzzPaths runs every routine the input is long enough for.
func FuzzPaths(f *testing.F) {
	f.Add(uint32(0), make([]byte, 400))
	f.Add(uint32(1), make([]byte, 9000))
	f.Fuzz(func(t *testing.T, c uint32, p []byte) {
		want := rawUpdate(c, p)
		for _, pt := range paths() {
			if pt.ok && len(p) >= pt.min {
				if got := pt.f(c, p); got != want {
					t.Fatalf("%s: len %d: got %#08x, want %#08x", pt.name, len(p), got, want)
				}
			}
		}
	})
}
