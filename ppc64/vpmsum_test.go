//go:build ppc64 || ppc64le

package ppc64

import (
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
