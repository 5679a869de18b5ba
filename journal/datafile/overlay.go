package datafile

import "github.com/xlogfs/xlogfs/journal/meta"

// Overlay holds, for a NoRecovery mount (journal.Options.NoRecovery), what
// replay would have done to the data files: per inode, the ops that change
// a data file's bytes, in log order. A read lays them over the data file's
// bytes, so files read as a recovered mount would show them while nothing
// is written to the store.
type Overlay map[meta.Ino][]*meta.Op

// Add keeps op if it changes a data file's bytes (logData: in data-journal
// mode, where truncates and fallocates replay onto data files too),
// reporting whether it did: replay's choice of ops, made in memory.
func (o Overlay) Add(op *meta.Op, logData bool) bool {
	switch {
	case op.Type == meta.OpWrite && op.Data != nil,
		op.Type == meta.OpSetattr && op.Mask&meta.SetSize != 0 && logData,
		op.Type == meta.OpFallocate && logData:
		o[op.Ino] = append(o[op.Ino], op)
		return true
	}
	return false
}

// apply lays ino's ops over p, which holds the data file's bytes at off
// (zeros past its end).
func (o Overlay) apply(ino meta.Ino, p []byte, off int64) {
	end := off + int64(len(p))
	zero := func(from, to int64) {
		from, to = max(from, off), min(to, end)
		if from < to {
			clear(p[from-off : to-off])
		}
	}
	for _, op := range o[ino] {
		switch op.Type {
		case meta.OpWrite:
			from, to := max(op.Off, off), min(op.Off+int64(len(op.Data)), end)
			if from < to {
				copy(p[from-off:to-off], op.Data[from-op.Off:to-op.Off])
			}
		case meta.OpSetattr:
			zero(op.Size, end) // a cut: what lay past it reads as zeros if the file grows again
		case meta.OpFallocate:
			if op.Mode&(meta.FallocPunchHole|meta.FallocZeroRange) != 0 {
				zero(op.Off, op.Off+op.Len)
			}
		}
	}
}
