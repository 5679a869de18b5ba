package xlog

import (
	"errors"
	"time"
)

// The periodic log force: a bound on how long committed metadata may stay
// in memory only. Transactions are copied into the active iclog and reach
// the disk when an fsync forces the log or the iclog fills; on a mount that
// goes idle after a burst of metadata changes (a tar extract, a mkdir -p)
// neither may happen, and checkpoints write out only records already
// switched out. XFS bounds this with its log worker, which forces the log
// every xfs_syncd_centisecs (30 s by default); ext4's journal commits every
// 5 s (commit=5). xlogfs forces every LogForceInterval, 5 s by default, as
// ext4 does: a force of an idle log costs nothing (there is nothing to
// write), one of a log with work in it costs one record write and one
// fdatasync per interval, which no workload notices next to its own, and a
// crash of an idle mount then loses nothing older than 5 s.

// DefaultLogForceInterval is how often a mounted filesystem forces its log.
const DefaultLogForceInterval = 5 * time.Second

// Forcer forces the log every interval until halted (xfs_log_worker).
type Forcer struct {
	stop chan struct{}
	done chan struct{}
}

// StartForcer calls force every interval, in a goroutine of its own.
// A force that fails stops it, after saying so through logf, unless the
// log was closed meanwhile (then there is nothing left to force).
func StartForcer(interval time.Duration, force func() error, logf func(string, ...any)) *Forcer {
	f := &Forcer{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-f.stop:
				return
			case <-t.C:
			}
			if err := force(); err != nil {
				if !errors.Is(err, ErrClosed) {
					logf("periodic log force failed: %v", err)
				}
				return
			}
		}
	}()
	return f
}

// Halt stops the forcer and waits for a force in progress to end.
func (f *Forcer) Halt() {
	if f == nil {
		return
	}
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	<-f.done
}
