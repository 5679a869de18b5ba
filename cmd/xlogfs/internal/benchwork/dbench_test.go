package benchwork

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
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

// An interrupted dbench stops with all its clients: stopping its parent
// alone left the clients running, holding the directory (a mount the
// bench must then unmount) and dbench's output open, and the bench waited
// on them for ever.
func TestDbenchInterruptStopsClients(t *testing.T) {
	if err := RequireCommand("dbench", "dbench"); err != nil {
		t.Skip(err)
	}
	if _, err := dbenchClientFile(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	cfg := benchreport.Config{Workload: "dbench", Duration: time.Minute, Clients: 2}
	interrupted := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := Run(cfg, dir, benchreport.Target{Name: "native", Kind: "native"}, NewProgress("", cfg.Duration, false), interrupted)
		done <- err
	}()
	time.Sleep(2 * time.Second)
	close(interrupted)
	select {
	case err := <-done:
		if err == nil {
			t.Error("an interrupted dbench reported success")
		}
	case <-time.After(50 * time.Second):
		t.Fatalf("dbench's run did not end after the interrupt; still running: %q", dbenchesIn(dir))
	}
	if left := dbenchesIn(dir); len(left) > 0 {
		t.Errorf("dbench processes left running after the interrupt: %q", left)
	}
}

// dbenchesIn lists the dbench processes working in dir.
func dbenchesIn(dir string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		cmd := strings.Join(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), " ")
		if strings.HasPrefix(filepath.Base(strings.Fields(cmd)[0]), "dbench") && strings.Contains(cmd, dir) {
			out = append(out, filepath.Dir(p)+": "+cmd)
		}
	}
	return out
}
