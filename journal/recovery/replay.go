package recovery

import (
	"fmt"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/xfsitems"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
)

// Replayed is the outcome of replaying a scan onto a model.
type Replayed struct {
	Transactions int    // applied
	Dropped      int    // started but never committed: not applied
	LastTID      uint32 // newest transaction now in the model
}

// Replay applies the committed transactions of the scanned records that
// the checkpoint does not already hold, in log order. apply performs one op
// (onto the model, and in data-journal mode onto the data files). A
// transaction's first region is its op; the rest, if any, are XFS log
// items, checked and not applied.
func Replay(s *xlog.Scan, lastTID uint32, apply func(op *meta.Op) error) (Replayed, error) {
	var ra logbuf.Reassembler
	out := Replayed{LastTID: lastTID}
	for _, r := range s.Records {
		ops := r.Record.Ops[:0:0]
		for _, op := range r.Record.Ops {
			if op.ClientID == logbuf.ClientLog || xlog.NewerTID(op.TID, lastTID) {
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
			if len(tx.Regions) == 0 {
				return out, fmt.Errorf("replay: transaction %#x (LSN %v) has no regions, want its op", tx.TID, tx.Commit)
			}
			op, err := meta.DecodeOp(tx.Regions[0])
			if err != nil {
				return out, fmt.Errorf("replay: transaction %#x (LSN %v): %w", tx.TID, tx.Commit, err)
			}
			// The regions after the op are XFS log items (journal/xfsitems):
			// they are there to be the size XFS logs, not to be replayed,
			// but a region that is no well-formed item is a bad
			// transaction, as a bad op is.
			if _, err := xfsitems.Parse(tx.Regions[1:]); err != nil {
				return out, fmt.Errorf("replay: transaction %#x (LSN %v) %s: %w", tx.TID, tx.Commit, op.String(), err)
			}
			if err := apply(&op); err != nil {
				return out, fmt.Errorf("replay: transaction %#x (LSN %v) %s: %w", tx.TID, tx.Commit, op.String(), err)
			}
			out.Transactions++
			out.LastTID = tx.TID
		}
	}
	out.Dropped = ra.Pending()
	return out, nil
}
