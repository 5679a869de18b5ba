//go:build lockorder

package lockorder

import (
	"strings"
	"sync"
	"testing"
)

// mustPanic runs fn and returns the message it panicked with; it fails
// the test if fn returns.
func mustPanic(t *testing.T, fn func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("no panic: the checker let an out-of-order acquire through")
		}
		msg, _ = r.(string)
	}()
	fn()
	return ""
}

// TestInversionPanics: an inode's lock taken under the checkpoint lock
// (the inversion a checkpoint syncing an inode's data file under ckptMu
// would make against a shrink) panics before it blocks.
func TestInversionPanics(t *testing.T) {
	var ckpt Mutex[Checkpoint]
	var inode Mutex[Inode]
	ckpt.Lock()
	msg := mustPanic(t, inode.Lock)
	ckpt.Unlock()
	if !strings.Contains(msg, "Inode lock taken out of order, under the Checkpoint lock taken at") || !strings.Contains(msg, "TestInversionPanics") {
		t.Fatalf("panic %q does not name the two ranks and where the held one was taken", msg)
	}
	// The panic took nothing: both are free, and the order holds.
	inode.Lock()
	ckpt.Lock()
	ckpt.Unlock()
	inode.Unlock()
}

// TestModelUnderInode: the model lock, read or written, under an inode's
// lock is the order (a write's commit); the reverse panics.
func TestModelUnderInode(t *testing.T) {
	var model RWMutex[Model]
	var inode Mutex[Inode]
	inode.Lock()
	model.RLock()
	model.RUnlock()
	model.Lock()
	model.Unlock()
	inode.Unlock()

	model.RLock()
	mustPanic(t, inode.Lock)
	model.RUnlock()
}

// TestLeavesAndSameRank: nothing ranked under a leaf, no two locks of one
// rank together, no lock taken twice.
func TestLeavesAndSameRank(t *testing.T) {
	var a, b Mutex[Leaf]
	var c Mutex[Checkpoint]
	var i1, i2 Mutex[Inode]
	a.Lock()
	mustPanic(t, b.Lock)
	mustPanic(t, c.Lock)
	mustPanic(t, a.Lock)
	a.Unlock()
	i1.Lock()
	if msg := mustPanic(t, i2.Lock); !strings.Contains(msg, "while holding another lock of its rank") {
		t.Fatalf("two inode locks: panic %q", msg)
	}
	i1.Unlock()
}

// TestPerGoroutine: what one goroutine holds does not order another's
// acquires; a lock unlocked by another goroutine is no longer held.
func TestPerGoroutine(t *testing.T) {
	var c Mutex[Checkpoint]
	var inode Mutex[Inode]
	c.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		inode.Lock()
		inode.Unlock()
	}()
	<-done
	go func() { c.Unlock(); close(done) }()
	done = make(chan struct{})
	<-done
	inode.Lock() // c was released by the other goroutine
	inode.Unlock()
}

// TestCondWait: a sync.Cond over a checked mutex releases it while it
// waits and takes it back, in order, when woken.
func TestCondWait(t *testing.T) {
	var mu Mutex[Leaf]
	var model RWMutex[Model]
	cond := sync.Cond{L: &mu}
	ready := false
	go func() {
		mu.Lock()
		ready = true
		cond.Broadcast()
		mu.Unlock()
	}()
	model.Lock()
	mu.Lock()
	for !ready {
		cond.Wait()
	}
	mu.Unlock()
	model.Unlock()
}
