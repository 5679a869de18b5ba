package crc32c

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

var castagnoliTable = crc32.MakeTable(crc32.Castagnoli)

func oracle(crc uint32, p []byte) uint32 { return crc32.Update(crc, castagnoliTable, p) }

func TestPolynomial(t *testing.T) {
	if Castagnoli != crc32.Castagnoli {
		t.Fatalf("Castagnoli = %#08x, hash/crc32 says %#08x", Castagnoli, crc32.Castagnoli)
	}
}

// TestTables checks the byte table against hash/crc32's and each further
// table against its definition: the CRC of byte b followed by k zero bytes.
func TestTables(t *testing.T) {
	tb := Slicing8Tables()
	for b := range 256 {
		if got, want := tb[0][b], castagnoliTable[b]; got != want {
			t.Fatalf("table 0 [%#02x] = %#08x, hash/crc32's = %#08x", b, got, want)
		}
		for k := 1; k < 8; k++ {
			msg := make([]byte, 1+k)
			msg[0] = byte(b)
			// The raw CRC (no inversions) of the message is the table entry.
			if got, want := tb[k][b], ^oracle(^uint32(0), msg); got != want {
				t.Fatalf("table %d [%#02x] = %#08x, want %#08x", k, b, got, want)
			}
		}
	}
}

// TestSlicing8Update covers every length up to 300 (every tail length after
// every number of 8-byte steps) from random starting CRCs, and the check
// value of the CRC catalogue.
func TestSlicing8Update(t *testing.T) {
	if got := Slicing8Update(0, []byte("123456789")); got != 0xe3069283 {
		t.Fatalf("CRC-32C of \"123456789\" = %#08x, want 0xe3069283", got)
	}
	r := rand.New(rand.NewPCG(9, 9))
	buf := make([]byte, 300)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for n := range len(buf) + 1 {
		crc := r.Uint32()
		if got, want := Slicing8Update(crc, buf[:n]), oracle(crc, buf[:n]); got != want {
			t.Fatalf("len %d: got %#08x, want %#08x", n, got, want)
		}
	}
}

func FuzzSlicing8Update(f *testing.F) {
	f.Add(uint32(0), []byte("123456789"))
	f.Add(uint32(0xffffffff), make([]byte, 67))
	f.Fuzz(func(t *testing.T, crc uint32, p []byte) {
		if got, want := Slicing8Update(crc, p), oracle(crc, p); got != want {
			t.Fatalf("len %d: got %#08x, want %#08x", len(p), got, want)
		}
	})
}
