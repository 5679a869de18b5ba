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
// Kernels describes each as a crc32c.Kernel (package cksum/crc32c, the leaf
// this package shares with cksum and ppc64). On other architectures, and on
// CPUs without SSE4.2 and PCLMULQDQ, Kernels returns nil.
package amd64
