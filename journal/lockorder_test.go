//go:build lockorder

package journal

import (
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/journal/meta"
)

// TestLockOrderChecked: in the checked build (make test-lockorder) the
// journal's own mutexes carry their ranks, and an acquire out of order
// panics before it blocks: an inode's lock under the model lock (a write
// holds its inode's lock across its commit) or under the checkpoint lock
// (a shrink holds it across its force and cut), and a read of a file under
// the model lock, which takes it again (a read lock taken twice deadlocks
// once a writer waits between the two).
func TestLockOrderChecked(t *testing.T) {
	fs := mount(t, mkfs(t, 1<<20, 32<<10), Options{})
	a, err := fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, "")
	check(t, err)
	st := fs.files.State(a.Ino)
	read := func() { fs.Read(a.Ino, make([]byte, 10), 0) }
	for _, c := range []struct {
		held         string
		lock, unlock func()
		do           func()
		want         string
	}{
		{"model", fs.mu.RLock, fs.mu.RUnlock, st.NoteFsync, "Inode lock taken out of order, under the Model lock"},
		{"checkpoint", fs.ckptMu.Lock, fs.ckptMu.Unlock, st.NoteFsync, "Inode lock taken out of order, under the Checkpoint lock"},
		{"model", fs.mu.RLock, fs.mu.RUnlock, read, "Model lock taken twice, under the Model lock"},
	} {
		msg := func() (msg string) {
			defer func() { msg, _ = recover().(string) }()
			c.lock()
			defer c.unlock()
			c.do()
			return ""
		}()
		if !strings.Contains(msg, c.want) {
			t.Errorf("under the %s lock: panic %q, want %q", c.held, msg, c.want)
		}
	}
	// In order, the same calls work.
	st.NoteFsync()
	if _, err := fs.Read(a.Ino, make([]byte, 10), 0); err != nil {
		t.Fatal(err)
	}
}
