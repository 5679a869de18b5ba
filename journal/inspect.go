package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/xlogfs/xlogfs/logbuf"
)

// LogReport is what a store holds, read without changing anything: for
// xlogfs logprint and xlogfs check.
type LogReport struct {
	Superblock *Superblock
	Checkpoint *Checkpoint
	Records    []ScannedRecord // valid records from the tail, in log order
	Bad        *ScannedRecord  // the first bad record, where the walk stopped
	Torn       bool            // Bad is a torn write: mounting cuts the log there
	Corrupt    error           // *CorruptionError: mounting refuses
	Later      []ScannedRecord // valid records newer than Bad
	AtStake    []StakedTxn     // committed transactions in Bad and Later: what cutting the log drops
	InFlight   int             // records from Bad to the newest of Later, at least
	LogBufs    int             // how many records can be in flight at once
	Clean      bool            // the log ends with an unmount record
	Head       logbuf.LSN      // where the next record would go
	Replayed   int             // transactions a mount would replay
	Dropped    int             // transactions without a COMMIT
	ReplayErr  error           // replay onto the checkpoint failed
	Model      *Model          // the metadata after replay
	Problems   []string        // inconsistencies found in the replayed metadata
	Mounted    bool            // another process holds the store: what was read may be moving
	// Old, with InspectAll: the records still in the log file behind the
	// tail, oldest first (see oldRecords); a bad one has Err set.
	Old []ScannedRecord

	st StoreFS // where the store was read, for Repair
}

// Inspect reads a store's superblock, checkpoint and log and replays the
// log onto a copy of the checkpoint's metadata in memory.
func Inspect(dir string) (*LogReport, error) { return InspectStore(OSFS(), dir) }

// InspectAll is Inspect that also reads the records behind the tail
// (LogReport.Old), as xfs_logprint dumps the whole log.
func InspectAll(dir string) (*LogReport, error) { return inspect(OSFS(), dir, true) }

// InspectStore is Inspect of a store on st.
func InspectStore(st StoreFS, dir string) (*LogReport, error) { return inspect(st, dir, false) }

func inspect(st StoreFS, dir string, all bool) (*LogReport, error) {
	sb, err := readSuperblock(st, dir)
	if err != nil {
		return nil, err
	}
	rep := &LogReport{Superblock: sb, st: st}
	if l, err := st.Lock(filepath.Join(dir, superblockName), false); err == nil {
		defer l.Close()
	} else {
		rep.Mounted = true
	}
	ck, err := readCheckpoint(st, dir)
	if err != nil {
		return rep, err
	}
	rep.Checkpoint = ck
	img, err := readLog(st, dir, sb)
	if err != nil {
		return rep, err
	}
	s := scanLog(img, windowOf(ck))
	rep.Records, rep.Later, rep.Clean, rep.Head = s.records, s.later, s.clean, s.head.lsn()
	if s.kind != scanEnd {
		rep.Bad = s.stop
	}
	rep.Torn = s.kind == scanTorn
	rep.Corrupt = s.corruption()
	rep.AtStake, rep.InFlight, rep.LogBufs = s.atStake, s.inFlight, inFlightAllowance(windowOf(ck))
	if all {
		rep.Old = oldRecords(img, s)
	}
	m := ck.Model.Clone()
	r, err := replay(s, ck.LastTID, func(op *Op) error { return m.Apply(op) })
	rep.Replayed, rep.Dropped, rep.ReplayErr = r.transactions, r.dropped, err
	m.DropOrphans()
	rep.Model = m
	rep.Problems = m.Check()
	return rep, nil
}

// windowOf is what walking the log needs of ck.
func windowOf(ck *Checkpoint) scanWindow {
	return scanWindow{tail: ck.TailLSN, logBufs: ck.LogBufs, logBSize: ck.LogBSize, describe: describeRegion}
}

// describeRegion names what a transaction's region does, "" if it does not
// decode.
func describeRegion(region []byte) string {
	op, err := DecodeOp(region)
	if err != nil {
		return ""
	}
	return op.String()
}

func readLog(st StoreFS, dir string, sb *Superblock) ([]byte, error) {
	path := filepath.Join(dir, logName)
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
// acknowledged: no corruption, replay works, the metadata is consistent.
// A torn tail is sound: those records were never acknowledged.
func (r *LogReport) Sound() bool {
	return !r.Mounted && r.Corrupt == nil && r.ReplayErr == nil && len(r.Problems) == 0
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
		st = OSFS()
	}
	lock, err := lockStore(st, dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	dev, err := openFileDevice(st, filepath.Join(dir, logName))
	if err != nil {
		return err
	}
	defer dev.Close()
	// The walk numbered blocks from the tail's: everything from the cut
	// round to the tail is not live.
	logBlocks := uint64(r.Superblock.LogSize / logbuf.BBSize)
	n := logBlocks - (r.Bad.at.abs - uint64(r.Checkpoint.TailLSN.Block()))
	return zeroAfterHead(dev, r.Bad.at, n)
}

// Check returns the inconsistencies of a model: entries naming missing
// inodes, wrong link counts, directories whose ".." is wrong.
func (m *Model) Check() []string {
	var out []string
	links := map[Ino]uint32{}
	subdirs := map[Ino]uint32{}
	for _, in := range m.Inodes {
		for name, e := range in.Entries {
			c := m.Inodes[e]
			if c == nil {
				out = append(out, fmt.Sprintf("directory %d: entry %q names missing inode %d", in.Ino, name, e))
				continue
			}
			links[e]++
			if c.IsDir() {
				subdirs[in.Ino]++
				if c.Parent != in.Ino {
					out = append(out, fmt.Sprintf("directory %d (%q in %d) has parent %d", e, name, in.Ino, c.Parent))
				}
			}
		}
	}
	for ino, in := range m.Inodes {
		switch {
		case in.IsDir():
			if want := 2 + subdirs[ino]; in.Nlink != want {
				out = append(out, fmt.Sprintf("directory %d: nlink %d, want %d", ino, in.Nlink, want))
			}
			if ino != RootIno && links[ino] != 1 {
				out = append(out, fmt.Sprintf("directory %d has %d names", ino, links[ino]))
			}
		case in.Nlink != links[ino]:
			out = append(out, fmt.Sprintf("inode %d: nlink %d, but %d names", ino, in.Nlink, links[ino]))
		}
	}
	return out
}

// oldRecords returns the records behind the tail that the log file still
// holds, oldest first: what checkpoints have made history but no record
// has overwritten yet. The log is written in a circle: the head's cycle c
// is stamped on every block before the head, the previous pass's c-1 on
// every block from the head to the end of the log. So the free part of the
// log, from the head round to the tail, holds records of c-1 from the head
// to the end, then records of c from block 0 to the tail (when the live
// part does not wrap), and a record found there belongs to the pass its
// position says. The walk takes, at each block, a record whose header
// names that block and the cycle the block must carry, and goes on after
// it; any other block (part of a record the head has overwritten the start
// of, a wrap gap, zeros) is stepped over. So it stops only where the cycle
// stops matching: at the tail, or at the head's blocks of the pass before.
// A record whose header is there but whose CRC fails is returned with Err.
func oldRecords(img []byte, s *logScan) []ScannedRecord {
	logBlocks := uint64(len(img) / logbuf.BBSize)
	head := s.head
	cur, prev := head.cycle, prevCycle(head.cycle)
	var out []ScannedRecord
	for d := uint64(0); d < logBlocks-s.live; {
		b := (uint64(head.block) + d) % logBlocks
		want := cur
		if b >= uint64(head.block) {
			want = prev
		}
		off := b * logbuf.BBSize
		lsn := logbuf.MakeLSN(want, uint32(b))
		if want == 0 || binary.BigEndian.Uint32(img[off:]) != logbuf.HeaderMagic {
			d++
			continue
		}
		h, err := logbuf.ParseHeader(img[off:])
		if err != nil || h.LSN != lsn || h.Cycle != want || off+uint64(h.RecordBytes()) > uint64(len(img)) {
			d++
			continue
		}
		r := ScannedRecord{at: pos{cycle: want, block: uint32(b)}, Offset: int64(off), Header: h, Stored: h.CRC}
		buf := bytes.Clone(img[off : off+uint64(h.RecordBytes())])
		_, crc, err := logbuf.VerifyRecord(buf)
		r.Computed = crc
		if err == nil {
			r.Record, err = logbuf.UnpackRecord(buf, h)
		}
		if err != nil {
			r.Err = err
			out = append(out, r)
			d++
			continue
		}
		out = append(out, r)
		d += uint64(h.RecordBlocks())
	}
	return out
}

// prevCycle is the cycle before c, as logbuf.NextCycle counts; 0 for the
// first pass, which had none before it.
func prevCycle(c uint32) uint32 {
	if c <= 1 {
		return 0
	}
	c--
	if c == logbuf.HeaderMagic {
		c--
	}
	return c
}
