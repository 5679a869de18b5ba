package xfsbase

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// testdata/perf-stat.csv is perf stat -a -x, -o's output on this machine,
// counting XFS's fsync tracepoints and fsync(2) calls while five dd
// conv=fsync ran on ext4 (no XFS was mounted), besides the machine's
// other work.
func TestParseStatCSVRecorded(t *testing.T) {
	b, err := os.ReadFile("testdata/perf-stat.csv")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseStatCSV(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(c) != 3 || c["xfs:xfs_file_fsync"] != 0 || c["xfs:xfs_dir_fsync"] != 0 || c["syscalls:sys_enter_fsync"] != 50 {
		t.Errorf("counts %v", c)
	}
	for _, bad := range []string{"<not counted>,,xfs:xfs_file_fsync,0,100.00,,\n", "<not supported>,,xfs:xfs_dir_fsync,0,0,,\n", "12\n"} {
		if _, err := ParseStatCSV([]byte(bad)); err == nil {
			t.Errorf("ParseStatCSV(%q): no error", bad)
		}
	}
}

// XFS's fsync tracepoints, counted as the bench counts them, count the
// fsyncs made on a real XFS image: five fsyncs and one fdatasync of a
// file and one fsync of a directory.
func TestPerfCountFsyncsReal(t *testing.T) {
	r := realXFS(t)
	env := System()
	env.PerfTrial = func(string) error { return nil }
	if p := Probe(env); p.Perf != nil {
		t.Skipf("perf cannot run here: %v", p.Perf)
	}
	dir := t.TempDir()
	s := Spec{Dir: filepath.Join(dir, "img"), Mnt: filepath.Join(dir, "mnt"), Size: 1 << 30, LogBytes: 64 << 20,
		LogBSize: 32 << 10, LogBufs: 8, Mkfs: r.Mkfs, Losetup: r.Losetup}
	img, err := Setup(s)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Teardown()
	others, err := OtherMounts(s.Mnt)
	if err != nil {
		t.Fatal(err)
	}
	c, err := StartCount(r.PerfPath, filepath.Join(dir, "stat.csv"), FsyncEvents...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	if err := c.Enable(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(s.Mnt, "f"))
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		f.Write([]byte("x"))
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d, _ := os.Open(s.Mnt)
	d.Sync()
	d.Close()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	counts, err := c.Counts()
	if err != nil {
		t.Fatal(err)
	}
	file, dirs := counts["xfs:xfs_file_fsync"], counts["xfs:xfs_dir_fsync"]
	if len(others) == 0 && (file != 6 || dirs != 1) || file < 6 || dirs < 1 {
		t.Errorf("counted %d file and %d directory fsyncs, want 6 and 1 (other XFS mounted: %q)", file, dirs, strings.Join(others, ", "))
	}
}
