//go:build ppc64 || ppc64le

package ppc64

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestVpmsumDirect calls the assembly alone, without the scalar head and
// tail around it, for every block count through two main-loop iterations
// and a full tail, and holds it to both hash/crc32 and the Go model.
func TestVpmsumDirect(t *testing.T) {
	if len(Kernels()) == 0 {
		t.Skip("not a POWER8 CPU")
	}
	r := rand.New(rand.NewPCG(4, 4))
	raw := make([]byte, 16*64+16)
	off := -uintptr(unsafe.Pointer(&raw[0])) & 15
	buf := raw[off : off+16*64]
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for n := 16; n <= len(buf); n += 16 {
		crc := r.Uint32()
		got := vpmsum(crc, buf[:n], tab)
		if want := oracle(crc, buf[:n]); got != want {
			t.Errorf("%d blocks: got %#08x, want %#08x (model %#08x)", n/16, got, want, modelVpmsum(crc, buf[:n], tab))
		}
	}
}

// checkCopy copies src into dstBuf[off:] with f, filled with a guard byte
// first, and checks the CRC, the copy, and that nothing around it changed.
func checkCopy(t *testing.T, f func(dst, src []byte, crc uint32) uint32, dstBuf []byte, off int, src []byte, crc uint32) bool {
	t.Helper()
	for i := range dstBuf {
		dstBuf[i] = 0xa5
	}
	dst := dstBuf[off : off+len(src)]
	got, want := f(dst, src, crc), oracle(crc, src)
	sa, da := uintptr(unsafe.Pointer(unsafe.SliceData(src)))&15, uintptr(unsafe.Pointer(unsafe.SliceData(dst)))&15
	if got != want {
		t.Errorf("len %d src align %d dst align %d: crc %#08x, want %#08x", len(src), sa, da, got, want)
		return false
	}
	if !bytes.Equal(dst, src) {
		t.Errorf("len %d src align %d dst align %d: the copy differs", len(src), sa, da)
		return false
	}
	for i, b := range dstBuf {
		if (i < off || i >= off+len(src)) && b != 0xa5 {
			t.Errorf("len %d src align %d dst align %d: wrote byte %d, outside dst %d..%d", len(src), sa, da, i, off, off+len(src))
			return false
		}
	}
	return true
}

// TestVpmsumCopyDirect calls the copying assembly alone for every block
// count through two main-loop iterations and a full tail, with the source
// and the destination at every alignment mod 16 (neither is aligned by the
// caller, so all 256 pairs matter).
func TestVpmsumCopyDirect(t *testing.T) {
	if len(Kernels()) == 0 {
		t.Skip("not a POWER8 CPU")
	}
	r := rand.New(rand.NewPCG(5, 5))
	src := make([]byte, 16*64+16)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	dst := make([]byte, 16*64+64)
	direct := func(dst, src []byte, crc uint32) uint32 { return vpmsumCopy(crc, dst, src, tab) }
	for sa := range 16 {
		for da := range 16 {
			for n := 16; n <= 16*64; n += 16 {
				if !checkCopy(t, direct, dst[:da+n+16+16], 16+da, src[sa:sa+n], r.Uint32()) {
					return
				}
			}
		}
	}
}

// TestCopyUpdateBoundaries runs the kernel's CopyUpdate over the lengths of
// TestBoundaries, at every source alignment mod 16 against four
// destination alignments.
func TestCopyUpdateBoundaries(t *testing.T) {
	ks := Kernels()
	if len(ks) == 0 {
		t.Skip("not a POWER8 CPU")
	}
	r := rand.New(rand.NewPCG(6, 6))
	src := make([]byte, 4096+32)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	dst := make([]byte, 4096+64)
	for _, k := range ks {
		for sa := range 16 {
			for _, da := range []int{0, 1, 8, 15} {
				for _, n := range boundaryLens() {
					if !checkCopy(t, k.CopyUpdate, dst[:16+da+n+16], 16+da, src[sa:sa+n], r.Uint32()) {
						return
					}
				}
			}
		}
	}
}

// TestCopyUpdateOverlap: overlapping buffers get memmove's result and the
// CRC of the bytes src held.
func TestCopyUpdateOverlap(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, k := range Kernels() {
		for _, n := range []int{1, 100, 5000} {
			for _, shift := range []int{-17, -1, 0, 1, 16, 1000} {
				buf := make([]byte, n+2000)
				for i := range buf {
					buf[i] = byte(r.Uint32())
				}
				want := append([]byte(nil), buf...)
				src, dst := buf[1000:1000+n], buf[1000+shift:1000+shift+n]
				wantCRC := oracle(9, src)
				copy(want[1000+shift:], want[1000:1000+n])
				if got := k.CopyUpdate(dst, src, 9); got != wantCRC || !bytes.Equal(buf, want) {
					t.Errorf("%s: len %d shift %d: crc %#x (want %#x), buffer as copy leaves it: %v", k.Name, n, shift, got, wantCRC, bytes.Equal(buf, want))
				}
			}
		}
	}
}
