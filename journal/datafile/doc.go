// Package datafile is the journal's file data path: the data files that
// hold regular files' bytes (DIR/data/<ino>, named by inode number) and the
// in-core inodes (Inode) that order their I/O with the transactions
// describing it.
//
// It does not know the log. What it needs of the filesystem engine
// (package journal) is the Engine interface, given to New: an inode's size
// and times as the model has them, the commit of a transaction, a log
// force, the log's tail, the count of checkpoints, and a way to run a
// shrink's force and cut with no checkpoint running (BetweenCheckpoints).
// The engine calls it for every read, write, truncate and fallocate of a
// regular file, for the data part of fsync, at checkpoints (SyncDirty,
// Reap) and at mount (With, Reconcile).
//
// The rules it keeps:
//
//   - A write reaches the data file before the transaction describing it
//     commits, under the inode's lock, so data-file order and log order
//     agree; in data-journal mode the transaction carries the bytes too.
//   - A shrink is logged and forced before the data file is cut (io.go,
//     shrink): a crash never recovers the old size over a data file that
//     lost its end.
//   - fsync in metadata-journal mode syncs the data file (Sync) beside the
//     log force, or writes an overwrite back without a flush when the log's
//     flush covers it (WriteBack).
//   - A failed data sync is remembered (Inode's error): every later fsync
//     of the inode reports it, since the kernel marked the pages clean.
//   - A checkpoint syncs every data file written since the last one before
//     the tail moves (SyncDirty); a freed inode's data file is deleted once
//     its free is durable, and not before (Reap), whether or not a
//     checkpoint follows.
//   - So a data file always holds at least what the last checkpoint made
//     durable, unless the replayed log frees its inode, which recovery
//     checks; a file whose data file lost such
//     bytes outside xlogfs, mounted anyway, is marked (MarkMissing, in
//     memory) and fails reads and writes with EIO instead of showing zeros,
//     until a truncate to 0 (missing.go).
//
// Within it: O_DIRECT writes (direct.go), immediate writes logged with
// their bytes (immediate.go), kernel passthrough and the size-follows mark
// (passthrough.go), NoRecovery's overlay of replayed bytes on reads
// (overlay.go), files whose data is missing (missing.go), and the emulated
// flush latency of a measuring mount (flush.go).
//
// # Locking
//
// Its mutexes take their place in package journal's lock order (its
// documentation, Locking; journal/internal/lockorder ranks them):
//
//   - Inode.mu, each in-core inode's, comes first of all: it is held
//     across the engine's calls (Commit and Inode take the engine's model
//     lock, Force the log's, BetweenCheckpoints its checkpoint lock), so
//     that the data file's I/O and the log's records come in one order. It
//     guards the inode's fields but the atomics (Inode says which). No
//     goroutine holds two inodes' locks.
//   - Files.statesMu (the table of in-core inodes and the passthrough ones
//     to learn), dirtyMu (the data files the next checkpoint syncs) and
//     freedMu (the data files to delete once their frees are durable) are
//     leaves: taken under an inode's lock or the engine's, nothing under
//     them. So what walks the table (LearnAll, CloseAll) copies it first,
//     then takes each inode's lock.
//
// What runs under the engine's checkpoint lock (SyncDirty, Reap) takes no
// inode's lock: a shrink holds its inode's lock while it waits for the
// checkpoint lock. A failed sync's error (Inode's dataErr, which fsync
// reports from then on) is therefore atomic. Whoever calls CloseAll holds
// none of the engine's locks: an operation holding its inode's lock may be
// waiting for them.
package datafile
