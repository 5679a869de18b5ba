// Package datafile is the journal's file data path: the data files that
// hold regular files' bytes (DIR/data/<ino>, named by inode number) and the
// in-core inodes (Inode) that order their I/O with the transactions
// describing it.
//
// It does not know the log. What it needs of the filesystem engine
// (package journal) is the Engine interface: an inode's size and times as
// the model has them, the commit of a transaction, a log force, the log's
// tail, and the checkpoint lock a shrink holds from its force to its cut.
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
package datafile
