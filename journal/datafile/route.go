package datafile

import (
	"fmt"
	"sync/atomic"
)

// Routes: which way a file's writes go. In metadata-journal mode with
// kernel passthrough a regular file's writes can take one of two routes,
// chosen at each open (the kernel wants every open of an inode at one time
// to be of one kind, so an open joins the kind already open):
//
//   - passthrough: the kernel writes the data file itself, without the
//     daemon; the journal learns the size and times the writes left
//     (passthrough.go), and an fsync syncs the data file as well as forcing
//     the log: two device flushes per fsync of an append, one of them the
//     data file's own, which no other file's fsync shares;
//   - log: the open goes through the daemon, and each write of at most
//     ImmediateWrite bytes is logged with its bytes (immediate.go): the data
//     file is written without a flush and synced at the next checkpoint, so
//     the fsync is a log force alone, and one log flush serves every file
//     whose fsync joined it, as ZFS's intent log serves small synchronous
//     writes. Larger writes go to the data file only, and their fsync syncs
//     it.
//
// SyncWrites picks the route. SyncAuto chooses per file from its recent
// history: an open that writes synchronously (O_SYNC, O_DSYNC) takes the
// log; so does a file fsynced at least once per SyncWritesBytes written,
// which is what the log route serves best (dbench, a database's redo log,
// a mail spool); a file written in larger pieces between fsyncs keeps
// passthrough, which spares each write a round trip through the daemon; a
// file with no history yet (new, or not written since the mount) takes the
// log, where a new file's creation needs no log force and no sync of the
// data directory. Whatever the policy, a file whose logged bytes recovery
// may still replay (logged since the tail) stays on the log route until a
// checkpoint moves the tail past them: replay writes logged bytes into the
// data file, and must never write them over newer bytes the kernel wrote
// in passthrough, which the log does not hold.
type SyncWrites uint8

const (
	SyncAuto        SyncWrites = iota // per file, from its history
	SyncLog                           // every open that writes goes through the daemon and the log
	SyncPassthrough                   // passthrough whenever the kernel allows it (O_SYNC/O_DSYNC opens excepted)
)

var syncWritesNames = [...]string{SyncAuto: "auto", SyncLog: "log", SyncPassthrough: "passthrough"}

func (s SyncWrites) String() string {
	if int(s) < len(syncWritesNames) {
		return syncWritesNames[s]
	}
	return fmt.Sprintf("SyncWrites(%d)", s)
}

// ParseSyncWrites accepts auto, log and passthrough.
func ParseSyncWrites(s string) (SyncWrites, error) {
	for i, n := range syncWritesNames {
		if s == n {
			return SyncWrites(i), nil
		}
	}
	return 0, fmt.Errorf("unknown sync-writes route %q (want auto, log or passthrough)", s)
}

// SyncWritesBytes is SyncAuto's yardstick: a file fsynced at least once
// per this many bytes written takes the log route.
const SyncWritesBytes = 64 << 10

// historyBytes is how much writing a file's history remembers: past it,
// both counts are halved, so the history is of the file's recent use.
const historyBytes = 4 << 20

// history is what a file's recent use says about its route: its opens for
// writing, the bytes written (through the daemon, or the appends learned
// from the kernel's passthrough writes; the kernel's overwrites are not
// seen) and fsyncs. Under Inode.mu.
type history struct {
	opens  int64
	bytes  int64
	fsyncs int64
}

func (h *history) wrote(n int64) {
	h.bytes += n
	for h.bytes > historyBytes {
		h.bytes /= 2
		h.fsyncs /= 2
	}
}

// wantsLog reports whether the history says the log route: no open for
// writing yet (in this mount), or at least one fsync per SyncWritesBytes
// written (a 64 KiB write fsynced, as dbench -F makes, is logged whole).
func (h *history) wantsLog() bool {
	return h.opens == 0 || h.fsyncs*SyncWritesBytes >= h.bytes
}

// NoteFsync counts an fsync of the file in its history.
func (st *Inode) NoteFsync() {
	st.mu.Lock()
	st.hist.fsyncs++
	st.mu.Unlock()
}

// RouteCounts are opens of regular files in a passthrough mount by the
// route they took: passthrough, the log route (chosen for the file's
// writes: its history, SyncLog, a synchronous open, or logged bytes
// replay may still write), and through the daemon for another reason (a
// read-only open, or one joining the inode's opens through the daemon).
type RouteCounts struct {
	Passthrough, Log, Daemon atomic.Uint64
}

// The kind of an inode's opens is the kernel's to keep, for longer than
// the opens themselves: once an inode has been opened in passthrough, the
// kernel keeps its backing file until it forgets the inode, and refuses
// (EIO) any later open of it that is not in passthrough; an open through
// the daemon puts the inode in the kernel's cached I/O mode, which refuses
// passthrough opens until the kernel has released it (asynchronously,
// after close). So an inode's first open decides the kind of every open
// until the kernel forgets the inode (Inode.Unheld), and a file changes
// route only between two of the kernel's lives of it.
type openKind uint8

const (
	kindNone openKind = iota
	kindPassthrough
	kindDaemon
)

// daemonRoute returns the count of the route an open of st takes through
// the daemon, or nil for passthrough. The kind the inode's opens have
// taken in the kernel's life of it holds (openKind); else an inode open
// in passthrough takes every open in passthrough; else the log route when
// logRoute says so, and through the daemon when the inode is open that
// way already, or when its data is missing (missing.go): such a file is
// never handed to the kernel, which would read the data file's zeros,
// while the daemon answers EIO. The caller holds st.mu.
func (f *Files) daemonRoute(st *Inode, write, sync bool) *atomic.Uint64 {
	switch {
	case st.passthroughKind():
		return nil
	case st.kind == kindDaemon || st.dataMissing || st.daemonOpens > 0:
		return &f.Routes.Daemon
	case f.logRoute(st, write, sync):
		return &f.Routes.Log
	}
	return nil
}

// passthroughKind reports whether the inode's opens are, or may be until
// the kernel forgets it, passthrough ones: nothing is logged with its
// bytes then. The caller holds st.mu.
func (st *Inode) passthroughKind() bool {
	return st.kind == kindPassthrough || st.ptOpens.Load() > 0
}

// Unheld tells st that the kernel has forgotten the inode (fusefs's last
// reference to it is gone): its next open may take either kind.
func (st *Inode) Unheld() {
	st.mu.Lock()
	st.kind = kindNone
	st.mu.Unlock()
}

// logRoute reports whether an open of st that writes (write) takes the
// log route, and why, before any open of the inode joins: the caller holds
// st.mu, and no open of the inode is in passthrough.
func (f *Files) logRoute(st *Inode, write, sync bool) bool {
	switch {
	case !write:
		return false
	case sync:
		return true // the kernel would sync a passthrough write behind the log's back
	case st.loggedLSN != 0 && st.loggedLSN >= f.e.TailLSN():
		return true
	case f.cfg.ImmediateWrite == 0:
		return false // nothing is logged with its bytes: the route would spare no flush
	case f.cfg.SyncWrites == SyncLog:
		return true
	case f.cfg.SyncWrites == SyncPassthrough:
		return false
	}
	return st.hist.wantsLog()
}

// NewFilesInPassthrough reports whether a new file's first open for
// writing (not synchronous) takes passthrough, as logRoute decides for an
// inode with no history: then a file is best created marked (names.go),
// or that open forces the log. Under SyncAuto with immediate writes a new
// file takes the log route, which needs no mark.
func (f *Files) NewFilesInPassthrough() bool {
	return !f.cfg.LogData && (f.cfg.ImmediateWrite == 0 || f.cfg.SyncWrites == SyncPassthrough)
}

// opened counts an open for writing in st's history, once its route is
// chosen. The caller holds st.mu.
func (st *Inode) opened(write bool) {
	if write {
		st.hist.opens++
	}
}
