package xlog

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/journal/internal/lockorder"
	"github.com/xlogfs/xlogfs/logbuf"
	"github.com/xlogfs/xlogfs/profiling/labels"
)

// Pos is a record position: its cycle and block, and an absolute block
// number that only grows (it counts the log's size once per wrap), so
// distances and free space are plain subtraction.
type Pos struct {
	cycle uint32
	block uint32
	Abs   uint64
}

func (p Pos) LSN() logbuf.LSN { return logbuf.MakeLSN(p.cycle, p.block) }

// Boundary is where a checkpoint taken right after a record would stand:
// recovery walks from tail and skips transactions up to lastTID.
type Boundary struct {
	Tail    Pos
	LastTID uint32
}

// iclogSlot is one in-core log buffer of the ring with what the log needs to
// know about the record it holds.
type iclogSlot struct {
	buf       *logbuf.Iclog
	at        Pos         // where the record goes
	tail      logbuf.LSN  // h_tail_lsn
	prevBlock uint32      // h_prev_block
	next      Pos         // where the record after it goes
	bound     Boundary    // checkpoint boundary once this record is durable
	txns      []Committed // transactions whose COMMIT is in this record
}

// Committed is a committed transaction, kept until its record is durable:
// its id and the caller's item for it (the journal's op, which the
// checkpoint's shadow model applies then). The log never looks inside.
type Committed struct {
	TID  uint32
	Item any
}

// Log is the in-core log (XFS's struct xlog): the iclog ring, the log head
// and tail, log forces, and the rounds of log I/O that stamp, checksum,
// write and sync records (xlog_sync), run by the goroutine that needs a
// force when the log is idle and by the writer goroutine otherwise (see
// writer). At most logbufs records are ever
// written but not yet durable, because an iclog is reused only once its
// record is durable; recovery's in-flight allowance relies on that, and on
// each record's durable watermark (the newest durable record when it was
// sealed): the records after the watermark up to the record itself hold
// iclogs, so there are at most logbufs of them.
type Log struct {
	Dev       Device
	logBlocks uint64
	logbsize  int
	maxBlocks uint64 // blocks of the largest record
	logbufs   int
	Sum       *cksum.Summer

	// called by the writer, outside mu, with records just made durable
	onDurable func(txns []Committed, bound Boundary)
	// called by the writer, outside mu, once they are published as
	// durable (forces waiting on them have returned), with the newest
	afterDurable func(durable logbuf.LSN)
	// called by the goroutine running a round, outside mu, before it
	// writes the round's records (Config.BeforeWrite)
	beforeWrite func() error
	// asks for a checkpoint without blocking
	wantCheckpoint func()
	// called once, outside mu, when the log fails
	onFail func(reason error)

	// pprof labels the writer runs under, and those of checksum work.
	baseLabels, cksumLabels context.Context
	// inline mode: AppendOp checksums as it copies, under cksumLabels
	inline bool

	// mu guards everything below but times (the fields above are set by
	// New and never change), and the iclogs but those of the round of I/O
	// in flight, which its goroutine owns while ioBusy. It is a leaf of package journal's lock order: the
	// commits that take it hold the journal's model lock, and under it
	// the log takes no other lock and calls out only to regions (Commit's
	// caller's) and to wantCheckpoint, which does not block; onDurable,
	// afterDurable, beforeWrite and onFail run outside it. cond and wcond wait on it.
	mu    lockorder.Mutex[lockorder.Leaf]
	cond  sync.Cond // durable moved, iclog freed, tail moved, failure
	wcond sync.Cond // wakes the writer

	free         []*iclogSlot
	active       *iclogSlot
	queue        []*iclogSlot // switched out, not yet written
	unsynced     []*iclogSlot // written, not yet durable; only a round's goroutine touches it
	ioBusy       bool         // a round of log I/O is in flight (roundLocked)
	asyncForce   logbuf.LSN   // newest record StartForce asked the writer for
	head         Pos          // where the next record goes
	prevBlock    uint32
	tail         Pos        // oldest position still needed by recovery
	durable      logbuf.LSN // newest durable record (0: none yet)
	bound        Boundary   // checkpoint boundary as of durable
	lastSwitched logbuf.LSN // newest record switched out
	forceLSN     logbuf.LSN // newest record a force waits for
	syncWanted   bool       // make written records durable (ring exhausted, checkpoint)
	// Device flushes by number: begun, and the newest one finished; a
	// flush is wanted until one numbered flushWant has begun (forceFlush).
	flushBegun, flushDone, flushWant uint64
	nextTID                          uint32
	lastTID                          uint32 // newest committed transaction
	open                             *Pos   // START position of the transaction being copied in
	spaceWaiters                     int    // commits waiting for a checkpoint to free log space
	err                              error  // sticky: the log failed (a *FailedError), or errClosed
	closing                          bool
	writerDone                       chan struct{}

	stats Stats
	times ForceTimer // told the checksum time per record and per force; needs no lock (atomics)
}

type Stats struct {
	Records      uint64 // records written
	RecordBytes  uint64 // bytes of records written
	HeaderBytes  uint64 // of which header blocks
	PayloadBytes uint64 // of which op headers and regions (the rest pads to a block)
	Syncs        uint64 // fdatasyncs of the log
	Forces       uint64 // force requests, durable already or not (XFS's force)
	ForceCalls   uint64 // forces that had to wait for log I/O (XFS's force_sleep)
	ForceSleeps  uint64 // of which slept on another goroutine's round, and were served by a later one
	CallerRounds uint64 // rounds a forcing caller ran itself, the log being idle
	ForceSyncs   uint64 // syncs that had a force waiting
	Transactions uint64
	SpaceWaits   uint64 // times a writer waited for log space (a checkpoint)
	IclogWaits   uint64 // times a writer waited for an iclog
	SyncNanos    uint64
}

// ForceTimer is told what the checksum costs on the writer (every
// checksum's cost, as cksum.Summer observes it) and how long each writer
// round that ended in a sync a force waited for took, from its start.
type ForceTimer interface {
	Observe(cost cksum.Cost)
	StartRound()
	Forced(total time.Duration)
}

type Config struct {
	Times     ForceTimer
	Dev       Device
	UUID      [16]byte
	Coverage  logbuf.Coverage // what each record's CRC covers: the store's
	LogBSize  int
	LogBufs   int
	Sum       *cksum.Summer
	Head      Pos
	PrevBlock uint32
	Tail      Pos
	LastTID   uint32
	OnDurable func(txns []Committed, bound Boundary)
	// AfterDurable, if set, is told the newest durable record each time
	// records become durable, after OnDurable and after DurableLSN says
	// so: what waits for a record to be durable (a freed inode's data
	// file) may go then.
	AfterDurable func(durable logbuf.LSN)
	// BeforeWrite, if set, runs before each round writes records,
	// without the log's lock: what a record written from then on may
	// not outrun (the names of data files made for files created
	// marked, datafile.Files.NamesBeforeLog) is made durable there. An
	// error fails the log, as a failed write does.
	BeforeWrite    func() error
	WantCheckpoint func()
	OnFail         func(reason error)
}

func New(c Config) (*Log, error) {
	x := &Log{
		times:          c.Times,
		Dev:            c.Dev,
		logBlocks:      uint64(c.Dev.Size() / logbuf.BBSize),
		logbsize:       c.LogBSize,
		maxBlocks:      uint64(c.LogBSize / logbuf.BBSize),
		logbufs:        c.LogBufs,
		Sum:            c.Sum,
		onDurable:      c.OnDurable,
		afterDurable:   c.AfterDurable,
		beforeWrite:    c.BeforeWrite,
		wantCheckpoint: c.WantCheckpoint,
		onFail:         c.OnFail,
		head:           c.Head,
		prevBlock:      c.PrevBlock,
		tail:           c.Tail,
		bound:          Boundary{Tail: c.Head, LastTID: c.LastTID},
		nextTID:        c.LastTID + 1,
		lastTID:        c.LastTID,
		writerDone:     make(chan struct{}),
		inline:         c.Sum.Mode() == cksum.Inline,
	}
	x.cond.L = &x.mu
	x.wcond.L = &x.mu
	c.Sum.Observe(x.times.Observe)
	for range c.LogBufs {
		buf, err := logbuf.NewIclog(c.LogBSize, c.UUID, c.Coverage)
		if err != nil {
			return nil, err
		}
		x.free = append(x.free, &iclogSlot{buf: buf})
	}
	x.baseLabels, x.cksumLabels = writerLabels(c.Sum.Mode())
	go x.writer()
	return x, nil
}

// Wrap applies the placement rule: a record starts where the previous one
// ended unless the largest record might not fit before the end of the log,
// in which case it starts at block 0 of the next cycle. Every record is
// then written whole at its block, and recovery follows the same rule.
func Wrap(p Pos, maxBlocks, logBlocks uint64) Pos {
	if uint64(p.block)+maxBlocks > logBlocks {
		p.Abs += logBlocks - uint64(p.block)
		p.block = 0
		p.cycle = logbuf.NextCycle(p.cycle)
	}
	return p
}

// Commit copies one transaction into the log: a START op, one op per
// region, a COMMIT op, as XFS delimits transactions. It returns the LSN of
// the record holding the COMMIT, which a force must reach for the
// transaction to be durable. The caller serializes commits (it holds the
// FS lock), so transactions enter the log in the order they change the
// model.
//
// regions is called once, under the log's lock, with the LSN of the record
// the START went into, and returns the transaction's regions, at least
// one: so a caller can leave out what that record already holds (the
// journal logs each XFS log item once per record, as XFS's CIL formats an
// item once per checkpoint) without another commit or a log force moving
// the record under it. The regions are copied before Commit returns.
func (x *Log) Commit(regions func(rec logbuf.LSN) [][]byte, item any) (logbuf.LSN, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.err != nil {
		return 0, x.err
	}
	tid := x.nextTID
	ic, err := x.appendOp(tid, logbuf.FlagStart, nil)
	if err != nil {
		return 0, err
	}
	start := ic.at
	x.open = &start
	for _, region := range regions(start.LSN()) {
		if _, err = x.appendOp(tid, 0, region); err != nil {
			break
		}
	}
	if err == nil {
		ic, err = x.appendOp(tid, logbuf.FlagCommit, nil)
	}
	x.open = nil
	if err != nil {
		return 0, err
	}
	x.nextTID++
	x.lastTID = tid
	x.stats.Transactions++
	ic.txns = append(ic.txns, Committed{TID: tid, Item: item})
	return ic.at.LSN(), nil
}

// appendOp writes one op into the active iclog, splitting its region over
// as many iclogs as it needs. It returns the iclog holding the last piece.
func (x *Log) appendOp(tid uint32, flags uint8, data []byte) (*iclogSlot, error) {
	cont := false
	for {
		ic, err := x.activeIclog()
		if err != nil {
			return nil, err
		}
		// Like xlog_state_get_iclog_space: a nearly full iclog is
		// switched out rather than filled with a sliver of a region.
		if ic.buf.Free() < logbuf.OpHeaderSize+min(len(data), logbuf.OpHeaderSize) {
			x.switchActive()
			continue
		}
		if x.inline {
			// The copy is checksum work too. Commits run on the callers'
			// goroutines, which carry no labels of their own.
			pprof.SetGoroutineLabels(x.cksumLabels)
		}
		n := ic.buf.AppendOp(tid, logbuf.ClientTransaction, flags, data, cont)
		if x.inline {
			pprof.SetGoroutineLabels(context.Background())
		}
		data = data[n:]
		if len(data) == 0 {
			return ic, nil
		}
		cont = true
		x.switchActive()
	}
}

// activeIclog returns the iclog being filled, activating a free one at the
// log head when there is none. It waits, releasing mu, for a free iclog (the
// writer syncs to free one) and for log space (a checkpoint moves the tail).
func (x *Log) activeIclog() (*iclogSlot, error) {
	for x.active == nil {
		if x.err != nil {
			return nil, x.err
		}
		if len(x.free) == 0 {
			x.stats.IclogWaits++
			x.syncWanted = true
			x.wcond.Signal()
			x.cond.Wait()
			continue
		}
		// The record may grow to maxBlocks; it must not reach the tail.
		if !x.roomLocked() {
			x.stats.SpaceWaits++
			x.wantCheckpoint()
			x.spaceWaiters++
			x.cond.Wait()
			x.spaceWaiters--
			continue
		}
		ic := x.free[len(x.free)-1]
		x.free = x.free[:len(x.free)-1]
		ic.buf.Start(x.head.cycle, x.Sum) // the cycle its blocks are stamped with
		ic.txns = ic.txns[:0]
		ic.at = x.head
		x.active = ic
		if (x.head.Abs+x.maxBlocks-x.tail.Abs)*4 > x.logBlocks*3 {
			x.wantCheckpoint() // ¾ full
		}
	}
	return x.active, nil
}

// roomLocked reports whether a record may start at the head: the largest
// one would end short of the tail.
func (x *Log) roomLocked() bool { return HasRoom(x.head, x.tail, x.maxBlocks, x.logBlocks) }

// HasRoom reports whether a record of up to maxBlocks blocks may start at
// head without reaching tail, in a log of logBlocks blocks (the writer's
// test before each record).
func HasRoom(head, tail Pos, maxBlocks, logBlocks uint64) bool {
	return head.Abs+maxBlocks <= tail.Abs+logBlocks
}

// LogFullError is a record that does not fit: the log holds no room between
// its head and its tail, and only a checkpoint (moving the tail) makes some.
type LogFullError struct{ Head, Tail logbuf.LSN }

func (e *LogFullError) Error() string {
	return fmt.Sprintf("the log is full (head %v, tail %v): only a checkpoint makes room", e.Head, e.Tail)
}

// switchActive hands the active iclog to the writer (XLOG_STATE_WANT_SYNC)
// and moves the head past it. An empty iclog stays active.
func (x *Log) switchActive() {
	ic := x.active
	if ic == nil || ic.buf.NumOps() == 0 {
		return
	}
	x.active = nil
	ic.tail = x.tail.LSN()
	ic.prevBlock = x.prevBlock
	n := uint64(ic.buf.RecordBytes() / logbuf.BBSize)
	ic.next = Wrap(Pos{cycle: ic.at.cycle, block: ic.at.block + uint32(n), Abs: ic.at.Abs + n}, x.maxBlocks, x.logBlocks)
	ic.bound = Boundary{Tail: ic.next, LastTID: x.lastTID}
	if x.open != nil {
		// A transaction straddles this record: recovery must start at
		// the record holding its START.
		ic.bound.Tail = *x.open
	}
	x.prevBlock = ic.at.block
	x.head = ic.next
	x.lastSwitched = ic.at.LSN()
	x.queue = append(x.queue, ic)
	x.wcond.Signal()
}

// Log I/O runs in rounds: a round takes the records switched out (the
// queue), seals and writes them in order, and, when some caller needs it,
// syncs the log device, which makes them and every record written before
// durable. At most one round runs at a time (ioBusy): so at most one log
// write and flush is in flight, and the active iclog forms behind it,
// taking every transaction committed meanwhile. As in XFS's
// xlog_force_lsn, the goroutine that needs a force runs the round itself
// when none is in flight (a log force costs no goroutine hand-off when the
// log is idle); a force that finds a round in flight sleeps until it ends
// (ForceSleeps, XFS's force_sleep), and then the first of the sleepers to
// wake runs the next round for all of them: one flush serves every force
// that joined the iclog while the previous flush ran. The writer goroutine
// runs the rounds nobody waits in: records switched out because their
// iclog filled, the syncs the ring and checkpoints ask for (syncWanted),
// and the force StartForce hands it.
func (x *Log) writer() {
	defer close(x.writerDone)
	pprof.SetGoroutineLabels(x.baseLabels)
	x.mu.Lock()
	defer x.mu.Unlock()
	for {
		if x.err != nil || x.closing && len(x.queue) == 0 && !x.ioBusy {
			return
		}
		if !x.ioBusy && x.writerWork() {
			if x.asyncForce > x.durable && x.active != nil && x.active.at.LSN() <= x.asyncForce {
				x.switchActive()
			}
			x.roundLocked(false, x.baseLabels)
			continue
		}
		x.wcond.Wait()
	}
}

// writerWork reports whether the writer has a round to run: records
// switched out, a sync the ring or a checkpoint wants, a flush wanted, or
// the force StartForce handed it. The caller holds mu.
func (x *Log) writerWork() bool {
	return len(x.queue) > 0 || x.syncWanted && len(x.unsynced) > 0 ||
		x.flushWant > x.flushBegun || x.asyncForce > x.durable
}

// roundLocked runs one round of log I/O (see writer) on the calling
// goroutine: the queued records are sealed and written, then synced if
// sync is set or a force, the ring, a checkpoint or a flush wants it. The
// caller holds mu, and no round is in flight; mu is released for the I/O
// and held again on return. labels are the pprof labels to leave the
// goroutine with (the writer's own, or none for a caller's goroutine).
func (x *Log) roundLocked(sync bool, labels context.Context) {
	batch := x.queue
	x.queue = nil
	// Only the goroutine running the round moves durable (complete), so
	// it holds for the whole batch: each record's durable watermark.
	durable := x.durable
	forced := x.forceLSN > x.durable || x.asyncForce > x.durable
	sync = sync || forced || x.syncWanted || x.flushWant > x.flushBegun
	if len(batch) == 0 && !sync {
		return
	}
	x.ioBusy = true
	var flushNo uint64
	if sync {
		x.syncWanted = false
		// Numbered as it begins: a ForceFlush waits for one that
		// began after its caller's write-back.
		x.flushBegun++
		flushNo = x.flushBegun
	}
	unsynced := append(x.unsynced, batch...)
	x.unsynced = nil
	x.mu.Unlock()

	pprof.SetGoroutineLabels(x.baseLabels)
	roundStart := time.Now()
	x.times.StartRound()
	var err error
	if len(batch) > 0 && x.beforeWrite != nil {
		if err = x.beforeWrite(); err != nil {
			err = fmt.Errorf("before writing the records from %v: %w", batch[0].at.LSN(), err)
		}
	}
	for _, ic := range batch {
		if err != nil {
			break
		}
		err = x.writeRecord(ic, durable)
	}
	var syncTime time.Duration
	if err == nil && sync {
		start := time.Now()
		if err = x.Dev.Sync(); err != nil && len(unsynced) > 0 {
			err = fmt.Errorf("log sync (fdatasync) of the records up to %v: %w", unsynced[len(unsynced)-1].at.LSN(), err)
		}
		syncTime = time.Since(start)
		if forced && err == nil {
			x.times.Forced(time.Since(roundStart))
		}
	}
	pprof.SetGoroutineLabels(labels)
	if err != nil {
		x.Fail(err)
		x.mu.Lock()
		x.ioBusy = false
		x.cond.Broadcast()
		return
	}
	if sync {
		// The shadow model learns the records' transactions before
		// anyone can see them durable.
		for _, ic := range unsynced {
			x.onDurable(ic.txns, ic.bound)
		}
	}
	x.mu.Lock()
	if sync {
		x.stats.Syncs++
		x.stats.SyncNanos += uint64(syncTime)
		if forced {
			x.stats.ForceSyncs++
		}
		if len(unsynced) > 0 {
			last := unsynced[len(unsynced)-1]
			x.durable = last.at.LSN()
			x.bound = last.bound
			x.free = append(x.free, unsynced...)
		}
		x.flushDone = flushNo
	} else {
		x.unsynced = unsynced
	}
	x.ioBusy = false
	x.cond.Broadcast()
	if x.writerWork() || x.closing {
		x.wcond.Signal()
	}
	if sync && len(unsynced) > 0 && x.afterDurable != nil {
		// Told once forces waiting on the records have been released:
		// a freed inode's data file may go now (Config.AfterDurable).
		durable := x.durable
		x.mu.Unlock()
		x.afterDurable(durable)
		x.mu.Lock()
	}
}

// writeRecord seals a record (xlog_pack_data, then the CRC in the
// configured mode) and writes it at its block. durable is the newest
// durable record, the record's durable watermark: recovery reads it as
// proof that a damaged record at or below it was not in flight.
func (x *Log) writeRecord(ic *iclogSlot, durable logbuf.LSN) error {
	header, payload := ic.buf.HeaderBytes(), ic.buf.Used()
	pprof.SetGoroutineLabels(x.cksumLabels)
	rec := ic.buf.Seal(ic.at.LSN(), ic.tail, durable, ic.prevBlock, x.Sum)
	pprof.SetGoroutineLabels(x.baseLabels)
	off := int64(ic.at.block) * logbuf.BBSize
	_, err := x.Dev.WriteAt(rec, off)
	if err != nil {
		err = fmt.Errorf("log write of record %v (%d bytes at log offset %d): %w", ic.at.LSN(), len(rec), off, err)
	}
	x.mu.Lock()
	x.stats.Records++
	x.stats.RecordBytes += uint64(len(rec))
	x.stats.HeaderBytes += uint64(header)
	x.stats.PayloadBytes += uint64(payload)
	x.mu.Unlock()
	return err
}

// Fail stops the log for good: every later commit and every force that
// must wait gets a *FailedError carrying err.
func (x *Log) Fail(err error) {
	x.mu.Lock()
	first := x.err == nil
	if first {
		x.err = &FailedError{Reason: err}
	}
	x.cond.Broadcast()
	x.mu.Unlock()
	if first && x.onFail != nil {
		x.onFail(err)
	}
}

// Failure is the log's sticky error, nil while it works.
func (x *Log) Failure() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

// SpaceWaiting reports whether a commit waits for log space.
func (x *Log) SpaceWaiting() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.spaceWaiters > 0
}

// Force waits until the record at lsn is durable (xfs_log_force_seq). A
// record already durable needs nothing, even of a failed log.
func (x *Log) Force(lsn logbuf.LSN) error { return x.ForceWait(lsn, true) }

// ForceWait is force; count says whether this call counts as a force
// request (LogForces): false for the wait that follows a startForce,
// which counted the request when it made it. When no round of log I/O is
// in flight, the calling goroutine runs one itself (see writer); else it
// sleeps until the round in flight ends, and runs the next one if nobody
// did meanwhile.
func (x *Log) ForceWait(lsn logbuf.LSN, count bool) error {
	return x.forceLocked(lsn, 0, count)
}

// forceLocked waits until lsn is durable and, if flush is not zero, until
// the flush numbered flush has finished, running rounds itself when none
// is in flight.
func (x *Log) forceLocked(lsn logbuf.LSN, flush uint64, count bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if count {
		x.stats.Forces++
	}
	done := func() bool { return x.durable >= lsn && x.flushDone >= flush }
	if lsn == 0 && flush == 0 || done() {
		return nil
	}
	if count {
		x.stats.ForceCalls++
	}
	x.forceLSN = max(x.forceLSN, lsn)
	slept := false
	for !done() && x.err == nil {
		if x.ioBusy {
			if !slept {
				x.stats.ForceSleeps++
				slept = true
			}
			x.cond.Wait()
			continue
		}
		if lsn > x.durable && x.active != nil && x.active.at.LSN() <= lsn {
			// The record is still forming: seal it now
			// (XLOG_STATE_WANT_SYNC), nobody else will.
			x.switchActive()
		}
		x.stats.CallerRounds++
		x.roundLocked(true, context.Background())
	}
	if done() {
		return nil
	}
	return x.err
}

// ForceFlush is force(lsn), and also waits for a flush of the log device
// that began after the call, even when lsn is durable already: what the
// caller wrote back to the device before calling (a data file's
// sync_file_range) is then durable too, where the filesystem under the
// store needs no metadata for it (see journal/store/fiemap.go). Concurrent callers share
// one flush, as forces share one write.
func (x *Log) ForceFlush(lsn logbuf.LSN) error {
	x.mu.Lock()
	if x.err != nil {
		defer x.mu.Unlock()
		return x.err
	}
	want := x.flushBegun + 1
	x.flushWant = max(x.flushWant, want)
	x.mu.Unlock()
	return x.forceLocked(lsn, want, true)
}

// StartForce asks the writer for the record at lsn, as force does, and
// returns at once: the caller does other work meanwhile (a data file's
// sync, whose flush then runs beside the log's), then waits with
// forceWait(lsn, false). The request is counted here, where it is made:
// by the time the caller waits, the record is often durable already.
func (x *Log) StartForce(lsn logbuf.LSN) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.stats.Forces++
	if lsn == 0 || lsn <= x.durable || x.err != nil {
		return
	}
	x.stats.ForceCalls++
	x.forceLSN = max(x.forceLSN, lsn)
	x.asyncForce = max(x.asyncForce, lsn)
	x.wcond.Signal()
}

// ForceAll makes every committed transaction durable.
func (x *Log) ForceAll() error {
	x.mu.Lock()
	target := x.lastSwitched
	if x.active != nil && x.active.buf.NumOps() > 0 {
		target = x.active.at.LSN()
	}
	x.mu.Unlock()
	return x.Force(target)
}

// SyncSwitched makes every switched-out record durable without switching
// the active iclog, whose owner may be waiting for space: what a
// checkpoint needs before it can move the tail.
func (x *Log) SyncSwitched() (Boundary, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	target := x.lastSwitched
	for x.durable < target && x.err == nil {
		x.syncWanted = true
		x.wcond.Signal()
		x.cond.Wait()
	}
	return x.bound, x.err
}

// MoveTail frees the log before t: a checkpoint now covers it.
func (x *Log) MoveTail(t Pos) {
	x.mu.Lock()
	if t.Abs > x.tail.Abs {
		x.tail = t
	}
	x.cond.Broadcast()
	x.mu.Unlock()
}

// WriteUnmount writes the unmount record (one op, clientid XFS_LOG, flag
// UNMOUNT, the xfs_unmount_log_format payload) and makes it durable. It
// never waits for log space, which only a checkpoint could give: with no
// room for another record it returns a *LogFullError.
func (x *Log) WriteUnmount() error {
	var payload [8]byte
	payload[0], payload[1] = logbuf.UnmountType>>8, logbuf.UnmountType&0xff
	x.mu.Lock()
	var ic *iclogSlot
	var err error
	if x.active == nil && x.err == nil && !x.roomLocked() {
		err = &LogFullError{Head: x.head.LSN(), Tail: x.tail.LSN()}
	} else {
		ic, err = x.activeIclog()
	}
	if err == nil {
		ic.buf.AppendOp(x.nextTID, logbuf.ClientLog, logbuf.FlagUnmount, payload[:], false)
		x.nextTID++
	}
	x.mu.Unlock()
	if err != nil {
		return err
	}
	return x.ForceAll()
}

// Stop ends the writer after it has written what is queued; records
// written but not synced stay so (Close syncs first; a crash does not).
func (x *Log) Stop() {
	x.mu.Lock()
	x.closing = true
	x.wcond.Signal()
	x.mu.Unlock()
	<-x.writerDone
	x.mu.Lock()
	if x.err == nil {
		x.err = ErrClosed
	}
	x.cond.Broadcast()
	x.mu.Unlock()
}

// TailLSN is the oldest position recovery still reads: records before it
// are never replayed again.
func (x *Log) TailLSN() logbuf.LSN {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.tail.LSN()
}

// LastCommitted is the tid of the newest committed transaction.
func (x *Log) LastCommitted() uint32 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.lastTID
}

func (x *Log) SnapshotStats() (Stats, Pos, Pos, logbuf.LSN) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.stats, x.head, x.tail, x.durable
}

var ErrClosed = fmt.Errorf("the log is closed")

// Unforced reports whether the log holds committed transactions that are
// not durable yet: ops in the active iclog, or records switched out and
// not synced.
func (x *Log) Unforced() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.active != nil && x.active.buf.NumOps() > 0 || x.lastSwitched > x.durable
}

// DurableLSN is the newest durable record (0: none yet).
func (x *Log) DurableLSN() logbuf.LSN {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.durable
}

// writerLabels are the pprof labels the writer runs under (package
// profiling/labels defines them for the analyser too): phase=logwrite, and
// while it seals and checksums records phase=checksum with the checksum
// mode.
func writerLabels(mode cksum.Mode) (base, checksum context.Context) {
	base = pprof.WithLabels(context.Background(), pprof.Labels(labels.Phase, labels.PhaseLogWrite))
	checksum = pprof.WithLabels(context.Background(), pprof.Labels(labels.Phase, labels.PhaseChecksum, labels.Mode, mode.String()))
	return base, checksum
}
