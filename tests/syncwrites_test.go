package tests

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// routeStats is the .stats counters of the write routes and of the syncs.
type routeStats struct {
	pt, log, daemon, writes, dataSyncs, logSyncs, fsyncs, ckpts uint64
}

func readRoutes(t *testing.T, mnt string) routeStats {
	t.Helper()
	s := readStats(t, mnt)
	return routeStats{
		pt: statUint(t, s, "opens_passthrough"), log: statUint(t, s, "opens_log_route"), daemon: statUint(t, s, "opens_daemon"),
		writes: statCount(t, s, "fuse_WRITE"), dataSyncs: statUint(t, s, "syncs_data"), logSyncs: statUint(t, s, "log_syncs"),
		fsyncs: statUint(t, s, "fsyncs"), ckpts: statUint(t, s, "checkpoints"),
	}
}

// TestSyncWritesRoutes: with passthrough on and --sync-writes auto (the
// default), a new file fsynced after every small write takes the log
// route (its writes reach the daemon, are logged with their bytes, and its
// fsyncs sync no data file), a file written in large pieces without fsync
// takes passthrough at its next open, an O_DSYNC open takes the log route,
// and a file that changed route between opens keeps, across a kill -9,
// every byte an fsync acknowledged on either route.
func TestSyncWritesRoutes(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	// Checkpoints often: a file's logged bytes keep it on the log route
	// until a checkpoint passes them.
	m := mountPassthrough(t, store, mnt, "--sync-writes=auto", "--checkpoint-interval=50ms", "--log-force-interval=1h")

	// A new file, small writes each fsynced: the log route.
	before := readRoutes(t, mnt)
	small := filepath.Join(mnt, "small")
	f, err := os.OpenFile(small, os.O_CREATE|os.O_WRONLY, 0o644)
	mustOK(t, err)
	var smallContent []byte
	for i := range 20 {
		b := pattern(uint64(i), 4096)
		_, err := f.Write(b)
		mustOK(t, err)
		mustOK(t, f.Sync())
		smallContent = append(smallContent, b...)
	}
	mustOK(t, f.Close())
	after := readRoutes(t, mnt)
	if after.log != before.log+1 || after.pt != before.pt {
		t.Errorf("a new file's open: %d log-route and %d passthrough opens; want 1 and 0", after.log-before.log, after.pt-before.pt)
	}
	if w := after.writes - before.writes; w < 20 {
		t.Errorf("%d WRITE requests reached the daemon for 20 writes on the log route", w)
	}
	// The checkpoints sync the data file (at most once each); the fsyncs
	// must not. A checkpoint syncs the data files before it is counted,
	// so one may be between the two as .stats is read (they do not
	// overlap: the checkpoint lock).
	if d, c := after.dataSyncs-before.dataSyncs, after.ckpts-before.ckpts; d > c+1 {
		t.Errorf("20 fsyncs of small writes on the log route synced the data file %d times, with %d checkpoints; want no more than the checkpoints and one in progress (an fsync is a log force alone)", d, c)
	}

	// Large writes, no fsync: the next open is in passthrough.
	stream := filepath.Join(mnt, "stream")
	big := pattern(99, 4<<20)
	mustOK(t, os.WriteFile(stream, big, 0o644)) // a new file: the log route, writes of 1 MiB
	// A file's route is the kernel's for as long as it knows the inode
	// (datafile/route.go): it changes once the kernel forgets it.
	forgetInodes(t, mnt)
	before = readRoutes(t, mnt)
	g, err := os.OpenFile(stream, os.O_WRONLY|os.O_APPEND, 0)
	mustOK(t, err)
	tail := pattern(100, 1<<20)
	_, err = g.Write(tail)
	mustOK(t, err)
	mustOK(t, g.Close())
	after = readRoutes(t, mnt)
	if after.pt != before.pt+1 || after.log != before.log {
		t.Errorf("reopening a file written in 1 MiB pieces without fsync: %d passthrough and %d log-route opens; want 1 and 0", after.pt-before.pt, after.log-before.log)
	}
	if w := after.writes - before.writes; w != 0 {
		t.Errorf("%d WRITE requests reached the daemon through a passthrough open", w)
	}

	// An O_DSYNC open: the log route, whatever the history (once the
	// kernel has forgotten the inode's passthrough backing).
	forgetInodes(t, mnt)
	before = readRoutes(t, mnt)
	h, err := os.OpenFile(stream, os.O_WRONLY|unix.O_DSYNC, 0)
	mustOK(t, err)
	mustOK(t, h.Close())
	after = readRoutes(t, mnt)
	if after.log != before.log+1 {
		t.Errorf("an O_DSYNC open: %d log-route opens; want 1", after.log-before.log)
	}

	// The small file again: still the log route. Then, once a checkpoint
	// has passed its logged bytes, large writes without fsync turn it to
	// passthrough (21 fsyncs for 2.1 MiB: fewer than one per 64 KiB),
	// where an fsynced append must survive kill -9 too.
	f, err = os.OpenFile(small, os.O_WRONLY|os.O_APPEND, 0)
	mustOK(t, err)
	more := pattern(200, 2<<20)
	for i := 0; i < len(more); i += 256 << 10 {
		_, err := f.Write(more[i : i+256<<10])
		mustOK(t, err)
	}
	smallContent = append(smallContent, more...)
	mustOK(t, f.Sync())
	mustOK(t, f.Close())
	time.Sleep(200 * time.Millisecond) // a checkpoint passes the logged bytes
	forgetInodes(t, mnt)
	before = readRoutes(t, mnt)
	f, err = os.OpenFile(small, os.O_WRONLY|os.O_APPEND, 0)
	mustOK(t, err)
	after = readRoutes(t, mnt)
	if after.pt != before.pt+1 {
		t.Errorf("the small file, after 2 MiB in 256 KiB writes and one fsync: %d passthrough opens; want 1", after.pt-before.pt)
	}
	last := pattern(300, 3000)
	_, err = f.Write(last)
	mustOK(t, err)
	mustOK(t, f.Sync())
	smallContent = append(smallContent, last...)
	m.kill9(t)
	m = m.remount(t)
	got, err := os.ReadFile(small)
	mustOK(t, err)
	if !bytes.Equal(got, smallContent) {
		t.Errorf("after kill -9, the file that changed route: %d bytes, want the %d fsynced (equal: %v)", len(got), len(smallContent), bytes.Equal(got[:min(len(got), len(smallContent))], smallContent[:min(len(got), len(smallContent))]))
	}
	got, err = os.ReadFile(stream)
	mustOK(t, err)
	if len(got) < len(big) || !bytes.Equal(got[:len(big)], big) {
		t.Errorf("after kill -9, the streamed file lost bytes a close-and-reopen made durable? %d bytes", len(got))
	}
	m.unmount(t)
	checkStore(t, store, true)
}

// forgetInodes makes the kernel forget the inodes of mnt nobody uses
// (dropping the dentry and inode caches sends FORGET for each), and waits
// until the daemon has taken FORGETs in: the kind of an inode's opens
// holds until then (datafile/route.go).
func forgetInodes(t *testing.T, mnt string) {
	t.Helper()
	forgets := func() uint64 {
		return statCount(t, readStats(t, mnt), "fuse_FORGET") + statCount(t, readStats(t, mnt), "fuse_BATCH_FORGET")
	}
	before := forgets()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0); err != nil {
		t.Fatalf("cannot drop the kernel's inode cache (a file's route changes only once the kernel forgets it): %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for forgets() == before {
		if time.Now().After(deadline) {
			t.Fatal("dropping the kernel's caches sent no FORGET to the daemon")
		}
		time.Sleep(time.Millisecond)
	}
	// The FORGETs come one by one: wait until they stop.
	for last := forgets(); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		now := forgets()
		if now == last {
			break
		}
		last = now
	}
}
