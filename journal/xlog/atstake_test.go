package xlog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/logbuf"
)

const (
	stakeLogBSize = 32 << 10
	stakeFirstTID = 0x76 // record 1's first transaction is 0x78
)

// stakeLog is a 1 MiB log of n records from block 0 of cycle 1, as n
// fsyncs leave it: record i holds two committed transactions (tids
// stakeFirstTID+2i and +2i+1, each START, a region naming it, COMMIT) and
// says record i-1 was durable. It returns the image and each record's
// block.
func stakeLog(t *testing.T, n int) ([]byte, []uint32) {
	t.Helper()
	img := make([]byte, 1<<20)
	var blocks []uint32
	block := uint32(0)
	for i := range n {
		ic, err := logbuf.NewIclog(stakeLogBSize, [16]byte{1}, logbuf.CoverWhole)
		if err != nil {
			t.Fatal(err)
		}
		sum := cksum.NewSummer(cksum.Batched, cksum.Best())
		ic.Start(1, sum)
		for k := range 2 {
			tid := uint32(stakeFirstTID + 2*i + k)
			ic.AppendOp(tid, logbuf.ClientTransaction, logbuf.FlagStart, nil, false)
			ic.AppendOp(tid, logbuf.ClientTransaction, 0, fmt.Appendf(nil, "op%05x", tid), false)
			ic.AppendOp(tid, logbuf.ClientTransaction, logbuf.FlagCommit, nil, false)
		}
		var durable, prev logbuf.LSN
		if i > 0 {
			durable = logbuf.MakeLSN(1, blocks[i-1])
			prev = durable
		}
		rec := ic.Seal(logbuf.MakeLSN(1, block), logbuf.MakeLSN(1, 0), durable, prev.Block(), sum)
		copy(img[int64(block)*logbuf.BBSize:], rec)
		blocks = append(blocks, block)
		block += uint32(len(rec) / logbuf.BBSize)
	}
	return img, blocks
}

func stakeWindow() Window {
	return Window{Tail: logbuf.MakeLSN(1, 0), LogBufs: 2, LogBSize: stakeLogBSize, Describe: func(b []byte) string { return string(b) }}
}

// wantTIDs fails unless txs are exactly the transactions of the records
// from `from` on, in order.
func wantTIDs(t *testing.T, what string, txs []StakedTxn, blocks []uint32, from int) {
	t.Helper()
	var want []string
	for i := from; i < len(blocks); i++ {
		for k := range 2 {
			tid := stakeFirstTID + 2*i + k
			want = append(want, fmt.Sprintf("tid %#x (LSN 1,%d): op%05x", tid, blocks[i], tid))
		}
	}
	var got []string
	for _, tx := range txs {
		got = append(got, tx.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s: at stake\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAtStakeFromVerifiedRecords: what a cut at a damaged record drops is
// listed from the records whose CRC verifies. A flipped bit in the
// damaged record's COMMIT tid (0x78 read as 0x100078) is never quoted; the
// record is named with its header's op count, contents unknown, and the
// count is "at least". Before, the damaged record's payload was decoded
// and its corrupted tid listed as a committed transaction.
func TestAtStakeFromVerifiedRecords(t *testing.T) {
	const n = 6
	img, blocks := stakeLog(t, n)
	if blocks[1] != 2 {
		t.Fatalf("records at blocks %v, want 2 blocks each", blocks)
	}
	// Record 1: header block, then the payload: START (12 bytes), the
	// region op (12+7), then COMMIT, whose tid is at 31..35.
	off := int(blocks[1])*logbuf.BBSize + logbuf.BBSize + 31
	if got := fmt.Sprintf("%x", img[off:off+4]); got != "00000078" {
		t.Fatalf("the COMMIT tid of record 1 reads %s, want 00000078", got)
	}
	img[off+1] ^= 0x10

	s := ScanLog(img, stakeWindow())
	ce, ok := s.Corruption().(*CorruptionError)
	if !ok || ce.LSN != logbuf.MakeLSN(1, 2) {
		t.Fatalf("scan of a log with a flipped bit in record 1: %v (kind %v), want corruption at 1,2", s.Corruption(), s.Kind)
	}
	wantTIDs(t, "flipped tid", ce.AtStake, blocks, 2)
	if want := []UnreadRecord{{LSN: logbuf.MakeLSN(1, 2), Ops: 6, Why: "CRC mismatch"}}; fmt.Sprint(ce.Unread) != fmt.Sprint(want) {
		t.Errorf("unread %v, want %v", ce.Unread, want)
	}
	msg := ce.Error()
	for _, w := range []string{"At stake: at least 8 committed transactions, possibly acknowledged (tid 0x7a to 0x81)",
		"record 1,2: 6 ops, contents unknown (CRC mismatch)"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not say %q", msg, w)
		}
	}
	if strings.Contains(msg, "0x100078") || strings.Contains(msg, "tid 0x78") || strings.Contains(msg, "tid 0x79") {
		t.Errorf("error %q quotes a tid of the damaged record", msg)
	}
}

// TestAtStakeUnreadableHeader: when the damaged record's header cannot be
// read, its transactions are said to be unknown, not left out: the count
// is "at least" the later records' (before, it was 58 where a cut dropped
// 60). A record between two valid later ones that does not verify is
// unknown too.
func TestAtStakeUnreadableHeader(t *testing.T) {
	const n = 6
	img, blocks := stakeLog(t, n)
	clear(img[int(blocks[1])*logbuf.BBSize:][:logbuf.BBSize])
	s := ScanLog(img, stakeWindow())
	ce, ok := s.Corruption().(*CorruptionError)
	if !ok {
		t.Fatalf("zeroed header of record 1: %v (kind %v), want corruption", s.Corruption(), s.Kind)
	}
	wantTIDs(t, "zeroed header", ce.AtStake, blocks, 2)
	if len(ce.Unread) != 1 || ce.Unread[0].LSN != logbuf.MakeLSN(1, 2) || ce.Unread[0].Ops != -1 {
		t.Fatalf("unread %v, want record 1,2 with its ops unknown", ce.Unread)
	}
	for _, w := range []string{"At stake: at least 8 committed transactions", "record 1,2: its transactions are unknown (no record header where it goes)"} {
		if !strings.Contains(ce.Error(), w) {
			t.Errorf("error %q does not say %q", ce.Error(), w)
		}
	}

	// And record 3's header too: records 2, 4 and 5 verify, and what
	// lies between 2 and 4 is a record whose transactions are unknown.
	clear(img[int(blocks[3])*logbuf.BBSize:][:logbuf.BBSize])
	s = ScanLog(img, stakeWindow())
	st := s.Stake()
	if len(st.Txns) != 6 || len(st.Unread) != 2 || st.Unread[1].LSN != logbuf.MakeLSN(1, blocks[3]) || st.Unread[1].Ops != -1 {
		t.Fatalf("two unreadable records: %d at stake, unread %v; want 6, and records 1,2 and 1,%d unread", len(st.Txns), st.Unread, blocks[3])
	}
	if got, want := st.Count(), "at least 6 committed transactions"; got != want {
		t.Errorf("count %q, want %q", got, want)
	}
}

// TestStakeCount: plurals right, and "at least" only when some record's
// transactions are unknown.
func TestStakeCount(t *testing.T) {
	one := []StakedTxn{{TID: 5}}
	two := []StakedTxn{{TID: 5}, {TID: 6}}
	unread := []UnreadRecord{{Ops: -1}}
	for _, c := range []struct {
		s    Stake
		want string
	}{
		{Stake{}, "no committed transaction"},
		{Stake{Txns: one}, "1 committed transaction"},
		{Stake{Txns: two}, "2 committed transactions"},
		{Stake{Txns: one, Unread: unread}, "at least 1 committed transaction"},
		{Stake{Txns: two, Unread: unread}, "at least 2 committed transactions"},
		{Stake{Unread: unread}, "an unknown number of committed transactions"},
	} {
		if got := c.s.Count(); got != c.want {
			t.Errorf("Count of %d known, %d unread: %q, want %q", len(c.s.Txns), len(c.s.Unread), got, c.want)
		}
	}
	if got := (UnreadRecord{LSN: logbuf.MakeLSN(2, 9), Ops: 1, Why: "CRC mismatch"}).String(); got != "record 2,9: 1 op, contents unknown (CRC mismatch)" {
		t.Errorf("unread record: %q", got)
	}
}
