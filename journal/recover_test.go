package journal

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/logbuf"
)

// crashStore is a freshly made store whose log lives on a CrashDevice.
func crashStore(t *testing.T, logSize int64, logbsize int) (string, *CrashDevice) {
	t.Helper()
	dir := filepath.Join(fastTempDir(t), "store")
	if _, err := Mkfs(dir, MkfsOptions{LogSize: logSize, LogBSize: logbsize}); err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(filepath.Join(dir, logName))
	check(t, err)
	return dir, NewCrashDevice(img)
}

// cloneStore copies a store's superblock and checkpoint into a new
// directory, for recovering an image without disturbing the original.
func cloneStore(t *testing.T, dir string) string {
	t.Helper()
	d := filepath.Join(fastTempDir(t), "store")
	check(t, os.MkdirAll(filepath.Join(d, dataDirName), 0o755))
	for _, f := range []string{superblockName, checkpointName} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		check(t, err)
		check(t, os.WriteFile(filepath.Join(d, f), b, 0o644))
	}
	return d
}

func recoverImage(t *testing.T, dir string, img []byte, o Options) (*FS, []string, error) {
	t.Helper()
	var warnings []string
	o.Device = NewCrashDevice(img)
	o.Logf = func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
	fs, err := Open(cloneStore(t, dir), o)
	return fs, warnings, err
}

// TestTornWriteAtEveryBoundary writes a full 256 KiB record and tears it
// at every 512-byte boundary: the blocks before the boundary new, the rest
// as they were. Each tear must be cut as a torn tail, with a warning naming
// the record's LSN, and the transaction it held must not be replayed. The
// record is written in batched mode and in inline mode (stamped as it is
// copied in), and recovered in batched mode.
func TestTornWriteAtEveryBoundary(t *testing.T) {
	for _, m := range []cksum.Mode{cksum.Batched, cksum.Inline} {
		t.Run(m.String(), func(t *testing.T) { tornWriteAtEveryBoundary(t, m) })
	}
}

func tornWriteAtEveryBoundary(t *testing.T, mode cksum.Mode) {
	dir, dev := crashStore(t, 4<<20, 256<<10)
	o := Options{Mode: mode, Journal: JournalData, LogBufs: 2, CheckpointInterval: time.Hour}
	o.Device = dev
	fs := mount(t, dir, o)
	f := must[Attr](t)(fs.Create(RootIno, "f", ModeReg|0o644, 0, 0, 0, ""))
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

	ck, err := ReadCheckpoint(dir)
	check(t, err)
	s := scanLog(img1, ck)
	var full *ScannedRecord
	for i := range s.records {
		if s.records[i].Header.Size == 256<<10 && s.records[i].Header.RecordBytes() == 256<<10 {
			full = &s.records[i]
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
	// The other tear: header block old, payload new. Nothing claims to be
	// a record there, so the log simply ends before it.
	img := bytes.Clone(img1)
	copy(img[full.Offset:full.Offset+512], img0[full.Offset:])
	fs2, warnings, err := recoverImage(t, dir, img, Options{Journal: JournalData, LogBufs: 2})
	check(t, err)
	if fs2.model.Digest() != before {
		t.Fatal("old header, new payload: state after the torn record")
	}
	if r := fs2.Recovery(); r.TornLSN == 0 && r.DroppedLater == 0 {
		// the next record (valid, in the window) is dropped as in flight
		t.Logf("recovery %+v, warnings %q", r, warnings)
	}
	fs2.Abandon()
}

// TestCorruptionRefused flips one bit in a record that many valid records
// follow: that is not a torn write, and mounting must refuse, naming the
// LSN, the file offset, the stored and the computed CRC.
func TestCorruptionRefused(t *testing.T) {
	dir, dev := crashStore(t, 8<<20, 32<<10)
	o := Options{Journal: JournalData, LogBufs: 2, CheckpointInterval: time.Hour, Device: dev}
	fs := mount(t, dir, o)
	f := must[Attr](t)(fs.Create(RootIno, "f", ModeReg|0o644, 0, 0, 0, ""))
	for i := range 300 {
		must[int](t)(fs.Write(f.Ino, bytes.Repeat([]byte{byte(i)}, 2000), int64(i)*2000))
		check(t, fs.Fsync(f.Ino, false))
	}
	img := dev.Image()
	fs.Abandon()
	ck, err := ReadCheckpoint(dir)
	check(t, err)
	s := scanLog(img, ck)
	if len(s.records) < 250 {
		t.Fatalf("only %d records", len(s.records))
	}
	victim := s.records[20]
	bad := bytes.Clone(img)
	bad[victim.Offset+700] ^= 0x10 // in the payload
	_, _, err = recoverImage(t, dir, bad, Options{Journal: JournalData})
	var ce *CorruptionError
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
	// The same flip in the last record is a torn tail, not corruption.
	last := s.records[len(s.records)-1]
	bad = bytes.Clone(img)
	bad[last.Offset+700] ^= 0x10
	fs2, _, err := recoverImage(t, dir, bad, Options{Journal: JournalData})
	if err != nil {
		t.Fatalf("flip in the last record: %v, want a torn tail", err)
	}
	if r := fs2.Recovery(); r.TornLSN != last.LSN() {
		t.Errorf("flip in the last record: recovery %+v, want torn at %v", r, last.LSN())
	}
	fs2.Abandon()
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
			var files []Ino
			recovered := 0
			for i := 0; ; i++ {
				switch {
				case len(files) < 20 || r.IntN(10) == 0:
					a, err := fs.Create(RootIno, fmt.Sprintf("f%d", i), ModeReg|0o644, 0, 0, 0, "")
					check(t, err)
					files = append(files, a.Ino)
				case r.IntN(10) == 0:
					k := r.IntN(len(files))
					a, _ := fs.GetAttr(files[k])
					_ = a
					fs.mu.RLock()
					var name string
					for n, ino := range fs.model.Inodes[RootIno].Entries {
						if ino == files[k] {
							name = n
						}
					}
					fs.mu.RUnlock()
					check(t, fs.Unlink(RootIno, name))
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
					ck, err := os.ReadFile(filepath.Join(dir, checkpointName))
					fs.ckptMu.Unlock()
					check(t, err)
					d2 := cloneStore(t, dir)
					check(t, os.WriteFile(filepath.Join(d2, checkpointName), ck, 0o644))
					o2 := o
					o2.Device = NewCrashDevice(img)
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
		ck := &Checkpoint{TailLSN: logbuf.MakeLSN(tailCycle, tailBlock%128), LogBufs: 2, LogBSize: 32 << 10, Model: NewModel(0)}
		s := scanLog(img, ck)
		_ = s.corruption()
		m := NewModel(0)
		replay(s, 0, func(op *Op) error { return m.Apply(op) })
	})
}

// seedLog returns the first few KiB of a real log: a handful of small records.
func seedLog(t testing.TB) []byte {
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := Mkfs(dir, MkfsOptions{LogSize: 1 << 20, LogBSize: 32 << 10}); err != nil {
		t.Fatal(err)
	}
	img, _ := os.ReadFile(filepath.Join(dir, logName))
	dev := NewCrashDevice(img)
	fs, err := Open(dir, quietOpts(Options{Device: dev, LogBufs: 2}))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := fs.Create(RootIno, "x", ModeReg|0o644, 0, 0, 0, "")
	fs.Fsync(a.Ino, false)
	fs.Create(RootIno, "d", ModeDir|0o755, 0, 0, 0, "")
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
					if _, err := Mkfs(dir, MkfsOptions{LogSize: 64 << 20}); err != nil {
						b.Fatal(err)
					}
					img, _ := os.ReadFile(filepath.Join(dir, logName))
					fs, err := Open(dir, quietOpts(Options{Mode: m, Journal: jm, Device: NewCrashDevice(img)}))
					if err != nil {
						b.Fatal(err)
					}
					defer fs.Abandon()
					a, _ := fs.Create(RootIno, "f", ModeReg|0o644, 0, 0, 0, "")
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
	if _, err := Mkfs(dir, MkfsOptions{LogSize: 64 << 20}); err != nil {
		b.Fatal(err)
	}
	img, _ := os.ReadFile(filepath.Join(dir, logName))
	dev := NewCrashDevice(img)
	fs, err := Open(dir, quietOpts(Options{Journal: JournalData, Device: dev, CheckpointInterval: time.Hour}))
	if err != nil {
		b.Fatal(err)
	}
	a, _ := fs.Create(RootIno, "f", ModeReg|0o644, 0, 0, 0, "")
	buf := make([]byte, 32<<10)
	for i := range 1000 { // ~32 MiB of log, under the ¾ mark that checkpoints
		fs.Write(a.Ino, buf, int64(i%100)*int64(len(buf)))
	}
	fs.Sync()
	image := dev.Image()
	fs.Abandon()
	ck, _ := ReadCheckpoint(dir)
	s := scanLog(image, ck)
	var logBytes int64
	for _, r := range s.records {
		logBytes += int64(r.Header.RecordBytes())
	}
	b.SetBytes(logBytes)
	for b.Loop() {
		s := scanLog(image, ck)
		m := ck.Model.Clone()
		if _, err := replay(s, ck.LastTID, func(op *Op) error { return m.Apply(op) }); err != nil {
			b.Fatal(err)
		}
	}
}
