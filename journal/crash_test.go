package journal

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
)

// crashStates is how many crash images the randomized crash test recovers:
// 2,000 in `make test`, more with XLOGFS_CRASH_STATES (make crashtest).
func crashStates(t *testing.T) int {
	if s := os.Getenv("XLOGFS_CRASH_STATES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("XLOGFS_CRASH_STATES=%q: %v", s, err)
		}
		return n
	}
	if testing.Short() {
		return 300
	}
	return 2000
}

func crashSeed(t *testing.T) uint64 {
	if s := os.Getenv("XLOGFS_CRASH_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("XLOGFS_CRASH_SEED=%q: %v", s, err)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

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
	dev     *CrashDevice
	fs      *FS
	digests map[[32]byte][]uint32 // model (orphans dropped) -> tids after which it held
	lastTID uint32                // newest committed
	acked   uint32                // newest acknowledged by a completed fsync
	tidOf   map[Ino]uint32        // newest transaction touching each inode
	base    uint32                // tid of the recovered state this generation started from
	names   []string
	stats   *crashStats
	// how often an op is an fsync: rare fsyncs leave records written but
	// not durable, which is where torn writes happen
	fsyncRate float64
}

// crashStats counts what the crash states exercised, so a run shows it
// covered torn tails, replays and wrapped logs.
type crashStats struct {
	recovered, torn, replayed, wrapped, checkpoints int
}

// snapshot is a crash state: a possible disk image with the checkpoint file
// as it was, and what was committed and acknowledged at that moment.
type snapshot struct {
	image     []byte
	ckpt      []byte
	committed uint32
	acked     uint32
}

func digestOf(m *Model) [32]byte {
	c := m.Clone()
	c.DropOrphans()
	return c.Digest()
}

func (w *crashWorld) mount(dev *CrashDevice) {
	w.dev = dev
	o := w.opts
	o.Device = dev
	fs, err := Open(w.dir, quietOpts(o))
	if err != nil {
		w.t.Fatal(err)
	}
	w.fs = fs
	w.tidOf = map[Ino]uint32{}
	w.base = fs.bound.lastTID
	w.lastTID, w.acked = w.base, w.base
	w.digests = map[[32]byte][]uint32{digestOf(fs.model): {w.base}}
	fs.afterCommit = func(tid uint32, op *Op) {
		w.lastTID = tid
		d := digestOf(fs.model)
		w.digests[d] = append(w.digests[d], tid)

		for _, ino := range []Ino{op.Ino, op.Parent, op.NewParent} {
			if ino != 0 {
				w.tidOf[ino] = tid
			}
		}
	}
}

// take captures a crash state. Holding the checkpoint lock keeps the
// checkpoint file and the log image from one moment.
func (w *crashWorld) take() snapshot {
	w.fs.ckptMu.Lock()
	defer w.fs.ckptMu.Unlock()
	ck, err := os.ReadFile(filepath.Join(w.dir, checkpointName))
	if err != nil {
		w.t.Fatal(err)
	}
	w.fs.mu.RLock()
	committed, acked := w.lastTID, w.acked
	w.fs.mu.RUnlock()
	return snapshot{image: w.dev.CrashImage(w.r), ckpt: ck, committed: committed, acked: acked}
}

// recover mounts a copy of the store holding the snapshot and checks the
// recovered model is the model after some transaction k with
// acked <= k <= committed. It returns the recovered filesystem's directory.
func (w *crashWorld) recover(s snapshot, seed uint64) (string, *CrashDevice) {
	t := w.t
	dir := filepath.Join(fastTempDir(t), "store")
	check(t, os.MkdirAll(filepath.Join(dir, dataDirName), 0o755))
	sb, err := os.ReadFile(filepath.Join(w.dir, superblockName))
	check(t, err)
	check(t, os.WriteFile(filepath.Join(dir, superblockName), sb, 0o644))
	check(t, os.WriteFile(filepath.Join(dir, checkpointName), s.ckpt, 0o644))
	dev := NewCrashDevice(s.image)

	// No record that fails its CRC may be replayed: every record the
	// walk accepts verifies.
	ck, err := decodeCheckpoint(s.ckpt, "checkpoint")
	check(t, err)
	for _, r := range scanLog(s.image, ck).records {
		if r.Computed != r.Stored || r.Record == nil {
			t.Fatalf("seed %d: walk accepted record %v with stored CRC %#x, computed %#x", seed, r.LSN(), r.Stored, r.Computed)
		}
	}

	o := w.opts
	o.Device = dev
	fs, err := Open(dir, quietOpts(o))
	if err != nil {
		t.Fatalf("seed %d: recovery failed: %v", seed, err)
	}
	if p := fs.model.Check(); len(p) > 0 {
		t.Fatalf("seed %d: recovered metadata is inconsistent: %q", seed, p)
	}
	got := fs.model.Digest()
	tids, ok := w.digests[got]
	if !ok {
		t.Fatalf("seed %d: recovered model matches no committed prefix (committed %d, acked %d, recovery %+v)",
			seed, s.committed, s.acked, fs.Recovery())
	}
	fine := false
	for _, k := range tids {
		if int32(k-s.acked) >= 0 && int32(s.committed-k) >= 0 {
			fine = true
		}
	}
	if !fine {
		t.Fatalf("seed %d: recovered the state after tid(s) %v; acknowledged %d, committed %d (recovery %+v; cksum mode %s, journal %s)",
			seed, tids, s.acked, s.committed, fs.Recovery(), w.opts.Mode, w.opts.Journal)
	}
	rec := fs.Recovery()
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
	return dir, NewCrashDevice(dev.Image())
}

// step performs one random operation.
func (w *crashWorld) step() {
	fs, r := w.fs, w.r
	fs.mu.RLock()
	inos := slices.Sorted(func(yield func(Ino) bool) {
		for ino := range fs.model.Inodes {
			if !yield(ino) {
				return
			}
		}
	})
	var dirs, files []Ino
	for _, ino := range inos {
		in := fs.model.Inodes[ino]
		if in.IsDir() {
			dirs = append(dirs, ino)
		} else if in.IsRegular() {
			files = append(files, ino)
		}
	}
	fs.mu.RUnlock()
	pick := func(s []Ino) Ino {
		if len(s) == 0 {
			return RootIno
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
		fs.Create(pick(dirs), name(), ModeReg|0o644, 0, 0, 0, "")
	case k < 18:
		fs.Create(pick(dirs), name(), ModeDir|0o755, 0, 0, 0, "")
	case k < 20:
		fs.Create(pick(dirs), name(), ModeLink|0o777, 0, 0, 0, name())
	case k < 23:
		fs.Link(pick(files), pick(dirs), name())
	case k < 28:
		fs.Unlink(pick(dirs), name())
	case k < 30:
		fs.Rmdir(pick(dirs), name())
	case k < 35:
		flags := []uint32{0, 0, RenameNoReplace, RenameExchange}[r.IntN(4)]
		fs.Rename(pick(dirs), name(), pick(dirs), name(), flags)
	case k < 40:
		fs.SetAttr(pick(inos), SetAttrIn{Mask: SetMode | SetMtime, Mode: uint32(r.IntN(0o777)), Mtime: now})
	case k < 44:
		fs.SetAttr(pick(files), SetAttrIn{Mask: SetSize, Size: r.Int64N(20000)})
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
// runs on logs written after a recovery.
func TestRandomizedCrashRecovery(t *testing.T) {
	want := crashStates(t)
	seed := crashSeed(t)
	t.Logf("seed %d (rerun with XLOGFS_CRASH_SEED=%d), %d crash states", seed, seed, want)
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	states := 0
	var cs crashStats
	for run := 0; states < want; run++ {
		runSeed := r.Uint64()
		rr := rand.New(rand.NewPCG(runSeed, 1))
		dir := filepath.Join(fastTempDir(t), "store")
		if _, err := Mkfs(dir, MkfsOptions{LogSize: MinLogSize, LogBSize: 32 << 10}); err != nil {
			t.Fatal(err)
		}
		img, err := os.ReadFile(filepath.Join(dir, logName))
		check(t, err)
		w := &crashWorld{t: t, r: rr, dir: dir, names: []string{"a", "b", "c", "d", "e", "f"}, stats: &cs, fsyncRate: []float64{0.02, 0.1, 0.25}[rr.IntN(3)]}
		w.opts = Options{
			Mode:               cksum.Modes()[rr.IntN(len(cksum.Modes()))],
			Journal:            []JournalMode{JournalMeta, JournalData}[rr.IntN(2)],
			LogBufs:            2 + rr.IntN(2),
			CheckpointInterval: []time.Duration{time.Millisecond, 5 * time.Millisecond, time.Hour}[rr.IntN(3)],
		}
		w.mount(NewCrashDevice(img))
		for gen := 0; gen < 6 && states < want; gen++ {
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
			var next string
			var nextDev *CrashDevice
			for i, s := range snaps {
				d, dev := w.recover(s, runSeed)
				states++
				if i == len(snaps)-1 || rr.IntN(len(snaps)) == 0 && next == "" {
					next, nextDev = d, dev
				}
			}
			// Carry on from a recovered state: its log continues after
			// a recovery (cut torn tail, cleared stale blocks).
			w.dir = next
			w.mount(nextDev)
		}
		w.fs.Abandon()
	}
	t.Logf("%d crash states: %d with a torn tail cut, %d replayed transactions, %d from a wrapped log; %d checkpoints",
		cs.recovered, cs.torn, cs.replayed, cs.wrapped, cs.checkpoints)
	// A full run must have covered every kind of state; a -short run of a
	// few hundred may by chance have missed one.
	if want >= 2000 && (cs.torn == 0 || cs.replayed == 0 || cs.wrapped == 0 || cs.checkpoints == 0) {
		t.Errorf("the crash states did not cover torn tails, replay, wrapped logs and checkpoints: %+v", cs)
	}
}
