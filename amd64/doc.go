// Package amd64 holds the amd64 CRC-32C (Castagnoli) kernels of xlogfs.
//
// Every kernel has the semantics of hash/crc32.Update with the Castagnoli
// table; they differ in which instructions they use:
//
//   - avx512: 512-bit VPCLMULQDQ folding fused with scalar CRC32Q streams
//     (long inputs), 256-bit VPCLMULQDQ folding (medium), CRC32Q (short).
//   - sse42-clmul: 128-bit PCLMULQDQ folding fused with three CRC32Q
//     streams, for CPUs without AVX-512.
//
// The file of each technique explains the algebra it relies on; gf2_amd64.go
// has the common ground (polynomials mod P, how carry-less multiplies shift
// a CRC, where the constants come from).
//
// On other architectures, and on CPUs without SSE4.2 and PCLMULQDQ, Kernels
// returns nil.
package amd64

// Kernel is one CRC-32C kernel. Update has exactly the semantics of
// hash/crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), p): crc is the
// previous finalized CRC, and Update(0, p) is the CRC-32C of p.
type Kernel struct {
	Name, Desc string
	Update     func(crc uint32, p []byte) uint32
}
