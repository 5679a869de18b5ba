package journal

import (
	"fmt"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
)

// JournalMode says what goes through the log.
type JournalMode uint8

const (
	// JournalMeta logs metadata only, as XFS does; fsync writes the
	// file's data back, then forces the log.
	JournalMeta JournalMode = iota
	// JournalData logs written bytes too, as ext4 data=journal does;
	// fsync is a log force alone, and data files catch up at checkpoints.
	JournalData
)

func (j JournalMode) String() string {
	if j == JournalData {
		return "data"
	}
	return "meta"
}

// ParseJournalMode accepts meta and data.
func ParseJournalMode(s string) (JournalMode, error) {
	switch s {
	case "meta":
		return JournalMeta, nil
	case "data":
		return JournalData, nil
	}
	return 0, fmt.Errorf("unknown journal mode %q (want meta or data)", s)
}

// Options configure a mount of a store.
type Options struct {
	Mode               cksum.Mode  // how records are checksummed
	Impl               cksum.Impl  // crc32c implementation (zero: the best)
	Journal            JournalMode // what the log carries
	LogBSize           int         // iclog size; 0: the superblock's default
	LogBufs            int         // iclog count; 0: 8, or fewer if the log is small
	CheckpointInterval time.Duration
	LogForceInterval   time.Duration                 // periodic log force (xlog/logforce.go); 0: DefaultLogForceInterval
	Device             xlog.Device                   // the log device; nil: DIR/log
	Store              store.StoreFS                 // the filesystem DIR is on; nil: the real one
	Logf               func(format string, a ...any) // warnings (torn tail, ...); nil: stderr

	// FlushLatency, if set, makes every flush of the log and every data
	// file sync take exactly this long (at least: see datafile.FlushLatency), to
	// emulate a device of that latency. A measuring aid.
	FlushLatency time.Duration
	// OnFail, if set, is called once, when the journal stops accepting
	// changes (see State), with a *FailedError saying why, instead of
	// Logf.
	OnFail func(err error)

	// ReadOnly mounts the store read-only: recovered, then every change
	// refused with EROFS; NoRecovery (with ReadOnly) replays the log in
	// memory only and writes nothing to the store (see readonly.go).
	ReadOnly, NoRecovery bool

	// AllowMissingData mounts a store whose data files lack bytes that
	// were durable (deleted or cut behind its back), which a mount
	// otherwise refuses: those files' reads and writes fail with EIO
	// until a truncate to 0, and their data files are left as they are
	// (recovery.MissingData, the package documentation's Recovery).
	AllowMissingData bool

	// ImmediateWrite, in metadata-journal mode, logs writes of at most
	// this many bytes with their bytes, so that their fsync is a log
	// force alone (datafile/immediate.go); 0: none. In a passthrough
	// mount, only the writes of opens on the log route (SyncWrites).
	ImmediateWrite int
	// SyncWrites picks, in a passthrough mount, the opens whose writes go
	// through the daemon and the log (datafile/route.go): per file from
	// its history (the zero value, SyncAuto), all, or none but the
	// synchronous ones.
	SyncWrites datafile.SyncWrites

	// LogItems says what a transaction carries beside its logical op:
	// nothing (LogItemsLogical, the zero value) or the log items XFS
	// would log for it (LogItemsXFS; logitems.go).
	LogItems LogItems
}

// DefaultCheckpointInterval is how often a mounted filesystem checkpoints.
const DefaultCheckpointInterval = 30 * time.Second
