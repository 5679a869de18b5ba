// Package journal is xlogfs's metadata engine: an in-memory model of every
// inode, changed only by transactions that go through an XFS-style
// write-ahead log (iclogs, log forces with group commit, checkpoints that
// move the tail, crash recovery), over a store directory. It works without
// FUSE; package fusefs only calls it. Every read and write of the store goes
// through a store.StoreFS: the real filesystem in use; in tests CrashFS,
// which models what a power cut keeps, and FaultFS, which fails chosen calls
// (journal/internal/testfs). The one exception is by design: in metadata-journal mode the
// data file of a file open in kernel FUSE passthrough is read and written by
// the kernel directly, and the journal learns what that did to the inode
// from the data file (datafile/passthrough.go). Small writes may be logged with their
// bytes (datafile/immediate.go), and an overwrite's fsync may share the log's device
// flush (store/fiemap.go).
//
// It joins the parts below it: the metadata model and its ops
// (journal/meta), the log (journal/xlog, which knows nothing of the model:
// it carries opaque regions), the file data path (journal/datafile: the
// data files and in-core inodes, which reach the log only through this
// package, datafile.Engine), recovery at mount and inspection
// (journal/recovery), the store directory (journal/store) and the .stats
// format (journal/statsfile). This package is the engine: the filesystem
// operations, commit, the checkpointer, mounting and the counters.
//
// This comment is the definition of the store, of what the log's records
// carry, of the journal modes and of the recovery rules; the record format
// itself is package logbuf's.
//
// # The store
//
// A store is a directory:
//
//	superblock    magic, format version, UUID, log size, default logbsize, CRC coverage
//	log           the circular log, preallocated (zeroed by mkfs)
//	checkpoint    the metadata as of a log position, replaced atomically
//	data/<ino>    the bytes of each regular file, named by inode number
//	xlogfs.log    the messages of a daemonized mount (the command's; optional)
//
// The superblock is 512 bytes: "XLOGFSSB" at 0, the format version (1) at
// 8, the UUID at 12 (every log record carries it, h_fs_uuid), the log's size
// in bytes at 28 (8 bytes), the default iclog size at 36, all big-endian,
// the CRC coverage of every log record at 40 (one byte: 0 whole, 1 xfs;
// mkfs --crc, package logbuf's CRC coverage; zero in stores made before it
// was a choice, which so read as whole), and at 508 the CRC-32C of the
// bytes before it, little-endian. Every mount, recovery, check and
// logprint verifies records under the store's coverage. Mkfs writes
// it once, last (a temporary file renamed into place, then the directory
// synced), after data/, the zero-filled and synced log and a first
// checkpoint, so a directory with a superblock is a complete store. One
// without is half-built (no checkpoint yet, or mkfs's first one beside a
// log without records and no data file: nothing to lose, and mkfs --force
// may redo it) or a store that lost its superblock: then its log and
// checkpoint say all the superblock said (the UUID every record carries,
// the log file's size, the iclog size of the checkpoint's writer, the CRC
// coverage the records verify under), and
// xlogfs check --rebuild-superblock writes it again (store/rebuild.go).
// mkfs --force remakes an existing store under the store's lock, refusing
// one in use, and first overwrites its superblock in place with
// "XLOGFSMK", the mark of a store being made again, so a crash part way
// leaves a store that says mkfs did not finish.
//
// The checkpoint file is "XLGCKPT1", a CRC-32C at 8 (little-endian, over the
// whole file with these four bytes read as zero), the payload's length at 12
// (8 bytes, big-endian), then the payload: as unsigned varints the
// checkpoint's sequence number, the log tail (the LSN recovery starts
// walking at), the last transaction id the model includes, and the iclog
// count and size of the writer of the records after the tail (how many
// records can have been in flight, and the largest); then the model
// (meta.Model.Encode). It is replaced by writing checkpoint.tmp, syncing it,
// renaming it over checkpoint and syncing the directory: a crash leaves the
// old one or the new one, whole.
//
// An inode's times are nanoseconds since the epoch in an int64 (the model,
// meta.Inode, and every op that sets them), so the store holds times from
// 1677-09-21 00:12:43.145224192 UTC to 2262-04-11 23:47:16.854775807 UTC
// (MinTime, MaxTime). A time outside that range (utimensat of 1600, or of
// 2300) is clamped to the nearest end (TimeNanos), as ext4 clamps to its
// own range; it never wraps around.
//
// While a process uses the store it holds an flock on the superblock: a
// mount exclusively from before recovery until its unmount record is
// durable, xlogfs check for as long as it reads or cuts the log, mkfs
// --force and a superblock rebuild until the new superblock is durable
// (store/inuse.go).
//
// # What the log carries
//
// Every change of the metadata is one transaction holding one Op (meta/ops.go):
// a START op, the op's region, a COMMIT op (logbuf's op headers). The
// region is the op's type byte, then the fields its type has, as varints or
// length-prefixed bytes (meta.Op.Encode). With Options.LogItems
// LogItemsXFS (mount's default, --log-items xfs) the op's region is
// followed by the regions of the log items XFS would log for the op, each
// item once per record (package logbuf's documentation, Log items;
// journal/xfsitems): recovery applies the first region alone and checks
// the rest are well-formed items. A log may hold both kinds of
// transaction. Transaction ids count up and wrap at
// 2^32; "newer" is serial-number arithmetic. A commit validates the op
// against the model, copies its region into the active iclog, and only
// then applies it to the model: an op the model would refuse is never
// logged, and a failed commit changes nothing. fsync forces the log up to
// the newest record holding a change of the inode, fdatasync up to the
// newest one that changed its data or size; forces are group commits, one
// device flush serving every force its records cover.
//
// Records are placed one after the other: each record starts where the
// previous one ended, or at block 0 of the next cycle when the largest
// record might not fit before the end of the log. The writer reuses an
// iclog only once its record is durable, so at most logbufs records are
// ever written but not yet durable, and each record's durable watermark
// (logbuf) names the newest record durable when it was sealed.
//
// # Journal modes
//
// JournalMeta (--journal meta, the default, as XFS) logs metadata only. A
// write goes to the file's data file, and is logged as an OpWrite without
// its bytes (offset, length, times) so the size and times it changed are
// recovered; fsync syncs the data file and forces the log, side by side,
// and returns when both are done. With ImmediateWrite a write of at most
// that many bytes is logged with its bytes too, so its fsync is a log
// force alone (datafile/immediate.go). With kernel passthrough the kernel writes
// the data file itself and the journal logs what it finds there
// (datafile/passthrough.go).
//
// JournalData (--journal data, as ext4 data=journal) logs written bytes
// too: an OpWrite carries them, fsync is a log force alone, and the data
// files catch up at checkpoints (replay writes the logged bytes to them
// again after a crash, but not those of a file the replayed log frees: its
// data file is deleted, and may be already).
//
// # Checkpoints and the tail
//
// A checkpoint writes the model as of the newest durable record and moves
// the log tail to it, every CheckpointInterval, when the log is three
// quarters full, and when a commit waits for log space. It keeps the write-ahead rule by its order: records
// durable; the shadow model (which applies transactions only once their
// record is durable) and its boundary taken together; the data files
// synced, since every write the state includes was made to its data file
// before it committed; the checkpoint file written; and only then the tail
// moved.
//
// A freed inode's data file is deleted as soon as its free is durable, by
// whatever log force made it so (an fsync, the periodic force, a
// checkpoint's; while checkpoints fail, the free is forced at once), not
// at the next checkpoint: a checkpoint needs room for its file, which on a
// full disk the deletion may be what gives back. Nothing needs the file
// again: recovery replays the free onto whatever checkpoint still holds
// the inode. Before the free is durable a crash may undo it, and the file
// must then be whole. (An unlinked inode still open is freed at its last
// close, or at unmount or recovery if it was open then.)
//
// An unmount frees the unlinked inodes, deletes their data files,
// checkpoints (forcing everything first) and writes the unmount record. A
// checkpoint with no room (a full disk) does not stop it: the log holds
// everything, the unmount record goes in all the same, and the next mount
// replays the log from the last checkpoint.
//
// # Log ops
//
// Each transaction carries one op (meta/ops.go), replayed onto the model in log
// order. Op types are numbered and never renumbered, and each encodes a
// fixed list of fields, so records written before a type was added decode
// as they always did; a field added to a type later goes at the end of its
// list and may be absent (zero) in older records. The newest type,
// sizefollows (12), carries an inode and a flag: set, the inode was opened
// for writing in passthrough since the mount, and recovery keeps its data
// file's size when that is larger than the logged one, since the kernel may
// have synced writes there that the journal never saw (O_SYNC, O_DSYNC,
// RWF_DSYNC); clear, the logged size holds again. The same flag, added at
// the end of create's fields, creates a regular file marked in a
// passthrough mount, so that its first open for writing forces nothing
// (its data file's name is durable before the create's record is written:
// datafile/names.go). The mark is part of the model, so checkpoints carry
// it: after the inodes, a count and the marked inodes' numbers, present
// only when some inode is marked, so a checkpoint without marks is as
// before (datafile/passthrough.go).
//
// # Recovery
//
// Mounting (and xlogfs check) loads the checkpoint and walks the log from
// its tail, record by record, by the writer's placement rule (above). Every
// valid record is replayed: its committed transactions whose id is newer
// than the checkpoint's last, in log order. A transaction without its
// COMMIT is dropped, and unlinked inodes still held open when the log
// ended are freed. The walk stops at the first position whose record is bad
// (its header, its CRC under the store's coverage or, under xfs coverage,
// the checks of the bytes the CRC leaves out, its cycle stamps or its ops
// fail) or missing (no header there of that cycle and position). Then it looks past that head for valid
// records newer than it, and decides how the log ends:
//
//   - Nothing bad, nothing newer: the log simply ends there.
//   - Torn: the bad or missing record may have been in flight at a crash.
//     The log is cut there, with a warning naming its LSN, and the newer
//     records (in flight too) are dropped.
//   - Corrupt: the bad record had been durable. The mount refuses, naming
//     the LSN, the log offset, the stored and computed CRC and what a cut
//     would lose, which may have been acknowledged; xlogfs check --repair
//     cuts the log there after listing it.
//
// What a cut loses (the transactions at stake, xlog.Stake) is listed from
// the records that verify: the committed transactions of the valid records
// after the bad one. The bad record's own bytes failed verification, so
// nothing in its payload is quoted (a flipped bit may be in a tid); it is
// named with the op count its header gives, contents unknown, or, when
// its header cannot be read, as a record whose transactions are unknown,
// as is any record between two valid later ones that does not verify. The
// count is then "at least" the listed ones. The mount's refusal, check and
// check --repair give the same count.
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
// A record that verifies once its cycle words are restored is valid: every
// byte but those words is as written (a damaged stamp, or a torn write over
// an earlier write of the very same bytes, or, under xfs coverage, over an
// extension header the record does not need that held only an older
// cycle). It is replayed, with a warning.
//
// On a full disk the fresh checkpoint a mount writes after recovery may
// have no room. A read-write mount then goes on from the checkpoint it
// recovered from, degraded, if the log has room for records past its
// head: so that deleting files can give the space back. The new writer
// must then have that checkpoint's log geometry (recovery allows for its
// in-flight records), and its transaction ids start past every id the
// walk saw (a transaction dropped as incomplete is walked again). With the
// log full too, the mount is refused, naming the checkpoint's bytes and
// how many to free in the filesystem. A read-only mount that cannot finish
// recovery replays the log in memory only, as NoRecovery does. Whatever
// checks the data files at mount must check them against the model after
// replay: an inode the checkpoint holds and the replayed log frees may
// have no data file left, its free having been durable.
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
//
// Data files are checked too (recovery/datafiles.go). A crash may leave a
// data file shorter than its file's logged size, or missing: a write
// reaches the data file before its transaction commits, but only fsync or
// a checkpoint syncs the data file, so another file's fsync can make the
// record durable while the bytes are lost. Such a write was never
// acknowledged, and recovery extends (or makes) the data file to the
// logged size, with zeros. No crash leaves a data file shorter than a
// checkpoint made durable: a checkpoint syncs every data file written
// since the last one before it is written, and a shrink is logged and
// forced before the data file is cut. So every regular file's data file
// must hold at least the least size the file had from the checkpoint on
// (its size in the checkpoint, and each size replay gives it after; a file
// created since needs nothing), in either journal mode; a size-follows
// mark excuses a longer data file, never a shorter one. A file whose data
// file holds less lost bytes that were durable, to something outside
// xlogfs (a deleted or cut data file, a damaged disk, the indistinguishable
// lost block above when the dropped records had cut a data file or freed
// an inode whose file was then deleted). The mount refuses it, before
// replay writes anything, naming each such inode, a path of it, its data
// file and the sizes; xlogfs check names them and is not sound. A mount
// with AllowMissingData (--allow-missing-data) goes on, logging each: those
// files fail every read and write with EIO, never reading as zeros, until a
// truncate to 0 (which makes the file whole, empty) or their removal, and
// their data files are left as they are, so the next mount without the flag
// refuses again. A NoRecovery mount is refused alike, since it would show
// the missing bytes as zeros.
//
// # Locking
//
// The journal's mutexes, first taken first (journal/internal/lockorder
// ranks them so; a build with -tags lockorder, make test-lockorder, panics
// on an acquire out of this order):
//
//  1. datafile.Inode.mu, one per in-core inode: orders the data file's I/O
//     with the transactions describing it, so it is held across the
//     engine's calls (a write's commit, a read's look at the size, a
//     shrink's force and cut). It guards the inode's data file
//     descriptors and data-path state (datafile.Inode says which fields).
//  2. FS.mu, the model lock (an RWMutex): the model, the unlinked inodes,
//     the XFS item tracker and what fsync forces per inode (FS.forces: the
//     LSNs are the engine's, not the data path's). Every commit holds it
//     for writing across the log's Commit, which may wait for an iclog or
//     for log space; lookups hold it for reading.
//  3. FS.runMu: one runCheckpoint or reap at a time.
//  4. FS.ckptMu: one checkpoint at a time, and none while a shrink forces
//     and cuts (datafile.Engine.BetweenCheckpoints); it guards ckptSeq.
//  5. Leaves, under which no other of these is taken: FS.shadowMu (the
//     shadow model and its boundary), datafile.Files.statesMu (the table
//     of in-core inodes, not the inodes), dirtyMu (the data files a
//     checkpoint syncs), freedMu (the data files to delete), and
//     xlog.Log.mu (the log's state; its conds wait on it).
//
// No goroutine holds two locks of one rank (two inodes' locks, say), or
// read-locks FS.mu twice (a writer waiting between the two would deadlock
// it). Beside the mutexes, two waits take part in the order: a commit
// waiting for log space holds FS.mu, and may hold an inode's lock, until
// a checkpoint moves the tail; so the checkpointer takes neither (it syncs
// data files through descriptors of its own and records a sync's failure
// atomically, datafile.Inode's dataErr), and unmount, which holds FS.mu
// while it stops the checkpointer and takes the final checkpoint, closes
// the data files (each under its inode's lock) only once it has let FS.mu
// go. And the log calls out under Log.mu only to Commit's regions and to
// the checkpoint request, which does not block; it tells of durable
// records (the shadow's onDurable, the reaper's afterDurable) and of its
// failure outside it. The test doubles' mutexes (journal/internal/testfs:
// CrashFS, FaultFS, CrashDevice) guard their own state inside a store or
// device call, taking nothing: below every rank, unranked.
//
// The goroutines and what they take:
//
//   - Requests (package fusefs's, or any caller's): a data operation its
//     inode's lock, then FS.mu, then the log's (commits, forces); a shrink
//     also ckptMu between FS.mu and the log's (after its commit let FS.mu
//     go); a namespace or attribute operation FS.mu, then the log's and
//     the data path's tables.
//   - The checkpointer (checkpointer): runMu, ckptMu, then leaves (the
//     log's lock for its sync and tail, shadowMu, the data path's tables);
//     its reaps runMu, then leaves (the log's, freedMu).
//   - The log writer (xlog), and a forcing caller that runs a round of log
//     I/O itself: Log.mu; outside it, shadowMu (onDurable) and freedMu
//     (afterDurable).
//   - The periodic log force (xlog.Forcer): what the kernel wrote through
//     passthrough learned (each inode's lock, then FS.mu, then the
//     log's), then a force.
//   - Unmount (Close): FS.mu, under which it frees unlinked inodes
//     (statesMu, freedMu, the log's), waits for the checkpointer to stop
//     and takes the final checkpoint (ckptMu, then leaves); then each
//     inode's lock to close its data files. Abandon takes no FS.mu.
package journal
