package algobench

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// diffBits returns the positions (byte·8 + bit, least significant bit
// first) where a and b differ.
func diffBits(a, b []byte) []int {
	var out []int
	for i := range a {
		x := a[i] ^ b[i]
		for x != 0 {
			j := bits.TrailingZeros8(x)
			out = append(out, 8*i+j)
			x &^= 1 << j
		}
	}
	return out
}

// diffBlocks returns the 512-byte blocks where a and b differ.
func diffBlocks(a, b []byte) []int {
	var out []int
	for off := 0; off < len(a); off += BlockSize {
		if !bytes.Equal(a[off:off+BlockSize], b[off:off+BlockSize]) {
			out = append(out, off/BlockSize)
		}
	}
	return out
}

// Every model's generator makes the damage it claims, and only that.
func TestDamageGenerators(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, s := range Shapes {
		buf := make([]byte, s.Bytes)
		var d Damage
		trials := 300
		if s.Bytes > 8192 {
			trials = 30
		}
		for range trials {
			s.fill(r, buf)
			orig := bytes.Clone(buf)
			for _, m := range Models() {
				if !d.generate(r, m, s, buf) {
					t.Fatalf("%s, %s: no damage generated", s.Title, m)
				}
				if !bytes.Equal(buf, orig) {
					t.Fatalf("%s, %s: generate changed the buffer", s.Title, m)
				}
				got := d.Damaged(buf)
				if m == Truncate {
					if d.Len <= 0 || d.Len >= s.Bytes || d.Len%BlockSize != 0 || !bytes.Equal(got, orig[:d.Len]) {
						t.Fatalf("%s: truncated to %d bytes of %d", s.Title, d.Len, s.Bytes)
					}
					continue
				}
				if len(got) != len(orig) {
					t.Fatalf("%s, %s: length changed", s.Title, m)
				}
				if bytes.Equal(got, orig) {
					t.Fatalf("%s, %s: damage changed nothing", s.Title, m)
				}
				flipped := diffBits(orig, got)
				blocks := diffBlocks(orig, got)
				switch m {
				case Flip1, Flip2, Flip3:
					if k := int(m-Flip1) + 1; len(flipped) != k {
						t.Fatalf("%s: %d bits flipped, want %d", m, len(flipped), k)
					}
				case Burst32, Burst64, BurstLong:
					lo, hi := m.burstBounds()
					span := flipped[len(flipped)-1] - flipped[0] + 1
					if span < lo || span > hi {
						t.Fatalf("%s: burst spans %d bits, want %d–%d", m, span, lo, hi)
					}
				case ZeroBlock:
					if len(blocks) != 1 || !isZero(got[blocks[0]*BlockSize:][:BlockSize]) {
						t.Fatalf("zeroblock: blocks %v changed, want one, now zero", blocks)
					}
				case StaleBlock:
					if len(blocks) != 1 {
						t.Fatalf("staleblock: blocks %v changed, want one", blocks)
					}
					off := blocks[0] * BlockSize
					if s.Stamped && binary.BigEndian.Uint32(got[off:]) != binary.BigEndian.Uint32(orig[off:])-1 {
						t.Fatalf("staleblock: cycle stamp %d, want one less than %d",
							binary.BigEndian.Uint32(got[off:]), binary.BigEndian.Uint32(orig[off:]))
					}
				case SwapBlocks:
					if len(blocks) != 2 {
						t.Fatalf("swapblocks: blocks %v changed, want two", blocks)
					}
					i, j := blocks[0]*BlockSize, blocks[1]*BlockSize
					if !bytes.Equal(got[i:i+BlockSize], orig[j:j+BlockSize]) || !bytes.Equal(got[j:j+BlockSize], orig[i:i+BlockSize]) {
						t.Fatalf("swapblocks: blocks %v not exchanged", blocks)
					}
				case ZeroToFF:
					if bytes.IndexByte(got, 0) >= 0 {
						t.Fatalf("zerotoff: a 0x00 byte is left")
					}
					for i := range orig {
						if want := orig[i]; (want == 0 && got[i] != 0xff) || (want != 0 && got[i] != want) {
							t.Fatalf("zerotoff: byte %d %#x → %#x", i, want, got[i])
						}
					}
				}
				// Apply and Revert in place agree with Damaged.
				d.Apply(buf)
				if !bytes.Equal(buf, got) {
					t.Fatalf("%s, %s: Apply differs from Damaged", s.Title, m)
				}
				d.Revert(buf)
				if !bytes.Equal(buf, orig) {
					t.Fatalf("%s, %s: Revert did not restore the buffer", s.Title, m)
				}
			}
		}
	}
}

// The burst models reach both ends of their bounds.
func TestBurstSpansCoverBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	buf := make([]byte, 8192)
	var d Damage
	for _, m := range []Model{Burst32, Burst64} {
		lo, hi := m.burstBounds()
		seen := map[int]bool{}
		for range 20000 {
			d.generate(r, m, Shapes[0], buf)
			f := diffBits(buf, d.Damaged(buf))
			seen[f[len(f)-1]-f[0]+1] = true
		}
		if !seen[lo] || !seen[hi] || len(seen) != hi-lo+1 {
			t.Errorf("%s: %d spans seen, want all of %d–%d", m, len(seen), lo, hi)
		}
	}
}

// Buffers look like their shape: log records carry one cycle stamp on every
// block, and the content has the zeros the 00→FF and zero-block models need.
func TestShapeContent(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	rec := Shapes[1]
	buf := make([]byte, rec.Bytes)
	rec.fill(r, buf)
	c := binary.BigEndian.Uint32(buf)
	for off := 0; off < len(buf); off += BlockSize {
		if binary.BigEndian.Uint32(buf[off:]) != c {
			t.Fatalf("block at %d stamped %d, want %d", off, binary.BigEndian.Uint32(buf[off:]), c)
		}
	}
	zeros := bytes.Count(buf, []byte{0})
	if zeros < len(buf)/10 || zeros > len(buf)/2 {
		t.Errorf("%d of %d bytes zero, want a realistic share", zeros, len(buf))
	}
}
