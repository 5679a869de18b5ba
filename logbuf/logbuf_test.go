package logbuf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/cksum"
)

var testUUID = [16]byte{0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 1, 2, 3, 4, 5, 6, 7, 8}

func newSummer(m cksum.Mode) *cksum.Summer { return cksum.NewSummer(m, cksum.Best()) }

func mustIclog(t testing.TB, size int) *Iclog { return mustIclogCov(t, size, CoverWhole) }

func mustIclogCov(t testing.TB, size int, cov Coverage) *Iclog {
	t.Helper()
	ic, err := NewIclog(size, testUUID, cov)
	if err != nil {
		t.Fatal(err)
	}
	return ic
}

func u32be(b []byte, off int) uint32 { return binary.BigEndian.Uint32(b[off:]) }

// TestHeaderFieldOffsets checks every field of xlog_rec_header and
// xlog_rec_ext_header at the byte offsets of the package documentation.
func TestHeaderFieldOffsets(t *testing.T) {
	ic := mustIclog(t, 64<<10) // two header blocks: record + one extension
	region := make([]byte, 40000)
	for i := range region {
		region[i] = byte(i*7 + 1)
	}
	// 40012 bytes of payload are 79 blocks: more than the 64 the record
	// header's cycle data holds, so the extension header's is used too.
	ic.AppendOp(0xdeadbeef, ClientTransaction, 0, region, false)
	lsn := MakeLSN(7, 1234)
	tail := MakeLSN(6, 99)
	durable := MakeLSN(7, 1000)
	rec := ic.Seal(lsn, tail, durable, 1100, newSummer(cksum.Batched))
	h := rec[:512]
	plen := len(rec) - 1024
	if plen != 79*512 {
		t.Fatalf("payload of %d bytes, want %d", plen, 79*512)
	}

	checks := []struct {
		name string
		off  int
		want []byte
	}{
		{"h_magicno", 0, []byte{0xfe, 0xed, 0xba, 0xbe}},
		{"h_cycle", 4, []byte{0, 0, 0, 7}},
		{"h_version", 8, []byte{0, 0, 0, 2}},
		{"h_len", 12, binary.BigEndian.AppendUint32(nil, uint32(plen))},
		{"h_lsn", 16, []byte{0, 0, 0, 7, 0, 0, 0x04, 0xd2}},
		{"h_tail_lsn", 24, []byte{0, 0, 0, 6, 0, 0, 0, 99}},
		{"h_prev_block", 36, []byte{0, 0, 0x04, 0x4c}},
		{"h_num_logops", 40, []byte{0, 0, 0, 1}},
		{"h_fmt", 300, []byte{0, 0, 0, 1}},
		{"h_fs_uuid", 304, testUUID[:]},
		{"h_size", 320, []byte{0, 1, 0, 0}},
		{"h_pad0", 324, make([]byte, 4)},
		{"h_durable_lsn", 328, []byte{0, 0, 0, 7, 0, 0, 0x03, 0xe8}},
		{"reserved", 336, make([]byte, 176)},
	}
	for _, c := range checks {
		if got := h[c.off : c.off+len(c.want)]; !bytes.Equal(got, c.want) {
			t.Errorf("%s at %d: % x, want % x", c.name, c.off, got, c.want)
		}
	}
	// h_crc is little-endian at 32 and is the CRC of the record with it zeroed.
	stored := binary.LittleEndian.Uint32(h[32:])
	cp := append([]byte(nil), rec...)
	clear(cp[32:36])
	if want := cksum.Checksum(cp); stored != want {
		t.Errorf("h_crc at 32 (LE) = %#08x, want %#08x", stored, want)
	}

	// The payload as written before stamping: op header, region, padding.
	unstamped := make([]byte, plen)
	binary.BigEndian.PutUint32(unstamped[0:], 0xdeadbeef)
	binary.BigEndian.PutUint32(unstamped[4:], uint32(len(region)))
	unstamped[8] = ClientTransaction
	copy(unstamped[12:], region)
	for i := range plen / 512 {
		// Each payload block starts with the cycle; its own first word is
		// saved in h_cycle_data[i] at 44+4i, or xh_cycle_data[i-64] at 4+4k
		// of the extension header.
		if got := u32be(rec, 1024+512*i); got != 7 {
			t.Fatalf("payload block %d first word = %d, want cycle 7", i, got)
		}
		saved := u32be(h, 44+4*i)
		if i >= 64 {
			saved = u32be(rec, 512+4+4*(i-64))
		}
		if want := u32be(unstamped, 512*i); saved != want {
			t.Fatalf("saved first word of payload block %d = %#x, want %#x", i, saved, want)
		}
	}
	x := rec[512:1024]
	if got := u32be(x, 0); got != 7 {
		t.Errorf("xh_cycle at 0 = %d, want 7", got)
	}
	if !bytes.Equal(x[260:], make([]byte, 252)) {
		t.Error("xh_reserved (260..511) is not zero")
	}
	// Unpacking restores the payload exactly.
	r, err := DecodeRecord(cp2(rec), CoverWhole)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.Ops[0].Data, region) {
		t.Error("region does not survive pack/unpack")
	}
}

func cp2(b []byte) []byte { return append([]byte(nil), b...) }

// sealRecord fills an iclog of size with a transaction's ops and seals it.
func sealRecord(t testing.TB, size, payload int, m cksum.Mode, seed uint64) ([]byte, []byte) {
	return sealRecordCov(t, size, payload, m, CoverWhole, seed)
}

// sealRecordCov is sealRecord under coverage cov.
func sealRecordCov(t testing.TB, size, payload int, m cksum.Mode, cov Coverage, seed uint64) ([]byte, []byte) {
	ic := mustIclogCov(t, size, cov)
	s := newSummer(m)
	ic.Start(3, s)
	r := rand.New(rand.NewPCG(seed, 1))
	region := make([]byte, payload)
	for i := range region {
		region[i] = byte(r.Uint32())
	}
	if payload >= 0 && ic.Free() >= OpHeaderSize {
		ic.AppendOp(1, ClientTransaction, 0, region, false)
	}
	return ic.Seal(MakeLSN(3, 64), MakeLSN(3, 0), MakeLSN(3, 40), 0, s), region
}

func TestRoundTripEverySizeAndFill(t *testing.T) {
	for _, size := range []int{32 << 10, 64 << 10, 128 << 10, 256 << 10} {
		ic := mustIclog(t, size)
		capacity := ic.Capacity()
		for _, fill := range []int{0, 1, 11, 12, 500, 511, 512, 4096, capacity / 2, capacity - OpHeaderSize - 1, capacity - OpHeaderSize} {
			for _, m := range cksum.Modes() {
				for _, cov := range cksum.Coverages() {
					t.Run(fmt.Sprintf("%dK/%d/%s/%s", size>>10, fill, m, cov), func(t *testing.T) {
						roundTrip(t, size, fill, m, cov)
					})
				}
			}
		}
	}
}

func roundTrip(t *testing.T, size, fill int, m cksum.Mode, cov Coverage) {
	rec, region := sealRecordCov(t, size, fill, m, cov, uint64(fill))
	if len(rec)%BBSize != 0 {
		t.Fatalf("record of %d bytes is not whole blocks", len(rec))
	}
	r, err := DecodeRecord(append([]byte(nil), rec...), cov)
	if err != nil {
		t.Fatal(err)
	}
	if r.LSN != MakeLSN(3, 64) || r.TailLSN != MakeLSN(3, 0) || r.Durable != MakeLSN(3, 40) || r.Size != uint32(size) || r.UUID != testUUID {
		t.Errorf("header = %+v", r.Header)
	}
	if len(r.Ops) != 1 || r.Ops[0].TID != 1 || !bytes.Equal(r.Ops[0].Data, region) {
		t.Fatalf("ops do not round-trip: %d ops", len(r.Ops))
	}
	// A record verifies under its own coverage only.
	other := CoverWhole + CoverXFS - cov
	if _, _, err := VerifyRecord(rec, other); err == nil {
		t.Fatalf("a record sealed under %s coverage verifies under %s", cov, other)
	}
}

// TestSplitAcrossRecords writes regions bigger than an iclog, as a 1 MiB
// data-journal write does, and reassembles the transaction.
func TestSplitAcrossRecords(t *testing.T) {
	for _, c := range []struct {
		size int
		mode cksum.Mode
		cov  Coverage
	}{{32 << 10, cksum.XFS, CoverWhole}, {256 << 10, cksum.XFS, CoverWhole}, {32 << 10, cksum.Inline, CoverWhole}, {256 << 10, cksum.Inline, CoverWhole},
		{32 << 10, cksum.XFS, CoverXFS}, {256 << 10, cksum.XFS, CoverXFS}, {64 << 10, cksum.Inline, CoverXFS}, {256 << 10, cksum.Inline, CoverXFS},
		{128 << 10, cksum.Batched, CoverXFS}, {256 << 10, cksum.Sector, CoverXFS}} {
		size := c.size
		r := rand.New(rand.NewPCG(9, uint64(size)))
		regions := [][]byte{make([]byte, 100), make([]byte, 1<<20), make([]byte, 0), make([]byte, 70000)}
		for _, reg := range regions {
			for i := range reg {
				reg[i] = byte(r.Uint32())
			}
		}
		var recs [][]byte
		ic := mustIclogCov(t, size, c.cov)
		sum := newSummer(c.mode)
		ic.Start(1, sum)
		block := uint32(0)
		flush := func() {
			rec := ic.Seal(MakeLSN(1, block), MakeLSN(1, 0), 0, 0, sum)
			recs = append(recs, append([]byte(nil), rec...))
			block += uint32(len(rec) / BBSize)
			ic.Start(1, sum)
		}
		write := func(flags uint8, data []byte) {
			cont := false
			for {
				if ic.Free() < 2*OpHeaderSize {
					flush()
				}
				n := ic.AppendOp(42, ClientTransaction, flags, data, cont)
				data = data[n:]
				if len(data) == 0 && (n > 0 || !cont) {
					return
				}
				cont = true
				flush()
			}
		}
		write(FlagStart, nil)
		for _, reg := range regions {
			write(0, reg)
		}
		write(FlagCommit, nil)
		flush()
		if len(recs) < 4 {
			t.Fatalf("expected the 1 MiB region to span several records, got %d", len(recs))
		}
		var ra Reassembler
		var got []Transaction
		for _, rec := range recs {
			dr, err := DecodeRecord(rec, c.cov)
			if err != nil {
				t.Fatal(err)
			}
			txs, err := ra.Add(dr.LSN, dr.Ops)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, txs...)
		}
		if len(got) != 1 || ra.Pending() != 0 {
			t.Fatalf("got %d transactions, %d pending", len(got), ra.Pending())
		}
		if len(got[0].Regions) != len(regions) {
			t.Fatalf("got %d regions, want %d", len(got[0].Regions), len(regions))
		}
		for i := range regions {
			if !bytes.Equal(got[0].Regions[i], regions[i]) {
				t.Errorf("logbsize %d %s, %s coverage: region %d (%d bytes) does not round-trip (%d bytes)", size, c.mode, c.cov, i, len(regions[i]), len(got[0].Regions[i]))
			}
		}
	}
}

func TestModesGiveTheSameRecord(t *testing.T) {
	for _, cov := range cksum.Coverages() {
		for _, size := range []int{32 << 10, 256 << 10} {
			var first []byte
			for _, m := range cksum.Modes() {
				s := newSummer(m)
				ic := mustIclogCov(t, size, cov)
				ic.Start(2, s)
				region := bytes.Repeat([]byte("xlogfs"), ic.Capacity()/6-3)
				ic.AppendOp(5, ClientTransaction, 0, region, false)
				rec := ic.Seal(MakeLSN(2, 10), MakeLSN(2, 0), MakeLSN(2, 0), 0, s)
				if first == nil {
					first = append([]byte(nil), rec...)
				} else if !bytes.Equal(first, rec) {
					t.Errorf("%s coverage, logbsize %d: mode %s writes different bytes (CRC %#x vs %#x)", cov, size, m,
						binary.LittleEndian.Uint32(rec[32:]), binary.LittleEndian.Uint32(first[32:]))
				}
				hblks := HeaderBlocks(size)
				plen := len(rec) - hblks*BBSize
				xheads := (plen+HeaderCycleSize-1)/HeaderCycleSize - 1 // every extension header but the last is needed
				var want uint64
				switch {
				case m == cksum.Batched && cov == CoverWhole:
					want = 1
				case m == cksum.Batched || m == cksum.XFS:
					want = uint64(2 + hblks - 1) // header, extension headers, payload
					if cov == CoverXFS {
						want = uint64(2 + xheads)
					}
				case m == cksum.Sector && cov == CoverWhole:
					want = uint64(len(rec) / BBSize)
				case m == cksum.Sector:
					want = uint64(1 + xheads + plen/BBSize) // 328 and 260 bytes are one piece each
				case m == cksum.Inline:
					want = 2 // header blocks, and the padding after the op
					if cov == CoverXFS {
						want = uint64(1 + xheads + 1)
					}
					if got := s.Stats().CopyCalls; got != 2 {
						t.Errorf("%s coverage, logbsize %d mode %s: %d crc calls at copy, want 2 (op header, region)", cov, size, m, got)
					}
				}
				if got := s.Stats().Calls; got != want {
					t.Errorf("%s coverage, logbsize %d mode %s: %d crc calls, want %d", cov, size, m, got, want)
				}
			}
		}
	}
}

// TestEveryBitFlipDetected flips each bit of a 32 KiB record in turn: under
// whole coverage every bit is covered by the CRC; under xfs coverage the
// bytes it leaves out are checked instead (the watermark's complement, the
// zero reserved bytes). The record must decode before any flip, or a
// decoder that rejects everything would pass.
func TestEveryBitFlipDetected(t *testing.T) {
	for _, cov := range cksum.Coverages() {
		rec, region := sealRecordCov(t, 32<<10, 32<<10-512-OpHeaderSize, cksum.Batched, cov, 11)
		mustDecode(t, rec, region, cov)
		buf := make([]byte, len(rec))
		for i := range len(rec) * 8 {
			copy(buf, rec)
			buf[i/8] ^= 1 << (i % 8)
			if _, err := DecodeRecord(buf, cov); err == nil {
				t.Fatalf("%s coverage: flip of bit %d (byte %d) not detected", cov, i%8, i/8)
			}
		}
		// and a sample across the largest record, including its
		// extension headers: those past what h_len needs too, under xfs
		// coverage
		for _, plen := range []int{200000, 70000} {
			rec, region = sealRecordCov(t, 256<<10, plen, cksum.Sector, cov, 12)
			mustDecode(t, rec, region, cov)
			buf = make([]byte, len(rec))
			r := rand.New(rand.NewPCG(1, uint64(plen)))
			for range 20000 {
				i := r.IntN(len(rec) * 8)
				if i%4 == 0 {
					i = r.IntN(8 * 512 * 8) // the header blocks, more often
				}
				copy(buf, rec)
				buf[i/8] ^= 1 << (i % 8)
				_, err := DecodeRecord(buf, cov)
				if err == nil {
					t.Fatalf("%s coverage, 256K record: flip of bit %d not detected", cov, i)
				}
				var ce *CRCError
				if i/8 >= 512 && covered(rec, i/8, cov) && !errors.As(err, &ce) {
					t.Fatalf("%s coverage, 256K record: flip at byte %d gave %v, want a CRC error", cov, i/8, err)
				}
			}
		}
	}
}

// covered reports whether byte off of the record rec is in the CRC under
// cov (the cycle word of an extension header after the covered ones is
// not, and is checked as a cycle word).
func covered(rec []byte, off int, cov Coverage) bool {
	if cov == CoverWhole {
		return true
	}
	h, _ := ParseHeader(rec)
	hsize := h.HeaderBytes()
	if off >= hsize {
		return true
	}
	blk, in := off/BBSize, off%BBSize
	if blk == 0 {
		return in < 328
	}
	return blk <= (int(h.Len)+HeaderCycleSize-1)/HeaderCycleSize-1 && in < 260
}

// mustDecode fails the test unless rec decodes under cov to one op holding
// region.
func mustDecode(t *testing.T, rec, region []byte, cov Coverage) {
	t.Helper()
	r, err := DecodeRecord(cp2(rec), cov)
	if err != nil {
		t.Fatalf("the unflipped record does not decode: %v", err)
	}
	if len(r.Ops) != 1 || !bytes.Equal(r.Ops[0].Data, region) {
		t.Fatalf("the unflipped record decodes to %d ops, not the region", len(r.Ops))
	}
}

// TestCycleEvidence checks what recovery reads to tell a torn record from
// a damaged one: which blocks do not carry the record's cycle, and the
// repairs (cycle words, one bit of h_len) under which a damaged record
// verifies, proving every block was written.
func TestCycleEvidence(t *testing.T) {
	for _, cov := range cksum.Coverages() {
		t.Run(cov.String(), func(t *testing.T) { cycleEvidence(t, cov) })
	}
}

func cycleEvidence(t *testing.T, cov Coverage) {
	rec, region := sealRecordCov(t, 64<<10, 40000, cksum.Batched, cov, 5) // 2 header blocks, 79 payload blocks
	h, err := ParseHeader(rec)
	if err != nil {
		t.Fatal(err)
	}
	lsn := h.LSN
	if b := Uncarried(rec, h); len(b) != 0 {
		t.Fatalf("a sealed record has uncarried blocks %v", b)
	}
	if m, c, l := Identity(rec, lsn); !m || !c || !l {
		t.Fatalf("identity of the sealed header: magic %v cycle %v lsn %v", m, c, l)
	}
	if m, c, l := Identity(rec, MakeLSN(lsn.Cycle()+1, lsn.Block())); !m || c || l {
		t.Fatalf("identity against the next cycle: magic %v cycle %v lsn %v", m, c, l)
	}

	// A torn write: blocks 1 (extension header) and 30 hold what was there
	// before, stamped with an older cycle. No repair makes it verify.
	torn := cp2(rec)
	old := make([]byte, BBSize)
	binary.BigEndian.PutUint32(old, lsn.Cycle()-1)
	copy(torn[1*BBSize:], old)
	copy(torn[30*BBSize:], old)
	if b := Uncarried(torn, h); !slices.Equal(b, []int{1, 30}) {
		t.Fatalf("torn record: uncarried blocks %v, want [1 30]", b)
	}
	if n, err := Restamp(cp2(torn), lsn); err != nil || n != 2 {
		t.Fatalf("Restamp of the torn record changed %d blocks (%v), want 2", n, err)
	}
	rs := cp2(torn)
	Restamp(rs, lsn)
	if _, err := DecodeRecord(rs, cov); err == nil {
		t.Fatal("a torn record verifies after restamping")
	}
	if LengthDamaged(torn, h, cov) {
		t.Fatal("a torn record verifies with a shorter h_len")
	}

	// Damaged cycle words only (the magic, a stamp, an extension header's
	// cycle): restamping restores the record exactly.
	for _, off := range []int{0, 4, 512, 2 * 512, 50 * 512} {
		bad := cp2(rec)
		bad[off+2] ^= 0x40
		if off > 4 && !slices.Equal(Uncarried(bad, h), []int{off / BBSize}) {
			t.Fatalf("flip at %d: uncarried %v", off, Uncarried(bad, h))
		}
		if n, err := Restamp(bad, lsn); err != nil || n != 1 {
			t.Fatalf("flip at %d: Restamp changed %d (%v), want 1", off, n, err)
		}
		mustDecode(t, bad, region, cov)
	}

	// A flipped high bit of h_len that makes the record look longer: its
	// extra blocks carry no cycle, but clearing the bit verifies it.
	long := make([]byte, len(rec)+16*BBSize)
	copy(long, rec)
	grown := cp2(long)
	binary.BigEndian.PutUint32(grown[12:], h.Len|1<<13)
	gh, err := ParseHeader(grown)
	if err != nil {
		t.Fatal(err)
	}
	if len(Uncarried(grown, gh)) == 0 {
		t.Fatal("a grown h_len reaches no uncarried block")
	}
	if !LengthDamaged(grown, gh, cov) {
		t.Fatal("a record with a flipped h_len bit is not recognised as whole")
	}
	if LengthDamaged(long, h, cov) {
		t.Fatal("an intact record claims a damaged length")
	}

	// DecodeDamaged still names what a record with a payload bit flipped held.
	bad := cp2(rec)
	bad[3*BBSize+100] ^= 1
	if _, err := DecodeRecord(cp2(bad), cov); err == nil {
		t.Fatal("flipped payload verifies")
	}
	d, err := DecodeDamaged(bad)
	if err != nil || len(d.Ops) != 1 || d.Ops[0].TID != 1 {
		t.Fatalf("DecodeDamaged: %v, %+v", err, d)
	}
	if !bytes.Equal(bad, func() []byte { b := cp2(rec); b[3*BBSize+100] ^= 1; return b }()) {
		t.Fatal("DecodeDamaged changed its input")
	}
}

func TestParseHeaderRejects(t *testing.T) {
	rec, _ := sealRecord(t, 32<<10, 1000, cksum.Batched, 1)
	for _, c := range []struct {
		name string
		mut  func(b []byte)
	}{
		{"magic", func(b []byte) { b[0] = 0 }},
		{"version", func(b []byte) { b[11] = 1 }},
		{"size", func(b []byte) { binary.BigEndian.PutUint32(b[320:], 3000) }},
		{"len", func(b []byte) { binary.BigEndian.PutUint32(b[12:], 1<<20) }},
		{"cycle", func(b []byte) { binary.BigEndian.PutUint32(b[4:], 9) }},
		{"numops", func(b []byte) { binary.BigEndian.PutUint32(b[40:], 1000) }},
		{"durable at the record", func(b []byte) { copy(b[328:336], b[16:24]) }},
		{"durable after the record", func(b []byte) { binary.BigEndian.PutUint64(b[328:], uint64(MakeLSN(4, 0))) }},
	} {
		b := append([]byte(nil), rec...)
		c.mut(b)
		if _, err := ParseHeader(b); err == nil {
			t.Errorf("%s: bad header accepted", c.name)
		}
	}
}

func TestNextCycle(t *testing.T) {
	if NextCycle(1) != 2 || NextCycle(HeaderMagic-1) != HeaderMagic+1 || NextCycle(0xffffffff) != 1 {
		t.Error("NextCycle must skip 0 and the header magic")
	}
}

func TestReassemblerRejectsBadSequences(t *testing.T) {
	op := func(tid uint32, flags uint8) Op { return Op{TID: tid, ClientID: ClientTransaction, Flags: flags} }
	for name, ops := range map[string][]Op{
		"orphan region":    {op(1, 0)},
		"double start":     {op(1, FlagStart), op(1, FlagStart)},
		"orphan wascont":   {op(1, FlagStart), op(1, FlagWasCont|FlagEnd)},
		"commit mid-split": {op(1, FlagStart), op(1, FlagContinue), op(1, FlagCommit)},
		"bad client":       {{TID: 1, ClientID: 3, Flags: FlagStart}},
	} {
		var ra Reassembler
		if _, err := ra.Add(MakeLSN(1, 0), ops); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	// Seeds stay small (the fuzzer slows to a crawl on inputs of tens of
	// KiB); a 64 KiB iclog's record still has an extension header block.
	for _, cov := range cksum.Coverages() {
		for _, size := range []int{32 << 10, 64 << 10} {
			rec, _ := sealRecordCov(f, size, 700, cksum.Batched, cov, 2)
			f.Add(rec)
			// Shorter than the record its header describes: cut one
			// block short, or an h_size claiming more header blocks.
			f.Add(rec[:len(rec)-BBSize])
			for big := 2 * size; big <= MaxLogBSize; big *= 4 {
				b := bytes.Clone(rec)
				be.PutUint32(b[offSize:], uint32(big))
				f.Add(b)
			}
		}
	}
	f.Add(make([]byte, 512))
	f.Add([]byte{0xfe, 0xed, 0xba, 0xbe})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, cov := range cksum.Coverages() {
			fuzzDecode(t, bytes.Clone(b), cov)
		}
	})
}

func fuzzDecode(t *testing.T, b []byte, cov Coverage) {
	in := bytes.Clone(b)
	if h, _, err := VerifyRecord(b, cov); h != nil && len(b) >= h.RecordBytes() {
		Uncarried(b, h)
		LengthDamaged(b, h, cov)
		if err == nil && len(Uncarried(b, h)) > 0 {
			t.Fatalf("%s coverage: a record that verifies has blocks not carrying its cycle", cov)
		}
	}
	DecodeDamaged(b)
	if len(b) >= BBSize {
		Identity(b, MakeLSN(1, 0))
	}
	if !bytes.Equal(b, in) {
		t.Fatal("a read-only check changed its input")
	}
	Restamp(bytes.Clone(b), MakeLSN(3, 64))
	r, err := DecodeRecord(b, cov)
	if err == nil && r.RecordBytes() > len(b) {
		t.Fatal("decoded a record longer than its input")
	}
	var ra Reassembler
	if err == nil {
		ra.Add(r.LSN, r.Ops) // must not panic either
	}
	DecodeOps(b, len(b)/OpHeaderSize+1)
}

// BenchmarkSeal fills and seals a 256 KiB record: the copy into the iclog
// and the seal, so that inline mode's work at copy time counts too.
func BenchmarkSeal(b *testing.B) {
	for _, m := range cksum.Modes() {
		b.Run(m.String(), func(b *testing.B) {
			ic := mustIclog(b, 256<<10)
			region := make([]byte, ic.Capacity()-OpHeaderSize)
			s := newSummer(m)
			b.SetBytes(int64(ic.Size()))
			for b.Loop() {
				ic.Start(1, s)
				ic.AppendOp(1, ClientTransaction, 0, region, false)
				ic.Seal(MakeLSN(1, 0), MakeLSN(1, 0), 0, 0, s)
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	rec, _ := sealRecord(b, 256<<10, 256<<10-4096-OpHeaderSize, cksum.Batched, 3)
	buf := make([]byte, len(rec))
	b.SetBytes(int64(len(rec)))
	for b.Loop() {
		copy(buf, rec)
		if _, err := DecodeRecord(buf, CoverWhole); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCRCErrorNamesRecord checks that a CRC mismatch says which record, as
// the other errors of VerifyRecord do, and still unwraps to a *CRCError with
// both CRCs.
func TestCRCErrorNamesRecord(t *testing.T) {
	rec, _ := sealRecord(t, 32<<10, 1000, cksum.Batched, 5)
	rec[BBSize+100] ^= 0x40 // a payload byte
	h, crc, err := VerifyRecord(rec, CoverWhole)
	var ce *CRCError
	if !errors.As(err, &ce) {
		t.Fatalf("VerifyRecord of a damaged record: %v, want a *CRCError", err)
	}
	if ce.Stored != h.CRC || ce.Computed != crc || ce.Stored == ce.Computed {
		t.Errorf("CRCError{Stored: %#08x, Computed: %#08x}, header says %#08x, computed %#08x", ce.Stored, ce.Computed, h.CRC, crc)
	}
	if want := "record " + MakeLSN(3, 64).String() + ": CRC mismatch"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q does not start with %q", err, want)
	}
}
