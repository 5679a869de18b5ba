package journal

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/xlogfs/xlogfs/logbuf"
)

// ScannedRecord is one record found walking the log.
type ScannedRecord struct {
	at     pos
	Offset int64          // byte offset in the log file
	Record *logbuf.Record // decoded, unstamped (nil when Err is set)
	Header *logbuf.Header // parsed header, when there was one
	Err    error          // why the record is bad
	// CRCs of a record whose header parsed (Computed is zero otherwise).
	Stored, Computed uint32
}

// LSN is the record's position.
func (r *ScannedRecord) LSN() logbuf.LSN { return r.at.lsn() }

// scanKind says how the walk ended.
type scanKind int

const (
	scanEnd     scanKind = iota // no record at the next position: the normal end
	scanTorn                    // a bad record in the torn-write window: cut there
	scanCorrupt                 // a bad record with valid newer ones beyond the window
)

// logScan is what walking the log from a checkpoint's tail found
// (xlog_find_tail and xlog_verify_head, the xlogfs way: records are found by
// following the placement rule from the tail, not by binary search).
type logScan struct {
	records []ScannedRecord // valid records, in log order
	head    pos             // where the next record goes after the last valid one
	prev    uint32          // block of the last valid record (h_prev_block of the next)
	kind    scanKind
	stop    *ScannedRecord  // the first position that failed, when kind != scanEnd or a bad header sat there
	later   []ScannedRecord // valid records newer than the stop (dropped with a torn tail)
	clean   bool            // the last record is an unmount record
	window  uint64          // blocks of the torn-write window
	live    uint64          // blocks from the tail to the head
}

// CorruptionError refuses a log with a bad record in the middle: valid
// records follow it further than in-flight writes could have reached.
type CorruptionError struct {
	LSN              logbuf.LSN
	Offset           int64
	Stored, Computed uint32 // zero when the header itself was unreadable
	Reason           error
	Next             logbuf.LSN // a valid record beyond the torn-write window
}

func (e *CorruptionError) Error() string {
	crc := ""
	if e.Computed != 0 || e.Stored != 0 {
		crc = fmt.Sprintf(", stored CRC %#08x, computed %#08x", e.Stored, e.Computed)
	}
	return fmt.Sprintf("log corrupt at LSN %v (log offset %d%s): %v; valid records follow (LSN %v), so this is not a torn write. "+
		"Run 'xlogfs check --repair' to cut the log there (the transactions after it are lost)",
		e.LSN, e.Offset, crc, e.Reason, e.Next)
}

// scanLog walks img (the whole log) from ck's tail. It never modifies img.
func scanLog(img []byte, ck *Checkpoint) *logScan {
	logBlocks := uint64(len(img) / logbuf.BBSize)
	start := pos{cycle: ck.TailLSN.Cycle(), block: ck.TailLSN.Block()}
	start.abs = uint64(start.block)
	s := &logScan{head: start, window: uint64(ck.LogBufs+1) * uint64(ck.LogBSize/logbuf.BBSize)}
	p := start
	for p.abs-start.abs < logBlocks && uint64(p.block) < logBlocks {
		r, ok := readRecord(img, p)
		if !ok {
			break // nothing claims to be the record at p: the end, unless newer records follow
		}
		if r.Err != nil {
			s.stop = &r
			break
		}
		s.records = append(s.records, r)
		s.prev = p.block
		n := uint64(r.Header.RecordBlocks())
		p = wrap(pos{cycle: p.cycle, block: p.block + uint32(n), abs: p.abs + n}, uint64(r.Header.Size/logbuf.BBSize), logBlocks)
		s.head = p
	}
	if s.stop == nil {
		s.stop = &ScannedRecord{at: s.head, Offset: int64(s.head.block) * logbuf.BBSize, Err: errors.New("no record")}
	}

	// Valid records newer than the stop: within the window they are
	// in-flight writes that outlived an earlier one (torn tail); beyond it
	// they prove the stop is corruption.
	s.live = s.head.abs - start.abs
	free := logBlocks - s.live
	for d := uint64(0); d < free; d++ {
		b := (uint64(s.head.block) + d) % logBlocks
		off := b * logbuf.BBSize
		if binary.BigEndian.Uint32(img[off:]) != logbuf.HeaderMagic {
			continue
		}
		h, err := logbuf.ParseHeader(img[off:])
		if err != nil || uint64(h.LSN.Block()) != b || h.LSN <= s.head.lsn() || h.LSN.Cycle() > logbuf.NextCycle(s.head.cycle) {
			continue
		}
		if off+uint64(h.RecordBytes()) > uint64(len(img)) || logbuf.ComputeCRC(img[off:off+uint64(h.RecordBytes())]) != h.CRC {
			continue
		}
		s.later = append(s.later, ScannedRecord{at: pos{cycle: h.LSN.Cycle(), block: uint32(b)}, Offset: int64(off), Header: h, Stored: h.CRC, Computed: h.CRC})
		if d >= s.window {
			s.kind = scanCorrupt
		}
	}
	if s.kind != scanCorrupt && (s.stop.Header != nil || len(s.later) > 0) {
		s.kind = scanTorn
	}
	if s.kind == scanEnd {
		s.stop = nil
	}
	if n := len(s.records); n > 0 && s.kind == scanEnd {
		last := s.records[n-1].Record
		s.clean = len(last.Ops) == 1 && last.Ops[0].ClientID == logbuf.ClientLog && last.Ops[0].Flags&logbuf.FlagUnmount != 0
	}
	return s
}

// readRecord decodes the record expected at p. ok is false when nothing
// there claims to be that record (no header, or a header of another LSN:
// stale blocks from an older cycle); then the walk has simply ended.
func readRecord(img []byte, p pos) (r ScannedRecord, ok bool) {
	off := int64(p.block) * logbuf.BBSize
	r = ScannedRecord{at: p, Offset: off}
	b := img[off:]
	if binary.BigEndian.Uint32(b) != logbuf.HeaderMagic {
		return r, false
	}
	h, err := logbuf.ParseHeader(b)
	if err != nil {
		// A header block that is half there: torn if its cycle word
		// says it belongs here.
		if binary.BigEndian.Uint32(b[4:]) != p.cycle {
			return r, false
		}
		r.Err = err
		return r, true
	}
	if h.LSN != p.lsn() {
		return r, false
	}
	r.Header = h
	r.Stored = h.CRC
	if off+int64(h.RecordBytes()) > int64(len(img)) {
		r.Err = fmt.Errorf("record of %d bytes runs past the end of the log", h.RecordBytes())
		return r, true
	}
	// DecodeRecord unstamps in place; img stays as read.
	rec := append([]byte(nil), b[:h.RecordBytes()]...)
	dec, err := logbuf.DecodeRecord(rec)
	r.Computed = h.CRC
	var ce *logbuf.CRCError
	if errors.As(err, &ce) {
		r.Computed = ce.Computed
	}
	if err != nil {
		r.Err = err
		return r, true
	}
	r.Record = dec
	return r, true
}

// corruption turns a scan that ended in corruption into its error.
func (s *logScan) corruption() error {
	if s.kind != scanCorrupt {
		return nil
	}
	e := &CorruptionError{LSN: s.stop.LSN(), Offset: s.stop.Offset, Stored: s.stop.Stored, Computed: s.stop.Computed, Reason: s.stop.Err}
	for _, l := range s.later {
		e.Next = l.LSN()
	}
	return e
}

// newerTID reports whether tid comes after last, in serial-number
// arithmetic (tids wrap at 2^32).
func newerTID(tid, last uint32) bool { return int32(tid-last) > 0 }

// replayed is the outcome of replaying a scan onto a model.
type replayed struct {
	transactions int    // applied
	dropped      int    // started but never committed: not applied
	lastTID      uint32 // newest transaction now in the model
}

// replay applies the committed transactions of the scanned records that
// the checkpoint does not already hold, in log order. apply performs one op
// (onto the model, and in data-journal mode onto the data files).
func replay(s *logScan, lastTID uint32, apply func(op *Op) error) (replayed, error) {
	var ra logbuf.Reassembler
	out := replayed{lastTID: lastTID}
	for _, r := range s.records {
		ops := r.Record.Ops[:0:0]
		for _, op := range r.Record.Ops {
			if op.ClientID == logbuf.ClientLog || newerTID(op.TID, lastTID) {
				ops = append(ops, op)
			}
		}
		txs, err := ra.Add(r.LSN(), ops)
		if err != nil {
			return out, fmt.Errorf("replay: %w", err)
		}
		for _, tx := range txs {
			if tx.Unmount {
				continue
			}
			if len(tx.Regions) != 1 {
				return out, fmt.Errorf("replay: transaction %#x (LSN %v) has %d regions, want 1", tx.TID, tx.Commit, len(tx.Regions))
			}
			op, err := DecodeOp(tx.Regions[0])
			if err != nil {
				return out, fmt.Errorf("replay: transaction %#x (LSN %v): %w", tx.TID, tx.Commit, err)
			}
			if err := apply(&op); err != nil {
				return out, fmt.Errorf("replay: transaction %#x (LSN %v) %s: %w", tx.TID, tx.Commit, op.String(), err)
			}
			out.transactions++
			out.lastTID = tx.TID
		}
	}
	out.dropped = ra.Pending()
	return out, nil
}
