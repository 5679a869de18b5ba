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
	runMu    sync.Mutex // one runCheckpoint (or reap) at a time: its retry sees what an earlier one reaped
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
	fs, err := openDevice(dir, sb, ck, opts)
	if err != nil && opts.ReadOnly && !opts.NoRecovery && isNoSpace(err) {
		// A read-only mount writes only to finish recovery. With no
		// room for that, it replays the log in memory only, as
		// NoRecovery does, and writes nothing more; what the failed
		// attempt did (replay, reconciling data files, clearing the
		// log past its head) a later recovery does again.
		opts.Logf("read-only mount of %s: recovery cannot finish: %v; the log is replayed in memory only (as with --norecovery) "+
			"and nothing is written to the store; a read-write mount recovers it once the filesystem has room", dir, err)
		if ck, err = store.ReadCheckpoint(st, dir); err == nil { // the failed attempt replayed onto its model
			opts.NoRecovery = true
			if err = readOnlyOptions(&opts); err == nil {
				fs, err = openDevice(dir, sb, ck, opts)
			}
		}
	}
	if err != nil {
		if opts.Device != nil {
			opts.Device.Close()
		}
		return nil, err
	}
	fs.lock = lock
	return fs, nil
}

// openDevice opens the log device (unless opts has one) and mounts the
// store over it; a device it opened it closes again if that fails.
func openDevice(dir string, sb *store.Superblock, ck *store.Checkpoint, opts Options) (*FS, error) {
	dev := opts.Device
	if dev == nil {
		open := recovery.OpenLogDevice
		if opts.NoRecovery {
			open = openReadOnlyDevice
		}
		var err error
		if dev, err = open(opts.Store, filepath.Join(dir, store.LogName)); err != nil {
			return nil, err
		}
	}
	fs, err := open(dir, sb, ck, dev, opts)
	if err != nil && opts.Device == nil {
		dev.Close()
	}
	return fs, err
}

// isNoSpace reports whether err is the filesystem under the store out of
// room (or over a quota).
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
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
		ckptSeq: ck.Seq, ckptReq: make(chan struct{}, 1), reapReq: make(chan struct{}, 1), ckptStop: make(chan struct{}), ckptDone: make(chan struct{}),
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
		if isNoSpace(err) && !opts.ReadOnly {
			avail := "how many bytes free unknown"
			if sp, serr := fs.st.Statfs(dir); serr == nil {
				avail = fmt.Sprintf("%d bytes free", sp.Avail())
			}
			err = fmt.Errorf("recovering the log needs more room than the filesystem holding %s has (%s): %w; "+
				"free some there and mount again (xlogfs mount --ro reads the store meanwhile)", dir, avail, err)
		}
		return nil, err
	}
	fs.recovery = rec.Report
	head := rec.Head
	fs.bound = xlog.Boundary{Tail: head, LastTID: rec.LastTID}
	fs.shadow = fs.model.Clone()
	tail, lastTID := head, rec.LastTID
	if !opts.NoRecovery {
		if err := fs.writeCheckpointFile(fs.shadow, fs.bound); err != nil {
			if tail, lastTID, err = fs.goOnFromCheckpoint(ck, rec, err); err != nil {
				return nil, fmt.Errorf("mount: %w", err)
			}
		}
	}
	fs.x, err = xlog.New(xlog.Config{
		Dev: dev, UUID: sb.UUID, Coverage: sb.Coverage, LogBSize: opts.LogBSize, LogBufs: opts.LogBufs,
		Sum:  cksum.NewSummer(opts.Mode, opts.Impl),
		Head: head, PrevBlock: rec.PrevBlock, Tail: tail, LastTID: lastTID,
		Times: &fs.times, OnDurable: fs.onDurable, AfterDurable: fs.afterDurable, WantCheckpoint: fs.requestCheckpoint, OnFail: fs.failed,
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

// goOnFromCheckpoint is a read-write mount whose fresh checkpoint could not
// be written (ckErr): if that was for want of space and the log has room
// for records past its head, the journal goes on from the checkpoint it
// recovered from, degraded (State), so that deleting files can give the
// space back; the next checkpoint tries again. It returns the tail and the
// newest transaction id the new writer starts from. Otherwise the mount is
// refused, saying what the checkpoint needs.
//
// Going on from that checkpoint, the records after its tail come from two
// writers, this one and the one before: recovery allows for the in-flight
// records of the checkpoint's geometry, so this writer must have the same.
// Its transaction ids start past every id the walk saw, since a
// transaction it dropped as incomplete is walked again by the next
// recovery.
func (fs *FS) goOnFromCheckpoint(ck *store.Checkpoint, rec *recovery.Recovered, ckErr error) (xlog.Pos, uint32, error) {
	if fs.opts.ReadOnly || !isNoSpace(ckErr) {
		return xlog.Pos{}, 0, ckErr
	}
	logBlocks := uint64(fs.sb.LogSize / logbuf.BBSize)
	if !xlog.HasRoom(rec.Head, rec.Tail, uint64(fs.opts.LogBSize/logbuf.BBSize), logBlocks) {
		return xlog.Pos{}, 0, fs.noRoomError(ckErr, "the log is full, so the journal cannot go on from the last checkpoint either", "")
	}
	if ck.LogBufs != fs.opts.LogBufs || ck.LogBSize != fs.opts.LogBSize {
		return xlog.Pos{}, 0, fs.noRoomError(ckErr, "the journal can go on from the last checkpoint only with the log geometry of its writer",
			fmt.Sprintf("mount with --logbufs %d --logbsize %dk, or ", ck.LogBufs, ck.LogBSize>>10))
	}
	fs.ckptErr.Store(&ckErr)
	fs.opts.Logf("mount: %v; the log has room, so the journal goes on from the last checkpoint, degraded: "+
		"deleting files gives the space back, and the next checkpoint tries again", ckErr)
	return rec.Tail, rec.SeenTID, nil
}

// noRoomError is the refusal of a mount whose checkpoint has no room: which
// file needs how many bytes, how many the filesystem has, and how many to
// free. why says why the mount cannot go on without it; other, if set,
// offers another way before the freeing.
func (fs *FS) noRoomError(ckErr error, why, other string) error {
	tmp := filepath.Join(fs.dir, store.CheckpointName+".tmp")
	ck := &store.Checkpoint{Seq: fs.ckptSeq, TailLSN: fs.bound.Tail.LSN(), LastTID: fs.bound.LastTID,
		LogBufs: fs.opts.LogBufs, LogBSize: fs.opts.LogBSize, Model: fs.shadow}
	size := int64(ck.EncodedLen())
	const meanwhile = "(xlogfs mount --ro reads the store meanwhile)"
	sp, err := fs.st.Statfs(fs.dir)
	if err != nil || sp.Bsize == 0 {
		return fmt.Errorf("no room for the checkpoint of the recovered metadata: %s needs %d bytes; %s: %sfree that much in the filesystem holding %s and mount again %s: %w",
			tmp, size, why, other, fs.dir, meanwhile, ckErr)
	}
	bs := int64(sp.Bsize)
	need := (size + bs - 1) / bs * bs
	avail := sp.Avail()
	if need <= avail {
		return fmt.Errorf("no room for the checkpoint of the recovered metadata: %s needs %d bytes (%d in %d-byte blocks), and the filesystem holding %s "+
			"says it has %d free (out of inodes, or over a quota?); %s: %smake room there and mount again %s: %w",
			tmp, size, need, bs, fs.dir, avail, why, other, meanwhile, ckErr)
	}
	return fmt.Errorf("no room for the checkpoint of the recovered metadata: %s needs %d bytes (%d in %d-byte blocks), and the filesystem holding %s has %d free; %s: "+
		"%sfree at least %d bytes there and mount again %s: %w",
		tmp, size, need, bs, fs.dir, avail, why, other, need-avail, meanwhile, ckErr)
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
	// Whoever held or had open the unlinked inodes is gone with the
	// mount: free them now, so the store is left without orphans. The
	// checkpointer still runs: a free that waits for log space needs a
	// checkpoint to make it.
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
	close(fs.ckptStop)
	<-fs.ckptDone
	fs.forcer.Halt()
	fs.closed.Store(true)
	// A read-only mount changed nothing since its mount wrote its
	// checkpoint: the unmount record alone makes the log clean (and a
	// NoRecovery mount writes nothing, leaving the log as it found it).
	var ckptErr error
	if err == nil && !fs.opts.ReadOnly {
		ckptErr, err = fs.finalCheckpoint()
	}
	if err == nil && !fs.opts.NoRecovery {
		if err = fs.x.WriteUnmount(); err != nil && ckptErr != nil {
			err = fmt.Errorf("unmount: %w; and no unmount record either: %v", ckptErr, err)
		}
	}
	if err == nil && ckptErr != nil {
		fs.opts.Logf("unmount: %v; the log holds everything and ends with the unmount record: the next mount replays it from the last checkpoint", ckptErr)
	}
	fs.x.Stop()
	fs.files.CloseAll()
	if cerr := fs.x.Dev.Close(); err == nil {
		err = cerr
	}
	fs.lock.Close()
	return err
}

// finalCheckpoint is the unmount's checkpoint: the log forced, the data
// files of the inodes freed meanwhile deleted (which may be what gives it
// room), then the checkpoint. One that fails for want of space while the
// log works is no reason to fail the unmount: the log holds everything, so
// it is returned as skipped, and the unmount record goes in after it. Any
// other failure is err.
func (fs *FS) finalCheckpoint() (skipped, err error) {
	if err := fs.x.ForceAll(); err != nil {
		return nil, err
	}
	fs.reapFreed()
	err = fs.checkpoint(true)
	if err != nil && isNoSpace(err) && fs.x.Failure() == nil {
		return err, nil
	}
	return nil, err
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
	if op.Type == meta.OpWrite {
		fs.loggedData.Add(uint64(len(op.Data)))
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

// afterDurable runs in the log writer once records are durable: a freed
// inode's data file may go now that its free is (the checkpointer deletes
// it, reap).
func (fs *FS) afterDurable(durable logbuf.LSN) {
	if fs.files.Reapable(durable) {
		fs.wantReap()
	}
}

func (fs *FS) wantReap() {
	select {
	case fs.reapReq <- struct{}{}:
	default:
	}
}

// checkpointer takes the checkpoints, and deletes the data files of freed
// inodes as soon as their frees are durable, without waiting for one. A
// failed journal takes no more checkpoints, but what it freed durably
// still goes.
func (fs *FS) checkpointer() {
	defer close(fs.ckptDone)
	t := time.NewTicker(fs.opts.CheckpointInterval)
	defer t.Stop()
	for {
		select {
		case <-fs.ckptStop:
			return
		case <-fs.reapReq:
			fs.reap()
			continue
		case <-t.C:
		case <-fs.ckptReq:
		}
		if fs.x.Failure() == nil {
			fs.runCheckpoint()
		}
	}
}

// reap deletes the data files of the inodes whose free is durable. While
// checkpoints fail, it tries one again after deleting some: the space may
// be what it lacked (the disk under the store full).
func (fs *FS) reap() {
	fs.runMu.Lock() // not inside a runCheckpoint that needs what it reaps for its retry
	n := fs.reapFreed()
	fs.runMu.Unlock()
	if n > 0 && fs.ckptErr.Load() != nil && fs.x.Failure() == nil {
		fs.runCheckpoint()
	}
}

// runCheckpoint takes a checkpoint and deals with its failure. A failed
// checkpoint leaves the log as it was (the tail stays where the last good
// one put it), so the journal goes on while the log has room: State says
// "degraded", Logf says why, and the next checkpoint tries again. Freed
// inodes' data files are still deleted meanwhile, each as soon as its free
// is durable (reap; here too, after forcing the log), since that may be
// what gives the space back. The failure stops the journal only when it must:
// a transaction is waiting for log space that only a checkpoint can give,
// or (data journal) a data file could not be written back, which leaves
// the log as the only copy of its bytes.
func (fs *FS) runCheckpoint() {
	// Serialized whole, not only each checkpoint, and with the reaper's
	// reaps: otherwise one run's reap could take the freed inodes another
	// run's failure needs to retry with, and leave it reporting a failure
	// the first one fixed.
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
// the checkpoint file, and only then the tail. Then the data files of
// inodes freed durably are deleted, should the reaper not have yet.
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
	err := store.WriteCheckpoint(fs.st, fs.dir, &store.Checkpoint{
		Seq: fs.ckptSeq, TailLSN: b.Tail.LSN(), LastTID: b.LastTID,
		LogBufs: fs.opts.LogBufs, LogBSize: fs.opts.LogBSize, Model: m,
	})
	if err != nil {
		// What a failed write left of the temporary file holds space a
		// full disk lacks. (After the rename there is none left.)
		fs.st.Remove(filepath.Join(fs.dir, store.CheckpointName+".tmp"))
	}
	return err
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
