package journal

import (
	"io"
	"sync/atomic"

	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/internal/lockorder"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/statsfile"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xfsitems"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
)

// FS is a mounted store: the live model plus the log.
type FS struct {
	dir      string
	st       store.StoreFS
	lock     io.Closer // flock on the superblock while mounted
	sb       *store.Superblock
	opts     Options
	dataDir  string
	maxTxn   int // largest write region one transaction carries
	recovery Recovery

	mu       lockorder.RWMutex[lockorder.Model] // the model; held for writing while a transaction commits
	model    *meta.Model
	names    atomic.Uint64          // namespace changes committed (NamespaceGen)
	unlinked map[meta.Ino]bool      // inodes without links not yet freed (open or held), under mu
	forces   map[meta.Ino]forceLSNs // what fsync and fdatasync of each inode force; under mu
	x        *xlog.Log
	items    *xfsitems.Tracker // LogItemsXFS: the items each transaction logs; under mu

	// What a checkpoint writes: the model as of the newest durable record.
	shadowMu lockorder.Mutex[lockorder.Leaf]
	shadow   *meta.Model
	bound    xlog.Boundary

	times statsfile.CksumTimes // checksum time per record and per force

	files *datafile.Files // the data files and the in-core inodes

	ckptMu   lockorder.Mutex[lockorder.Checkpoint] // one checkpoint at a time
	runMu    lockorder.Mutex[lockorder.Runs]       // one runCheckpoint (or reap) at a time: its retry sees what an earlier one reaped
	ckptSeq  uint64
	ckptReq  chan struct{}
	reapReq  chan struct{} // a freed inode's free is durable: delete its data file (reap)
	ckptStop chan struct{}
	ckptDone chan struct{}
	ckpts    atomic.Uint64
	forcer   *xlog.Forcer
	ckptErr  atomic.Pointer[error] // the last checkpoint's failure; nil once one succeeds

	overlay datafile.Overlay // NoRecovery: what replay would have written to data files

	fsyncs atomic.Uint64
	// loggedData counts the file bytes the log carried: the bytes of
	// writes logged with them (data journal, immediate writes).
	loggedData atomic.Uint64
	fsyncHist  [statsfile.HistBuckets]atomic.Uint64
	ckptSyncs  atomic.Uint64          // fsyncs of the checkpoint file and the store directory
	flush      *datafile.FlushLatency // emulated flush latency; nil: none
	closed     atomic.Bool

	// afterCommit, if set (by tests), runs under the model lock after each
	// transaction commits.
	afterCommit func(tid uint32, op *meta.Op)
}

// Recovery reports what mounting found in the log.
func (fs *FS) Recovery() Recovery { return fs.recovery }

// Superblock returns the store's superblock.
func (fs *FS) Superblock() *store.Superblock { return fs.sb }

// Options returns the options in effect (with defaults filled in).
func (fs *FS) Options() Options { return fs.opts }

// forceLSNs is what a fsync of an inode must force: lsn, the newest
// transaction touching the inode, and data, the newest one fdatasync
// needs (size, new inode, logged data, a data-journal punch). Set by every
// commit (commitLocked), dropped when the inode is freed (forget).
type forceLSNs struct{ lsn, data logbuf.LSN }
