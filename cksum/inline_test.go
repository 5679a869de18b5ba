package cksum

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// buildPayload writes a payload of nb blocks to dst through p in random
// pieces, some written in place and some copied, stamping each block with
// cycle as soon as its first word is complete (sometimes later), as the
// inline mode does. It returns the payload as written, before stamping.
func buildPayload(r *rand.Rand, p *Payload, dst []byte, nb int, cycle uint32) []byte {
	src := randBytes(r, nb*BlockSize)
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], cycle)
	stamp := func(upto int) {
		for p.Blocks()*BlockSize+4 <= upto && p.Blocks() < nb {
			w := dst[p.Blocks()*BlockSize:][:4]
			old := append([]byte(nil), w...)
			copy(w, c[:])
			p.Stamp(old, w)
		}
	}
	off := 0
	for off < len(src) {
		k := min(len(src)-off, r.IntN(3*BlockSize)+1)
		if r.IntN(5) == 0 {
			k = min(len(src)-off, r.IntN(7)+1) // pieces that end inside a word
		}
		if r.IntN(3) == 0 {
			copy(dst[off:off+k], src[off:off+k])
			p.Write(dst[off : off+k])
		} else {
			p.Copy(dst[off:off+k], src[off:off+k])
		}
		off += k
		if r.IntN(4) != 0 { // sometimes stamp later, several blocks at once
			stamp(off)
		}
	}
	stamp(off)
	return src
}

// Payload.Sum is the CRC of the stamped payload, for every implementation,
// however the payload was cut into pieces and whenever blocks were stamped.
func TestPayloadSum(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, im := range Impls() {
		for _, nb := range []int{0, 1, 2, 3, 63, 64, 65, 129, 511, 512} {
			var p Payload
			p.Reset(im)
			dst := make([]byte, nb*BlockSize)
			cycle := r.Uint32()
			written := buildPayload(r, &p, dst, nb, cycle)
			// dst is the stamped payload: the oracle sees exactly that.
			for i := range nb {
				if got := binary.BigEndian.Uint32(dst[i*BlockSize:]); got != cycle {
					t.Fatalf("block %d not stamped", i)
				}
			}
			if got, want := p.Sum(), oracle(0, dst); got != want {
				t.Errorf("%s: %d blocks: Sum %#08x, CRC of the stamped payload %#08x (as written: %#08x)", im.Name, nb, got, want, oracle(0, written))
			}
		}
	}
}

func TestPayloadSumPanicsUnstamped(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Sum of a payload with an unstamped block did not panic")
		}
	}()
	var p Payload
	p.Reset(Best())
	p.Write(make([]byte, BlockSize))
	p.Sum()
}

// Summer.Seal gives the CRC of header blocks + stamped payload, counts its
// own work at seal and Copy's at copy time, and agrees with every mode's
// Sum over the same record. The observer sees one Cost, at Seal, holding
// both: Copy's work reaches it with the record it went into.
func TestSummerInline(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	for _, im := range Impls() {
		s := NewSummer(Inline, im)
		var seen []Cost
		s.Observe(func(c Cost) { seen = append(seen, c) })
		hdr := randBytes(r, 8*BlockSize)
		nb := 100
		rec := make([]byte, len(hdr)+nb*BlockSize)
		copy(rec, hdr)
		var p Payload
		p.Reset(im)
		src := randBytes(r, nb*BlockSize-300)
		ophdr := rec[len(hdr) : len(hdr)+12]
		copy(ophdr, "op header 12")
		body := rec[len(hdr)+12:]
		stamped := 0
		s.Copy(&p, ophdr, body, src, func() {
			for ; stamped*BlockSize+4 <= 12+len(src); stamped++ {
				w := rec[len(hdr)+stamped*BlockSize:][:4]
				old := append([]byte(nil), w...)
				binary.BigEndian.PutUint32(w, 77)
				p.Stamp(old, w)
			}
		})
		pad := rec[len(hdr)+12+len(src):] // zeros already, as the iclog clears them
		if stamped != nb {
			t.Fatalf("%d of %d blocks stamped", stamped, nb)
		}
		got := s.Seal(&p, pad, rec[:len(hdr)], nil)
		for _, m := range Modes() {
			if want, _ := Sum(m, im.Update, rec, len(hdr)); got != want {
				t.Errorf("%s: Seal %#08x, Sum(%s) %#08x", im.Name, got, m, want)
			}
		}
		st := s.Stats()
		want := Stats{Records: 1, Calls: 2, Bytes: uint64(len(hdr) + len(pad)), CopyCalls: 2, CopyBytes: uint64(12 + len(src)), Clock: clock.name,
			Regions: 2, TimedRegions: 2, TimerNanos: clock.timed, UntimedNanos: clock.untimed, UntimedOpNanos: clock.untimedOp}
		if st.Nanos > st.WallNanos || st.CopyNanos > st.CopyWallNanos || st.OffCPU > 1 || st.CopyOffCPU > 1 {
			t.Errorf("%s: stats %+v: CPU time above wall time, or more off-CPU counts than measurements", im.Name, st)
		}
		if st.TimingNanos == 0 {
			t.Errorf("%s: stats %+v: the counting's own cost is missing", im.Name, st)
		}
		st.Nanos, st.WallNanos, st.OffCPU, st.CopyNanos, st.CopyWallNanos, st.CopyOffCPU, st.TimingNanos = 0, 0, 0, 0, 0, 0, 0
		if st != want {
			t.Errorf("%s: stats %+v, want %+v", im.Name, st, want)
		}
		st = s.Stats()
		if len(seen) != 1 {
			t.Fatalf("%s: observer called %d times, want once, at Seal", im.Name, len(seen))
		}
		c := seen[0]
		if c.Bytes != len(hdr)+len(pad) || c.Calls != 2 || c.CopyBytes != 12+len(src) || c.CopyCalls != 2 ||
			uint64(c.CPU) != st.Nanos || uint64(c.Wall) != st.WallNanos || uint64(c.CopyCPU) != st.CopyNanos || c.TotalCPU() != c.CPU+c.CopyCPU {
			t.Errorf("%s: observed %+v; stats %+v", im.Name, c, st)
		}
		if s.Stats().TotalCalls() != 4 || s.Stats().TotalBytes() != uint64(len(rec)) {
			t.Errorf("%s: totals %d calls, %d bytes; want 4, %d", im.Name, s.Stats().TotalCalls(), s.Stats().TotalBytes(), len(rec))
		}
	}
}

// The stamp table multiplies by x^4096 mod P.
func TestStampK(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	k := xpow8n(BlockSize)
	for range 1000 {
		w := r.Uint32()
		if got, want := mulStampK(w), mulmodP(w, k); got != want {
			t.Fatalf("mulStampK(%#x) = %#x, want %#x", w, got, want)
		}
	}
}

// A block whose first word ends in the padding is stamped in Seal's
// callback, after the padding's zeros are in the payload's CRC.
func TestSummerSealStampsInPadding(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	for _, tail := range []int{1, 2, 3, 4, 5} { // payload bytes into its last block
		s := NewSummer(Inline, Best())
		rec := make([]byte, 3*BlockSize) // header block, two payload blocks
		hdr, payload := rec[:BlockSize], rec[BlockSize:]
		copy(hdr, randBytes(r, BlockSize))
		src := randBytes(r, BlockSize+tail)
		var p Payload
		p.Reset(Best())
		stamped := 0
		stampTo := func(end int) {
			for ; stamped*BlockSize+4 <= end; stamped++ {
				w := payload[stamped*BlockSize:][:4]
				saved := hdr[4*stamped:][:4] // where does not matter, if outside the payload
				copy(saved, w)
				binary.BigEndian.PutUint32(w, 5)
				p.Stamp(saved, w)
			}
		}
		s.Copy(&p, nil, payload, src, func() { stampTo(len(src)) })
		got := s.Seal(&p, payload[len(src):], hdr, func() { stampTo(len(payload)) })
		if want, _ := Sum(Batched, Best().Update, rec, BlockSize); got != want {
			t.Errorf("payload ending %d bytes into a block: Seal %#08x, CRC of the record %#08x", tail, got, want)
		}
	}
}

// Payload.Restart and Save: Sum is the CRC of the prefix, with the words
// saved into it while the payload was written (runs of adjacent words and
// gaps between them, as a record's extension headers fill), followed by
// the stamped payload, for every implementation.
func TestPayloadPrefixSaved(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, im := range Impls() {
		for _, plen := range []int{4, 512, 1024, 3584} {
			for _, nb := range []int{0, 1, 3, 64, 130} {
				prefix := randBytes(r, plen)
				// The words to save: adjacent runs with gaps, zero in
				// the prefix whose CRC Restart gets.
				var offs []int
				for off := r.IntN(4) * 4; off+4 <= plen; off += 4 {
					if r.IntN(8) == 0 {
						off += 4 * r.IntN(40)
						continue
					}
					if off+4 <= plen {
						offs = append(offs, off)
					}
				}
				words := randBytes(r, 4*len(offs))
				for _, o := range offs {
					clear(prefix[o : o+4])
				}
				var p Payload
				p.Restart(im, oracle(0, prefix), plen)
				dst := make([]byte, nb*BlockSize)
				// Save the words between the payload's pieces: half now,
				// the rest after it is written.
				half := len(offs) / 2
				for i, o := range offs[:half] {
					p.Save(words[4*i:4*i+4], o)
				}
				buildPayload(r, &p, dst, nb, r.Uint32())
				for i, o := range offs[half:] {
					p.Save(words[4*(half+i):4*(half+i)+4], o)
				}
				for i, o := range offs {
					copy(prefix[o:o+4], words[4*i:4*i+4])
				}
				if got, want := p.Sum(), oracle(0, append(prefix, dst...)); got != want {
					t.Errorf("%s: prefix %d bytes, %d words saved, %d blocks: Sum %#08x, want %#08x", im.Name, plen, len(offs), nb, got, want)
				}
			}
		}
	}
}

// Save panics on words out of order or outside the prefix.
func TestPayloadSavePanics(t *testing.T) {
	for _, c := range []struct {
		name string
		offs []int
	}{{"behind the last", []int{8, 4}}, {"overlapping", []int{8, 10}}, {"past the prefix", []int{510}}, {"negative", []int{-4}}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Save did not panic", c.name)
				}
			}()
			var p Payload
			p.Restart(Best(), 0, 512)
			for _, o := range c.offs {
				p.Save(make([]byte, 4), o)
			}
		}()
	}
}
