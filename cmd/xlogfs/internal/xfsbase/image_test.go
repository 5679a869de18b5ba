package xfsbase

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"
)

// realXFS is this machine's readiness for the baseline; the tests that
// make real images need it (they are skipped, saying why, without root,
// XFS, mkfs.xfs or a loop device).
func realXFS(t *testing.T) Readiness {
	t.Helper()
	env := System()
	env.PerfTrial = func(string) error { return nil }
	r := Probe(env)
	if r.XFS != nil {
		t.Skipf("kernel XFS cannot run here: %v", r.XFS)
	}
	return r
}

// mountsAt returns the mounts at mnt in the mount table.
func mountsAt(t *testing.T, mnt string) []*mountinfo.Info {
	t.Helper()
	ms, err := mountinfo.GetMounts(mountinfo.SingleEntryFilter(mnt))
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// A round's image: made, formatted with the log asked for, mounted with
// the log buffers asked for, written to (the kernel's log counters move),
// and then gone: unmounted, loop device detached, image removed.
func TestSetupTeardown(t *testing.T) {
	r := realXFS(t)
	dir := t.TempDir()
	s := Spec{Dir: filepath.Join(dir, "img"), Mnt: filepath.Join(dir, "mnt"), Size: 1 << 30, LogBytes: 64 << 20,
		LogBSize: 64 << 10, LogBufs: 4, DirectIO: true, Mkfs: r.Mkfs, Losetup: r.Losetup}
	img, err := Setup(s)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Teardown()
	ms := mountsAt(t, s.Mnt)
	if len(ms) != 1 {
		t.Fatalf("%d mounts at %s, want 1", len(ms), s.Mnt)
	}
	m := ms[0]
	if opts := strings.Split(m.VFSOptions, ","); m.FSType != "xfs" || m.Source != img.Loop || !slices.Contains(opts, "logbufs=4") || !slices.Contains(opts, "logbsize=64k") {
		t.Errorf("mounted %s from %s with %s: want xfs from %s with logbufs=4,logbsize=64k", m.FSType, m.Source, m.VFSOptions, img.Loop)
	}
	out, err := exec.Command("xfs_info", s.Mnt).CombinedOutput()
	if err == nil && (!strings.Contains(string(out), "blocks=16384, version=2") || !strings.Contains(string(out), "sunit=0 blks")) {
		t.Errorf("xfs_info: want a 16384-block (64 MiB) version 2 log without a stripe unit:\n%s", out)
	}
	before, err := ReadStat(StatPath)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(s.Mnt, "f"))
	if err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, 8192))
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	after, _ := ReadStat(StatPath)
	d, err := Delta(before, after)
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := d.Log(); l.Writes == 0 || l.Blocks < uint64(HeaderBlocks(s.LogBSize))*l.Writes {
		t.Errorf("log delta %+v after a create and fsync: want a write of at least %d header blocks each", l, HeaderBlocks(s.LogBSize))
	}
	loop := img.Loop
	if err := img.Teardown(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, s, loop)
}

func assertGone(t *testing.T, s Spec, loop string) {
	t.Helper()
	for _, m := range mountsAt(t, s.Mnt) {
		t.Errorf("still mounted: %s from %s at %s", m.FSType, m.Source, m.Mountpoint)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "xfs.img")); !os.IsNotExist(err) {
		t.Errorf("image still there: %v", err)
	}
	if loop != "" {
		if b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(loop), "loop", "backing_file")); err == nil &&
			strings.HasPrefix(strings.TrimSpace(string(b)), s.Dir) {
			t.Errorf("%s still backed by %s", loop, b)
		}
	}
}

// A setup that fails part way undoes what it did: here mkfs.xfs fails
// after the loop device was attached.
func TestSetupFailureUndoes(t *testing.T) {
	r := realXFS(t)
	dir := t.TempDir()
	s := Spec{Dir: filepath.Join(dir, "img"), Mnt: filepath.Join(dir, "mnt"), Size: 1 << 30, LogBytes: 16 << 20,
		LogBSize: 32 << 10, LogBufs: 8, Mkfs: "/bin/false", Losetup: r.Losetup}
	img, err := Setup(s)
	if err == nil {
		img.Teardown()
		t.Fatal("Setup with a failing mkfs.xfs succeeded")
	}
	if !strings.Contains(err.Error(), "mkfs.xfs -f -q -K -m crc=1 -l size=16384k,version=2 /dev/loop") {
		t.Errorf("error %q does not say which mkfs.xfs failed", err)
	}
	var loops []string
	out, _ := exec.Command(r.Losetup, "-j", filepath.Join(s.Dir, "xfs.img")).Output()
	if strings.TrimSpace(string(out)) != "" {
		loops = append(loops, string(out))
	}
	if len(loops) > 0 {
		t.Errorf("loop devices left on the image: %q", loops)
	}
	assertGone(t, s, "")
	if err := (Spec{LogBSize: 48 << 10, LogBufs: 8, LogBytes: 1 << 20, Size: 1 << 30}).Check(); err == nil {
		t.Error("logbsize 48k accepted")
	}
	if err := (Spec{LogBSize: 32 << 10, LogBufs: 9, LogBytes: 1 << 20, Size: 1 << 30}).Check(); err == nil {
		t.Error("logbufs 9 accepted")
	}
}

// Perf as the bench runs it, on this machine: started disabled, enabled,
// made to sample a busy loop, disabled, and its samples read back.
func TestPerfRecordReal(t *testing.T) {
	env := System()
	env.PerfTrial = func(string) error { return nil }
	r := Probe(env)
	if r.Perf != nil {
		t.Skipf("perf cannot run here: %v", r.Perf)
	}
	data := filepath.Join(t.TempDir(), "perf.data")
	rec, err := StartRecord(r.PerfPath, data, 997)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Kill()
	if err := rec.Enable(); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
	}
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	p, err := Script(r.PerfPath, data, rec.Pid(), 997)
	if err != nil {
		t.Fatal(err)
	}
	if p.Busy == 0 || p.BusyNs == 0 || p.NoPeriod != 0 {
		t.Errorf("profile of a busy loop: %+v; want busy samples, each with its period", p)
	}
}
