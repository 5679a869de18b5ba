// Package ppc64 holds the POWER8 CRC-32C (Castagnoli) kernel: VPMSUMD
// carry-less multiplication folding 16-byte blocks, on ppc64le and on
// big-endian ppc64 alike.
//
// The kernel is reachable only through Kernels, which is empty on other
// architectures and on CPUs older than POWER8 (ISA 2.07). The math behind
// the folding is in consts.go; the kernel is vpmsum_ppc64x.s, and its
// copying twin copy_ppc64x.s. Kernels describes it as a crc32c.Kernel
// (package cksum/crc32c, the leaf this package shares with cksum and amd64),
// and the inputs too short for it, and the unaligned head and the
// sub-16-byte tail around it, go to crc32c.Slicing8Update, portable Go that
// is right on either byte order.
package ppc64
