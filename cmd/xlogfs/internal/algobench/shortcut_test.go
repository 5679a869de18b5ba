package algobench

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The exact shortcuts equal recomputing the checksum of the damaged buffer,
// on random buffers and every model they serve: the change they compute is
// the change of the full checksum, so their verdicts (change zero at full
// width, low 16 bits zero) are the full checksum's.
func TestShortcutsEqualRecomputation(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, s := range Shapes {
		buf := make([]byte, s.Bytes)
		var d Damage
		trials := 400
		if s.Bytes > 8192 {
			trials = 60
		}
		for _, a := range Algos() {
			if a.family == famHash {
				continue
			}
			var pow []uint64
			if a.family == famCRC {
				pow = a.crc.powerTable(s.Bytes)
			}
			for _, m := range Models() {
				if m == Truncate {
					continue // changes the length: no shortcut
				}
				for range trials {
					s.fill(r, buf)
					if !d.generate(r, m, s, buf) {
						t.Fatalf("no %s damage", m)
					}
					before, after := a.Sum(buf), a.Sum(d.Damaged(buf))
					var got uint64
					if a.family == famCRC {
						got = a.crc.crcDelta(s.Bytes, &d, pow)
					} else {
						got = a.sumDelta(s.Bytes, &d)
					}
					if want := a.delta(before, after); got != want {
						t.Fatalf("%s, %s, %s: shortcut change %#x, recomputed %#x", a.Name, s.Title, m, got, want)
					}
					if (got == 0) != (before == after) || (got&0xffff == 0) != (before&0xffff == after&0xffff) {
						t.Fatalf("%s, %s, %s: verdicts differ (change %#x, %#x → %#x)", a.Name, s.Title, m, got, before, after)
					}
				}
			}
		}
	}
}

// Damages a shortcut must call missed, and the full checksum agrees: the
// generator polynomial itself as a 33-bit burst (every multiple of P is
// invisible to a CRC), and Fletcher-16's 0x00 → 0xFF.
func TestShortcutsSeeKnownMisses(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	buf := make([]byte, 8192)
	Shapes[0].fill(r, buf)
	for _, name := range []string{"crc32c/best", "crc32-ieee"} {
		a := algoByName(t, name)
		// In the stream's bit order P's x^32 term comes first, then its
		// reflected constant, lowest bit (x^31) first, ending with x^0.
		pattern := uint64(1) | a.crc.poly<<1
		for _, bit := range []int{0, 3, 8*len(buf) - 33, 12345} {
			e := make([]byte, len(buf))
			for j := range 33 {
				if pattern>>j&1 != 0 {
					e[(bit+j)/8] |= 1 << ((bit + j) % 8)
				}
			}
			first, last := bit/8, (bit+32)/8
			var d Damage
			d.reset(Burst64, len(buf), 2*(last-first+1))
			nb := d.take(last - first + 1)
			for i := range nb {
				nb[i] = buf[first+i] ^ e[first+i]
			}
			d.addPatch(buf, first, nb)
			if got := a.crc.crcDelta(len(buf), &d, a.crc.powerTable(len(buf))); got != 0 {
				t.Errorf("%s: P as a burst at bit %d: shortcut change %#x, want 0", name, bit, got)
			}
			if a.Sum(buf) != a.Sum(d.Damaged(buf)) {
				t.Errorf("%s: P as a burst at bit %d: the CRC saw it", name, bit)
			}
		}
	}
	f16 := algoByName(t, "fletcher16")
	i := bytes.IndexByte(buf, 0)
	var d Damage
	d.reset(ZeroToFF, len(buf), 2)
	nb := d.take(1)
	nb[0] = 0xff
	d.addPatch(buf, i, nb)
	if got := f16.sumDelta(len(buf), &d); got != 0 {
		t.Errorf("fletcher16: 00→FF at %d: change %#x, want 0", i, got)
	}
}
