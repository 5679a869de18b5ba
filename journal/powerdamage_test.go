package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/journal/internal/testfs"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
)

// Media faults in the whole-store power-loss test. A crash state's image is
// copied and damaged the way a disk damages data it had already made
// durable, and the copy is recovered; the outcome must be exactly the one
// the recovery rules of the package documentation give, worked out here
// from the writer's own account of what it wrote and made durable:
//
//   - refused: a bit flip in a durable record (its blocks still carry the
//     cycle, or its header is damaged), or a zeroed or stale block in one
//     that the log proves durable (a later surviving record's durable
//     watermark covers it, or more than logbufs records were written from
//     it to the newest surviving one): mount and check name its LSN;
//   - replayed after all: the damage touched only cycle words, so the
//     record's bytes are as written once they are restored: nothing lost;
//   - cut there (or, its header gone and nothing after it, the log ends
//     there): a zeroed or stale block in a record nothing proves durable,
//     which is exactly the bytes a torn write leaves. Recovery then holds
//     exactly the transactions committed before that record. Usually they
//     include every acknowledged one; when they do not, that is the one
//     documented limit (a record among the last logbufs durable ones that
//     loses a block looks like a torn write), counted apart and checked to
//     be that case;
//   - a damaged checkpoint file (a bit flip, a zeroed sector, a sector as
//     the previous checkpoint had it): mount and check refuse, naming the
//     file. Its CRC covers every byte; a torn or lost checkpoint write is
//     the power cut's business (CrashFS), and it never leaves one.

// damageOutcome is what recovery must do with a damaged image.
type damageOutcome int

const (
	wantRefuseLog  damageOutcome = iota // a *CorruptionError naming lsn, from mount and check
	wantRefuseFile                      // mount and check fail naming path
	wantKept                            // the damaged record verifies with its cycle words restored
	wantCut                             // cut at lsn, or the log ends there: the state after k
)

// damageWant is a damage done and what recovery must make of it.
type damageWant struct {
	outcome damageOutcome
	kind    string // "bit flip", "zeroed block", "stale block", "checkpoint ..."
	what    string // for messages
	lsn     logbuf.LSN
	path    string
	k       uint32 // wantCut: the newest transaction committed before the damaged record
	near    bool   // the damaged record is one of the last logbufs+1 durable ones
	proven  bool   // the log proves the record durable (or damaged, not torn)
	after   int    // durable records after the damaged one
}

// damageStats counts the damaged states by damage and by outcome.
type damageStats struct {
	states                        int
	kinds                         map[string]int
	near, far                     int // log faults by target
	provable, unprovable          int // log faults the log can prove durable, and the rest
	refusedLog, refusedCkpt, kept int
	cut, ended                    int // cut at the damaged record, or the log ended before it
	cutSafe                       int // of those, every acknowledged transaction kept
	limit                         int // of those, something acknowledged lost: the documented limit
	limitTxns                     int // of those, acknowledged transactions (not only bytes)
	missing                       int // of those, data files cut or deleted for the dropped records: refused as missing data
}

func (d *damageStats) log(t *testing.T) {
	t.Logf("media faults: %d damaged states (%s); log faults: %d among the last logbufs+1 durable records, %d earlier; %d the log can prove durable, %d it cannot",
		d.states, kindSummary(d.kinds), d.near, d.far, d.provable, d.unprovable)
	t.Logf("outcomes of the damaged states: refused naming the log record %d, refused naming the checkpoint file %d, replayed with cycle words restored %d, "+
		"cut at the damaged record %d, log ended before it %d; of those cut or ended, %d lost nothing acknowledged and %d lost acknowledged "+
		"bytes or transactions (%d transactions; %d with data files cut or deleted for the dropped records, refused as missing data), "+
		"each the documented limit: a zeroed or stale block in one of the last logbufs durable records, nothing later proving it durable",
		d.refusedLog, d.refusedCkpt, d.kept, d.cut, d.ended, d.cutSafe, d.limit, d.limitTxns, d.missing)
	if sum := d.refusedLog + d.refusedCkpt + d.kept + d.cut + d.ended; sum != d.states {
		t.Errorf("damaged outcomes add up to %d, not the %d damaged states", sum, d.states)
	}
}

// covered fails a full-size run that missed a kind of damage or outcome.
// Stale log blocks need a log that wrapped within one mount, which a few
// runs in a thousand do: a run of 2,000 states has 3 to 15, so only longer
// runs must have them.
func (d *damageStats) covered(t *testing.T, states int) {
	for _, k := range []string{"bit flip", "zeroed block", "stale block", "checkpoint bit flip", "checkpoint zeroed sector", "checkpoint stale sector"} {
		if d.kinds[k] == 0 && (k != "stale block" || states >= 10000) {
			t.Errorf("no damaged state had a %s: %s", k, kindSummary(d.kinds))
		}
	}
	if d.near == 0 || d.far == 0 || d.provable == 0 || d.unprovable == 0 || d.refusedLog == 0 || d.refusedCkpt == 0 || d.cut+d.ended == 0 || d.cutSafe == 0 {
		t.Errorf("the damaged states did not cover every outcome: %+v", *d)
	}
}

func kindSummary(kinds map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
	}
	return strings.Join(parts, ", ")
}

// acctDevice is the log device of a powerWorld: the store's log file, with
// the world's account kept of every write (the records it holds, and what
// each write overwrote). The account is taken before the write is passed
// on, so a crash image never holds a record the account lacks.
type acctDevice struct {
	xlog.Device
	w *powerWorld
}

func (d acctDevice) StoreLog() bool { return xlog.IsStoreLog(d.Device) }

func (d acctDevice) WriteAt(p []byte, off int64) (int, error) {
	old := make([]byte, len(p))
	if _, err := d.Device.ReadAt(old, off); err != nil {
		return 0, err
	}
	var wr *writtenRec
	if len(p) >= logbuf.BBSize && binary.BigEndian.Uint32(p) == logbuf.HeaderMagic {
		rec, err := logbuf.DecodeRecord(bytes.Clone(p), d.w.cov)
		if err != nil {
			d.w.t.Errorf("the writer wrote a record that does not decode at log offset %d: %v", off, err)
		} else {
			wr = &writtenRec{off: off, size: len(p), sum: sha256.Sum256(p), lsn: rec.LSN, durable: rec.Durable}
			// The writer is the one goroutine that moves the durable
			// record, after a sync, so while it writes a record the
			// log's durable record is the watermark that record
			// must carry: no higher (it would prove too much), no
			// lower (a lost block in a durable record would pass for
			// a torn write).
			if x := d.w.xlog.Load(); x != nil {
				if _, _, _, durable := x.SnapshotStats(); rec.Durable != durable && !d.w.stats.badMark.Swap(true) {
					d.w.t.Errorf("the writer wrote record %v with durable watermark %v, want %v: the log was durable up to there (reported once)", rec.LSN, rec.Durable, durable)
				}
			}
			for _, op := range rec.Ops {
				if op.ClientID == logbuf.ClientTransaction && op.Flags&logbuf.FlagCommit != 0 {
					wr.commits = append(wr.commits, op.TID)
				}
			}
		}
	}
	w := d.w
	w.mu.Lock()
	for b := 0; b+logbuf.BBSize <= len(old); b += logbuf.BBSize {
		if blk := old[b : b+logbuf.BBSize]; !allZero(blk) {
			w.histBy[off+int64(b)] = append(w.histBy[off+int64(b)], len(w.hist))
			w.hist = append(w.hist, blockHist{off: off + int64(b), old: blk})
		}
	}
	if wr != nil {
		w.written = append(w.written, *wr)
	}
	w.mu.Unlock()
	return d.Device.WriteAt(p, off)
}

// recoverDamaged damages a copy of crash state s with one damage source
// and checks that recovery does exactly what the source says it must.
func (w *powerWorld) recoverDamaged(s powerState, seed uint64, r *rand.Rand) {
	t := w.t
	img := s.img.Crash(nil) // a copy: s is recovered undamaged after
	total := 0
	for _, d := range powerDamage {
		total += d.weight()
	}
	pick := r.IntN(total)
	first := 0
	for i, d := range powerDamage {
		if pick -= d.weight(); pick < 0 {
			first = i
			break
		}
	}
	var want damageWant
	var src damageSource
	ok := false
	for i := range powerDamage {
		src = powerDamage[(first+i)%len(powerDamage)]
		if want, ok = src.damage(w, &s, r, img); ok {
			break
		}
	}
	if !ok {
		return
	}
	ds := &w.stats.damage
	ds.states++
	if ds.kinds == nil {
		ds.kinds = map[string]int{}
	}
	ds.kinds[want.kind]++
	where := fmt.Sprintf("%s, %s: %s (acknowledged %d, committed %d)", w.where(s, seed), src.name(), want.what, s.acked, s.committed)

	rep, ierr := recovery.InspectStore(img, w.dir)
	o := w.opts
	o.Store = img
	fs, err := Open(w.dir, quietOpts(o))
	if fs != nil {
		defer fs.Abandon()
	}
	var ce *xlog.CorruptionError
	switch want.outcome {
	case wantRefuseFile:
		if ierr == nil || !strings.Contains(ierr.Error(), want.path) {
			t.Fatalf("%s: check did not refuse the damaged %s: %v", where, want.path, ierr)
		}
		if err == nil || !strings.Contains(err.Error(), want.path) {
			t.Fatalf("%s: mount did not refuse the damaged %s: %v", where, want.path, err)
		}
		ds.refusedCkpt++
	case wantRefuseLog:
		if ierr != nil || !errors.As(rep.Corrupt, &ce) || ce.LSN != want.lsn {
			t.Fatalf("%s: check did not report corruption at LSN %v: %v, %v", where, want.lsn, ierr, rep.Corrupt)
		}
		if !errors.As(err, &ce) || ce.LSN != want.lsn {
			t.Fatalf("%s: mount did not refuse naming LSN %v: %v", where, want.lsn, err)
		}
		ds.refusedLog++
	case wantKept:
		if ierr != nil || !rep.Sound() {
			t.Fatalf("%s: check: %v, corrupt %v", where, ierr, rep.Corrupt)
		}
		if err != nil {
			t.Fatalf("%s: the record's bytes are as written once its cycle words are restored, yet mount said %v", where, err)
		}
		if fs.Recovery().Restamped == 0 {
			t.Fatalf("%s: mounted without restoring the damaged cycle words (recovery %+v)", where, fs.Recovery())
		}
		w.verify(fs, s, where)
		ds.kept++
	case wantCut:
		var md *recovery.MissingDataError
		if errors.As(err, &md) {
			// The store had acted on the dropped records being
			// durable (cut a data file to a truncate's size, deleted
			// a freed inode's file): what they cut is missing now,
			// and check and mount say so, naming the same files.
			// Only the documented limit below may do that. Mounted
			// anyway, those files fail reads with EIO, and lost
			// (below) counts them as lost.
			if ierr != nil || rep.Corrupt != nil || rep.ReplayErr != nil || len(rep.Problems) > 0 || !slices.Equal(rep.MissingData, md.Files) {
				t.Fatalf("%s: mount refused missing data %v; check said %v, corrupt %v, replay %v, problems %q, missing data %v",
					where, err, ierr, rep.Corrupt, rep.ReplayErr, rep.Problems, rep.MissingData)
			}
			if want.kind == "bit flip" || want.proven || want.after >= w.opts.LogBufs {
				t.Fatalf("%s: %v; and the damage is not the indistinguishable-from-torn case (%d durable records after it, logbufs %d)",
					where, err, want.after, w.opts.LogBufs)
			}
			o.AllowMissingData = true
			if fs, err = Open(w.dir, quietOpts(o)); err != nil {
				t.Fatalf("%s: mount with AllowMissingData: %v", where, err)
			}
			defer fs.Abandon()
			for _, d := range md.Files {
				if _, rerr := fs.Read(d.Ino, make([]byte, 1), 0); rerr != syscall.EIO {
					t.Fatalf("%s: inode %d, whose data file lacks durable bytes, reads with %v, want EIO", where, d.Ino, rerr)
				}
			}
			ds.missing++
		} else if ierr != nil || !rep.Sound() {
			t.Fatalf("%s: the log's bytes are those of a torn write, yet check said %v, corrupt %v, missing data %v", where, ierr, rep.Corrupt, rep.MissingData)
		}
		if err != nil {
			t.Fatalf("%s: the log's bytes are those of a torn write, yet mount refused: %v", where, err)
		}
		rec := fs.Recovery()
		if rec.TornLSN != 0 && rec.TornLSN != want.lsn {
			t.Fatalf("%s: cut at %v, not at the damaged record (recovery %+v)", where, rec.TornLSN, rec)
		}
		if k := fs.bound.LastTID; k != want.k || w.digests[k] != powerDigest(fs.model, rec.Followed...) {
			t.Fatalf("%s: recovered up to transaction %d, want exactly %d, the newest committed before the damaged record (recovery %+v)",
				where, k, want.k, rec)
		}
		if rec.TornLSN == want.lsn {
			ds.cut++
		} else {
			ds.ended++
		}
		_, _, lost := w.lost(fs, s)
		if lost == nil {
			ds.cutSafe++
			break
		}
		// Something acknowledged is lost: acknowledged transactions
		// (k is older than the acknowledged one), or acknowledged bytes
		// (the store had acted on the dropped records being durable:
		// cut a data file to a truncate's size, deleted a freed
		// inode's file). That must be the documented limit, and only
		// it: a lost block (never a flipped bit) in one of the last
		// logbufs durable records, with nothing later proving it
		// durable. The metadata is still exactly the state after k.
		if want.kind == "bit flip" || want.proven || want.after >= w.opts.LogBufs {
			t.Fatalf("%s: %v; and the damage is not the indistinguishable-from-torn case (%d durable records after it, logbufs %d)",
				where, lost, want.after, w.opts.LogBufs)
		}
		if p := fs.model.Check(); len(p) > 0 {
			t.Fatalf("%s: recovered metadata is inconsistent: %q", where, p)
		}
		ds.limit++
		if int32(s.acked-want.k) > 0 {
			ds.limitTxns++
		}
	}
}

// logFault damages one durable log record of this mount's writer, from the
// checkpoint's tail on.
type logFault struct{}

func (logFault) name() string { return "log media fault" }
func (logFault) weight() int  { return 3 }

func (logFault) damage(w *powerWorld, s *powerState, r *rand.Rand, img *testfs.CrashFS) (damageWant, bool) {
	t := w.t
	ckPath, logPath := filepath.Join(w.dir, store.CheckpointName), filepath.Join(w.dir, store.LogName)
	ckb, err := store.ReadFile(img, ckPath)
	if err != nil {
		t.Fatalf("reading the crash image's checkpoint: %v", err)
	}
	ck, err := store.DecodeCheckpoint(ckb, ckPath)
	if err != nil {
		t.Fatalf("the crash image's checkpoint: %v", err)
	}
	logImg, err := store.ReadFile(img, logPath)
	if err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	written := slices.Clone(w.written[:s.written])
	w.mu.Unlock()
	intact := func(wr writtenRec) bool {
		return wr.off+int64(wr.size) <= int64(len(logImg)) && sha256.Sum256(logImg[wr.off:wr.off+int64(wr.size)]) == wr.sum
	}
	// The records recovery will walk that were durable: written from the
	// tail on, durable when the image was taken, and in it byte for byte.
	var durable []writtenRec
	for _, wr := range written {
		if wr.lsn >= ck.TailLSN && wr.lsn <= s.durable && intact(wr) {
			durable = append(durable, wr)
		}
	}
	if len(durable) == 0 {
		return damageWant{}, false
	}
	// Stale blocks: what a block of a record held before the write that
	// put the record there, one cycle (or more) earlier. A block of the
	// record's own cycle would be a leftover a mount had cleared, not a
	// lost write. Only a log that wrapped has them.
	staleOf := make([]map[int64][]byte, len(durable))
	var withStale []int
	w.mu.Lock()
	for i, wr := range durable {
		for off := wr.off; off < wr.off+int64(wr.size); off += logbuf.BBSize {
			for _, j := range slices.Backward(w.histBy[off]) {
				if h := w.hist[j].old; j < s.hist && blockCycle(h) != wr.lsn.Cycle() {
					if !bytes.Equal(h, logImg[off:off+logbuf.BBSize]) {
						if staleOf[i] == nil {
							staleOf[i] = map[int64][]byte{}
							withStale = append(withStale, i)
						}
						staleOf[i][off] = h
					}
					break
				}
			}
		}
	}
	w.mu.Unlock()

	// The damage, then its target: half of the time among the last
	// logbufs+1 durable records, where a lost block may be a torn write,
	// else anywhere.
	logbufs := w.opts.LogBufs
	kind := "zeroed block"
	switch k := r.IntN(3); {
	case k == 0:
		kind = "bit flip"
	case k == 1 && len(withStale) > 0:
		kind = "stale block"
	}
	eligible := make([]int, len(durable))
	for i := range eligible {
		eligible[i] = i
	}
	if kind == "stale block" {
		eligible = withStale
	}
	if r.IntN(2) == 0 {
		var near []int
		for _, i := range eligible {
			if i >= len(durable)-logbufs-1 {
				near = append(near, i)
			}
		}
		if len(near) > 0 {
			eligible = near
		}
	}
	i := eligible[r.IntN(len(eligible))]
	target := durable[i]
	T := target.lsn
	want := damageWant{kind: kind, lsn: T, near: i >= len(durable)-logbufs-1, after: len(durable) - 1 - i}
	rec := logImg[target.off : target.off+int64(target.size)]
	blk := target.off + int64(r.IntN(target.size/logbuf.BBSize))*logbuf.BBSize
	switch kind {
	case "bit flip":
		bit := r.IntN(target.size * 8)
		rec[bit/8] ^= 1 << (bit % 8)
		blk = target.off + int64(bit/8)/logbuf.BBSize*logbuf.BBSize
	case "stale block":
		offs := slices.Sorted(maps.Keys(staleOf[i]))
		blk = offs[r.IntN(len(offs))]
		copy(logImg[blk:], staleOf[i][blk])
	default:
		clear(logImg[blk : blk+logbuf.BBSize])
	}
	want.what = fmt.Sprintf("%s at log offset %d, in durable record %v (%d durable records after it)", want.kind, blk, T, want.after)
	if err := img.Edit(logPath, func(b []byte) { copy(b, logImg) }); err != nil {
		t.Fatal(err)
	}
	if want.near {
		w.stats.damage.near++
	} else {
		w.stats.damage.far++
	}

	// Restoring the cycle words (the header's magic and h_cycle, every
	// other block's first word) gives back the record as written: then
	// the damage touched only them, and the CRC proves the rest.
	restored := bytes.Clone(rec)
	binary.BigEndian.PutUint32(restored[0:], logbuf.HeaderMagic)
	binary.BigEndian.PutUint32(restored[4:], T.Cycle())
	for off := logbuf.BBSize; off < len(restored); off += logbuf.BBSize {
		binary.BigEndian.PutUint32(restored[off:], T.Cycle())
	}
	if sha256.Sum256(restored) == target.sum {
		want.outcome = wantKept
		return want, true
	}

	// What the log proves: a flipped bit leaves every block carrying the
	// cycle (or damages the header), so the record was written whole; a
	// later record that survives says, by its durable watermark, how far
	// the log was durable when it was written; and no more than logbufs
	// records can be in flight at once.
	want.proven = want.kind == "bit flip"
	var newest logbuf.LSN
	want.k = ck.LastTID
	for _, wr := range written {
		switch {
		case wr.lsn < T:
			for _, tid := range wr.commits {
				if xlog.NewerTID(tid, want.k) {
					want.k = tid
				}
			}
		case wr.lsn > T && intact(wr):
			newest = max(newest, wr.lsn)
			if wr.durable >= T {
				want.proven = true
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
		want.proven = true
	}
	if want.proven {
		w.stats.damage.provable++
		want.outcome = wantRefuseLog
	} else {
		w.stats.damage.unprovable++
		want.outcome = wantCut
	}
	return want, true
}

// checkpointFault damages the checkpoint file, which is durable in every
// crash image (it is written to a temporary file, synced, renamed and its
// directory synced).
type checkpointFault struct{}

func (checkpointFault) name() string { return "checkpoint media fault" }
func (checkpointFault) weight() int  { return 1 }

func (checkpointFault) damage(w *powerWorld, s *powerState, r *rand.Rand, img *testfs.CrashFS) (damageWant, bool) {
	t := w.t
	path := filepath.Join(w.dir, store.CheckpointName)
	b, err := store.ReadFile(img, path)
	if err != nil {
		t.Fatalf("reading the crash image's checkpoint: %v", err)
	}
	ck, err := store.DecodeCheckpoint(b, path)
	if err != nil {
		t.Fatalf("the crash image's checkpoint: %v", err)
	}
	want := damageWant{outcome: wantRefuseFile, path: path}
	sectors := (len(b) + testfs.SectorSize - 1) / testfs.SectorSize
	sec := r.IntN(sectors)
	lo, hi := sec*testfs.SectorSize, min(len(b), (sec+1)*testfs.SectorSize)
	w.mu.Lock()
	prev := w.ckpts[ck.Seq-1]
	w.mu.Unlock()
	switch k := r.IntN(4); {
	case k == 0 && !allZero(b[lo:hi]):
		want.kind = "checkpoint zeroed sector"
		clear(b[lo:hi])
	case k == 1 && len(prev) >= hi && !bytes.Equal(prev[lo:hi], b[lo:hi]) && !staleMakes(b, prev, lo, hi):
		want.kind = "checkpoint stale sector"
		copy(b[lo:hi], prev[lo:hi])
	default:
		want.kind = "checkpoint bit flip"
		bit := r.IntN((hi - lo) * 8)
		b[lo+bit/8] ^= 1 << (bit % 8)
	}
	want.what = fmt.Sprintf("%s at offset %d of %s (Seq %d, %d bytes)", want.kind, lo, path, ck.Seq, len(b))
	if err := img.Edit(path, func(d []byte) { copy(d, b) }); err != nil {
		t.Fatal(err)
	}
	return want, true
}

// staleMakes reports whether putting prev's bytes lo:hi into b makes b the
// previous checkpoint exactly. That is no damaged checkpoint but a whole
// old one, which no CRC can tell: a lost write of the whole file, like the
// lost rename CrashFS models, except that it can come after the log has
// moved on.
func staleMakes(b, prev []byte, lo, hi int) bool {
	return len(b) == len(prev) && bytes.Equal(b[:lo], prev[:lo]) && bytes.Equal(b[hi:], prev[hi:])
}
