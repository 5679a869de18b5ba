package recovery

import (
	"errors"
	"fmt"
	"io"

	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
)

// Report says what mounting found in the log.
type Report struct {
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
	// Missing lists the regular files whose data file lacked bytes that
	// were durable, mounted anyway (AllowMissingData): their reads and
	// writes fail with EIO (datafiles.go).
	Missing []MissingData
}

// FollowedFile is an inode recovery grew to its data file's size.
type FollowedFile struct {
	Ino          meta.Ino
	Logged       int64 // the size the log had
	Size         int64 // the data file's, now the file's
	Mtime, Ctime int64 // the times the log had (now at least the data file's mtime)
}

// Mount is what recovering a store's log at mount needs.
type Mount struct {
	Log        xlog.Device       // read whole; written only to clear stale blocks past the head
	LogSize    int64             // the superblock's
	Coverage   logbuf.Coverage   // the superblock's: what the records' CRCs cover
	Checkpoint *store.Checkpoint // where the walk starts; its Model is replayed onto, in place
	Files      *datafile.Files   // the data files replay writes and reconciles
	LogData    bool              // data-journal mode: replay writes logged bytes, cuts and fallocates to data files
	LogBSize   int               // the new writer's iclog size: where its first record may go
	// Overlay, non-nil (a NoRecovery mount), receives what replay would
	// write to data files, and nothing is written to the store.
	Overlay datafile.Overlay
	// AllowMissingData mounts a store whose data files lack bytes that
	// were durable (datafiles.go), marking those files (their reads and
	// writes fail with EIO) instead of refusing it.
	AllowMissingData bool
	Logf             func(format string, a ...any)

	gone map[meta.Ino]bool // data-journal replay: inodes the replayed log frees (goneAfterReplay)
}

// Recovered is what a mount goes on from: the report, the recovered model
// (Mount.Checkpoint.Model, replayed), and where the new writer starts.
type Recovered struct {
	Report
	Head      xlog.Pos // the new writer's first record, by its own placement rule
	PrevBlock uint32   // h_prev_block of that record
	LastTID   uint32   // newest transaction in the model
	// What a writer needs that goes on from the checkpoint recovered
	// from, when no fresh one can be written (a full disk): the
	// checkpoint's tail, in Head's terms (the log before it is free), and
	// the newest transaction id in the records walked, committed or not
	// (its ids must be newer: a transaction the walk dropped as
	// incomplete is walked again by the next recovery).
	Tail    xlog.Pos
	SeenTID uint32
}

// stalePastHead is how many blocks past the head a mount clears: more than
// in-flight records can reach (8 records of 256 KiB and a wrap gap).
const stalePastHead = (logbuf.MaxLogBufs + 2) * logbuf.MaxLogBSize / logbuf.BBSize

// Recover reads the log whole, walks it from the checkpoint's tail,
// refuses corruption and data files that lack durable bytes, replays the
// committed transactions onto the checkpoint's model and the data files
// (but those marked missing), cuts a torn tail, frees orphans,
// keeps marked inodes' longer data files, reconciles the data files with
// the model and clears stale blocks past the head (the package
// documentation of journal has the rules). The caller then writes a fresh
// checkpoint of the model before the new writer starts.
func Recover(m Mount) (*Recovered, error) {
	ck := m.Checkpoint
	img := make([]byte, m.LogSize)
	if _, err := m.Log.ReadAt(img, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading the log (%d bytes at offset 0): %w", m.LogSize, err)
	}
	scan := xlog.ScanLog(img, WindowOf(ck, m.Coverage))
	if err := scan.Corruption(); err != nil {
		return nil, err
	}
	missing, err := m.missingData(scan)
	if err != nil {
		return nil, err
	}
	if m.LogData && m.Overlay == nil {
		m.gone = goneAfterReplay(scan, ck)
	}
	replayed := map[meta.Ino]bool{}
	var deferred *deferredWrites
	if !m.LogData {
		deferred = &deferredWrites{} // logged bytes of immediate writes (immediate.go)
	}
	rep, err := Replay(scan, ck.LastTID, func(op *meta.Op) error { return m.replayOp(op, replayed, deferred) })
	if err == nil && deferred != nil {
		if m.Overlay != nil {
			deferred.layOver(m.Overlay)
		} else {
			err = deferred.apply(m.Files, replayed)
		}
	}
	if err != nil {
		return nil, err
	}
	r := &Recovered{LastTID: rep.LastTID, PrevBlock: scan.Prev}
	r.Tail, r.SeenTID = scan.Tail, seenTID(scan, rep.LastTID)
	r.Report = Report{Clean: scan.Clean, Records: len(scan.Records), Transactions: rep.Transactions, Dropped: rep.Dropped, Missing: missing}
	for _, rec := range scan.Records {
		if rec.Restamped > 0 {
			r.Restamped++
			m.Logf("log record at LSN %v (offset %d): %d blocks did not carry its cycle, yet its CRC verifies with their cycle words restored; replayed",
				rec.LSN(), rec.Offset, rec.Restamped)
		}
	}
	if scan.Kind == xlog.ScanTorn {
		r.TornLSN = scan.Stop.LSN()
		r.DroppedLater = len(scan.Later)
		m.Logf("torn write detected at log LSN %v (offset %d): %v; it may have been in flight (records from it on: %d, at most %d in flight), so the log head is cut there (%d later in-flight records and %s dropped, %d incomplete transactions not replayed)",
			scan.Stop.LSN(), scan.Stop.Offset, scan.Stop.Err, scan.InFlight, xlog.InFlightAllowance(WindowOf(ck, m.Coverage)), len(scan.Later), scan.Stake().Count(), rep.Dropped)
	}
	r.Orphans = len(ck.Model.DropOrphans())
	if err := m.recoverFollowed(&r.Report, replayed); err != nil {
		return nil, err
	}
	if m.Overlay == nil {
		if err := m.Files.Reconcile(ck.Model, replayed); err != nil {
			return nil, err
		}
	}

	// The new writer starts at the head, by its own placement rule.
	logBlocks := uint64(m.LogSize / logbuf.BBSize)
	r.Head = xlog.Wrap(scan.Head, uint64(m.LogBSize/logbuf.BBSize), logBlocks)
	if !scan.Clean && m.Overlay == nil {
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
		free := logBlocks - scan.Live - (r.Head.Abs - scan.Head.Abs)
		if err := xlog.ZeroAfterHead(m.Log, r.Head, min(free, stalePastHead)); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// seenTID is the newest transaction id of the scan's records, at least
// last.
func seenTID(s *xlog.Scan, last uint32) uint32 {
	for _, r := range s.Records {
		for _, op := range r.Record.Ops {
			if op.ClientID == logbuf.ClientTransaction && xlog.NewerTID(op.TID, last) {
				last = op.TID
			}
		}
	}
	return last
}

// goneAfterReplay lists the inodes whose bytes data-journal replay would
// write and that the replayed log leaves freed (orphans included): replay
// writes none of their bytes, which Reconcile would delete again, and which
// on a full disk need room the store lacks (a freed inode's data file goes
// once its free is durable, before a checkpoint covers the free). A log
// that does not replay gives none: the replay itself says why.
func goneAfterReplay(s *xlog.Scan, ck *store.Checkpoint) map[meta.Ino]bool {
	dry := ck.Model.Clone()
	touched := map[meta.Ino]bool{}
	if _, err := Replay(s, ck.LastTID, func(op *meta.Op) error {
		touched[op.Ino] = true
		return dry.Apply(op)
	}); err != nil {
		return nil
	}
	dry.DropOrphans()
	gone := map[meta.Ino]bool{}
	for ino := range touched {
		if dry.Inodes[ino] == nil {
			gone[ino] = true
		}
	}
	return gone
}

// missingData finds the regular files whose data file lacks bytes that
// were durable (datafiles.go), before replay writes anything to a data file
// (in data-journal mode replay writes as it goes): it replays the log onto
// a copy of the checkpoint's model. It refuses them unless the mount allows
// them; then it marks each, so that its reads and writes fail with EIO and
// Reconcile leaves its data file as it is, and says so. A NoRecovery mount
// is refused alike: it would show the missing bytes as zeros.
func (m *Mount) missingData(scan *xlog.Scan) ([]MissingData, error) {
	sizes, err := m.Files.Sizes()
	if err != nil {
		return nil, err
	}
	dry := m.Checkpoint.Model.Clone()
	_, floors, err := replayModel(scan, m.Checkpoint, dry)
	if err != nil {
		return nil, err
	}
	dry.DropOrphans()
	missing := floors.missing(dry, sizes, m.Files.Path)
	if len(missing) == 0 {
		return nil, nil
	}
	if !m.AllowMissingData {
		return nil, &MissingDataError{Files: missing}
	}
	for _, d := range missing {
		m.Files.MarkMissing(d.Ino)
		m.Logf("%v: mounted anyway (--allow-missing-data): its reads and writes fail with EIO until it is truncated to 0 or removed", d)
	}
	return missing, nil
}

// replayOp applies one replayed op to the model and, for data-journal
// writes, to the data file; replayed collects the data files it changed.
// A metadata-journal log's logged bytes (immediate writes) are deferred
// instead, to deferred.
func (m *Mount) replayOp(op *meta.Op, replayed map[meta.Ino]bool, deferred *deferredWrites) error {
	model := m.Checkpoint.Model
	oldSize := int64(-1)
	if in := model.Inodes[op.Ino]; in != nil {
		oldSize = in.Size
	}
	if err := model.Apply(op); err != nil {
		return err
	}
	if deferred != nil {
		// Metadata journal: only immediate writes carry bytes, applied
		// (or laid over, NoRecovery) once the whole log is read.
		deferred.note(op, oldSize)
		return nil
	}
	if m.Overlay != nil {
		m.Overlay.Add(op, m.LogData) // NoRecovery: in memory only
		return nil
	}
	if m.Files.Missing(op.Ino) {
		// Its data file lost durable bytes (datafiles.go): left as
		// it is, so that logged bytes written into it never make it
		// look whole to the next mount.
		return nil
	}
	if m.gone[op.Ino] {
		return nil // freed later in the log: Reconcile deletes its data file
	}
	var err error
	switch {
	case op.Type == meta.OpWrite && op.Data != nil:
		err = m.Files.With(op.Ino, true, func(f store.StoreFile) error {
			_, err := f.WriteAt(op.Data, op.Off)
			return err
		})
	case op.Type == meta.OpSetattr && op.Mask&meta.SetSize != 0 && m.LogData:
		err = m.Files.With(op.Ino, true, func(f store.StoreFile) error { return f.Truncate(op.Size) })
	case op.Type == meta.OpFallocate && m.LogData:
		err = m.Files.With(op.Ino, true, func(f store.StoreFile) error { return f.Allocate(op.Mode, op.Off, op.Len) })
	default:
		return nil
	}
	replayed[op.Ino] = true
	return err
}

// recoverFollowed is recovery's part of the size-follows mark (package
// datafile, passthrough.go): each marked inode whose data file is longer
// than its logged size takes the data file's size, and its mtime if newer;
// then every mark is cleared, since no open outlives a mount. replayed
// collects the grown inodes, whose data files Reconcile then syncs before
// the fresh checkpoint records their new size. A NoRecovery mount changes
// only its model in memory.
func (m *Mount) recoverFollowed(r *Report, replayed map[meta.Ino]bool) error {
	model := m.Checkpoint.Model
	for _, ino := range model.SizeFollows() {
		in := model.Inodes[ino]
		in.SizeFollows = false
		s, ok, err := m.Files.Stat(ino)
		if err != nil {
			return fmt.Errorf("recovering inode %d, whose size follows its data file %s: %w", ino, m.Files.Path(ino), err)
		}
		if !ok || s.Size <= in.Size {
			continue // never written, or not longer: the logged size stands
		}
		r.Followed = append(r.Followed, FollowedFile{Ino: ino, Logged: in.Size, Size: s.Size, Mtime: in.Mtime, Ctime: in.Ctime})
		m.Logf("inode %d was open for writing in passthrough: its data file's %d bytes are kept over the logged size %d (writes the kernel synced in the data file alone)",
			ino, s.Size, in.Size)
		in.Size = s.Size
		in.Mtime = max(in.Mtime, s.Mtime)
		in.Ctime = max(in.Ctime, s.Mtime)
		replayed[ino] = true
	}
	return nil
}
