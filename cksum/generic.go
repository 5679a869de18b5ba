package cksum

import "github.com/xlogfs/xlogfs/cksum/crc32c"

// Castagnoli is the CRC-32C polynomial in reversed (LSB-first) bit order.
const Castagnoli = crc32c.Castagnoli

// slicing8 holds the slicing-by-8 tables (package crc32c has the method):
// slicing8[0] is the byte-at-a-time table, slicing8[k][b] the CRC of byte b
// followed by k zero bytes.
var slicing8 = crc32c.Slicing8Tables()

// crc32cGeneric is the portable implementation: slicing-by-8 over the bulk,
// byte at a time over the tail.
func crc32cGeneric(crc uint32, p []byte) uint32 { return crc32c.Slicing8Update(crc, p) }
