package cksum

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// xlogCksumShape is XFS's xlog_cksum (fs/xfs/xfs_log.c) reduced to its
// arithmetic, written out here as the kernel states it and not from
// Coverage: the record header up to h_pad0 (XLOG_REC_SIZE, 328 bytes), then
// for a v2 log the extension headers i = 1 .. xheads-1, xheads being h_len
// over XLOG_HEADER_CYCLE_SIZE rounded up (the 5.x form; 6.x writes it
// DIV_ROUND_UP(h_len, 32K) - 1 and loops from 0), sizeof(struct
// xlog_rec_ext_header) = 260 bytes each, then the h_len bytes of payload.
// It returns the regions in the order xlog_cksum hands them to crc32c.
func xlogCksumShape(rec []byte, hdrLen, size int) [][]byte {
	regions := [][]byte{rec[:328]}
	xheads := size / (32 * 1024)
	if size%(32*1024) != 0 {
		xheads++
	}
	for i := 1; i < xheads; i++ {
		regions = append(regions, rec[i*512:i*512+260])
	}
	return append(regions, rec[hdrLen:hdrLen+size])
}

// counter is an update function that counts its calls and bytes.
type counter struct{ calls, bytes int }

func (c *counter) update(crc uint32, p []byte) uint32 {
	c.calls++
	c.bytes += len(p)
	return oracle(crc, p)
}

// The xfs mode under xfs coverage is xlog_cksum: for every h_len a record
// of every logbsize can have (512 bytes to the iclog's capacity, in 512-byte
// steps), the same crc32c calls, over the same bytes in the same order, so
// the same CRC; and the count it reports is the count it made. Every other
// mode gives the same CRC over the same bytes, batched in as many calls as
// xfs (its regions are not contiguous).
func TestXFSModeIsXlogCksum(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 3))
	buf := randBytes(r, 256<<10)
	for logbsize := 32 << 10; logbsize <= 256<<10; logbsize *= 2 {
		hdrLen := logbsize / (32 << 10) * BlockSize
		for size := BlockSize; size <= logbsize-hdrLen; size += BlockSize {
			rec := buf[:hdrLen+size]
			var want uint32
			wantBytes := 0
			shape := xlogCksumShape(rec, hdrLen, size)
			for _, p := range shape {
				want = oracle(want, p)
				wantBytes += len(p)
			}
			var c counter
			crc, calls, n := SumCovered(XFS, CoverXFS, c.update, rec, hdrLen)
			if crc != want || c.calls != len(shape) || c.bytes != wantBytes || calls != c.calls || n != c.bytes {
				t.Fatalf("logbsize %d, h_len %d: xfs mode made %d calls over %d bytes (reported %d, %d), crc %#08x; xlog_cksum makes %d over %d, crc %#08x",
					logbsize, size, c.calls, c.bytes, calls, n, crc, len(shape), wantBytes, want)
			}
			if got := CoverXFS.CoveredBytes(hdrLen, size); got != wantBytes {
				t.Fatalf("logbsize %d, h_len %d: CoveredBytes %d, want %d", logbsize, size, got, wantBytes)
			}
			for _, m := range Modes() {
				var mc counter
				crc, calls, n := SumCovered(m, CoverXFS, mc.update, rec, hdrLen)
				if crc != want || mc.bytes != wantBytes || calls != mc.calls || n != wantBytes || m == Batched && calls != len(shape) {
					t.Fatalf("logbsize %d, h_len %d, %s mode: crc %#08x in %d calls over %d bytes (reported %d, %d), want %#08x over %d",
						logbsize, size, m, crc, mc.calls, mc.bytes, calls, n, want, wantBytes)
				}
			}
		}
	}
}

// Every mode computes the same CRC under each coverage, that of the bytes
// the coverage covers, in the number of calls its documentation gives.
func TestModesAgreeCovered(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, hblks := range []int{1, 2, 4, 8} {
		for _, payload := range []int{0, 512, 4096, 32768 - 512, 32768, 32768 + 512, 65536, 32768*hblks - 512*hblks} {
			if payload > 32768*hblks-512*hblks {
				continue
			}
			hdrLen := hblks * BlockSize
			rec := randBytes(r, hdrLen+payload)
			for _, cov := range Coverages() {
				var covered []byte
				if cov == CoverWhole {
					covered = rec
				} else {
					for _, p := range xlogCksumShape(rec, hdrLen, payload) {
						covered = append(covered, p...)
					}
				}
				want := oracle(0, covered)
				regions := len(cov.Regions(nil, rec, hdrLen))
				for _, m := range Modes() {
					got, calls, n := SumCovered(m, cov, Best().Update, rec, hdrLen)
					if got != want || n != len(covered) {
						t.Errorf("%s coverage, %s hblks %d payload %d: crc %#08x over %d bytes, want %#08x over %d", cov, m, hblks, payload, got, n, want, len(covered))
					}
					wantCalls := regions // one per region: header blocks or parts, payload
					switch {
					case m == Batched && cov == CoverWhole:
						wantCalls = 1
					case m == Inline && cov == CoverWhole:
						wantCalls = 2 // header blocks, payload
					case m == Sector && cov == CoverWhole:
						wantCalls = len(rec) / BlockSize
					case m == Sector:
						wantCalls = regions - 1 + payload/BlockSize // each header part is under a block
					}
					if calls != wantCalls {
						t.Errorf("%s coverage, %s hblks %d payload %d: %d calls, want %d", cov, m, hblks, payload, calls, wantCalls)
					}
				}
			}
		}
	}
}

// Summer counts what a record's checksum covered under its coverage.
func TestSummerCountsCovered(t *testing.T) {
	rec := make([]byte, 8*BlockSize+200*BlockSize) // 3 extension headers needed
	s := NewSummer(XFS, Best())
	var seen []Cost
	s.Observe(func(c Cost) { seen = append(seen, c) })
	s.RecordCovered(rec, 8*BlockSize, CoverXFS)
	s.PackRecord(rec, 8*BlockSize, CoverXFS, func() {})
	wantBytes := 328 + 3*260 + 200*BlockSize
	if st := s.Stats(); st.Records != 2 || st.Calls != 2*5 || st.Bytes != uint64(2*wantBytes) {
		t.Errorf("stats %+v, want 2 records, 10 calls, %d bytes", st, 2*wantBytes)
	}
	if len(seen) != 2 || seen[0].Calls != 5 || seen[0].Bytes != wantBytes || seen[1] != (Cost{Calls: 5, Bytes: wantBytes, CPU: seen[1].CPU, Wall: seen[1].Wall, Timed: seen[1].Timed}) {
		t.Errorf("observed %+v, want two records of 5 calls over %d bytes", seen, wantBytes)
	}
}

func TestParseCoverage(t *testing.T) {
	for _, c := range Coverages() {
		if got, err := ParseCoverage(c.String()); err != nil || got != c || !c.Valid() {
			t.Errorf("ParseCoverage(%q) = %v, %v", c, got, err)
		}
	}
	if !slices.Equal(Coverages(), []Coverage{CoverWhole, CoverXFS}) || CoverWhole != 0 {
		t.Errorf("Coverages() = %v, want whole (zero: stores made before coverage) and xfs", Coverages())
	}
	if _, err := ParseCoverage("batched"); err == nil {
		t.Error("ParseCoverage(batched) succeeded")
	}
	if Coverage(2).Valid() || Coverage(2).String() != "Coverage(2)" {
		t.Errorf("Coverage(2): valid %v, %q", Coverage(2).Valid(), Coverage(2))
	}
}
