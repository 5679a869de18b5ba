// Package ppc64 holds the POWER8 CRC-32C (Castagnoli) kernel: VPMSUMD
// carry-less multiplication folding 16-byte blocks, on ppc64le and on
// big-endian ppc64 alike.
//
// The kernel is reachable only through Kernels, which is empty on other
// architectures and on CPUs older than POWER8 (ISA 2.07). The math behind
// the folding is in consts.go; the kernel is vpmsum_ppc64x.s, and its
// copying twin copy_ppc64x.s.
package ppc64

// Kernel is one CRC-32C kernel. Update has exactly hash/crc32.Update(crc,
// crc32.MakeTable(crc32.Castagnoli), p) semantics. CopyUpdate(dst, src, crc)
// copies src into dst as copy does (n = min(len(dst), len(src)) bytes) and
// returns Update(crc, src[:n]), reading each byte once.
type Kernel struct {
	Name, Desc string
	Update     func(crc uint32, p []byte) uint32
	CopyUpdate func(dst, src []byte, crc uint32) uint32
}
