package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
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

// fastTempDir prefers tmpfs: the test writes thousands of checkpoints, each
// with fsyncs that mean nothing for an in-memory crash device anyway.
func fastTempDir(t *testing.T) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "xlogfs-crash-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

// crashWorld is one store under the crash test: a live filesystem on a
// CrashDevice, and the model digest after each committed transaction.
type crashWorld struct {
	t       *testing.T
	r       *rand.Rand
	dir     string
	opts    Options
	cov     logbuf.Coverage // the store's CRC coverage
	dev     *testfs.CrashDevice
	fs      *FS
	digests map[[32]byte][]uint32 // model (orphans dropped) -> tids after which it held
	lastTID uint32                // newest committed
	acked   uint32                // newest acknowledged by a completed fsync
	tidOf   map[meta.Ino]uint32   // newest transaction touching each inode
	base    uint32                // tid of the recovered state this generation started from
	names   []string
	stats   *crashStats
	// how often an op is an fsync: rare fsyncs leave records written but
	// not durable, which is where torn writes happen
	fsyncRate float64

	// What the log device was asked to write, seen by histDevice: the
	// test's own account, independent of recovery's reading of the log.
	histMu  sync.Mutex
	hist    []blockHist     // what a block held before a write replaced it (non-zero contents only)
	histBy  map[int64][]int // indices into hist, by block offset
	written []writtenRec    // records this generation wrote, in write order
}

// blockHist is a block's contents before a record write replaced them: a
// stale block, what the position held a cycle (or more) earlier.
type blockHist struct {
	off int64
	old []byte
}

// writtenRec is a record as the writer wrote it.
type writtenRec struct {
	off     int64
	size    int
	sum     [32]byte // sha256 of its bytes: it survives a crash iff the image holds exactly them
	lsn     logbuf.LSN
	durable logbuf.LSN // its durable watermark
	commits []uint32   // tids whose COMMIT it holds
}

// histDevice is the log device of a crashWorld: a CrashDevice that keeps
// the world's account of record writes.
type histDevice struct {
	*testfs.CrashDevice
	w *crashWorld
}

func (d histDevice) WriteAt(p []byte, off int64) (int, error) {
	d.w.noteWrite(d.CrashDevice, p, off)
	return d.CrashDevice.WriteAt(p, off)
}

// noteWrite keeps what a write overwrites (records, and the zeros a mount
// clears past the head with) and the account of each record written.
func (w *crashWorld) noteWrite(dev *testfs.CrashDevice, p []byte, off int64) {
	old := make([]byte, len(p))
	dev.ReadAt(old, off)
	var wr *writtenRec
	if len(p) >= logbuf.BBSize && binary.BigEndian.Uint32(p) == logbuf.HeaderMagic {
		rec, err := logbuf.DecodeRecord(bytes.Clone(p), w.cov)
		if err != nil {
			w.t.Errorf("the writer wrote a record that does not decode at offset %d: %v", off, err)
			return
		}
		wr = &writtenRec{off: off, size: len(p), sum: sha256.Sum256(p), lsn: rec.LSN, durable: rec.Durable}
		for _, op := range rec.Ops {
			if op.ClientID == logbuf.ClientTransaction && op.Flags&logbuf.FlagCommit != 0 {
				wr.commits = append(wr.commits, op.TID)
			}
		}
	}
	w.histMu.Lock()
	defer w.histMu.Unlock()
	for b := 0; b+logbuf.BBSize <= len(old); b += logbuf.BBSize {
		if blk := old[b : b+logbuf.BBSize]; !allZero(blk) {
			if w.histBy == nil {
				w.histBy = map[int64][]int{}
			}
			w.histBy[off+int64(b)] = append(w.histBy[off+int64(b)], len(w.hist))
			w.hist = append(w.hist, blockHist{off: off + int64(b), old: blk})
		}
	}
	if wr != nil {
		w.written = append(w.written, *wr)
	}
}

// blockCycle is the cycle a log block carries: h_cycle after a header's
// magic, else the first word (a stamp, or xh_cycle).
func blockCycle(b []byte) uint32 {
	if binary.BigEndian.Uint32(b) == logbuf.HeaderMagic {
		return binary.BigEndian.Uint32(b[4:])
	}
	return binary.BigEndian.Uint32(b)
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// crashStats counts what the crash states exercised and how each ended.
type crashStats struct {
	recovered, torn, replayed, wrapped, checkpoints int
	// outcome of every state, plain and faulted
	refused, cut, replays, clean int
	// media faults
	faulted, flips, zeroed, stale     int
	faultRefused, faultCut, faultKept int
	faultEnded                        int                     // the damaged record's header was gone: the log just ended before it
	provable, unprovable              int                     // faults the log can prove were in a durable record, and the rest
	ackLost                           int                     // cut or ended losing acknowledged transactions: indistinguishable from a torn write
	faultMissing                      int                     // of those, data files cut or deleted by what was dropped: refused as missing data
	coverage                          map[logbuf.Coverage]int // states by the store's CRC coverage
	extHeaders                        int                     // states of stores whose records have extension headers
}

// count counts a recovered state of a store of coverage cov and iclogs of
// logbsize bytes.
func (cs *crashStats) count(cov logbuf.Coverage, logbsize int) {
	if cs.coverage == nil {
		cs.coverage = map[logbuf.Coverage]int{}
	}
	cs.coverage[cov]++
	if logbsize > logbuf.HeaderCycleSize {
		cs.extHeaders++
	}
}

func (cs *crashStats) outcome(err error, rec recovery.Report) {
	switch {
	case err != nil:
		cs.refused++
	case rec.TornLSN != 0:
		cs.cut++
	case rec.Transactions > 0:
		cs.replays++
	default:
		cs.clean++
	}
}

// snapshot is a crash state: a possible disk image with the checkpoint file
// as it was, and what was committed, acknowledged and durable at that
// moment.
type snapshot struct {
	image      []byte
	ckpt       []byte
	committed  uint32
	acked      uint32
	durable    logbuf.LSN // newest record the log had made durable
	histLen    int        // the world's hist and written as of the snapshot
	writtenLen int
	dataSizes  map[meta.Ino]int64 // the data files' sizes
}

func digestOf(m *meta.Model) [32]byte {
	c := m.Clone()
	c.DropOrphans()
	return c.Digest()
}

func (w *crashWorld) mount(dev *testfs.CrashDevice) {
	w.dev = dev
	o := w.opts
	if w.r.IntN(3) == 0 {
		// A log holding both kinds of transaction: mount with the
		// other log items now and then.
		o.LogItems = LogItemsXFS - o.LogItems
	}
	o.Device = histDevice{dev, w}
	w.histMu.Lock()
	w.written = nil
	w.histMu.Unlock()
	fs, err := Open(w.dir, quietOpts(o))
	if err != nil {
		w.t.Fatal(err)
	}
	w.fs = fs
	w.tidOf = map[meta.Ino]uint32{}
	w.base = fs.bound.LastTID
	w.lastTID, w.acked = w.base, w.base
	w.digests = map[[32]byte][]uint32{digestOf(fs.model): {w.base}}
	fs.afterCommit = func(tid uint32, op *meta.Op) {
		w.lastTID = tid
		d := digestOf(fs.model)
		w.digests[d] = append(w.digests[d], tid)

		for _, ino := range []meta.Ino{op.Ino, op.Parent, op.NewParent} {
			if ino != 0 {
				w.tidOf[ino] = tid
			}
		}
	}
}

// take captures a crash state. Holding the checkpoint lock keeps the
// checkpoint file and the log image from one moment. Durable is read before
// the image, so it never claims more than the image holds.
//
// What was committed and acknowledged is read first: the model lock comes
// before the checkpoint lock (journal/doc.go, Locking), and only this
// goroutine (step) commits.
func (w *crashWorld) take() snapshot {
	w.fs.mu.RLock()
	committed, acked := w.lastTID, w.acked
	w.fs.mu.RUnlock()
	w.fs.ckptMu.Lock()
	defer w.fs.ckptMu.Unlock()
	ck, err := os.ReadFile(filepath.Join(w.dir, store.CheckpointName))
	if err != nil {
		w.t.Fatal(err)
	}
	durable := w.fs.x.DurableLSN()
	// The data files as the crash of the process alone leaves them (the
	// host's page cache keeps every write): only their sizes, what
	// recovery checks (at least what the checkpoint made durable), since
	// this test checks the metadata. Between operations nothing but a
	// checkpoint changes their sizes (the checkpoint lock keeps it out),
	// but a round of log I/O still running may make a free durable and
	// delete its data file (Reap): read before the image, so that an image
	// without the free's record never goes with a store without its file.
	sizes, err := datafile.Sizes(store.OSFS(), filepath.Join(w.dir, store.DataDirName))
	check(w.t, err)
	img := w.dev.CrashImage(w.r)
	w.histMu.Lock()
	hl, wl := len(w.hist), len(w.written)
	w.histMu.Unlock()
	return snapshot{image: img, ckpt: ck, committed: committed, acked: acked, durable: durable, histLen: hl, writtenLen: wl, dataSizes: sizes}
}

// storeFor makes a copy of the store holding the snapshot's checkpoint, and
// data files of the snapshot's sizes (holes: their bytes are not this
// test's business).
func (w *crashWorld) storeFor(s snapshot) string {
	t := w.t
	dir := filepath.Join(fastTempDir(t), "store")
	check(t, os.MkdirAll(filepath.Join(dir, store.DataDirName), 0o755))
	sb, err := os.ReadFile(filepath.Join(w.dir, store.SuperblockName))
	check(t, err)
	check(t, os.WriteFile(filepath.Join(dir, store.SuperblockName), sb, 0o644))
	check(t, os.WriteFile(filepath.Join(dir, store.CheckpointName), s.ckpt, 0o644))
	for ino, size := range s.dataSizes {
		check(t, os.WriteFile(filepath.Join(dir, store.DataDirName, strconv.FormatUint(uint64(ino), 10)), nil, 0o600))
		check(t, os.Truncate(filepath.Join(dir, store.DataDirName, strconv.FormatUint(uint64(ino), 10)), size))
	}
	return dir
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// verifiesIndependently recomputes a record's CRC under coverage cov from
// the image with hash/crc32, not with the code under test; with cycle words
// restored if recovery restored them (then their bytes alone were off).
// Under xfs coverage it also checks, as written here, what the CRC leaves
// out (logbuf's documentation, CRC coverage).
func verifiesIndependently(img []byte, r *xlog.ScannedRecord, cov logbuf.Coverage) bool {
	b := bytes.Clone(img[r.Offset : r.Offset+int64(r.Header.RecordBytes())])
	if r.Restamped > 0 {
		binary.BigEndian.PutUint32(b[0:], logbuf.HeaderMagic)
		binary.BigEndian.PutUint32(b[4:], r.Header.Cycle)
		for off := logbuf.BBSize; off < len(b); off += logbuf.BBSize {
			binary.BigEndian.PutUint32(b[off:], r.Header.Cycle)
		}
	}
	stored := binary.LittleEndian.Uint32(b[32:])
	clear(b[32:36])
	if cov == logbuf.CoverWhole {
		return crc32.Checksum(b, castagnoli) == stored
	}
	// xlog_cksum: the header to h_pad0, xh_cycle and xh_cycle_data of
	// the extension headers h_len needs, the payload.
	hlen := int(binary.BigEndian.Uint32(b[12:]))
	hsize := len(b) - hlen
	crc := crc32.Update(0, castagnoli, b[:328])
	xheads := (hlen + 32<<10 - 1) / (32 << 10)
	for i := 1; i < xheads; i++ {
		crc = crc32.Update(crc, castagnoli, b[i*512:i*512+260])
	}
	crc = crc32.Update(crc, castagnoli, b[hsize:])
	zero := func(p []byte) bool { return bytes.Count(p, []byte{0}) == len(p) }
	ok := crc == stored && binary.BigEndian.Uint64(b[336:]) == ^binary.BigEndian.Uint64(b[328:]) && zero(b[344:512])
	for i := 1; i < hsize/512; i++ {
		xh := b[i*512 : (i+1)*512]
		if i < xheads {
			ok = ok && zero(xh[260:])
		} else {
			ok = ok && binary.BigEndian.Uint32(xh) == r.Header.Cycle && zero(xh[4:])
		}
	}
	return ok
}

// recover mounts a copy of the store holding the snapshot and checks the
// recovered model is the model after some transaction k with
// acked <= k <= committed. It returns the recovered filesystem's directory.
func (w *crashWorld) recover(s snapshot, seed uint64) (string, *testfs.CrashDevice, recovery.Report) {
	t := w.t
	dir := w.storeFor(s)
	dev := testfs.NewCrashDevice(s.image)

	// No record that fails its CRC may be replayed: every record the
	// walk accepts verifies, by a CRC computed here.
	ck, err := store.DecodeCheckpoint(s.ckpt, "checkpoint")
	check(t, err)
	for _, r := range xlog.ScanLog(s.image, recovery.WindowOf(ck, w.cov)).Records {
		if r.Record == nil || r.Computed != r.Stored || !verifiesIndependently(s.image, &r, w.cov) {
			t.Fatalf("seed %d: walk accepted record %v with stored CRC %#x, computed %#x, which does not verify",
				seed, r.LSN(), r.Stored, r.Computed)
		}
	}

	o := w.opts
	o.Device = dev
	fs, err := Open(dir, quietOpts(o))
	if err != nil {
		t.Fatalf("seed %d: recovery failed: %v", seed, err)
	}
	rec := fs.Recovery()
	w.stats.outcome(nil, rec)
	w.checkRecovered(fs, s, seed, "")
	w.stats.recovered++
	if rec.TornLSN != 0 {
		w.stats.torn++
	}
	if rec.Transactions > 0 {
		w.stats.replayed++
	}
	if ck.TailLSN.Cycle() > 1 {
		w.stats.wrapped++
	}
	fs.Abandon()
	return dir, testfs.NewCrashDevice(dev.Image()), rec
}

// checkRecovered checks a recovered filesystem holds consistent metadata,
// exactly the state after some committed transaction no older than the
// last acknowledged one.
func (w *crashWorld) checkRecovered(fs *FS, s snapshot, seed uint64, what string) {
	t := w.t
	if p := fs.model.Check(); len(p) > 0 {
		t.Fatalf("seed %d%s: recovered metadata is inconsistent: %q", seed, what, p)
	}
	got := fs.model.Digest()
	tids, ok := w.digests[got]
	if !ok {
		t.Fatalf("seed %d%s: recovered model matches no committed prefix (committed %d, acked %d, recovery %+v)",
			seed, what, s.committed, s.acked, fs.Recovery())
	}
	for _, k := range tids {
		if int32(k-s.acked) >= 0 && int32(s.committed-k) >= 0 {
			return
		}
	}
	t.Fatalf("seed %d%s: recovered the state after tid(s) %v; acknowledged %d, committed %d (recovery %+v; cksum mode %s, CRC coverage %s, journal %s)",
		seed, what, tids, s.acked, s.committed, fs.Recovery(), w.opts.Mode, w.cov, w.opts.Journal)
}

// Media faults: what a disk does to data it had already made durable.
const (
	faultFlip  = iota // one bit flipped
	faultZero         // one block reads back as zeros
	faultStale        // one block holds what the position held before (a lost write)
)

var faultNames = []string{"bit flip", "zeroed block", "stale block"}

// recoverFaulted damages one durable record of the snapshot's image and
// recovers it. The outcome must be exactly one of:
//   - refused, naming the damaged record, when the damage is a bit flip
//     (every block still carries the cycle, or its header is damaged) or the
//     log proves the record was durable: a valid record after it carries a
//     durable watermark at or above it, or more than logbufs records were
//     written from it to the newest valid one;
//   - otherwise (a zeroed or stale block, nothing proving it durable: the
//     same bytes as a torn write), cut there or ended just before it, the
//     state being exactly that after the transactions committed before it;
//   - the record replayed after all, its CRC verifying with its cycle
//     words restored, nothing lost.
//
// The targets straddle the boundary between what the log can prove
// durable and what may have been in flight: half of them are among the
// last logbufs+1 durable records. It returns false if the image has no
// durable record to damage.
func (w *crashWorld) recoverFaulted(s snapshot, seed uint64) bool {
	t, r := w.t, w.r
	ck, err := store.DecodeCheckpoint(s.ckpt, "checkpoint")
	check(t, err)
	var durable []xlog.ScannedRecord
	for _, rec := range xlog.ScanLog(s.image, recovery.WindowOf(ck, w.cov)).Records {
		if rec.LSN() <= s.durable {
			durable = append(durable, rec)
		}
	}
	if len(durable) == 0 {
		return false
	}
	logbufs := w.opts.LogBufs
	var target xlog.ScannedRecord
	if r.IntN(2) == 0 {
		near := durable[max(0, len(durable)-logbufs-1):]
		target = near[r.IntN(len(near))]
	} else {
		target = durable[r.IntN(len(durable))]
	}
	T := target.LSN()
	size := target.Header.RecordBytes()
	img := bytes.Clone(s.image)
	blk := target.Offset + int64(r.IntN(size/logbuf.BBSize))*logbuf.BBSize
	// Stale blocks: blocks of the target that held something else a
	// cycle (or more) earlier, the newest such contents. A block of the
	// target's own cycle would be one the mount had cleared (a leftover
	// of a cut record), not a lost write.
	stale := map[int64][]byte{}
	w.histMu.Lock()
	for off := target.Offset; off < target.Offset+int64(size); off += logbuf.BBSize {
		for _, i := range slices.Backward(w.histBy[off]) {
			if h := w.hist[i].old; i < s.histLen && blockCycle(h) != T.Cycle() {
				if !bytes.Equal(h, img[off:off+logbuf.BBSize]) {
					stale[off] = h
				}
				break
			}
		}
	}
	w.histMu.Unlock()
	kind := faultFlip
	switch {
	case r.IntN(3) == 0:
	case len(stale) > 0 && r.IntN(2) == 0:
		kind = faultStale
	default:
		kind = faultZero
	}
	switch kind {
	case faultFlip:
		bit := r.IntN(size * 8)
		img[target.Offset+int64(bit/8)] ^= 1 << (bit % 8)
	case faultStale:
		offs := slices.Sorted(maps.Keys(stale))
		blk = offs[r.IntN(len(offs))]
		copy(img[blk:], stale[blk])
	case faultZero:
		clear(img[blk : blk+logbuf.BBSize])
	}
	w.stats.faulted++
	w.stats.flips += b2i(kind == faultFlip)
	w.stats.zeroed += b2i(kind == faultZero)
	w.stats.stale += b2i(kind == faultStale)
	what := fmt.Sprintf(" (%s in durable record %v, offset %d)", faultNames[kind], T, blk)

	// What the log can prove, from the writer's own account: the records
	// after the target that survive byte for byte, their watermarks, and
	// how many records were written from the target to the newest of them.
	w.histMu.Lock()
	written := slices.Clone(w.written[:s.writtenLen])
	w.histMu.Unlock()
	proven := kind == faultFlip
	var newest logbuf.LSN
	k := ck.LastTID // the newest transaction committed before the target
	for _, wr := range written {
		switch {
		case wr.lsn < T:
			for _, tid := range wr.commits {
				if int32(tid-k) > 0 {
					k = tid
				}
			}
		case wr.lsn > T && wr.off+int64(wr.size) <= int64(len(img)) && sha256.Sum256(img[wr.off:wr.off+int64(wr.size)]) == wr.sum:
			newest = max(newest, wr.lsn)
			if wr.durable >= T {
				proven = true
			}
		}
	}
	between := 0
	for _, wr := range written {
		if wr.lsn >= T && wr.lsn <= newest {
			between++
		}
	}
	if between > logbufs {
		proven = true
	}
	if proven {
		w.stats.provable++
	} else {
		w.stats.unprovable++
	}
	// Whether recovery takes the damaged record as valid after restoring
	// its cycle words (then its CRC proves every other byte).
	kept := false
	for _, sr := range xlog.ScanLog(img, recovery.WindowOf(ck, w.cov)).Records {
		kept = kept || sr.LSN() == T && sr.Restamped > 0
	}

	dev := testfs.NewCrashDevice(img)
	o := w.opts
	o.Device = dev
	dir := w.storeFor(s)
	fs, err := Open(dir, quietOpts(o))
	var md *recovery.MissingDataError
	if errors.As(err, &md) {
		// The damaged record is dropped, but the store had acted on it
		// being durable: a data file cut to a shrink's size, or a freed
		// inode's deleted. The same state without the damage mounted
		// (recover), so that is all the damage's doing: missing data,
		// refused, which only a cut (not proven, not kept) may cause.
		// Mounted anyway, those files fail reads with EIO.
		if proven || kept {
			t.Fatalf("seed %d%s: the damaged record is replayed or refused, yet mount found missing data: %v", seed, what, err)
		}
		o.AllowMissingData = true
		o.Device = testfs.NewCrashDevice(img)
		if fs, err = Open(dir, quietOpts(o)); err != nil {
			t.Fatalf("seed %d%s: mount --allow-missing-data: %v", seed, what, err)
		}
		for _, d := range md.Files {
			if _, rerr := fs.Read(d.Ino, make([]byte, 1), 0); rerr != syscall.EIO {
				t.Fatalf("seed %d%s: inode %d, whose data file lacks durable bytes, reads with %v, want EIO", seed, what, d.Ino, rerr)
			}
		}
		w.stats.faultMissing++
	}
	var rec recovery.Report
	if err == nil {
		rec = fs.Recovery()
		defer fs.Abandon()
	}
	w.stats.outcome(err, rec)
	var ce *xlog.CorruptionError
	switch {
	case err != nil:
		if !errors.As(err, &ce) || ce.LSN != T {
			t.Fatalf("seed %d%s: mount refused, but not naming the damaged record: %v", seed, what, err)
		}
		if !proven {
			t.Fatalf("seed %d%s: mount refused a log whose bytes are those of a torn write: %v", seed, what, err)
		}
		w.stats.faultRefused++
	case kept:
		// The CRC proved the record's bytes; nothing may be lost.
		w.checkRecovered(fs, s, seed, what)
		w.stats.faultKept++
	case proven:
		t.Fatalf("seed %d%s: the log proves the record durable (or damaged, not torn), yet mount cut or dropped it (recovery %+v)", seed, what, rec)
	case rec.TornLSN != 0 && rec.TornLSN != T:
		t.Fatalf("seed %d%s: cut at %v, not at the damaged record (recovery %+v)", seed, what, rec.TornLSN, rec)
	default:
		// Cut there, or (its header gone, nothing after it) the log
		// ends there: exactly the transactions committed before it.
		if tids := w.digests[fs.model.Digest()]; !slices.Contains(tids, k) {
			t.Fatalf("seed %d%s: recovered the state after tid(s) %v, want exactly %d, the last committed before the damaged record (recovery %+v)",
				seed, what, tids, k, rec)
		}
		if rec.TornLSN == T {
			w.stats.faultCut++
		} else {
			w.stats.faultEnded++
		}
		if int32(s.acked-k) > 0 {
			w.stats.ackLost++
		}
	}
	return true
}

// step performs one random operation.
func (w *crashWorld) step() {
	fs, r := w.fs, w.r
	fs.mu.RLock()
	inos := slices.Sorted(func(yield func(meta.Ino) bool) {
		for ino := range fs.model.Inodes {
			if !yield(ino) {
				return
			}
		}
	})
	var dirs, files []meta.Ino
	for _, ino := range inos {
		in := fs.model.Inodes[ino]
		if in.IsDir() {
			dirs = append(dirs, ino)
		} else if in.IsRegular() {
			files = append(files, ino)
		}
	}
	fs.mu.RUnlock()
	pick := func(s []meta.Ino) meta.Ino {
		if len(s) == 0 {
			return meta.RootIno
		}
		return s[r.IntN(len(s))]
	}
	name := func() string { return w.names[r.IntN(len(w.names))] }
	now := r.Int64N(1 << 40)
	k := r.IntN(75)
	if r.Float64() < w.fsyncRate {
		k = 75
	}
	switch {
	case k < 14:
		fs.Create(pick(dirs), name(), meta.ModeReg|0o644, 0, 0, 0, "")
	case k < 18:
		fs.Create(pick(dirs), name(), meta.ModeDir|0o755, 0, 0, 0, "")
	case k < 20:
		fs.Create(pick(dirs), name(), meta.ModeLink|0o777, 0, 0, 0, name())
	case k < 23:
		fs.Link(pick(files), pick(dirs), name())
	case k < 28:
		fs.Unlink(pick(dirs), name())
	case k < 30:
		fs.Rmdir(pick(dirs), name())
	case k < 35:
		flags := []uint32{0, 0, meta.RenameNoReplace, meta.RenameExchange}[r.IntN(4)]
		fs.Rename(pick(dirs), name(), pick(dirs), name(), flags)
	case k < 40:
		fs.SetAttr(pick(inos), SetAttrIn{Mask: meta.SetMode | meta.SetMtime, Mode: uint32(r.IntN(0o777)), Mtime: now})
	case k < 44:
		fs.SetAttr(pick(files), SetAttrIn{Mask: meta.SetSize, Size: r.Int64N(20000)})
	case k < 66:
		b := make([]byte, 1+r.IntN(6000))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		fs.Write(pick(files), b, r.Int64N(40000))
	case k < 68:
		fs.Fallocate(pick(files), uint32(r.IntN(2)), r.Int64N(30000), 1+r.Int64N(8000))
	case k < 71:
		fs.SetXattr(pick(inos), "user."+name(), []byte(name()), 0)
	case k < 72:
		fs.RemoveXattr(pick(inos), "user."+name())
	case k < 75:
		ino := pick(files)
		if fs.Open(ino) == nil {
			if r.IntN(3) > 0 {
				defer fs.Release(ino)
			} // else: left open, maybe unlinked later: an orphan at the crash
		}
	default:
		// fsync: what it acknowledges is everything up to the inode's
		// newest transaction.
		ino := pick(inos)
		fs.mu.RLock()
		tid := w.tidOf[ino]
		fs.mu.RUnlock()
		if err := fs.Fsync(ino, false); err == nil && tid != 0 && int32(tid-w.acked) > 0 {
			fs.mu.Lock()
			w.acked = tid
			fs.mu.Unlock()
		} else if err != nil && err != syscall.ENOENT {
			w.t.Fatalf("fsync: %v", err)
		}
	}
}

// TestRandomizedCrashRecovery runs random operation sequences with random
// fsyncs over a CrashDevice, captures crash states at random moments
// (each pending write kept, lost or torn block by block), recovers each,
// and checks the recovered model is exactly the state after the first k
// committed transactions, k at least the last acknowledged one. Some
// recovered states are mounted again and driven further, so recovery also
// runs on logs written after a recovery (cut torn tails, cleared stale
// blocks). Half the crash states are also recovered with a media fault in
// a durable record (recoverFaulted says what each must give).
func TestRandomizedCrashRecovery(t *testing.T) {
	want, seed := crashKnobs(t, "XLOGFS_CRASH")
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	states := 0
	var cs crashStats
	// A full run must cover every kind of state; a -short run of a few
	// hundred may by chance miss one. Some seeds need more than want
	// states for it (a run of 2,000 once had no torn tail to cut), so a
	// full run goes on, up to four times as long, until it has them all.
	covered := func() bool {
		return cs.torn > 0 && cs.replayed > 0 && cs.wrapped > 0 && cs.checkpoints > 0 &&
			cs.faultRefused > 0 && cs.faultCut > 0 && cs.flips > 0 && cs.zeroed > 0 && cs.stale > 0 && cs.provable > 0 && cs.unprovable > 0 &&
			cs.coverage[logbuf.CoverWhole] > 0 && cs.coverage[logbuf.CoverXFS] > 0 && cs.extHeaders > 0
	}
	more := func() bool { return states < want || want >= 2000 && !covered() && states < 4*want }
	for run := 0; more(); run++ {
		runSeed := r.Uint64()
		rr := rand.New(rand.NewPCG(runSeed, 1))
		dir := filepath.Join(fastTempDir(t), "store")
		// Either CRC coverage; under xfs coverage, half of the stores
		// have 64 KiB iclogs, whose records have an extension header
		// that a short payload leaves out of the CRC.
		cov := logbuf.Coverage(runSeed >> 63)
		logSize, logbsize := int64(store.MinLogSize), 32<<10
		if cov == logbuf.CoverXFS && runSeed>>62&1 == 1 {
			logSize, logbsize = 1<<20, 64<<10
		}
		if _, err := store.Mkfs(dir, store.MkfsOptions{LogSize: logSize, LogBSize: logbsize, Coverage: cov}); err != nil {
			t.Fatal(err)
		}
		img, err := os.ReadFile(filepath.Join(dir, store.LogName))
		check(t, err)
		w := &crashWorld{t: t, r: rr, dir: dir, cov: cov, names: []string{"a", "b", "c", "d", "e", "f"}, stats: &cs, fsyncRate: []float64{0.02, 0.1, 0.25}[rr.IntN(3)]}
		w.opts = Options{
			Mode:               cksum.Modes()[rr.IntN(len(cksum.Modes()))],
			Journal:            []JournalMode{JournalMeta, JournalData}[rr.IntN(2)],
			LogBufs:            2 + rr.IntN(2),
			CheckpointInterval: []time.Duration{time.Millisecond, 5 * time.Millisecond, time.Hour}[rr.IntN(3)],
			LogItems:           []LogItems{LogItemsLogical, LogItemsXFS}[run%2],
		}
		w.mount(testfs.NewCrashDevice(img))
		for gen := 0; gen < 6 && more(); gen++ {
			var snaps []snapshot
			for range 30 + rr.IntN(400) {
				w.step()
				// Crash often while writes are pending: that is where
				// tearing happens.
				if rr.IntN(12) == 0 || w.dev.Pending() > 0 && rr.IntN(3) == 0 {
					snaps = append(snaps, w.take())
				}
			}
			snaps = append(snaps, w.take())
			cs.checkpoints += int(w.fs.ckpts.Load())
			w.fs.Abandon()
			type recovered struct {
				dir  string
				dev  *testfs.CrashDevice
				snap snapshot
			}
			var all, cut []recovered
			for _, s := range snaps {
				d, dev, rec := w.recover(s, runSeed)
				states++
				cs.count(cov, logbsize)
				if rr.IntN(2) == 0 && w.recoverFaulted(s, runSeed) {
					states++
				}
				all = append(all, recovered{d, dev, s})
				if rec.TornLSN != 0 {
					cut = append(cut, all[len(all)-1])
				}
			}
			// Carry on from a recovered state, often one whose torn tail
			// was cut: the new writer rewrites the cut positions in the
			// same cycle, over the cleared stale blocks. Its history is
			// what was written up to that state.
			next := all[len(all)-1]
			if len(cut) > 0 && rr.IntN(2) == 0 {
				next = cut[rr.IntN(len(cut))]
			} else if rr.IntN(3) == 0 {
				next = all[rr.IntN(len(all))]
			}
			nextDev, nextSnap := next.dev, next.snap
			w.dir = next.dir
			w.histMu.Lock()
			w.hist = w.hist[:nextSnap.histLen]
			w.histBy = map[int64][]int{}
			for i, h := range w.hist {
				w.histBy[h.off] = append(w.histBy[h.off], i)
			}
			w.histMu.Unlock()
			w.mount(nextDev)
		}
		w.fs.Abandon()
	}
	t.Logf("%d crash states: %d with a torn tail cut, %d replayed transactions, %d from a wrapped log; %d checkpoints",
		cs.recovered, cs.torn, cs.replayed, cs.wrapped, cs.checkpoints)
	t.Logf("outcomes of all %d states: refused %d, cut %d, replayed %d, clean %d", states, cs.refused, cs.cut, cs.replays, cs.clean)
	t.Logf("%d with a media fault in a durable record (%d bit flips, %d zeroed blocks, %d stale blocks; %d the log can prove, %d it cannot): "+
		"refused %d, cut %d, ended before it (its header gone) %d, replayed with cycle words restored %d; %d cut or ended losing acknowledged "+
		"transactions, every one a zeroed or stale block in a record nothing after proves durable (the bytes of a torn write); "+
		"%d cut or ended where the store had cut or deleted data files for what was dropped, refused as missing data and mounted with AllowMissingData",
		cs.faulted, cs.flips, cs.zeroed, cs.stale, cs.provable, cs.unprovable, cs.faultRefused, cs.faultCut, cs.faultEnded, cs.faultKept, cs.ackLost, cs.faultMissing)
	t.Logf("CRC coverage: %d states of whole-coverage stores, %d of xfs-coverage ones (%d with an extension header per record)",
		cs.coverage[logbuf.CoverWhole], cs.coverage[logbuf.CoverXFS], cs.extHeaders)
	if got := cs.refused + cs.cut + cs.replays + cs.clean; got != states {
		t.Errorf("outcomes add up to %d, not the %d states", got, states)
	}
	if want >= 2000 && !covered() {
		t.Errorf("the crash states did not cover torn tails, replay, wrapped logs, checkpoints and every media fault refused and cut: %+v", cs)
	}
}
