package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// logFills is how many times over TestSmallLogKeepsGoing writes its log.
const logFills = 8

// TestSmallLogKeepsGoing fills a 1 MiB log many times over, in both journal
// modes, with the iclog geometry the mount picks for a small log and with
// the smallest one (--logbsize 32k --logbufs 2): a full log must make
// writers wait for a checkpoint, never fail them. Then everything written
// must survive an unmount and a remount.
func TestSmallLogKeepsGoing(t *testing.T) {
	t.Parallel()
	for _, journal := range journalModes {
		for _, geometry := range [][]string{nil, {"--logbsize", "32k", "--logbufs", "2"}} {
			name := "journal=" + journal
			if geometry != nil {
				name += "/" + strings.Join(geometry, " ")
			}
			t.Run(name, func(t *testing.T) {
				store, mnt := newStore(t)
				mkfs(t, store, "--log-size", "1m")
				m := mountDaemon(t, store, mnt, append([]string{"--journal", journal}, geometry...)...)
				stats := readStats(t, mnt)
				logSize := statUint(t, stats, "log_size")
				if logSize != 1<<20 {
					t.Fatalf(".stats log_size = %d, want the 1 MiB of mkfs --log-size 1m", logSize)
				}
				t.Logf("geometry: logbsize %s, logbufs %s", stats["logbsize"], stats["logbufs"])

				want := fillLog(t, mnt, journal, logFills*logSize)

				stats = readStats(t, mnt)
				written, checkpoints := statUint(t, stats, "log_bytes"), statUint(t, stats, "checkpoints")
				t.Logf("%d bytes of log records written to the %d-byte log; %d checkpoints, %d waits for log space, head %s",
					written, logSize, checkpoints, statUint(t, stats, "log_space_waits"), stats["log_head"])
				// The log holds at most logSize bytes between checkpoints,
				// so writing it N times over takes at least N-1 of them.
				if checkpoints < written/logSize-1 {
					t.Errorf("%d bytes went through a %d-byte log with only %d checkpoints: live records must have been overwritten", written, logSize, checkpoints)
				}
				cycleText, _, _ := strings.Cut(stats["log_head"], ",")
				if cycle, err := strconv.Atoi(cycleText); err != nil || cycle < logFills {
					t.Errorf("the log head is at %s after writing the log %d times over; want cycle %d or more", stats["log_head"], logFills, logFills)
				}
				want.check(t, mnt)
				m.unmount(t)
				checkStore(t, store, true)
				m = m.remount(t)
				want.check(t, mnt)
				m.unmount(t)
				checkStore(t, store, true)
			})
		}
	}
}

// fillLog writes to the mount until the journal has written at least
// logBytes of log records, failing the test at the first error. In
// metadata mode the log carries metadata only, so the workload is mostly
// metadata with large payloads: 4 KiB xattr values, long symlink targets,
// creates, renames and unlinks. Every 32 operations it fsyncs. It returns
// the tree the mount must hold.
func fillLog(t *testing.T, mnt, journal string, logBytes uint64) expectedTree {
	want := expectedTree{}
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	must := func(err error, op int, what string) {
		t.Helper()
		if err != nil {
			t.Fatalf("operation %d, %s: %v (a full log must make writers wait, not fail)", op, what, err)
		}
	}
	must(os.Mkdir(p("churn"), 0o755), 0, "mkdir churn")
	want["churn"] = &expectedFile{kind: unix.S_IFDIR, perm: 0o755}
	stream, err := os.OpenFile(p("stream"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	must(err, 0, "create stream")
	defer stream.Close()
	want["stream"] = &expectedFile{kind: unix.S_IFREG, perm: 0o644}
	chunk := 4 << 10
	if journal == "data" {
		chunk = 256 << 10 // more than a transaction may carry: split
	}
	const maxOps = 200_000
	for op := 1; ; op++ {
		if op > maxOps {
			t.Fatalf("%d operations did not write %d bytes of log records", maxOps, logBytes)
		}
		i := op / 8 // the entries in churn come and go in groups of eight operations
		name := fmt.Sprintf("churn/f%05d", i)
		switch op % 8 {
		case 0:
			content := pattern(uint64(op), chunk)
			_, err := stream.Write(content)
			must(err, op, "append to stream")
			want["stream"].content = append(want["stream"].content, content...)
		case 1:
			content := pattern(uint64(op), 512)
			must(os.WriteFile(p(name), content, 0o644), op, "create "+name)
			want[name] = &expectedFile{kind: unix.S_IFREG, perm: 0o644, content: content}
		case 2, 3:
			value := pattern(uint64(op), 4<<10)
			attr := fmt.Sprintf("user.a%d", op%8)
			must(unix.Setxattr(p(name), attr, value, 0), op, "setxattr "+name)
			if want[name].xattrs == nil {
				want[name].xattrs = map[string][]byte{}
			}
			want[name].xattrs[attr] = value
		case 4:
			target := strings.Repeat(fmt.Sprintf("%05d/", i), 400)
			link := name + ".link"
			must(os.Symlink(target, p(link)), op, "symlink "+link)
			want[link] = &expectedFile{kind: unix.S_IFLNK, target: target}
		case 5:
			must(os.Rename(p(name), p(name+".renamed")), op, "rename "+name)
			want.rename(name, name+".renamed")
		case 6:
			must(os.Chmod(p(name+".renamed"), 0o600), op, "chmod "+name+".renamed")
			want[name+".renamed"].perm = 0o600
		case 7:
			// Keep the last few groups; drop older ones, so the
			// metadata (and each checkpoint) stays small while the
			// log keeps filling.
			if old := fmt.Sprintf("churn/f%05d", i-4); want[old+".renamed"] != nil {
				must(os.Remove(p(old+".renamed")), op, "unlink "+old+".renamed")
				must(os.Remove(p(old+".link")), op, "unlink "+old+".link")
				delete(want, old+".renamed")
				delete(want, old+".link")
			}
		}
		if op%32 == 0 {
			must(stream.Sync(), op, "fsync stream")
			if statUint(t, readStats(t, mnt), "log_bytes") >= logBytes {
				break
			}
		}
	}
	must(stream.Close(), 0, "close stream")
	return want
}
