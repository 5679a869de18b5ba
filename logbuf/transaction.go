package logbuf

import "fmt"

// Transaction is a transaction reassembled from op headers: its regions in
// order, each whole again however it was split across records.
type Transaction struct {
	TID     uint32
	Start   LSN      // record holding the START op
	Commit  LSN      // record holding the COMMIT op
	Regions [][]byte // copies; safe to keep after the records are reused
	Unmount bool     // an unmount record (clientid XFS_LOG, UNMOUNT flag), no regions
}

// Reassembler puts transactions back together from records fed in LSN
// order (the recovery pass of xlog_do_recovery_pass, without the replay).
// Transactions are delimited as XFS delimits them: a zero-length START op,
// region ops, a zero-length COMMIT op; a split region is one op with
// CONTINUE followed by WAS_CONT ops, the last with END.
type Reassembler struct {
	open map[uint32]*pending
}

type pending struct {
	t    Transaction
	cont bool // the last region continues in a WAS_CONT op
}

// Add feeds one record's ops and returns the transactions it committed.
func (r *Reassembler) Add(lsn LSN, ops []Op) ([]Transaction, error) {
	if r.open == nil {
		r.open = make(map[uint32]*pending)
	}
	var done []Transaction
	for i, op := range ops {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("record %v op %d (tid %#x, flags %s): %s", lsn, i, op.TID, FlagString(op.Flags), fmt.Sprintf(format, args...))
		}
		if op.ClientID == ClientLog && op.Flags&FlagUnmount != 0 {
			done = append(done, Transaction{TID: op.TID, Start: lsn, Commit: lsn, Unmount: true})
			continue
		}
		if op.ClientID != ClientTransaction {
			return done, fail("unknown client id %#x", op.ClientID)
		}
		p := r.open[op.TID]
		switch {
		case op.Flags&FlagStart != 0:
			if p != nil {
				return done, fail("transaction started twice")
			}
			r.open[op.TID] = &pending{t: Transaction{TID: op.TID, Start: lsn}}
		case p == nil:
			return done, fail("op for a transaction that was never started")
		case op.Flags&FlagWasCont != 0:
			if !p.cont {
				return done, fail("continuation of a region that was not continued")
			}
			last := len(p.t.Regions) - 1
			p.t.Regions[last] = append(p.t.Regions[last], op.Data...)
			p.cont = op.Flags&FlagContinue != 0
		case p.cont:
			return done, fail("new op while a region awaits its continuation")
		case op.Flags&FlagCommit != 0:
			p.t.Commit = lsn
			done = append(done, p.t)
			delete(r.open, op.TID)
		default:
			p.t.Regions = append(p.t.Regions, append([]byte(nil), op.Data...))
			p.cont = op.Flags&FlagContinue != 0
		}
	}
	return done, nil
}

// Pending is the number of transactions started but not committed: at the
// end of the log these are dropped, never replayed.
func (r *Reassembler) Pending() int { return len(r.open) }
