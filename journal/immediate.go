package journal

import (
	"slices"

	"github.com/xlogfs/xlogfs/journal/internal/span"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
)

// Immediate writes (Options.ImmediateWrite). ZFS's intent log copies a
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
// fdatasync forces, see FS.commitLocked), and writing the older logged
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
func (fs *FS) syncBeforeSuperseding(st *inodeState, f store.StoreFile) error {
	if fs.opts.ImmediateWrite == 0 || st.loggedLSN == 0 || st.loggedLSN < fs.x.TailLSN() {
		return nil
	}
	if err := fs.fdatasync(f); err != nil {
		st.dataErr = err
		return err
	}
	if st.newFile {
		// The data file's name too: replay would make the file anew
		// from its logged bytes alone.
		if err := fs.syncDataDir(); err != nil {
			return err
		}
		st.newFile = false
	}
	st.dataDirty = false
	return nil
}

// immediate reports whether a write of n bytes is logged with its bytes.
func (fs *FS) immediate(n int) bool {
	return fs.opts.Journal == JournalMeta && fs.opts.ImmediateWrite > 0 && n <= fs.opts.ImmediateWrite
}

// loggedWrite is a replayed write's bytes and what of them is still to be
// written.
type loggedWrite struct {
	ino  meta.Ino
	off  int64
	data []byte
	keep []span.Span // of [off, off+len(data)): what no later transaction superseded
}

// deferredWrites collects a metadata-journal log's logged bytes during
// replay.
type deferredWrites struct {
	all   []*loggedWrite
	byIno map[meta.Ino][]*loggedWrite
}

// note sees one replayed op of a metadata-journal log, before the model
// applies it (oldSize: the inode's size before it, -1 if none).
func (d *deferredWrites) note(op *meta.Op, oldSize int64) {
	switch {
	case op.Type == meta.OpWrite && op.Data != nil:
		w := &loggedWrite{ino: op.Ino, off: op.Off, data: slices.Clone(op.Data)}
		w.keep = []span.Span{{Lo: op.Off, Hi: op.Off + int64(len(op.Data))}}
		if d.byIno == nil {
			d.byIno = map[meta.Ino][]*loggedWrite{}
		}
		d.all = append(d.all, w)
		d.byIno[op.Ino] = append(d.byIno[op.Ino], w)
	case op.Type == meta.OpWrite:
		d.supersede(op.Ino, op.Off, op.Off+op.Len)
	case op.Type == meta.OpSetattr && op.Mask&meta.SetSize != 0 && op.Size < oldSize:
		d.supersede(op.Ino, op.Size, 1<<62)
	case op.Type == meta.OpFallocate && op.Mode&(meta.FallocPunchHole|meta.FallocZeroRange) != 0:
		d.supersede(op.Ino, op.Off, op.Off+op.Len)
	case op.Type == meta.OpFree:
		d.supersede(op.Ino, 0, 1<<62)
	}
}

func (d *deferredWrites) supersede(ino meta.Ino, lo, hi int64) {
	for _, w := range d.byIno[ino] {
		w.keep = span.Remove(w.keep, lo, hi)
	}
}

// apply writes what is left of the logged bytes, in log order, and notes
// the data files it changed.
func (d *deferredWrites) apply(fs *FS, replayed map[meta.Ino]bool) error {
	for _, w := range d.all {
		if len(w.keep) == 0 {
			continue
		}
		err := fs.withDataFile(w.ino, func(f store.StoreFile) error {
			for _, s := range w.keep {
				if _, err := f.WriteAt(w.data[s.Lo-w.off:s.Hi-w.off], s.Lo); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		replayed[w.ino] = true
	}
	return nil
}

// layOver gives a NoRecovery mount what apply would have written: the
// logged bytes left, as writes laid over the data files on reads.
func (d *deferredWrites) layOver(o replayOverlay) {
	for _, w := range d.all {
		for _, s := range w.keep {
			o.add(&meta.Op{Type: meta.OpWrite, Ino: w.ino, Off: s.Lo, Len: s.Hi - s.Lo, Data: w.data[s.Lo-w.off : s.Hi-w.off]}, JournalMeta)
		}
	}
}
