package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestInlineStoreInOtherModes: a store written with --cksum-mode inline
// passes "xlogfs check" and mounts with --cksum-mode batched, which reads
// everything back and writes more; the store checks clean again and an
// inline mount reads it all. The CRC on disk is the same in every mode.
func TestInlineStoreInOtherModes(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	want := map[string][]byte{}
	write := func(mode string, n int) {
		t.Helper()
		for i := range n {
			name := fmt.Sprintf("%s-%d", mode, i)
			b := bytes.Repeat([]byte(name+" "), 1+i*9000) // up to ~1 MiB: records of every size
			f, err := os.Create(filepath.Join(mnt, name))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(b); err != nil {
				t.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			want[name] = b
		}
	}
	verify := func(when string) {
		t.Helper()
		for name, b := range want {
			got, err := os.ReadFile(filepath.Join(mnt, name))
			if err != nil || !bytes.Equal(got, b) {
				t.Fatalf("%s: %s: %d bytes (%v), want %d", when, name, len(got), err, len(b))
			}
		}
	}
	for i, mode := range []string{"inline", "batched", "inline"} {
		m := mountDaemon(t, store, mnt, "--journal", "data", "--cksum-mode", mode)
		verify(fmt.Sprintf("mounted %s after %d mounts", mode, i))
		if st := readStats(t, mnt); st["cksum_mode"] != mode {
			t.Fatalf(".stats cksum_mode %q, want %s", st["cksum_mode"], mode)
		}
		write(fmt.Sprintf("%s%d", mode, i), 12)
		if mode == "inline" && statUint(t, readStats(t, mnt), "cksum_copy_bytes") == 0 {
			t.Error("inline mount: no checksum work at copy time")
		}
		m.unmount(t)
		checkStore(t, store, true)
	}
}
