package datafile

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"

	"github.com/xlogfs/xlogfs/journal/internal/lockorder"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/logbuf"
)

// Engine is what the data path needs of the filesystem engine (package
// journal): the model's view of an inode, the commit of a transaction, and
// the log. The data path calls it holding an inode's lock (which comes
// before the engine's locks), never one of the engine's.
type Engine interface {
	// Inode returns what the model holds of ino now; false if no such
	// inode exists.
	Inode(ino meta.Ino) (Attrs, bool)
	// Commit validates op, logs it and applies it to the model, under
	// the model lock (a failed commit changes nothing), and returns the
	// LSN to force for it to be durable.
	Commit(op *meta.Op) (logbuf.LSN, error)
	// Force makes the log durable up to lsn.
	Force(lsn logbuf.LSN) error
	// TailLSN is the log's tail: recovery reads no record older.
	TailLSN() logbuf.LSN
	// Refused is the error a change gets before it touches anything
	// (EROFS on a read-only mount, the failure of a stopped journal).
	Refused() error
	// Checkpoints counts the checkpoints taken.
	Checkpoints() uint64
	// BetweenCheckpoints runs fn while no checkpoint runs: none that
	// started before it is still going, and none starts until fn
	// returns. A shrink forces its transaction and cuts the data file
	// inside it (shrink). fn must not commit: a commit may wait for
	// log space, which only a checkpoint frees.
	BetweenCheckpoints(fn func() error) error
}

// Attrs is what the data path needs of an inode's metadata.
type Attrs struct {
	Mode                uint32
	Size, Mtime, Ctime  int64
	SizeFollows, Exists bool
}

// regular is Attrs of ino if it is a regular file, else the errno a data
// operation on it gets.
func (f *Files) regular(ino meta.Ino) (Attrs, error) {
	a, ok := f.e.Inode(ino)
	switch {
	case !ok:
		return a, syscall.ENOENT
	case a.Mode&meta.ModeType == meta.ModeDir:
		return a, syscall.EISDIR
	case a.Mode&meta.ModeType != meta.ModeReg:
		return a, syscall.EINVAL
	}
	return a, nil
}

func (f *Files) size(ino meta.Ino) int64 {
	a, _ := f.e.Inode(ino)
	return a.Size
}

// Config sets up the data path of a mount.
type Config struct {
	Store   store.StoreFS
	Dir     string // the data directory, DIR/data
	LogData bool   // data-journal mode: written bytes go through the log too
	// ImmediateWrite, in metadata-journal mode, logs writes of at most
	// this many bytes with their bytes (immediate.go); 0: none.
	ImmediateWrite int
	// SyncWrites picks, in a passthrough mount, which opens that write go
	// through the daemon and the log instead (route.go).
	SyncWrites SyncWrites
	MaxTxn     int  // largest write one transaction carries (data journal)
	ReadOnly   bool // data files are opened for reading only
	// FlushCovers: the log's device flush makes data files' written-back
	// blocks durable too (the log is a file beside them, on the same
	// filesystem), so an fsync may write an overwrite back without a
	// flush of its own (WriteBack).
	FlushCovers bool
	Flush       *FlushLatency // emulated flush latency; nil: none
	Overlay     Overlay       // NoRecovery: what replay would have written, laid over reads
	Logf        func(format string, a ...any)
}

// Files is a mount's data path: the data files and the per-inode state
// that orders their I/O with the log.
type Files struct {
	e   Engine // set by New, never changed
	cfg Config

	// Counters, read without a lock.
	Syncs   SyncCounts
	Routes  RouteCounts   // opens of a passthrough mount by route (route.go)
	Learned atomic.Uint64 // setattrs committed for what the kernel did to data files
	ptLive  atomic.Int32  // len(ptStale), read without statesMu
	closed  atomic.Bool   // CloseAll ran: no data file opens again

	// Data files' names (SyncDir, names.go): how many data files were
	// made, how many of those the last data-directory sync covered,
	// and the newest made for a file created marked, whose name the log
	// may not outrun (NamesBeforeLog).
	namesMade   atomic.Uint64
	namesSynced atomic.Uint64
	markedNames atomic.Uint64

	// statesMu guards the in-core inodes' table (not the inodes: each
	// has its own lock, taken before statesMu, never under it):
	statesMu lockorder.Mutex[lockorder.Leaf]
	states   map[meta.Ino]*Inode
	ptStale  map[meta.Ino]*Inode // data files the kernel may have changed unlearned (passthrough.go)

	// dirtyMu guards the data files a checkpoint must sync:
	dirtyMu lockorder.Mutex[lockorder.Leaf]
	dirty   map[meta.Ino]bool // data files written since the last checkpoint

	// freedMu guards the data files to delete:
	freedMu lockorder.Mutex[lockorder.Leaf]
	freed   []freedInode // data files to delete once the free is durable
}

type freedInode struct {
	ino meta.Ino
	lsn logbuf.LSN
}

// New returns the data path of cfg.Dir, a directory that exists (mount
// makes it if it is missing), over e, the engine whose transactions
// describe it. e may be nil for a data path that recovery alone uses
// (With, Reconcile, MarkMissing: the data files, none of the engine).
func New(e Engine, cfg Config) *Files {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return &Files{e: e, cfg: cfg, states: map[meta.Ino]*Inode{}, ptStale: map[meta.Ino]*Inode{}, dirty: map[meta.Ino]bool{}}
}

// Inode is the in-core inode: what the filesystem keeps per inode besides
// metadata: who uses it and the data file. (What a fsync of it must force
// is the engine's: package journal keeps it under its model lock.)
type Inode struct {
	// Read and written without mu (atomics).
	Opens     atomic.Int32 // open file handles
	Holds     atomic.Int32 // references the caller (the kernel, via fusefs) keeps
	ptOpens   atomic.Int32 // passthrough opens, of the opens (passthrough.go)
	ptWriters atomic.Int32 // of which the kernel writes through
	// The newest OpSizeFollows that set the inode's mark: an open for
	// writing in passthrough forces it before the kernel may write.
	markLSN atomic.Uint64
	// dataErr: a data sync failed, so what it was to write may be lost,
	// and fsync says so from then on (lost, lose). Atomic, not under mu:
	// a checkpoint's sync sets it under the engine's checkpoint lock,
	// where an inode's lock may not be taken (a shrink holds its inode's
	// lock, then the checkpoint lock).
	dataErr atomic.Pointer[error]

	// mu orders data-file I/O with the transactions describing it: held
	// across the engine's calls (a write's commit, a shrink's force and
	// cut). It guards the rest, the data file descriptors too, but for
	// Forget, which closes those of an inode being freed (under the
	// engine's model lock, which ranks after mu): one nobody has open or
	// holds, or any unlinked one at unmount.
	mu        lockorder.Mutex[lockorder.Inode]
	file      store.StoreFile
	direct    store.StoreFile // O_DIRECT descriptor of the data file, for O_DIRECT opens
	noDirect  bool            // the filesystem under the store refused O_DIRECT
	nameGen   uint64          // which data file made this one's name (namesMade); durable once namesSynced reaches it
	dataDirty bool            // data file written since the last fdatasync
	cutOwed   bool            // a shrink is durable but cutting the data file failed: cut before it grows again
	// dataMissing: the data file lacked bytes that were durable when the
	// store was mounted (missing.go); reads and changes fail with EIO
	// until a truncate to 0.
	dataMissing bool
	// What fsync's write-back without a flush needs (WriteBack): the size
	// the last fdatasync of the open data file synced (-1: none yet), how
	// much of it was written in place then, and whether the journal
	// changed the data file's blocks or size since.
	syncedSize   int64
	overwritable int64
	allocDirty   bool

	loggedLSN logbuf.LSN // newest immediate write logged with its bytes (immediate.go)
	hist      history    // recent writes and fsyncs, for the route of the next open (route.go)
	kind      openKind   // the kind of the opens in the kernel's life of the inode (route.go)

	// Passthrough (passthrough.go): the opens through the daemon, whether
	// the kernel may have changed the data file since the journal last
	// learned it, and its mtime then.
	daemonOpens int32 // opens through the daemon of a passthrough mount
	ptStale     bool
	ptMtime     int64
	syncWarned  bool // said that a synchronous open joined passthrough ones
}

// lost is the error of a failed data sync of the inode's data file, nil if
// none failed.
func (st *Inode) lost() error {
	if p := st.dataErr.Load(); p != nil {
		return *p
	}
	return nil
}

// lose records that a data sync failed with err.
func (st *Inode) lose(err error) { st.dataErr.Store(&err) }

// MarkLSN is the LSN of the newest record that set the inode's mark.
func (in *Inode) MarkLSN() logbuf.LSN { return logbuf.LSN(in.markLSN.Load()) }

// State returns ino's in-core inode, creating it.
func (f *Files) State(ino meta.Ino) *Inode {
	f.statesMu.Lock()
	defer f.statesMu.Unlock()
	st := f.states[ino]
	if st == nil {
		st = &Inode{syncedSize: -1}
		f.states[ino] = st
	}
	return st
}

// Existing returns ino's in-core inode if there is one.
func (f *Files) Existing(ino meta.Ino) *Inode {
	f.statesMu.Lock()
	defer f.statesMu.Unlock()
	return f.states[ino]
}

// InUse reports whether an inode is open or held.
func (f *Files) InUse(ino meta.Ino) bool {
	st := f.Existing(ino)
	return st != nil && (st.Opens.Load() > 0 || st.Holds.Load() > 0)
}

// Release undoes an open of ino: the last one closes the data file. It
// reports whether ino had an in-core inode.
func (f *Files) Release(ino meta.Ino) bool {
	st := f.Existing(ino)
	if st == nil {
		return false
	}
	if st.Opens.Add(-1) <= 0 {
		st.Opens.Store(0)
		st.mu.Lock()
		st.doneWithFile()
		st.mu.Unlock()
	}
	return true
}

// Forget drops a freed inode's state and schedules its data file for
// deletion once the free at lsn is durable (Reap).
func (f *Files) Forget(ino meta.Ino, lsn logbuf.LSN) {
	f.statesMu.Lock()
	if st := f.states[ino]; st != nil {
		st.closeFiles()
	}
	delete(f.states, ino)
	f.statesMu.Unlock()
	f.freedMu.Lock()
	f.freed = append(f.freed, freedInode{ino: ino, lsn: lsn})
	f.freedMu.Unlock()
}

// CloseAll closes every data file descriptor (unmount, crash), each
// under its inode's lock, which guards it: an operation still running
// finishes with its descriptor first. From then on no data file opens
// (os.ErrClosed). The caller holds none of the engine's locks: an
// operation holding its inode's lock may be waiting for them.
func (f *Files) CloseAll() {
	f.closed.Store(true)
	f.statesMu.Lock()
	states := slices.Collect(maps.Values(f.states))
	f.statesMu.Unlock()
	for _, st := range states { // an inode's lock comes before statesMu
		st.mu.Lock()
		st.closeFiles()
		st.mu.Unlock()
	}
}

// Path is ino's data file.
func (f *Files) Path(ino meta.Ino) string {
	return filepath.Join(f.cfg.Dir, strconv.FormatUint(uint64(ino), 10))
}

// With runs fn on ino's data file, opened for the call, creating the file
// if it does not exist yet and create is set; without create, a missing
// data file (freed since) is no error and fn does not run.
func (f *Files) With(ino meta.Ino, create bool, fn func(store.StoreFile) error) error {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE
	}
	file, err := f.cfg.Store.OpenFile(f.Path(ino), flags, 0o600)
	if err != nil {
		if !create && errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	err = fn(file)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

// Stat returns ino's data file's size and times, opened for reading only;
// false if it has none.
func (f *Files) Stat(ino meta.Ino) (store.FileStat, bool, error) {
	file, err := f.cfg.Store.OpenFile(f.Path(ino), os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return store.FileStat{}, false, nil
	}
	if err != nil {
		return store.FileStat{}, false, err
	}
	defer file.Close()
	s, err := file.Stat()
	return s, err == nil, err
}

// file returns the open data file of a regular file, opening (and
// creating) it as needed. The caller holds st.mu.
func (f *Files) file(ino meta.Ino, st *Inode) (store.StoreFile, error) {
	return f.openFile(ino, st, true)
}

// fileToChange is file for an op about to change the data file: a cut a
// shrink still owes is made first, so bytes past the file's end never come
// back inside it.
func (f *Files) fileToChange(ino meta.Ino, st *Inode) (store.StoreFile, error) {
	file, err := f.file(ino, st)
	if err == nil && st.cutOwed {
		if err = file.Truncate(f.size(ino)); err == nil {
			st.cutOwed = false
			st.allocDirty = true
			st.dataDirty = true
			f.MarkDirty(ino)
			err = f.syncBeforeSuperseding(st, file)
		}
	}
	return file, err
}

// openFile is file; without create, a missing data file is (nil, nil):
// the file has no bytes written yet.
func (f *Files) openFile(ino meta.Ino, st *Inode, create bool) (store.StoreFile, error) {
	if st.file != nil {
		return st.file, nil
	}
	if f.closed.Load() {
		return nil, fmt.Errorf("data file %s: %w (the journal is unmounted)", f.Path(ino), os.ErrClosed)
	}
	flag := os.O_RDWR
	if f.cfg.ReadOnly {
		flag = os.O_RDONLY
	}
	file, err := f.cfg.Store.OpenFile(f.Path(ino), flag, 0)
	if errors.Is(err, os.ErrNotExist) {
		if !create {
			return nil, nil
		}
		file, err = f.cfg.Store.OpenFile(f.Path(ino), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			st.nameGen = f.namesMade.Add(1)
		}
	}
	if err != nil {
		return nil, err
	}
	st.file = file
	return file, nil
}

// doneWithFile closes the data file again if nobody has the inode open.
func (st *Inode) doneWithFile() {
	if st.Opens.Load() == 0 {
		st.closeFiles()
	}
}

// closeFiles closes the inode's data file descriptors.
func (st *Inode) closeFiles() {
	if st.file != nil {
		st.file.Close()
		st.file = nil
	}
	if st.direct != nil {
		st.direct.Close()
		st.direct = nil
	}
}

// MarkDirty notes that ino's data file needs the next checkpoint's sync.
func (f *Files) MarkDirty(ino meta.Ino) {
	f.dirtyMu.Lock()
	f.dirty[ino] = true
	f.dirtyMu.Unlock()
}

// SyncError is a data file the checkpoint could not sync.
type SyncError struct {
	Ino meta.Ino
	Err error
}

func (e *SyncError) Error() string {
	return fmt.Sprintf("syncing data file of inode %d: %v", e.Ino, e.Err)
}
func (e *SyncError) Unwrap() error { return e.Err }

// SyncDirty makes every data file written since the last checkpoint
// durable, and the data directory (new files' names). What it could not
// sync stays dirty for the next checkpoint. A data file whose sync failed
// may have lost what it was to write, although a later sync will succeed
// (Linux marks the pages clean after a writeback error): its inode's fsync
// reports EIO from then on, and the error is a *SyncError.
func (f *Files) SyncDirty() error {
	f.markPassthroughDirty()
	f.dirtyMu.Lock()
	dirty := f.dirty
	f.dirty = map[meta.Ino]bool{}
	f.dirtyMu.Unlock()
	inos := slices.Sorted(maps.Keys(dirty))
	redirty := func(inos []meta.Ino) {
		f.dirtyMu.Lock()
		for _, ino := range inos {
			f.dirty[ino] = true
		}
		f.dirtyMu.Unlock()
	}
	for i, ino := range inos {
		err := f.With(ino, false, f.fdatasync)
		if err != nil {
			redirty(inos[i:])
			if st := f.Existing(ino); st != nil {
				st.lose(err)
			}
			return &SyncError{Ino: ino, Err: err}
		}
	}
	if err := f.SyncDir(); err != nil {
		redirty(inos)
		return err
	}
	return nil
}

// Reapable reports whether some freed inode's free is durable (at or below
// durable): Reap has a data file to delete.
func (f *Files) Reapable(durable logbuf.LSN) bool {
	f.freedMu.Lock()
	defer f.freedMu.Unlock()
	for _, fr := range f.freed {
		if fr.lsn <= durable {
			return true
		}
	}
	return false
}

// Reap deletes the data files of freed inodes whose free is durable (at or
// below durable) and returns how many it deleted. It needs no checkpoint,
// and must not wait for one: on a full disk the checkpoint may need the
// very space the deletion gives back. Recovery replays the free from the
// log onto whatever checkpoint still holds the inode, so the data file is
// not needed again; and should a crash bring a deleted name back, recovery
// deletes the file of an inode that no longer exists (Reconcile). Before
// the free is durable a crash may undo it, and the file must be whole. A
// file it cannot delete stays listed for the next try.
func (f *Files) Reap(durable logbuf.LSN) int {
	f.freedMu.Lock()
	var keep, gone []freedInode
	for _, fr := range f.freed {
		if fr.lsn <= durable {
			gone = append(gone, fr)
		} else {
			keep = append(keep, fr)
		}
	}
	f.freed = keep
	f.freedMu.Unlock()
	n := 0
	var failed []freedInode
	for _, fr := range gone {
		if err := f.cfg.Store.Remove(f.Path(fr.ino)); err != nil && !errors.Is(err, os.ErrNotExist) {
			f.cfg.Logf("deleting the data file of freed inode %d: %v (tried again later)", fr.ino, err)
			failed = append(failed, fr)
			continue
		}
		n++
	}
	if len(failed) > 0 {
		f.freedMu.Lock()
		f.freed = append(f.freed, failed...)
		f.freedMu.Unlock()
	}
	return n
}

// Reconcile, at mount, deletes data files of inodes that no longer exist
// and sets each remaining one to its recovered size, durably, with the data
// directory: the data files replay wrote (data journal), because the fresh
// checkpoint that follows moves the tail past the records holding those
// bytes; and those it cut to size, because what lies past a file's end
// (bytes of writes the log lost) must not come back inside it when a later
// write extends the file and a crash then loses the cut. A data file
// shorter than its file's size (writes the log holds whose bytes the crash
// lost: never acknowledged) is extended, and a missing one made, so that
// the checkpoint's sizes are every data file's at least, as a checkpoint
// always leaves them (missing.go). An inode marked missing (MarkMissing)
// keeps its data file as it is, or none.
func (f *Files) Reconcile(m *meta.Model, replayed map[meta.Ino]bool) error {
	st := f.cfg.Store
	names, err := st.ReadDir(f.cfg.Dir)
	if err != nil {
		return err
	}
	have := make(map[meta.Ino]bool, len(names))
	for _, name := range names {
		n, perr := strconv.ParseUint(name, 10, 64)
		in := m.Inodes[meta.Ino(n)]
		path := filepath.Join(f.cfg.Dir, name)
		if perr != nil || in == nil || !in.IsRegular() {
			if err := store.RemoveAll(st, path); err != nil {
				return err
			}
			continue
		}
		have[in.Ino] = true
		if f.Missing(in.Ino) {
			continue
		}
		info, err := st.Stat(path)
		if err != nil {
			return err
		}
		if info.Size() != in.Size || replayed[meta.Ino(n)] {
			if err := f.setSize(in, info.Size() != in.Size, false); err != nil {
				return err
			}
		}
	}
	for _, ino := range slices.Sorted(maps.Keys(m.Inodes)) {
		if in := m.Inodes[ino]; in.IsRegular() && in.Size > 0 && !have[ino] && !f.Missing(ino) {
			if err := f.setSize(in, true, true); err != nil {
				return err
			}
		}
	}
	return st.SyncDir(f.cfg.Dir)
}

// setSize sets in's data file to its size if cut (creating it if create
// is set), and syncs it: Reconcile's.
func (f *Files) setSize(in *meta.Inode, cut, create bool) error {
	err := f.With(in.Ino, create, func(file store.StoreFile) error {
		if cut {
			if err := file.Truncate(in.Size); err != nil {
				return err
			}
		}
		return file.Datasync()
	})
	if err != nil {
		return fmt.Errorf("recovering data file %s: %w", f.Path(in.Ino), err)
	}
	return nil
}
