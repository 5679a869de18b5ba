// Package journal is xlogfs's metadata engine: an in-memory model of every
// inode, changed only by transactions that go through an XFS-style
// write-ahead log (iclogs, log forces with group commit, checkpoints that
// move the tail, crash recovery), over a store directory (DESIGN §1, §3,
// §4). It works without FUSE; package fusefs only calls it. Every read and
// write of the store goes through a StoreFS (storefs.go): the real
// filesystem in use; in tests CrashFS, which models what a power cut keeps,
// and FaultFS, which fails chosen calls. The one exception is by design: in
// metadata-journal mode the data file of a file open in kernel FUSE
// passthrough is read and written by the kernel directly, and the journal
// learns what that did to the inode from the data file (passthrough.go).
// Small writes may be logged with their bytes (immediate.go), and an
// overwrite's fsync may share the log's device flush (fiemap.go).
//
// # Log ops
//
// Each transaction carries one op (ops.go), replayed onto the model in log
// order. Op types are numbered and never renumbered, and each encodes a
// fixed list of fields, so records written before a type was added decode
// as they always did. The newest, sizefollows (12), carries an inode and a
// flag: set, the inode was opened for writing in passthrough since the
// mount, and recovery keeps
// its data file's size when that is larger than the logged one, since the
// kernel may have synced writes there that the journal never saw (O_SYNC,
// O_DSYNC, RWF_DSYNC); clear, the logged size holds again. The mark is part
// of the model, so checkpoints carry it: after the inodes, a count and the
// marked inodes' numbers, present only when some inode is marked, so a
// checkpoint without marks is as before (passthrough.go).
//
// # Recovery
//
// Mounting (and xlogfs check) loads the checkpoint and walks the log from
// its tail, record by record, by the writer's placement rule: each record
// starts where the previous one ended, or at block 0 of the next cycle when
// the largest record might not fit before the end of the log. Every valid
// record is replayed (its committed transactions newer than the
// checkpoint). The walk stops at the first position whose record is bad
// (its header, CRC, cycle stamps or ops fail) or missing (no header there
// of that cycle and position). Then it looks past that head for valid
// records newer than it, and decides how the log ends:
//
//   - Nothing bad, nothing newer: the log simply ends there.
//   - Torn: the bad or missing record may have been in flight at a crash.
//     The log is cut there, with a warning naming its LSN, and the newer
//     records (in flight too) are dropped.
//   - Corrupt: the bad record had been durable. The mount refuses, naming
//     the LSN, the log offset, the stored and computed CRC and the
//     committed transactions in it and after it, which a cut would lose and
//     which may have been acknowledged; xlogfs check --repair cuts the log
//     there after listing them.
//
// A 512-byte block is written whole or not at all, and every block of a
// record carries its cycle (package logbuf). So a bad record is torn only
// if all of these hold, and corrupt otherwise:
//
//  1. It is not evidently written whole. A record is written whole when
//     every block of it carries its cycle; also when its header block
//     (which names this cycle and position) is damaged, and when its CRC
//     verifies with one bit of h_len cleared. A torn write leaves some
//     block as it was, which carries an older cycle or none.
//  2. No valid record after it carries a durable watermark at or above its
//     LSN: that record was written when the log was already durable past
//     it.
//  3. It could have been in flight: at most logbufs records (of the writer
//     that wrote them, recorded in the checkpoint) lie from it to the
//     newest valid record after it, counted in records: those found, and
//     at least one for each gap between them, more for a gap wider than
//     the largest record. The writer reuses an iclog only once its record
//     is durable, so no more than logbufs are ever written but not durable.
//  4. No valid record after it starts inside it.
//
// A record whose CRC verifies once its cycle words are restored is valid:
// every byte but those words is as written (a damaged stamp, or a torn
// write over an earlier write of the very same bytes). It is replayed, with
// a warning.
//
// Cut-and-rewrite: after any mount of a log that did not end with an
// unmount record, the free blocks just past the head (more than in-flight
// records can reach) are zeroed and synced before the new writer starts.
// The new writer rewrites those positions in the same cycle; without the
// clearing, a block left from a record that was in flight at the crash
// would carry the right cycle and make a later torn write of the new
// record look written whole.
//
// What the bytes cannot tell apart: a block of one of the last records that
// loses its contents (zeroed, or back to what it held a cycle earlier) when
// nothing after it proves it was durable looks exactly like a torn write of
// that record, and is cut as one.
package journal
