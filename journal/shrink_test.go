package journal

import (
	"bytes"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/journal/internal/testfs"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
)

// TestShrinkCheckpointRace puts a checkpoint between a shrink's commit and
// its cut of the data file, after another force made the shrink durable:
// the checkpoint's tail is then past the shrink while the data file still
// holds the old end. A later extending write is fsynced and power fails;
// the bytes between the new size and the write must read back as zeros,
// as acknowledged, not as the old end that a lost cut would leave.
func TestShrinkCheckpointRace(t *testing.T) {
	for _, jm := range []JournalMode{JournalData, JournalMeta} {
		t.Run(jm.String(), func(t *testing.T) {
			cfs := testfs.NewCrashFS()
			if _, err := store.Mkfs(powerDir, store.MkfsOptions{LogSize: store.MinLogSize, LogBSize: 32 << 10, Store: cfs}); err != nil {
				t.Fatal(err)
			}
			fs, err := Open(powerDir, quietOpts(Options{Store: cfs, Journal: jm, CheckpointInterval: time.Hour}))
			if err != nil {
				t.Fatal(err)
			}
			a, err := fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, "")
			check(t, err)
			old := bytes.Repeat([]byte{0xAA}, 40000)
			_, err = fs.Write(a.Ino, old, 0)
			check(t, err)
			check(t, fs.Fsync(a.Ino, false))
			fs.runCheckpoint()

			// Hold the checkpoint lock, as a running checkpoint does, so
			// that the shrink commits and then waits for it.
			fs.ckptMu.Lock()
			before := fs.x.LastCommitted()
			done := make(chan error)
			go func() {
				_, err := fs.SetAttr(a.Ino, SetAttrIn{Mask: meta.SetSize, Size: 1000})
				done <- err
			}()
			for fs.x.LastCommitted() == before {
				time.Sleep(time.Millisecond)
			}
			check(t, fs.x.ForceAll()) // another fsync's force: the shrink is durable
			// The checkpoint, step by step as checkpoint() takes it.
			_, err = fs.x.SyncSwitched()
			check(t, err)
			fs.shadowMu.Lock()
			m, b := fs.shadow.Clone(), fs.bound
			fs.shadowMu.Unlock()
			check(t, fs.syncDataFiles())
			check(t, fs.writeCheckpointFile(m, b))
			fs.x.MoveTail(b.Tail)
			fs.ckpts.Add(1)
			fs.ckptMu.Unlock()
			check(t, <-done)

			w := []byte("WWWWWWWWWW")
			_, err = fs.Write(a.Ino, w, 30000)
			check(t, err)
			check(t, fs.Fsync(a.Ino, false))
			want := make([]byte, 30010)
			copy(want, old[:1000])
			copy(want[30000:], w)

			img := cfs.Crash(nil)
			fs.Abandon()
			fs2, err := Open(powerDir, quietOpts(Options{Store: img, Journal: jm}))
			if err != nil {
				t.Fatal(err)
			}
			defer fs2.Abandon()
			got := make([]byte, len(want))
			if n, err := fs2.Read(a.Ino, got, 0); err != nil || n != len(got) {
				t.Fatalf("read %d bytes, %v; want %d", n, err, len(got))
			}
			if !bytes.Equal(got, want) {
				i := 0
				for ; got[i] == want[i]; i++ {
				}
				t.Errorf("after the crash byte %d is %#x, want %#x (acknowledged by the last fsync)", i, got[i], want[i])
			}
		})
	}
}
