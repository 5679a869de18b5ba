//go:build lockorder

package lockorder

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync"
)

// Enabled reports whether this build checks the lock order.
const Enabled = true

// Mutex is a sync.Mutex of rank R whose acquires are checked.
type Mutex[R Rank] struct{ mu sync.Mutex }

func (m *Mutex[R]) Lock() {
	before(m, rankOf[R]())
	m.mu.Lock()
	taken(m, rankOf[R]())
}

func (m *Mutex[R]) TryLock() bool {
	if !m.mu.TryLock() {
		return false
	}
	taken(m, rankOf[R]()) // a TryLock never waits, so it cannot deadlock
	return true
}

func (m *Mutex[R]) Unlock() {
	released(m)
	m.mu.Unlock()
}

// RWMutex is a sync.RWMutex of rank R whose acquires are checked.
type RWMutex[R Rank] struct{ mu sync.RWMutex }

func (m *RWMutex[R]) Lock() {
	before(m, rankOf[R]())
	m.mu.Lock()
	taken(m, rankOf[R]())
}

func (m *RWMutex[R]) Unlock() {
	released(m)
	m.mu.Unlock()
}

func (m *RWMutex[R]) RLock() {
	before(m, rankOf[R]())
	m.mu.RLock()
	taken(m, rankOf[R]())
}

func (m *RWMutex[R]) RUnlock() {
	released(m)
	m.mu.RUnlock()
}

type rank struct {
	level int
	name  string
}

func rankOf[R Rank]() rank {
	var r R
	l, n := r.rank()
	return rank{l, n}
}

type holding struct {
	lock any
	rank rank
	at   string // where it was taken
}

var (
	heldMu sync.Mutex
	held   = map[uint64][]holding{} // by goroutine
)

// before panics if the calling goroutine holds a lock that must not be
// held while taking lock: one of rank r or later.
func before(lock any, r rank) {
	g := goid()
	heldMu.Lock()
	var bad *holding
	for i, h := range held[g] {
		if h.rank.level >= r.level {
			bad = &held[g][i]
			break
		}
	}
	var h holding
	if bad != nil {
		h = *bad
	}
	heldMu.Unlock()
	if bad == nil {
		return
	}
	what := "out of order"
	switch {
	case h.lock == lock:
		what = "twice"
	case h.rank.level == r.level:
		what = "while holding another lock of its rank"
	}
	panic(fmt.Sprintf("lockorder: %s lock taken %s, under the %s lock taken at %s; the order is Inode, Model, Runs, Checkpoint, Leaf",
		r.name, what, h.rank.name, h.at))
}

func taken(lock any, r rank) {
	g := goid()
	at := caller()
	heldMu.Lock()
	held[g] = append(held[g], holding{lock: lock, rank: r, at: at})
	heldMu.Unlock()
}

// released drops lock from its goroutine's set: the caller's, or another's
// if the lock was handed over (a sync.Mutex may be unlocked by any
// goroutine).
func released(lock any) {
	g := goid()
	heldMu.Lock()
	defer heldMu.Unlock()
	if drop(g, lock) {
		return
	}
	for other := range held {
		if drop(other, lock) {
			return
		}
	}
	panic("lockorder: unlock of a lock no goroutine holds")
}

func drop(g uint64, lock any) bool {
	hs := held[g]
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].lock == lock {
			hs = append(hs[:i], hs[i+1:]...)
			if len(hs) == 0 {
				delete(held, g)
			} else {
				held[g] = hs
			}
			return true
		}
	}
	return false
}

// goid is the calling goroutine's id, from its stack's first line
// ("goroutine 7 [running]:"): a debug build's cost.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic(fmt.Sprintf("lockorder: no goroutine id in %q: %v", buf[:], err))
	}
	return id
}

// caller names the caller of Lock, RLock or TryLock: where the lock was
// taken.
func caller() string {
	pcs := make([]uintptr, 1)
	// Skip runtime.Callers, caller, taken and the Lock method.
	frames := runtime.CallersFrames(pcs[:runtime.Callers(4, pcs)])
	f, _ := frames.Next()
	return fmt.Sprintf("%s (%s:%d)", f.Function, f.File, f.Line)
}
