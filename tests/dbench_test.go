package tests

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var dbenchSeconds = flag.Int("dbench-seconds", 10, "how long each dbench run of TestDbench lasts (dbench -t)")

// dbenchLoadfiles are where Debian's dbench package has put its client
// load file over the years.
var dbenchLoadfiles = []string{"/usr/share/dbench/client.txt", "/usr/share/dbench/client.plain"}

// requireDbench returns the dbench binary and its load file, and fails the
// test when either is missing.
func requireDbench(t testing.TB) (bin, loadfile string) {
	t.Helper()
	bin, err := exec.LookPath("dbench")
	if err != nil {
		t.Fatalf("dbench is missing (%v): `make test` installs it (Debian package dbench)", err)
	}
	for _, f := range dbenchLoadfiles {
		if _, err := os.Stat(f); err == nil {
			return bin, f
		}
	}
	t.Fatalf("dbench's load file is in none of %q: reinstall dbench (`make test` installs it)", dbenchLoadfiles)
	return "", ""
}

var dbenchThroughputRE = regexp.MustCompile(`(?m)^Throughput ([0-9.]+) MB/sec\s+(\d+) clients.*$`)

// dbench's output is judged line by line. The lines of a healthy run have
// known shapes (dbenchNormal); a few lines that sound alarming are known to
// be harmless (dbenchHarmless, each with the reason). Any other line that
// mentions a problem fails the test: dbench 4.0 reports a failed or
// unexpected operation with lines such as "[12] open x failed for handle 9
// (No such file or directory)", "[3] open x succeeded for handle 9" (an
// open the load file expected to fail), "(34) ERROR: handle 9 was not
// found", "[5] unlink x failed (...) - expected NT_STATUS_OK", "[7] wrote 3
// bytes, expected to write 4 bytes on handle 2", "file table full for x",
// "[1] Unknown operation Foo in pid 9", "Child failed with status 1".
var (
	dbenchNormal = []*regexp.Regexp{
		regexp.MustCompile(`^dbench version [0-9.]+ - Copyright Andrew Tridgell 1999-2004$`),
		regexp.MustCompile(`^Running for \d+ seconds with load '[^']*' and minimum warmup \d+ secs$`),
		regexp.MustCompile(`^\d+ of \d+ processes prepared for launch +\d+ sec$`),
		regexp.MustCompile(`^releasing clients$`),
		regexp.MustCompile(`^ *\d+ +\d+ +[0-9.]+ MB/sec +(warmup|execute) +\d+ sec +latency [0-9.]+ ms$`),
		regexp.MustCompile(`^ *\d+ +cleanup +\d+ sec$`),
		regexp.MustCompile(`^ Operation +Count +AvgLat +MaxLat$`),
		regexp.MustCompile(`^ -+$`),
		regexp.MustCompile(`^ [A-Za-z]+ +\d+ +[0-9.]+ +[0-9.]+$`),
		dbenchThroughputRE,
		regexp.MustCompile(`^$`),
	}
	dbenchHarmless = []dbenchHarmlessLine{
		{regexp.MustCompile(`^failed to create barrier semaphore *$`),
			"dbench tests semget's result with !, so the valid id 0 that a fresh IPC namespace hands out reads as a failure; " +
				"the semaphore works (dbench exits when semop on it fails, and it did not)"},
	}
	dbenchProblemRE = regexp.MustCompile(`(?i)\b(fail\w*|error\w*|unexpected|expected|warning|succeeded for handle|table full|unknown|not found|invalid|badly formed|can't|cannot|out of memory|doesn't exist)\b`)
)

type dbenchHarmlessLine struct {
	re  *regexp.Regexp
	why string
}

// dbenchProblems returns the lines of dbench's output that report a
// problem, and the harmless lines that only sound like one (with why).
func dbenchProblems(out []byte) (problems, harmless []string) {
	for _, line := range strings.Split(strings.ReplaceAll(string(out), "\r", "\n"), "\n") {
		line = strings.TrimRight(line, " \t")
		if slices.ContainsFunc(dbenchNormal, func(re *regexp.Regexp) bool { return re.MatchString(line) }) {
			continue
		}
		if i := slices.IndexFunc(dbenchHarmless, func(h dbenchHarmlessLine) bool { return h.re.MatchString(line) }); i >= 0 {
			harmless = append(harmless, fmt.Sprintf("%q: %s", line, dbenchHarmless[i].why))
			continue
		}
		if dbenchProblemRE.MatchString(line) {
			problems = append(problems, line)
		}
	}
	return problems, harmless
}

// TestDbench runs "dbench 4" for 10 seconds, without and with -F (fsync
// after every write), in each checksum mode, on a fresh mount each time:
// dbench must report no failed operation and a throughput; the mount's
// counters must show that the mode was the one asked for; and the store must
// pass "xlogfs check" after the unmount.
func TestDbench(t *testing.T) {
	bin, loadfile := requireDbench(t)
	for _, mode := range []string{"batched", "xfs", "sector", "inline"} {
		for _, fsync := range []bool{false, true} {
			name := mode
			if fsync {
				name += "/fsync"
			}
			t.Run(name, func(t *testing.T) {
				store, mnt := newStore(t)
				m := mountDaemon(t, store, mnt, "--cksum-mode", mode)
				args := []string{"-c", loadfile, "-D", mnt, "-t", fmt.Sprint(*dbenchSeconds)}
				if fsync {
					args = append(args, "-F")
				}
				args = append(args, "4")
				// dbench stops by itself after -t; a hang is a failure,
				// not something to wait out forever.
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*dbenchSeconds)*time.Second+3*time.Minute)
				defer cancel()
				out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
				command := "dbench " + strings.Join(args, " ")
				if err != nil {
					t.Errorf("%s: %v\n%s", command, err, tail(out, 60))
				}
				problems, harmless := dbenchProblems(out)
				if len(problems) > 0 {
					t.Errorf("%s reported problems:\n%s", command, strings.Join(problems[:min(len(problems), 20)], "\n"))
				}
				for _, h := range harmless {
					t.Logf("dbench printed a harmless line: %s", h)
				}
				tp := dbenchThroughputRE.FindSubmatch(out)
				if tp == nil {
					t.Errorf("%s printed no throughput line:\n%s", command, tail(out, 60))
				} else {
					t.Logf("dbench %s4 on --cksum-mode %s: %s", map[bool]string{true: "-F "}[fsync], mode, tp[0])
				}

				stats := readStats(t, mnt)
				records, calls, bytes := statUint(t, stats, "cksum_records"), statUint(t, stats, "cksum_calls"), statUint(t, stats, "cksum_bytes")
				if stats["cksum_mode"] != mode || records == 0 {
					t.Errorf(".stats after dbench: cksum_mode %q, %d records; want %s and records", stats["cksum_mode"], records, mode)
				}
				// The crc32c calls per record are what the mode is about.
				switch mode {
				case "batched":
					if calls != records {
						t.Errorf("batched: %d crc32c calls for %d records, want one per record", calls, records)
					}
				case "xfs":
					if calls < 2*records || calls >= bytes/512 {
						t.Errorf("xfs: %d crc32c calls for %d records of %d bytes, want one per header block plus one for the payload", calls, records, bytes)
					}
				case "sector":
					if calls < bytes/512 || calls > bytes/512+records {
						t.Errorf("sector: %d crc32c calls for %d records of %d bytes, want one per 512-byte block", calls, records, bytes)
					}
				case "inline":
					// At seal only the header blocks (and the padding); the
					// payload went through CopyUpdate as ops were copied in.
					seal, copied := statUint(t, stats, "cksum_seal_calls"), statUint(t, stats, "cksum_copy_calls")
					if seal < records || seal > 2*records || copied < records || statUint(t, stats, "cksum_copy_bytes") == 0 {
						t.Errorf("inline: %d crc32c calls at seal and %d at copy for %d records, want 1-2 per record at seal and the ops' at copy", seal, copied, records)
					}
				}
				if fsync && statUint(t, stats, "fsyncs") == 0 {
					t.Errorf("dbench -F: the journal counted no fsync")
				}
				m.unmount(t)
				checkStore(t, store, true)
			})
		}
	}
}

// tail returns the last n lines of out.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// TestDbenchOutputJudged holds the line classification to dbench 4.0's
// own messages: a clean run's output (with the semaphore line a fresh IPC
// namespace brings) has no problem, and every problem message of dbench's
// sources, filled in as dbench prints it, is one.
func TestDbenchOutputJudged(t *testing.T) {
	clean := `dbench version 4.00 - Copyright Andrew Tridgell 1999-2004

Running for 3 seconds with load '/usr/share/dbench/client.txt' and minimum warmup 0 secs
failed to create barrier semaphore 
1 of 2 processes prepared for launch   0 sec
2 of 2 processes prepared for launch   0 sec
releasing clients
   2     26696   321.52 MB/sec  warmup   1 sec  latency 74.277 ms
   2     44863   259.61 MB/sec  execute   2 sec  latency 65.822 ms
   2  cleanup   3 sec
   0  cleanup   3 sec

 Operation      Count    AvgLat    MaxLat
 ----------------------------------------
 NTCreateX      23524     0.101    37.335
 Flush           1658     1.011    14.327

Throughput 259.61 MB/sec  2 clients  2 procs  max_latency=74.277 ms
`
	problems, harmless := dbenchProblems([]byte(clean))
	if len(problems) != 0 {
		t.Errorf("a clean run's output has problems: %q", problems)
	}
	if len(harmless) != 1 || !strings.Contains(harmless[0], "barrier semaphore") {
		t.Errorf("harmless lines of a clean run: %q, want the semaphore line", harmless)
	}
	for _, line := range []string{
		"[12] fsetxattr failed - No space left on device",
		"file table full for ./clients/client1/~dmtmp/WORD/CHAP10.DOC",
		"ERROR: child 3 failed at line 412",
		`[4] open directory "./clients" for sync failed: Permission denied`,
		`[4] datasync directory "./clients" failed: Input/output error`,
		"[4] close directory failed: Bad file descriptor",
		"[5] unlink ./clients/client1/x failed (No such file or directory) - expected NT_STATUS_OK",
		"[5] rmdir ./clients/client1/d failed (Directory not empty) - expected NT_STATUS_OK",
		"[12] open ./clients/client1/x failed for handle 9 (No such file or directory)",
		"[12] open ./clients/client1/x succeeded for handle 9",
		"(34) ERROR: handle 9 was not found",
		"[7] write failed on handle 2 (No space left on device)",
		"[7] wrote 3 bytes, expected to write 4 bytes on handle 2",
		"[7] read failed on handle 2 (Input/output error)",
		"[8] rename a b failed - file doesn't exist",
		"[8] rename a b failed (Invalid argument) - expected NT_STATUS_OK",
		"can't get private shared memory of 1024 bytes: Cannot allocate memory",
		"failed to initialize the barrier semaphore",
		"failed to use the barrier semaphore in child 2",
		"failed to release barrier",
		"Child failed with status 1",
		"FAILED TO START 4 CLIENTS (started 3)",
		"Badly formed status at line 12",
		"[1] Unknown operation Foo in pid 9",
		"Out of memory",
		"dbench: error opening '/x': No such file or directory",
		"an unexpected line",
	} {
		if problems, _ := dbenchProblems([]byte(clean + line + "\n")); len(problems) != 1 || problems[0] != line {
			t.Errorf("%q: judged as %q, want it reported as a problem", line, problems)
		}
	}
}
