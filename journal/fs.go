package journal

import (
	"io"
	"sync/atomic"

	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/internal/lockorder"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/statsfile"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xfsitems"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
)

// FS is a mounted store: the live model plus the log. Its locks, their
// order and the goroutines that take them are the package
// documentation's (Locking); each field says which guards it. What mount
// sets and never changes again needs none.
type FS struct {
	dir      string
	st       store.StoreFS
	lock     io.Closer // flock on the superblock while mounted
	sb       *store.Superblock
	opts     Options
	dataDir  string
	maxTxn   int // largest write region one transaction carries
	recovery recovery.Report
	x        *xlog.Log              // the log (its own lock: xlog.Log.mu)
	files    *datafile.Files        // the data files and the in-core inodes (their own locks)
	overlay  datafile.Overlay       // NoRecovery: what replay would have written to data files
	flush    *datafile.FlushLatency // emulated flush latency; nil: none
	forcer   *xlog.Forcer

	// mu is the model lock, held for writing while a transaction commits
	// (commitLocked: across the log's Commit, which may wait for log
	// space) and for reading by lookups. It guards:
	mu       lockorder.RWMutex[lockorder.Model]
	model    *meta.Model
	unlinked map[meta.Ino]bool      // inodes without links not yet freed (open or held)
	forces   map[meta.Ino]forceLSNs // what fsync and fdatasync of each inode force
	items    *xfsitems.Tracker      // LogItemsXFS: the items each transaction logs
	// afterCommit, if set (by tests), runs under mu after each
	// transaction commits.
	afterCommit func(tid uint32, op *meta.Op)

	// shadowMu guards what a checkpoint writes: the model as of the
	// newest durable record, which the log writer advances (onDurable).
	shadowMu lockorder.Mutex[lockorder.Leaf]
	shadow   *meta.Model
	bound    xlog.Boundary

	// runMu: one runCheckpoint (or reap) at a time, so that its retry
	// sees what an earlier one reaped.
	runMu lockorder.Mutex[lockorder.Runs]

	// ckptMu: one checkpoint at a time (checkpoint), and no checkpoint
	// while a shrink forces and cuts (engine.BetweenCheckpoints). It
	// guards:
	ckptMu  lockorder.Mutex[lockorder.Checkpoint]
	ckptSeq uint64 // the checkpoint file's sequence number (mount sets it before any goroutine starts)

	// The checkpointer's requests and lifetime (channels), and what is
	// read without a lock (atomics).
	ckptReq  chan struct{}
	reapReq  chan struct{} // a freed inode's free is durable: delete its data file (reap)
	ckptStop chan struct{}
	ckptDone chan struct{}
	ckpts    atomic.Uint64
	ckptErr  atomic.Pointer[error] // the last checkpoint's failure; nil once one succeeds
	names    atomic.Uint64         // namespace changes committed (NamespaceGen)
	times    statsfile.CksumTimes  // checksum time per record and per force
	fsyncs   atomic.Uint64
	// loggedData counts the file bytes the log carried: the bytes of
	// writes logged with them (data journal, immediate writes).
	loggedData atomic.Uint64
	fsyncHist  [statsfile.HistBuckets]atomic.Uint64
	ckptSyncs  atomic.Uint64 // fsyncs of the checkpoint file and the store directory
	closed     atomic.Bool   // set under mu (unmount) or by Abandon
	// markCreates: the mount hands regular files to the kernel in
	// passthrough (MarkCreates), so Create makes them marked.
	markCreates atomic.Bool
}

// recovery.Report reports what mounting found in the log.
func (fs *FS) Recovery() recovery.Report { return fs.recovery }

// Superblock returns the store's superblock.
func (fs *FS) Superblock() *store.Superblock { return fs.sb }

// Options returns the options in effect (with defaults filled in).
func (fs *FS) Options() Options { return fs.opts }

// forceLSNs is what a fsync of an inode must force: lsn, the newest
// transaction touching the inode, and data, the newest one fdatasync
// needs (size, new inode, logged data, a data-journal punch). Set by every
// commit (commitLocked), dropped when the inode is freed (forget).
type forceLSNs struct{ lsn, data logbuf.LSN }
