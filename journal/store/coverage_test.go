package store_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/logbuf"
)

// The CRC coverage is one byte of the superblock, at 40: zero (whole) in
// the superblocks of stores made before it was a choice, so those read as
// whole; mkfs records the one it is given; a value this xlogfs does not
// know is refused, naming the file and the offset.
func TestSuperblockCoverage(t *testing.T) {
	for _, cov := range []logbuf.Coverage{logbuf.CoverWhole, logbuf.CoverXFS} {
		dir := t.TempDir()
		sb := mkfs(t, dir, store.MkfsOptions{Coverage: cov})
		b, err := os.ReadFile(filepath.Join(dir, store.SuperblockName))
		if err != nil {
			t.Fatal(err)
		}
		if sb.Coverage != cov || b[40] != byte(cov) {
			t.Errorf("mkfs with %s coverage: superblock says %s, byte 40 is %d", cov, sb.Coverage, b[40])
		}
		got, err := store.ReadSuperblock(store.OSFS(), dir)
		if err != nil || got.Coverage != cov {
			t.Errorf("%s coverage read back as %v (%v)", cov, got, err)
		}
		// Every other byte is as a store made before coverage has it:
		// the rest of the superblock up to its CRC is zero past 40.
		for i, c := range b[41:508] {
			if c != 0 {
				t.Fatalf("%s coverage: superblock byte %d is %#x, want zero", cov, 41+i, c)
			}
		}
	}

	dir := t.TempDir()
	mkfs(t, dir, store.MkfsOptions{})
	superblockWith(t, dir, func(b []byte) { b[40] = 7 })
	_, err := store.ReadSuperblock(store.OSFS(), dir)
	wantErr(t, err, filepath.Join(dir, store.SuperblockName)+": ", "unknown CRC coverage 7 at offset 40")

	if _, err := store.Mkfs(t.TempDir(), store.MkfsOptions{LogSize: store.MinLogSize, Coverage: 2}); err == nil {
		t.Error("Mkfs with coverage 2 succeeded")
	}
}

// A lost superblock is rebuilt with the coverage the log's records verify
// under: an xfs-coverage store's superblock comes back xfs, as mkfs wrote
// it, and a log whose records verify under both is refused, since which is
// the store's is not known.
func TestRebuildSuperblockCoverage(t *testing.T) {
	dir := t.TempDir()
	sb := mkfs(t, dir, store.MkfsOptions{LogSize: 2 << 20, LogBSize: 64 << 10, Coverage: logbuf.CoverXFS})
	path := filepath.Join(dir, store.SuperblockName)
	orig := readBytes(t, path)
	logRecordsCov(t, dir, sb.UUID, sb.LogBSize, logbuf.CoverXFS, 0, 3)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	p := rebuild(t, dir)
	if p.Superblock != *sb || p.Records != 3 || !strings.Contains(p.CoverageFrom, "verify under") {
		t.Errorf("plan %+v, want superblock %+v, its coverage from the 3 records", p, *sb)
	}
	if got := readBytes(t, path); !bytes.Equal(got, orig) {
		t.Error("the rebuilt superblock differs from the one mkfs wrote")
	}

	// Records of both coverages: not the log of one store.
	logRecordsCov(t, dir, sb.UUID, sb.LogBSize, logbuf.CoverWhole, 100, 2)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err := store.PlanSuperblock(store.OSFS(), dir)
	wantErr(t, err, "cannot rebuild", "2 records verify under whole CRC coverage and 3 records under xfs")
}
