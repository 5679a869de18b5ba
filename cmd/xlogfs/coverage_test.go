package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/journal"
	"github.com/xlogfs/xlogfs/journal/meta"
)

// mkfs --crc picks the store's CRC coverage for its life; check and
// logprint say which it is and verify the records under it, and a damaged
// byte the xfs coverage leaves out of the CRC (the durable watermark) is
// corruption as any other.
func TestMkfsCRCCoverage(t *testing.T) {
	if code, _, errs := runCapture(t, "mkfs", "--crc", "sector", filepath.Join(t.TempDir(), "s")); code != 2 || !strings.Contains(errs, `--crc: unknown CRC coverage "sector" (want whole or xfs)`) {
		t.Fatalf("mkfs --crc sector: exit %d, %q", code, errs)
	}
	for _, cov := range []string{"whole", "xfs", ""} {
		dir := filepath.Join(t.TempDir(), "store")
		args := []string{"mkfs", "--log-size", "8m", "--logbsize", "64k", dir}
		if cov != "" {
			args = append(args[:1], append([]string{"--crc", cov}, args[1:]...)...)
		}
		code, out, errs := runCapture(t, args...)
		want := cov
		if want == "" {
			want = "whole" // the default
		}
		if code != 0 || !strings.Contains(out, "crc "+want+",") {
			t.Fatalf("mkfs --crc %q: exit %d, %q %q", cov, code, out, errs)
		}
		fs, err := journal.Open(dir, journal.Options{Journal: journal.JournalData, LogBufs: 2, Logf: func(string, ...any) {}})
		if err != nil {
			t.Fatal(err)
		}
		a, err := fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			if _, err := fs.Write(a.Ino, []byte(strings.Repeat("x", 3000)), int64(i)*3000); err != nil {
				t.Fatal(err)
			}
			if err := fs.Fsync(a.Ino, false); err != nil {
				t.Fatal(err)
			}
		}
		fs.Abandon()

		if code, out, _ := runCapture(t, "check", dir); code != 0 || !strings.Contains(out, "crc "+want+")") {
			t.Fatalf("%s store: check exit %d\n%s", want, code, out)
		}
		if code, out, _ := runCapture(t, "logprint", dir); code != 0 || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "crc "+want) {
			t.Fatalf("%s store: logprint exit %d\n%s", want, code, out)
		}
		code, out, _ = runCapture(t, "logprint", "--json", dir)
		var l jsonLog
		if err := json.Unmarshal([]byte(out), &l); code != 0 || err != nil || l.CRCCoverage != want || len(l.Records) < 20 {
			t.Fatalf("%s store: logprint --json exit %d (%v): coverage %q, %d records", want, code, err, l.CRCCoverage, len(l.Records))
		}

		// The 5th record's watermark, one bit off: in the CRC under
		// whole coverage, checked against its complement under xfs.
		victim := l.Records[5]
		logPath := filepath.Join(dir, "log")
		img, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		img[victim.Offset+335] ^= 1
		if err := os.WriteFile(logPath, img, 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out, errs := runCapture(t, "logprint", dir); code != 1 || !strings.Contains(errs, victim.LSN) || !strings.Contains(out, "corrupt") {
			t.Fatalf("%s store: logprint of a damaged watermark: exit %d, %q", want, code, errs)
		}
		code, out, _ = runCapture(t, "check", dir)
		if code != 1 || !strings.Contains(out, "CORRUPT") || !strings.Contains(out, victim.LSN) {
			t.Fatalf("%s store: check of a damaged watermark: exit %d\n%s", want, code, out)
		}
		if want == "xfs" && !strings.Contains(out, "disagrees with its complement") {
			t.Errorf("check of a damaged watermark under xfs coverage does not say so:\n%s", out)
		}
	}
}
