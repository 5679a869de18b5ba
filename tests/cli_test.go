package tests

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/journal/statsfile"
)

// TestMountRefusals: a mount that cannot work fails before it makes a
// store (a missing mount point, one that is already a FUSE mount, one
// that holds files), and --nonempty mounts over files, which come back
// after the unmount.
func TestMountRefusals(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt)
	base := t.TempDir()
	neverMade := func(what, dir string) {
		t.Helper()
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left something behind in %s (%v)", what, dir, err)
		}
	}

	other := filepath.Join(base, "other")
	if _, err := tryMountDaemon(t, other, mnt); err == nil || !strings.Contains(err.Error(), mnt+" is already a FUSE mount (fuse.xlogfs of "+store+")") {
		t.Errorf("a mount stacked on %s: %v; want it refused as already a FUSE mount", mnt, err)
	}
	neverMade("the stacked mount", other)

	missing := filepath.Join(base, "no", "such")
	if _, err := tryMountDaemon(t, other, missing); err == nil || !strings.Contains(err.Error(), "mount point "+missing+": no such file or directory") {
		t.Errorf("mount on a missing mount point: %v", err)
	}
	neverMade("the mount on a missing mount point", other)

	full := filepath.Join(base, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "precious"), []byte("underneath"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tryMountDaemon(t, other, full); err == nil || !strings.Contains(err.Error(), "is not empty (it holds precious)") || !strings.Contains(err.Error(), "--nonempty") {
		t.Errorf("mount on a non-empty directory: %v; want it refused, naming --nonempty", err)
	}
	neverMade("the mount on a non-empty directory", other)
	over := mountDaemon(t, other, full, "--nonempty")
	if _, err := os.Stat(filepath.Join(full, "precious")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("with --nonempty the mount's root shows the file underneath: %v", err)
	}
	over.unmount(t)
	if b, err := os.ReadFile(filepath.Join(full, "precious")); err != nil || string(b) != "underneath" {
		t.Errorf("after the unmount the file underneath reads %q, %v", b, err)
	}
	m.unmount(t)
}

// workload makes a directory of files, fsyncing each, and renames one,
// fsyncing the directory: what logprint, or a mount after a crash, must
// find again.
func workload(t *testing.T, mnt string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(mnt, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := writeAndSync(filepath.Join(mnt, "dir", fmt.Sprintf("file%d", i)), bytes.Repeat([]byte{'a' + byte(i)}, 1000*(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(filepath.Join(mnt, "dir", "file0"), filepath.Join(mnt, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := fsyncDir(mnt); err != nil {
		t.Fatal(err)
	}
}

type logprintOut struct {
	Records []struct {
		LSN   string `json:"lsn"`
		Live  bool   `json:"live"`
		Where string `json:"where"`
	} `json:"records"`
	Transactions []struct {
		Ops     []string `json:"ops"`
		Unmount bool     `json:"unmount"`
	} `json:"transactions"`
}

func logprint(t *testing.T, args ...string) logprintOut {
	t.Helper()
	out, err := xlogfs(append([]string{"logprint", "--json"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var l logprintOut
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("logprint --json: %v\n%s", err, out)
	}
	return l
}

// TestLogprintAllAfterCleanUnmount: after a workload and a clean unmount
// the live log is the unmount record alone; logprint --all shows the
// workload's transactions from the records behind the tail.
func TestLogprintAllAfterCleanUnmount(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt, "--journal", "data")
	workload(t, mnt)
	m.unmount(t)
	checkStore(t, store, true)
	if l := logprint(t, "--transactions", store); len(l.Records) != 1 || len(l.Transactions) != 1 || !l.Transactions[0].Unmount {
		t.Fatalf("logprint after a clean unmount: %d records, %d transactions; want the unmount record alone", len(l.Records), len(l.Transactions))
	}
	l := logprint(t, "--all", "--transactions", store)
	old := 0
	for _, r := range l.Records {
		if !r.Live {
			old++
		}
	}
	if old == 0 || !l.Records[len(l.Records)-1].Live {
		t.Errorf("logprint --all: %d old of %d records; want the workload's old and the unmount record live", old, len(l.Records))
	}
	var ops []string
	for _, tx := range l.Transactions {
		ops = append(ops, tx.Ops...)
	}
	text := strings.Join(ops, "\n")
	for _, want := range []string{`/"dir" mode 040755`, `/"file3" mode 0100644`, "len 4000 (4000 bytes logged)", `/"file0" -> 1/"moved"`} {
		if !strings.Contains(text, want) {
			t.Errorf("logprint --all --transactions lacks %q; it has:\n%s", want, text)
		}
	}
}

// statsInterval is a line of "xlogfs stats --json --interval".
type statsInterval struct {
	Seconds       float64            `json:"seconds"`
	SyncsPerS     float64            `json:"log_syncs_per_s"`
	RecordsPerS   float64            `json:"log_records_per_s"`
	BytesPerS     float64            `json:"log_bytes_per_s"`
	FsyncsPerS    float64            `json:"fsyncs_per_s"`
	ForcesPerSync float64            `json:"forces_per_sync"`
	CksumNsPerS   float64            `json:"cksum_ns_per_s"`
	CksumCPUPct   float64            `json:"cksum_cpu_pct"`
	Delta         map[string]float64 `json:"delta"`
	Totals        map[string]float64 `json:"totals"`
	Histograms    map[string]struct {
		Count uint64  `json:"count"`
		P99   float64 `json:"p99"`
	} `json:"histograms"`
}

// TestStatsJSONAndInterval: stats --json gives every counter by its .stats
// name and summarised histograms (buckets with --histogram, in order);
// stats --interval gives per-interval rates whose products with the
// interval's length are the counters' differences, and differences that
// add up to the totals.
func TestStatsJSONAndInterval(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt, "--journal", "data")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f, err := os.Create(filepath.Join(mnt, "log"))
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		buf := bytes.Repeat([]byte("r"), 4096)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := f.Write(buf); err != nil {
				t.Error(err)
				return
			}
			if err := f.Sync(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
		m.unmount(t)
	}()
	time.Sleep(200 * time.Millisecond)

	out, err := xlogfs("stats", "--json", mnt)
	if err != nil {
		t.Fatal(err)
	}
	var snap map[string]any
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("stats --json: %v\n%s", err, out)
	}
	if n, ok := snap["log_records"].(float64); !ok || n == 0 || snap["cksum_mode"] != "batched" || snap["mount_mode"] != "rw" || snap["mountpoint"] != mnt {
		t.Errorf("stats --json: log_records %v, cksum_mode %v, mount_mode %v, mountpoint %v", snap["log_records"], snap["cksum_mode"], snap["mount_mode"], snap["mountpoint"])
	}
	if strings.Contains(out, `"buckets"`) {
		t.Errorf("stats --json without --histogram shows buckets")
	}
	// The checksum's share of the daemon's CPU, in percent, in the
	// one-shot forms too; one name per counter (no syncs_log beside
	// log_syncs), and one unit per kind (no _us force figures beside the
	// force histogram's ns).
	if pct, ok := snap["cksum_cpu_pct"].(float64); !ok || pct <= 0 || pct >= 100 {
		t.Errorf("stats --json: cksum_cpu_pct %v, want the checksum's share of CPU in percent", snap["cksum_cpu_pct"])
	}
	for _, gone := range []string{"syncs_log", "fsyncs_per_force", "force_p50_us", "force_cksum_share"} {
		if _, ok := snap[gone]; ok {
			t.Errorf("stats --json still has %s", gone)
		}
	}
	if _, ok := snap["forces_per_sync"]; !ok {
		t.Errorf("stats --json lacks forces_per_sync")
	}
	out, err = xlogfs("stats", "--json", "--histogram", mnt)
	if err != nil {
		t.Fatal(err)
	}
	var withBuckets struct {
		Histograms map[string]statsfile.HistSummary `json:"histograms"`
	}
	if err := json.Unmarshal([]byte(out), &withBuckets); err != nil {
		t.Fatal(err)
	}
	fsyncs := withBuckets.Histograms[statsfile.HistFsync]
	if fsyncs.Count == 0 || len(fsyncs.Buckets) == 0 || fsyncs.P50 > fsyncs.P99 || fsyncs.P99 > fsyncs.Max {
		t.Errorf("stats --json --histogram: fsync histogram %+v", fsyncs)
	}
	for i := 1; i < len(fsyncs.Buckets); i++ {
		if fsyncs.Buckets[i].Lo < fsyncs.Buckets[i-1].Hi {
			t.Errorf("fsync buckets out of order: %+v before %+v", fsyncs.Buckets[i-1], fsyncs.Buckets[i])
		}
	}

	before := readStats(t, mnt)
	out, err = xlogfs("stats", "--json", "-i", "300ms", "-c", "2", mnt)
	if err != nil {
		t.Fatal(err)
	}
	after := readStats(t, mnt)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("stats --interval 300ms --count 2 printed %d lines:\n%s", len(lines), out)
	}
	var iv [2]statsInterval
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &iv[i]); err != nil {
			t.Fatalf("interval %d: %v\n%s", i, err, l)
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }
	idle := 0
	for i, r := range iv {
		if r.Seconds < 0.2 || r.Seconds > 5 {
			t.Errorf("interval %d lasted %v s, want about 0.3", i, r.Seconds)
		}
		for _, c := range []struct {
			name string
			rate float64
		}{{"log_syncs", r.SyncsPerS}, {"log_records", r.RecordsPerS}, {"log_bytes", r.BytesPerS}, {"fsyncs", r.FsyncsPerS}, {"cksum_ns", r.CksumNsPerS}} {
			if !near(c.rate*r.Seconds, r.Delta[c.name]) {
				t.Errorf("interval %d: %s %v/s × %v s = %v, but it grew by %v", i, c.name, c.rate, r.Seconds, c.rate*r.Seconds, r.Delta[c.name])
			}
		}
		// The writer may stall for a whole interval on a busy machine
		// (a checkpoint's data-file syncs when the log is full): an
		// interval without records says nothing of the rates below, but
		// one of the two must have some.
		if r.RecordsPerS == 0 {
			idle++
			continue
		}
		if r.FsyncsPerS == 0 || r.Histograms[statsfile.HistFsync].Count == 0 {
			t.Errorf("interval %d: %v records/s, %v fsyncs/s, %d fsyncs in the histogram while a writer fsyncs", i, r.RecordsPerS, r.FsyncsPerS, r.Histograms[statsfile.HistFsync].Count)
		}
		if r.CksumCPUPct <= 0 || r.CksumCPUPct >= 100 || !near(r.CksumCPUPct, 100*r.Delta["cksum_ns"]/r.Delta["process_cpu_ns"]) {
			t.Errorf("interval %d: checksum share of CPU %v %%; cksum_ns grew %v, process_cpu_ns %v", i, r.CksumCPUPct, r.Delta["cksum_ns"], r.Delta["process_cpu_ns"])
		}
		// (A force and the sync it waited for can fall on either side of
		// an interval's end, so an interval's ratio may dip below 1.)
		if !near(r.ForcesPerSync, r.Delta["log_forces"]/r.Delta["force_syncs"]) || r.ForcesPerSync <= 0 {
			t.Errorf("interval %d: %v forces per sync; log_forces grew %v, force_syncs %v", i, r.ForcesPerSync, r.Delta["log_forces"], r.Delta["force_syncs"])
		}
	}
	if idle == len(iv) {
		t.Errorf("no records logged in either interval while a writer fsyncs: %+v", iv)
	}
	for name, d := range iv[1].Delta {
		if !near(iv[1].Totals[name]-iv[0].Totals[name], d) {
			t.Errorf("%s: totals %v then %v, but the second interval's difference is %v", name, iv[0].Totals[name], iv[1].Totals[name], d)
		}
		b, a := statFloat(t, before, name), statFloat(t, after, name)
		if iv[0].Totals[name]-iv[0].Delta[name] < b || iv[1].Totals[name] > a {
			t.Errorf("%s: the intervals ran from %v to %v, outside the readings %v and %v taken before and after", name, iv[0].Totals[name]-iv[0].Delta[name], iv[1].Totals[name], b, a)
		}
	}

	out, err = xlogfs("stats", "-i", "100ms", "-c", "2", mnt)
	if err != nil || !strings.Contains(out, "records/s") || len(strings.Split(strings.TrimSpace(out), "\n")) != 3 {
		t.Errorf("stats --interval as text (a header and two lines): %v\n%s", err, out)
	}
	out, err = xlogfs("stats", mnt)
	if err != nil || !strings.Contains(out, "per log record: ") || !strings.Contains(out, "\ncksum_cpu_pct ") || !strings.Contains(out, statsfile.HistFsync) || strings.Contains(out, statsfile.HistFsync+" 1") {
		t.Errorf("stats as text: a summary line per histogram, no buckets, record bytes apart: %v\n%s", err, out)
	}
}

func statFloat(t *testing.T, stats map[string]string, name string) float64 {
	t.Helper()
	var v float64
	if _, err := fmt.Sscan(stats[name], &v); err != nil {
		t.Fatalf(".stats %s = %q: %v", name, stats[name], err)
	}
	return v
}

// storeSums hashes every file of a store, by name.
func storeSums(t *testing.T, store string) map[string][32]byte {
	t.Helper()
	sums := map[string][32]byte{}
	err := filepath.WalkDir(store, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(store, path)
		sums[rel] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// TestReadOnlyNoRecovery: mount --ro --norecovery of a store a crash left
// dirty shows what recovery would, refuses changes with EROFS, and leaves
// every byte of the store as it was (checksummed before and after), the
// log still dirty; mount --ro recovers it and unmounts cleanly.
func TestReadOnlyNoRecovery(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt, "--journal", "data")
	workload(t, mnt)
	m.kill9(t)
	sums := storeSums(t, store)

	ro := mountDaemon(t, store, mnt, "--journal", "data", "--ro", "--norecovery")
	for i := 1; i < 4; i++ {
		if b, err := os.ReadFile(filepath.Join(mnt, "dir", fmt.Sprintf("file%d", i))); err != nil || !bytes.Equal(b, bytes.Repeat([]byte{'a' + byte(i)}, 1000*(i+1))) {
			t.Errorf("file%d on the norecovery mount: %d bytes, %v", i, len(b), err)
		}
	}
	if _, err := os.Stat(filepath.Join(mnt, "moved")); err != nil {
		t.Errorf("the rename replayed in memory: %v", err)
	}
	err := os.WriteFile(filepath.Join(mnt, "new"), []byte("x"), 0o644)
	if !errors.Is(err, syscall.EROFS) {
		t.Errorf("a write on a read-only mount: %v, want EROFS", err)
	}
	if st := readStats(t, mnt); st["mount_mode"] != "ro,norecovery" {
		t.Errorf(".stats mount_mode %q", st["mount_mode"])
	}
	if _, err := xlogfs("umount", mnt); err != nil {
		t.Fatalf("xlogfs umount of a norecovery mount: %v", err)
	}
	ro.expectExit(t, "xlogfs umount")
	after := storeSums(t, store)
	for name, sum := range sums {
		if after[name] != sum {
			t.Errorf("%s changed under a --ro --norecovery mount", name)
		}
	}
	for name := range after {
		if _, ok := sums[name]; !ok {
			t.Errorf("%s appeared under a --ro --norecovery mount", name)
		}
	}
	if out := checkStore(t, store, false); strings.Contains(out, "clean (ends with an unmount record)") {
		t.Errorf("the log is clean after a norecovery mount, which must not write:\n%s", out)
	}

	// --ro recovers (it may write the store), refuses changes, and its
	// unmount leaves a clean log.
	ro = mountDaemon(t, store, mnt, "--journal", "data", "--ro")
	if b, err := os.ReadFile(filepath.Join(mnt, "dir", "file3")); err != nil || len(b) != 4000 {
		t.Errorf("file3 on the --ro mount: %d bytes, %v", len(b), err)
	}
	if err := os.Remove(filepath.Join(mnt, "moved")); !errors.Is(err, syscall.EROFS) {
		t.Errorf("unlink on a read-only mount: %v, want EROFS", err)
	}
	if _, err := xlogfs("umount", mnt); err != nil {
		t.Fatalf("xlogfs umount of a --ro mount: %v", err)
	}
	ro.expectExit(t, "xlogfs umount")
	checkStore(t, store, true)

	// Usage: --norecovery alone is a mistake; --ro of a non-store is
	// refused before anything is made.
	cmd := exec.Command(xlogfsBin, "mount", "--norecovery", store, mnt)
	if out, err := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "--norecovery needs --ro") {
		t.Errorf("mount --norecovery alone: %v\n%s", err, out)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if _, err := tryMountDaemon(t, empty, mnt, "--ro"); err == nil || !strings.Contains(err.Error(), "is not an xlogfs store") {
		t.Errorf("mount --ro of a directory that is no store: %v", err)
	}
	if _, err := os.Stat(empty); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("mount --ro made %s", empty)
	}
}

// TestExpvarNames: expvar's "xlogfs" variable (mount --pprof) has the
// names of .stats and its histograms with numeric buckets in order, as
// stats --json --histogram does.
func TestExpvarNames(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountForeground(t, store, mnt, "--pprof", "127.0.0.1:0")
	defer m.signal(t, syscall.SIGTERM)
	if err := writeAndSync(filepath.Join(mnt, "f"), []byte("counted")); err != nil {
		t.Fatal(err)
	}
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, rest, ok := strings.Cut(m.log(), "pprof at "); ok {
			url, _, _ = strings.Cut(rest, "\n")
		}
	}
	if url == "" {
		t.Fatalf("the mount did not say where pprof is:\n%s", m.log())
	}
	resp, err := http.Get(strings.TrimSuffix(url, "pprof/") + "vars")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var vars struct {
		Xlogfs struct {
			Records    float64                          `json:"log_records"`
			Fsyncs     float64                          `json:"fsyncs"`
			Mode       string                           `json:"cksum_mode"`
			Histograms map[string]statsfile.HistSummary `json:"histograms"`
		} `json:"xlogfs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&vars); err != nil {
		t.Fatal(err)
	}
	x := vars.Xlogfs
	h := x.Histograms[statsfile.HistFsync]
	if x.Records == 0 || x.Fsyncs == 0 || x.Mode != "batched" || h.Count == 0 || len(h.Buckets) == 0 {
		t.Errorf("expvar xlogfs: %+v", x)
	}
	for i := 1; i < len(h.Buckets); i++ {
		if h.Buckets[i].Lo < h.Buckets[i-1].Hi {
			t.Errorf("expvar fsync buckets out of order: %+v", h.Buckets)
		}
	}
}
