package sums

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// Fletcher's published check values (the ones every description of the
// algorithm quotes): Fletcher-16 over bytes, Fletcher-32 over little-endian
// 16-bit words with an odd last byte zero-padded.
func TestFletcherCheckValues(t *testing.T) {
	for _, c := range []struct {
		in  string
		f16 uint16
		f32 uint32
	}{
		{"abcde", 0xC8F0, 0xF04FC729},
		{"abcdef", 0x2057, 0x56502D2A},
		{"abcdefgh", 0x0627, 0xEBE19591},
	} {
		if got := Checksum16([]byte(c.in)); got != c.f16 {
			t.Errorf("Fletcher-16(%q) = %#04x, want %#04x", c.in, got, c.f16)
		}
		if got := Checksum32([]byte(c.in)); got != c.f32 {
			t.Errorf("Fletcher-32(%q) = %#08x, want %#08x", c.in, got, c.f32)
		}
	}
}

// slow16 and slow32 are the definitions, a byte or word at a time, reduced
// at every step.
func slow16(p []byte) uint16 {
	var s1, s2 uint32
	for _, b := range p {
		s1 = (s1 + uint32(b)) % 255
		s2 = (s2 + s1) % 255
	}
	return uint16(s2<<8 | s1)
}

func slow32(p []byte) uint32 {
	var s1, s2 uint32
	for i := 0; i < len(p); i += 2 {
		w := uint32(p[i])
		if i+1 < len(p) {
			w |= uint32(p[i+1]) << 8
		}
		s1 = (s1 + w) % 65535
		s2 = (s2 + s1) % 65535
	}
	return s2<<16 | s1
}

// The unrolled, lazily reduced sums equal the definitions on every length
// and on splits at every point, including across the reduction interval.
func TestFletcherMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 511, 512, 8192, 8193, 3*reduceEvery + 5} {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(r.Uint32())
		}
		if n > 100 {
			copy(p, bytes.Repeat([]byte{0xff}, 100)) // the largest words
		}
		if got, want := Checksum16(p), slow16(p); got != want {
			t.Errorf("Fletcher-16 len %d: %#x, definition %#x", n, got, want)
		}
		if got, want := Checksum32(p), slow32(p); got != want {
			t.Errorf("Fletcher-32 len %d: %#x, definition %#x", n, got, want)
		}
		for _, cut := range []int{0, 1, n / 3, n / 2, n - 1} {
			if cut < 0 || cut > n {
				continue
			}
			var f16 Fletcher16
			var f32 Fletcher32
			f16.Write(p[:cut])
			f32.Write(p[:cut])
			f32.Sum32() // must not disturb the state
			f16.Write(p[cut:])
			f32.Write(p[cut:])
			if f16.Sum16() != slow16(p) || f32.Sum32() != slow32(p) {
				t.Errorf("len %d split at %d: streaming differs from one shot", n, cut)
			}
		}
	}
}

// Fletcher's blind spot, which algo-bench's 00→FF model measures: modulo
// 255 a 0x00 byte and a 0xFF byte are the same.
func TestFletcher16ZeroToFFInvisible(t *testing.T) {
	p := []byte("ab\x00cd\x00\x00e")
	q := bytes.ReplaceAll(p, []byte{0}, []byte{0xff})
	if Checksum16(p) != Checksum16(q) {
		t.Errorf("Fletcher-16 told 00 from FF: %#x vs %#x", Checksum16(p), Checksum16(q))
	}
	if Checksum32(p) == Checksum32(q) {
		t.Errorf("Fletcher-32 missed single 00→FF bytes")
	}
}

// PostgreSQL's published values: its pageinspect regression test checksums
// 8 KiB pages filled with one byte pattern as blocks 0, 50 and 100 (the
// little-endian expected output; shown there as signed int16).
func TestPGPageCheckValues(t *testing.T) {
	pattern := map[string][]byte{
		"01": {0x01}, "04": {0x04}, "ff": {0xff},
		"abcd": {0xab, 0xcd}, "e6d6": {0xe6, 0xd6}, "4a5e": {0x4a, 0x5e},
	}
	want := map[string][3]int16{
		"01":   {1175, 1225, 1139},
		"04":   {28338, 28352, 28438},
		"ff":   {3612, 3598, 3648},
		"abcd": {-30781, -30795, -30881},
		"e6d6": {-16269, -16251, -16305},
		"4a5e": {-27377, -27391, -27349},
	}
	for name, pat := range pattern {
		page := bytes.Repeat(pat, 8192/len(pat))
		orig := bytes.Clone(page)
		for i, blkno := range []uint32{0, 50, 100} {
			if got := int16(PGPageChecksum(page, blkno)); got != want[name][i] {
				t.Errorf("page of %s, block %d: checksum %d, want %d", name, blkno, got, want[name][i])
			}
		}
		if !bytes.Equal(page, orig) {
			t.Errorf("PGPageChecksum changed the page")
		}
	}
}

// The block hash does not depend on how the input is split into writes, and
// Sum32 does not disturb the state.
func TestPGBlockStreaming(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	p := make([]byte, 8192)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	want := PGBlockHash(p)
	for _, cut := range []int{0, 1, 127, 128, 129, 4000, 8191} {
		b := NewPGBlock()
		b.Write(p[:cut])
		b.Sum32()
		b.Write(p[cut:])
		if got := b.Sum32(); got != want {
			t.Errorf("split at %d: %#x, one shot %#x", cut, got, want)
		}
	}
	// A partial last row is zero-padded.
	if PGBlockHash(p[:100]) != PGBlockHash(append(bytes.Clone(p[:100]), make([]byte, 28)...)) {
		t.Errorf("partial row is not zero-padded")
	}
	// Every byte matters: flipping one bit in any column changes the hash.
	for _, i := range []int{0, 5, 127, 128, 4097, 8191} {
		q := bytes.Clone(p)
		q[i] ^= 0x80
		if PGBlockHash(q) == want {
			t.Errorf("flip at byte %d not seen", i)
		}
	}
}
