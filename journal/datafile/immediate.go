package datafile

import (
	"github.com/xlogfs/xlogfs/journal/store"
)

// Immediate writes (Config.ImmediateWrite). ZFS's intent log copies a
// small synchronous write into the log record itself (an "immediate"
// write, up to zfs_immediate_write_sz, 32 KiB) and writes large ones in
// place: then the fsync after a small write, an append included, is one
// log write and one flush, where writing the data in place costs the data
// file's sync as well (an append's size is the host filesystem's metadata,
// so even an fsync that writes back without a flush cannot spare it). In
// metadata-journal mode with ImmediateWrite set, a write of at most that
// many bytes is logged with its bytes, as in data-journal mode, and still
// written to the data file; its fsync forces the log alone. Larger writes
// go to the data file only, as before, and their fsync syncs it.
//
// Kernel passthrough and immediate writes exclude each other: a write the
// kernel makes to the data file itself never reaches the journal to be
// logged.
//
// Replay. A logged write's bytes are written to the data file at replay,
// except where a later transaction changed them by other means: a write
// whose bytes went to the data file only, a shrink below them, a hole
// punch or zero range, the inode's free. Those bytes are the data file's
// (durable if their own fsync was: each of those transactions is one that
// fdatasync forces: the engine sets Inode.DataLSN at their commit), and writing the older logged
// bytes over them would bring back what they replaced. So in this mode
// replay defers logged bytes to the end of the walk and drops what later
// transactions superseded.

// syncBeforeSuperseding makes the data file durable before a change that
// replay takes for newer than logged bytes of the file (a write to the
// data file only, a hole punch or zero range) is committed, or (a shrink,
// whose transaction is forced before the cut) before anything else can
// change the file, when such bytes
// may still be replayed (the file's newest logged write is past the log's
// tail, which recovery reads from): else a crash that kept the change's
// transaction but not its bytes (or the data file's name) would replay
// neither, and bring back what the logged bytes had replaced. The caller
// holds st.mu.
func (f *Files) syncBeforeSuperseding(st *Inode, file store.StoreFile) error {
	if f.cfg.ImmediateWrite == 0 || st.loggedLSN == 0 || st.loggedLSN < f.e.TailLSN() {
		return nil
	}
	if err := f.fdatasync(file); err != nil {
		st.lose(err)
		return err
	}
	if f.nameUnsynced(st) {
		// The data file's name too: replay would make the file anew
		// from its logged bytes alone.
		if err := f.SyncDir(); err != nil {
			return err
		}
	}
	st.dataDirty = false
	return nil
}

// immediate reports whether a write of n bytes is logged with its bytes.
func (f *Files) immediate(n int) bool {
	return !f.cfg.LogData && f.cfg.ImmediateWrite > 0 && n <= f.cfg.ImmediateWrite
}
