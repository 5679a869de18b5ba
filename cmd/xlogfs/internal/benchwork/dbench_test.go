package benchwork

import (
	"os"
	"testing"
)

// testdata/dbench-F-2clients.txt is the output of dbench 4.0 -F with 2
// clients for 3 s, run under strace -f -c -e trace=fsync,fdatasync, which
// counted 1631 fsync calls and no fdatasync: its summary's WriteX (1515)
// and Flush (116), as DbenchFsyncs counts them. (With -t 3 its warmup, a
// fifth of -t in whole seconds, is none.)
func TestDbenchFsyncsRecorded(t *testing.T) {
	b, err := os.ReadFile("testdata/dbench-F-2clients.txt")
	if err != nil {
		t.Fatal(err)
	}
	ops := DbenchOps(string(b))
	if len(ops) != 16 || ops["WriteX"] != 1515 || ops["Flush"] != 116 || ops["NTCreateX"] != 1619 {
		t.Errorf("dbench's operations %v: want 16 of them, WriteX 1515, Flush 116, NTCreateX 1619", ops)
	}
	if got := DbenchFsyncs(ops); got != 1631 {
		t.Errorf("fsyncs %d, want 1631 (strace's count)", got)
	}
}

// testdata/dbench-F-2clients-5s.txt: the same for 5 s, where dbench warms
// up for at least a second first. strace counted 2015 fsyncs; the summary
// counts the execute phase's alone (1030 WriteX + 141 Flush): dbench's
// count does not cover its run, and the bench counts fsyncs in the
// filesystem instead.
func TestDbenchSummaryOmitsWarmup(t *testing.T) {
	b, err := os.ReadFile("testdata/dbench-F-2clients-5s.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := DbenchFsyncs(DbenchOps(string(b))); got != 1171 {
		t.Errorf("fsyncs in the summary %d, want 1171 (strace counted 2015 over the run)", got)
	}
}
