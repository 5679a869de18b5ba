package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// checkJSON is what "xlogfs check --json" prints, the part these tests
// read.
type checkJSON struct {
	Sound            bool          `json:"sound"`
	Replayed         int           `json:"replayed"`
	MissingDataCount int           `json:"missing_data_count"`
	MissingData      []missingJSON `json:"missing_data"`
}

// missingJSON is one of check --json's missing_data.
type missingJSON struct {
	Ino        uint64 `json:"ino"`
	Path       string `json:"path"`
	DataFile   string `json:"data_file"`
	WantBytes  int64  `json:"want_bytes"`
	FoundBytes int64  `json:"found_bytes"`
	Exists     bool   `json:"exists"`
}

// checkBoth runs "xlogfs check" and "xlogfs check --json" on a store that
// must not be sound: each must exit 1. It returns both reports.
func checkBoth(t *testing.T, store string) (string, checkJSON) {
	t.Helper()
	run := func(args ...string) []byte {
		cmd := exec.Command(xlogfsBin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
			t.Fatalf("xlogfs %s: %v, want exit status 1 (not sound)\nstdout:\n%sstderr:\n%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
		}
		return stdout.Bytes()
	}
	text := string(run("check", store))
	out := run("check", "--json", store)
	var j checkJSON
	if err := json.Unmarshal(out, &j); err != nil {
		t.Fatalf("xlogfs check --json printed no JSON object: %v\n%s", err, out)
	}
	if j.Sound {
		t.Errorf("check --json says sound, but check exits 1:\n%s", out)
	}
	if j.MissingDataCount != len(j.MissingData) {
		t.Errorf("check --json: missing_data_count %d, but %d listed", j.MissingDataCount, len(j.MissingData))
	}
	return text, j
}

func inoOf(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// TestMissingDataFiles: a data file deleted or cut behind the store's back
// on a cleanly unmounted store is corruption, not zeros. check exits 1
// naming the inode, a path of it and the data file (and --json lists them);
// a mount refuses, saying how to mount anyway; --allow-missing-data mounts,
// the damaged files failing reads and writes with EIO while the others read
// as written; a truncate to 0 makes a damaged file whole again, and the
// mount recreates nothing, so the next check still names the others.
func TestMissingDataFiles(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt)
	if err := os.Mkdir(filepath.Join(mnt, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	content := map[string][]byte{
		"dir/a": bytes.Repeat([]byte{'a'}, 4096),
		"dir/b": bytes.Repeat([]byte{'b'}, 10000),
		"c":     []byte("c survives"),
		"empty": nil,
	}
	names := []string{"dir/a", "dir/b", "c", "empty"}
	ino := map[string]uint64{}
	for _, name := range names {
		p := filepath.Join(mnt, name)
		if err := os.WriteFile(p, content[name], 0o644); err != nil {
			t.Fatal(err)
		}
		ino[name] = inoOf(t, p)
	}
	m.unmount(t)
	checkStore(t, store, true)
	dataFile := func(name string) string { return filepath.Join(store, "data", fmt.Sprint(ino[name])) }

	// One data file deleted.
	if err := os.Remove(dataFile("dir/a")); err != nil {
		t.Fatal(err)
	}
	out, j := checkBoth(t, store)
	want := fmt.Sprintf("inode %d (/dir/a): data file %s is missing", ino["dir/a"], dataFile("dir/a"))
	if !strings.Contains(out, want) {
		t.Errorf("check after rm %s does not say %q:\n%s", dataFile("dir/a"), want, out)
	}
	if len(j.MissingData) != 1 || j.MissingData[0].Ino != ino["dir/a"] || j.MissingData[0].Path != "/dir/a" ||
		j.MissingData[0].DataFile != dataFile("dir/a") || j.MissingData[0].WantBytes != 4096 || j.MissingData[0].Exists || j.MissingData[0].FoundBytes != 0 {
		t.Errorf("check --json after rm %s: %+v", dataFile("dir/a"), j.MissingData)
	}
	_, err := tryMountDaemon(t, store, mnt)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--allow-missing-data") {
		t.Fatalf("mount of a store whose data file %s is gone: %v; want it refused, naming it and --allow-missing-data", dataFile("dir/a"), err)
	}

	// And another cut short: both named.
	if err := os.Truncate(dataFile("dir/b"), 100); err != nil {
		t.Fatal(err)
	}
	out, j = checkBoth(t, store)
	wantB := fmt.Sprintf("inode %d (/dir/b): data file %s holds 100 bytes", ino["dir/b"], dataFile("dir/b"))
	if !strings.Contains(out, want) || !strings.Contains(out, wantB) {
		t.Errorf("check after a deleted and a cut data file does not name both (%q, %q):\n%s", want, wantB, out)
	}
	if j.MissingDataCount != 2 || !slices.ContainsFunc(j.MissingData, func(d missingJSON) bool {
		return d.Ino == ino["dir/b"] && d.Exists && d.FoundBytes == 100 && d.WantBytes == 10000 && d.Path == "/dir/b"
	}) {
		t.Errorf("check --json after a deleted and a cut data file: %+v", j.MissingData)
	}

	// --allow-missing-data mounts: EIO on the damaged files, never zeros.
	m = mountDaemon(t, store, mnt, "--allow-missing-data")
	for _, name := range []string{"dir/a", "dir/b"} {
		b, err := os.ReadFile(filepath.Join(mnt, name))
		if !errors.Is(err, syscall.EIO) {
			t.Errorf("reading %s, whose data file lacks its bytes: %d bytes, %v; want EIO", name, len(b), err)
		}
	}
	for _, name := range []string{"c", "empty"} {
		if b, err := os.ReadFile(filepath.Join(mnt, name)); err != nil || !bytes.Equal(b, content[name]) {
			t.Errorf("reading %s, whose data file is whole: %q, %v", name, b, err)
		}
	}
	f, err := os.OpenFile(filepath.Join(mnt, "dir/b"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("x"), 0); !errors.Is(err, syscall.EIO) {
		t.Errorf("writing dir/b, whose data file lacks its bytes: %v; want EIO", err)
	}
	f.Close()
	// A truncate to 0 makes a file whole again.
	if err := os.WriteFile(filepath.Join(mnt, "dir/a"), []byte("new a"), 0o644); err != nil {
		t.Errorf("rewriting dir/a from 0 (O_TRUNC): %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "dir/a")); err != nil || string(b) != "new a" {
		t.Errorf("dir/a after it was truncated and written again: %q, %v", b, err)
	}
	m.unmount(t)
	for _, line := range []string{fmt.Sprintf("inode %d (/dir/a)", ino["dir/a"]), fmt.Sprintf("inode %d (/dir/b)", ino["dir/b"])} {
		if !strings.Contains(m.log(), line) {
			t.Errorf("the --allow-missing-data mount's log does not name %s:\n%s", line, m.log())
		}
	}
	// Nothing was made into zeros: dir/b is still damaged, dir/a whole.
	if n := fileSize(dataFile("dir/b")); n != 100 {
		t.Errorf("the --allow-missing-data mount changed %s to %d bytes", dataFile("dir/b"), n)
	}
	out, j = checkBoth(t, store)
	if strings.Contains(out, want) || !strings.Contains(out, wantB) || j.MissingDataCount != 1 {
		t.Errorf("check after dir/a was rewritten: want dir/b alone named:\n%s", out)
	}

	// The whole data directory gone: every file with bytes named.
	if err := os.RemoveAll(filepath.Join(store, "data")); err != nil {
		t.Fatal(err)
	}
	out, j = checkBoth(t, store)
	var got []uint64
	for _, d := range j.MissingData {
		got = append(got, d.Ino)
	}
	slices.Sort(got)
	if wantInos := []uint64{ino["dir/a"], ino["dir/b"], ino["c"]}; !slices.Equal(got, wantInos) {
		t.Errorf("check --json after rm -r %s/data names inodes %v, want %v (the empty file needs no data file):\n%s", store, got, wantInos, out)
	}
	if _, err := tryMountDaemon(t, store, mnt); err == nil || !strings.Contains(err.Error(), "--allow-missing-data") {
		t.Errorf("mount after rm -r %s/data: %v; want it refused", store, err)
	}
}
