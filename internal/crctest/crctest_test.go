package crctest

import (
	"hash/crc32"
	"testing"
)

// The reference agrees with what a CRC is: appending four zero bytes to a
// message multiplies its raw CRC state by x^32 mod P, and x^0 (reflected:
// bit 31) is the identity.
func TestNaiveMulmod(t *testing.T) {
	tab := crc32.MakeTable(crc32.Castagnoli)
	raw := func(p []byte) uint32 { return ^crc32.Update(0xffffffff, tab, p) }
	const one = 1 << 31
	// raw(m) is m(x)·x^32 mod P, the first bit (bit 0 of byte 0) the
	// highest power: the byte 0x80 is the polynomial 1, so its state is x^32.
	x32 := raw([]byte{0x80})
	for _, msg := range []string{"a", "xlogfs", "123456789"} {
		m := []byte(msg)
		if got, want := NaiveMulmod(raw(m), x32), raw(append(m, 0, 0, 0, 0)); got != want {
			t.Errorf("%q: state·x^32 = %#x, want the state after 4 zero bytes %#x", msg, got, want)
		}
		if got := NaiveMulmod(raw(m), one); got != raw(m) {
			t.Errorf("%q: state·1 = %#x, want %#x", msg, got, raw(m))
		}
	}
}
