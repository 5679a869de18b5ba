package tests

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
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

var (
	dbenchThroughputRE = regexp.MustCompile(`(?m)^Throughput ([0-9.]+) MB/sec\s+(\d+) clients.*$`)
	// dbench reports a failed operation with lines such as "[12] open
	// ./clients/client1/x failed for handle 9 (No such file or directory)",
	// "(34) ERROR: handle 9 was not found", "[5] unlink x failed (...) -
	// expected NT_STATUS_OK", "Child failed with status 1".
	dbenchErrorRE = regexp.MustCompile(`(?im)^.*\b(error|failed|fail|expected|warning)\b.*$`)
)

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
				if errs := dbenchErrorRE.FindAll(out, 20); len(errs) > 0 {
					t.Errorf("%s reported failed operations:\n%s", command, joinLines(errs))
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

func joinLines(lines [][]byte) string {
	var b strings.Builder
	for _, l := range lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.String()
}
