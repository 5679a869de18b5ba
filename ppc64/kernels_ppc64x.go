//go:build ppc64 || ppc64le

package ppc64

import (
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/xlogfs/xlogfs/cksum/crc32c"
)

// Kernels lists the kernels this CPU can run, fastest first: the vpmsum
// kernel on POWER8 (ISA 2.07, which brought VPMSUMD) and later, else none.
func Kernels() []crc32c.Kernel {
	if !cpu.PPC64.IsPOWER8 {
		return nil
	}
	return []crc32c.Kernel{{
		Name:       "vpmsum",
		Desc:       "POWER8 VPMSUMD carry-less folding, 8 streams of 16 B",
		Update:     crc32cVpmsum,
		CopyUpdate: crc32cCopyVpmsum,
	}}
}

// vpmsum returns the CRC-32C of p appended to a message whose CRC-32C is
// crc. p must be 16-byte aligned and len(p) a non-zero multiple of 16.
//
//go:noescape
func vpmsum(crc uint32, p []byte, t *table) uint32

var tab = makeTable()

// vecMin is the shortest input given to the vector kernel. Below it the
// kernel's fixed cost (three dependent VPMSUMDs to reduce to 32 bits, plus
// the scalar head that aligns p) outweighs what it saves; 64 is what Go's
// own ppc64le kernel uses. An estimate, not measured on POWER hardware.
const vecMin = 64

// crc32cVpmsum is the vpmsum kernel's Update (named so that profiles find it by "crc32c").
func crc32cVpmsum(crc uint32, p []byte) uint32 {
	if len(p) >= vecMin {
		// LVX needs 16-byte alignment (it ignores the low 4 address bits),
		// so the scalar path takes the head. A goroutine stack can move
		// before the call, but stacks are at least 2 KiB-aligned, so the
		// data keeps its alignment mod 16.
		if head := -uintptr(unsafe.Pointer(unsafe.SliceData(p))) & 15; head != 0 {
			crc = crc32c.Slicing8Update(crc, p[:head])
			p = p[head:]
		}
		n := len(p) &^ 15
		crc = vpmsum(crc, p[:n], tab)
		p = p[n:]
	}
	if len(p) == 0 {
		return crc
	}
	return crc32c.Slicing8Update(crc, p)
}

// vpmsumCopy is vpmsum copying src into dst on the way (copy_ppc64x.s).
// len(src) is a non-zero multiple of 16, len(dst) >= len(src), the buffers
// do not overlap, and neither needs aligning.
//
//go:noescape
func vpmsumCopy(crc uint32, dst, src []byte, t *table) uint32

// crc32cCopyVpmsum is the vpmsum kernel's CopyUpdate.
func crc32cCopyVpmsum(dst, src []byte, crc uint32) uint32 {
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	if overlap(dst, src) {
		// One pass could read bytes it has already overwritten: copy (a
		// memmove) first, then checksum the copy.
		copy(dst, src)
		return crc32cVpmsum(crc, dst)
	}
	if m := n &^ 15; n >= vecMin {
		crc = vpmsumCopy(crc, dst[:m], src[:m], tab)
		dst, src = dst[m:], src[m:]
	}
	copy(dst, src)
	return crc32c.Slicing8Update(crc, src)
}

// overlap reports whether a and b share any byte.
func overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}
