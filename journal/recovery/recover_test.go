package recovery_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/journal"
	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
)

// TestRecoverCleanLog: after a clean unmount the log is the unmount record
// alone; Recover reports it clean, replays nothing, leaves the model as
// the checkpoint had it and writes nothing to the log or the data files.
func TestRecoverCleanLog(t *testing.T) {
	dir := newStore(t)
	fs := mountStore(t, dir, journal.Options{})
	c := &crash{ino: map[string]meta.Ino{}}
	filesWork(3)(fs, c)
	check(t, fs.Close())
	before := snapshot(t, dir)
	s, ck, _ := scanStore(t, dir)
	want := ck.Model.Digest()

	r, m, err := recoverStore(t, dir, false, nil)
	check(t, err)
	if !r.Clean || r.Records != 1 || r.Transactions != 0 || r.Dropped != 0 || r.TornLSN != 0 || r.Orphans != 0 {
		t.Errorf("clean log: report %+v, want clean, 1 record (the unmount record), nothing replayed", r.Report)
	}
	if r.LastTID != ck.LastTID {
		t.Errorf("clean log: last TID %#x, the checkpoint's is %#x", r.LastTID, ck.LastTID)
	}
	if r.Head.LSN() != s.Head.LSN() {
		t.Errorf("clean log: new writer's head %v, want %v, after the unmount record", r.Head.LSN(), s.Head.LSN())
	}
	if got := m.Checkpoint.Model.Digest(); got != want {
		t.Error("clean log: the model changed")
	}
	if len(*m.warnings) != 0 {
		t.Errorf("clean log: warnings %q", *m.warnings)
	}
	sameFiles(t, "recovering a clean log", dir, before)
}

// TestRecoverReplaysCommitted: after a crash Recover replays exactly the
// transactions committed since the mount, and the recovered model is the
// one the journal had; in data-journal mode the data files, which catch up
// only at checkpoints, get the logged bytes back.
func TestRecoverReplaysCommitted(t *testing.T) {
	for _, jm := range []journal.JournalMode{journal.JournalMeta, journal.JournalData} {
		t.Run(jm.String(), func(t *testing.T) {
			logData := jm == journal.JournalData
			c := crashAfter(t, journal.Options{Journal: jm}, filesWork(4))
			s, ck, _ := scanStore(t, c.dir)
			if logData {
				// The data files are synced only at checkpoints: the
				// crash lost their write-back, the log has the bytes.
				for i := range 4 {
					check(t, os.Truncate(filepath.Join(c.dir, store.DataDirName, fmt.Sprint(c.ino[fmt.Sprintf("f%d", i)])), 0))
				}
			}
			r, m, err := recoverStore(t, c.dir, logData, nil)
			check(t, err)
			if r.Clean || r.Transactions != c.txns || r.Dropped != 0 || r.TornLSN != 0 || r.Records != len(s.Records) {
				t.Errorf("report %+v, want %d transactions replayed from %d records, none dropped", r.Report, c.txns, len(s.Records))
			}
			if !xlog.NewerTID(r.LastTID, ck.LastTID) {
				t.Errorf("last TID %#x is not newer than the checkpoint's %#x", r.LastTID, ck.LastTID)
			}
			got := m.Checkpoint.Model
			if got.Digest() != c.want.Digest() {
				t.Errorf("the recovered model differs from the journal's at the crash")
			}
			for i := range 4 {
				ino := c.ino[fmt.Sprintf("f%d", i)]
				if in := got.Inodes[ino]; in == nil || in.Size != int64(len(pattern(i))) {
					t.Errorf("f%d (inode %d): recovered %+v, want size %d", i, ino, in, len(pattern(i)))
				}
				if b := dataFile(t, c.dir, ino); !bytes.Equal(b, pattern(i)) {
					t.Errorf("f%d's data file: %d bytes, want its %d written bytes", i, len(b), len(pattern(i)))
				}
			}
			if v := got.Inodes[c.ino["d"]]; v == nil || string(v.Xattrs["user.k"]) != "v" {
				t.Errorf("directory d: recovered %+v, want its xattr", v)
			}
			if len(*m.warnings) != 0 {
				t.Errorf("warnings %q", *m.warnings)
			}
		})
	}
}

// TestRecoverNoRecovery: with an Overlay (a NoRecovery mount) Recover
// writes nothing to the store, the log included, yet reports what a
// recovering mount reports, recovers the same model, and hands the overlay
// the writes replay would have made to the data files.
func TestRecoverNoRecovery(t *testing.T) {
	c := crashAfter(t, journal.Options{Journal: journal.JournalData}, filesWork(3))
	for i := range 3 { // their write-back lost: replay would write them
		check(t, os.Truncate(filepath.Join(c.dir, store.DataDirName, fmt.Sprint(c.ino[fmt.Sprintf("f%d", i)])), 0))
	}
	twin := copyStore(t, c.dir)
	before := snapshot(t, c.dir)
	o := datafile.Overlay{}
	r, m, err := recoverStore(t, c.dir, true, o)
	check(t, err)
	sameFiles(t, "a NoRecovery recovery", c.dir, before)

	r2, m2, err := recoverStore(t, twin, true, nil)
	check(t, err)
	if !reflect.DeepEqual(r.Report, r2.Report) || r.Head != r2.Head || r.LastTID != r2.LastTID {
		t.Errorf("NoRecovery reports %+v (head %v, last TID %#x), a recovering mount %+v (head %v, last TID %#x)",
			r.Report, r.Head, r.LastTID, r2.Report, r2.Head, r2.LastTID)
	}
	if r.Transactions != c.txns {
		t.Errorf("NoRecovery replayed %d transactions, want %d", r.Transactions, c.txns)
	}
	if m.Checkpoint.Model.Digest() != m2.Checkpoint.Model.Digest() {
		t.Error("NoRecovery recovered another model than a recovering mount")
	}
	if len(o) != 3 {
		t.Errorf("the overlay holds writes to %d inodes, want the 3 written files", len(o))
	}
	for i := range 3 {
		ops := o[c.ino[fmt.Sprintf("f%d", i)]]
		if len(ops) != 1 || ops[0].Type != meta.OpWrite || !bytes.Equal(ops[0].Data, pattern(i)) {
			t.Errorf("f%d: overlay holds %v, want its one logged write", i, ops)
		}
	}
}

// TestRecoverTornLastRecord: a block of the last record that does not
// carry its cycle (never written: the fresh log's zeros) makes it torn. It
// is cut, with one warning naming its LSN and offset, its transactions are
// not replayed, and its blocks, past the new head, are cleared.
func TestRecoverTornLastRecord(t *testing.T) {
	c := crashAfter(t, journal.Options{}, fsyncWork(5))
	s, _, _ := scanStore(t, c.dir)
	last := s.Records[len(s.Records)-1]
	if last.Header.RecordBlocks() < 2 {
		t.Fatalf("the last record has %d blocks; the test tears its second", last.Header.RecordBlocks())
	}
	lost := txnsIn(last)
	if lost == 0 {
		t.Fatal("the last record commits nothing")
	}
	patchLog(t, c.dir, last.Offset+512, make([]byte, 512))

	r, m, err := recoverStore(t, c.dir, false, nil)
	check(t, err)
	if r.TornLSN != last.LSN() || r.DroppedLater != 0 || r.Transactions != c.txns-lost || r.Records != len(s.Records)-1 {
		t.Errorf("report %+v, want the log cut at %v after %d transactions", r.Report, last.LSN(), c.txns-lost)
	}
	if r.Head.LSN() != last.LSN() {
		t.Errorf("the new writer starts at %v, want the torn record's %v", r.Head.LSN(), last.LSN())
	}
	if w := *m.warnings; len(w) != 1 || !strings.Contains(w[0], "torn write") || !strings.Contains(w[0], last.LSN().String()) ||
		!strings.Contains(w[0], fmt.Sprintf("offset %d", last.Offset)) {
		t.Errorf("warnings %q, want one naming the torn write at %v (offset %d)", w, last.LSN(), last.Offset)
	}
	if _, ok := m.Checkpoint.Model.Inodes[c.ino["f4"]]; ok {
		t.Error("the torn record's create was replayed")
	}
	if _, ok := m.Checkpoint.Model.Inodes[c.ino["f3"]]; !ok {
		t.Error("the record before the torn one was not replayed")
	}
	img, err := os.ReadFile(filepath.Join(c.dir, store.LogName))
	check(t, err)
	if rec := img[last.Offset : last.Offset+int64(last.Header.RecordBytes())]; !bytes.Equal(rec, make([]byte, len(rec))) {
		t.Error("the torn record's blocks past the head were not cleared")
	}
}

// TestRecoverTornNoRecovery: the same torn tail under NoRecovery is cut in
// memory alike, and the log keeps the torn record's blocks.
func TestRecoverTornNoRecovery(t *testing.T) {
	c := crashAfter(t, journal.Options{}, fsyncWork(3))
	s, _, _ := scanStore(t, c.dir)
	last := s.Records[len(s.Records)-1]
	patchLog(t, c.dir, last.Offset+512, make([]byte, 512))
	before := snapshot(t, c.dir)
	r, m, err := recoverStore(t, c.dir, false, datafile.Overlay{})
	check(t, err)
	if r.TornLSN != last.LSN() || r.Transactions != c.txns-txnsIn(last) {
		t.Errorf("report %+v, want the log cut at %v", r.Report, last.LSN())
	}
	if len(*m.warnings) != 1 {
		t.Errorf("warnings %q, want the torn write's", *m.warnings)
	}
	sameFiles(t, "a NoRecovery recovery of a torn log", c.dir, before)
}

// TestRecoverCorruptRecord: a flipped bit in a record that later records
// prove durable is corruption: Recover refuses with a *CorruptionError
// naming the record's LSN and log offset, and changes nothing.
func TestRecoverCorruptRecord(t *testing.T) {
	c := crashAfter(t, journal.Options{}, fsyncWork(5))
	s, _, _ := scanStore(t, c.dir)
	victim := s.Records[2]
	flipLogBit(t, c.dir, victim.Offset+700, 0x10)
	before := snapshot(t, c.dir)

	r, _, err := recoverStore(t, c.dir, false, nil)
	var ce *xlog.CorruptionError
	if !errors.As(err, &ce) {
		t.Fatalf("Recover of a corrupt log: %v (%+v), want a *CorruptionError", err, r)
	}
	if r != nil {
		t.Errorf("Recover refused, yet returned %+v", r)
	}
	if ce.LSN != victim.LSN() || ce.Offset != victim.Offset || ce.Stored != victim.Stored || ce.Computed == ce.Stored {
		t.Errorf("corruption error %+v, want the record at %v (offset %d, CRC %#x)", ce, victim.LSN(), victim.Offset, victim.Stored)
	}
	// The transactions of the records after it are at stake, and its own,
	// which its damaged bytes cannot name.
	stake := 0
	for _, rec := range s.Records[3:] {
		stake += txnsIn(rec)
	}
	if len(ce.AtStake) != stake || len(ce.Unread) != 1 || ce.Unread[0].LSN != victim.LSN() || ce.Unread[0].Ops != len(victim.Record.Ops) {
		t.Errorf("%d transactions at stake, unread %v; want %d, and the record at %v with its %d ops", len(ce.AtStake), ce.Unread, stake, victim.LSN(), len(victim.Record.Ops))
	}
	for _, want := range []string{victim.LSN().String(), fmt.Sprintf("offset %d", victim.Offset)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	sameFiles(t, "refusing a corrupt log", c.dir, before)
}

// TestRecoverOrphan: a file unlinked while open when the log ended is
// freed by recovery, its data file removed.
func TestRecoverOrphan(t *testing.T) {
	c := crashAfter(t, journal.Options{}, func(fs *journal.FS, c *crash) int {
		a, err := fs.Create(meta.RootIno, "o", meta.ModeReg|0o644, 0, 0, 0, "")
		check(t, err)
		c.ino["o"] = a.Ino
		_, err = fs.Write(a.Ino, []byte("orphan"), 0)
		check(t, err)
		check(t, fs.Open(a.Ino))
		check(t, fs.Unlink(meta.RootIno, "o"))
		return 3
	})
	path := filepath.Join(c.dir, store.DataDirName, fmt.Sprint(c.ino["o"]))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the open unlinked file's data file is not in the crashed store: %v", err)
	}
	rep, err := recovery.Inspect(c.dir)
	check(t, err)
	r, m, err := recoverStore(t, c.dir, false, nil)
	check(t, err)
	inspectMatches(t, "orphan", rep, r, m)
	if r.Orphans != 1 || r.Transactions != c.txns {
		t.Errorf("report %+v, want %d transactions and 1 orphan freed", r.Report, c.txns)
	}
	if _, ok := m.Checkpoint.Model.Inodes[c.ino["o"]]; ok {
		t.Error("the orphan is still in the model")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the orphan's data file: %v, want it removed", err)
	}
	if p := m.Checkpoint.Model.Check(); len(p) != 0 {
		t.Errorf("recovered model: %q", p)
	}
}

// TestRecoverSizeFollows: a file open for writing in passthrough when the
// log ended, whose data file grew by writes the journal never saw, takes
// the data file's size; the mark is cleared, and the report and a warning
// say so.
func TestRecoverSizeFollows(t *testing.T) {
	c := crashAfter(t, journal.Options{}, func(fs *journal.FS, c *crash) int {
		a, err := fs.Create(meta.RootIno, "p", meta.ModeReg|0o644, 0, 0, 0, "")
		check(t, err)
		c.ino["p"] = a.Ino
		_, err = fs.Write(a.Ino, []byte("hello"), 0)
		check(t, err)
		check(t, fs.Fsync(a.Ino, false))
		f, err := fs.OpenPassthrough(a.Ino, true, false)
		check(t, err)
		_, err = f.WriteAt([]byte(", world"), 5) // the kernel's write, straight to the data file
		check(t, err)
		check(t, f.Datasync())
		return 3 // create, write, the size-follows mark
	})
	ino := c.ino["p"]
	r, m, err := recoverStore(t, c.dir, false, nil)
	check(t, err)
	if r.Transactions != c.txns {
		t.Errorf("%d transactions replayed, want %d", r.Transactions, c.txns)
	}
	if len(r.Followed) != 1 || r.Followed[0].Ino != ino || r.Followed[0].Logged != 5 || r.Followed[0].Size != 12 {
		t.Fatalf("followed %+v, want inode %d grown from the logged 5 bytes to the data file's 12", r.Followed, ino)
	}
	in := m.Checkpoint.Model.Inodes[ino]
	if in.Size != 12 || in.SizeFollows {
		t.Errorf("inode %d after recovery: size %d, marked %v; want 12, unmarked", ino, in.Size, in.SizeFollows)
	}
	if in.Mtime < r.Followed[0].Mtime {
		t.Errorf("mtime %d went back from the logged %d", in.Mtime, r.Followed[0].Mtime)
	}
	if w := *m.warnings; len(w) != 1 || !strings.Contains(w[0], fmt.Sprintf("inode %d", ino)) {
		t.Errorf("warnings %q, want one naming inode %d", w, ino)
	}
	if b := dataFile(t, c.dir, ino); string(b) != "hello, world" {
		t.Errorf("data file %q", b)
	}
}

// TestRecoverImmediateWrites: in metadata-journal mode with immediate
// writes, replay writes the logged bytes of a small write whose data file
// lost them, and does not write back logged bytes a later write (to the
// data file only) superseded. Under NoRecovery the overlay gets exactly
// what would have been written.
func TestRecoverImmediateWrites(t *testing.T) {
	work := func(fs *journal.FS, c *crash) int {
		f, err := fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, "")
		check(t, err)
		g, err := fs.Create(meta.RootIno, "g", meta.ModeReg|0o644, 0, 0, 0, "")
		check(t, err)
		c.ino["f"], c.ino["g"] = f.Ino, g.Ino
		_, err = fs.Write(f.Ino, bytes.Repeat([]byte{'A'}, 400), 0) // logged with its bytes
		check(t, err)
		_, err = fs.Write(f.Ino, bytes.Repeat([]byte{'B'}, 8192), 0) // too big: the data file only
		check(t, err)
		check(t, fs.Fsync(f.Ino, false))
		_, err = fs.Write(g.Ino, []byte("hello"), 0) // logged with its bytes
		check(t, err)
		return 5
	}
	c := crashAfter(t, journal.Options{ImmediateWrite: 1024}, work)
	// g's write-back never happened; the log has its bytes.
	check(t, os.Truncate(filepath.Join(c.dir, store.DataDirName, fmt.Sprint(c.ino["g"])), 0))
	twin := copyStore(t, c.dir)

	o := datafile.Overlay{}
	before := snapshot(t, twin)
	r, _, err := recoverStore(t, twin, false, o)
	check(t, err)
	sameFiles(t, "NoRecovery", twin, before)
	if r.Transactions != c.txns {
		t.Errorf("NoRecovery: %d transactions, want %d", r.Transactions, c.txns)
	}
	if ops := o[c.ino["g"]]; len(ops) != 1 || string(ops[0].Data) != "hello" || ops[0].Off != 0 {
		t.Errorf("NoRecovery: overlay of g %v, want its logged write", ops)
	}
	if ops := o[c.ino["f"]]; len(ops) != 0 {
		t.Errorf("NoRecovery: overlay of f %v, want none: the later write superseded the logged bytes", ops)
	}

	r, _, err = recoverStore(t, c.dir, false, nil)
	check(t, err)
	if r.Transactions != c.txns {
		t.Errorf("%d transactions, want %d", r.Transactions, c.txns)
	}
	if b := dataFile(t, c.dir, c.ino["g"]); string(b) != "hello" {
		t.Errorf("g's data file %q, want the logged bytes back", b)
	}
	if b := dataFile(t, c.dir, c.ino["f"]); !bytes.Equal(b, bytes.Repeat([]byte{'B'}, 8192)) {
		t.Errorf("f's data file starts %q, want the later write's bytes only", b[:min(len(b), 16)])
	}
}

// TestRecoverTornSplitTransaction: a data-journal write too big for one
// record starts in one and commits in the next; when that next one is
// torn, the log is cut there and the write, its COMMIT lost, is dropped
// as incomplete: counted, warned of, not replayed.
func TestRecoverTornSplitTransaction(t *testing.T) {
	const size = 40000 // more than a 32 KiB iclog holds
	c := crashAfter(t, journal.Options{Journal: journal.JournalData}, func(fs *journal.FS, c *crash) int {
		a, err := fs.Create(meta.RootIno, "big", meta.ModeReg|0o644, 0, 0, 0, "")
		check(t, err)
		c.ino["big"] = a.Ino
		check(t, fs.Fsync(a.Ino, false))
		_, err = fs.Write(a.Ino, bytes.Repeat([]byte{'z'}, size), 0)
		check(t, err)
		return 2
	})
	s, _, _ := scanStore(t, c.dir)
	last := s.Records[len(s.Records)-1]
	if len(s.Records) < 3 || txnsIn(last) != 1 || txnsIn(s.Records[len(s.Records)-2]) != 0 || last.Header.RecordBlocks() < 2 {
		t.Fatalf("want the write to start in one record and commit in the last: %d records, the last commits %d", len(s.Records), txnsIn(last))
	}
	patchLog(t, c.dir, last.Offset+512, make([]byte, 512))
	r, m, err := recoverStore(t, c.dir, true, nil)
	check(t, err)
	if r.TornLSN != last.LSN() || r.Dropped != 1 || r.Transactions != c.txns-1 {
		t.Errorf("report %+v, want the log cut at %v, the write dropped, %d transactions", r.Report, last.LSN(), c.txns-1)
	}
	if in := m.Checkpoint.Model.Inodes[c.ino["big"]]; in == nil || in.Size != 0 {
		t.Errorf("the file after recovery: %+v, want it created, empty", in)
	}
	if w := *m.warnings; len(w) != 1 || !strings.Contains(w[0], "1 incomplete transactions not replayed") {
		t.Errorf("warnings %q, want the torn write's, counting the incomplete transaction", w)
	}
}

// TestRecoverRestamped: a record whose cycle word is damaged (here the
// header's magic, which the cycle stamp overwrites) but whose CRC verifies
// with it restored is valid: replayed, counted and warned of by LSN.
func TestRecoverRestamped(t *testing.T) {
	c := crashAfter(t, journal.Options{}, fsyncWork(3))
	s, _, _ := scanStore(t, c.dir)
	last := s.Records[len(s.Records)-1]
	flipLogBit(t, c.dir, last.Offset+1, 0x02)
	r, m, err := recoverStore(t, c.dir, false, nil)
	check(t, err)
	if r.Restamped != 1 || r.Transactions != c.txns || r.TornLSN != 0 {
		t.Errorf("report %+v, want all %d transactions replayed, 1 record restamped", r.Report, c.txns)
	}
	if w := *m.warnings; len(w) != 1 || !strings.Contains(w[0], last.LSN().String()) || !strings.Contains(w[0], "cycle") {
		t.Errorf("warnings %q, want one naming the record at %v", w, last.LSN())
	}
	if m.Checkpoint.Model.Digest() != c.want.Digest() {
		t.Error("the recovered model differs from the journal's at the crash")
	}
}

// failingDevice fails reads, or writes and syncs, of the log.
type failingDevice struct {
	xlog.Device
	read, write error
}

func (d failingDevice) ReadAt(p []byte, off int64) (int, error) {
	if d.read != nil {
		return 0, d.read
	}
	return d.Device.ReadAt(p, off)
}

func (d failingDevice) WriteAt(p []byte, off int64) (int, error) {
	if d.write != nil {
		return 0, d.write
	}
	return d.Device.WriteAt(p, off)
}

func (d failingDevice) Sync() error {
	if d.write != nil {
		return d.write
	}
	return d.Device.Sync()
}

// TestRecoverLogErrors: a log that cannot be read fails Recover with an
// error saying what was read where; one whose stale blocks past the head
// cannot be cleared fails it too, since the new writer must not start
// over them.
func TestRecoverLogErrors(t *testing.T) {
	c := crashAfter(t, journal.Options{}, fsyncWork(2))
	eio := errors.New("device gone")
	m := newMount(t, c.dir, false, nil)
	m.Log = failingDevice{Device: m.dev, read: eio}
	r, err := recovery.Recover(m.Mount)
	if !errors.Is(err, eio) || r != nil || !strings.Contains(err.Error(), fmt.Sprintf("reading the log (%d bytes at offset 0)", testLogSize)) {
		t.Errorf("Recover of an unreadable log: %+v, %v; want the read's error, wrapped with what was read", r, err)
	}

	m = newMount(t, c.dir, false, nil)
	m.Log = failingDevice{Device: m.dev, write: eio}
	if r, err := recovery.Recover(m.Mount); !errors.Is(err, eio) || r != nil {
		t.Errorf("Recover unable to clear the blocks past the head: %+v, %v; want the write's error", r, err)
	}
	// With the device working again the store recovers whole: the failed
	// attempts left it as it was for that.
	m = newMount(t, c.dir, false, nil)
	if r, err := recovery.Recover(m.Mount); err != nil || r.Transactions != c.txns || m.Checkpoint.Model.Digest() != c.want.Digest() {
		t.Errorf("Recover after the failures: %+v, %v; want all %d transactions replayed", r, err, c.txns)
	}
}
