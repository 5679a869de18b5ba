package store_test

import (
	"os"
	"path/filepath"
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
