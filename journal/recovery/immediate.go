package recovery

import (
	"slices"

	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/internal/span"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
)

// Immediate writes at replay (the rules: package datafile, immediate.go). A
// metadata-journal log carries bytes only for immediate writes. Writing
// them where they were logged would bring back what a later transaction
// changed by other means (a write to the data file only, a shrink, a punch,
// the inode's free), whose bytes are the data file's: so replay defers the
// logged bytes to the end of the walk and drops what later transactions
// superseded.

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
func (d *deferredWrites) apply(files *datafile.Files, replayed map[meta.Ino]bool) error {
	for _, w := range d.all {
		if len(w.keep) == 0 || files.Missing(w.ino) {
			continue // nothing left, or a data file that lost durable bytes, left as it is (datafiles.go)
		}
		err := files.With(w.ino, true, func(f store.StoreFile) error {
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
func (d *deferredWrites) layOver(o datafile.Overlay) {
	for _, w := range d.all {
		for _, s := range w.keep {
			o.Add(&meta.Op{Type: meta.OpWrite, Ino: w.ino, Off: s.Lo, Len: s.Hi - s.Lo, Data: w.data[s.Lo-w.off : s.Hi-w.off]}, false)
		}
	}
}
