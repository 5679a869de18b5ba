package journal

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/statsfile"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xfsitems"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
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

	mu       sync.RWMutex // the model; held for writing while a transaction commits
	model    *meta.Model
	names    atomic.Uint64     // namespace changes committed (NamespaceGen)
	unlinked map[meta.Ino]bool // inodes without links not yet freed (open or held), under mu
	x        *xlog.Log
	items    *xfsitems.Tracker // LogItemsXFS: the items each transaction logs; under mu

	// What a checkpoint writes: the model as of the newest durable record.
	shadowMu sync.Mutex
	shadow   *meta.Model
	bound    xlog.Boundary

	times statsfile.CksumTimes // checksum time per record and per force

	files *datafile.Files // the data files and the in-core inodes

	ckptMu   sync.Mutex // one checkpoint at a time
	runMu    sync.Mutex // one runCheckpoint at a time: its retry sees what an earlier one reaped
	ckptSeq  uint64
	ckptReq  chan struct{}
	ckptStop chan struct{}
	ckptDone chan struct{}
	ckpts    atomic.Uint64
	forcer   *xlog.Forcer
	ckptErr  atomic.Pointer[error] // the last checkpoint's failure; nil once one succeeds

	overlay datafile.Overlay // NoRecovery: what replay would have written to data files

	fsyncs    atomic.Uint64
	fsyncHist [statsfile.HistBuckets]atomic.Uint64
	ckptSyncs atomic.Uint64          // fsyncs of the checkpoint file and the store directory
	flush     *datafile.FlushLatency // emulated flush latency; nil: none
	closed    atomic.Bool

	// afterCommit, if set (by tests), runs under the model lock after each
	// transaction commits.
	afterCommit func(tid uint32, op *meta.Op)
}

// Open mounts the store in dir: it loads the checkpoint, recovers the log
// (replaying committed transactions, cutting a torn tail, refusing
// corruption), writes a fresh checkpoint, and starts the log.
func Open(dir string, opts Options) (_ *FS, err error) {
	if opts.Store == nil {
		opts.Store = store.OSFS()
	}
	if err := readOnlyOptions(&opts); err != nil {
		return nil, err
	}
	st := opts.Store
	sb, err := store.ReadSuperblock(st, dir)
	if err != nil {
		return nil, err
	}
	lock, err := store.Lock(st, dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.Close()
		}
	}()
	ck, err := store.ReadCheckpoint(st, dir)
	if err != nil {
		return nil, err
	}
	if opts.Impl.Update == nil {
		opts.Impl = cksum.Best()
	}
	if opts.CheckpointInterval <= 0 {
		opts.CheckpointInterval = DefaultCheckpointInterval
	}
	if opts.LogForceInterval <= 0 {
		opts.LogForceInterval = xlog.DefaultLogForceInterval
	}
	if opts.Logf == nil {
		opts.Logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, "xlogfs: "+f+"\n", a...) }
	}
	if err := chooseGeometry(sb, &opts); err != nil {
		return nil, err
	}
	dev := opts.Device
	if dev == nil {
		open := recovery.OpenLogDevice
		if opts.NoRecovery {
			open = openReadOnlyDevice
		}
		if dev, err = open(st, filepath.Join(dir, store.LogName)); err != nil {
			return nil, err
		}
	}
	fs, err := open(dir, sb, ck, dev, opts)
	if err != nil {
		dev.Close()
		return nil, err
	}
	fs.lock = lock
	return fs, nil
}

// chooseGeometry settles logbsize and logbufs: the user's choice if the log
// has room for it (an error if not), else the largest that fits.
func chooseGeometry(sb *store.Superblock, o *Options) error {
	bsizeSet, bufsSet := o.LogBSize != 0, o.LogBufs != 0
	if !bsizeSet {
		o.LogBSize = sb.LogBSize
	}
	if err := logbuf.CheckLogBSize(o.LogBSize); err != nil {
		return err
	}
	if !bufsSet {
		o.LogBufs = logbuf.MaxLogBufs
		for o.LogBufs > logbuf.MinLogBufs && !store.LogFits(sb.LogSize, o.LogBufs, o.LogBSize) {
			o.LogBufs--
		}
	}
	if o.LogBufs < logbuf.MinLogBufs || o.LogBufs > logbuf.MaxLogBufs {
		return fmt.Errorf("logbufs %d: must be from %d to %d", o.LogBufs, logbuf.MinLogBufs, logbuf.MaxLogBufs)
	}
	if !store.LogFits(sb.LogSize, o.LogBufs, o.LogBSize) {
		return fmt.Errorf("the %d KiB log is too small for %d log buffers of %d KiB (it must hold 4 × (logbufs+1) × logbsize); "+
			"choose a smaller --logbsize or --logbufs, or mkfs a larger --log-size", sb.LogSize>>10, o.LogBufs, o.LogBSize>>10)
	}
	return nil
}

func open(dir string, sb *store.Superblock, ck *store.Checkpoint, dev xlog.Device, opts Options) (*FS, error) {
	if dev.Size() != sb.LogSize {
		return nil, fmt.Errorf("%s: log is %d bytes, superblock says %d", filepath.Join(dir, store.LogName), dev.Size(), sb.LogSize)
	}
	fs := &FS{
		dir: dir, st: opts.Store, sb: sb, opts: opts, dataDir: filepath.Join(dir, store.DataDirName),
		model: ck.Model, unlinked: map[meta.Ino]bool{},
		ckptSeq: ck.Seq, ckptReq: make(chan struct{}, 1), ckptStop: make(chan struct{}), ckptDone: make(chan struct{}),
	}
	if opts.FlushLatency > 0 {
		fs.flush = &datafile.FlushLatency{D: opts.FlushLatency}
		dev = flushDevice{Device: dev, lat: fs.flush}
	}
	// A transaction may carry at most an eighth of the log, so that the
	// tail can always move past a finished one while another waits.
	fs.maxTxn = min(1<<20, int(sb.LogSize/8))
	if _, err := store.MkdirAll(fs.st, fs.dataDir); err != nil {
		return nil, err
	}
	if opts.NoRecovery {
		fs.overlay = datafile.Overlay{}
	}
	fs.files = datafile.New(datafile.Config{
		Store: fs.st, Dir: fs.dataDir, LogData: opts.Journal == JournalData, ImmediateWrite: opts.ImmediateWrite, SyncWrites: opts.SyncWrites,
		MaxTxn: fs.maxTxn, ReadOnly: opts.ReadOnly, Flush: fs.flush, Overlay: fs.overlay, Logf: opts.Logf,
		FlushCovers: xlog.IsStoreLog(dev) && store.SameFilesystem(fs.st, filepath.Join(dir, store.LogName), fs.dataDir),
	})
	fs.files.SetEngine(engine{fs})
	if opts.LogItems == LogItemsXFS {
		fs.items = xfsitems.NewTracker()
	}

	rec, err := recovery.Recover(recovery.Mount{
		Log: dev, LogSize: sb.LogSize, Coverage: sb.Coverage, Checkpoint: ck, Files: fs.files, LogData: opts.Journal == JournalData,
		LogBSize: opts.LogBSize, Overlay: fs.overlay, AllowMissingData: opts.AllowMissingData, Logf: opts.Logf,
	})
	if err != nil {
		return nil, err
	}
	fs.recovery = rec.Report
	head := rec.Head
	fs.bound = xlog.Boundary{Tail: head, LastTID: rec.LastTID}
	fs.shadow = fs.model.Clone()
	if !opts.NoRecovery {
		if err := fs.writeCheckpointFile(fs.shadow, fs.bound); err != nil {
			return nil, fmt.Errorf("mount: %w", err)
		}
	}
	fs.x, err = xlog.New(xlog.Config{
		Dev: dev, UUID: sb.UUID, Coverage: sb.Coverage, LogBSize: opts.LogBSize, LogBufs: opts.LogBufs,
		Sum:  cksum.NewSummer(opts.Mode, opts.Impl),
		Head: head, PrevBlock: rec.PrevBlock, Tail: head, LastTID: rec.LastTID,
		Times: &fs.times, OnDurable: fs.onDurable, WantCheckpoint: fs.requestCheckpoint, OnFail: fs.failed,
	})
	if err != nil {
		return nil, err
	}
	if opts.ReadOnly {
		close(fs.ckptDone) // nothing to checkpoint or force: no change is taken
		return fs, nil
	}
	go fs.checkpointer()
	fs.forcer = xlog.StartForcer(opts.LogForceInterval, func() error {
		fs.files.LearnAll()
		return fs.x.ForceAll()
	}, opts.Logf)
	return fs, nil
}

// Recovery reports what mounting found in the log.
func (fs *FS) Recovery() Recovery { return fs.recovery }

// Superblock returns the store's superblock.
func (fs *FS) Superblock() *store.Superblock { return fs.sb }

// Options returns the options in effect (with defaults filled in).
func (fs *FS) Options() Options { return fs.opts }

// Close checkpoints, writes the unmount record and stops the log: the next
// mount finds a clean log and replays nothing.
func (fs *FS) Close() error {
	// What the kernel wrote to data files still open (a lazy unmount)
	// goes into the log with the rest.
	fs.files.LearnAll()
	// No transaction from here on. The lock comes before the checkpointer
	// stops: a transaction waiting for log space holds it, and only a
	// checkpoint can let it finish.
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed.Load() {
		return nil
	}
	close(fs.ckptStop)
	<-fs.ckptDone
	fs.forcer.Halt()
	// Whoever held or had open the unlinked inodes is gone with the
	// mount: free them now, so the store is left without orphans.
	var err error
	for _, ino := range slices.Sorted(maps.Keys(fs.model.Inodes)) {
		if fs.model.Inodes[ino].Nlink == 0 && ino != meta.RootIno && err == nil && !fs.opts.ReadOnly {
			op := meta.Op{Type: meta.OpFree, Ino: ino}
			var lsn logbuf.LSN
			if lsn, err = fs.commitLocked(&op); err == nil {
				fs.forget(ino, lsn)
			}
		}
	}
	fs.closed.Store(true)
	// A read-only mount changed nothing since its mount wrote its
	// checkpoint: the unmount record alone makes the log clean (and a
	// NoRecovery mount writes nothing, leaving the log as it found it).
	if err == nil && !fs.opts.ReadOnly {
		err = fs.checkpoint(true)
	}
	if err == nil && !fs.opts.NoRecovery {
		err = fs.x.WriteUnmount()
	}
	fs.x.Stop()
	fs.files.CloseAll()
	if cerr := fs.x.Dev.Close(); err == nil {
		err = cerr
	}
	fs.lock.Close()
	return err
}

// Abandon stops the filesystem as a crash would: no checkpoint, no
// unmount record, nothing synced. For tests and for giving up after a
// failed log write.
func (fs *FS) Abandon() {
	if fs.closed.Swap(true) {
		return
	}
	close(fs.ckptStop)
	<-fs.ckptDone
	fs.forcer.Halt()
	fs.x.Stop()
	fs.files.CloseAll()
	fs.x.Dev.Close()
	fs.lock.Close()
}

// Errno maps an error of the journal to the errno a caller reports, the
// one mapping of the filesystem (package fusefs answers FUSE with it): 0
// for nil; EIO for a journal that has stopped, whatever stopped it (a full
// disk under the log is no reason to tell the caller ENOSPC); an errno
// anywhere in err's chain passes through; anything else (a failed data
// file) is EIO.
func Errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var f *xlog.FailedError
	if errors.As(err, &f) || errors.Is(err, xlog.ErrClosed) {
		return syscall.EIO
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return syscall.EIO
}

// errno is Errno as the error the journal's methods return: nil for nil.
func errno(err error) error {
	if e := Errno(err); e != 0 {
		return e
	}
	return nil
}

// commitLocked validates op against the model, copies it into the log,
// then applies it to the model, all under the model lock so that the log
// order is the order of the model's changes. The model changes only once
// the op is in the log: an op the log refuses (it failed, or it stopped
// while the op waited for space) leaves the model exactly as it was. It
// returns the LSN to force for the op to be durable. The caller holds fs.mu
// for writing.
func (fs *FS) commitLocked(op *meta.Op) (logbuf.LSN, error) {
	if fs.closed.Load() {
		return 0, syscall.EIO
	}
	if fs.opts.ReadOnly {
		return 0, syscall.EROFS
	}
	if err := fs.x.Failure(); err != nil {
		return 0, err
	}
	if err := fs.model.Validate(op); err != nil {
		return 0, err
	}
	var oldSize int64 = -1
	if in := fs.model.Inodes[op.Ino]; in != nil {
		oldSize = in.Size
	}
	region := op.Encode(make([]byte, 0, op.EncodedLen()))
	kept := *op
	if op.Type == meta.OpWrite {
		kept.Data = nil // the shadow needs no file bytes, and the caller owns them
	} else {
		kept.Data = slices.Clone(op.Data)
	}
	lsn, err := fs.x.Commit(fs.regions(op, region), &kept)
	if err != nil {
		if fs.items != nil {
			fs.items.Reset()
		}
		return 0, err
	}
	if err := fs.model.Apply(op); err != nil {
		// Validate said it would apply, and nothing changed the model
		// since: only a bug gets here, and the log now holds an op the
		// model refused, so nothing more may be logged.
		err = fmt.Errorf("the model refused %s after validating it: %w", op, err)
		fs.x.Fail(err)
		return 0, &xlog.FailedError{Reason: err}
	}
	switch op.Type {
	case meta.OpCreate, meta.OpLink, meta.OpUnlink, meta.OpRmdir, meta.OpRename:
		fs.names.Add(1)
	}
	if fs.afterCommit != nil {
		fs.afterCommit(fs.x.LastCommitted(), op)
	}
	// Record what fsync and fdatasync of the inodes involved must force.
	for _, ino := range []meta.Ino{op.Ino, op.Parent, op.NewParent} {
		if ino == 0 {
			continue
		}
		st := fs.files.State(ino)
		st.LSN = lsn
		if ino == op.Ino {
			in := fs.model.Inodes[ino]
			if op.Type == meta.OpCreate || in != nil && in.Size != oldSize || op.Data != nil || fs.zeroesLogged(op) || fs.supersedesLogged(op) {
				st.DataLSN = lsn
			}
		}
	}
	return lsn, nil
}

// NamespaceGen counts the namespace changes committed since mount
// (creates, links, unlinks, rmdirs, renames): a directory listing taken
// when it had one value is the listing of now while it still has it.
func (fs *FS) NamespaceGen() uint64 { return fs.names.Load() }

// zeroesLogged reports whether op zeroes file bytes that only the log
// holds until a checkpoint: a hole punch or zero range in data-journal mode,
// which fdatasync must force like written bytes, or a replay of older
// logged bytes would bring the punched ones back.
func (fs *FS) zeroesLogged(op *meta.Op) bool {
	return fs.opts.Journal == JournalData && op.Type == meta.OpFallocate && op.Mode&(meta.FallocPunchHole|meta.FallocZeroRange) != 0
}

// supersedesLogged reports whether op, with immediate writes on, changes
// file bytes by other means than logging them (a write to the data file
// only, a hole punch or zero range): fdatasync must force it, or a replay
// would write older logged bytes over what it made durable (datafile/immediate.go).
func (fs *FS) supersedesLogged(op *meta.Op) bool {
	if fs.opts.Journal != JournalMeta || fs.opts.ImmediateWrite == 0 {
		return false
	}
	return op.Type == meta.OpWrite && op.Data == nil || op.Type == meta.OpFallocate && op.Mode&(meta.FallocPunchHole|meta.FallocZeroRange) != 0
}

// commit takes the model lock and commits op.
func (fs *FS) commit(op *meta.Op) (logbuf.LSN, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.commitLocked(op)
}

// onDurable runs in the log writer after a sync, for each record made
// durable: the shadow model catches up with its transactions, and the
// checkpoint boundary moves.
func (fs *FS) onDurable(txns []xlog.Committed, bound xlog.Boundary) {
	fs.shadowMu.Lock()
	defer fs.shadowMu.Unlock()
	for _, t := range txns {
		op := t.Item.(*meta.Op)
		if err := fs.shadow.Apply(op); err != nil {
			// The live model accepted it; the same ops in the same
			// order cannot fail here unless memory is corrupt.
			panic(fmt.Sprintf("journal: shadow model rejected tid %#x %s: %v", t.TID, op, err))
		}
	}
	fs.bound = bound
}

func (fs *FS) requestCheckpoint() {
	select {
	case fs.ckptReq <- struct{}{}:
	default:
	}
}

func (fs *FS) checkpointer() {
	defer close(fs.ckptDone)
	t := time.NewTicker(fs.opts.CheckpointInterval)
	defer t.Stop()
	for {
		select {
		case <-fs.ckptStop:
			return
		case <-t.C:
		case <-fs.ckptReq:
		}
		if fs.x.Failure() != nil {
			return
		}
		fs.runCheckpoint()
	}
}

// runCheckpoint takes a checkpoint and deals with its failure. A failed
// checkpoint leaves the log as it was (the tail stays where the last good
// one put it), so the journal goes on while the log has room: State says
// "degraded", Logf says why, and the next checkpoint tries again. Freed
// inodes' data files are still deleted meanwhile, since that may be what
// gives the space back. The failure stops the journal only when it must:
// a transaction is waiting for log space that only a checkpoint can give,
// or (data journal) a data file could not be written back, which leaves
// the log as the only copy of its bytes.
func (fs *FS) runCheckpoint() {
	// Serialized whole, not only each checkpoint: otherwise one run's
	// reap could take the freed inodes another run's failure needs to
	// retry with, and leave it reporting a failure the first one fixed.
	fs.runMu.Lock()
	defer fs.runMu.Unlock()
	err := fs.checkpoint(false)
	if err != nil && fs.x.Failure() == nil {
		var wb *writebackError
		if errors.As(err, &wb) {
			fs.x.Fail(err)
			return
		}
		if prev := fs.ckptErr.Swap(&err); prev == nil || (*prev).Error() != err.Error() {
			fs.opts.Logf("checkpoint failed: %v; the log still has room, so the journal goes on, and the next checkpoint tries again", err)
		}
		if fs.x.ForceAll() == nil && fs.reapFreed() > 0 {
			err = fs.checkpoint(false)
		}
	}
	switch {
	case fs.x.Failure() != nil:
	case err == nil:
		if fs.ckptErr.Swap(nil) != nil {
			fs.opts.Logf("checkpoint succeeded again; the journal is back to normal")
		}
	case fs.x.SpaceWaiting():
		fs.x.Fail(fmt.Errorf("the log is full, and the checkpoint that would free it failed: %w", err))
	}
}

// writebackError is a data file that a data-journal checkpoint could not
// write back.
type writebackError struct{ err error }

func (e *writebackError) Error() string {
	return e.err.Error() + "; the log still holds those bytes: unmount and mount again to replay them"
}
func (e *writebackError) Unwrap() error { return e.err }

// failed runs once, when the log stops.
func (fs *FS) failed(reason error) {
	if fs.opts.OnFail != nil {
		fs.opts.OnFail(&xlog.FailedError{Reason: reason})
		return
	}
	fs.opts.Logf("journal failed: %v; no more changes are accepted (reads go on); "+
		"unmount, make room or fix the disk, and mount again to recover what the log holds", reason)
}

// State says how the journal is: "ok"; "degraded: checkpoint failed: ..."
// while checkpoints fail but the log still has room; "failed: <reason>"
// once it accepts no more changes (reads still work).
func (fs *FS) State() string {
	if err := fs.x.Failure(); err != nil {
		var f *xlog.FailedError
		if errors.As(err, &f) {
			err = f.Reason
		}
		return "failed: " + err.Error()
	}
	if e := fs.ckptErr.Load(); e != nil {
		return "degraded: checkpoint failed: " + (*e).Error()
	}
	return "ok"
}

// checkpoint writes the model as of the newest durable record and moves
// the log tail to it (the package documentation, Checkpoints and the
// tail). final (unmount) first forces everything.
// The order keeps the write-ahead rule: records durable, then the shadow's
// state and boundary taken together, then data files synced (every write
// the state includes was made to its data file before it committed), then
// the checkpoint file, and only then the tail. Once the tail moved, the
// data files of inodes freed durably are deleted.
func (fs *FS) checkpoint(final bool) error {
	fs.ckptMu.Lock()
	defer fs.ckptMu.Unlock()
	var err error
	if final {
		err = fs.x.ForceAll()
	} else {
		_, err = fs.x.SyncSwitched()
	}
	if err != nil {
		return err
	}
	fs.shadowMu.Lock()
	m, b := fs.shadow.Clone(), fs.bound
	fs.shadowMu.Unlock()
	if err := fs.syncDataFiles(); err != nil {
		return err
	}
	if err := fs.writeCheckpointFile(m, b); err != nil {
		return err
	}
	fs.x.MoveTail(b.Tail)
	fs.ckpts.Add(1)
	fs.reapFreed()
	return nil
}

func (fs *FS) writeCheckpointFile(m *meta.Model, b xlog.Boundary) error {
	fs.ckptSeq++
	fs.ckptSyncs.Add(2) // the file's fsync and the directory's
	return store.WriteCheckpoint(fs.st, fs.dir, &store.Checkpoint{
		Seq: fs.ckptSeq, TailLSN: b.Tail.LSN(), LastTID: b.LastTID,
		LogBufs: fs.opts.LogBufs, LogBSize: fs.opts.LogBSize, Model: m,
	})
}

// syncDataFiles makes every data file written since the last checkpoint
// durable (datafile.Files.SyncDirty). In data-journal mode, and with
// immediate writes, a data file's failure is a writebackError, which stops
// the journal before a checkpoint can move the tail past the only copy of
// those bytes.
func (fs *FS) syncDataFiles() error {
	err := fs.files.SyncDirty()
	var se *datafile.SyncError
	if errors.As(err, &se) && (fs.opts.Journal == JournalData || fs.opts.ImmediateWrite > 0) {
		return &writebackError{err}
	}
	return err
}

// reapFreed deletes the data files of freed inodes whose free is durable
// and returns how many it deleted (datafile.Files.Reap).
func (fs *FS) reapFreed() int {
	_, _, _, durable := fs.x.SnapshotStats()
	return fs.files.Reap(durable)
}

// engine is the FS as the data path sees it (datafile.Engine).
type engine struct{ fs *FS }

func (e engine) Inode(ino meta.Ino) (datafile.Attrs, bool) {
	e.fs.mu.RLock()
	defer e.fs.mu.RUnlock()
	in := e.fs.model.Inodes[ino]
	if in == nil {
		return datafile.Attrs{}, false
	}
	return datafile.Attrs{Mode: in.Mode, Size: in.Size, Mtime: in.Mtime, Ctime: in.Ctime, SizeFollows: in.SizeFollows}, true
}

func (e engine) Commit(op *meta.Op) (logbuf.LSN, error) { return e.fs.commit(op) }
func (e engine) Force(lsn logbuf.LSN) error             { return e.fs.x.Force(lsn) }
func (e engine) TailLSN() logbuf.LSN                    { return e.fs.x.TailLSN() }
func (e engine) Refused() error                         { return e.fs.changeRefused() }
func (e engine) Checkpoints() uint64                    { return e.fs.ckpts.Load() }
func (e engine) CheckpointLock() sync.Locker            { return &e.fs.ckptMu }
