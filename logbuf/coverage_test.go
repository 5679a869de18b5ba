package logbuf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/cksum"
)

// crc32cTable is the byte table of Linux's crc32c_le (reflected
// Castagnoli, polynomial 0x82F63B78), built here from the polynomial so that
// the transcription below depends on neither package cksum nor hash/crc32.
var crc32cTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i)
		for range 8 {
			c = c>>1 ^ 0x82F63B78&-(c&1)
		}
		t[i] = c
	}
	return t
}()

// linuxCRC32C is the kernel's crc32c(seed, p, len): no inversion in or out.
func linuxCRC32C(crc uint32, p []byte) uint32 {
	for _, b := range p {
		crc = crc32cTable[byte(crc)^b] ^ crc>>8
	}
	return crc
}

// xlogCksum transcribes XFS's xlog_cksum (fs/xfs/xfs_log.c, 6.x) over a
// record as xlogfs lays it out: rhead is the record's first header block,
// the extension headers follow it block by block, data is the payload and
// size h_len. It returns the CRC as stored (xfs_end_cksum: inverted, then
// little-endian on disk), and the calls and bytes it handed crc32c.
func xlogCksum(rec []byte, hdrLen, size int) (crc uint32, calls, n int) {
	call := func(c uint32, p []byte) uint32 { calls++; n += len(p); return linuxCRC32C(c, p) }
	const xlogRecSize, xlogRecExtSize, cycleSize = 328, 260, 32 << 10
	rhead := bytes.Clone(rec[:xlogRecSize])
	clear(rhead[32:36]) // xfs_start_cksum_update: h_crc zeroed, one call
	crc = call(^uint32(0), rhead)
	xheads := (size+cycleSize-1)/cycleSize - 1 // DIV_ROUND_UP(size, XLOG_HEADER_CYCLE_SIZE) - 1
	for i := 0; i < xheads; i++ {
		crc = call(crc, rec[BBSize*(i+1):][:xlogRecExtSize]) // &rhead->h_ext[i]
	}
	crc = call(crc, rec[hdrLen:hdrLen+size])
	return ^crc, calls, n
}

// The goal: a record sealed under xfs coverage has xlog_cksum's CRC
// for its h_len, for every h_len (512 bytes to the iclog's capacity, in
// 512-byte steps) and every logbsize, whatever mode sealed it; and the xfs
// mode's crc32c calls and bytes for it, as its Summer counts them, are
// xlog_cksum's. The other modes' bytes are the same; batched makes xfs's
// calls (its regions are not contiguous), inline makes the header's at seal
// after the payload's at copy time.
func TestXFSCoverageIsXlogCksum(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 1))
	src := make([]byte, MaxLogBSize)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	for size := MinLogBSize; size <= MaxLogBSize; size *= 2 {
		hdrLen := HeaderBlocks(size) * BBSize
		ics := map[cksum.Mode]*Iclog{}
		for _, m := range cksum.Modes() {
			ics[m] = mustIclogCov(t, size, CoverXFS)
		}
		for hlen := BBSize; hlen <= size-hdrLen; hlen += BBSize {
			// One op whose end leaves 0 to 511 bytes of padding.
			region := src[:hlen-OpHeaderSize-r.IntN(min(BBSize, hlen-OpHeaderSize+1))]
			var first []byte
			for _, m := range cksum.Modes() {
				ic, s := ics[m], newSummer(m)
				ic.Start(5, s)
				ic.AppendOp(9, ClientTransaction, 0, region, false)
				rec := ic.Seal(MakeLSN(5, 321), MakeLSN(4, 7), MakeLSN(5, 300), 200, s)
				if len(rec) != hdrLen+hlen {
					t.Fatalf("logbsize %d: a region of %d bytes made a record of %d bytes, want h_len %d", size, len(region), len(rec), hlen)
				}
				want, calls, n := xlogCksum(rec, hdrLen, hlen)
				if got := binary.LittleEndian.Uint32(rec[offCRC:]); got != want {
					t.Fatalf("logbsize %d, h_len %d, %s mode: h_crc %#08x, xlog_cksum %#08x", size, hlen, m, got, want)
				}
				st := s.Stats()
				if m == cksum.XFS && (st.Calls != uint64(calls) || st.Bytes != uint64(n) || st.CopyCalls != 0) {
					t.Fatalf("logbsize %d, h_len %d: the xfs mode made %d crc32c calls over %d bytes (and %d at copy time); xlog_cksum makes %d over %d",
						size, hlen, st.Calls, st.Bytes, st.CopyCalls, calls, n)
				}
				if st.TotalBytes() != uint64(n) || m == cksum.Batched && st.Calls != uint64(calls) {
					t.Fatalf("logbsize %d, h_len %d, %s mode: %d calls over %d bytes, want %d bytes (batched: %d calls)", size, hlen, m, st.TotalCalls(), st.TotalBytes(), n, calls)
				}
				if m == cksum.Inline && st.Calls != uint64(calls-1+min(1, hlen-OpHeaderSize-len(region))) {
					t.Fatalf("logbsize %d, h_len %d: inline mode made %d calls at seal, want the %d header regions' and one for any padding", size, hlen, st.Calls, calls-1)
				}
				if first == nil {
					first = bytes.Clone(rec)
				} else if !bytes.Equal(rec, first) {
					t.Fatalf("logbsize %d, h_len %d: %s mode wrote other bytes than %s", size, hlen, m, cksum.Modes()[0])
				}
				if _, err := DecodeRecord(rec, CoverXFS); err != nil {
					t.Fatalf("logbsize %d, h_len %d, %s mode: %v", size, hlen, m, err)
				}
			}
		}
	}
}

// Under xfs coverage the bytes the CRC leaves out are checked instead, as
// the package documentation says: the watermark against its complement,
// the reserved bytes and extension headers past h_len's needs zero, and the
// latter carrying the record's cycle. A cycle word is restored by Restamp
// like any other. Under whole coverage the same damage is a CRC mismatch.
func TestXFSCoverageUncovered(t *testing.T) {
	// 256 KiB iclog, 40 KiB of payload: extension header 1 is covered,
	// 2 to 7 are not.
	rec, region := sealRecordCov(t, 256<<10, 40000, cksum.XFS, CoverXFS, 8)
	mustDecode(t, rec, region, CoverXFS)
	if got := be.Uint64(rec[offDurableX:]); got != ^uint64(MakeLSN(3, 40)) {
		t.Fatalf("complement of the watermark at %d: %#x, want %#x", offDurableX, got, ^uint64(MakeLSN(3, 40)))
	}
	h, err := ParseHeader(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		off  int
		x    byte
		want string // in VerifyRecord's error
	}{
		{"watermark", offDurable + 7, 0x01, "durable watermark 3,41"},
		{"watermark's complement", offDurableX + 2, 0x80, "disagrees with its complement"},
		{"h_reserved", 400, 0x10, "reserved byte 400 of the record header"},
		{"last byte of h_reserved", 511, 0x01, "reserved byte 511"},
		{"xh_reserved of a covered extension header", BBSize + 300, 0x01, "byte 300 of extension header block 1"},
		{"cycle data of an uncovered extension header", 2*BBSize + 4, 0x01, "byte 4 of extension header block 2"},
		{"xh_reserved of the last extension header", 7*BBSize + 511, 0x02, "byte 511 of extension header block 7"},
		{"cycle of an uncovered extension header", 5*BBSize + 3, 0x04, "extension header block 5 (not covered by the CRC) carries cycle 7"},
	} {
		bad := cp2(rec)
		bad[c.off] ^= c.x
		_, crc, err := VerifyRecord(bad, CoverXFS)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "record 3,64") {
			t.Errorf("%s (byte %d) damaged: %v, want an error naming record 3,64 and saying %q", c.name, c.off, err, c.want)
		}
		if crc != h.CRC {
			t.Errorf("%s damaged: computed CRC %#08x, want the stored %#08x: the byte is not covered", c.name, crc, h.CRC)
		}
	}
	// An uncovered extension header's cycle word is a cycle word: damaged,
	// or the whole block left from an earlier cycle (a torn write that
	// missed it), Restamp restores the record exactly.
	for _, old := range [][]byte{nil, func() []byte { b := make([]byte, BBSize); be.PutUint32(b, 2); return b }(), make([]byte, BBSize)} {
		bad := cp2(rec)
		if old == nil {
			bad[6*BBSize+1] ^= 0x20
		} else {
			copy(bad[6*BBSize:], old)
		}
		if u := Uncarried(bad, h); len(u) != 1 || u[0] != 6 {
			t.Fatalf("uncarried blocks %v, want [6]", u)
		}
		if _, _, err := VerifyRecord(bad, CoverXFS); err == nil {
			t.Fatal("a record with an extension header not carrying its cycle verifies")
		}
		if n, err := Restamp(bad, h.LSN); n != 1 || err != nil {
			t.Fatalf("Restamp: %d, %v", n, err)
		}
		if !bytes.Equal(bad, rec) {
			t.Fatal("restamped record differs from the sealed one")
		}
	}
	// An uncovered block holding something else is not restored.
	bad := cp2(rec)
	copy(bad[6*BBSize:], rec[30*BBSize:31*BBSize])
	Restamp(bad, h.LSN)
	if _, _, err := VerifyRecord(bad, CoverXFS); err == nil {
		t.Fatal("a record whose uncovered extension header holds a payload block verifies")
	}
	// Whole coverage: the same bytes are covered by the CRC.
	whole, _ := sealRecordCov(t, 256<<10, 40000, cksum.XFS, CoverWhole, 8)
	if !bytes.Equal(whole[offDurableX:offDurableX+8], make([]byte, 8)) {
		t.Error("whole coverage writes a complement of the watermark: its records are no longer those of older stores")
	}
	for _, off := range []int{offDurable + 7, 400, BBSize + 300, 5*BBSize + 3, 7*BBSize + 511} {
		bad := cp2(whole)
		bad[off] ^= 1
		var ce *CRCError
		if _, _, err := VerifyRecord(bad, CoverWhole); !errors.As(err, &ce) {
			t.Errorf("whole coverage, byte %d damaged: %v, want a CRC mismatch", off, err)
		}
	}
}

// The header is written as under whole coverage but for the watermark's
// complement, and with xlog_cksum's CRC: record header to h_pad0, the
// extension header the payload needs (xh_cycle, xh_cycle_data), payload.
func TestXFSCoverageHeaderFields(t *testing.T) {
	for _, durable := range []LSN{0, MakeLSN(7, 1000)} {
		whole := mustIclogCov(t, 64<<10, CoverWhole)
		xfs := mustIclogCov(t, 64<<10, CoverXFS)
		region := bytes.Repeat([]byte{0xa5}, 40000)
		whole.AppendOp(1, ClientTransaction, 0, region, false)
		xfs.AppendOp(1, ClientTransaction, 0, region, false)
		w := whole.Seal(MakeLSN(7, 1234), MakeLSN(6, 99), durable, 1100, newSummer(cksum.Batched))
		x := xfs.Seal(MakeLSN(7, 1234), MakeLSN(6, 99), durable, 1100, newSummer(cksum.Batched))
		if be.Uint64(x[336:]) != ^uint64(durable) {
			t.Errorf("durable %v: bytes 336..343 are %#x, want its complement", durable, be.Uint64(x[336:]))
		}
		// Every other byte is the same, h_crc aside.
		diff := []int{}
		for i := range w {
			if w[i] != x[i] && (i < 32 || i >= 36) && (i < 336 || i >= 344) {
				diff = append(diff, i)
			}
		}
		if len(diff) > 0 || len(w) != len(x) {
			t.Errorf("durable %v: the coverages' records differ at %v", durable, diff)
		}
		want, _, _ := xlogCksum(x, 2*BBSize, len(x)-2*BBSize)
		if got := binary.LittleEndian.Uint32(x[32:]); got != want || xfs.Coverage() != CoverXFS {
			t.Errorf("durable %v: h_crc %#08x, xlog_cksum %#08x", durable, got, want)
		}
	}
	if _, err := NewIclog(32<<10, testUUID, 2); err == nil || !strings.Contains(err.Error(), "coverage") {
		t.Errorf("NewIclog with coverage 2: %v", err)
	}
}
