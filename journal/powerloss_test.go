package journal

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/internal/testfs"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
)

// The whole-store power-loss test. The store lives on a CrashFS, so a
// power cut takes everything the host filesystem had not made durable: log
// writes, data files, the checkpoint file and its rename, data directory
// entries, what mkfs wrote. Crash images are taken between operations and
// in the middle of any store call (the CrashFS hook), by the foreground or
// by the log writer and the checkpointer; each is checked as `xlogfs
// check` would, mounted, and compared with what had been acknowledged.

// A damage source changes a copy of a crash image before it is mounted
// (media faults: flipped bits, zeroed or stale blocks) and says what
// recovery must then do, derived from what the writer wrote and made
// durable (the world's account), never from recovery's own reading. The
// power-loss test recovers half its states a second time, damaged by one
// source picked by weight (powerdamage_test.go); a power cut alone must
// always mount.
type damageSource interface {
	name() string
	weight() int
	// damage damages img, a copy of s's image; ok is false when s has
	// nothing this source can damage.
	damage(w *powerWorld, s *powerState, r *rand.Rand, img *testfs.CrashFS) (want damageWant, ok bool)
}

// powerDamage lists the damage sources the power-loss test combines with
// power cuts.
var powerDamage = []damageSource{logFault{}, checkpointFault{}}

// fileChange is bytes an operation put into a file: written data, or the
// zeros of a hole, a punch or an extension. A shrinking truncate puts zeros
// past its cut for whatever later grows the file again, but only once it is
// in the log (it is made durable before the data file is cut): tid is then
// its transaction, and a crash state recovered to before it must not show
// those zeros.
type fileChange struct {
	off  int64
	data []byte
	tid  uint32
}

// fileAck is a file's content when an fsync or fdatasync of it returned,
// and the changes made to it since (append-only; a crash state keeps how
// many it had).
type fileAck struct {
	content []byte
	since   []fileChange
}

// fileOracle is what the test knows of one regular file.
type fileOracle struct {
	content []byte   // what reading it returns now
	ack     *fileAck // nil: never acknowledged
	history []string // what was done to it, for a failure's message
}

func (o *fileOracle) note(format string, a ...any) {
	o.history = append(o.history, fmt.Sprintf(format, a...))
	if len(o.history) > 40 {
		o.history = o.history[len(o.history)-40:]
	}
}

func (o *fileOracle) change(off int64, data []byte, tid uint32) {
	if o.ack != nil {
		o.ack.since = append(o.ack.since, fileChange{off: off, data: data, tid: tid})
	}
}

// ackView is a file's acknowledgment as a crash state saw it.
type ackView struct {
	ack *fileAck
	n   int
}

// allowed reports whether b is a value the byte at off may hold after a
// crash recovered to transaction k: its acknowledged value (zero past the
// acknowledged end), or one a later change wrote there.
func (v ackView) allowed(off int64, b byte, k uint32) bool {
	want := byte(0)
	if off < int64(len(v.ack.content)) {
		want = v.ack.content[off]
	}
	if b == want {
		return true
	}
	for _, c := range v.ack.since[:v.n] {
		if c.tid != 0 && int32(k-c.tid) < 0 {
			continue
		}
		if off >= c.off && off < c.off+int64(len(c.data)) && c.data[off-c.off] == b {
			return true
		}
	}
	return false
}

// shrunk reports whether a shrink of the file made after the
// acknowledgment is among the transactions up to k.
func (v ackView) shrunk(k uint32) bool {
	for _, c := range v.ack.since[:v.n] {
		if c.tid != 0 && int32(k-c.tid) >= 0 {
			return true
		}
	}
	return false
}

// powerDigest is a model's hash without its orphans (inodes only an open
// file kept, which a crash frees) and without the marks of inodes whose size
// follows their data file (open for writing in passthrough, which recovery
// clears). followed, from a recovery, gives the logged size and times of the
// inodes recovery grew to their data file's size: the state compared is the
// logged one.
func powerDigest(m *meta.Model, followed ...recovery.FollowedFile) [32]byte {
	c := m.Clone()
	c.DropOrphans()
	for _, in := range c.Inodes {
		in.SizeFollows = false
	}
	for _, f := range followed {
		if in := c.Inodes[f.Ino]; in != nil {
			in.Size, in.Mtime, in.Ctime = f.Logged, f.Mtime, f.Ctime
		}
	}
	return c.Digest()
}

// powerState is one crash state: the image, and what was committed and
// acknowledged when it was taken.
type powerState struct {
	img       *testfs.CrashFS
	committed uint32
	acked     uint32
	acks      map[meta.Ino]ackView
	ckptSeq   uint64   // Seq of the checkpoint file the filesystem saw then
	during    string   // "" between operations, else what was running
	shrinking meta.Ino // a truncate of this inode was running: it may be shorter than acknowledged
	gen       int      // mounts since mkfs: after 0, the store was recovered from a crash
	history   map[meta.Ino][]string
	// The writer's account as of the image: the newest record it had
	// made durable (read while the image was taken, so never past it),
	// and how much of the world's written and hist the image could hold.
	durable       logbuf.LSN
	written, hist int
}

// powerStats counts what the crash states exercised, so that a run shows
// it covered each kind.
type powerStats struct {
	states      int // recovered and checked
	midCall     int // taken inside a store call
	torn        int // a torn log tail was cut
	replayed    int // transactions were replayed
	lostTxns    int // committed, unacknowledged transactions were lost
	differ      int // some file read back other than as acknowledged (later writes kept, or partly)
	olderCkpt   int // an older checkpoint than the last one written was found
	tmpLeft     int // checkpoint.tmp was left
	mkfs        int // taken while mkfs ran
	mkfsHalf    int // of those, half-built stores
	checkpoints int // written while the states were taken
	damage      damageStats
	badMark     atomic.Bool             // a wrong durable watermark was reported
	writebacks  int                     // fsyncs that wrote data back without a flush of their own
	syncWrites  int                     // passthrough sync writes (acknowledged without the journal)
	followed    int                     // recoveries that kept a data file's larger size
	coverage    map[logbuf.Coverage]int // states by the store's CRC coverage
	extHeaders  int                     // states of stores whose records have extension headers
}

// powerWorld is one store on a CrashFS under the test.
type powerWorld struct {
	t    *testing.T
	r    *rand.Rand // the test goroutine's
	hr   *rand.Rand // the crash hook's (under mu)
	dir  string
	opts Options
	cov  logbuf.Coverage // the store's CRC coverage
	cfs  *testfs.CrashFS
	fs   *FS

	mu        sync.Mutex // the oracle, against the hook
	files     map[meta.Ino]*fileOracle
	states    []powerState
	during    string
	shrinking meta.Ino // the inode a running truncate changes
	hookRate  float64
	lastTID   atomic.Uint32
	acked     uint32
	opened    []meta.Ino // open handles (some never released: orphans at the crash)
	pt        bool       // opens are passthrough opens: the test writes their data files as the kernel would
	routes    bool       // with pt: opens take a route (datafile/route.go), passthrough or through the daemon and the log
	ptFile    map[meta.Ino]store.StoreFile
	tidOf     map[meta.Ino]uint32 // newest transaction touching an inode (what fsync forces)
	dataTid   map[meta.Ino]uint32 // newest one fdatasync of it must force
	sizeOf    map[meta.Ino]int64
	digests   map[uint32][32]byte // the model after each transaction of this mount
	fsyncRate float64
	pageRate  float64 // share of steps that overwrite an open file and fsync it
	names     []string
	stats     *powerStats
	gen       int

	// The writer's account of this mount's log (under mu): every record
	// written (writtenRec, in write order), what each log write
	// overwrote (blockHist: stale blocks), and every checkpoint file
	// renamed into place, by Seq.
	written []writtenRec
	hist    []blockHist
	histBy  map[int64][]int
	ckpts   map[uint64][]byte
	xlog    atomic.Pointer[xlog.Log] // the mounted log, for the account's checks
}

const powerDir = "/store"

// hook runs inside CrashFS calls (with its lock held): now and then it
// takes a crash image there, more often right after the calls where order
// matters most: a log write not yet synced, a rename or a directory sync.
func (w *powerWorld) hook(c *testfs.CrashFS, op, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if op == "rename" && name == filepath.Join(powerDir, store.CheckpointName+".tmp") {
		if b, ok := c.FileLocked(filepath.Join(powerDir, store.CheckpointName)); ok {
			if ck, err := store.DecodeCheckpoint(b, store.CheckpointName); err == nil {
				w.ckpts[ck.Seq] = slices.Clone(b)
			}
		}
	}
	rate := w.hookRate
	if op == "rename" || op == "syncdir" || op == "write" && name == filepath.Join(powerDir, store.LogName) {
		rate *= 8
	}
	if w.fs == nil || w.hr.Float64() >= rate {
		return
	}
	s := w.stateLocked(c.CrashLocked(w.hr), liveCheckpointSeq(c))
	s.during = w.during
	if s.during == "" {
		s.during = "background"
	}
	w.states = append(w.states, s)
}

// stateLocked describes the moment; the caller holds w.mu, and the
// CrashFS's lock, under which img was taken: no log sync can complete
// meanwhile, so the durable record it reads is in img.
func (w *powerWorld) stateLocked(img *testfs.CrashFS, ckptSeq uint64) powerState {
	_, _, _, durable := w.fs.x.SnapshotStats()
	s := powerState{img: img, committed: w.fs.x.LastCommitted(), acked: w.acked, acks: map[meta.Ino]ackView{}, ckptSeq: ckptSeq, gen: w.gen,
		shrinking: w.shrinking, durable: durable, written: len(w.written), hist: len(w.hist)}
	s.history = map[meta.Ino][]string{}
	for ino, o := range w.files {
		if o.ack != nil {
			s.acks[ino] = ackView{ack: o.ack, n: len(o.ack.since)}
			s.history[ino] = slices.Clone(o.history)
		}
	}
	return s
}

// take takes a crash image between operations, in the lock order of the
// hook (CrashFS, then the oracle).
func (w *powerWorld) take() {
	w.cfs.WithLock(func() {
		img, seq := w.cfs.CrashLocked(w.r), liveCheckpointSeq(w.cfs)
		w.mu.Lock()
		w.states = append(w.states, w.stateLocked(img, seq))
		w.mu.Unlock()
	})
}

// liveCheckpointSeq is the Seq of the checkpoint file as the live
// filesystem sees it; the caller holds c's lock.
func liveCheckpointSeq(c *testfs.CrashFS) uint64 {
	b, ok := c.FileLocked(filepath.Join(powerDir, store.CheckpointName))
	if !ok {
		return 0
	}
	ck, err := store.DecodeCheckpoint(b, store.CheckpointName)
	if err != nil {
		return 0
	}
	return ck.Seq
}

// mount mounts the store on cfs; files is the oracle carried over from the
// state it was recovered from.
func (w *powerWorld) mount(cfs *testfs.CrashFS, files map[meta.Ino]*fileOracle) {
	w.cfs = cfs
	o := w.opts
	o.Store = cfs
	w.xlog.Store(nil)
	w.mu.Lock()
	w.written, w.hist, w.histBy, w.ckpts = nil, nil, map[int64][]int{}, map[uint64][]byte{}
	w.mu.Unlock()
	dev, err := recovery.OpenLogDevice(cfs, filepath.Join(w.dir, store.LogName))
	if err != nil {
		w.t.Fatal(err)
	}
	o.Device = acctDevice{dev, w}
	fs, err := Open(w.dir, quietOpts(o))
	if err != nil {
		// After the first mount: a power cut right after a recovery.
		w.t.Fatalf("mount %d (%s journal): %v", w.gen, w.opts.Journal, err)
	}
	if w.pt {
		fs.MarkCreates() // as a passthrough mount does: files are created marked
	}
	base := fs.bound.LastTID
	w.xlog.Store(fs.x)
	w.mu.Lock()
	w.fs = fs
	w.files = files
	w.states = nil
	w.opened = nil
	w.ptFile = map[meta.Ino]store.StoreFile{}
	w.lastTID.Store(base)
	w.acked = base
	w.tidOf, w.dataTid, w.sizeOf = map[meta.Ino]uint32{}, map[meta.Ino]uint32{}, map[meta.Ino]int64{}
	for ino, in := range fs.model.Inodes {
		w.sizeOf[ino] = in.Size
	}
	w.digests = map[uint32][32]byte{base: powerDigest(fs.model)}
	w.mu.Unlock()
	cfs.WithLock(func() {
		if b, ok := cfs.FileLocked(filepath.Join(w.dir, store.CheckpointName)); ok {
			if ck, err := store.DecodeCheckpoint(b, store.CheckpointName); err == nil {
				w.ckpts[ck.Seq] = slices.Clone(b)
			}
		}
	})
	fs.afterCommit = func(tid uint32, op *meta.Op) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.lastTID.Store(tid)
		w.digests[tid] = powerDigest(fs.model)
		for _, ino := range []meta.Ino{op.Ino, op.Parent, op.NewParent} {
			if ino != 0 {
				w.tidOf[ino] = tid
			}
		}
		size := int64(-1)
		if in := fs.model.Inodes[op.Ino]; in != nil {
			size = in.Size
		}
		// What fdatasync must make durable to read the data back:
		// the inode, its size, and in data mode what changes its bytes.
		zeroes := op.Type == meta.OpFallocate && op.Mode&(meta.FallocPunchHole|meta.FallocZeroRange) != 0
		logs := w.opts.Journal == JournalData || w.opts.ImmediateWrite > 0 // some written bytes are in the log
		if op.Type == meta.OpCreate || size != w.sizeOf[op.Ino] || logs && (op.Data != nil || zeroes) || w.opts.ImmediateWrite > 0 && op.Type == meta.OpWrite {
			w.dataTid[op.Ino] = tid
		}
		w.sizeOf[op.Ino] = size
	}
	cfs.OnChange = w.hook
}

// file returns the oracle of a regular file.
func (w *powerWorld) file(ino meta.Ino) *fileOracle {
	o := w.files[ino]
	if o == nil {
		o = &fileOracle{}
		w.files[ino] = o
	}
	return o
}

// setDuring names the operation in progress, for crash states the hook
// takes inside it.
func (w *powerWorld) setDuring(s string) {
	w.mu.Lock()
	w.during = s
	w.mu.Unlock()
}

// write changes the oracle for a write of p at off, before the write runs
// (a crash inside it may already show its bytes), and after it.
func (w *powerWorld) write(ino meta.Ino, p []byte, off int64, direct bool) {
	w.mu.Lock()
	o := w.file(ino)
	if gap := off - int64(len(o.content)); gap > 0 {
		o.change(int64(len(o.content)), make([]byte, gap), 0)
	}
	o.change(off, p, 0)
	w.mu.Unlock()
	var n int
	var err error
	if direct {
		n, err = w.fs.WriteDirect(ino, p, off)
	} else {
		n, err = w.fs.Write(ino, p, off)
	}
	if err != nil {
		return
	}
	w.mu.Lock()
	if end := off + int64(n); end > int64(len(o.content)) {
		o.content = testfs.Resized(o.content, end)
	}
	copy(o.content[off:], p[:n])
	o.note("write %d at %d (direct %v): size %d", n, off, direct, len(o.content))
	w.mu.Unlock()
}

// ptWrite writes p at off to the data file of a file open in passthrough,
// as the kernel does: the journal sees nothing of it until it learns. A
// sync write (O_SYNC, O_DSYNC, RWF_DSYNC) is then synced in the data file
// alone, as the kernel does too, and acknowledged when it returns: the
// journal hears nothing of it, and recovery must still bring back what it
// acknowledged.
func (w *powerWorld) ptWrite(ino meta.Ino, p []byte, off int64, sync bool) {
	f := w.ptFile[ino]
	w.mu.Lock()
	o := w.file(ino)
	if gap := off - int64(len(o.content)); gap > 0 {
		o.change(int64(len(o.content)), make([]byte, gap), 0)
	}
	o.change(off, p, 0)
	w.mu.Unlock()
	if _, err := f.WriteAt(p, off); err != nil {
		w.t.Fatalf("passthrough write to inode %d: %v", ino, err)
	}
	if sync {
		if err := f.Datasync(); err != nil {
			w.t.Fatalf("passthrough sync write to inode %d: %v", ino, err)
		}
	}
	w.mu.Lock()
	if end := off + int64(len(p)); end > int64(len(o.content)) {
		o.content = testfs.Resized(o.content, end)
	}
	copy(o.content[off:], p)
	o.note("passthrough write %d at %d (sync %v): size %d", len(p), off, sync, len(o.content))
	if sync {
		// The data file holds every byte the file has (this goroutine
		// alone changes it), and its size.
		o.ack = &fileAck{content: slices.Clone(o.content)}
		w.stats.syncWrites++
	}
	w.mu.Unlock()
}

func (w *powerWorld) truncate(ino meta.Ino, size int64) {
	w.mu.Lock()
	o := w.file(ino)
	if size > int64(len(o.content)) {
		o.change(int64(len(o.content)), make([]byte, size-int64(len(o.content))), 0)
	}
	w.shrinking = ino
	w.mu.Unlock()
	_, err := w.fs.SetAttr(ino, SetAttrIn{Mask: meta.SetSize, Size: size})
	w.mu.Lock()
	w.shrinking = 0
	w.mu.Unlock()
	if err != nil {
		return
	}
	w.mu.Lock()
	if size < int64(len(o.content)) {
		o.change(size, make([]byte, int64(len(o.content))-size), w.lastTID.Load())
	}
	o.content = slices.Clone(testfs.Resized(o.content, size))
	o.note("truncate to %d", size)
	w.mu.Unlock()
}

func (w *powerWorld) fallocate(ino meta.Ino, mode uint32, off, n int64) {
	w.mu.Lock()
	o := w.file(ino)
	size := int64(len(o.content))
	newSize := size
	if mode&meta.FallocKeepSize == 0 {
		newSize = max(size, off+n)
	}
	if newSize > size {
		o.change(size, make([]byte, newSize-size), 0)
	}
	zero := mode&(meta.FallocPunchHole|meta.FallocZeroRange) != 0 && off < newSize
	if zero {
		o.change(off, make([]byte, min(off+n, newSize)-off), 0)
	}
	w.mu.Unlock()
	if err := w.fs.Fallocate(ino, mode, off, n); err != nil {
		return
	}
	w.mu.Lock()
	o.content = testfs.Resized(o.content, newSize)
	if zero {
		clear(o.content[off:min(off+n, newSize)])
	}
	o.note("fallocate mode %#x %d at %d: size %d", mode, n, off, len(o.content))
	w.mu.Unlock()
}

// fsync acknowledges, once it returns: every transaction up to the one it
// forces, and (regular files) the content.
func (w *powerWorld) fsync(ino meta.Ino, datasync bool) {
	w.fs.mu.RLock()
	in := w.fs.model.Inodes[ino]
	regular := in != nil && in.IsRegular()
	w.fs.mu.RUnlock()
	w.mu.Lock()
	tid := w.tidOf[ino]
	if datasync {
		tid = w.dataTid[ino]
	}
	w.mu.Unlock()
	err := w.fs.Fsync(ino, datasync)
	if errors.Is(err, syscall.ENOENT) {
		return
	}
	if err != nil {
		w.t.Fatalf("fsync of inode %d: %v", ino, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pt {
		// The fsync logged what the kernel did to the file first (a
		// transaction newer than tid) and forced it too. Nothing else
		// learns this file meanwhile: only this goroutine writes it.
		tid = w.tidOf[ino]
		if datasync {
			tid = w.dataTid[ino]
		}
	}
	if tid != 0 && int32(tid-w.acked) > 0 {
		w.acked = tid
	}
	if regular {
		o := w.file(ino)
		o.ack = &fileAck{content: slices.Clone(o.content)}
		o.note("fsync (datasync %v) acknowledged %d bytes", datasync, len(o.content))
	}
}

// step performs one random operation.
func (w *powerWorld) step() {
	fs, r := w.fs, w.r
	fs.mu.RLock()
	var inos, dirs, files []meta.Ino
	for ino, in := range fs.model.Inodes {
		inos = append(inos, ino)
		if in.IsDir() {
			dirs = append(dirs, ino)
		} else if in.IsRegular() {
			files = append(files, ino)
		}
	}
	fs.mu.RUnlock()
	slices.Sort(inos)
	slices.Sort(dirs)
	slices.Sort(files)
	pick := func(s []meta.Ino) meta.Ino {
		if len(s) == 0 {
			return meta.RootIno
		}
		return s[r.IntN(len(s))]
	}
	name := func() string { return w.names[r.IntN(len(w.names))] }
	bytesOf := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	k := r.IntN(80)
	if r.Float64() < w.fsyncRate {
		k = 80
	}
	if r.Float64() < w.pageRate {
		// A database's page write: an overwrite in an open file, then
		// its fsync.
		k = 40 + r.IntN(12)
		if len(w.opened) == 0 {
			k = 72 // open one first
		}
		defer func() {
			if len(w.opened) > 0 {
				ino := w.opened[r.IntN(len(w.opened))]
				w.setDuring("fsync after an overwrite")
				w.fsync(ino, r.IntN(2) == 0)
				w.setDuring("")
			}
		}()
	}
	switch {
	case k < 12:
		w.setDuring("create")
		if a, err := fs.Create(pick(dirs), name(), meta.ModeReg|0o644, 0, 0, 0, ""); err == nil {
			w.mu.Lock()
			w.files[a.Ino] = &fileOracle{}
			w.mu.Unlock()
		}
	case k < 16:
		w.setDuring("mkdir")
		fs.Create(pick(dirs), name(), meta.ModeDir|0o755, 0, 0, 0, "")
	case k < 17:
		w.setDuring("symlink")
		fs.Create(pick(dirs), name(), meta.ModeLink|0o777, 0, 0, 0, name())
	case k < 20:
		w.setDuring("link")
		fs.Link(pick(files), pick(dirs), name())
	case k < 25:
		w.setDuring("unlink")
		fs.Unlink(pick(dirs), name())
	case k < 27:
		w.setDuring("rmdir")
		fs.Rmdir(pick(dirs), name())
	case k < 32:
		w.setDuring("rename")
		flags := []uint32{0, 0, meta.RenameNoReplace, meta.RenameExchange}[r.IntN(4)]
		fs.Rename(pick(dirs), name(), pick(dirs), name(), flags)
	case k < 35:
		w.setDuring("setattr")
		fs.SetAttr(pick(inos), SetAttrIn{Mask: meta.SetMode | meta.SetMtime, Mode: uint32(r.IntN(0o777)), Mtime: r.Int64N(1 << 40)})
	case k < 40:
		w.setDuring("truncate")
		w.truncate(pick(files), r.Int64N(20000))
	case k < 52 && len(w.opened) > 0:
		// An overwrite inside an open file, as a database's page
		// writes are: what an fsync may write back without a flush.
		ino := w.opened[r.IntN(len(w.opened))]
		w.mu.Lock()
		size := int64(len(w.file(ino).content))
		w.mu.Unlock()
		if size < 2 {
			break
		}
		off := r.Int64N(size - 1)
		p := bytesOf(1 + r.IntN(int(min(size-off, 6000))))
		if f := w.ptFile[ino]; f != nil && r.IntN(2) == 0 {
			w.setDuring("passthrough overwrite")
			w.ptWrite(ino, p, off, false)
		} else {
			w.setDuring("overwrite")
			w.write(ino, p, off, false)
		}
	case k < 60 && w.pt && len(w.ptFile) > 0 && r.IntN(3) > 0:
		open := slices.Sorted(maps.Keys(w.ptFile))
		ino := open[r.IntN(len(open))]
		if r.IntN(5) == 0 {
			// An append by an O_SYNC/O_DSYNC open or pwritev2's
			// RWF_DSYNC: acknowledged at once, never seen by the
			// journal.
			w.mu.Lock()
			end := int64(len(w.file(ino).content))
			w.mu.Unlock()
			w.setDuring("passthrough sync append")
			w.ptWrite(ino, bytesOf(1+r.IntN(6000)), end+r.Int64N(2)*r.Int64N(3000), true)
			break
		}
		w.setDuring("passthrough write")
		w.ptWrite(ino, bytesOf(1+r.IntN(6000)), r.Int64N(40000), false)
	case k < 60:
		w.setDuring("write")
		w.write(pick(files), bytesOf(1+r.IntN(6000)), r.Int64N(40000), false)
	case k < 62:
		w.setDuring("big write")
		w.write(pick(files), bytesOf(40000+r.IntN(60000)), r.Int64N(8000), false)
	case k < 64:
		w.setDuring("direct write")
		w.write(pick(files), bytesOf(4096*(1+r.IntN(3))), 4096*r.Int64N(8), true)
	case k < 68:
		w.setDuring("fallocate")
		mode := []uint32{0, meta.FallocKeepSize, meta.FallocKeepSize | meta.FallocPunchHole, meta.FallocZeroRange}[r.IntN(4)]
		w.fallocate(pick(files), mode, r.Int64N(30000), 1+r.Int64N(8000))
	case k < 71:
		w.setDuring("setxattr")
		fs.SetXattr(pick(inos), "user."+name(), []byte(name()), 0)
	case k < 72:
		w.setDuring("removexattr")
		fs.RemoveXattr(pick(inos), "user."+name())
	case k < 75:
		if len(w.opened) > 0 && r.IntN(2) == 0 {
			i := r.IntN(len(w.opened))
			ino := w.opened[i]
			w.opened = slices.Delete(w.opened, i, i+1)
			w.setDuring("release")
			if w.pt {
				fs.ReleasePassthrough(ino, true, w.ptFile[ino] != nil)
				if !slices.Contains(w.opened, ino) {
					delete(w.ptFile, ino)
					if w.routes && r.IntN(2) == 0 {
						// The kernel forgets the inode: its next
						// open may take the other route.
						fs.Hold(ino)
						fs.Unhold(ino)
					}
				}
			} else {
				fs.Release(ino) // the last release of an unlinked file frees it
			}
		} else if ino := pick(files); w.pt {
			w.setDuring("passthrough open")
			if f, err := fs.OpenPassthrough(ino, true, false); err == nil {
				switch {
				case f != nil:
					w.ptFile[ino] = f
				case !w.routes:
					w.t.Fatalf("inode %d, open only in passthrough, was opened through the daemon", ino)
				case w.ptFile[ino] != nil:
					w.t.Fatalf("inode %d, open in passthrough, was opened through the daemon too", ino)
				}
				w.opened = append(w.opened, ino)
			}
		} else if fs.Open(ino) == nil {
			w.opened = append(w.opened, ino) // open, maybe unlinked later: an orphan at a crash
		}
	case k < 76:
		w.setDuring("checkpoint")
		fs.runCheckpoint()
	default:
		ino := pick(inos)
		switch {
		case r.IntN(4) == 0:
			ino = pick(dirs)
		case len(w.opened) > 0 && r.IntN(2) == 0:
			ino = w.opened[r.IntN(len(w.opened))] // an open file: fsync's write-back path
		}
		datasync := r.IntN(3) == 0
		w.setDuring(map[bool]string{false: "fsync", true: "fdatasync"}[datasync])
		w.fsync(ino, datasync)
	}
	w.setDuring("")
}

// recover checks one crash state: check finds the store sound, it mounts,
// the metadata is the state after some transaction from the acknowledged
// one to the last committed, and every acknowledged byte of every file
// reads back. It returns the mounted filesystem and its oracle.
func (w *powerWorld) recover(s powerState, seed uint64) (*FS, map[meta.Ino]*fileOracle) {
	t := w.t
	where := w.where(s, seed)
	if s.during != "" {
		w.stats.midCall++
	}
	img := s.img
	if _, err := img.Stat(filepath.Join(w.dir, store.CheckpointName+".tmp")); err == nil {
		w.stats.tmpLeft++
	}
	rep, err := recovery.InspectStore(img, w.dir)
	if err != nil {
		t.Fatalf("%s: check: %v", where, err)
	}
	if rep.Checkpoint.Seq < s.ckptSeq {
		w.stats.olderCkpt++
	}
	if !rep.Sound() {
		t.Fatalf("%s: check: not sound: corrupt %v, replay %v, problems %q", where, rep.Corrupt, rep.ReplayErr, rep.Problems)
	}
	o := w.opts
	o.Store = img
	fs, err := Open(w.dir, quietOpts(o))
	if err != nil {
		t.Fatalf("%s: mount after the crash: %v", where, err)
	}
	files, differ := w.verify(fs, s, where)
	if fs.bound.LastTID != s.committed {
		w.stats.lostTxns++
	}
	rec := fs.Recovery()
	if rec.TornLSN != 0 {
		w.stats.torn++
	}
	if rec.Transactions > 0 {
		w.stats.replayed++
	}
	if differ {
		w.stats.differ++
	}
	if len(rec.Followed) > 0 {
		w.stats.followed++
	}
	w.stats.states++
	return fs, files
}

func (w *powerWorld) where(s powerState, seed uint64) string {
	journal := w.opts.Journal.String()
	if w.pt {
		journal += " (passthrough)"
	}
	if w.opts.ImmediateWrite > 0 {
		journal += fmt.Sprintf(" (immediate writes up to %d)", w.opts.ImmediateWrite)
	}
	return fmt.Sprintf("seed %d, %s journal, CRC coverage %s, mount %d, crash %s", seed, journal, w.cov, s.gen, map[bool]string{true: "between operations", false: "during " + s.during}[s.during == ""])
}

// verify checks a store mounted from crash state s: its metadata is
// consistent and the state after some transaction k from the acknowledged
// one to the last committed, and every byte of every file acknowledged
// in s reads back as acknowledged or as a later change left it. It returns
// the oracle of the recovered files, and whether some file read back other
// than as acknowledged.
func (w *powerWorld) verify(fs *FS, s powerState, where string) (files map[meta.Ino]*fileOracle, differ bool) {
	files, differ, err := w.lost(fs, s)
	if err != nil {
		w.t.Fatalf("%s: %v", where, err)
	}
	return files, differ
}

// lost is verify's check, returning what was lost instead of failing.
func (w *powerWorld) lost(fs *FS, s powerState) (files map[meta.Ino]*fileOracle, differ bool, err error) {
	if p := fs.model.Check(); len(p) > 0 {
		return nil, false, fmt.Errorf("recovered metadata is inconsistent: %q", p)
	}
	k := fs.bound.LastTID
	if int32(k-s.acked) < 0 || int32(s.committed-k) < 0 {
		return nil, false, fmt.Errorf("recovered up to transaction %d; acknowledged %d, committed %d (recovery %+v)",
			k, s.acked, s.committed, fs.Recovery())
	}
	if want, ok := w.digests[k]; !ok || want != powerDigest(fs.model, fs.Recovery().Followed...) {
		return nil, false, fmt.Errorf("the recovered metadata is not the state after transaction %d (acknowledged %d, committed %d, recovery %+v)",
			k, s.acked, s.committed, fs.Recovery())
	}
	// Every file's bytes: each acknowledged one as acknowledged or as a
	// later change left it.
	files = map[meta.Ino]*fileOracle{}
	for ino, in := range fs.model.Inodes {
		if !in.IsRegular() {
			continue
		}
		got := make([]byte, in.Size)
		n, err := fs.Read(ino, got, 0)
		if err != nil || int64(n) != in.Size {
			return nil, false, fmt.Errorf("reading inode %d after the crash: %d of %d bytes, %v", ino, n, in.Size, err)
		}
		o := &fileOracle{content: got, history: []string{fmt.Sprintf("recovered from a crash with %d bytes", len(got))}}
		if v, ok := s.acks[ino]; ok {
			if in.Size < int64(len(v.ack.content)) && !v.shrunk(k) && s.shrinking != ino {
				return nil, false, fmt.Errorf("inode %d is %d bytes, shorter than the %d fsync acknowledged, and no shrink since was recovered; its history:\n%s",
					ino, in.Size, len(v.ack.content), strings.Join(s.history[ino], "\n"))
			}
			for off, b := range got {
				if !v.allowed(int64(off), b, k) {
					return nil, false, fmt.Errorf("inode %d (size %d) byte %d is %#02x: neither what fsync acknowledged (%s) nor what a later write put there; its history:\n%s",
						ino, in.Size, off, b, describeAck(v, int64(off)), strings.Join(s.history[ino], "\n"))
				}
			}
			if !bytes.Equal(got, v.ack.content) {
				differ = true
			}
			// Carried into the next mount, whose transactions are
			// numbered anew: a shrink recovered is now just a change,
			// one not recovered never happened.
			o.ack = &fileAck{content: v.ack.content[:min(int64(len(v.ack.content)), in.Size)]}
			for _, c := range v.ack.since[:v.n] {
				if c.tid != 0 && int32(k-c.tid) < 0 {
					continue
				}
				c.tid = 0
				o.ack.since = append(o.ack.since, c)
			}
			// Recovered shorter than acknowledged (a shrink since): the
			// acknowledgment now ends there, and its end is a hole,
			// zeros when the file grows again.
		}
		files[ino] = o
	}
	return files, differ, nil
}

func describeAck(v ackView, off int64) string {
	if off >= int64(len(v.ack.content)) {
		return fmt.Sprintf("past its %d bytes, so zero", len(v.ack.content))
	}
	return fmt.Sprintf("%#02x, of %d bytes, %d changes since", v.ack.content[off], len(v.ack.content), v.n)
}

// mkfsStates cuts the power while mkfs runs: an image is either no store
// yet (a half-built one, which mkfs --force remakes) or a whole empty one.
func mkfsStates(t *testing.T, r *rand.Rand, seed uint64, cs *powerStats) {
	cfs := testfs.NewCrashFS()
	var imgs []*testfs.CrashFS
	cfs.OnChange = func(c *testfs.CrashFS, _, _ string) {
		if r.IntN(3) == 0 {
			imgs = append(imgs, c.CrashLocked(r))
		}
	}
	if _, err := store.Mkfs(powerDir, store.MkfsOptions{LogSize: store.MinLogSize, LogBSize: 32 << 10, Store: cfs}); err != nil {
		t.Fatal(err)
	}
	cfs.OnChange = nil
	for _, img := range imgs {
		cs.mkfs++
		if _, err := store.ReadSuperblock(img, powerDir); err != nil {
			cs.mkfsHalf++
			if !strings.Contains(err.Error(), "half-built") && !strings.Contains(err.Error(), "not an xlogfs store") {
				t.Fatalf("seed %d: after a crash in mkfs: %v", seed, err)
			}
			if _, err := store.Mkfs(powerDir, store.MkfsOptions{LogSize: store.MinLogSize, Store: img}); err != nil && !strings.Contains(err.Error(), "--force") {
				t.Fatalf("seed %d: mkfs of a store a crash cut short: %v; want it done or refused for --force", seed, err)
			}
			if _, err := store.Mkfs(powerDir, store.MkfsOptions{LogSize: store.MinLogSize, Store: img, Force: true}); err != nil {
				t.Fatalf("seed %d: mkfs --force of a store a crash cut short: %v", seed, err)
			}
		}
		rep, err := recovery.InspectStore(img, powerDir)
		if err != nil || !rep.Sound() || len(rep.Model.Inodes) != 1 {
			t.Fatalf("seed %d: a store mkfs finished (or a crash left whole) is not a sound empty store: %v, %+v", seed, err, rep)
		}
		fs, err := Open(powerDir, quietOpts(Options{Store: img}))
		if err != nil {
			t.Fatalf("seed %d: mount after a crash in mkfs: %v", seed, err)
		}
		fs.Abandon()
	}
}

// TestPowerLoss runs random operations on a store on a CrashFS, in both
// journal modes, cuts the power on the whole store at random points (inside
// store calls too), and checks each crash state: `check` finds it sound, it
// mounts, its metadata is the state after a prefix of the committed
// transactions that includes every acknowledged one (fsync of a file or a
// directory, fdatasync), and every file's bytes are those its last
// acknowledged fsync saw, except where a later write changed them. Some
// states are mounted again and driven further, and cut again: a power cut
// right after a recovery must lose nothing either. Half the states are
// also recovered from a copy with a media fault (powerDamage): a bit flip,
// zeroed or stale block in a durable log record, or a damaged checkpoint
// file; recoverDamaged says what each must give.
func TestPowerLoss(t *testing.T) {
	want, seed := crashKnobs(t, "XLOGFS_POWERLOSS")
	r := rand.New(rand.NewPCG(seed, 0x90e4))
	var cs powerStats
	modeStates := map[JournalMode]int{}
	ptStates, immStates := 0, 0
	// A full run must cover every kind of state; some seeds need more than
	// want states for it (fsyncs that wrote back without a flush are
	// rare), so a full run goes on, up to four times as long, until it has
	// them all.
	covered := func() bool {
		return cs.torn > 0 && cs.replayed > 0 && cs.lostTxns > 0 && cs.differ > 0 && cs.olderCkpt > 0 &&
			cs.tmpLeft > 0 && cs.mkfsHalf > 0 && cs.midCall > 0 && modeStates[JournalMeta] > 0 && modeStates[JournalData] > 0 && ptStates > 0 && immStates > 0 && cs.writebacks > 0 &&
			cs.syncWrites > 0 && cs.followed > 0 && cs.coverage[logbuf.CoverWhole] > 0 && cs.coverage[logbuf.CoverXFS] > 0 && cs.extHeaders > 0
	}
	more := func() bool { return cs.states < want || want >= 2000 && !covered() && cs.states < 4*want }
	for run := 0; more(); run++ {
		runSeed := r.Uint64()
		rr := rand.New(rand.NewPCG(runSeed, 1))
		if run%8 == 0 {
			mkfsStates(t, rr, runSeed, &cs)
		}
		// Either CRC coverage; under xfs coverage, half of the stores
		// have 64 KiB iclogs, whose records have an extension header
		// that a short payload leaves out of the CRC.
		cov := logbuf.Coverage(runSeed >> 63)
		logSize, logbsize := int64(store.MinLogSize), 32<<10
		if cov == logbuf.CoverXFS && runSeed>>62&1 == 1 {
			logSize, logbsize = 1<<20, 64<<10
		}
		cfs := testfs.NewCrashFS()
		if _, err := store.Mkfs(powerDir, store.MkfsOptions{LogSize: logSize, LogBSize: logbsize, Coverage: cov, Store: cfs}); err != nil {
			t.Fatal(err)
		}
		w := &powerWorld{
			t: t, r: rr, hr: rand.New(rand.NewPCG(runSeed, 2)), dir: powerDir, cov: cov, stats: &cs,
			names:     []string{"a", "b", "c", "d", "e", "f"},
			fsyncRate: []float64{0.03, 0.1, 0.25}[rr.IntN(3)],
			pageRate:  []float64{0, 0, 0.3}[rr.IntN(3)],
			hookRate:  []float64{0.002, 0.01, 0.04}[rr.IntN(3)],
		}
		w.opts = Options{
			Mode:               cksum.Modes()[rr.IntN(3)],
			Journal:            []JournalMode{JournalMeta, JournalData, JournalMeta}[run%3],
			LogBufs:            2 + rr.IntN(2),
			CheckpointInterval: []time.Duration{time.Millisecond, 5 * time.Millisecond, time.Hour}[rr.IntN(3)],
			LogItems:           []LogItems{LogItemsLogical, LogItemsXFS}[run/3%2],
		}
		w.pt = run%3 == 2 // meta mode with the files open in passthrough
		if w.pt && rr.IntN(2) == 0 {
			// Each open takes a route: small writes of the opens
			// through the daemon are logged with their bytes, so a
			// file changes route between opens (datafile/route.go).
			w.routes = true
			w.opts.ImmediateWrite = 4096
			w.opts.SyncWrites = []datafile.SyncWrites{datafile.SyncAuto, datafile.SyncAuto, datafile.SyncLog, datafile.SyncPassthrough}[rr.IntN(4)]
		}
		if run%3 == 0 && rr.IntN(2) == 0 {
			w.opts.ImmediateWrite = 4096 // small writes logged with their bytes
		}
		w.mount(cfs.Crash(nil), map[meta.Ino]*fileOracle{})
		for gen := 0; gen < 4 && more(); gen++ {
			for range 20 + rr.IntN(200) {
				w.step()
				if rr.IntN(10) == 0 {
					w.take()
				}
			}
			w.take()
			cs.checkpoints += int(w.fs.ckpts.Load())
			cs.writebacks += int(w.fs.files.Syncs.Writeback.Load())
			w.fs.Abandon()
			w.mu.Lock()
			states := w.states
			w.fs = nil
			w.mu.Unlock()
			var next *testfs.CrashFS
			var nextFiles map[meta.Ino]*fileOracle
			for i, s := range states {
				if rr.IntN(2) == 0 {
					w.recoverDamaged(s, runSeed, rr)
				}
				fs, files := w.recover(s, runSeed)
				modeStates[w.opts.Journal]++
				if cs.coverage == nil {
					cs.coverage = map[logbuf.Coverage]int{}
				}
				cs.coverage[cov]++
				if logbsize > logbuf.HeaderCycleSize {
					cs.extHeaders++
				}
				if w.pt {
					ptStates++
				}
				if w.opts.ImmediateWrite > 0 {
					immStates++
				}
				fs.Abandon()
				if next == nil && (i == len(states)-1 || rr.IntN(len(states)) == 0) {
					// Carry on from this state after another power
					// cut, right after its recovery.
					next, nextFiles = s.img.Crash(rr), files
				}
			}
			if next == nil {
				break
			}
			w.gen++
			w.mount(next, nextFiles)
		}
		if w.fs != nil {
			w.fs.Abandon()
		}
	}
	t.Logf("%d crash states (meta %d, of which passthrough %d and with immediate writes %d, data %d; %d inside a store call): %d with a torn tail cut, %d replayed, %d lost unacknowledged transactions, "+
		"%d with file bytes other than the acknowledged ones (later writes), %d found an older checkpoint than the last written, %d with checkpoint.tmp left; "+
		"%d mkfs states (%d half-built, remade by --force); %d checkpoints; %d fsyncs wrote back without a flush of their own; "+
		"%d passthrough sync writes, %d recoveries kept a data file's larger size",
		cs.states, modeStates[JournalMeta], ptStates, immStates, modeStates[JournalData], cs.midCall, cs.torn, cs.replayed, cs.lostTxns,
		cs.differ, cs.olderCkpt, cs.tmpLeft, cs.mkfs, cs.mkfsHalf, cs.checkpoints, cs.writebacks, cs.syncWrites, cs.followed)
	t.Logf("CRC coverage: %d states of whole-coverage stores, %d of xfs-coverage ones (%d with an extension header per record)",
		cs.coverage[logbuf.CoverWhole], cs.coverage[logbuf.CoverXFS], cs.extHeaders)
	cs.damage.log(t)
	if want >= 2000 && !covered() {
		t.Errorf("the crash states did not cover every kind: %+v, %v, passthrough %d", &cs, modeStates, ptStates)
	}
	if want >= 2000 {
		cs.damage.covered(t, want)
	}
}
