package journal

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/journal/meta"
)

// TestPeriodicLogForce creates files without any fsync, leaves the mount
// idle, and cuts the power (every write not yet synced may be lost): with
// the periodic force every file is there after recovery, soon after one
// interval. The control, with a force interval far longer than the test,
// shows the files would otherwise be lost: nothing else forces an idle log.
func TestPeriodicLogForce(t *testing.T) {
	const files = 200
	for _, c := range []struct {
		name     string
		interval time.Duration
		survive  bool
	}{{"interval=50ms", 50 * time.Millisecond, true}, {"control/interval=1h", time.Hour, false}} {
		t.Run(c.name, func(t *testing.T) {
			dir, dev := crashStore(t, 4<<20, 32<<10)
			fs := mount(t, dir, Options{Device: dev, LogForceInterval: c.interval, CheckpointInterval: time.Hour})
			for i := range files {
				must[Attr](t)(fs.Create(meta.RootIno, fmt.Sprint("f", i), meta.ModeReg|0o644, 0, 0, 0, ""))
			}
			// Idle: wait until the force has made everything durable
			// (the control waits as long as the forced run may take).
			deadline := time.Now().Add(10 * time.Second)
			if !c.survive {
				deadline = time.Now().Add(time.Second)
			}
			for fs.x.Unforced() && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			img := dev.CrashImage(rand.New(rand.NewPCG(1, 2)))
			fs.Abandon()
			got, _, err := recoverImage(t, dir, img, Options{})
			check(t, err)
			defer got.Close()
			ents := must[[]DirEntry](t)(got.ReadDir(meta.RootIno))
			switch {
			case c.survive && len(ents) != files:
				t.Errorf("after an idle %v and a power cut: %d files of %d, want all: the periodic force did not run", c.interval, len(ents), files)
			case !c.survive && len(ents) == files:
				t.Errorf("control: all %d files survived a power cut without a force; the test cannot tell a force from none", files)
			}
		})
	}
}
