package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xfsitems"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
)

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
		model: ck.Model, unlinked: map[meta.Ino]bool{}, forces: map[meta.Ino]forceLSNs{},
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
	fs.files = datafile.New(engine{fs}, datafile.Config{
		Store: fs.st, Dir: fs.dataDir, LogData: opts.Journal == JournalData, ImmediateWrite: opts.ImmediateWrite, SyncWrites: opts.SyncWrites,
		MaxTxn: fs.maxTxn, ReadOnly: opts.ReadOnly, Flush: fs.flush, Overlay: fs.overlay, Logf: opts.Logf,
		FlushCovers: xlog.IsStoreLog(dev) && store.SameFilesystem(fs.st, filepath.Join(dir, store.LogName), fs.dataDir),
	})
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
		BeforeWrite: fs.files.NamesBeforeLog,
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
