package tests

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hanwen/go-fuse/v2/posixtest"
)

// posixSkips are the posixtest tests that cannot pass on any filesystem,
// with the reason. Every other test must pass: one that skips itself (the
// suite skips when a feature is missing) fails here, since a skip would hide
// a missing feature.
var posixSkips = map[string]string{
	// The test takes a write lock through one descriptor and expects a
	// read lock through a second descriptor of the same process to fail
	// with EAGAIN. POSIX record locks belong to the process, so the second
	// request converts the process's own lock and succeeds — on ext4 and
	// tmpfs too; go-fuse's own run of the suite skips it for that reason
	// ("TODO - fix this test"). TestLocks checks the conflict it means to
	// test, between two processes.
	"FcntlFlockLocksFile": "POSIX locks never conflict within one process; the test expects they do (fails on ext4 too). TestLocks covers cross-process conflicts",
}

// posixDiagnoses say why xlogfs fails a posixtest test that it fails at
// the time of writing, to make the failure message useful (posixtest's own
// skip message shows only with -v).
var posixDiagnoses = map[string]string{
	"Tmpfile":       "open(dir, O_TMPFILE) fails with EOPNOTSUPP: fusefs implements no fs.NodeTmpfiler, so go-fuse answers FUSE_TMPFILE with ENOSYS",
	"RenameOpenDir": "fstat of an open directory that rename replaced fails with ENOENT: the journal frees the victim directory inode at once although it is open",
}

// TestPosix runs every test of go-fuse's posixtest suite against an xlogfs
// mount, each in a directory of its own, in both journal modes; then the
// store must unmount cleanly and pass "xlogfs check".
func TestPosix(t *testing.T) {
	for _, journal := range []string{"meta", "data"} {
		t.Run("journal="+journal, func(t *testing.T) {
			store, mnt := newStore(t)
			m := mountDaemon(t, store, mnt, "--journal", journal)
			for _, name := range slices.Sorted(maps.Keys(posixtest.All)) {
				t.Run(name, func(t *testing.T) {
					if reason, ok := posixSkips[name]; ok {
						t.Skip(reason)
					}
					dir := filepath.Join(mnt, name)
					if err := os.Mkdir(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					// The suite skips a test when the filesystem lacks
					// what it needs; run it one level down to see that.
					var inner *testing.T
					t.Run("posixtest", func(t *testing.T) {
						inner = t
						posixtest.All[name](t, dir)
					})
					if inner.Skipped() {
						t.Errorf("posixtest %s skipped itself, so xlogfs lacks what it tests (run with -v for its message). %s", name, posixDiagnoses[name])
					}
				})
			}
			m.unmount(t)
			checkStore(t, store, true)
		})
	}
}
