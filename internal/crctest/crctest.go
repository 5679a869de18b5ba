// Package crctest holds the reference arithmetic the CRC-32C tests check
// the fast code against: written the textbook way, sharing nothing with
// cksum's or the kernels' own. Tests only: no package of the module imports
// it outside a _test.go file (tests/layout holds that), and it imports the
// standard library alone.
package crctest

import "math/bits"

// poly is the Castagnoli polynomial P with its x^32 term, bit i is x^i.
const poly = 0x11edc6f41

// NaiveMulmod returns a·b mod P for a and b in CRC-32C's reflected order
// (bit 31 is x^0): a plain carry-less product in the textbook order (bit i
// is x^i), then long division by P.
func NaiveMulmod(a, b uint32) uint32 {
	ra, rb := uint64(bits.Reverse32(a)), uint64(bits.Reverse32(b))
	var prod uint64
	for i := range 32 {
		if ra>>i&1 != 0 {
			prod ^= rb << i
		}
	}
	for i := 63; i >= 32; i-- {
		if prod>>i&1 != 0 {
			prod ^= poly << (i - 32)
		}
	}
	return bits.Reverse32(uint32(prod))
}
