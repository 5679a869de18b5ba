package xlog

import (
	"fmt"

	"github.com/xlogfs/xlogfs/logbuf"
)

// ZeroAfterHead zeroes n blocks from head on (wrapping at the end of the
// log) and syncs them.
func ZeroAfterHead(dev Device, head Pos, n uint64) error {
	logBlocks := uint64(dev.Size() / logbuf.BBSize)
	zero := make([]byte, 256<<10)
	b := uint64(head.block)
	for n > 0 {
		k := min(n, logBlocks-b, uint64(len(zero)/logbuf.BBSize))
		if _, err := dev.WriteAt(zero[:k*logbuf.BBSize], int64(b*logbuf.BBSize)); err != nil {
			return fmt.Errorf("clearing %d stale log blocks past the head %v, at log offset %d: %w", k, head.LSN(), b*logbuf.BBSize, err)
		}
		n -= k
		b = (b + k) % logBlocks
	}
	if err := dev.Sync(); err != nil {
		return fmt.Errorf("syncing the cleared log blocks past the head %v: %w", head.LSN(), err)
	}
	return nil
}
