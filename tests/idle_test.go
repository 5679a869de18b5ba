package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestIdleMountKilledLosesNothing creates files with no fsync, leaves the
// mount idle for longer than its log force interval, and kills the daemon
// with SIGKILL: the periodic log force must have written every transaction
// to the log, so the next mount recovers every file. (Without the force
// the transactions stayed in the active iclog, and a kill lost them all.)
func TestIdleMountKilledLosesNothing(t *testing.T) {
	t.Parallel()
	const files = 200
	interval := time.Second
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt, "--log-force-interval", interval.String())
	for i := range files {
		mustOK(t, os.WriteFile(filepath.Join(mnt, fmt.Sprintf("f%03d", i)), []byte{byte(i)}, 0o644))
	}
	mustOK(t, os.Mkdir(filepath.Join(mnt, "dir"), 0o755))
	time.Sleep(3 * interval)
	m.kill9(t)
	m = m.remount(t)
	for i := range files {
		name := fmt.Sprintf("f%03d", i)
		if b, err := os.ReadFile(filepath.Join(mnt, name)); err != nil || len(b) != 1 || b[0] != byte(i) {
			t.Errorf("%s after an idle %v and kill -9: %q, %v; want it created", name, 3*interval, b, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(mnt, "dir")); err != nil || !fi.IsDir() {
		t.Errorf("dir after an idle %v and kill -9: %v", 3*interval, err)
	}
	m.unmount(t)
	checkStore(t, store, true)
}
