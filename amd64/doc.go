// Package amd64 holds the amd64 CRC-32C (Castagnoli) kernels of xlogfs.
//
// Every kernel has the semantics of hash/crc32.Update with the Castagnoli
// table; they differ in which instructions they use, by input length:
//
//   - avx512 (AVX-512 with VPCLMULQDQ): one CRC32Q chain below 64 bytes,
//     128-bit PCLMULQDQ folding to 128, 256-bit VPCLMULQDQ folding to
//     2 KiB, 512-bit folding to 8 KiB, then 3 zmm accumulators fused with
//     3 CRC32Q chains in one loop.
//   - sse42-clmul (SSE4.2 and PCLMULQDQ): one CRC32Q chain below 64 bytes,
//     128-bit folding to 1 KiB, then 4 xmm accumulators fused with 3 CRC32Q
//     chains.
//
// Each kernel's CopyUpdate runs the same methods with a store after every
// load (copy_amd64.s, copyfused_amd64.s).
//
// gf2_amd64.go has the algebra all of them rely on (polynomials mod P, how
// carry-less multiplies and CRC32Q shift a CRC, where the constants come
// from); each assembly file explains its own technique: scalar_amd64.s,
// xmm_amd64.s, ymm_amd64.s, zmm_amd64.s, fusion_amd64.s, shift_amd64.s.
//
// On other architectures, and on CPUs without SSE4.2 and PCLMULQDQ, Kernels
// returns nil.
package amd64

// Kernel is one CRC-32C kernel. Update has exactly the semantics of
// hash/crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), p): crc is the
// previous finalized CRC, and Update(0, p) is the CRC-32C of p.
//
// Combine(crcA, crcB, lenB) is the CRC-32C of A‖B given crcA, the CRC of A,
// and crcB, the CRC of B, len(B) = lenB: Update(crcA, B) without B.
//
// CopyUpdate(dst, src, crc) copies src into dst as copy does (n =
// min(len(dst), len(src)) bytes) and returns Update(crc, src[:n]), reading
// each byte once: the copy rides along with the checksum.
type Kernel struct {
	Name, Desc string
	Update     func(crc uint32, p []byte) uint32
	Combine    func(crcA, crcB uint32, lenB int) uint32
	CopyUpdate func(dst, src []byte, crc uint32) uint32
}
