package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/journal"
	"github.com/xlogfs/xlogfs/journal/meta"
)

// dirtyStore makes a store and leaves a dirty log of many small records
// behind, as a crash would.
func dirtyStore(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	if code, _, errs := runCapture(t, "mkfs", "--log-size", "8m", "--logbsize", "32k", dir); code != 0 {
		t.Fatalf("mkfs: %s", errs)
	}
	fs, err := journal.Open(dir, journal.Options{Journal: journal.JournalData, LogBufs: 2, Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, err := fs.Write(a.Ino, []byte(strings.Repeat("x", 1500)), int64(i)*1500); err != nil {
			t.Fatal(err)
		}
		if err := fs.Fsync(a.Ino, false); err != nil {
			t.Fatal(err)
		}
	}
	fs.Abandon()
	return dir
}

func TestMkfsRefusesForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "precious"), []byte("x"), 0o644)
	code, _, errs := runCapture(t, "mkfs", dir)
	if code == 0 || !strings.Contains(errs, "not an xlogfs store") {
		t.Fatalf("mkfs over a foreign directory: exit %d, %q", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "precious")); string(b) != "x" {
		t.Fatal("mkfs touched a foreign file")
	}
	store := filepath.Join(t.TempDir(), "s")
	if code, _, _ := runCapture(t, "mkfs", "--log-size", "1m", store); code != 0 {
		t.Fatal("mkfs of a new directory failed")
	}
	if code, _, errs := runCapture(t, "mkfs", store); code == 0 || !strings.Contains(errs, "--force") {
		t.Fatalf("mkfs over a store without --force: exit %d, %q", code, errs)
	}
	if code, _, errs := runCapture(t, "mkfs", "--force", "--log-size", "1m", store); code != 0 {
		t.Fatalf("mkfs --force: %s", errs)
	}
	if code, _, errs := runCapture(t, "mkfs", "--log-size", "12q", store); code != 2 && code != 1 || !strings.Contains(errs, "bad size") {
		t.Fatalf("bad --log-size: exit %d, %q", code, errs)
	}
}

func TestLogprintCheckAndRepair(t *testing.T) {
	dir := dirtyStore(t)
	code, out, errs := runCapture(t, "logprint", "--json", dir)
	if code != 0 {
		t.Fatalf("logprint of a sound log: exit %d: %s", code, errs)
	}
	var l jsonLog
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Records) < 150 || l.Status != "ok" {
		t.Fatalf("logprint: %d records, status %s", len(l.Records), l.Status)
	}
	for _, r := range l.Records {
		if !r.OK || r.CRC != r.ComputedCRC || r.LSN == "" || r.Len == 0 {
			t.Fatalf("record %+v", r)
		}
	}
	if code, out, _ := runCapture(t, "logprint", "--ops", "--transactions", dir); code != 0 || !strings.Contains(out, "write ino") || !strings.Contains(out, "START") {
		t.Fatalf("logprint --ops --transactions: exit %d\n%s", code, out)
	}
	if code, out, _ := runCapture(t, "check", dir); code != 0 || !strings.Contains(out, "metadata: ok") {
		t.Fatalf("check of a sound store: exit %d\n%s", code, out)
	}

	// Flip a bit in the 20th record: every block still carries its cycle,
	// and 180 valid records follow, whose watermarks cover it.
	victim := l.Records[20]
	logPath := filepath.Join(dir, "log")
	img, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	img[victim.Offset+600] ^= 1
	if err := os.WriteFile(logPath, img, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCapture(t, "logprint", dir)
	if code != 1 || !strings.Contains(errs, victim.LSN) || !strings.Contains(out, "corrupt") {
		t.Fatalf("logprint of a corrupt log: exit %d, stderr %q", code, errs)
	}
	code, out, _ = runCapture(t, "check", dir)
	if code != 1 || !strings.Contains(out, "CORRUPT") || !strings.Contains(out, victim.LSN) {
		t.Fatalf("check of a corrupt log: exit %d\n%s", code, out)
	}
	if _, err := journal.Open(dir, journal.Options{Logf: func(string, ...any) {}}); err == nil || !strings.Contains(err.Error(), "check --repair") {
		t.Fatalf("mounting a corrupt log: %v", err)
	}
	code, out, _ = runCapture(t, "check", "--repair", dir)
	if code != 0 || !strings.Contains(out, "Lost with it") {
		t.Fatalf("check --repair: exit %d\n%s", code, out)
	}
	code, out, _ = runCapture(t, "logprint", "--json", dir)
	if code != 0 {
		t.Fatalf("logprint after repair: exit %d", code)
	}
	json.Unmarshal([]byte(out), &l)
	if len(l.Records) != 20 {
		t.Fatalf("after repair: %d records, want the 20 before the cut", len(l.Records))
	}
	fs, err := journal.Open(dir, journal.Options{Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatalf("mount after repair: %v", err)
	}
	fs.Close()
}

// fsyncedStore makes a store holding n files, each written and fsynced in
// turn (one log record each), and leaves it as a crash would. It returns
// the store and the log's records as logprint --json prints them.
func fsyncedStore(t *testing.T, n int) (string, []jsonRecord) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	if code, _, errs := runCapture(t, "mkfs", "--log-size", "8m", "--logbsize", "32k", dir); code != 0 {
		t.Fatalf("mkfs: %s", errs)
	}
	fs, err := journal.Open(dir, journal.Options{Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		a, err := fs.Create(meta.RootIno, fmt.Sprintf("f%02d", i), meta.ModeReg|0o644, 0, 0, 0, "")
		if err == nil {
			_, err = fs.Write(a.Ino, []byte(strings.Repeat("y", 1000)), 0)
		}
		if err == nil {
			err = fs.Fsync(a.Ino, false)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	fs.Abandon()
	code, out, errs := runCapture(t, "logprint", "--json", dir)
	var l jsonLog
	if err := json.Unmarshal([]byte(out), &l); code != 0 || err != nil || len(l.Records) != n {
		t.Fatalf("logprint of %d fsynced files: exit %d, %v, %d records: %s", n, code, err, len(l.Records), errs)
	}
	for i, r := range l.Records[1:] {
		if r.DurableLSN != l.Records[i].LSN {
			t.Fatalf("record %s: durable watermark %s, want %s (the record before it, fsynced)", r.LSN, r.DurableLSN, l.Records[i].LSN)
		}
	}
	return dir, l.Records
}

func damageLog(t *testing.T, dir string, damage func(img []byte)) {
	t.Helper()
	path := filepath.Join(dir, "log")
	img, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damage(img)
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
}

// mountRefuses runs xlogfs mount --foreground and checks it refuses the
// store: recovery fails before anything is mounted on the (empty)
// mount point.
func mountRefuses(t *testing.T, dir string, want ...string) {
	t.Helper()
	code, _, errs := runCapture(t, "mount", "--foreground", dir, t.TempDir())
	if code != 1 {
		t.Fatalf("mount of a corrupt store: exit %d, want 1: %s", code, errs)
	}
	for _, w := range append(want, "log corrupt", "not a torn write", "check --repair") {
		if !strings.Contains(errs, w) {
			t.Errorf("mount's error %q does not mention %q", errs, w)
		}
	}
}

// TestFortyFsyncedFilesCorrupt is the 40-file case end to end: a flipped
// payload bit in the 2nd of 40 records (all acknowledged) makes check exit
// 1 naming the LSN and mount refuse; check --repair lists the transactions
// of the 38 files after it, and the 2nd record's as unknown, before it cuts
// them.
func TestFortyFsyncedFilesCorrupt(t *testing.T) {
	dir, recs := fsyncedStore(t, 40)
	if code, out, _ := runCapture(t, "check", dir); code != 0 || !strings.Contains(out, "metadata: ok") {
		t.Fatalf("check of the sound store: exit %d\n%s", code, out)
	}
	second := recs[1]
	damageLog(t, dir, func(img []byte) { img[second.Offset+700] ^= 0x10 })
	code, out, errs := runCapture(t, "check", dir)
	if code != 1 || !strings.Contains(out, "CORRUPT") || !strings.Contains(out, "log corrupt at LSN "+second.LSN) ||
		!strings.Contains(out, "at least 76 committed transactions") || !strings.Contains(errs, "not sound") {
		t.Fatalf("check: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs := runCapture(t, "logprint", dir); code != 1 || !strings.Contains(errs, "corrupt at LSN "+second.LSN) {
		t.Fatalf("logprint: exit %d: %s", code, errs)
	} else if lines := strings.Split(strings.TrimSpace(errs), "\n"); len(lines) > 8 || slices.ContainsFunc(lines, func(l string) bool { return len(l) > 200 }) {
		t.Errorf("logprint's corruption error is not a few short lines:\n%s", errs)
	}
	mountRefuses(t, dir, "LSN "+second.LSN, fmt.Sprintf("log offset %d", second.Offset), "stored CRC "+second.CRC)

	code, out, _ = runCapture(t, "check", "--repair", dir)
	lost := strings.Index(out, "Lost with it")
	done := strings.Index(out, "repair: done")
	if code != 0 || lost < 0 || done < lost || !strings.Contains(out[lost:done], "at least 76 committed transactions") ||
		!strings.Contains(out[lost:done], `create ino 41 at 1/"f39"`) {
		t.Fatalf("check --repair: exit %d\n%s", code, out)
	}
	// The bad record is named once, its reason said once.
	if strings.Contains(out, "record "+second.LSN+": record "+second.LSN) || strings.Count(out[lost:done], "CRC mismatch") != 1 {
		t.Errorf("check --repair repeats itself:\n%s", out[lost:done])
	}
	fs, err := journal.Open(dir, journal.Options{Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatalf("mount after repair: %v", err)
	}
	defer fs.Close()
	if r := fs.Recovery(); r.Records != 1 || r.Transactions != 2 {
		t.Fatalf("after repair: recovery %+v, want the first file's record alone", r)
	}
}

// TestLastRecordFlipVersusTear: a flipped bit in the last, fsynced record,
// every block of which carries its cycle, is corruption (check exits 1,
// mount refuses); a truly torn last record, one block still holding what
// the fresh log held there (cycle 0), is cut: check passes, naming it.
func TestLastRecordFlipVersusTear(t *testing.T) {
	dir, recs := fsyncedStore(t, 10)
	last := recs[len(recs)-1]
	path := filepath.Join(dir, "log")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damageLog(t, dir, func(img []byte) { img[last.Offset+600] ^= 0x04 })
	if code, out, _ := runCapture(t, "check", dir); code != 1 || !strings.Contains(out, "CORRUPT") ||
		!strings.Contains(out, "LSN "+last.LSN) || !strings.Contains(out, "every block of it carries its cycle") {
		t.Fatalf("check of a flipped last record: exit %d\n%s", code, out)
	}
	mountRefuses(t, dir, "LSN "+last.LSN)

	torn := bytes.Clone(good)
	clear(torn[last.Offset+512 : last.Offset+1024])
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCapture(t, "check", dir); code != 0 || !strings.Contains(out, "torn write at LSN "+last.LSN) {
		t.Fatalf("check of a torn last record: exit %d\n%s", code, out)
	}
	code, out, _ := runCapture(t, "logprint", "--json", dir)
	var l jsonLog
	json.Unmarshal([]byte(out), &l)
	if code != 1 || l.Status != "torn" || len(l.Records) != 10 || l.Records[9].Status != "torn" {
		t.Fatalf("logprint of a torn last record: exit %d, status %s, %d records", code, l.Status, len(l.Records))
	}
	var warnings []string
	fs, err := journal.Open(dir, journal.Options{Logf: func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatalf("mount of a torn tail: %v", err)
	}
	defer fs.Close()
	if r := fs.Recovery(); r.TornLSN.String() != last.LSN || r.Transactions != 18 || len(warnings) != 1 || !strings.Contains(warnings[0], "torn write") {
		t.Fatalf("mount of a torn tail: recovery %+v, warnings %q", r, warnings)
	}
}

// cleanStore makes a store, runs a small workload through the journal
// and unmounts it cleanly: the live log is then the unmount record alone.
func cleanStore(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	if code, _, errs := runCapture(t, "mkfs", "--log-size", "4m", "--logbsize", "32k", dir); code != 0 {
		t.Fatalf("mkfs: %s", errs)
	}
	fs, err := journal.Open(dir, journal.Options{Journal: journal.JournalData, Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := fs.Create(meta.RootIno, "dir", meta.ModeDir|0o755, 0, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		a, err := fs.Create(d.Ino, fmt.Sprintf("file%d", i), meta.ModeReg|0o644, 0, 0, 0, "")
		if err == nil {
			_, err = fs.Write(a.Ino, []byte(strings.Repeat("z", 700*(i+1))), 0)
		}
		if err == nil {
			err = fs.Fsync(a.Ino, false)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := fs.Rename(d.Ino, "file0", meta.RootIno, "moved", 0); err != nil {
		t.Fatal(err)
	}
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func logprintJSON(t *testing.T, args ...string) jsonLog {
	t.Helper()
	code, out, errs := runCapture(t, append([]string{"logprint", "--json"}, args...)...)
	var l jsonLog
	if err := json.Unmarshal([]byte(out), &l); code != 0 || err != nil {
		t.Fatalf("logprint --json %s: exit %d, %v: %s", strings.Join(args, " "), code, err, errs)
	}
	return l
}

// TestLogprintAll: after a clean unmount, logprint shows the unmount
// record alone; --all shows the workload's records behind the tail,
// marked old, and its transactions.
func TestLogprintAll(t *testing.T) {
	dir := cleanStore(t)
	if l := logprintJSON(t, "--transactions", dir); len(l.Records) != 1 || len(l.Transactions) != 1 || !l.Transactions[0].Unmount {
		t.Fatalf("logprint of a cleanly unmounted store: %d records, transactions %+v; want the unmount record alone", len(l.Records), l.Transactions)
	}
	l := logprintJSON(t, "--all", "--transactions", dir)
	if len(l.Records) < 6 {
		t.Fatalf("logprint --all: %d records, want the workload's too", len(l.Records))
	}
	for i, r := range l.Records {
		last := i == len(l.Records)-1
		if r.Live != last || r.Where != map[bool]string{true: "live", false: "old"}[last] || !r.OK {
			t.Errorf("record %d of %d at %s: live %v, where %q, ok %v; want only the last (the unmount record) live", i, len(l.Records), r.LSN, r.Live, r.Where, r.OK)
		}
	}
	var ops []string
	for _, tx := range l.Transactions {
		ops = append(ops, tx.Ops...)
	}
	all := strings.Join(ops, "\n")
	for _, want := range []string{`create ino 2 at 1/"dir"`, `at 2/"file4"`, `write ino 7 off 0 len 3500 (3500 bytes logged)`, `rename 2/"file0" -> 1/"moved"`} {
		if !strings.Contains(all, want) {
			t.Errorf("logprint --all --transactions lacks %q:\n%s", want, all)
		}
	}
	code, out, _ := runCapture(t, "logprint", "--all", dir)
	if code != 0 || !strings.Contains(out, " old ") || !strings.Contains(out, "records: 1 live, ") {
		t.Errorf("logprint --all, as text: exit %d\n%s", code, out)
	}

	// --from and --to keep a range of LSNs, both ends included.
	second, third := l.Records[1].LSN, l.Records[2].LSN
	if r := logprintJSON(t, "--all", "--from", second, "--to", third, dir); len(r.Records) != 2 || r.Records[0].LSN != second || r.Records[1].LSN != third {
		t.Errorf("--from %s --to %s: %+v", second, third, r.Records)
	}
	// --type and --ino keep the records and transactions with such ops.
	r := logprintJSON(t, "--all", "--transactions", "--type", "rename", dir)
	if len(r.Transactions) != 1 || !strings.HasPrefix(r.Transactions[0].Ops[0], "rename") || len(r.Records) != 1 {
		t.Errorf("--type rename: %d records, transactions %+v", len(r.Records), r.Transactions)
	}
	r = logprintJSON(t, "--all", "--transactions", "--ino", "5", dir)
	if len(r.Transactions) != 2 || !strings.Contains(r.Transactions[0].Ops[0], "create ino 5") || !strings.Contains(r.Transactions[1].Ops[0], "write ino 5") {
		t.Errorf("--ino 5: transactions %+v; want its create and its write", r.Transactions)
	}
	for _, rec := range r.Records {
		for _, op := range rec.Ops {
			if op.Op != "" && !strings.Contains(op.Op, "ino 5") {
				t.Errorf("--ino 5 --json: record %s shows op %q", rec.LSN, op.Op)
			}
		}
	}
	if r := logprintJSON(t, "--type", "unmount", dir); len(r.Records) != 1 {
		t.Errorf("--type unmount: %d records", len(r.Records))
	}

	// --stats: a count and the bytes of each op type, bytes by kind.
	s := logprintJSON(t, "--all", "--stats", dir).Stats
	if s == nil {
		t.Fatal("--stats --json has no stats")
	}
	count := map[string]int{}
	for _, o := range s.Ops {
		count[o.Type] = o.Count
	}
	if count["create"] != 6 || count["write"] != 5 || count["rename"] != 1 || count["unmount"] != 1 || s.Transactions != 13 {
		t.Errorf("--stats ops %+v, %d transactions; want 6 creates, 5 writes, a rename, the unmount: 13", s.Ops, s.Transactions)
	}
	if s.Records != len(l.Records) || s.OldRecords != s.Records-1 || s.HeaderBytes != int64(s.Records)*512 ||
		s.HeaderBytes+s.OpHeaders+s.RegionBytes+s.PaddingBytes != s.Bytes || s.RegionBytes < 700*15 {
		t.Errorf("--stats bytes: %+v", s)
	}
	if code, out, _ := runCapture(t, "logprint", "--all", "--stats", dir); code != 0 || !strings.Contains(out, "op type") || !strings.Contains(out, "header blocks") ||
		strings.Contains(out, "status\n") || strings.Contains(out, " live ") {
		t.Errorf("logprint --stats as text: exit %d, want the summary alone, no record lines\n%s", code, out)
	}
	if r := logprintJSON(t, "--all", "--stats", dir); len(r.Records) != 0 || r.Stats == nil {
		t.Errorf("logprint --stats --json: %d records listed, want the summary alone", len(r.Records))
	}

	// A range outside the log is refused; one behind the tail explained.
	if code, _, errs := runCapture(t, "logprint", "--from", "1,99999999", dir); code != 1 || !strings.Contains(errs, "--from 1,99999999: block 99999999 is past the end of the log, which has ") {
		t.Errorf("--from past the log's end: exit %d, %q", code, errs)
	}
	if code, _, errs := runCapture(t, "logprint", "--from", "1,0", "--to", "1,0", dir); code != 0 || !strings.Contains(errs, "no records from 1,0 to 1,0: the range is behind the log's tail") || !strings.Contains(errs, "--all") {
		t.Errorf("a range behind the tail: exit %d, %q", code, errs)
	}
}
