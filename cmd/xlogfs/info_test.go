package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInfoOfAStore checks info of an unmounted store: its geometry from
// the superblock, its state from the log, and a sentence for an argument
// that is no store.
func TestInfoOfAStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	if code, _, errs := runCapture(t, "mkfs", "--log-size", "8m", "--logbsize", "64k", "--crc", "xfs", dir); code != 0 {
		t.Fatalf("mkfs: %s", errs)
	}
	code, out, errs := runCapture(t, "info", dir)
	for _, want := range []string{"store     " + dir + " (uuid ", "log       size 8M, logbsize 64k\n", "checksum  crc covers xfs;", "state     clean (nothing logged since mkfs)", "mounted   no"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("info: exit %d, %q %q; want %q", code, out, errs, want)
		}
	}
	code, out, _ = runCapture(t, "info", "--json", dir)
	var in storeInfo
	if err := json.Unmarshal([]byte(out), &in); code != 0 || err != nil || in.LogSize != 8<<20 || in.LogBSize != 64<<10 || in.CRC != "xfs" || len(in.MountedAt) != 0 {
		t.Errorf("info --json: exit %d, %v, %+v", code, err, in)
	}
	file := filepath.Join(t.TempDir(), "README.md")
	os.WriteFile(file, []byte("x"), 0o644)
	other := t.TempDir()
	for arg, want := range map[string]string{
		file:  "xlogfs info: " + file + " is a file, not a directory",
		other: "xlogfs info: " + other + " is neither an xlogfs store nor the mount point of one",
	} {
		if code, _, errs := runCapture(t, "info", arg); code != 1 || !strings.HasPrefix(errs, want) {
			t.Errorf("info %s: exit %d, %q; want %q", arg, code, errs, want)
		}
	}
}
