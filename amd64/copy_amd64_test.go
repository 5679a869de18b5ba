package amd64

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"
	"unsafe"
)

type copyPath struct {
	name string
	min  int                                 // shortest input the path takes
	f    func(uint32, []byte, []byte) uint32 // raw state, as the kernels use it
	ok   bool

	dispatch bool // a whole kernel, not one routine
}

// copyPaths forces each copying routine, with the head and tail handling
// the kernels give it (copyVia*), so each is tested from its own minimum
// length, whatever lengths the kernels' plans give it.
func copyPaths() []copyPath {
	return []copyPath{
		{"copyScalar", 0, copyScalar, hasCLMUL, false},
		{"copyFoldXMM", minFoldXMM, copyViaXMM, hasCLMUL, false},
		{"copyFoldYMM", minFoldYMM, copyViaYMM, hasAVX512, false},
		{"copyFoldVEX", minFoldYMM, copyViaVEX, hasVEX, false},
		{"copyFoldZMM", minCopyZMM, copyViaZMM, hasAVX512, false},
		{"copyFusedZMM", minCopyFusedZMM, copyViaFusedZMM, hasAVX512, false},
		{"copyFusedXMM", minCopyFusedXMM, copyViaFusedXMM, hasCLMUL, false},
		{"copyFusedVEX", minCopyFusedVEX, copyViaFusedVEX, hasVEX, false},
		{"copyAVX512", 0, copyAVX512, hasAVX512, true},
		{"copyVEX", 0, copyVEX, hasVEX, true},
		{"copyCLMUL", 0, copyCLMUL, hasCLMUL, true},
	}
}

// guard is the byte the destination is filled with around each copy, so a
// store outside dst[:n] (or a missing one inside) shows.
const guard = 0xa5

// guards is a buffer of guard bytes to fill and compare with.
var guards = bytes.Repeat([]byte{guard}, 4<<20)

// checkCopy runs f copying src into dst[off:off+len(src)] of a buffer
// filled with guard, and checks the CRC, the copy and that nothing around
// it changed.
func checkCopy(t *testing.T, name string, f func(uint32, []byte, []byte) uint32, dstBuf []byte, off int, src []byte, c uint32) bool {
	t.Helper()
	copy(dstBuf, guards)
	n := len(src)
	dst := dstBuf[off : off+n]
	got, want := f(c, dst, src), rawUpdate(c, src)
	if got != want {
		t.Errorf("%s: len %d src align %d dst align %d: crc %#08x, want %#08x", name, n, alignOf(src), alignOf(dst), got, want)
		return false
	}
	if !bytes.Equal(dst, src) {
		i := 0
		for dst[i] == src[i] {
			i++
		}
		t.Errorf("%s: len %d src align %d dst align %d: byte %d of the copy is %#x, want %#x", name, n, alignOf(src), alignOf(dst), i, dst[i], src[i])
		return false
	}
	if !bytes.Equal(dstBuf[:off], guards[:off]) || !bytes.Equal(dstBuf[off+n:], guards[:len(dstBuf)-off-n]) {
		t.Errorf("%s: len %d src align %d dst align %d: wrote outside dst", name, n, alignOf(src), alignOf(dst))
		return false
	}
	return true
}

// TestCopyPaths runs each copying routine over every length from its
// minimum to 4 KiB + 300 at every source alignment 0..63, against
// destinations at alignments 0, 1, 17 and 63 (-short: every 7th length).
// The kernels that dispatch to them are swept in package cksum.
func TestCopyPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	const maxLen = 4096 + 300
	srcBuf := randBytes(r, maxLen+128)
	src64 := srcBuf[alignUp(srcBuf):]
	dstBuf := make([]byte, maxLen+256)
	dstBase := alignUp(dstBuf) + 64 // room for guard bytes before dst
	for _, pt := range copyPaths() {
		if !pt.ok || pt.dispatch {
			continue
		}
		t.Run(pt.name, func(t *testing.T) {
			step := 1
			if testing.Short() {
				step = 7
			}
			for sa := range 64 {
				for _, da := range []int{0, 1, 17, 63} {
					for n := pt.min; n <= maxLen; n += step {
						// Guard bytes only within 64 of the copy, to keep it quick.
						lo, hi := dstBase+da-64, dstBase+da+n+64
						if !checkCopy(t, pt.name, pt.f, dstBuf[lo:hi], 64, src64[sa:sa+n], r.Uint32()) {
							return
						}
					}
				}
			}
		})
	}
}

// TestCopyPathsLong runs each routine on random lengths up to 2 MiB.
func TestCopyPathsLong(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	src := randBytes(r, 2<<20+64)
	dst := make([]byte, 2<<20+256)
	for _, pt := range copyPaths() {
		if !pt.ok {
			continue
		}
		for range 20 {
			n := pt.min + r.IntN(2<<20-pt.min)
			so, do := r.IntN(64), 64+r.IntN(64)
			if !checkCopy(t, pt.name, pt.f, dst[:do+n+64], do, src[so:so+n], r.Uint32()) {
				break
			}
		}
	}
}

func alignOf(p []byte) int { return int(uintptrOf(p) & 63) }

// alignUp is how far into b its first 64-byte boundary is.
func alignUp(b []byte) int { return int(-uintptrOf(b) & 63) }

// TestCopyUpdateOverlap: overlapping buffers get memmove's result and the
// CRC of the bytes src held, in both directions.
func TestCopyUpdateOverlap(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, k := range Kernels() {
		for _, n := range []int{1, 100, 5000, 20000} {
			for _, shift := range []int{-65, -1, 0, 1, 3, 64, 1000} {
				buf := randBytes(r, n+2000)
				want := append([]byte(nil), buf...)
				src := buf[1000 : 1000+n]
				dst := buf[1000+shift : 1000+shift+n]
				wantCRC := castagnoliUpdate(7, src)
				copy(want[1000+shift:], want[1000:1000+n])
				if got := k.CopyUpdate(dst, src, 7); got != wantCRC {
					t.Errorf("%s: len %d shift %d: crc %#x, want %#x", k.Name, n, shift, got, wantCRC)
				}
				if !bytes.Equal(buf, want) {
					t.Errorf("%s: len %d shift %d: buffer differs from copy's", k.Name, n, shift)
				}
			}
		}
	}
}

// FuzzCopyPaths runs every copying routine the input is long enough for,
// with the source and the destination at the alignments the fuzzer picks.
func FuzzCopyPaths(f *testing.F) {
	f.Add(uint32(0), make([]byte, 400), uint8(0), uint8(0))
	f.Add(uint32(1), make([]byte, 9000), uint8(3), uint8(60))
	f.Fuzz(func(t *testing.T, c uint32, p []byte, sa, da uint8) {
		src := append(make([]byte, sa%64), p...)[sa%64:]
		dst := make([]byte, len(p)+128)
		for _, pt := range copyPaths() {
			if pt.ok && len(p) >= pt.min {
				checkCopy(t, pt.name, pt.f, dst, 64+int(da%64), src, c)
			}
		}
	})
}

// BenchmarkCopyUpdate compares each kernel's CopyUpdate with Go's copy
// alone and with copy then Update, on the same buffers. Compare within
// one run (the machine's clock and load vary between runs).
func BenchmarkCopyUpdate(b *testing.B) {
	for _, n := range []int{64, 512, 4096, 32768, 262144} {
		src, dst := make([]byte, n), make([]byte, n)
		b.Run(fmt.Sprintf("n=%d/copy", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				copy(dst, src)
			}
		})
		for _, k := range Kernels() {
			b.Run(fmt.Sprintf("n=%d/kernel=%s/copy+update", n, k.Name), func(b *testing.B) {
				b.SetBytes(int64(n))
				var crc uint32
				for b.Loop() {
					copy(dst, src)
					crc = k.Update(crc, dst)
				}
			})
			b.Run(fmt.Sprintf("n=%d/kernel=%s/copyupdate", n, k.Name), func(b *testing.B) {
				b.SetBytes(int64(n))
				var crc uint32
				for b.Loop() {
					crc = k.CopyUpdate(dst, src, crc)
				}
			})
		}
	}
}

// BenchmarkCopyPath runs each copying routine on its own.
func BenchmarkCopyPath(b *testing.B) {
	for _, n := range []int{128, 512, 1024, 2048, 4096, 8192, 32768, 262144} {
		src, dst := make([]byte, n), make([]byte, n)
		for _, pt := range copyPaths() {
			if !pt.ok || n < pt.min {
				continue
			}
			b.Run(fmt.Sprintf("n=%d/path=%s", n, pt.name), func(b *testing.B) {
				b.SetBytes(int64(n))
				var crc uint32
				for b.Loop() {
					crc = pt.f(crc, dst, src)
				}
			})
		}
	}
}

func uintptrOf(p []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(p))) }

func castagnoliUpdate(c uint32, p []byte) uint32 { return crc32.Update(c, castagnoli, p) }
