// Package cksum computes CRC-32C (Castagnoli), the checksum of the xlogfs log.
//
// Update has exactly the semantics of hash/crc32.Update with the Castagnoli
// table, and runs the fastest implementation this CPU offers. Every
// implementation is also reachable on its own through Impls, so tests can
// prove each one equal to hash/crc32 and benchmarks can compare them:
//
//   - the architecture's kernels (package amd64: avx512, avx2-vpclmul,
//     sse42-clmul; package ppc64: vpmsum), fastest first; Best is the
//     first. Each changes method by input length where a calibration at
//     process start found the next method faster on this CPU (see
//     amd64/calibrate_amd64.go), and Chosen says which and why;
//   - stdlib, Go's hash/crc32;
//   - linux, Linux 6.18's crc32c() dispatch for this CPU built from our
//     own code: on x86 one CRC32Q chain below 512 bytes, then three CRC32Q
//     streams (crc32c_x86_3way), or zmm VPCLMULQDQ folding on CPUs Linux
//     deems to have fast AVX-512; on POWER a byte table below 528 bytes,
//     then vpmsum (linux.go has the rules and the files they come from);
//   - generic, portable slicing-by-8.
//
// How a log record is checksummed (one call, the XFS per-region calls, or one
// call per sector) is a Mode; see mode.go. Which of its bytes the CRC covers
// (all of them, or XFS's xlog_cksum regions) is a Coverage, the store's; see
// coverage.go.
package cksum

import (
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/xlogfs/xlogfs/cksum/crc32c"
)

// Impl is one CRC-32C implementation, described as package crc32c's Kernel
// is: Update(crc, p) must equal crc32.Update(crc,
// crc32.MakeTable(crc32.Castagnoli), p) for every input, Combine(Update(0,
// a), Update(0, b), len(b)) must equal Update(Update(0, a), b) (see
// Combine), and CopyUpdate(dst, src, crc) must copy as copy(dst, src) does
// and return Update(crc, src[:n]) over the n bytes copied (see CopyUpdate).
// Every Impl of Impls has all three.
type Impl = crc32c.Kernel

var castagnoliTable = crc32.MakeTable(crc32.Castagnoli)

func crc32cStdlib(crc uint32, p []byte) uint32 { return crc32.Update(crc, castagnoliTable, p) }

// Implementations this CPU can run. The arch kernels come first, fastest
// first (archImpls, per architecture), then the three that always exist:
// stdlib (Best when there is no arch kernel), linux and generic.
var impls = func() []Impl {
	list := archImpls()
	list = append(list,
		Impl{Name: "stdlib", Desc: "Go hash/crc32 (Castagnoli)", Update: crc32cStdlib, Combine: crc32cCombineGF2,
			CopyUpdate: crc32cCopyThenUpdate(crc32cStdlib)},
		linuxImpl(),
		Impl{Name: "generic", Desc: "pure Go slicing-by-8", Update: crc32cGeneric, Combine: crc32cCombineGF2,
			CopyUpdate: crc32cCopyThenUpdate(crc32cGeneric)},
	)
	return list
}()

// best is chosen once, at start: the first entry of impls.
var best = impls[0]

// Update returns the CRC-32C of p appended to a message whose CRC-32C is crc.
// Update(0, p) is the CRC-32C of p.
func Update(crc uint32, p []byte) uint32 { return best.Update(crc, p) }

// Checksum returns the CRC-32C of p.
func Checksum(p []byte) uint32 { return best.Update(0, p) }

// Combine returns the CRC-32C of A‖B from crcA, the CRC-32C of A (or any
// CRC state, as Update takes), and crcB = Checksum(B), where lenB = len(B):
// the same as Update(crcA, B), without reading B. It costs a few
// multiplications, one per set bit of lenB (combine.go has the math).
// lenB < 0 panics.
func Combine(crcA, crcB uint32, lenB int) uint32 { return best.Combine(crcA, crcB, lenB) }

// CopyUpdate copies src into dst as copy(dst, src) does, n = min(len(dst),
// len(src)) bytes, and returns Update(crc, src[:n]): the CRC-32C of the
// bytes copied, appended to crc. The architecture kernels do both in one
// pass, loading each byte once into the registers the checksum works on
// and storing it from there, so the copy costs little more than the
// checksum. Overlapping buffers are allowed; they get copy's result and the
// CRC of what src held before the call.
func CopyUpdate(dst, src []byte, crc uint32) uint32 { return best.CopyUpdate(dst, src, crc) }

// crc32cCopyThenUpdate is CopyUpdate for the implementations without a copying
// kernel: copy, then checksum the copy (which is what src held, even when
// the two overlap).
func crc32cCopyThenUpdate(update func(uint32, []byte) uint32) func([]byte, []byte, uint32) uint32 {
	return func(dst, src []byte, crc uint32) uint32 {
		n := copy(dst, src)
		return update(crc, dst[:n])
	}
}

// Impls lists every implementation usable on this CPU: the arch kernels
// fastest first, then stdlib, linux and generic.
func Impls() []Impl { return append([]Impl(nil), impls...) }

// Best is the implementation Update uses.
func Best() Impl { return best }

// Lookup finds an implementation by name; "auto" and "" mean Best.
func Lookup(name string) (Impl, error) {
	if name == "" || name == "auto" {
		return best, nil
	}
	var names []string
	for _, im := range impls {
		if im.Name == name {
			return im, nil
		}
		names = append(names, im.Name)
	}
	return Impl{}, fmt.Errorf("unknown or unavailable crc32c implementation %q (this CPU has: auto, %s)",
		name, strings.Join(names, ", "))
}
