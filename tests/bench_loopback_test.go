package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// mountLoopbackForeground serves dir at mnt with "xlogfs loopback-mount
// FLAGS dir mnt" (in the foreground: it serves until unmounted) under the
// harness's mount, so the mount is undone however the test ends.
func mountLoopbackForeground(t *testing.T, dir, mnt string, flags ...string) *mount {
	t.Helper()
	args := append(append([]string{"loopback-mount"}, flags...), dir, mnt)
	return serveForeground(t, &mount{t: t, store: dir, dir: mnt, flags: flags}, args)
}

// TestLoopbackFlushLatency: "xlogfs loopback-mount --flush-latency D", the
// bench's loopback baseline on an emulated device, takes the emulated
// flush in every FSYNC and FSYNCDIR it serves, and counts each in its
// --stats (flushes_emulated): as many as the fsyncs of files and of
// directories made through it. Without --flush-latency it emulates none.
func TestLoopbackFlushLatency(t *testing.T) {
	for _, c := range []struct {
		name  string
		flags []string
		lat   int64 // flush_latency_ns
		emul  bool
	}{
		{"emulated", []string{"--flush-latency", "20ms"}, 20e6, true},
		{"off", nil, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			dir, mnt, stats := filepath.Join(base, "dir"), filepath.Join(base, "mnt"), filepath.Join(base, "loopback.stats")
			for _, d := range []string{dir, mnt} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			m := mountLoopbackForeground(t, dir, mnt, append([]string{"--handle-killpriv-v2", "--stats", stats}, c.flags...)...)
			const fileSyncs, dirSyncs = 3, 2
			f, err := os.Create(filepath.Join(mnt, "f"))
			if err != nil {
				t.Fatal(err)
			}
			for i := range fileSyncs {
				if _, err := f.WriteString("x"); err != nil {
					t.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					t.Fatalf("fsync %d through the loopback: %v", i, err)
				}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(mnt, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			for i, d := range []string{mnt, filepath.Join(mnt, "sub")}[:dirSyncs] {
				df, err := os.Open(d)
				if err != nil {
					t.Fatal(err)
				}
				// A directory handle still lists its entries.
				if names, err := df.Readdirnames(-1); err != nil || i == 0 && len(names) != 2 {
					t.Errorf("listing %s: %v, %v; want f and sub", d, names, err)
				}
				if err := df.Sync(); err != nil {
					t.Fatalf("fsync of the directory %s: %v", d, err)
				}
				df.Close()
			}
			m.unmount(t)
			b, err := os.ReadFile(stats)
			if err != nil {
				t.Fatalf("no --stats written at unmount: %v", err)
			}
			st := map[string]int64{}
			for _, l := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(l, " "); ok {
					if n, err := strconv.ParseInt(v, 10, 64); err == nil {
						st[k] = n
					}
				}
			}
			if st["fuse_FSYNC"] != fileSyncs || st["fuse_FSYNCDIR"] != dirSyncs {
				t.Fatalf("the loopback served %d FSYNC and %d FSYNCDIR, want %d and %d:\n%s", st["fuse_FSYNC"], st["fuse_FSYNCDIR"], fileSyncs, dirSyncs, b)
			}
			want := int64(0)
			if c.emul {
				want = fileSyncs + dirSyncs
			}
			if got, ok := st["flushes_emulated"]; !ok || got != want || st["flush_latency_ns"] != c.lat {
				t.Errorf("flushes_emulated %d (present %v), flush_latency_ns %d; want %d emulated flushes (one per fsync served) at %d ns:\n%s",
					got, ok, st["flush_latency_ns"], want, c.lat, b)
			}
		})
	}
}
