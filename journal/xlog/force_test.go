package xlog

import (
	"runtime"
	"sync"
	"testing"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/logbuf"
)

// gatedDevice is a memDevice whose syncs can be held: while gate is set,
// a Sync reports itself on entered and waits for gate to be closed. It
// records the goroutine that ran each sync.
type gatedDevice struct {
	memDevice
	mu      sync.Mutex
	gate    chan struct{}
	entered chan struct{}
	syncs   int
	byGID   []uint64
}

func (d *gatedDevice) Sync() error {
	d.mu.Lock()
	d.syncs++
	d.byGID = append(d.byGID, goid())
	g, e := d.gate, d.entered
	d.mu.Unlock()
	if g != nil {
		e <- struct{}{}
		<-g
	}
	return nil
}

// goid is the calling goroutine's id, from its stack's first line.
func goid() uint64 {
	var b [64]byte
	n := runtime.Stack(b[:], false)
	var id uint64
	for _, c := range b[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

func commitOne(t *testing.T, x *Log, b byte) logbuf.LSN {
	t.Helper()
	lsn, err := x.Commit(func(logbuf.LSN) [][]byte { return [][]byte{{b, b, b}} }, nil)
	if err != nil {
		t.Fatal(err)
	}
	return lsn
}

// TestCallerForces: a force that finds the log idle is served by its own
// goroutine (the sync runs on it: no hand-off to the writer), and the
// forces that arrive while that flush is in flight sleep on it, join the
// iclog forming behind it, and are all served by one more flush, run by
// one of them.
func TestCallerForces(t *testing.T) {
	dev := &gatedDevice{memDevice: memDevice{img: make([]byte, 1<<20)}}
	x, err := New(Config{
		Times: noTimer{}, Dev: dev, UUID: [16]byte{1}, LogBSize: 32 << 10, LogBufs: 2,
		Sum: cksum.NewSummer(cksum.Batched, cksum.Best()), Head: Pos{cycle: 1}, Tail: Pos{cycle: 1},
		OnDurable: func([]Committed, Boundary) {}, WantCheckpoint: func() {},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Stop()

	// Idle: the caller's goroutine runs the sync.
	me := goid()
	if err := x.Force(commitOne(t, x, 1)); err != nil {
		t.Fatal(err)
	}
	if dev.syncs != 1 || dev.byGID[0] != me {
		t.Fatalf("an idle log's force: %d syncs, run by goroutines %v; want 1, by the forcing goroutine %d", dev.syncs, dev.byGID, me)
	}

	// A flush in flight: the next force holds it at the gate.
	gate := make(chan struct{})
	dev.mu.Lock()
	dev.gate, dev.entered = gate, make(chan struct{}, 1)
	dev.mu.Unlock()
	first := make(chan error, 1)
	lsn := commitOne(t, x, 2)
	go func() { first <- x.Force(lsn) }()
	<-dev.entered

	// Eight more commit and force while it is in flight: they sleep.
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		lsn := commitOne(t, x, byte(10+i))
		wg.Add(1)
		go func() { defer wg.Done(); errs <- x.Force(lsn) }()
	}
	for {
		x.mu.Lock()
		sleeping := x.stats.ForceSleeps
		x.mu.Unlock()
		if sleeping == n {
			break
		}
		runtime.Gosched()
	}
	dev.mu.Lock()
	dev.gate = nil // the next flush is not held
	dev.mu.Unlock()
	close(gate)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	st, _, _, _ := x.SnapshotStats()
	if dev.syncs != 3 {
		t.Errorf("%d syncs; want 3: the idle force's, the held one, and one for the %d forces that slept on it", dev.syncs, n)
	}
	if st.ForceSleeps != n || st.CallerRounds != 3 {
		t.Errorf("%d forces slept, %d rounds run by callers; want %d and 3", st.ForceSleeps, st.CallerRounds, n)
	}
	if st.Records != 3 {
		t.Errorf("%d records; want 3 (the %d later commits share one)", st.Records, n)
	}
}
