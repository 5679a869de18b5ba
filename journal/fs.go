package journal

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/statsfile"
	"github.com/xlogfs/xlogfs/journal/store"
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
	// file sync take exactly this long (at least: see flushLatency), to
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

	// ImmediateWrite, in metadata-journal mode, logs writes of at most
	// this many bytes with their bytes, so that their fsync is a log
	// force alone (immediate.go); 0: none. Not with passthrough.
	ImmediateWrite int
}

// DefaultCheckpointInterval is how often a mounted filesystem checkpoints.
const DefaultCheckpointInterval = 30 * time.Second

// Recovery says what mounting found in the log.
type Recovery struct {
	Clean        bool       // the log ended with an unmount record
	Records      int        // valid records walked
	Transactions int        // transactions replayed
	Dropped      int        // transactions without a COMMIT: not replayed
	TornLSN      logbuf.LSN // non-zero: the head was cut here (a torn write)
	DroppedLater int        // valid records after the torn one, dropped with it
	Restamped    int        // records replayed with damaged cycle words (their CRC proves the rest)
	Orphans      int        // unlinked inodes freed (open when the log ended)
	// Followed lists the inodes marked SizeFollows (open for writing in
	// passthrough when the log ended) whose data file was longer than
	// the logged size: their size is now the data file's.
	Followed []FollowedFile
}

// FollowedFile is an inode recovery grew to its data file's size.
type FollowedFile struct {
	Ino          meta.Ino
	Logged       int64 // the size the log had
	Size         int64 // the data file's, now the file's
	Mtime, Ctime int64 // the times the log had (now at least the data file's mtime)
}

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

	// What a checkpoint writes: the model as of the newest durable record.
	shadowMu sync.Mutex
	shadow   *meta.Model
	bound    xlog.Boundary

	times statsfile.CksumTimes // checksum time per record and per force

	statesMu sync.Mutex
	states   map[meta.Ino]*inodeState
	ptStale  map[meta.Ino]*inodeState // data files the kernel may have changed unlearned (passthrough.go), under statesMu
	ptLive   atomic.Int32             // len(ptStale), read without the lock
	learned  atomic.Uint64            // setattrs committed for what the kernel did to data files

	dirtyMu sync.Mutex
	dirty   map[meta.Ino]bool // data files written since the last checkpoint

	freedMu sync.Mutex
	freed   []freedInode // data files to delete once the free is durable

	ckptMu   sync.Mutex // one checkpoint at a time
	ckptSeq  uint64
	ckptReq  chan struct{}
	ckptStop chan struct{}
	ckptDone chan struct{}
	ckpts    atomic.Uint64
	forcer   *xlog.Forcer
	// flushCovers: the log's device flush makes data files' written-back
	// blocks durable too (the log is a file beside them, on the same
	// filesystem), so an fsync may write an overwrite back without a
	// flush of its own (fsops.go writeBack).
	flushCovers bool
	ckptErr     atomic.Pointer[error] // the last checkpoint's failure; nil once one succeeds

	overlay replayOverlay // NoRecovery: what replay would have written to data files

	fsyncs    atomic.Uint64
	fsyncHist [statsfile.HistBuckets]atomic.Uint64
	syncs     syncCounts    // calls that make something durable (fsstats.go)
	flush     *flushLatency // emulated flush latency; nil: none
	closed    atomic.Bool

	// afterCommit, if set (by tests), runs under the model lock after each
	// transaction commits.
	afterCommit func(tid uint32, op *meta.Op)
}

// inodeState is what the filesystem keeps per inode besides metadata: who
// uses it, the data file, and the LSNs a fsync must force.
type inodeState struct {
	mu        sync.Mutex   // orders data-file I/O with the transactions describing it
	opens     atomic.Int32 // open file handles
	holds     atomic.Int32 // references the caller (the kernel, via fusefs) keeps
	file      store.StoreFile
	direct    store.StoreFile // O_DIRECT descriptor of the data file, for O_DIRECT opens
	noDirect  bool            // the filesystem under the store refused O_DIRECT
	newFile   bool            // data file created since the data directory was last synced
	dataDirty bool            // data file written since the last fdatasync
	dataErr   error           // a data sync failed: what it was to write may be lost, and fsync says so from then on
	cutOwed   bool            // a shrink is durable but cutting the data file failed: cut before it grows again
	// What fsync's write-back without a flush needs (fsops.go writeBack):
	// the size the last fdatasync of the open data file synced (-1: none
	// yet), how much of it was written in place then, and whether the
	// journal changed the data file's blocks or size since.
	syncedSize   int64
	overwritable int64
	allocDirty   bool

	loggedLSN logbuf.LSN // newest immediate write logged with its bytes (immediate.go)
	lsn       logbuf.LSN // newest transaction touching the inode
	dataLSN   logbuf.LSN // newest transaction fdatasync needs (size, new inode, logged data, a data-journal punch)

	// Passthrough (passthrough.go): opens through which the kernel writes
	// the data file itself, whether it may have changed it since the
	// journal last learned it, and its mtime then.
	ptOpens     atomic.Int32 // passthrough opens, of the opens
	daemonOpens int32        // opens through the daemon of a passthrough mount, under mu
	ptWriters   atomic.Int32
	ptStale     bool
	ptMtime     int64
	syncWarned  bool // said that a synchronous open joined passthrough ones
	// The newest OpSizeFollows that set the inode's mark: an open for
	// writing in passthrough forces it before the kernel may write.
	markLSN atomic.Uint64
}

type freedInode struct {
	ino meta.Ino
	lsn logbuf.LSN
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
	lock, err := lockStore(st, dir)
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
		open := openFileDevice
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

// lockStore takes an exclusive lock on the store for a mount's life: two
// mounts of one store would allocate the same inode numbers and write the
// same log. The lock dies with the process, so a crash never leaves it.
func lockStore(st store.StoreFS, dir string) (io.Closer, error) {
	l, err := st.Lock(filepath.Join(dir, store.SuperblockName), true)
	if err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is in use: another process has it mounted (or is checking it)", dir)
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return l, nil
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
		model: ck.Model, unlinked: map[meta.Ino]bool{}, states: map[meta.Ino]*inodeState{}, ptStale: map[meta.Ino]*inodeState{}, dirty: map[meta.Ino]bool{},
		ckptSeq: ck.Seq, ckptReq: make(chan struct{}, 1), ckptStop: make(chan struct{}), ckptDone: make(chan struct{}),
	}
	if opts.FlushLatency > 0 {
		fs.flush = &flushLatency{d: opts.FlushLatency}
		dev = flushDevice{Device: dev, lat: fs.flush}
	}
	// A transaction may carry at most an eighth of the log, so that the
	// tail can always move past a finished one while another waits.
	fs.maxTxn = min(1<<20, int(sb.LogSize/8))
	if _, err := store.MkdirAll(fs.st, fs.dataDir); err != nil {
		return nil, err
	}

	img := make([]byte, sb.LogSize)
	if _, err := dev.ReadAt(img, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading the log (%d bytes at offset 0): %w", sb.LogSize, err)
	}
	scan := xlog.ScanLog(img, windowOf(ck))
	if err := scan.Corruption(); err != nil {
		return nil, err
	}
	if opts.NoRecovery {
		fs.overlay = replayOverlay{}
	}
	replayed := map[meta.Ino]bool{}
	var deferred *deferredWrites
	if opts.Journal == JournalMeta {
		deferred = &deferredWrites{} // logged bytes of immediate writes (immediate.go)
	}
	rep, err := replay(scan, ck.LastTID, func(op *meta.Op) error { return fs.replayOp(op, replayed, deferred) })
	if err == nil && deferred != nil {
		if fs.overlay != nil {
			deferred.layOver(fs.overlay)
		} else {
			err = deferred.apply(fs, replayed)
		}
	}
	if err != nil {
		return nil, err
	}
	fs.recovery = Recovery{Clean: scan.Clean, Records: len(scan.Records), Transactions: rep.transactions, Dropped: rep.dropped}
	for _, r := range scan.Records {
		if r.Restamped > 0 {
			fs.recovery.Restamped++
			opts.Logf("log record at LSN %v (offset %d): %d blocks did not carry its cycle, yet its CRC verifies with their cycle words restored; replayed",
				r.LSN(), r.Offset, r.Restamped)
		}
	}
	if scan.Kind == xlog.ScanTorn {
		fs.recovery.TornLSN = scan.Stop.LSN()
		fs.recovery.DroppedLater = len(scan.Later)
		opts.Logf("torn write detected at log LSN %v (offset %d): %v; it may have been in flight (%d record(s) from it on, at most %d in flight), so the log head is cut there (%d later in-flight records and %d committed transactions dropped, %d incomplete transactions not replayed)",
			scan.Stop.LSN(), scan.Stop.Offset, scan.Stop.Err, scan.InFlight, xlog.InFlightAllowance(windowOf(ck)), len(scan.Later), len(scan.AtStake), rep.dropped)
	}
	fs.recovery.Orphans = len(fs.model.DropOrphans())
	if err := fs.recoverFollowed(replayed); err != nil {
		return nil, err
	}
	if !opts.NoRecovery {
		if err := fs.reconcileDataFiles(replayed); err != nil {
			return nil, err
		}
	}

	// The new writer starts at the head, by its own placement rule.
	logBlocks := uint64(sb.LogSize / logbuf.BBSize)
	head := xlog.Wrap(scan.Head, uint64(opts.LogBSize/logbuf.BBSize), logBlocks)
	if !scan.Clean && !opts.NoRecovery {
		// Blocks past the head may hold what was in flight at the crash
		// (whole records, cut ones, lone blocks of a record whose header
		// never made it), all of the head's cycle or the next. The new
		// writer rewrites those positions in the same cycle; a torn write
		// of its own would then leave such blocks in place, carrying the
		// right cycle, and fool the walk's test for a torn record (or its
		// search for a record's header). So they are zeroed, and synced,
		// before anything is written (xlog_clear_stale_blocks). After a
		// clean unmount nothing was in flight.
		// Only the free part of the log: the old checkpoint, still in
		// force until the fresh one is written, needs the live part.
		free := logBlocks - scan.Live - (head.Abs - scan.Head.Abs)
		if err := xlog.ZeroAfterHead(dev, head, min(free, stalePastHead)); err != nil {
			return nil, err
		}
	}
	fs.bound = xlog.Boundary{Tail: head, LastTID: rep.lastTID}
	fs.shadow = fs.model.Clone()
	if !opts.NoRecovery {
		if err := fs.writeCheckpointFile(fs.shadow, fs.bound); err != nil {
			return nil, fmt.Errorf("mount: %w", err)
		}
	}
	fs.flushCovers = xlog.IsStoreLog(dev) && store.SameFilesystem(fs.st, filepath.Join(dir, store.LogName), fs.dataDir)
	fs.x, err = xlog.New(xlog.Config{
		Dev: dev, UUID: sb.UUID, LogBSize: opts.LogBSize, LogBufs: opts.LogBufs,
		Sum:  cksum.NewSummer(opts.Mode, opts.Impl),
		Head: head, PrevBlock: scan.Prev, Tail: head, LastTID: rep.lastTID,
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
		fs.learnAll()
		return fs.x.ForceAll()
	}, opts.Logf)
	return fs, nil
}

// stalePastHead is how many blocks past the head a mount clears: more than
// in-flight records can reach (8 records of 256 KiB and a wrap gap).
const stalePastHead = (logbuf.MaxLogBufs + 2) * logbuf.MaxLogBSize / logbuf.BBSize

// replayOp applies one replayed op to the model and, for data-journal
// writes, to the data file; replayed collects the data files it changed.
// A metadata-journal log's logged bytes (immediate writes) are deferred
// instead, to deferred.
func (fs *FS) replayOp(op *meta.Op, replayed map[meta.Ino]bool, deferred *deferredWrites) error {
	oldSize := int64(-1)
	if in := fs.model.Inodes[op.Ino]; in != nil {
		oldSize = in.Size
	}
	if err := fs.model.Apply(op); err != nil {
		return err
	}
	if deferred != nil {
		// Metadata journal: only immediate writes carry bytes, applied
		// (or laid over, NoRecovery) once the whole log is read.
		deferred.note(op, oldSize)
		return nil
	}
	if fs.overlay != nil {
		fs.overlay.add(op, fs.opts.Journal) // NoRecovery: in memory only
		return nil
	}
	var err error
	switch {
	case op.Type == meta.OpWrite && op.Data != nil:
		err = fs.withDataFile(op.Ino, func(f store.StoreFile) error {
			_, err := f.WriteAt(op.Data, op.Off)
			return err
		})
	case op.Type == meta.OpSetattr && op.Mask&meta.SetSize != 0 && fs.opts.Journal == JournalData:
		err = fs.withDataFile(op.Ino, func(f store.StoreFile) error { return f.Truncate(op.Size) })
	case op.Type == meta.OpFallocate && fs.opts.Journal == JournalData:
		err = fs.withDataFile(op.Ino, func(f store.StoreFile) error { return f.Allocate(op.Mode, op.Off, op.Len) })
	default:
		return nil
	}
	replayed[op.Ino] = true
	return err
}

func (fs *FS) dataPath(ino meta.Ino) string {
	return filepath.Join(fs.dataDir, strconv.FormatUint(uint64(ino), 10))
}

// withDataFile runs f on ino's data file, opened for the call, creating
// the file if it does not exist yet.
func (fs *FS) withDataFile(ino meta.Ino, f func(store.StoreFile) error) error {
	return fs.onDataFile(ino, os.O_CREATE, f)
}

// withDataFileIfExists is withDataFile for a file that may be gone (freed
// since): then it does nothing.
func (fs *FS) withDataFileIfExists(ino meta.Ino, f func(store.StoreFile) error) error {
	err := fs.onDataFile(ino, 0, f)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

func (fs *FS) onDataFile(ino meta.Ino, flags int, f func(store.StoreFile) error) error {
	file, err := fs.st.OpenFile(fs.dataPath(ino), os.O_RDWR|flags, 0o600)
	if err != nil {
		return err
	}
	err = f(file)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

// reconcileDataFiles deletes data files of inodes that no longer exist and
// sets each remaining one to its recovered size, durably, with the data
// directory: the data files replay wrote (data journal), because the fresh
// checkpoint that follows moves the tail past the records holding those
// bytes; and those it cut to size, because what lies past a file's end
// (bytes of writes the log lost) must not come back inside it when a later
// write extends the file and a crash then loses the cut.
func (fs *FS) reconcileDataFiles(replayed map[meta.Ino]bool) error {
	names, err := fs.st.ReadDir(fs.dataDir)
	if err != nil {
		return err
	}
	for _, name := range names {
		n, perr := strconv.ParseUint(name, 10, 64)
		in := fs.model.Inodes[meta.Ino(n)]
		path := filepath.Join(fs.dataDir, name)
		if perr != nil || in == nil || !in.IsRegular() {
			if err := store.RemoveAll(fs.st, path); err != nil {
				return err
			}
			continue
		}
		info, err := fs.st.Stat(path)
		if err != nil {
			return err
		}
		if info.Size() != in.Size || replayed[meta.Ino(n)] {
			err := fs.onDataFile(meta.Ino(n), 0, func(f store.StoreFile) error {
				if info.Size() != in.Size {
					if err := f.Truncate(in.Size); err != nil {
						return err
					}
				}
				return f.Datasync()
			})
			if err != nil {
				return fmt.Errorf("recovering data file %s: %w", path, err)
			}
		}
	}
	return fs.st.SyncDir(fs.dataDir)
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
	fs.learnAll()
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
	fs.closeFiles()
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
	fs.closeFiles()
	fs.x.Dev.Close()
	fs.lock.Close()
}

func (fs *FS) closeFiles() {
	fs.statesMu.Lock()
	defer fs.statesMu.Unlock()
	for _, st := range fs.states {
		st.closeFiles()
	}
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

// state returns the per-inode state, creating it.
func (fs *FS) state(ino meta.Ino) *inodeState {
	fs.statesMu.Lock()
	defer fs.statesMu.Unlock()
	st := fs.states[ino]
	if st == nil {
		st = &inodeState{syncedSize: -1}
		fs.states[ino] = st
	}
	return st
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
	lsn, err := fs.x.Commit(region, &kept)
	if err != nil {
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
		st := fs.state(ino)
		st.lsn = lsn
		if ino == op.Ino {
			in := fs.model.Inodes[ino]
			if op.Type == meta.OpCreate || in != nil && in.Size != oldSize || op.Data != nil || fs.zeroesLogged(op) || fs.supersedesLogged(op) {
				st.dataLSN = lsn
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
// would write older logged bytes over what it made durable (immediate.go).
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
	fs.syncs.checkpoint.Add(2) // the file's fsync and the directory's
	return store.WriteCheckpoint(fs.st, fs.dir, &store.Checkpoint{
		Seq: fs.ckptSeq, TailLSN: b.Tail.LSN(), LastTID: b.LastTID,
		LogBufs: fs.opts.LogBufs, LogBSize: fs.opts.LogBSize, Model: m,
	})
}

// syncDataFiles makes every data file written since the last checkpoint
// durable, and the data directory (new files' names). What it could not
// sync stays dirty for the next checkpoint. A data file whose sync failed
// may have lost what it was to write, although a later sync will succeed
// (Linux marks the pages clean after a writeback error): its inode's fsync
// reports EIO from then on, and in data-journal mode the error is a
// writebackError, which stops the journal before a checkpoint can move the
// tail past the only copy of those bytes.
func (fs *FS) syncDataFiles() error {
	fs.markPassthroughDirty()
	fs.dirtyMu.Lock()
	dirty := fs.dirty
	fs.dirty = map[meta.Ino]bool{}
	fs.dirtyMu.Unlock()
	inos := slices.Sorted(maps.Keys(dirty))
	redirty := func(inos []meta.Ino) {
		fs.dirtyMu.Lock()
		for _, ino := range inos {
			fs.dirty[ino] = true
		}
		fs.dirtyMu.Unlock()
	}
	for i, ino := range inos {
		err := fs.withDataFileIfExists(ino, fs.fdatasync)
		if err != nil {
			redirty(inos[i:])
			if st := fs.existingState(ino); st != nil {
				st.mu.Lock()
				st.dataErr = err
				st.mu.Unlock()
			}
			err = fmt.Errorf("syncing data file of inode %d: %w", ino, err)
			if fs.opts.Journal == JournalData || fs.opts.ImmediateWrite > 0 {
				return &writebackError{err}
			}
			return err
		}
	}
	if err := fs.syncDataDir(); err != nil {
		redirty(inos)
		return err
	}
	return nil
}

func (fs *FS) markDirty(ino meta.Ino) {
	fs.dirtyMu.Lock()
	fs.dirty[ino] = true
	fs.dirtyMu.Unlock()
}

// reapFreed deletes the data files of freed inodes whose free is durable
// and returns how many it deleted. It needs no checkpoint: should a crash
// bring a deleted name back, recovery deletes the file of an inode that
// no longer exists. A file it cannot delete stays listed for the next try.
func (fs *FS) reapFreed() int {
	_, _, _, durable := fs.x.SnapshotStats()
	fs.freedMu.Lock()
	var keep, gone []freedInode
	for _, f := range fs.freed {
		if f.lsn <= durable {
			gone = append(gone, f)
		} else {
			keep = append(keep, f)
		}
	}
	fs.freed = keep
	fs.freedMu.Unlock()
	n := 0
	var failed []freedInode
	for _, f := range gone {
		if err := fs.st.Remove(fs.dataPath(f.ino)); err != nil && !errors.Is(err, os.ErrNotExist) {
			fs.opts.Logf("deleting the data file of freed inode %d: %v (tried again later)", f.ino, err)
			failed = append(failed, f)
			continue
		}
		n++
	}
	if len(failed) > 0 {
		fs.freedMu.Lock()
		fs.freed = append(fs.freed, failed...)
		fs.freedMu.Unlock()
	}
	return n
}
