package cksum

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"
)

const guard = 0xa5

var guards = bytes.Repeat([]byte{guard}, 2<<20)

func addr(p []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(p))) }

// alignedAt returns a slice of b starting at an address ≡ a (mod 64).
func alignedAt(b []byte, a int) []byte { return b[int(-addr(b)&63)+a:] }

// copyCase copies src into dstBuf[off:off+len(src)] (dstBuf full of guard
// bytes) with cu, and reports what is wrong, or "".
func copyCase(cu func([]byte, []byte, uint32) uint32, dstBuf []byte, off int, src []byte, crc, want uint32) string {
	copy(dstBuf, guards)
	n := len(src)
	dst := dstBuf[off : off+n]
	if got := cu(dst, src, crc); got != want {
		return fmt.Sprintf("crc %#08x, want %#08x", got, want)
	}
	if !bytes.Equal(dst, src) {
		return "the copy differs from src"
	}
	if !bytes.Equal(dstBuf[:off], guards[:off]) || !bytes.Equal(dstBuf[off+n:], guards[:len(dstBuf)-off-n]) {
		return "wrote outside dst"
	}
	return ""
}

// sweepPairs is the (src, dst) alignments the sweep covers at length n for
// im: all 64×64 for the amd64 kernels, which align dst themselves, so
// every pair takes its own head and tail. The implementations whose
// CopyUpdate is copy, then Update over the copy (stdlib, linux, generic)
// have no alignment cases of their own:
// eight pairs, cycling with n. On ppc64 the tests run under qemu here,
// where the full sweep would take many minutes: one pair per length,
// cycling through all 256 pairs mod 16; the ppc64 package runs its copying
// assembly on every block count at every pair mod 16.
func sweepPairs(im Impl, n int) [][2]int {
	var pairs [][2]int
	switch {
	case runtime.GOARCH == "amd64" && isArch(im):
		for sa := range 64 {
			for da := range 64 {
				pairs = append(pairs, [2]int{sa, da})
			}
		}
	case runtime.GOARCH == "ppc64" || runtime.GOARCH == "ppc64le":
		k := n % 256
		pairs = append(pairs, [2]int{k % 16, k / 16})
	default:
		for i := range 8 {
			pairs = append(pairs, [2]int{(n + 9*i) % 64, (n*7 + 23*i) % 64})
		}
	}
	return pairs
}

func isArch(im Impl) bool { return im.Name != "stdlib" && im.Name != "generic" && im.Name != "linux" }

// TestCopyUpdateEveryLengthAndAlignment holds every implementation's
// CopyUpdate to copy + hash/crc32 on every length 0..4096 at the
// alignments sweepPairs gives, checking the CRC, the copied bytes and the
// 64 bytes either side of dst.
func TestCopyUpdateEveryLengthAndAlignment(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const maxLen = 4096
	srcBuf := randBytes(r, maxLen+256)
	dstBuf := make([]byte, maxLen+256)
	for _, im := range Impls() {
		t.Run(im.Name, func(t *testing.T) {
			// want[sa][n] is the CRC of src at alignment sa, n bytes long,
			// from init[sa]: one pass per alignment.
			var want [64][maxLen + 1]uint32
			var init [64]uint32
			for sa := range 64 {
				init[sa] = r.Uint32()
				src := alignedAt(srcBuf, sa)
				want[sa][0] = init[sa]
				for n := range maxLen {
					want[sa][n+1] = oracle(want[sa][n], src[n:n+1])
				}
			}
			fails := 0
			for n := 0; n <= maxLen; n++ {
				for _, p := range sweepPairs(im, n) {
					sa, da := p[0], p[1]
					src := alignedAt(srcBuf, sa)[:n]
					dst := alignedAt(dstBuf, da)
					// dst starts 64 bytes in: guard bytes on both sides.
					if msg := copyCase(im.CopyUpdate, dst[:64+n+64], 64, src, init[sa], want[sa][n]); msg != "" {
						t.Errorf("len %d src align %d dst align %d: %s", n, sa, da, msg)
						if fails++; fails > 10 {
							t.Fatal("too many failures")
						}
					}
				}
			}
		})
	}
}

func TestCopyUpdateRandomLong(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	src := randBytes(r, 1<<20+64)
	dst := make([]byte, 1<<20+192)
	rounds := 40
	if runtime.GOARCH == "ppc64" || runtime.GOARCH == "ppc64le" {
		rounds = 8 // emulated here
	}
	for _, im := range Impls() {
		for range rounds {
			n := r.IntN(1<<20 + 1)
			so, do := r.IntN(64), 64+r.IntN(64)
			init := r.Uint32()
			if msg := copyCase(im.CopyUpdate, dst[:do+n+64], do, src[so:so+n], init, oracle(init, src[so:so+n])); msg != "" {
				t.Errorf("%s: len %d src off %d dst off %d: %s", im.Name, n, so, do, msg)
			}
		}
	}
}

// A dst shorter than src takes len(dst) bytes, as copy does.
func TestCopyUpdateShortDst(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	src := randBytes(r, 20000)
	for _, im := range Impls() {
		for _, n := range []int{0, 1, 63, 64, 1000, 8191, 8192, 19999} {
			dst := make([]byte, n)
			if got, want := im.CopyUpdate(dst, src, 5), oracle(5, src[:n]); got != want || !bytes.Equal(dst, src[:n]) {
				t.Errorf("%s: dst of %d, src of %d: crc %#x (want %#x), copy right: %v", im.Name, n, len(src), got, want, bytes.Equal(dst, src[:n]))
			}
		}
	}
	if got, want := CopyUpdate(make([]byte, 10), src, 0), oracle(0, src[:10]); got != want {
		t.Errorf("CopyUpdate = %#x, want %#x", got, want)
	}
}

// Overlapping buffers get copy's result and the CRC of what src held.
func TestCopyUpdateOverlap(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, im := range Impls() {
		for _, n := range []int{1, 100, 5000, 20000} {
			for _, shift := range []int{-65, -1, 0, 1, 3, 64, 1000} {
				buf := randBytes(r, n+2000)
				want := append([]byte(nil), buf...)
				src, dst := buf[1000:1000+n], buf[1000+shift:1000+shift+n]
				wantCRC := oracle(3, src)
				copy(want[1000+shift:], want[1000:1000+n])
				if got := im.CopyUpdate(dst, src, 3); got != wantCRC || !bytes.Equal(buf, want) {
					t.Errorf("%s: len %d shift %d: crc %#x (want %#x), buffer as copy leaves it: %v", im.Name, n, shift, got, wantCRC, bytes.Equal(buf, want))
				}
			}
		}
	}
}

// FuzzCopyUpdate: non-overlapping buffers at the alignments the fuzzer
// picks, every implementation.
func FuzzCopyUpdate(f *testing.F) {
	f.Add(uint32(0), []byte("123456789"), uint8(0), uint8(0))
	f.Add(uint32(0xffffffff), make([]byte, 4096), uint8(1), uint8(63))
	f.Add(uint32(7), make([]byte, 9000), uint8(17), uint8(3))
	f.Fuzz(func(t *testing.T, init uint32, p []byte, sa, da uint8) {
		want := oracle(init, p)
		src := alignedAt(make([]byte, len(p)+128), int(sa%64))[:len(p)]
		copy(src, p)
		dstBuf := make([]byte, len(p)+256)
		dst := alignedAt(dstBuf, int(da%64))
		for _, im := range Impls() {
			if msg := copyCase(im.CopyUpdate, dst[:64+len(p)+64], 64, src, init, want); msg != "" {
				t.Fatalf("%s: len %d src align %d dst align %d: %s", im.Name, len(p), sa%64, da%64, msg)
			}
		}
	})
}

// BenchmarkCopyUpdate: CopyUpdate against Go's copy alone and against copy
// then Update, per implementation and size. Compare within one run.
func BenchmarkCopyUpdate(b *testing.B) {
	for _, n := range benchSizes {
		src, dst := make([]byte, n), make([]byte, n)
		b.Run(fmt.Sprintf("copy/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				copy(dst, src)
			}
		})
		for _, im := range Impls() {
			b.Run(fmt.Sprintf("%s/copy+update/%d", im.Name, n), func(b *testing.B) {
				b.SetBytes(int64(n))
				var crc uint32
				for b.Loop() {
					copy(dst, src)
					crc = im.Update(crc, dst)
				}
			})
			b.Run(fmt.Sprintf("%s/copyupdate/%d", im.Name, n), func(b *testing.B) {
				b.SetBytes(int64(n))
				var crc uint32
				for b.Loop() {
					crc = im.CopyUpdate(dst, src, crc)
				}
			})
		}
	}
}
