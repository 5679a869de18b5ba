package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/journal"
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
	a, err := fs.Create(journal.RootIno, "f", journal.ModeReg|0o644, 0, 0, 0, "")
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

	// Flip a bit in the 20th record: 180 valid records follow, far past
	// the torn-write window of 2+1 iclogs of 32 KiB.
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
