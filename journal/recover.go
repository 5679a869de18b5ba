package journal

import (
	"bytes"
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
	// CRCs of a record whose header parsed: Stored is h_crc, Computed
	// what its bytes give (Computed is zero when it was never computed).
	Stored, Computed uint32
	// Restamped counts blocks whose cycle word had to be restored for the
	// record to verify (damaged since, or left by an earlier write of the
	// same bytes): every other byte is as written, so it is valid.
	Restamped int
	// whole, for a bad record, says why it was evidently written whole
	// (so it is damaged, not torn); empty if it may be torn.
	whole string
}

// LSN is the record's position.
func (r *ScannedRecord) LSN() logbuf.LSN { return r.at.lsn() }

// scanKind says how the walk ended.
type scanKind int

const (
	scanEnd     scanKind = iota // no record at the next position: the normal end
	scanTorn                    // a record that may have been in flight is bad or missing: cut there
	scanCorrupt                 // a bad record that was durable: refuse
)

// logScan is what walking the log from a checkpoint's tail found
// (xlog_find_tail and xlog_verify_head, the xlogfs way: records are found by
// following the placement rule from the tail, not by binary search).
type logScan struct {
	records  []ScannedRecord // valid records, in log order
	head     pos             // where the next record goes after the last valid one
	prev     uint32          // block of the last valid record (h_prev_block of the next)
	kind     scanKind
	stop     *ScannedRecord  // the bad (or missing) record at head, when kind != scanEnd
	later    []ScannedRecord // valid records newer than head (dropped with a torn tail)
	clean    bool            // the last record is an unmount record
	live     uint64          // blocks from the tail to the head
	evidence string          // why stop is corrupt, not torn
	durable  logbuf.LSN      // the newest durable watermark of a later record
	inFlight int             // records from stop to the newest later record, at least
	atStake  []StakedTxn     // committed transactions in stop and later
}

// StakedTxn is a committed transaction that cutting the log would drop.
type StakedTxn struct {
	TID    uint32
	Commit logbuf.LSN // record holding its COMMIT
	Op     string     // what it did, when its region is in that record
}

func (t StakedTxn) String() string {
	if t.Op == "" {
		return fmt.Sprintf("tid %#x (LSN %v)", t.TID, t.Commit)
	}
	return fmt.Sprintf("tid %#x (LSN %v): %s", t.TID, t.Commit, t.Op)
}

// CorruptionError refuses a log with a bad record that was durable: cutting
// the log there would drop transactions that may have been acknowledged.
type CorruptionError struct {
	LSN              logbuf.LSN
	Offset           int64
	Stored, Computed uint32 // zero when no header of the record was readable
	Reason           error  // what is wrong with the record
	Evidence         string // why it cannot be a torn write
	Durable          logbuf.LSN
	AtStake          []StakedTxn // committed in it or after it (what a cut drops)
}

func (e *CorruptionError) Error() string {
	crc := ""
	if e.Computed != 0 || e.Stored != 0 {
		crc = fmt.Sprintf(", stored CRC %#08x, computed %#08x", e.Stored, e.Computed)
	}
	return fmt.Sprintf("log corrupt at LSN %v (log offset %d%s): %v; not a torn write: %s. At stake: %s. "+
		"Run 'xlogfs check --repair' to cut the log there (the transactions at stake are lost)",
		e.LSN, e.Offset, crc, e.Reason, e.Evidence, stakeSummary(e.AtStake))
}

func (e *CorruptionError) Unwrap() error { return e.Reason }

// stakeSummary names the transactions at stake, the first few in full.
func stakeSummary(txs []StakedTxn) string {
	if len(txs) == 0 {
		return "no committed transaction could be read from it or after it"
	}
	const show = 5
	s := fmt.Sprintf("%d committed transactions, possibly acknowledged (tid %#x to %#x): ", len(txs), txs[0].TID, txs[len(txs)-1].TID)
	for i, t := range txs[:min(show, len(txs))] {
		if i > 0 {
			s += "; "
		}
		s += t.String()
	}
	if len(txs) > show {
		s += fmt.Sprintf("; and %d more", len(txs)-show)
	}
	return s
}

// scanWindow is what walking the log needs to know of the checkpoint: where
// to start, and the geometry of the writer of the records after it.
type scanWindow struct {
	tail logbuf.LSN // where the walk starts: a record position
	// logBufs is how many records that writer can have had written but
	// not durable at a crash (an iclog is reused only once its record is
	// durable); logBSize is its iclog size, the largest record it writes.
	logBufs, logBSize int
	// describe names what a committed transaction's region did, for the
	// transactions at stake; nil leaves them unnamed.
	describe func(region []byte) string
}

// inFlightAllowance is how many records the writer of the records after
// w's tail can have had written but not durable at a crash: its logbufs,
// since an iclog is reused only once its record is durable.
func inFlightAllowance(w scanWindow) int { return w.logBufs }

var errNoRecord = errors.New("no record where the next one goes")

// scanLog walks img (the whole log) from w's tail and decides how the log
// ends (see the package documentation: torn versus corrupt). It never
// modifies img.
func scanLog(img []byte, w scanWindow) *logScan {
	logBlocks := uint64(len(img) / logbuf.BBSize)
	start := pos{cycle: w.tail.Cycle(), block: w.tail.Block()}
	start.abs = uint64(start.block)
	s := &logScan{head: start}
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
		p = after(p, r.Header, logBlocks)
		s.head = p
	}
	if s.stop == nil {
		s.stop = &ScannedRecord{at: s.head, Offset: int64(s.head.block) * logbuf.BBSize, Err: errNoRecord}
	}

	// Valid records newer than the head: in-flight writes that outlived an
	// earlier one, or, past a damaged record, the rest of the log.
	s.live = s.head.abs - start.abs
	free := logBlocks - s.live
	maxBlocks := uint64(w.logBSize / logbuf.BBSize)
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
		if off+uint64(h.RecordBytes()) > uint64(len(img)) {
			continue
		}
		buf := bytes.Clone(img[off : off+uint64(h.RecordBytes())])
		_, crc, err := logbuf.VerifyRecord(buf)
		if err != nil {
			continue
		}
		rec, err := logbuf.UnpackRecord(buf, h)
		if err != nil {
			continue
		}
		s.later = append(s.later, ScannedRecord{at: pos{cycle: h.LSN.Cycle(), block: uint32(b), abs: s.head.abs + d},
			Offset: int64(off), Header: h, Record: rec, Stored: h.CRC, Computed: crc})
		s.durable = max(s.durable, h.Durable)
		maxBlocks = max(maxBlocks, uint64(h.Size/logbuf.BBSize))
	}

	bad := s.stop.Err != errNoRecord
	switch {
	case bad && s.stop.whole != "":
		s.kind, s.evidence = scanCorrupt, s.stop.whole
	case bad || len(s.later) > 0:
		s.kind = scanTorn
		s.inFlight = s.countInFlight(maxBlocks, logBlocks)
		if e := s.notInFlight(inFlightAllowance(w)); e != "" {
			s.kind, s.evidence = scanCorrupt, e
		}
	default:
		s.kind, s.stop = scanEnd, nil
	}
	if s.kind != scanEnd {
		s.atStake = stakeOf(img, s.stop, s.later, w.describe)
	}
	if n := len(s.records); n > 0 && s.kind == scanEnd {
		last := s.records[n-1].Record
		s.clean = len(last.Ops) == 1 && last.Ops[0].ClientID == logbuf.ClientLog && last.Ops[0].Flags&logbuf.FlagUnmount != 0
	}
	return s
}

// after returns where the record after the one with header h at p goes.
func after(p pos, h *logbuf.Header, logBlocks uint64) pos {
	n := uint64(h.RecordBlocks())
	return wrap(pos{cycle: p.cycle, block: p.block + uint32(n), abs: p.abs + n}, uint64(h.Size/logbuf.BBSize), logBlocks)
}

// notInFlight returns why the bad or missing record at the head cannot
// have been in flight at the crash, or "" if it may have been (then it is
// a torn write).
func (s *logScan) notInFlight(allowance int) string {
	for _, l := range s.later {
		if l.Header.Durable >= s.head.lsn() {
			return fmt.Sprintf("the valid record at LSN %v, written after it, says the log was durable up to LSN %v", l.LSN(), l.Header.Durable)
		}
	}
	if h := s.stop.Header; h != nil {
		end := s.head.abs + uint64(h.RecordBlocks())
		for _, l := range s.later {
			if l.at.abs < end {
				return fmt.Sprintf("the valid record at LSN %v lies inside it, so its header is damaged", l.LSN())
			}
		}
	}
	if s.inFlight > allowance {
		return fmt.Sprintf("at least %d records from it to LSN %v, but at most %d (logbufs) can be in flight at once",
			s.inFlight, s.later[len(s.later)-1].LSN(), allowance)
	}
	return ""
}

// countInFlight returns a lower bound on the records from the head to the
// newest later record, both included, counted in records: the bad one (or
// the one missing at the head), the later ones, and at least one record per
// gap between them, more if the gap is wider than maxBlocks.
func (s *logScan) countInFlight(maxBlocks, logBlocks uint64) int {
	n := 1
	next := s.head // where the first record not yet counted starts
	if h := s.stop.Header; h != nil {
		next = after(s.head, h, logBlocks)
	}
	counted := s.stop.Header != nil // the record at the head is counted, and known to end at next
	for _, l := range s.later {
		if gap := int64(l.at.abs) - int64(next.abs); gap > 0 || !counted {
			k := max(gap, 1)
			if l.at.cycle != next.cycle {
				k -= int64(maxBlocks) - 1 // the end of the log may hold a wrap gap, not records
			}
			m := max(1, (k+int64(maxBlocks)-1)/int64(maxBlocks))
			if !counted {
				m-- // the record at the head, already counted, is one of them
			}
			n += int(m)
		}
		counted = true
		n++
		next = after(l.at, l.Header, logBlocks)
	}
	return n
}

// stakeOf lists the committed transactions of the bad record (as far as it
// decodes) and of the valid records after it: what cutting the log drops.
func stakeOf(img []byte, stop *ScannedRecord, later []ScannedRecord, describe func([]byte) string) []StakedTxn {
	var out []StakedTxn
	add := func(lsn logbuf.LSN, ops []logbuf.Op) {
		for _, op := range ops {
			if op.ClientID != logbuf.ClientTransaction || op.Flags&logbuf.FlagCommit == 0 {
				continue
			}
			t := StakedTxn{TID: op.TID, Commit: lsn}
			for _, o := range ops {
				if o.TID == op.TID && o.Flags&(logbuf.FlagStart|logbuf.FlagCommit|logbuf.FlagContinue|logbuf.FlagWasCont) == 0 && describe != nil {
					t.Op = describe(o.Data)
				}
			}
			out = append(out, t)
		}
	}
	if h := stop.Header; h != nil && stop.Offset+int64(h.RecordBytes()) <= int64(len(img)) {
		if r, err := logbuf.DecodeDamaged(img[stop.Offset : stop.Offset+int64(h.RecordBytes())]); err == nil {
			add(stop.LSN(), r.Ops)
		}
	}
	for _, l := range later {
		add(l.LSN(), l.Record.Ops)
	}
	return out
}

// readRecord decodes the record expected at p. ok is false when nothing
// there claims to be that record (no header of that LSN: blocks from an
// older cycle); then the walk has simply ended. A bad record that is
// evidently not torn (a damaged header block, every block carrying the
// cycle, a CRC that verifies once a damaged length is corrected) has its
// whole field set.
func readRecord(img []byte, p pos) (r ScannedRecord, ok bool) {
	off := int64(p.block) * logbuf.BBSize
	r = ScannedRecord{at: p, Offset: off}
	b := img[off:]
	magic, cycle, lsnOK := logbuf.Identity(b, p.lsn())
	switch {
	case magic && cycle && lsnOK:
	case magic && cycle:
		// The header block of this cycle, at this position, with a
		// damaged h_lsn: a header block is written whole.
		r.Err = errors.New("record header: h_lsn does not name the record's position")
		if h, err := logbuf.ParseHeader(b); err != nil {
			r.Err = err
		} else {
			r.Err = fmt.Errorf("record header: h_lsn %v does not name the record's position", h.LSN)
		}
		r.whole = "its header block, of this cycle, is damaged"
		return r, true
	case (magic || cycle) && lsnOK:
		// A header naming this position with one cycle word damaged: the
		// record's bytes decide.
		if rr, ok := restamped(img, p); ok {
			return rr, true
		}
		if magic {
			r.Err = errors.New("record header: h_cycle does not match h_lsn")
			r.whole = "its header block names this position and cycle, so it was written in this cycle, and is damaged"
			return r, true
		}
		return r, false
	default:
		return r, false
	}
	h, err := logbuf.ParseHeader(b)
	if err != nil {
		r.Err = err
		r.whole = "its header block, of this cycle, is damaged"
		return r, true
	}
	r.Header = h
	r.Stored = h.CRC
	n := int64(h.RecordBytes())
	if off+n > int64(len(img)) {
		r.Err = fmt.Errorf("record of %d bytes runs past the end of the log", n)
		r.whole = "its header, of this cycle, claims a length no record has there"
		return r, true
	}
	// Decoding unstamps in place; img stays as read.
	rec := bytes.Clone(b[:n])
	_, crc, err := logbuf.VerifyRecord(rec)
	r.Computed = crc
	if err == nil {
		dec, err := logbuf.UnpackRecord(rec, h)
		if err != nil {
			r.Err = err
			r.whole = "its CRC verifies, so its bytes are as written"
			return r, true
		}
		r.Record = dec
		return r, true
	}
	r.Err = err
	switch {
	case len(logbuf.Uncarried(b[:n], h)) == 0:
		r.whole = fmt.Sprintf("every block of it carries its cycle %d, so it was written whole", h.Cycle)
	case logbuf.LengthDamaged(b[:n], h):
		r.whole = "it verifies with one bit of h_len cleared: it was written whole and its length is damaged"
	default:
		if rr, ok := restamped(img, p); ok {
			return rr, true
		}
		// Some block does not carry the cycle: torn, if it could have
		// been in flight.
	}
	return r, true
}

// restamped decodes the record at p with its cycle words restored, if that
// makes it verify.
func restamped(img []byte, p pos) (ScannedRecord, bool) {
	off := int64(p.block) * logbuf.BBSize
	rec := bytes.Clone(img[off:min(int64(len(img)), off+logbuf.MaxLogBSize)])
	n, err := logbuf.Restamp(rec, p.lsn())
	if err != nil || n == 0 {
		return ScannedRecord{}, false
	}
	h, crc, err := logbuf.VerifyRecord(rec)
	if err != nil {
		return ScannedRecord{}, false
	}
	dec, err := logbuf.UnpackRecord(rec, h)
	if err != nil {
		return ScannedRecord{}, false
	}
	return ScannedRecord{at: p, Offset: off, Record: dec, Header: h, Stored: h.CRC, Computed: crc, Restamped: n}, true
}

// corruption turns a scan that ended in corruption into its error.
func (s *logScan) corruption() error {
	if s.kind != scanCorrupt {
		return nil
	}
	return &CorruptionError{LSN: s.stop.LSN(), Offset: s.stop.Offset, Stored: s.stop.Stored, Computed: s.stop.Computed,
		Reason: s.stop.Err, Evidence: s.evidence, Durable: s.durable, AtStake: s.atStake}
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
