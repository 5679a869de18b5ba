package xlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/logbuf"
)

// The scan's edges: records that end next to the end of the log, where the
// placement rule decides whether the next one starts where this one ended
// or at block 0 of the next cycle, and record headers whose h_size claims
// more log than there is. The records are written by the log writer itself
// (Log, over a device in memory), so the placement checked is the
// writer's, and the scan must follow it block for block.

// memDevice is a log device in memory. A write past its end fails, as the
// writer must never make one (a log file's size never changes).
type memDevice struct {
	mu  sync.Mutex
	img []byte
}

func (d *memDevice) ReadAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off < 0 || off+int64(len(p)) > int64(len(d.img)) {
		return 0, fmt.Errorf("memdev: read of %d bytes at log offset %d past the end of the log (%d bytes)", len(p), off, len(d.img))
	}
	return copy(p, d.img[off:]), nil
}

func (d *memDevice) WriteAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off < 0 || off+int64(len(p)) > int64(len(d.img)) {
		return 0, fmt.Errorf("memdev: write of %d bytes at log offset %d past the end of the log (%d bytes)", len(p), off, len(d.img))
	}
	return copy(d.img[off:], p), nil
}

func (d *memDevice) Sync() error  { return nil }
func (d *memDevice) Size() int64  { return int64(len(d.img)) }
func (d *memDevice) Close() error { return nil }

type noTimer struct{}

func (noTimer) Observe(cksum.Cost)   {}
func (noTimer) StartRound()          {}
func (noTimer) Forced(time.Duration) {}

// written is a record the test had the writer write.
type written struct {
	lsn    logbuf.LSN
	tid    uint32
	blocks int
	region []byte
}

// testLog is the log writer over dev, started at start, which is the
// checkpoint's tail too: the scan walks from there.
type testLog struct {
	t        testing.TB
	x        *Log
	dev      *memDevice
	start    Pos
	logbsize int
	recs     []written
}

func startLog(t testing.TB, dev *memDevice, logbsize int, start Pos, lastTID uint32) *testLog {
	t.Helper()
	x, err := New(Config{
		Times: noTimer{}, Dev: dev, UUID: [16]byte{0x5c, 0xa1}, LogBSize: logbsize, LogBufs: 2,
		Sum: cksum.NewSummer(cksum.Batched, cksum.Best()), Head: start, Tail: start, LastTID: lastTID,
		OnDurable: func([]Committed, Boundary) {}, WantCheckpoint: func() {},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &testLog{t: t, x: x, dev: dev, start: start, logbsize: logbsize}
}

// record has the writer write one record of n blocks, header blocks
// included, and make it durable: one transaction whose START, region and
// COMMIT fill the payload to the last byte. It returns where the record
// went.
func (l *testLog) record(n int) logbuf.LSN {
	l.t.Helper()
	pb := n - logbuf.HeaderBlocks(l.logbsize)
	if pb < 1 || n > l.logbsize/logbuf.BBSize {
		l.t.Fatalf("no record of %d blocks from a %d KiB iclog", n, l.logbsize>>10)
	}
	k := (len(l.recs)*13 + n) % 251
	region := pattern[k : k+pb*logbuf.BBSize-3*logbuf.OpHeaderSize]
	lsn, err := l.x.Commit(func(logbuf.LSN) [][]byte { return [][]byte{region} }, nil)
	if err == nil {
		err = l.x.ForceAll()
	}
	if err != nil {
		l.t.Fatalf("record of %d blocks after %d records from %v: %v", n, len(l.recs), l.start.LSN(), err)
	}
	l.recs = append(l.recs, written{lsn: lsn, tid: l.x.LastCommitted(), blocks: n, region: region})
	return lsn
}

// pattern is what regions are cut from, each at its own offset, so that a
// record found in another's place does not hold the same bytes.
var pattern = func() []byte {
	b := make([]byte, logbuf.MaxLogBSize+256)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}()

// stop ends the writer and returns where its next record would go and the
// block of its last record.
func (l *testLog) stop() (head Pos, prev uint32) {
	l.x.Stop()
	l.x.mu.Lock()
	defer l.x.mu.Unlock()
	return l.x.head, l.x.prevBlock
}

func (l *testLog) window() Window {
	return Window{Tail: l.start.LSN(), LogBufs: 2, LogBSize: l.logbsize}
}

// checkScan checks that the scan of the log from l's start found exactly
// the records written, each whole, and ends where the writer would put the
// next record, with nothing bad and nothing newer.
func (l *testLog) checkScan(s *Scan, head Pos, prev uint32) {
	l.t.Helper()
	var got []string
	for _, r := range s.Records {
		got = append(got, fmt.Sprintf("%v(%d)", r.LSN(), r.Header.RecordBlocks()))
	}
	var want []string
	for _, w := range l.recs {
		want = append(want, fmt.Sprintf("%v(%d)", w.lsn, w.blocks))
	}
	if !slices.Equal(got, want) {
		stop := "none"
		if s.Stop != nil {
			stop = fmt.Sprintf("%v: %v", s.Stop.LSN(), s.Stop.Err)
		}
		l.t.Fatalf("scan from %v found records %v, the writer wrote %v (scan head %v, stopped at %s, %d later records)",
			l.start.LSN(), got, want, s.Head.LSN(), stop, len(s.Later))
	}
	for i, r := range s.Records {
		w := l.recs[i]
		ops := r.Record.Ops
		if len(ops) != 3 || ops[0].Flags != logbuf.FlagStart || ops[2].Flags != logbuf.FlagCommit ||
			ops[1].TID != w.tid || !bytes.Equal(ops[1].Data, w.region) {
			l.t.Fatalf("record %v does not hold the transaction written there (tid %#x, %d bytes)", w.lsn, w.tid, len(w.region))
		}
	}
	if s.Kind != ScanEnd || s.Stop != nil || len(s.Later) != 0 || s.Clean {
		l.t.Fatalf("scan from %v: kind %v, stop %v, %d later records, clean %v: want the log to simply end", l.start.LSN(), s.Kind, s.Stop, len(s.Later), s.Clean)
	}
	if s.Head != head || s.Prev != prev {
		l.t.Fatalf("scan from %v ends at %+v after the record at block %d; the writer's next record goes at %+v after block %d",
			l.start.LSN(), s.Head, s.Prev, head, prev)
	}
	if s.Live != head.Abs-l.start.Abs {
		l.t.Fatalf("scan says %d live blocks, the writer wrote %d from the tail", s.Live, head.Abs-l.start.Abs)
	}
}

// TestScanEveryEndNearTheWrap has the writer write a record that ends at
// every block from logBlocks−maxBlocks−2 to the end of the log, of odd and
// even sizes (the smallest that can end there; with the smaller iclogs,
// and where a record of any size can end, also the next, two blocks more
// than its header and the two largest), with a record before it and two
// after it: so the writer decides at every such block whether the next
// record still fits before the end, and both decisions are taken. The
// record after it must go where the placement rule of package journal's
// documentation says (at that block while a largest record fits before the
// end, at block 0 of the next cycle otherwise), and the scan from the
// record before must find every record, whole, and end where the writer
// would put the next one. Every iclog size runs, so the records have one,
// two and eight header blocks. The log is reused, each case a cycle or two
// later, so the blocks past the head hold older records.
func TestScanEveryEndNearTheWrap(t *testing.T) {
	for _, logbsize := range []int{32 << 10, 64 << 10, 256 << 10} {
		t.Run(fmt.Sprintf("%dk", logbsize>>10), func(t *testing.T) {
			M := logbsize / logbuf.BBSize
			hb := logbuf.HeaderBlocks(logbsize)
			// Room for the tail's record, a largest record, the
			// gap at the end and two more records after the wrap.
			L := 5*M + 3
			dev := &memDevice{img: make([]byte, L*logbuf.BBSize)}
			cycle, tid, cases := uint32(1), uint32(0), 0
			for e := L - M - 2; e <= L; e++ {
				nmin := max(hb+1, e-(L-M)) // a record starts no later than L−M
				sizes := []int{nmin}
				if M <= 128 || e <= L-M {
					sizes = append(sizes, nmin+1, hb+2, M-1, M)
				}
				slices.Sort(sizes)
				for _, n := range slices.Compact(sizes) {
					if n < nmin || n > M {
						continue
					}
					f := hb + 1 + (e+n)%5 // the record before it
					a1 := []int{M, hb + 1, M - 1}[(e+n)%3]
					start := Pos{cycle: cycle, block: uint32(e - n - f), Abs: uint64(e - n - f)}
					l := startLog(t, dev, logbsize, start, tid)
					l.record(f)
					if at := l.record(n); at != logbuf.MakeLSN(cycle, uint32(e-n)) {
						t.Fatalf("record of %d blocks after one of %d from %v went to %v", n, f, start.LSN(), at)
					}
					next := l.record(a1)
					l.record(hb + 1 + e%2)
					head, prev := l.stop()

					want := logbuf.MakeLSN(cycle, uint32(e))
					if e+M > L {
						want = logbuf.MakeLSN(logbuf.NextCycle(cycle), 0)
					}
					if next != want {
						t.Fatalf("log of %d blocks, largest record %d: the record after one ending at block %d went to %v, want %v",
							L, M, e, next, want)
					}
					l.checkScan(ScanLog(dev.img, l.window()), head, prev)
					cycle, tid = logbuf.NextCycle(logbuf.NextCycle(cycle)), l.x.LastCommitted()
					cases++
				}
			}
			if cases < M+3 {
				t.Fatalf("only %d placements", cases)
			}
		})
	}
}

// nearTheEnd has the writer write, in a log of 5 largest records, a small
// record (its header blocks and one) that ends where a largest record
// starts, at the last block a record may start, and then that largest
// record, which ends at the very end of the log. It returns the log, its
// image and the LSNs.
func nearTheEnd(t testing.TB, logbsize int, cycle uint32) (l *testLog, img []byte, small, last logbuf.LSN) {
	t.Helper()
	M := logbsize / logbuf.BBSize
	L := 5 * M
	hb := logbuf.HeaderBlocks(logbsize)
	dev := &memDevice{img: make([]byte, L*logbuf.BBSize)}
	start := Pos{cycle: cycle, block: uint32(L - M - hb - 1), Abs: uint64(L - M - hb - 1)}
	l = startLog(t, dev, logbsize, start, 0)
	small = l.record(hb + 1)
	last = l.record(M)
	if last != logbuf.MakeLSN(cycle, uint32(L-M)) {
		t.Fatalf("the largest record went to %v, want %v", last, logbuf.MakeLSN(cycle, uint32(L-M)))
	}
	l.stop()
	return l, dev.img, small, last
}

// setSize overwrites h_size of the record header at block b of img (the
// CRC is left as it was: the header is damaged).
func setSize(img []byte, b logbuf.LSN, size int) {
	binary.BigEndian.PutUint32(img[int(b.Block())*logbuf.BBSize+320:], uint32(size))
}

// wantRefused checks that s refuses the log at the record at lsn, as a
// damaged record that was not in flight, with an error that names it and
// says what is wrong with it (reason) and why it is not a torn write
// (evidence).
func wantRefused(t *testing.T, s *Scan, lsn logbuf.LSN, reason, evidence string) {
	t.Helper()
	var ce *CorruptionError
	if err := s.Corruption(); !errors.As(err, &ce) {
		t.Fatalf("scan: kind %v, stop %+v: want the log refused at %v", s.Kind, s.Stop, lsn)
	}
	if ce.LSN != lsn || ce.Offset != int64(lsn.Block())*logbuf.BBSize {
		t.Fatalf("refused at LSN %v, log offset %d; want %v, offset %d: %v", ce.LSN, ce.Offset, lsn, int64(lsn.Block())*logbuf.BBSize, ce)
	}
	if !strings.Contains(ce.Error(), lsn.String()) {
		t.Fatalf("the refusal %q does not name LSN %v", ce, lsn)
	}
	if !strings.Contains(ce.Reason.Error(), reason) || !strings.Contains(ce.Evidence, evidence) {
		t.Fatalf("refused at %v because %q, evidence %q: want %q, evidence %q", lsn, ce.Reason, ce.Evidence, reason, evidence)
	}
}

// TestScanRefusesSizePastTheEnd damages h_size of a record that ends at the
// very end of the log, to every larger iclog size: its header blocks then
// reach past the end of the log. The header block was written in this
// cycle, at this position, so the record is damaged, not torn: the scan
// refuses the log there, naming the record's LSN, and never reads past
// the end of the image (it used to be one check away from a panic).
func TestScanRefusesSizePastTheEnd(t *testing.T) {
	for _, logbsize := range []int{32 << 10, 64 << 10, 128 << 10} {
		for size := 2 * logbsize; size <= logbuf.MaxLogBSize; size *= 2 {
			t.Run(fmt.Sprintf("%dk-as-%dk", logbsize>>10, size>>10), func(t *testing.T) {
				l, img, small, last := nearTheEnd(t, logbsize, 5)
				setSize(img, last, size)
				s := ScanLog(img, l.window())
				if len(s.Records) != 1 || s.Records[0].LSN() != small {
					t.Fatalf("scan found %d records, want the one at %v before the damaged one", len(s.Records), small)
				}
				wantRefused(t, s, last, "runs past the end of the log", "claims a length")
			})
		}
	}
}

// TestScanLaterSizePastTheEnd puts the record with the damaged h_size past
// a missing one: the scan ends at the missing record and looks past it
// for newer valid records, and must pass over the damaged header without
// reading past the end of the image.
func TestScanLaterSizePastTheEnd(t *testing.T) {
	for _, logbsize := range []int{32 << 10, 64 << 10} {
		t.Run(fmt.Sprintf("%dk", logbsize>>10), func(t *testing.T) {
			M := logbsize / logbuf.BBSize
			hb := logbuf.HeaderBlocks(logbsize)
			L := 5 * M
			dev := &memDevice{img: make([]byte, L*logbuf.BBSize)}
			start := Pos{cycle: 7, block: uint32(L - M - 2*(hb+1)), Abs: uint64(L - M - 2*(hb+1))}
			l := startLog(t, dev, logbsize, start, 0)
			first := l.record(hb + 1)
			missing := l.record(hb + 1)
			last := l.record(M)
			l.stop()
			clear(dev.img[int(missing.Block())*logbuf.BBSize:][:logbuf.BBSize])
			setSize(dev.img, last, 2*logbsize)
			s := ScanLog(dev.img, l.window())
			if len(s.Records) != 1 || s.Records[0].LSN() != first || s.Head.LSN() != missing || len(s.Later) != 0 {
				t.Fatalf("scan: %d records, head %v, %d later records: want the record at %v, the head at the missing %v, nothing later",
					len(s.Records), s.Head.LSN(), len(s.Later), first, missing)
			}
		})
	}
}

// TestScanRecordCutOneBlockShort: a record whose last block is missing,
// because the log image ends one block before the record's end, or because
// a record was written over that block (it starts one block before the
// record's end). Either way the record was written whole and durable
// before (the one written over it says so, or lies inside it), so the log
// is refused there, naming its LSN; never read past its end, nor cut as a
// torn write.
func TestScanRecordCutOneBlockShort(t *testing.T) {
	t.Run("image ends", func(t *testing.T) {
		l, img, _, last := nearTheEnd(t, 64<<10, 9)
		w := l.window()
		w.Tail = last // the walk starts at the record: no wrap decision before it
		wantRefused(t, ScanLog(img[:len(img)-logbuf.BBSize], w), last, "runs past the end of the log", "claims a length")
	})
	for _, watermark := range []bool{true, false} {
		t.Run(fmt.Sprintf("next record over its last block, watermark %v", watermark), func(t *testing.T) {
			const logbsize = 32 << 10
			M := logbsize / logbuf.BBSize
			dev := &memDevice{img: make([]byte, 5*M*logbuf.BBSize)}
			start := Pos{cycle: 4, block: 10, Abs: 10}
			l := startLog(t, dev, logbsize, start, 0)
			first := l.record(3)
			cut := l.record(7)
			l.stop()
			// The next record, sealed one block early: at the cut
			// record's last block.
			ic, err := logbuf.NewIclog(logbsize, [16]byte{0x5c, 0xa1}, logbuf.CoverWhole)
			if err != nil {
				t.Fatal(err)
			}
			sum := cksum.NewSummer(cksum.Batched, cksum.Best())
			ic.Start(4, sum)
			ic.AppendOp(99, logbuf.ClientTransaction, logbuf.FlagStart, nil, false)
			ic.AppendOp(99, logbuf.ClientTransaction, logbuf.FlagCommit, nil, false)
			at := cut.Block() + 7 - 1
			var durable logbuf.LSN
			if watermark {
				durable = cut
			}
			rec := ic.Seal(logbuf.MakeLSN(4, at), start.LSN(), durable, cut.Block(), sum)
			copy(dev.img[int(at)*logbuf.BBSize:], rec)
			s := ScanLog(dev.img, l.window())
			if len(s.Records) != 1 || s.Records[0].LSN() != first {
				t.Fatalf("scan found %d records, want the one at %v before the cut one", len(s.Records), first)
			}
			evidence := "lies inside it"
			if watermark {
				evidence = "durable up to LSN " + cut.String()
			}
			wantRefused(t, s, cut, "CRC mismatch", evidence)
		})
	}
}

// FuzzScanLog feeds arbitrary logs to the scan, seeded with logs the
// writer wrote across the end of the log and with the damaged ones above:
// the scan must never panic nor read past the image, change it, or find
// records that do not follow the placement rule. An input is a whole log
// (160 KiB): fuzz with -fuzzminimizetime=1x, or the workers spend their
// time minimizing.
func FuzzScanLog(f *testing.F) {
	const logbsize = 32 << 10
	const L = 5 * logbsize / logbuf.BBSize
	// Records across the wrap, of odd and even sizes.
	dev := &memDevice{img: make([]byte, L*logbuf.BBSize)}
	l := startLog(f, dev, logbsize, Pos{cycle: 1, block: L - 70, Abs: L - 70}, 0)
	for _, n := range []int{3, 2, 64, 5} {
		l.record(n)
	}
	l.stop()
	f.Add(bytes.Clone(dev.img), uint32(1), uint32(L-70))
	_, img, _, last := nearTheEnd(f, logbsize, 1)
	for _, size := range []int{64 << 10, 256 << 10} {
		b := bytes.Clone(img)
		setSize(b, last, size)
		f.Add(b, uint32(1), uint32(L-logbsize/logbuf.BBSize-2))
		f.Add(b, uint32(1), last.Block())
	}
	f.Add(img[:len(img)-logbuf.BBSize], uint32(1), last.Block())
	f.Fuzz(func(t *testing.T, b []byte, tailCycle, tailBlock uint32) {
		img := make([]byte, L*logbuf.BBSize)
		copy(img, b)
		in := bytes.Clone(img)
		w := Window{Tail: logbuf.MakeLSN(tailCycle, tailBlock%L), LogBufs: 2, LogBSize: logbsize}
		s := ScanLog(img, w)
		if !bytes.Equal(img, in) {
			t.Fatal("the scan changed the log")
		}
		if (s.Corruption() != nil) != (s.Kind == scanCorrupt) {
			t.Fatalf("kind %v, corruption %v", s.Kind, s.Corruption())
		}
		if s.Live > L {
			t.Fatalf("%d live blocks in a log of %d", s.Live, L)
		}
		p := Pos{cycle: w.Tail.Cycle(), block: w.Tail.Block(), Abs: uint64(w.Tail.Block())}
		for _, r := range s.Records {
			if r.At != p {
				t.Fatalf("record at %+v, the placement rule puts it at %+v", r.At, p)
			}
			if r.Offset+int64(r.Header.RecordBytes()) > int64(len(img)) {
				t.Fatalf("record at %v runs past the end of the log", r.LSN())
			}
			p = After(r.At, r.Header, L)
		}
		if len(s.Records) > 0 && s.Head != p {
			t.Fatalf("head %+v, the record after the last goes at %+v", s.Head, p)
		}
	})
}
