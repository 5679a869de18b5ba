package statsfile

import (
	"bytes"
	"strings"
	"testing"
)

// TestParseRejects checks that Parse refuses malformed lines, naming
// the line, and that a text value runs to the end of its line.
func TestParseRejects(t *testing.T) {
	for _, text := range []string{
		"novalue\n",
		" leading 1\n",
		"fsync_us_hist 8 9\n",
		"fsync_us_hist 9 8 1\n",
		"fsync_us_hist 16 18 1\nfsync_us_hist 8 9 1\n",
	} {
		if _, err := Parse([]byte(text)); err == nil || !strings.Contains(err.Error(), "line") {
			t.Errorf("Parse(%q) = %v, want an error naming the line", text, err)
		}
	}
	f, err := Parse([]byte("state degraded: checkpoint failed: no space\nprocess_cpu_ns 12\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Value("state"); v != "degraded: checkpoint failed: no space" {
		t.Errorf("state %q: a value runs to the end of its line", v)
	}
}

// TestHistSub checks a histogram's difference from an earlier reading.
func TestHistSub(t *testing.T) {
	before := Hist{Name: HistFsync, Buckets: []Bucket{{Lo: 8, Hi: 9, Count: 2}, {Lo: 16, Hi: 18, Count: 5}}}
	after := Hist{Name: HistFsync, Buckets: []Bucket{{Lo: 8, Hi: 9, Count: 2}, {Lo: 16, Hi: 18, Count: 7}, {Lo: 1024, Hi: 1152, Count: 1}}}
	d := after.Sub(before)
	if len(d.Buckets) != 2 || d.Buckets[0] != (Bucket{Lo: 16, Hi: 18, Count: 2}) || d.Buckets[1] != (Bucket{Lo: 1024, Hi: 1152, Count: 1}) || d.Count() != 3 {
		t.Errorf("after - before = %+v", d.Buckets)
	}
	if p := d.Percentile(100); p != 1088 {
		t.Errorf("max of the difference %v, want the middle of [1024,1152)", p)
	}
}

// TestXFSLogLine: the log's counters in XFS's words are the fields they
// name (a record is a log write, its bytes in 512-byte blocks, a wait for
// an iclog is noiclogs, every force request is force, and a force that
// waited for log I/O is force_sleep), written to .stats and read back.
func TestXFSLogLine(t *testing.T) {
	s := Stats{Records: 7, RecordBytes: 7 * 9 * 512, IclogWaits: 3, ForceRequests: 40, LogForces: 11}
	want := XFSLog{Writes: 7, Blocks: 63, NoIclogs: 3, Force: 40, ForceSleep: 11}
	if got := s.XFSLog(); got != want {
		t.Fatalf("XFSLog %+v, want %+v", got, want)
	}
	if got := want.Line(); got != "log 7 63 3 40 11" {
		t.Errorf("Line %q", got)
	}
	var b bytes.Buffer
	if _, err := s.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]float64{"xfs_log_writes": 7, "xfs_log_blocks": 63, "xfs_log_noiclogs": 3, "xfs_log_force": 40, "xfs_log_force_sleep": 11} {
		if got, ok := f.Number(name); !ok || got != v {
			t.Errorf("%s = %v (%v), want %v", name, got, ok, v)
		}
	}
}
