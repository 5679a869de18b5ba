// Package amd64 holds the amd64 CRC-32C (Castagnoli) kernels of xlogfs.
//
// Every kernel has the semantics of hash/crc32.Update with the Castagnoli
// table; they differ in which instructions they use, by input length:
//
//   - avx512 (AVX-512 F and VL with VPCLMULQDQ): one CRC32Q chain, three
//     CRC32Q chains (3way), 128-, 256- and 512-bit folding (fold128,
//     fold256, fold512), and zmm folding fused with 3 or with 6 CRC32Q
//     chains in one loop (fused512, fused512x6).
//   - avx2-vpclmul (VPCLMULQDQ and AVX2, no AVX-512: AMD Zen 3, Intel's
//     client cores since Alder Lake): one chain, 3way, 256-bit folding in
//     VEX encoding (fold256, ymmvex_amd64.s: two VPXORs where the avx512
//     kernel has VPTERNLOGQ, registers 0-15 only) and that folding fused
//     with 3 chains (fused256, fusionvex_amd64.s). It runs on AVX-512 CPUs
//     too, which is where its tests run; vex_amd64_test.go checks with GNU
//     objdump that none of its routines holds an EVEX instruction.
//   - sse42-clmul (SSE4.2 and PCLMULQDQ): one chain, 3way, 128-bit folding
//     and that folding fused with 3 chains (fused128).
//
// Kernels lists them fastest first (the first this CPU runs is cksum's
// Best). CPU features come from CPUID (cpu_amd64.go): the VPCLMULQDQ bit is
// read directly, because golang.org/x/sys/cpu's HasAVX512VPCLMULQDQ, the
// same bit, is set only when AVX-512 is usable, and so is false on exactly
// the CPUs avx2-vpclmul is for; AVX2 and AVX-512 come from x/sys/cpu,
// which checks that the OS saves the ymm and zmm state.
//
// Where each kernel changes method is measured, not assumed: a
// calibration at the first call of Kernels (calibrate_amd64.go, a few
// milliseconds) times each method at lengths from 16 bytes to 64 KiB and
// gives each length the fastest, in order, starting from the default plans
// below and leaving them only for a method faster by more than 3%.
// CopyUpdate is calibrated the same way, against copy then Update: a
// one-pass copying routine is used only where it beats that by 3%. Calibrated
// reports the result; xlogfs version and cksum-bench print it. The reason
// is that the rates the choice depends on differ between CPU classes by
// factors of two: on the Zen 5 class machine below a ymm or zmm VPCLMULQDQ
// issues every other cycle, and six CRC32Q chains run about twice as fast
// as three; on Sapphire Rapids a zmm VPCLMULQDQ issues every cycle and
// three chains fill the one CRC32Q unit. So
// 128-bit folding loses to three CRC32Q chains (and to hash/crc32, which
// is that method) at 512 bytes and 4 KiB on AMD (the issue this came from:
// sse42-clmul at 0.70× and 0.86× of hash/crc32 on a Zen 3 EPYC), and the
// fused zmm loop needs six chains on Zen 5 where three suffice on Sapphire
// Rapids. The one thing the calibration cannot see is Intel's zmm warm-up
// (512-bit instructions run slowly for ~2 µs after a pause, and the
// calibration runs them warm): on Intel the zmm methods start at 2 KiB at
// the earliest whatever it measures.
//
// Measured (ns per call, calls chained through the CRC, least of 5
// samples; the calibration's own tables) on the machine this was written
// on, an AMD EPYC of family 0x1a model 0x2 (Zen 5 class), 2 vCPUs, with
// AVX-512 and VPCLMULQDQ:
//
//	bytes   scalar   3way  fold128  fold256  fold512  fused512  fused512x6  fused256  fused128  hash/crc32
//	   64      7.0      -      6.6        -        -         -           -         -         -         7.6
//	  256     28.2   16.0     20.0     11.6        -         -           -      23.5      37.8        28.5
//	  512     56.3   25.0     40.7     21.9     14.4      21.9        23.8      33.1      41.9        27.6
//	 1024      113     45       79       41       25      27.5        31.4      33.8      48.8          54
//	 4096      446    170      305      160       95      84.5        70.5       100       165         165
//	32768     3526   1242     2364     1202      631       511         360       641      1162        1252
//	65536     7044   2474     4709     2374     1212      1011         681      1243      2274        2565
//
// (fold256 is foldYMM for avx512 and foldVEX for avx2-vpclmul, within 1%
// of each other here.) The plans the calibration finds there, which are
// the default plans on AMD and on CPUs of other vendors:
//
//	avx512:       scalar, fold256 ≥ 128, fold512 ≥ 384, fused512x6 ≥ 3072
//	              CopyUpdate: scalar, fold256 ≥ 128, fold512 ≥ 384, fused512 ≥ 4096
//	avx2-vpclmul: scalar, fold256 ≥ 128, fused256 ≥ 768
//	              CopyUpdate: scalar, fold256 ≥ 128, fused256 ≥ 1536
//	sse42-clmul:  scalar, 3way ≥ 256, fused128 ≥ 8192
//	              CopyUpdate: scalar, copy+update ≥ 256, fused128 ≥ 3072
//
// (Runs move the thresholds between neighbouring probe lengths where two
// methods are within a few percent: fused512x6 from 1536 to 3072, fused128
// from 4096 to 12288.) On Intel the default plans are the tables measured
// on a Sapphire Rapids class Xeon before the calibration existed, calls
// chained likewise: avx512 one chain below 64 bytes (folding and the final
// shift of the incoming state cost ~20 cycles of latency), fold128 to 128,
// fold256 to 2 KiB (after 0.3 ms of scalar work a call took, median, 115 ns
// on zmm vs 73 on ymm at 512 bytes, 132 vs 65 at 1 KiB, 184 vs 124 at
// 2 KiB; warm, zmm won by 2, 6, 19 and 41 ns at 512 B, 1, 2 and 4 KiB),
// fold512 to 8 KiB, fused512 (three chains) from 8 KiB; sse42-clmul
// fold128 from 64 bytes, fused128 from 1 KiB.
//
// The AVX2 + VPCLMULQDQ class without AVX-512 (Zen 3; Intel's client
// cores are the same case, not measured), where avx2-vpclmul is Best:
// its split (3 ymm beside 3 chains of 4 quadwords per iteration) is set
// for a ymm VPCLMULQDQ every other cycle and one CRC32Q per cycle.
// Measured on an AMD EPYC of family 0x19 model 0x1 (Zen 3), 2 vCPUs, on
// 2026-12-02 (xlogfs cksum-bench, 7 rounds, GB/s and × hash/crc32 in the
// same run):
//
//	impl           64 B          512 B          4 KiB          32 KiB         256 KiB
//	avx2-vpclmul   6.74 (1.51×)  16.92 (1.29×)  21.76 (1.02×)  38.18 (1.74×)  39.62 (1.81×)
//	sse42-clmul    6.98 (1.57×)  16.79 (1.28×)  21.52 (1.00×)  23.19 (1.06×)  22.13 (1.01×)
//	linux          6.08 (1.36×)  16.66 (1.27×)  21.73 (1.01×)  22.53 (1.03×)  22.16 (1.01×)
//	hash/crc32     4.46          13.12          21.43          21.90          21.85
//
// Two starts of the process there calibrated avx2-vpclmul differently
// (scalar, fold256 ≥ 192, fused256 ≥ 1536; and scalar, 3way ≥ 256,
// fused256 ≥ 24576): between 256 bytes and 24 KiB three CRC32Q chains,
// fold256 and fused256 run within a few per cent of each other on that
// CPU, so which wins a probe length is noise, and either plan stays at or
// above hash/crc32 (4 KiB: 1.02×).
//
// Each kernel's CopyUpdate runs the same methods with a store after every
// load (copy_amd64.s, copyfused_amd64.s, copyvex_amd64.s), or copy then
// Update where the calibration found that faster.
//
// gf2_amd64.go has the algebra all of them rely on (polynomials mod P, how
// carry-less multiplies and CRC32Q shift a CRC, where the constants come
// from); each assembly file explains its own technique: scalar_amd64.s,
// threeway_amd64.s, xmm_amd64.s, ymm_amd64.s, ymmvex_amd64.s, zmm_amd64.s,
// fusion_amd64.s, fusion6_amd64.s, fusionvex_amd64.s, shift_amd64.s.
// Methods exposes single routines for package cksum's linux
// implementation (Linux's own crc32c dispatch, mirrored).
//
// Kernels describes each as a crc32c.Kernel (package cksum/crc32c, the leaf
// this package shares with cksum and ppc64). On other architectures, and on
// CPUs without SSE4.2 and PCLMULQDQ, Kernels returns nil.
package amd64
