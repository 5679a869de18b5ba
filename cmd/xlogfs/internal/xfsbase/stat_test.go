package xfsbase

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// The recorded counters of this machine before and after a 3 s dbench -F
// with 4 clients on kernel XFS (a tmpfs-backed loop image, logbsize 256k,
// logbufs 8, Linux 6.18), the only XFS mounted: their difference is that
// run's.
func recorded(t *testing.T) (before, after Stat) {
	t.Helper()
	var err error
	if before, err = ReadStat("testdata/stat-before.txt"); err != nil {
		t.Fatal(err)
	}
	if after, err = ReadStat("testdata/stat-after-dbench.txt"); err != nil {
		t.Fatal(err)
	}
	return before, after
}

func TestParseStatRecorded(t *testing.T) {
	_, after := recorded(t)
	raw, _ := os.ReadFile("testdata/stat-after-dbench.txt")
	if lines := strings.Count(strings.TrimSpace(string(raw)), "\n") + 1; len(after.Names) != lines {
		t.Errorf("%d names from %d lines: %v", len(after.Names), lines, after.Names)
	}
	for name, want := range map[string][]uint64{
		"log":      {6071, 80411, 0, 10098, 14171},
		"trans":    {0, 60517, 0},
		"push_ail": {60521, 0, 55, 0, 0, 0, 0, 0, 0, 0},
		"xstrat":   {5427, 0},
		"xpc":      {258117632, 333373525, 373012480},
		"debug":    {0},
	} {
		if got := after.Fields[name]; !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if after.Names[0] != "extent_alloc" || after.Names[len(after.Names)-1] != "debug" {
		t.Errorf("names out of the file's order: %v", after.Names)
	}
}

func TestDeltaRecorded(t *testing.T) {
	before, after := recorded(t)
	d, err := Delta(before, after)
	if err != nil {
		t.Fatal(err)
	}
	log, err := d.Log()
	if err != nil {
		t.Fatal(err)
	}
	if log != (Log{Writes: 6071, Blocks: 80411, NoIclogs: 0, Force: 10098, ForceSleep: 14171}) {
		t.Errorf("log delta %+v", log)
	}
	// ig's first counter was 1 before the run (the root inode's lookup).
	if got := d.Fields["ig"]; !slices.Equal(got, []uint64{4240, 3748, 0, 492, 0, 0, 1684}) {
		t.Errorf("ig delta %v", got)
	}
	tr, _ := d.Trans()
	if tr != (Trans{Sync: 0, Async: 60517, Empty: 0}) {
		t.Errorf("trans delta %+v", tr)
	}
	named, err := d.Named()
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]uint64{"log_writes": 6071, "log_blocks": 80411, "log_force_sleep": 14171,
		"trans_async": 60517, "push_ail_try_logspace": 60521, "push_ail": 55, "push_ail_flush": 0,
		"xstrat_quick": 5427, "xstrat_split": 0} {
		if named[k] != want {
			t.Errorf("named %s = %d, want %d", k, named[k], want)
		}
	}
	if len(named) != 5+3+10+2 {
		t.Errorf("%d named counters, want 20: %v", len(named), named)
	}
}

func stat(t *testing.T, text string) Stat {
	t.Helper()
	s, err := ParseStat([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A 32-bit counter that wraps past 2^32 is counted across the wrap; one
// reset by stats_clear (gone back by less than half its range), or a
// 64-bit one gone back at all, is an error, never a huge or negative
// difference.
func TestDeltaWrapAndReset(t *testing.T) {
	d, err := Delta(stat(t, "log 4294967000 10 0 0 0\n"), stat(t, "log 200 20 0 0 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Fields["log"][0]; got != 496 {
		t.Errorf("wrapped delta %d, want 496", got)
	}
	// vnodes' first is a level (active inodes), which falls when inodes
	// are reclaimed: no difference, no error; its counters still count.
	d, err = Delta(stat(t, "vnodes 7 10 0 0 0 0 0 0\n"), stat(t, "vnodes 6 12 0 0 0 0 0 0\n"))
	if err != nil || d.Fields["vnodes"][0] != 0 || d.Fields["vnodes"][1] != 2 {
		t.Errorf("vnodes delta %v, %v; want [0 2 ...] and no error", d.Fields["vnodes"], err)
	}
	for _, c := range []struct{ before, after, want string }{
		{"log 1000 10 0 0 0\n", "log 50 20 0 0 0\n", "stats_clear"},
		{"xpc 5000000000 0 0\n", "xpc 100 0 0\n", "stats_clear"},
		{"log 1 2 3 4 5\n", "log 1 2 3 4\n", "has 4 counters, had 5"},
	} {
		_, err := Delta(stat(t, c.before), stat(t, c.after))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Delta(%q, %q) = %v, want an error saying %q", c.before, c.after, err, c.want)
		}
	}
}

func TestParseStatErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"log 1 2 x 4 5\n", "line 1 (log), counter 3"},
		{"log 1\ntrans -1 0 0\n", "line 2 (trans), counter 1"},
		{"log 1\nlog 2\n", `line 2: "log" a second time`},
		{"", "empty"},
	} {
		_, err := ParseStat([]byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseStat(%q) = %v, want an error saying %q", c.text, err, c.want)
		}
	}
	// The lines the bench reports must be there, with their counters.
	if _, err := stat(t, "trans 1 2 3\n").Log(); err == nil || !strings.Contains(err.Error(), `no "log" line`) {
		t.Errorf("Log of a file without it: %v", err)
	}
	if _, err := stat(t, "log 1 2 3\n").Log(); err == nil || !strings.Contains(err.Error(), "want 5") {
		t.Errorf("Log of a short line: %v", err)
	}
}

func TestHeaderBlocks(t *testing.T) {
	for bsize, want := range map[int]int{32 << 10: 1, 64 << 10: 2, 128 << 10: 4, 256 << 10: 8} {
		if got := HeaderBlocks(bsize); got != want {
			t.Errorf("HeaderBlocks(%d) = %d, want %d", bsize, got, want)
		}
	}
}

// xlog_cksum's bytes: 328 of record header per write, 260 per extension
// header past the first 32 KiB of payload, and the payload.
func TestCksumBytes(t *testing.T) {
	for _, c := range []struct {
		writes, blocks uint64
		bsize          int
		want           float64
	}{
		// 256k buffers: 8 header blocks; 10 payload blocks per write.
		{2, 2 * (8 + 10), 256 << 10, 2*328 + 2*10*512},
		// 100 payload blocks (50 KiB) per write: one extension header.
		{3, 3 * (8 + 100), 256 << 10, 3*(328+260) + 3*100*512},
		// 32k buffers: 1 header block, never an extension header.
		{4, 4 * (1 + 64), 32 << 10, 4*328 + 4*64*512},
		{0, 0, 32 << 10, 0},
	} {
		if got := CksumBytes(c.writes, c.blocks, c.bsize); got != c.want {
			t.Errorf("CksumBytes(%d, %d, %d) = %v, want %v", c.writes, c.blocks, c.bsize, got, c.want)
		}
	}
}
