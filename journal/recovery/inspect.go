package recovery

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
)

// LogReport is what a store holds, read without changing anything: for
// xlogfs logprint and xlogfs check.
type LogReport struct {
	Superblock *store.Superblock
	Checkpoint *store.Checkpoint
	Records    []xlog.ScannedRecord // valid records from the tail, in log order
	Bad        *xlog.ScannedRecord  // the first bad record, where the walk stopped
	Torn       bool                 // Bad is a torn write: mounting cuts the log there
	Corrupt    error                // *CorruptionError: mounting refuses
	Later      []xlog.ScannedRecord // valid records newer than Bad
	AtStake    []xlog.StakedTxn     // committed transactions in Later (CRC verified): what cutting the log drops
	Unread     []xlog.UnreadRecord  // Bad, and records after it, whose transactions cutting drops unread
	InFlight   int                  // records from Bad to the newest of Later, at least
	LogBufs    int                  // how many records can be in flight at once
	Clean      bool                 // the log ends with an unmount record
	Head       logbuf.LSN           // where the next record would go
	Replayed   int                  // transactions a mount would replay
	Dropped    int                  // transactions without a COMMIT
	ReplayErr  error                // replay onto the checkpoint failed
	Model      *meta.Model          // the metadata after replay
	Problems   []string             // inconsistencies found in the replayed metadata
	Mounted    bool                 // another process holds the store: what was read may be moving
	// Old, with InspectAll: the records still in the log file behind the
	// tail, oldest first (see oldRecords); a bad one has Err set.
	Old []xlog.ScannedRecord
	// MissingData lists the regular files whose data file lacks bytes
	// that were durable (datafiles.go): a mount refuses them. DataErr:
	// the data files could not be read.
	MissingData []MissingData
	DataErr     error

	st store.StoreFS // where the store was read, for Repair
}

// Inspect reads a store's superblock, checkpoint and log and replays the
// log onto a copy of the checkpoint's metadata in memory.
func Inspect(dir string) (*LogReport, error) { return InspectStore(store.OSFS(), dir) }

// InspectAll is Inspect that also reads the records behind the tail
// (LogReport.Old), as xfs_logprint dumps the whole log.
func InspectAll(dir string) (*LogReport, error) { return inspect(store.OSFS(), dir, true) }

// InspectStore is Inspect of a store on st.
func InspectStore(st store.StoreFS, dir string) (*LogReport, error) { return inspect(st, dir, false) }

func inspect(st store.StoreFS, dir string, all bool) (*LogReport, error) {
	sb, err := store.ReadSuperblock(st, dir)
	if err != nil {
		return nil, err
	}
	rep := &LogReport{Superblock: sb, st: st}
	if l, err := st.Lock(filepath.Join(dir, store.SuperblockName), false); err == nil {
		defer l.Close()
	} else {
		rep.Mounted = true
	}
	ck, err := store.ReadCheckpoint(st, dir)
	if err != nil {
		return rep, err
	}
	rep.Checkpoint = ck
	img, err := readLog(st, dir, sb)
	if err != nil {
		return rep, err
	}
	s := xlog.ScanLog(img, WindowOf(ck, sb.Coverage))
	rep.Records, rep.Later, rep.Clean, rep.Head = s.Records, s.Later, s.Clean, s.Head.LSN()
	if s.Kind != xlog.ScanEnd {
		rep.Bad = s.Stop
	}
	rep.Torn = s.Kind == xlog.ScanTorn
	rep.Corrupt = s.Corruption()
	rep.AtStake, rep.Unread, rep.InFlight, rep.LogBufs = s.AtStake, s.Unread, s.InFlight, xlog.InFlightAllowance(WindowOf(ck, sb.Coverage))
	if all {
		rep.Old = xlog.OldRecords(img, s)
	}
	m := ck.Model.Clone()
	r, floors, err := replayModel(s, ck, m)
	rep.Replayed, rep.Dropped, rep.ReplayErr = r.Transactions, r.Dropped, err
	m.DropOrphans()
	rep.Model = m
	rep.Problems = m.Check()
	if err == nil {
		dataDir := filepath.Join(dir, store.DataDirName)
		sizes, err := datafile.Sizes(st, dataDir)
		if err != nil {
			rep.DataErr = fmt.Errorf("%s: %w", dataDir, err)
		} else {
			rep.MissingData = floors.missing(m, sizes, func(ino meta.Ino) string {
				return filepath.Join(dataDir, strconv.FormatUint(uint64(ino), 10))
			})
		}
	}
	return rep, nil
}

// Stake is what cutting the log at Bad drops: the count check, check
// --repair and the mount's refusal all give.
func (r *LogReport) Stake() xlog.Stake { return xlog.Stake{Txns: r.AtStake, Unread: r.Unread} }

// WindowOf is what walking the log needs of ck, for a store whose records
// are checksummed under cov (its superblock's Coverage).
func WindowOf(ck *store.Checkpoint, cov logbuf.Coverage) xlog.Window {
	return xlog.Window{Tail: ck.TailLSN, Coverage: cov, LogBufs: ck.LogBufs, LogBSize: ck.LogBSize, Describe: describeRegion}
}

// describeRegion names what a transaction's region does, "" if it does not
// decode.
func describeRegion(region []byte) string {
	op, err := meta.DecodeOp(region)
	if err != nil {
		return ""
	}
	return op.String()
}

func readLog(st store.StoreFS, dir string, sb *store.Superblock) ([]byte, error) {
	path := filepath.Join(dir, store.LogName)
	f, err := st.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img := make([]byte, sb.LogSize)
	n, err := f.ReadAt(img, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if int64(n) != sb.LogSize {
		return nil, fmt.Errorf("%s: %d bytes, superblock says %d", path, n, sb.LogSize)
	}
	return img, nil
}

// Sound reports whether a mount would succeed and lose nothing that was
// acknowledged: no corruption, replay works, the metadata is consistent,
// every data file holds what was durable. A torn tail is sound: those
// records were never acknowledged.
func (r *LogReport) Sound() bool {
	return !r.Mounted && r.Corrupt == nil && r.ReplayErr == nil && len(r.Problems) == 0 &&
		len(r.MissingData) == 0 && r.DataErr == nil
}

// Repair cuts the log at the bad record: it zeroes the bad record and
// everything after it up to the tail, so the log ends cleanly there. The
// transactions in the records after the cut are lost.
func Repair(dir string, r *LogReport) error {
	if r.Bad == nil {
		return nil
	}
	st := r.st
	if st == nil {
		st = store.OSFS()
	}
	lock, err := store.Lock(st, dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	dev, err := OpenLogDevice(st, filepath.Join(dir, store.LogName))
	if err != nil {
		return err
	}
	defer dev.Close()
	// The walk numbered blocks from the tail's: everything from the cut
	// round to the tail is not live.
	logBlocks := uint64(r.Superblock.LogSize / logbuf.BBSize)
	n := logBlocks - (r.Bad.At.Abs - uint64(r.Checkpoint.TailLSN.Block()))
	return xlog.ZeroAfterHead(dev, r.Bad.At, n)
}

// OpenLogDevice opens a store's log file on st as the log device.
func OpenLogDevice(st store.StoreFS, path string) (xlog.Device, error) {
	f, err := st.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return xlog.NewFileDevice(f)
}
