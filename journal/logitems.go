package journal

import (
	"fmt"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/logbuf"
)

// LogItems says what a transaction carries beside the logical op that
// recovery replays (package logbuf's documentation, Log items).
type LogItems uint8

const (
	// LogItemsLogical logs the logical op alone: the compact log.
	LogItemsLogical LogItems = iota
	// LogItemsXFS logs, after the op, the regions XFS would log for it
	// (journal/xfsitems): inode cores and forks, the dirty chunks of
	// directory and btree buffers, extent free intents and dones, each
	// item once per record. Recovery checks them and replays the op.
	LogItemsXFS
)

func (l LogItems) String() string {
	if l == LogItemsXFS {
		return "xfs"
	}
	return "logical"
}

// ParseLogItems accepts xfs and logical.
func ParseLogItems(s string) (LogItems, error) {
	switch s {
	case "xfs":
		return LogItemsXFS, nil
	case "logical":
		return LogItemsLogical, nil
	}
	return 0, fmt.Errorf("unknown log items %q (want xfs or logical)", s)
}

// regions returns what xlog.Log.Commit asks for op's transaction: its
// logical region alone, or with the XFS log items the record it starts
// in does not hold yet. It runs under fs.mu, with the model as it was
// before op.
func (fs *FS) regions(op *meta.Op, region []byte) func(rec logbuf.LSN) [][]byte {
	if fs.items == nil {
		return func(logbuf.LSN) [][]byte { return [][]byte{region} }
	}
	// A checkpoint writes the metadata back, as XFS's AIL writes items
	// back: what was dirty before it is not logged again.
	gen := fs.ckpts.Load()
	return func(rec logbuf.LSN) [][]byte { return fs.items.Build(fs.model, op, region, rec, gen) }
}
