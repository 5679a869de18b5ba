package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogItemsAcrossMounts: a store whose log holds XFS log items (the
// default, --log-items xfs) recovers from a kill -9 and passes check,
// logprint names its items, and it mounts with --log-items logical and
// back, each mount recovering what the other left in the log.
func TestLogItemsAcrossMounts(t *testing.T) {
	store, mnt := newStore(t)
	work := func(round string) {
		t.Helper()
		dir := filepath.Join(mnt, "d-"+round)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 40 { // past shortform: the directory takes a block
			name := filepath.Join(dir, strings.Repeat("f", 10)+string(rune('a'+i%26))+string(rune('a'+i/26)))
			if err := os.WriteFile(name, []byte(round+name), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink("/somewhere/"+round, filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "ffffffffffaa"), filepath.Join(mnt, "moved-"+round)); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, "ffffffffffba")); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{filepath.Join(mnt, "moved-"+round), dir, mnt} {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
	verify := func(rounds ...string) {
		t.Helper()
		for _, round := range rounds {
			dir := filepath.Join(mnt, "d-"+round)
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) != 39 { // 40 files, one moved out, one removed, and the link
				t.Errorf("%s holds %d entries after recovery, want 39", dir, len(ents))
			}
			moved := filepath.Join(mnt, "moved-"+round)
			if b, err := os.ReadFile(moved); err != nil || string(b) != round+filepath.Join(dir, "ffffffffffaa") {
				t.Errorf("%s after recovery: %q, %v", moved, b, err)
			}
			if l, err := os.Readlink(filepath.Join(dir, "link")); err != nil || l != "/somewhere/"+round {
				t.Errorf("the symlink of round %s after recovery: %q, %v", round, l, err)
			}
		}
	}

	m := mountDaemon(t, store, mnt) // the default: --log-items xfs
	work("xfs")
	m.kill9(t)
	checkStore(t, store, false)
	out, err := xlogfs("logprint", "--transactions", store)
	if err != nil {
		t.Fatalf("logprint: %v\n%s", err, out)
	}
	for _, want := range []string{"inode ino ", "buf dir-block", "buf agi", "trans header"} {
		if !strings.Contains(out, want) {
			t.Errorf("logprint --transactions of a --log-items xfs log shows no %q:\n%s", want, out)
		}
	}

	m = mountDaemon(t, store, mnt, "--log-items", "logical")
	verify("xfs")
	work("logical")
	m.kill9(t)
	checkStore(t, store, false)

	m = mountDaemon(t, store, mnt, "--log-items", "xfs")
	verify("xfs", "logical")
	work("again")
	m.unmount(t)
	checkStore(t, store, true)
	m = mountDaemon(t, store, mnt, "--log-items", "logical")
	verify("xfs", "logical", "again")
	m.unmount(t)
	checkStore(t, store, true)
}
