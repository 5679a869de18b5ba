package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// crashStore is a freshly made store whose log lives on a CrashDevice.
func crashStore(t *testing.T, logSize int64, logbsize int) (string, *testfs.CrashDevice) {
	t.Helper()
	return crashStoreCov(t, logSize, logbsize, logbuf.CoverWhole)
}

// crashStoreCov is crashStore with CRC coverage cov.
func crashStoreCov(t *testing.T, logSize int64, logbsize int, cov logbuf.Coverage) (string, *testfs.CrashDevice) {
	t.Helper()
	dir := filepath.Join(fastTempDir(t), "store")
	if _, err := store.Mkfs(dir, store.MkfsOptions{LogSize: logSize, LogBSize: logbsize, Coverage: cov}); err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(filepath.Join(dir, store.LogName))
	check(t, err)
	return dir, testfs.NewCrashDevice(img)
}

// cloneStore copies a store's superblock and checkpoint into a new
// directory, for recovering an image without disturbing the original.
func cloneStore(t *testing.T, dir string) string {
	t.Helper()
	d := filepath.Join(fastTempDir(t), "store")
	check(t, os.MkdirAll(filepath.Join(d, store.DataDirName), 0o755))
	for _, f := range []string{store.SuperblockName, store.CheckpointName} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		check(t, err)
		check(t, os.WriteFile(filepath.Join(d, f), b, 0o644))
	}
	return d
}

// copyDataFiles gives the store in to data files of the sizes the store in
// from has (holes: their bytes are not the business of the tests that copy
// them); one deleted meanwhile (a checkpoint reaping a freed inode's) is
// left out.
func copyDataFiles(t *testing.T, from, to string) {
	t.Helper()
	sizes, err := datafile.Sizes(store.OSFS(), filepath.Join(from, store.DataDirName))
	check(t, err)
	for ino, size := range sizes {
		p := filepath.Join(to, store.DataDirName, strconv.FormatUint(uint64(ino), 10))
		check(t, os.WriteFile(p, nil, 0o600))
		check(t, os.Truncate(p, size))
	}
}

func recoverImage(t *testing.T, dir string, img []byte, o Options) (*FS, []string, error) {
	t.Helper()
	var warnings []string
	o.Device = testfs.NewCrashDevice(img)
	o.Logf = func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
	fs, err := Open(cloneStore(t, dir), o)
	return fs, warnings, err
}

// TestTornWriteAtEveryBoundary writes a full 256 KiB record and tears it
// at every 512-byte boundary: the blocks before the boundary new, the rest
// as they were. Each tear must be cut as a torn tail, with a warning naming
// the record's LSN, and the transaction it held must not be replayed. The
// record is written in batched mode and in inline mode (stamped as it is
// copied in), and recovered in batched mode; on a store of each CRC
// coverage.
func TestTornWriteAtEveryBoundary(t *testing.T) {
	for _, c := range []struct {
		m   cksum.Mode
		cov logbuf.Coverage
	}{{cksum.Batched, logbuf.CoverWhole}, {cksum.Inline, logbuf.CoverWhole}, {cksum.XFS, logbuf.CoverXFS}} {
		t.Run(c.m.String()+"/"+c.cov.String(), func(t *testing.T) { tornWriteAtEveryBoundary(t, c.m, c.cov) })
	}
}

func tornWriteAtEveryBoundary(t *testing.T, mode cksum.Mode, cov logbuf.Coverage) {
	dir, dev := crashStoreCov(t, 4<<20, 256<<10, cov)
	o := Options{Mode: mode, Journal: JournalData, LogBufs: 2, CheckpointInterval: time.Hour}
	o.Device = dev
	fs := mount(t, dir, o)
	f := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	must[int](t)(fs.Write(f.Ino, []byte("before"), 0))
	check(t, fs.Sync())
	before := digestOf(fs.model)
	img0 := dev.Image()
	// Fill the next record: START and most of the region in one full
	// 256 KiB record, the rest and the COMMIT in the next.
	big := bytes.Repeat([]byte{0xa5}, 256<<10)
	must[int](t)(fs.Write(f.Ino, big, 0))
	check(t, fs.Sync())
	img1 := dev.Image()
	fs.Abandon()

	ck, err := store.ReadCheckpoint(store.OSFS(), dir)
	check(t, err)
	s := xlog.ScanLog(img1, recovery.WindowOf(ck, cov))
	var full *xlog.ScannedRecord
	for i := range s.Records {
		if s.Records[i].Header.Size == 256<<10 && s.Records[i].Header.RecordBytes() == 256<<10 {
			full = &s.Records[i]
		}
	}
	if full == nil {
		t.Fatal("no full 256 KiB record was written")
	}
	blocks := full.Header.RecordBlocks()
	if blocks != 512 {
		t.Fatalf("full record has %d blocks", blocks)
	}
	for i := 1; i < blocks; i++ {
		img := bytes.Clone(img1)
		copy(img[full.Offset+int64(i)*512:full.Offset+int64(blocks)*512], img0[full.Offset+int64(i)*512:])
		fs, warnings, err := recoverImage(t, dir, img, Options{Journal: JournalData, LogBufs: 2})
		if err != nil {
			t.Fatalf("tear after block %d: recovery failed: %v", i, err)
		}
		r := fs.Recovery()
		if r.TornLSN != full.LSN() {
			t.Fatalf("tear after block %d: torn LSN %v, want %v (recovery %+v)", i, r.TornLSN, full.LSN(), r)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "torn write") || !strings.Contains(warnings[0], full.LSN().String()) {
			t.Fatalf("tear after block %d: warnings %q", i, warnings)
		}
		if got := fs.model.Digest(); got != before {
			t.Fatalf("tear after block %d: the torn transaction was (partly) replayed", i)
		}
		fs.Abandon()
	}
	// The other tear: header block old, payload new. Nothing claims to
	// be a record there, but the record after it (its rest and the
	// COMMIT, in flight too) is valid: the log is cut at the torn
	// record's position, dropping that one.
	img := bytes.Clone(img1)
	copy(img[full.Offset:full.Offset+512], img0[full.Offset:])
	fs2, warnings, err := recoverImage(t, dir, img, Options{Journal: JournalData, LogBufs: 2})
	check(t, err)
	if fs2.model.Digest() != before {
		t.Fatal("old header, new payload: state after the torn record")
	}
	if r := fs2.Recovery(); r.TornLSN != full.LSN() || r.DroppedLater != 1 {
		t.Fatalf("old header, new payload: recovery %+v, want the log cut at %v dropping the 1 record after it", r, full.LSN())
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "torn write") || !strings.Contains(warnings[0], full.LSN().String()) {
		t.Fatalf("old header, new payload: warnings %q", warnings)
	}
	fs2.Abandon()
}

// fsyncedLog makes a store and writes n records, each holding one file's
// creation and write, made durable by its own fsync, as a database or a
// mail server does. It returns the store, the log image and the records.
func fsyncedLog(t *testing.T, n int, o Options) (string, []byte, []xlog.ScannedRecord) {
	t.Helper()
	return fsyncedLogOf(t, n, o, geometry{logbuf.CoverWhole, 32 << 10})
}

// geometry is what a store's records look like: their CRC coverage and
// iclog size.
type geometry struct {
	cov      logbuf.Coverage
	logbsize int
}

// geometries are those the record-damage tests run on: whole coverage;
// xfs coverage; and xfs coverage with 64 KiB iclogs, whose short records'
// extension header is left out of the CRC.
var geometries = []geometry{{logbuf.CoverWhole, 32 << 10}, {logbuf.CoverXFS, 32 << 10}, {logbuf.CoverXFS, 64 << 10}}

func (g geometry) String() string {
	return fmt.Sprintf("%s coverage, logbsize %dk", g.cov, g.logbsize>>10)
}

// fsyncedLogOf is fsyncedLog on a store of geometry g.
func fsyncedLogOf(t *testing.T, n int, o Options, g geometry) (string, []byte, []xlog.ScannedRecord) {
	t.Helper()
	dir, dev := crashStoreCov(t, 8<<20, g.logbsize, g.cov)
	o.Device, o.CheckpointInterval = dev, time.Hour
	fs := mount(t, dir, o)
	for i := range n {
		f := must[Attr](t)(fs.Create(meta.RootIno, fmt.Sprintf("f%02d", i), meta.ModeReg|0o644, 0, 0, 0, ""))
		must[int](t)(fs.Write(f.Ino, bytes.Repeat([]byte{byte(i)}, 1000), 0))
		check(t, fs.Fsync(f.Ino, false))
	}
	img := dev.Image()
	fs.Abandon()
	ck, err := store.ReadCheckpoint(store.OSFS(), dir)
	check(t, err)
	s := xlog.ScanLog(img, recovery.WindowOf(ck, g.cov))
	if len(s.Records) != n || s.Kind != xlog.ScanEnd {
		t.Fatalf("%d fsynced files left %d records (scan ends %v), want one each", n, len(s.Records), s.Kind)
	}
	return dir, img, s.Records
}

// corruptionAt fails the test unless err refuses the log at the record r,
// naming its LSN, offset and CRCs, and the transactions at stake: atStake
// of them from the records after r that verify, and r itself as a record
// whose transactions are unknown (its payload is not trusted), so the
// count is a lower bound.
func corruptionAt(t *testing.T, what string, err error, r xlog.ScannedRecord, atStake int) *xlog.CorruptionError {
	t.Helper()
	var ce *xlog.CorruptionError
	if !errors.As(err, &ce) {
		t.Fatalf("%s: recovery gave %v, want a CorruptionError", what, err)
	}
	if ce.LSN != r.LSN() || ce.Offset != r.Offset {
		t.Fatalf("%s: corruption error %+v does not name the record at %v offset %d", what, ce, r.LSN(), r.Offset)
	}
	if len(ce.AtStake) != atStake {
		t.Errorf("%s: %d transactions at stake, want %d: %v", what, len(ce.AtStake), atStake, ce.AtStake)
	}
	if len(ce.Unread) == 0 || ce.Unread[0].LSN != r.LSN() {
		t.Errorf("%s: unread records %v, want the bad one, %v, first", what, ce.Unread, r.LSN())
	}
	stake := fmt.Sprintf("At stake: at least %d committed transaction", atStake)
	if atStake == 0 {
		stake = "At stake: an unknown number of committed transactions: those of record " + r.LSN().String()
	}
	msg := err.Error()
	for _, want := range []string{r.LSN().String(), fmt.Sprint(r.Offset), "check --repair", stake} {
		if !strings.Contains(msg, want) {
			t.Errorf("%s: error %q does not mention %q", what, msg, want)
		}
	}
	return ce
}

// TestFortyFsyncedFiles is the case of 40 files, each written and fsynced
// in turn (40 records, all acknowledged): damage to the 2nd record must
// refuse the mount, not cut 39 files' worth of log as a torn tail. A bit
// flip leaves every block carrying its cycle; a zeroed block does not, but
// the next record's durable watermark covers it.
func TestFortyFsyncedFiles(t *testing.T) {
	for _, g := range geometries {
		t.Run(g.String(), func(t *testing.T) { fortyFsyncedFiles(t, g) })
	}
}

func fortyFsyncedFiles(t *testing.T, g geometry) {
	dir, img, recs := fsyncedLogOf(t, 40, Options{}, g)
	second := recs[1]
	payload := second.Offset + int64(second.Header.HeaderBytes())
	// Each record commits a create and a write; the 2nd record's own two
	// are never read from its damaged bytes.
	for name, damage := range map[string]func(b []byte){
		"payload bit flip": func(b []byte) { b[payload+188] ^= 0x10 },
		"zeroed block":     func(b []byte) { clear(b[payload : payload+512]) },
		"zeroed header":    func(b []byte) { clear(b[second.Offset : second.Offset+512]) },
	} {
		bad := bytes.Clone(img)
		damage(bad)
		_, _, err := recoverImage(t, dir, bad, Options{})
		ce := corruptionAt(t, name, err, second, 2*38)
		if name == "payload bit flip" && (ce.Stored != second.Stored || ce.Computed == ce.Stored || ce.Computed == 0) {
			t.Errorf("%s: stored CRC %#x, computed %#x; the record's is %#x", name, ce.Stored, ce.Computed, second.Stored)
		}
		if name != "payload bit flip" && !strings.Contains(ce.Evidence, recs[2].LSN().String()+", written after it, says the log was durable up to LSN "+recs[1].LSN().String()) {
			t.Errorf("%s: evidence %q does not cite the watermark", name, ce.Evidence)
		}
	}
}

// TestLastRecordFlipIsCorruption: the last record was fsynced and every
// block of it carries its cycle, so a flipped bit in it is corruption,
// though nothing follows it. A truly torn last record (a block that still
// holds the previous cycle's contents) is still cut.
func TestLastRecordFlipIsCorruption(t *testing.T) {
	for _, g := range geometries {
		t.Run(g.String(), func(t *testing.T) { lastRecordFlip(t, g) })
	}
}

func lastRecordFlip(t *testing.T, g geometry) {
	dir, img, recs := fsyncedLogOf(t, 10, Options{}, g)
	last := recs[len(recs)-1]
	bad := bytes.Clone(img)
	bad[last.Offset+600] ^= 0x04
	_, _, err := recoverImage(t, dir, bad, Options{})
	ce := corruptionAt(t, "flip in the last record", err, last, 0)
	if !strings.Contains(ce.Evidence, "every block of it carries its cycle") {
		t.Errorf("evidence %q", ce.Evidence)
	}

	// Torn: its first payload block is what the position held a cycle
	// earlier (stamped with cycle 0 here: a fresh log), the rest new.
	torn := bytes.Clone(img)
	stale := make([]byte, 512)
	copy(torn[last.Offset+int64(last.Header.HeaderBytes()):], stale)
	fs, warnings, err := recoverImage(t, dir, torn, Options{})
	if err != nil {
		t.Fatalf("torn last record: %v", err)
	}
	if r := fs.Recovery(); r.TornLSN != last.LSN() || r.Transactions != 2*9 {
		t.Errorf("torn last record: recovery %+v, want it cut at %v after 18 transactions", r, last.LSN())
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "torn write") {
		t.Errorf("torn last record: warnings %q", warnings)
	}
	fs.Abandon()
}

// TestHeaderAndCycleWordDamage damages one field of the last record, where
// nothing after it proves it durable, and checks each is judged by what
// the bytes prove: damaged cycle words (the magic, h_cycle, a payload
// block's stamp) leave a record whose CRC verifies once they are restored,
// which is replayed; a damaged h_lsn, h_size, or h_len (grown past the
// record) is corruption.
func TestHeaderAndCycleWordDamage(t *testing.T) {
	for _, g := range geometries {
		t.Run(g.String(), func(t *testing.T) { headerAndCycleWordDamage(t, g) })
	}
}

func headerAndCycleWordDamage(t *testing.T, g geometry) {
	dir, img, recs := fsyncedLogOf(t, 5, Options{}, g)
	last := recs[len(recs)-1]
	o := last.Offset
	p := o + int64(last.Header.HeaderBytes()) // the first payload block
	cases := []struct {
		name    string
		damage  func(b []byte)
		corrupt bool
	}{
		{"magic", func(b []byte) { b[o+1] ^= 0x02 }, false},
		{"h_cycle", func(b []byte) { b[o+7] ^= 0x08 }, false},
		{"payload stamp", func(b []byte) { b[p+3] ^= 0x01 }, false},
		{"h_lsn", func(b []byte) { b[o+23] ^= 0x20 }, true},
		{"h_size", func(b []byte) { b[o+321] ^= 0x40 }, true},
		{"h_len grown", func(b []byte) { b[o+14] ^= 0x10 }, true},
		{"h_crc", func(b []byte) { b[o+33] ^= 0x01 }, true},
		{"h_durable_lsn", func(b []byte) { b[o+335] ^= 0x01 }, true},
		// Under xfs coverage the CRC leaves these out; they are checked.
		{"bytes 336..343", func(b []byte) { b[o+340] ^= 0x04 }, true},
		{"h_reserved", func(b []byte) { b[o+500] ^= 0x01 }, true},
	}
	if last.Header.HeaderBytes() > 512 {
		// A record short enough to need no extension header: under xfs
		// coverage its extension header is not in the CRC.
		cases = append(cases, []struct {
			name    string
			damage  func(b []byte)
			corrupt bool
		}{
			{"extension header's cycle", func(b []byte) { b[o+512+2] ^= 0x10 }, false},
			{"extension header's cycle data", func(b []byte) { b[o+512+40] ^= 0x10 }, true},
			{"xh_reserved", func(b []byte) { b[o+512+300] ^= 0x10 }, true},
			{"extension header zeroed", func(b []byte) { clear(b[o+512 : o+1024]) }, false},
		}...)
	}
	for _, c := range cases {
		bad := bytes.Clone(img)
		c.damage(bad)
		fs, warnings, err := recoverImage(t, dir, bad, Options{})
		if c.corrupt {
			corruptionAt(t, c.name, err, last, 0)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v, want the record replayed", c.name, err)
			continue
		}
		if r := fs.Recovery(); r.Transactions != 10 || r.TornLSN != 0 || r.Restamped != 1 {
			t.Errorf("%s: recovery %+v, want all 10 transactions replayed, 1 record restamped", c.name, r)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], last.LSN().String()) {
			t.Errorf("%s: warnings %q", c.name, warnings)
		}
		fs.Abandon()
	}
}

// stripWatermarks rewrites the records in img as a writer without durable
// watermarks would have written them (h_durable_lsn, at 328 in logbuf's
// format, zero; the CRC recomputed), so only the in-flight count can tell
// a torn record from a durable one.
func stripWatermarks(t *testing.T, img []byte, recs []xlog.ScannedRecord) {
	t.Helper()
	for _, r := range recs {
		b := img[r.Offset : r.Offset+int64(r.Header.RecordBytes())]
		clear(b[328:336])
		binary.LittleEndian.PutUint32(b[32:], logbuf.ComputeCRC(b, r.Header.HeaderBytes(), logbuf.CoverWhole))
		if h, err := logbuf.ParseHeader(b); err != nil || h.Durable != 0 {
			t.Fatalf("stripping the watermark of %v: %v", r.LSN(), err)
		}
	}
}

// TestInFlightAllowance pins the torn/corrupt boundary in records: a
// record with a block not carrying its cycle, followed by k valid records
// with no watermark to prove anything, may have been in flight only if the
// k+1 records fit in logbufs. So with logbufs 4 it is cut for k up to 3 and
// refused from k = 4 on; for both the bad record's header present and gone.
func TestInFlightAllowance(t *testing.T) {
	const logbufs = 4
	dir, img0, recs := fsyncedLog(t, 20, Options{LogBufs: logbufs})
	stripWatermarks(t, img0, recs)
	const v = 8
	victim := recs[v]
	for _, header := range []bool{true, false} {
		for k := 0; k <= logbufs+2; k++ {
			img := bytes.Clone(img0)
			// The log ends after record v+k.
			clear(img[recs[v+k+1].Offset:])
			if header {
				clear(img[victim.Offset+512 : victim.Offset+1024])
			} else {
				clear(img[victim.Offset : victim.Offset+512])
			}
			what := fmt.Sprintf("header %v, %d records after", header, k)
			fs, _, err := recoverImage(t, dir, img, Options{LogBufs: logbufs})
			if k+1 > logbufs {
				ce := corruptionAt(t, what, err, victim, 2*k) // the victim's own are in its zeroed block
				if !strings.Contains(ce.Evidence, fmt.Sprintf("at least %d records", k+1)) || !strings.Contains(ce.Evidence, "at most 4") {
					t.Errorf("%s: evidence %q", what, ce.Evidence)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v, want a torn tail cut", what, err)
			}
			if r := fs.Recovery(); k+b2i(header) > 0 && (r.TornLSN != victim.LSN() || r.DroppedLater != k) || r.Transactions != 2*v {
				t.Fatalf("%s: recovery %+v, want cut at %v dropping %d, %d transactions", what, r, victim.LSN(), k, 2*v)
			}
			fs.Abandon()
		}
	}
	if t.Failed() {
		return
	}
	// A gap counts too, as at least one record (more only if it is wider
	// than the largest record): with record v+1 lost, v+2 and v+3 after
	// the victim make at least 4, v+2 to v+4 at least 5.
	for last, refused := range map[int]bool{v + 3: false, v + 4: true} {
		img := bytes.Clone(img0)
		clear(img[recs[last+1].Offset:])
		clear(img[recs[v+1].Offset:recs[v+2].Offset])
		clear(img[victim.Offset+512 : victim.Offset+1024])
		what := fmt.Sprintf("gap of 1, log ending at record %d", last)
		fs, _, err := recoverImage(t, dir, img, Options{LogBufs: logbufs})
		if refused {
			corruptionAt(t, what, err, victim, 2*(last-v-1))
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v, want a torn tail cut", what, err)
		}
		if r := fs.Recovery(); r.TornLSN != victim.LSN() || r.DroppedLater != 2 {
			t.Fatalf("%s: recovery %+v", what, r)
		}
		fs.Abandon()
	}
}

// TestWatermarkProvesDurable: the record after a damaged one was written
// once the damaged one was durable (its fsync came first), and says so;
// that alone makes the damage corruption, one record short of any count.
// Without the record after it, nothing proves the damaged record durable,
// and a zeroed block in it is, byte for byte, a torn write: it is cut.
func TestWatermarkProvesDurable(t *testing.T) {
	dir, img0, recs := fsyncedLog(t, 10, Options{LogBufs: 8})
	const v = 5
	victim := recs[v]
	if recs[v+1].Header.Durable != victim.LSN() {
		t.Fatalf("record %v after an fsync has watermark %v, want %v", recs[v+1].LSN(), recs[v+1].Header.Durable, victim.LSN())
	}
	img := bytes.Clone(img0)
	clear(img[recs[v+2].Offset:])
	clear(img[victim.Offset+512 : victim.Offset+1024])
	_, _, err := recoverImage(t, dir, img, Options{LogBufs: 8})
	ce := corruptionAt(t, "zeroed block, one record after", err, victim, 2)
	if ce.Durable != victim.LSN() || !strings.Contains(ce.Evidence, recs[v+1].LSN().String()) {
		t.Errorf("evidence %q, durable %v", ce.Evidence, ce.Durable)
	}

	img = bytes.Clone(img0)
	clear(img[recs[v+1].Offset:])
	clear(img[victim.Offset+512 : victim.Offset+1024])
	fs, _, err := recoverImage(t, dir, img, Options{LogBufs: 8})
	if err != nil {
		t.Fatalf("zeroed block in the last record: %v", err)
	}
	if r := fs.Recovery(); r.TornLSN != victim.LSN() {
		t.Errorf("zeroed block in the last record: recovery %+v, want it cut", r)
	}
	fs.Abandon()
}

// TestCutThenTearAgain: a crash leaves blocks of an in-flight record past
// the head, the next mount writes new records over those positions in the
// same cycle, and one of them is torn in turn. Its unwritten blocks must
// show the tear (the mount cleared them), not carry the cycle from the
// first record, which would make it look written whole and refuse the
// mount. Both when the first crash's tail was cut (records after the lost
// header survived) and when the log simply ended (nothing after it did).
func TestCutThenTearAgain(t *testing.T) {
	for _, laterSurvive := range []bool{true, false} {
		dir, dev := crashStore(t, 4<<20, 32<<10)
		o := Options{Journal: JournalData, LogBufs: 4, CheckpointInterval: time.Hour, Device: dev}
		fs := mount(t, dir, o)
		f := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
		check(t, fs.Fsync(f.Ino, false))
		durable := dev.Image()
		ck, err := store.ReadCheckpoint(store.OSFS(), dir)
		check(t, err)
		head := xlog.ScanLog(durable, recovery.WindowOf(ck, logbuf.CoverWhole)).Head
		// Three records' worth of writes, written but never synced.
		for i := range 3 {
			must[int](t)(fs.Write(f.Ino, bytes.Repeat([]byte{byte(0x10 + i)}, 30000), int64(i)*30000))
		}
		waitPending(t, dev, 2)
		pending := dev.Image()
		fs.Abandon()
		first := findRecord(t, pending, head)
		// The first in flight lost its header block; the rest of its
		// blocks, all stamped with the cycle, made it, and the records
		// after it too, or not.
		var crash []byte
		if laterSurvive {
			crash = bytes.Clone(pending)
			copy(crash[first.Offset:], durable[first.Offset:first.Offset+512])
		} else {
			crash = bytes.Clone(durable)
			end := first.Offset + int64(first.Header.RecordBytes())
			copy(crash[first.Offset+512:end], pending[first.Offset+512:end])
		}
		dev2 := testfs.NewCrashDevice(crash)
		dir2 := cloneStore(t, dir)
		fs2 := mount(t, dir2, Options{Journal: JournalData, LogBufs: 4, CheckpointInterval: time.Hour, Device: dev2})
		if r := fs2.Recovery(); laterSurvive && (r.TornLSN != first.LSN() || r.DroppedLater == 0) || !laterSurvive && r.TornLSN != 0 {
			t.Fatalf("later records survive %v: first crash: recovery %+v", laterSurvive, r)
		}
		cleared := dev2.Image()
		// The next writer puts a new record at the same position, in
		// the same cycle; it is torn: all its blocks but the header are
		// as they were.
		must[int](t)(fs2.Write(f.Ino, bytes.Repeat([]byte{0x77}, 30000), 0))
		must[int](t)(fs2.Write(f.Ino, bytes.Repeat([]byte{0x78}, 30000), 30000))
		waitPending(t, dev2, 1)
		again := dev2.Image()
		fs2.Abandon()
		second := findRecord(t, again, head)
		if second.LSN() != first.LSN() {
			t.Fatalf("the new record went to %v, not %v", second.LSN(), first.LSN())
		}
		crash2 := bytes.Clone(cleared)
		copy(crash2[second.Offset:], again[second.Offset:second.Offset+512])
		fs3, warnings, err := recoverImage(t, dir2, crash2, Options{Journal: JournalData, LogBufs: 4})
		if err != nil {
			t.Fatalf("later records survive %v: second crash, torn record over cleared blocks: %v", laterSurvive, err)
		}
		if r := fs3.Recovery(); r.TornLSN != second.LSN() {
			t.Fatalf("later records survive %v: second crash: recovery %+v, warnings %q; want the log cut at %v", laterSurvive, r, warnings, second.LSN())
		}
		fs3.Abandon()
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// waitPending waits until the log writer has issued n writes since the
// last sync: records switched out are written asynchronously.
func waitPending(t *testing.T, dev *testfs.CrashDevice, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); dev.Pending() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log writer issued %d writes, want %d", dev.Pending(), n)
		}
	}
}

// findRecord returns the valid record at p in img.
func findRecord(t *testing.T, img []byte, p xlog.Pos) xlog.ScannedRecord {
	t.Helper()
	r, ok := xlog.ReadRecord(img, p, logbuf.CoverWhole)
	if !ok || r.Err != nil {
		t.Fatalf("no valid record at %v: %v", p.LSN(), r.Err)
	}
	return r
}

// TestCorruptionRefused flips one bit in a record that many valid records
// follow: that is not a torn write, and mounting must refuse, naming the
// LSN, the file offset, the stored and the computed CRC.
func TestCorruptionRefused(t *testing.T) {
	dir, dev := crashStore(t, 8<<20, 32<<10)
	o := Options{Journal: JournalData, LogBufs: 2, CheckpointInterval: time.Hour, Device: dev}
	fs := mount(t, dir, o)
	f := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	for i := range 300 {
		must[int](t)(fs.Write(f.Ino, bytes.Repeat([]byte{byte(i)}, 2000), int64(i)*2000))
		check(t, fs.Fsync(f.Ino, false))
	}
	img := dev.Image()
	fs.Abandon()
	ck, err := store.ReadCheckpoint(store.OSFS(), dir)
	check(t, err)
	s := xlog.ScanLog(img, recovery.WindowOf(ck, logbuf.CoverWhole))
	if len(s.Records) < 250 {
		t.Fatalf("only %d records", len(s.Records))
	}
	victim := s.Records[20]
	bad := bytes.Clone(img)
	bad[victim.Offset+700] ^= 0x10 // in the payload
	_, _, err = recoverImage(t, dir, bad, Options{Journal: JournalData})
	var ce *xlog.CorruptionError
	if !errors.As(err, &ce) {
		t.Fatalf("recovery of a corrupt log: %v, want a CorruptionError", err)
	}
	if ce.LSN != victim.LSN() || ce.Offset != victim.Offset || ce.Stored != victim.Stored || ce.Computed == ce.Stored {
		t.Fatalf("corruption error %+v does not name the record at %v offset %d", ce, victim.LSN(), victim.Offset)
	}
	msg := err.Error()
	for _, want := range []string{victim.LSN().String(), fmt.Sprint(victim.Offset), fmt.Sprintf("%#08x", ce.Stored), fmt.Sprintf("%#08x", ce.Computed), "check --repair"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
}

// TestWraparound drives a 1 MiB log through many cycles, and at random
// points recovers the durable image, which must hold exactly the current
// model (everything was forced).
// TestWraparound runs the log round eight times, recovering copies of it
// on the way, in batched mode and in inline mode, whose iclogs take their
// cycle when they become active.
func TestWraparound(t *testing.T) {
	for _, c := range []struct {
		jm JournalMode
		m  cksum.Mode
	}{{JournalMeta, cksum.Batched}, {JournalData, cksum.Batched}, {JournalMeta, cksum.Inline}, {JournalData, cksum.Inline}} {
		jm := c.jm
		t.Run(jm.String()+"/"+c.m.String(), func(t *testing.T) {
			dir, dev := crashStore(t, 1<<20, 32<<10)
			o := Options{Mode: c.m, Journal: jm, LogBufs: 4, CheckpointInterval: time.Hour, Device: dev}
			fs := mount(t, dir, o)
			r := rand.New(rand.NewPCG(42, uint64(jm)))
			var files []meta.Ino
			recovered := 0
			for i := 0; ; i++ {
				switch {
				case len(files) < 20 || r.IntN(10) == 0:
					a, err := fs.Create(meta.RootIno, fmt.Sprintf("f%d", i), meta.ModeReg|0o644, 0, 0, 0, "")
					check(t, err)
					files = append(files, a.Ino)
				case r.IntN(10) == 0:
					k := r.IntN(len(files))
					a, _ := fs.GetAttr(files[k])
					_ = a
					fs.mu.RLock()
					var name string
					for n, ino := range fs.model.Inodes[meta.RootIno].Entries {
						if ino == files[k] {
							name = n
						}
					}
					fs.mu.RUnlock()
					check(t, fs.Unlink(meta.RootIno, name))
					files = append(files[:k], files[k+1:]...)
				default:
					b := make([]byte, 1+r.IntN(20000))
					ino := files[r.IntN(len(files))]
					must[int](t)(fs.Write(ino, b, r.Int64N(100000)))
					if jm == JournalMeta {
						check(t, fs.Fsync(ino, false)) // a record per write, to go round faster
					}
				}
				if r.IntN(50) == 0 {
					check(t, fs.Sync())
					fs.ckptMu.Lock()
					img := dev.Image()
					ck, err := os.ReadFile(filepath.Join(dir, store.CheckpointName))
					fs.ckptMu.Unlock()
					check(t, err)
					d2 := cloneStore(t, dir)
					check(t, os.WriteFile(filepath.Join(d2, store.CheckpointName), ck, 0o644))
					// The data files' sizes too: they hold what the
					// checkpoint made durable, and recovery checks it.
					// Only the foreground grows or creates them, and a
					// checkpoint since deletes only files whose free
					// the image holds.
					copyDataFiles(t, dir, d2)
					o2 := o
					o2.Device = testfs.NewCrashDevice(img)
					fs2 := mount(t, d2, o2)
					if fs2.model.Digest() != digestOf(fs.model) {
						t.Fatalf("recovered model differs at op %d (head %v)", i, fs.Stats().Head)
					}
					fs2.Abandon()
					recovered++
				}
				if fs.Stats().Head.Cycle() > 8 {
					break
				}
			}
			if recovered < 10 {
				t.Errorf("only %d recoveries", recovered)
			}
			check(t, fs.Close())
		})
	}
}

// FuzzRecoverLog feeds arbitrary bytes as the log: the walk, the
// corruption scan and replay must never panic or hang.
func FuzzRecoverLog(f *testing.F) {
	// A seed of real records: a small log written by the journal.
	f.Add(seedLog(f), uint32(1), uint32(0))
	f.Add(make([]byte, 1024), uint32(1), uint32(0))
	f.Fuzz(func(t *testing.T, b []byte, tailCycle, tailBlock uint32) {
		img := make([]byte, 64<<10)
		copy(img, b)
		ck := &store.Checkpoint{TailLSN: logbuf.MakeLSN(tailCycle, tailBlock%128), LogBufs: 2, LogBSize: 32 << 10, Model: meta.NewModel(0)}
		s := xlog.ScanLog(img, recovery.WindowOf(ck, logbuf.CoverWhole))
		_ = s.Corruption()
		m := meta.NewModel(0)
		recovery.Replay(s, 0, func(op *meta.Op) error { return m.Apply(op) })
	})
}

// seedLog returns the first few KiB of a real log: a handful of small records.
func seedLog(t testing.TB) []byte {
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := store.Mkfs(dir, store.MkfsOptions{LogSize: 1 << 20, LogBSize: 32 << 10}); err != nil {
		t.Fatal(err)
	}
	img, _ := os.ReadFile(filepath.Join(dir, store.LogName))
	dev := testfs.NewCrashDevice(img)
	fs, err := Open(dir, quietOpts(Options{Device: dev, LogBufs: 2}))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := fs.Create(meta.RootIno, "x", meta.ModeReg|0o644, 0, 0, 0, "")
	fs.Fsync(a.Ino, false)
	fs.Create(meta.RootIno, "d", meta.ModeDir|0o755, 0, 0, 0, "")
	fs.SetXattr(a.Ino, "user.k", []byte("v"), 0)
	fs.Sync()
	out := dev.Image()[:4096]
	fs.Abandon()
	return out
}

func BenchmarkCommit(b *testing.B) {
	for _, jm := range []JournalMode{JournalMeta, JournalData} {
		for _, m := range cksum.Modes() {
			for _, size := range []int{512, 64 << 10} {
				b.Run(fmt.Sprintf("%s/%s/write%d", jm, m, size), func(b *testing.B) {
					dir := filepath.Join(b.TempDir(), "s")
					if _, err := store.Mkfs(dir, store.MkfsOptions{LogSize: 64 << 20}); err != nil {
						b.Fatal(err)
					}
					img, _ := os.ReadFile(filepath.Join(dir, store.LogName))
					fs, err := Open(dir, quietOpts(Options{Mode: m, Journal: jm, Device: testfs.NewCrashDevice(img)}))
					if err != nil {
						b.Fatal(err)
					}
					defer fs.Abandon()
					a, _ := fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, "")
					buf := make([]byte, size)
					b.SetBytes(int64(size))
					i := 0
					for b.Loop() {
						if _, err := fs.Write(a.Ino, buf, int64(i%64)*int64(size)); err != nil {
							b.Fatal(err)
						}
						i++
					}
					st := fs.Stats()
					b.ReportMetric(float64(st.RecordBytes)/float64(b.N), "logB/op")
				})
			}
		}
	}
}

// BenchmarkReplay measures recovery's walk and replay in MB/s of log.
func BenchmarkReplay(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "s")
	if _, err := store.Mkfs(dir, store.MkfsOptions{LogSize: 64 << 20}); err != nil {
		b.Fatal(err)
	}
	img, _ := os.ReadFile(filepath.Join(dir, store.LogName))
	dev := testfs.NewCrashDevice(img)
	fs, err := Open(dir, quietOpts(Options{Journal: JournalData, Device: dev, CheckpointInterval: time.Hour}))
	if err != nil {
		b.Fatal(err)
	}
	a, _ := fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, "")
	buf := make([]byte, 32<<10)
	for i := range 1000 { // ~32 MiB of log, under the ¾ mark that checkpoints
		fs.Write(a.Ino, buf, int64(i%100)*int64(len(buf)))
	}
	fs.Sync()
	image := dev.Image()
	fs.Abandon()
	ck, _ := store.ReadCheckpoint(store.OSFS(), dir)
	s := xlog.ScanLog(image, recovery.WindowOf(ck, logbuf.CoverWhole))
	var logBytes int64
	for _, r := range s.Records {
		logBytes += int64(r.Header.RecordBytes())
	}
	b.SetBytes(logBytes)
	for b.Loop() {
		s := xlog.ScanLog(image, recovery.WindowOf(ck, logbuf.CoverWhole))
		m := ck.Model.Clone()
		if _, err := recovery.Replay(s, ck.LastTID, func(op *meta.Op) error { return m.Apply(op) }); err != nil {
			b.Fatal(err)
		}
	}
}
