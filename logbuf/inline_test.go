package logbuf

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/xlogfs/xlogfs/cksum"
)

// fillRandom appends ops of random sizes to ic until it is about full,
// the same sequence for the same seed: many small ops (ending inside a
// block's first word too), empty ones, and a few large ones.
func fillRandom(ic *Iclog, seed uint64, limit int) {
	r := rand.New(rand.NewPCG(seed, 7))
	for ic.Free() >= 2*OpHeaderSize && ic.Used() < limit {
		var n int
		switch r.IntN(6) {
		case 0:
			n = 0
		case 1:
			n = r.IntN(8)
		case 2:
			n = 5000 + r.IntN(40000)
		default:
			n = r.IntN(700)
		}
		region := make([]byte, n)
		for i := range region {
			region[i] = byte(r.Uint32())
		}
		ic.AppendOp(uint32(r.IntN(9)), ClientTransaction, 0, region, false)
	}
}

// An inline-mode record is byte for byte the record any other mode
// writes for the same ops, for every logbsize, fill level and end offset,
// through every implementation; and it decodes.
func TestInlineSameRecordAsBatched(t *testing.T) {
	for _, cov := range cksum.Coverages() {
		for _, im := range cksum.Impls() {
			inlineSameRecord(t, cov, im)
		}
	}
}

func inlineSameRecord(t *testing.T, cov Coverage, im cksum.Impl) {
	for _, size := range []int{32 << 10, 64 << 10, 256 << 10} {
		for seed := range uint64(12) {
			limit := []int{0, 1, 600, 5000, 40000, 1 << 30}[seed%6]
			want := mustIclogCov(t, size, cov)
			want.Start(4, cksum.NewSummer(cksum.Batched, im))
			fillRandom(want, seed, limit)
			wrec := want.Seal(MakeLSN(4, 77), MakeLSN(3, 5), MakeLSN(4, 76), 40, cksum.NewSummer(cksum.Batched, im))

			got := mustIclogCov(t, size, cov)
			s := cksum.NewSummer(cksum.Inline, im)
			got.Start(4, s)
			fillRandom(got, seed, limit)
			grec := got.Seal(MakeLSN(4, 77), MakeLSN(3, 5), MakeLSN(4, 76), 40, s)
			if !bytes.Equal(grec, wrec) {
				t.Fatalf("%s coverage, %s logbsize %d seed %d: inline record (%d bytes) differs from batched (%d bytes)", cov, im.Name, size, seed, len(grec), len(wrec))
			}
			if _, err := DecodeRecord(append([]byte(nil), grec...), cov); err != nil {
				t.Fatalf("%s coverage, %s logbsize %d seed %d: %v", cov, im.Name, size, seed, err)
			}
			hsize := HeaderBlocks(size) * BBSize
			if st, n := s.Stats(), cov.CoveredBytes(hsize, len(grec)-hsize); st.Records != 1 || st.CopyBytes+st.Bytes != uint64(n) {
				t.Errorf("%s coverage, %s logbsize %d seed %d: %+v: copy + seal bytes should be the %d the CRC covers", cov, im.Name, size, seed, st, n)
			}
		}
	}
}

// Reusing an iclog for a shorter record leaves no saved word of the
// longer one in the cycle data: the record equals a fresh iclog's.
func TestInlineReuseClearsCycleData(t *testing.T) {
	for _, cov := range cksum.Coverages() {
		inlineReuse(t, cov)
	}
}

func inlineReuse(t *testing.T, cov Coverage) {
	s := newSummer(cksum.Inline)
	ic := mustIclogCov(t, 256<<10, cov)
	ic.Start(2, s)
	fillRandom(ic, 1, 1<<30)
	ic.Seal(MakeLSN(2, 0), MakeLSN(2, 0), 0, 0, s)
	ic.Start(3, s)
	fillRandom(ic, 2, 3000)
	got := ic.Seal(MakeLSN(3, 600), MakeLSN(2, 0), MakeLSN(3, 599), 0, s)

	fresh := mustIclogCov(t, 256<<10, cov)
	fresh.Start(3, s)
	fillRandom(fresh, 2, 3000)
	if want := fresh.Seal(MakeLSN(3, 600), MakeLSN(2, 0), MakeLSN(3, 599), 0, s); !bytes.Equal(got, want) {
		t.Errorf("%s coverage: a reused iclog's inline record differs from a fresh one's", cov)
	}
}

// Sealed at another cycle than it was started for, or by a Summer of
// another mode, an inline iclog still writes the right record.
func TestInlineSealedDifferently(t *testing.T) {
	for _, cov := range cksum.Coverages() {
		t.Run(cov.String(), func(t *testing.T) { inlineSealedDifferently(t, cov) })
	}
}

func inlineSealedDifferently(t *testing.T, cov Coverage) {
	ref := mustIclogCov(t, 64<<10, cov)
	fillRandom(ref, 3, 1<<30)
	want := ref.Seal(MakeLSN(9, 1), MakeLSN(9, 0), MakeLSN(9, 0), 0, newSummer(cksum.Batched))

	ic := mustIclogCov(t, 64<<10, cov)
	ic.Start(8, newSummer(cksum.Inline)) // wrong cycle
	fillRandom(ic, 3, 1<<30)
	if got := ic.Seal(MakeLSN(9, 1), MakeLSN(9, 0), MakeLSN(9, 0), 0, newSummer(cksum.Inline)); !bytes.Equal(got, want) {
		t.Error("inline iclog sealed at another cycle: wrong record")
	}
	ic.Start(9, newSummer(cksum.Inline))
	fillRandom(ic, 3, 1<<30)
	if got := ic.Seal(MakeLSN(9, 1), MakeLSN(9, 0), MakeLSN(9, 0), 0, newSummer(cksum.Sector)); !bytes.Equal(got, want) {
		t.Error("inline iclog sealed by a sector-mode Summer: wrong record")
	}
	ic.Reset() // Reset leaves inline mode: an inline Summer sums it whole
	fillRandom(ic, 3, 1<<30)
	s := newSummer(cksum.Inline)
	wantCalls := uint64(2) // header blocks, payload
	if cov == CoverXFS {
		wantCalls = uint64(2 + cksum.ExtHeaders(len(want)-2*BBSize)) // header regions, payload
	}
	if got := ic.Seal(MakeLSN(9, 1), MakeLSN(9, 0), MakeLSN(9, 0), 0, s); !bytes.Equal(got, want) || s.Stats().Calls != wantCalls || s.Stats().CopyCalls != 0 {
		t.Errorf("iclog Reset, sealed by an inline Summer: record right: %v, stats %+v", bytes.Equal(got, want), s.Stats())
	}
}

// A payload that ends 1-3 bytes into a block leaves that block's first
// word to the padding: it is stamped at seal, after the padding is in the
// payload's CRC. Every end offset around a block start, in every logbsize.
func TestInlineEveryEndAroundABlockStart(t *testing.T) {
	for _, cov := range cksum.Coverages() {
		inlineEveryEnd(t, cov)
	}
}

func inlineEveryEnd(t *testing.T, cov Coverage) {
	for _, size := range []int{32 << 10, 64 << 10} {
		for _, blocks := range []int{1, 2, 3, 64, 65} {
			for d := -5; d <= 5; d++ {
				end := blocks*BBSize + d // payload bytes: one op header + region
				region := make([]byte, end-OpHeaderSize)
				for i := range region {
					region[i] = byte(i*13 + d)
				}
				if end > size-HeaderBlocks(size)*BBSize {
					continue
				}
				ref := mustIclogCov(t, size, cov)
				ref.AppendOp(3, ClientTransaction, 0, region, false)
				want := ref.Seal(MakeLSN(6, 10), MakeLSN(6, 0), MakeLSN(6, 9), 0, newSummer(cksum.Batched))

				s := newSummer(cksum.Inline)
				ic := mustIclogCov(t, size, cov)
				ic.Start(6, s)
				ic.AppendOp(3, ClientTransaction, 0, region, false)
				if got := ic.Seal(MakeLSN(6, 10), MakeLSN(6, 0), MakeLSN(6, 9), 0, s); !bytes.Equal(got, want) {
					t.Errorf("%s coverage, logbsize %d, payload of %d bytes (%+d from a block start): inline record differs from batched", cov, size, end, d)
				}
			}
		}
	}
}

// Every mode counts its copy: inline mode's in the checksum's copy-time
// counters (CopyUpdate), the others' in the Plain ones, every region byte
// once, so CopyCksumNanos covers the same work in every mode.
func TestCopyCountedInEveryMode(t *testing.T) {
	for _, m := range cksum.Modes() {
		s := newSummer(m)
		ic := mustIclog(t, 32<<10)
		ic.Start(4, s)
		region := make([]byte, 5000)
		n := 0
		for range 3 {
			n += ic.AppendOp(1, ClientTransaction, 0, region, false)
		}
		ic.Seal(MakeLSN(4, 8), MakeLSN(4, 0), 0, 0, s)
		st := s.Stats()
		if m == cksum.Inline {
			if st.PlainOps != 0 || st.CopyBytes != uint64(n+3*OpHeaderSize) {
				t.Errorf("inline: %+v: want no plain copies and %d bytes copied with the checksum", st, n+3*OpHeaderSize)
			}
		} else if st.PlainOps != 3 || st.PlainBytes != uint64(n) || st.CopyBytes != 0 {
			t.Errorf("%s: %+v: want 3 plain copies of %d bytes in all, none with the checksum", m, st, n)
		}
		if st.CopyCksumNanos() != st.Nanos+st.CopyNanos+st.PlainNanos {
			t.Errorf("%s: CopyCksumNanos %d, want %d", m, st.CopyCksumNanos(), st.Nanos+st.CopyNanos+st.PlainNanos)
		}
	}
}
