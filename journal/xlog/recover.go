package xlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/xlogfs/xlogfs/logbuf"
)

// ScannedRecord is one record found walking the log.
type ScannedRecord struct {
	At     Pos
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
func (r *ScannedRecord) LSN() logbuf.LSN { return r.At.LSN() }

// scanKind says how the walk ended.
type scanKind int

const (
	ScanEnd     scanKind = iota // no record at the next position: the normal end
	ScanTorn                    // a record that may have been in flight is bad or missing: cut there
	scanCorrupt                 // a bad record that was durable: refuse
)

// Scan is what walking the log from a checkpoint's tail found
// (xlog_find_tail and xlog_verify_head, the xlogfs way: records are found by
// following the placement rule from the tail, not by binary search).
type Scan struct {
	Records  []ScannedRecord // valid records, in log order
	Tail     Pos             // where the walk started (the checkpoint's tail), in Head's terms
	Head     Pos             // where the next record goes after the last valid one
	Prev     uint32          // block of the last valid record (h_prev_block of the next)
	Kind     scanKind
	Stop     *ScannedRecord  // the bad (or missing) record at head, when kind != scanEnd
	Later    []ScannedRecord // valid records newer than head (dropped with a torn tail)
	Clean    bool            // the last record is an unmount record
	Live     uint64          // blocks from the tail to the head
	evidence string          // why stop is corrupt, not torn
	durable  logbuf.LSN      // the newest durable watermark of a later record
	InFlight int             // records from stop to the newest later record, at least
	// AtStake and Unread are what cutting the log at stop drops: the
	// committed transactions of the later records (whose CRCs verify),
	// and the records whose transactions cannot be listed (stop itself,
	// and any between the later ones that did not verify).
	AtStake []StakedTxn
	Unread  []UnreadRecord
	cov     logbuf.Coverage // the store's CRC coverage, which records verify under
}

// Stake is what cutting the log at s.Stop drops.
func (s *Scan) Stake() Stake { return Stake{Txns: s.AtStake, Unread: s.Unread} }

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

// UnreadRecord is a record that cutting the log drops but whose
// transactions cannot be listed: the bad record, whose bytes fail
// verification (nothing in its payload can be trusted, not even a tid), or
// a record between two later valid ones that is not valid itself.
type UnreadRecord struct {
	LSN logbuf.LSN
	Ops int    // the op count its header gives; -1 when its header cannot be read
	Why string // why its contents are unknown
}

func (u UnreadRecord) String() string {
	if u.Ops < 0 {
		return fmt.Sprintf("record %v: its transactions are unknown (%s)", u.LSN, u.Why)
	}
	return fmt.Sprintf("record %v: %s, contents unknown (%s)", u.LSN, plural(u.Ops, "op"), u.Why)
}

// Stake is what cutting the log at a bad record drops: the committed
// transactions that can be read, from records whose CRC verifies, and the
// records whose transactions cannot. With any of the latter, the count is
// a lower bound.
type Stake struct {
	Txns   []StakedTxn
	Unread []UnreadRecord
}

// Count says how many committed transactions are at stake: "1 committed
// transaction", "at least 58 committed transactions", "an unknown number
// of committed transactions".
func (s Stake) Count() string {
	switch {
	case len(s.Unread) == 0 && len(s.Txns) == 0:
		return "no committed transaction"
	case len(s.Unread) == 0:
		return plural(len(s.Txns), "committed transaction")
	case len(s.Txns) == 0:
		return "an unknown number of committed transactions"
	}
	return "at least " + plural(len(s.Txns), "committed transaction")
}

// Summary names what is at stake, the first few transactions in full, and
// the records whose transactions are unknown.
func (s Stake) Summary() string {
	const show = 5
	var b strings.Builder
	b.WriteString(s.Count())
	if len(s.Txns) > 0 {
		fmt.Fprintf(&b, ", possibly acknowledged (tid %#x to %#x): ", s.Txns[0].TID, s.Txns[len(s.Txns)-1].TID)
		for i, t := range s.Txns[:min(show, len(s.Txns))] {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(t.String())
		}
		if len(s.Txns) > show {
			fmt.Fprintf(&b, "; and %d more", len(s.Txns)-show)
		}
	}
	if len(s.Unread) > 0 {
		if len(s.Txns) > 0 {
			b.WriteString("; and those of ")
		} else {
			b.WriteString(": those of ")
		}
		for i, u := range s.Unread[:min(show, len(s.Unread))] {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(u.String())
		}
		if len(s.Unread) > show {
			fmt.Fprintf(&b, "; and %d more unreadable records", len(s.Unread)-show)
		}
	}
	return b.String()
}

// plural writes n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
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
	AtStake          []StakedTxn    // committed after it, in records that verify (what a cut drops)
	Unread           []UnreadRecord // it, and any record after it whose transactions cannot be read
}

// Stake is what cutting the log at the bad record drops.
func (e *CorruptionError) Stake() Stake { return Stake{Txns: e.AtStake, Unread: e.Unread} }

func (e *CorruptionError) Error() string {
	crc := ""
	if e.Computed != 0 || e.Stored != 0 {
		crc = fmt.Sprintf(", stored CRC %#08x, computed %#08x", e.Stored, e.Computed)
	}
	return fmt.Sprintf("log corrupt at LSN %v (log offset %d%s): %v; not a torn write: %s. At stake: %s. "+
		"Run 'xlogfs check --repair' to cut the log there (the transactions at stake are lost)",
		e.LSN, e.Offset, crc, e.Reason, e.Evidence, e.Stake().Summary())
}

func (e *CorruptionError) Unwrap() error { return e.Reason }

// Window is what walking the log needs to know of the checkpoint: where
// to start, and the geometry of the writer of the records after it.
type Window struct {
	Tail logbuf.LSN // where the walk starts: a record position
	// Coverage is the store's CRC coverage (its superblock's): every
	// record verifies under it.
	Coverage logbuf.Coverage
	// logBufs is how many records that writer can have had written but
	// not durable at a crash (an iclog is reused only once its record is
	// durable); logBSize is its iclog size, the largest record it writes.
	LogBufs, LogBSize int
	// Describe names what a committed transaction's region did, for the
	// transactions at stake; nil leaves them unnamed.
	Describe func(region []byte) string
}

// InFlightAllowance is how many records the writer of the records after
// w's tail can have had written but not durable at a crash: its logbufs,
// since an iclog is reused only once its record is durable.
func InFlightAllowance(w Window) int { return w.LogBufs }

var errNoRecord = errors.New("no record where the next one goes")

// ScanLog walks img (the whole log) from w's tail and decides how the log
// ends (see the package documentation: torn versus corrupt). It never
// modifies img.
func ScanLog(img []byte, w Window) *Scan {
	logBlocks := uint64(len(img) / logbuf.BBSize)
	start := Pos{cycle: w.Tail.Cycle(), block: w.Tail.Block()}
	start.Abs = uint64(start.block)
	s := &Scan{Tail: start, Head: start, cov: w.Coverage}
	p := start
	for p.Abs-start.Abs < logBlocks && uint64(p.block) < logBlocks {
		r, ok := ReadRecord(img, p, w.Coverage)
		if !ok {
			break // nothing claims to be the record at p: the end, unless newer records follow
		}
		if r.Err != nil {
			s.Stop = &r
			break
		}
		s.Records = append(s.Records, r)
		s.Prev = p.block
		p = After(p, r.Header, logBlocks)
		s.Head = p
	}
	if s.Stop == nil {
		s.Stop = &ScannedRecord{At: s.Head, Offset: int64(s.Head.block) * logbuf.BBSize, Err: errNoRecord}
	}

	// Valid records newer than the head: in-flight writes that outlived an
	// earlier one, or, past a damaged record, the rest of the log.
	s.Live = s.Head.Abs - start.Abs
	free := logBlocks - s.Live
	maxBlocks := uint64(w.LogBSize / logbuf.BBSize)
	for d := uint64(0); d < free; d++ {
		b := (uint64(s.Head.block) + d) % logBlocks
		off := b * logbuf.BBSize
		if binary.BigEndian.Uint32(img[off:]) != logbuf.HeaderMagic {
			continue
		}
		h, err := logbuf.ParseHeader(img[off:])
		if err != nil || uint64(h.LSN.Block()) != b || h.LSN <= s.Head.LSN() || h.LSN.Cycle() > logbuf.NextCycle(s.Head.cycle) {
			continue
		}
		if off+uint64(h.RecordBytes()) > uint64(len(img)) {
			continue
		}
		buf := bytes.Clone(img[off : off+uint64(h.RecordBytes())])
		_, crc, err := logbuf.VerifyRecord(buf, w.Coverage)
		if err != nil {
			continue
		}
		rec, err := logbuf.UnpackRecord(buf, h)
		if err != nil {
			continue
		}
		s.Later = append(s.Later, ScannedRecord{At: Pos{cycle: h.LSN.Cycle(), block: uint32(b), Abs: s.Head.Abs + d},
			Offset: int64(off), Header: h, Record: rec, Stored: h.CRC, Computed: crc})
		s.durable = max(s.durable, h.Durable)
		maxBlocks = max(maxBlocks, uint64(h.Size/logbuf.BBSize))
	}

	bad := s.Stop.Err != errNoRecord
	switch {
	case bad && s.Stop.whole != "":
		s.Kind, s.evidence = scanCorrupt, s.Stop.whole
	case bad || len(s.Later) > 0:
		s.Kind = ScanTorn
		s.InFlight = s.countInFlight(maxBlocks, logBlocks)
		if e := s.notInFlight(InFlightAllowance(w)); e != "" {
			s.Kind, s.evidence = scanCorrupt, e
		}
	default:
		s.Kind, s.Stop = ScanEnd, nil
	}
	if s.Kind != ScanEnd {
		s.AtStake, s.Unread = s.stakeOf(maxBlocks, logBlocks, w.Describe)
	}
	if n := len(s.Records); n > 0 && s.Kind == ScanEnd {
		last := s.Records[n-1].Record
		s.Clean = len(last.Ops) == 1 && last.Ops[0].ClientID == logbuf.ClientLog && last.Ops[0].Flags&logbuf.FlagUnmount != 0
	}
	return s
}

// After returns where the record after the one with header h at p goes.
func After(p Pos, h *logbuf.Header, logBlocks uint64) Pos {
	n := uint64(h.RecordBlocks())
	return Wrap(Pos{cycle: p.cycle, block: p.block + uint32(n), Abs: p.Abs + n}, uint64(h.Size/logbuf.BBSize), logBlocks)
}

// notInFlight returns why the bad or missing record at the head cannot
// have been in flight at the crash, or "" if it may have been (then it is
// a torn write).
func (s *Scan) notInFlight(allowance int) string {
	for _, l := range s.Later {
		if l.Header.Durable >= s.Head.LSN() {
			return fmt.Sprintf("the valid record at LSN %v, written after it, says the log was durable up to LSN %v", l.LSN(), l.Header.Durable)
		}
	}
	if h := s.Stop.Header; h != nil {
		end := s.Head.Abs + uint64(h.RecordBlocks())
		for _, l := range s.Later {
			if l.At.Abs < end {
				return fmt.Sprintf("the valid record at LSN %v lies inside it, so its header is damaged", l.LSN())
			}
		}
	}
	if s.InFlight > allowance {
		return fmt.Sprintf("at least %d records from it to LSN %v, but at most %d (logbufs) can be in flight at once",
			s.InFlight, s.Later[len(s.Later)-1].LSN(), allowance)
	}
	return ""
}

// countInFlight returns a lower bound on the records from the head to the
// newest later record, both included, counted in records: the bad one (or
// the one missing at the head), the later ones, and at least one record per
// gap between them, more if the gap is wider than maxBlocks.
func (s *Scan) countInFlight(maxBlocks, logBlocks uint64) int {
	n := 1
	next := s.Head // where the first record not yet counted starts
	if h := s.Stop.Header; h != nil {
		next = After(s.Head, h, logBlocks)
	}
	counted := s.Stop.Header != nil // the record at the head is counted, and known to end at next
	for _, l := range s.Later {
		if gap := int64(l.At.Abs) - int64(next.Abs); gap > 0 || !counted {
			k := max(gap, 1)
			if l.At.cycle != next.cycle {
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
		next = After(l.At, l.Header, logBlocks)
	}
	return n
}

// stakeOf lists what cutting the log at the head drops: the committed
// transactions of the valid records after it, and the records whose
// transactions cannot be read. The bad record's payload failed
// verification: what it seems to hold (a tid with a flipped bit, a COMMIT
// that is not one) is never listed; its header, when it parses, gives its
// op count, and that is all that is said of it. A gap between the end of
// one known record and the next valid one (not the end of the log, which
// may hold a wrap gap) holds at least one record that did not verify.
func (s *Scan) stakeOf(maxBlocks, logBlocks uint64, describe func([]byte) string) ([]StakedTxn, []UnreadRecord) {
	var txns []StakedTxn
	bad := UnreadRecord{LSN: s.Stop.LSN(), Ops: -1}
	next, known := s.Head, false // where the first record not yet accounted for starts
	switch h := s.Stop.Header; {
	case h != nil:
		bad.Ops, next, known = int(h.NumLogOps), After(s.Head, h, logBlocks), true
		bad.Why = s.Stop.Err.Error()
		if s.Stop.Computed != s.Stop.Stored && s.Stop.Computed != 0 {
			bad.Why = "CRC mismatch"
		}
	case s.Stop.Err == errNoRecord:
		bad.Why = "no record header where it goes"
	default:
		bad.Why = "its header cannot be read: " + s.Stop.Err.Error()
	}
	unread := []UnreadRecord{bad}
	for _, l := range s.Later {
		gap := int64(l.At.Abs) - int64(next.Abs)
		if l.At.cycle != next.cycle {
			gap -= int64(maxBlocks) - 1 // the end of the log may hold a wrap gap, not records
		}
		if known && gap > 0 {
			unread = append(unread, UnreadRecord{LSN: next.LSN(), Ops: -1,
				Why: fmt.Sprintf("no valid record from there to LSN %v", l.LSN())})
		}
		known = true
		next = After(l.At, l.Header, logBlocks)
		ops := l.Record.Ops
		for _, op := range ops {
			if op.ClientID != logbuf.ClientTransaction || op.Flags&logbuf.FlagCommit == 0 {
				continue
			}
			t := StakedTxn{TID: op.TID, Commit: l.LSN()}
			for _, o := range ops {
				// The first whole region is the op; those after it
				// (log items) do not name the transaction.
				if o.TID == op.TID && o.Flags&(logbuf.FlagStart|logbuf.FlagCommit|logbuf.FlagContinue|logbuf.FlagWasCont) == 0 && describe != nil && t.Op == "" {
					t.Op = describe(o.Data)
				}
			}
			txns = append(txns, t)
		}
	}
	return txns, unread
}

// ReadRecord decodes the record expected at p, verifying it under the
// store's coverage cov. ok is false when nothing
// there claims to be that record (no header of that LSN: blocks from an
// older cycle); then the walk has simply ended. A bad record that is
// evidently not torn (a damaged header block, every block carrying the
// cycle, a CRC that verifies once a damaged length is corrected) has its
// whole field set.
func ReadRecord(img []byte, p Pos, cov logbuf.Coverage) (r ScannedRecord, ok bool) {
	off := int64(p.block) * logbuf.BBSize
	r = ScannedRecord{At: p, Offset: off}
	b := img[off:]
	magic, cycle, lsnOK := logbuf.Identity(b, p.LSN())
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
		if rr, ok := restamped(img, p, cov); ok {
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
		r.Err = fmt.Errorf("record of %d bytes at log offset %d runs past the end of the log (%d bytes)", n, off, len(img))
		r.whole = "its header, of this cycle, claims a length no record has there"
		return r, true
	}
	// Decoding unstamps in place; img stays as read.
	rec := bytes.Clone(b[:n])
	_, crc, err := logbuf.VerifyRecord(rec, cov)
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
	case logbuf.LengthDamaged(b[:n], h, cov):
		r.whole = "it verifies with one bit of h_len cleared: it was written whole and its length is damaged"
	default:
		if rr, ok := restamped(img, p, cov); ok {
			return rr, true
		}
		// Some block does not carry the cycle: torn, if it could have
		// been in flight.
	}
	return r, true
}

// restamped decodes the record at p with its cycle words restored, if that
// makes it verify.
func restamped(img []byte, p Pos, cov logbuf.Coverage) (ScannedRecord, bool) {
	off := int64(p.block) * logbuf.BBSize
	rec := bytes.Clone(img[off:min(int64(len(img)), off+logbuf.MaxLogBSize)])
	n, err := logbuf.Restamp(rec, p.LSN())
	if err != nil || n == 0 {
		return ScannedRecord{}, false
	}
	h, crc, err := logbuf.VerifyRecord(rec, cov)
	if err != nil {
		return ScannedRecord{}, false
	}
	dec, err := logbuf.UnpackRecord(rec, h)
	if err != nil {
		return ScannedRecord{}, false
	}
	return ScannedRecord{At: p, Offset: off, Record: dec, Header: h, Stored: h.CRC, Computed: crc, Restamped: n}, true
}

// Corruption turns a scan that ended in corruption into its error.
func (s *Scan) Corruption() error {
	if s.Kind != scanCorrupt {
		return nil
	}
	return &CorruptionError{LSN: s.Stop.LSN(), Offset: s.Stop.Offset, Stored: s.Stop.Stored, Computed: s.Stop.Computed,
		Reason: s.Stop.Err, Evidence: s.evidence, Durable: s.durable, AtStake: s.AtStake, Unread: s.Unread}
}

// NewerTID reports whether tid comes after last, in serial-number
// arithmetic (tids wrap at 2^32).
func NewerTID(tid, last uint32) bool { return int32(tid-last) > 0 }
