// Package lockorder names the journal's ranked mutexes and, in a build with
// the lockorder tag, checks that every goroutine takes them in the order of
// their ranks (package journal's documentation, Locking).
//
// A mutex is declared with its rank as a type argument:
//
//	mu lockorder.Mutex[lockorder.Inode]
//
// Without the tag, Mutex and RWMutex are sync.Mutex and sync.RWMutex and
// cost nothing more. With it (go test -tags lockorder, make
// test-lockorder), each Lock, RLock and TryLock records the lock in a set
// held per goroutine, and an acquire panics, before it blocks, if the
// goroutine already holds a lock of the same or a later rank: a lock taken
// out of order, a leaf taken under another leaf, or a mutex taken twice.
// The ranks, first taken first:
//
//	Inode       datafile.Inode.mu
//	Model       journal.FS.mu (the model lock)
//	Runs        journal.FS.runMu
//	Checkpoint  journal.FS.ckptMu
//	Leaf        journal.FS.shadowMu, datafile.Files.statesMu, dirtyMu and
//	            freedMu, xlog.Log.mu: nothing ranked is taken under them
//
// Two locks of one rank never nest, so neither do two inodes' locks.
package lockorder

// Rank is a place in the lock order; the types below are the ranks.
type Rank interface {
	rank() (level int, name string)
}

// Inode ranks datafile.Inode.mu: taken first, before the engine's locks
// (a write holds it across its commit).
type Inode struct{}

// Model ranks journal.FS.mu, the model lock: commits hold it across the
// log's lock.
type Model struct{}

// Runs ranks journal.FS.runMu: one runCheckpoint or reap at a time, around
// the checkpoint lock.
type Runs struct{}

// Checkpoint ranks journal.FS.ckptMu: one checkpoint at a time; a shrink
// holds it (Engine.BetweenCheckpoints) under its inode's lock.
type Checkpoint struct{}

// Leaf ranks the locks under which no ranked lock is taken.
type Leaf struct{}

func (Inode) rank() (int, string)      { return 1, "Inode" }
func (Model) rank() (int, string)      { return 2, "Model" }
func (Runs) rank() (int, string)       { return 3, "Runs" }
func (Checkpoint) rank() (int, string) { return 4, "Checkpoint" }
func (Leaf) rank() (int, string)       { return 5, "Leaf" }
