package journal

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/logbuf"
)

// pos is a record position: its cycle and block, and an absolute block
// number that only grows (it counts the log's size once per wrap), so
// distances and free space are plain subtraction.
type pos struct {
	cycle uint32
	block uint32
	abs   uint64
}

func (p pos) lsn() logbuf.LSN { return logbuf.MakeLSN(p.cycle, p.block) }

// boundary is where a checkpoint taken right after a record would stand:
// recovery walks from tail and skips transactions up to lastTID.
type boundary struct {
	tail    pos
	lastTID uint32
}

// iclog is one in-core log buffer of the ring with what the log needs to
// know about the record it holds.
type iclog struct {
	buf       *logbuf.Iclog
	at        pos        // where the record goes
	tail      logbuf.LSN // h_tail_lsn
	prevBlock uint32     // h_prev_block
	next      pos        // where the record after it goes
	bound     boundary   // checkpoint boundary once this record is durable
	txns      []txnDone  // transactions whose COMMIT is in this record
}

// txnDone is a committed transaction, kept until its record is durable:
// its id and the caller's item for it (the journal's op, which the
// checkpoint's shadow model applies then). The log never looks inside.
type txnDone struct {
	tid  uint32
	item any
}

// xlog is the in-core log (XFS's struct xlog): the iclog ring, the log head
// and tail, log forces, and the writer goroutine that stamps, checksums,
// writes and syncs records (xlog_sync). At most logbufs records are ever
// written but not yet durable, because an iclog is reused only once its
// record is durable; recovery's in-flight allowance relies on that, and on
// each record's durable watermark (the newest durable record when it was
// sealed): the records after the watermark up to the record itself hold
// iclogs, so there are at most logbufs of them.
type xlog struct {
	dev       Device
	logBlocks uint64
	logbsize  int
	maxBlocks uint64 // blocks of the largest record
	logbufs   int
	sum       *cksum.Summer

	// called by the writer, outside mu, with records just made durable
	onDurable func(txns []txnDone, bound boundary)
	// asks for a checkpoint without blocking
	wantCheckpoint func()
	// called once, outside mu, when the log fails
	onFail func(reason error)

	// pprof labels the writer runs under, and those of checksum work.
	baseLabels, cksumLabels context.Context
	// inline mode: AppendOp checksums as it copies, under cksumLabels
	inline bool

	mu    sync.Mutex
	cond  sync.Cond // durable moved, iclog freed, tail moved, failure
	wcond sync.Cond // wakes the writer

	free         []*iclog
	active       *iclog
	queue        []*iclog // switched out, not yet written
	head         pos      // where the next record goes
	prevBlock    uint32
	tail         pos        // oldest position still needed by recovery
	durable      logbuf.LSN // newest durable record (0: none yet)
	bound        boundary   // checkpoint boundary as of durable
	lastSwitched logbuf.LSN // newest record switched out
	forceLSN     logbuf.LSN // newest record a force waits for
	syncWanted   bool       // make written records durable (ring exhausted, checkpoint)
	// Device flushes by number: begun, and the newest one finished; a
	// flush is wanted until one numbered flushWant has begun (forceFlush).
	flushBegun, flushDone, flushWant uint64
	nextTID                          uint32
	lastTID                          uint32 // newest committed transaction
	open                             *pos   // START position of the transaction being copied in
	spaceWaiters                     int    // commits waiting for a checkpoint to free log space
	err                              error  // sticky: the log failed (a *FailedError), or errClosed
	closing                          bool
	writerDone                       chan struct{}

	stats xlogStats
	times forceTimer // told the checksum time per record and per force
}

type xlogStats struct {
	records      uint64 // records written
	recordBytes  uint64 // bytes of records written
	headerBytes  uint64 // of which header blocks
	payloadBytes uint64 // of which op headers and regions (the rest pads to a block)
	syncs        uint64 // fdatasyncs of the log
	forceCalls   uint64 // forces that had to wait
	forceSyncs   uint64 // syncs that had a force waiting
	transactions uint64
	spaceWaits   uint64 // times a writer waited for log space (a checkpoint)
	iclogWaits   uint64 // times a writer waited for an iclog
	syncNanos    uint64
}

// forceTimer is told what the checksum costs on the writer (every
// checksum's cost, as cksum.Summer observes it) and how long each writer
// round that ended in a sync a force waited for took, from its start.
type forceTimer interface {
	Observe(cost cksum.Cost)
	StartRound()
	Forced(total time.Duration)
}

type xlogConfig struct {
	times          forceTimer
	dev            Device
	uuid           [16]byte
	logbsize       int
	logbufs        int
	sum            *cksum.Summer
	head           pos
	prevBlock      uint32
	tail           pos
	durable        logbuf.LSN
	lastTID        uint32
	onDurable      func(txns []txnDone, bound boundary)
	wantCheckpoint func()
	onFail         func(reason error)
}

func newXlog(c xlogConfig) (*xlog, error) {
	x := &xlog{
		times:          c.times,
		dev:            c.dev,
		logBlocks:      uint64(c.dev.Size() / logbuf.BBSize),
		logbsize:       c.logbsize,
		maxBlocks:      uint64(c.logbsize / logbuf.BBSize),
		logbufs:        c.logbufs,
		sum:            c.sum,
		onDurable:      c.onDurable,
		wantCheckpoint: c.wantCheckpoint,
		onFail:         c.onFail,
		head:           c.head,
		prevBlock:      c.prevBlock,
		tail:           c.tail,
		durable:        c.durable,
		bound:          boundary{tail: c.head, lastTID: c.lastTID},
		nextTID:        c.lastTID + 1,
		lastTID:        c.lastTID,
		writerDone:     make(chan struct{}),
		inline:         c.sum.Mode() == cksum.Inline,
	}
	x.cond.L = &x.mu
	x.wcond.L = &x.mu
	c.sum.Observe(x.times.Observe)
	for range c.logbufs {
		buf, err := logbuf.NewIclog(c.logbsize, c.uuid)
		if err != nil {
			return nil, err
		}
		x.free = append(x.free, &iclog{buf: buf})
	}
	x.baseLabels = pprof.WithLabels(context.Background(), pprof.Labels("phase", "logwrite"))
	x.cksumLabels = pprof.WithLabels(context.Background(), pprof.Labels("phase", "checksum", "cksum_mode", c.sum.Mode().String()))
	go x.writer()
	return x, nil
}

// wrap applies the placement rule: a record starts where the previous one
// ended unless the largest record might not fit before the end of the log,
// in which case it starts at block 0 of the next cycle. Every record is
// then written whole at its block, and recovery follows the same rule.
func wrap(p pos, maxBlocks, logBlocks uint64) pos {
	if uint64(p.block)+maxBlocks > logBlocks {
		p.abs += logBlocks - uint64(p.block)
		p.block = 0
		p.cycle = logbuf.NextCycle(p.cycle)
	}
	return p
}

// commit copies one transaction into the log: a START op, the region, a
// COMMIT op, as XFS delimits transactions. It returns the LSN of the
// record holding the COMMIT, which a force must reach for the transaction
// to be durable. The caller serializes commits (it holds the FS lock), so
// transactions enter the log in the order they change the model.
func (x *xlog) commit(region []byte, item any) (logbuf.LSN, error) {
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
	if _, err = x.appendOp(tid, 0, region); err == nil {
		ic, err = x.appendOp(tid, logbuf.FlagCommit, nil)
	}
	x.open = nil
	if err != nil {
		return 0, err
	}
	x.nextTID++
	x.lastTID = tid
	x.stats.transactions++
	ic.txns = append(ic.txns, txnDone{tid: tid, item: item})
	return ic.at.lsn(), nil
}

// appendOp writes one op into the active iclog, splitting its region over
// as many iclogs as it needs. It returns the iclog holding the last piece.
func (x *xlog) appendOp(tid uint32, flags uint8, data []byte) (*iclog, error) {
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
func (x *xlog) activeIclog() (*iclog, error) {
	for x.active == nil {
		if x.err != nil {
			return nil, x.err
		}
		if len(x.free) == 0 {
			x.stats.iclogWaits++
			x.syncWanted = true
			x.wcond.Signal()
			x.cond.Wait()
			continue
		}
		// The record may grow to maxBlocks; it must not reach the tail.
		if x.head.abs+x.maxBlocks > x.tail.abs+x.logBlocks {
			x.stats.spaceWaits++
			x.wantCheckpoint()
			x.spaceWaiters++
			x.cond.Wait()
			x.spaceWaiters--
			continue
		}
		ic := x.free[len(x.free)-1]
		x.free = x.free[:len(x.free)-1]
		ic.buf.Start(x.head.cycle, x.sum) // the cycle its blocks are stamped with
		ic.txns = ic.txns[:0]
		ic.at = x.head
		x.active = ic
		if (x.head.abs+x.maxBlocks-x.tail.abs)*4 > x.logBlocks*3 {
			x.wantCheckpoint() // ¾ full
		}
	}
	return x.active, nil
}

// switchActive hands the active iclog to the writer (XLOG_STATE_WANT_SYNC)
// and moves the head past it. An empty iclog stays active.
func (x *xlog) switchActive() {
	ic := x.active
	if ic == nil || ic.buf.NumOps() == 0 {
		return
	}
	x.active = nil
	ic.tail = x.tail.lsn()
	ic.prevBlock = x.prevBlock
	n := uint64(ic.buf.RecordBytes() / logbuf.BBSize)
	ic.next = wrap(pos{cycle: ic.at.cycle, block: ic.at.block + uint32(n), abs: ic.at.abs + n}, x.maxBlocks, x.logBlocks)
	ic.bound = boundary{tail: ic.next, lastTID: x.lastTID}
	if x.open != nil {
		// A transaction straddles this record: recovery must start at
		// the record holding its START.
		ic.bound.tail = *x.open
	}
	x.prevBlock = ic.at.block
	x.head = ic.next
	x.lastSwitched = ic.at.lsn()
	x.queue = append(x.queue, ic)
	x.wcond.Signal()
}

// writer is the log's I/O goroutine. Each round it switches out the
// active iclog if a force wants it, writes every queued record (stamped and
// checksummed while it is still hot), and syncs when a force or the ring
// needs it. Forces that arrive during a sync are served together by the
// next one: group commit.
func (x *xlog) writer() {
	defer close(x.writerDone)
	pprof.SetGoroutineLabels(x.baseLabels)
	var written []*iclog // written, not yet durable
	for {
		x.mu.Lock()
		for {
			if x.err != nil || x.closing && len(x.queue) == 0 {
				x.mu.Unlock()
				return
			}
			forcing := x.forceLSN > x.durable
			if forcing && x.active != nil && x.active.at.lsn() <= x.forceLSN {
				x.switchActive()
			}
			flush := x.flushWant > x.flushBegun
			if len(x.queue) > 0 || (forcing || x.syncWanted) && len(written) > 0 || flush {
				break
			}
			x.wcond.Wait()
		}
		batch := x.queue
		x.queue = nil
		// Only this goroutine moves durable (complete), so it holds for
		// the whole batch: each record's durable watermark.
		durable := x.durable
		forced := x.forceLSN > x.durable
		sync := forced || x.syncWanted || x.flushWant > x.flushBegun
		x.syncWanted = false
		var flushNo uint64
		if sync {
			// Numbered as it begins: a forceFlush waits for one that
			// began after its caller's write-back.
			x.flushBegun++
			flushNo = x.flushBegun
		}
		x.mu.Unlock()

		roundStart := time.Now()
		x.times.StartRound()
		var err error
		for _, ic := range batch {
			if err = x.writeRecord(ic, durable); err != nil {
				break
			}
		}
		written = append(written, batch...)
		if err == nil && sync {
			start := time.Now()
			err = x.dev.Sync()
			x.mu.Lock()
			x.stats.syncs++
			x.stats.syncNanos += uint64(time.Since(start))
			if forced {
				x.stats.forceSyncs++
			}
			x.mu.Unlock()
			if forced && err == nil {
				x.times.Forced(time.Since(roundStart))
			}
		}
		if err != nil {
			x.fail(fmt.Errorf("log write: %w", err))
			return
		}
		if sync {
			x.complete(written, flushNo)
			written = nil
		}
	}
}

// writeRecord seals a record (xlog_pack_data, then the CRC in the
// configured mode) and writes it at its block. durable is the newest
// durable record, the record's durable watermark: recovery reads it as
// proof that a damaged record at or below it was not in flight.
func (x *xlog) writeRecord(ic *iclog, durable logbuf.LSN) error {
	header, payload := ic.buf.HeaderBytes(), ic.buf.Used()
	pprof.SetGoroutineLabels(x.cksumLabels)
	rec := ic.buf.Seal(ic.at.lsn(), ic.tail, durable, ic.prevBlock, x.sum)
	pprof.SetGoroutineLabels(x.baseLabels)
	_, err := x.dev.WriteAt(rec, int64(ic.at.block)*logbuf.BBSize)
	x.mu.Lock()
	x.stats.records++
	x.stats.recordBytes += uint64(len(rec))
	x.stats.headerBytes += uint64(header)
	x.stats.payloadBytes += uint64(payload)
	x.mu.Unlock()
	return err
}

// complete publishes records made durable by a sync: the shadow model
// learns their transactions, then their iclogs return to the ring and
// forces waiting on them return.
func (x *xlog) complete(recs []*iclog, flushNo uint64) {
	for _, ic := range recs {
		x.onDurable(ic.txns, ic.bound)
	}
	x.mu.Lock()
	if len(recs) > 0 {
		last := recs[len(recs)-1]
		x.durable = last.at.lsn()
		x.bound = last.bound
		x.free = append(x.free, recs...)
	}
	x.flushDone = flushNo
	x.cond.Broadcast()
	x.mu.Unlock()
}

// fail stops the log for good: every later commit and every force that
// must wait gets a *FailedError carrying err.
func (x *xlog) fail(err error) {
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

// failure is the log's sticky error, nil while it works.
func (x *xlog) failure() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

// spaceWaiting reports whether a commit waits for log space.
func (x *xlog) spaceWaiting() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.spaceWaiters > 0
}

// force waits until the record at lsn is durable (xfs_log_force_seq). A
// record already durable needs nothing, even of a failed log.
func (x *xlog) force(lsn logbuf.LSN) error { return x.forceWait(lsn, true) }

// forceWait is force; count says whether this call counts as a force
// request (LogForces): false for the wait that follows a startForce,
// which counted the request when it made it.
func (x *xlog) forceWait(lsn logbuf.LSN, count bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if lsn == 0 || lsn <= x.durable {
		return nil
	}
	if count {
		x.stats.forceCalls++
	}
	if lsn > x.forceLSN {
		x.forceLSN = lsn
	}
	x.wcond.Signal()
	for x.durable < lsn && x.err == nil {
		x.cond.Wait()
	}
	if x.durable >= lsn {
		return nil
	}
	return x.err
}

// forceFlush is force(lsn), and also waits for a flush of the log device
// that began after the call, even when lsn is durable already: what the
// caller wrote back to the device before calling (a data file's
// sync_file_range) is then durable too, where the filesystem under the
// store needs no metadata for it (see fiemap.go). Concurrent callers share
// one flush, as forces share one write.
func (x *xlog) forceFlush(lsn logbuf.LSN) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.err != nil {
		return x.err
	}
	want := x.flushBegun + 1
	x.flushWant = max(x.flushWant, want)
	if lsn > x.durable {
		x.stats.forceCalls++
		x.forceLSN = max(x.forceLSN, lsn)
	}
	x.wcond.Signal()
	for (x.flushDone < want || x.durable < lsn) && x.err == nil {
		x.cond.Wait()
	}
	if x.flushDone >= want && x.durable >= lsn {
		return nil
	}
	return x.err
}

// startForce asks the writer for the record at lsn, as force does, and
// returns at once: the caller does other work meanwhile, then waits with
// forceWait(lsn, false). The request is counted here, where it is made:
// by the time the caller waits, the record is often durable already.
func (x *xlog) startForce(lsn logbuf.LSN) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if lsn == 0 || lsn <= x.durable || x.err != nil {
		return
	}
	x.stats.forceCalls++
	if lsn > x.forceLSN {
		x.forceLSN = lsn
	}
	x.wcond.Signal()
}

// forceAll makes every committed transaction durable.
func (x *xlog) forceAll() error {
	x.mu.Lock()
	target := x.lastSwitched
	if x.active != nil && x.active.buf.NumOps() > 0 {
		target = x.active.at.lsn()
	}
	x.mu.Unlock()
	return x.force(target)
}

// syncSwitched makes every switched-out record durable without switching
// the active iclog, whose owner may be waiting for space: what a
// checkpoint needs before it can move the tail.
func (x *xlog) syncSwitched() (boundary, error) {
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

// moveTail frees the log before t: a checkpoint now covers it.
func (x *xlog) moveTail(t pos) {
	x.mu.Lock()
	if t.abs > x.tail.abs {
		x.tail = t
	}
	x.cond.Broadcast()
	x.mu.Unlock()
}

// writeUnmount writes the unmount record (one op, clientid XFS_LOG, flag
// UNMOUNT, the xfs_unmount_log_format payload) and makes it durable.
func (x *xlog) writeUnmount() error {
	var payload [8]byte
	payload[0], payload[1] = logbuf.UnmountType>>8, logbuf.UnmountType&0xff
	x.mu.Lock()
	ic, err := x.activeIclog()
	if err == nil {
		ic.buf.AppendOp(x.nextTID, logbuf.ClientLog, logbuf.FlagUnmount, payload[:], false)
		x.nextTID++
	}
	x.mu.Unlock()
	if err != nil {
		return err
	}
	return x.forceAll()
}

// stop ends the writer after it has written what is queued; records
// written but not synced stay so (Close syncs first; a crash does not).
func (x *xlog) stop() {
	x.mu.Lock()
	x.closing = true
	x.wcond.Signal()
	x.mu.Unlock()
	<-x.writerDone
	x.mu.Lock()
	if x.err == nil {
		x.err = errClosed
	}
	x.cond.Broadcast()
	x.mu.Unlock()
}

// tailLSN is the oldest position recovery still reads: records before it
// are never replayed again.
func (x *xlog) tailLSN() logbuf.LSN {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.tail.lsn()
}

// lastCommitted is the tid of the newest committed transaction.
func (x *xlog) lastCommitted() uint32 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.lastTID
}

func (x *xlog) snapshotStats() (xlogStats, pos, pos, logbuf.LSN) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.stats, x.head, x.tail, x.durable
}

var errClosed = fmt.Errorf("the log is closed")

// unforced reports whether the log holds committed transactions that are
// not durable yet: ops in the active iclog, or records switched out and
// not synced.
func (x *xlog) unforced() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.active != nil && x.active.buf.NumOps() > 0 || x.lastSwitched > x.durable
}

// durableLSN is the newest durable record (0: none yet).
func (x *xlog) durableLSN() logbuf.LSN {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.durable
}
