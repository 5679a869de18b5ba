package recovery

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
)

// Data files are part of what a mount and xlogfs check verify (package
// journal's documentation, Recovery). A crash may leave a data file shorter
// than its file, or none at all: in metadata-journal mode a write reaches
// the data file before its transaction commits, but the data file is synced
// only by fsync or a checkpoint, so another file's fsync can make the
// write's record durable while its bytes are lost. That write was never
// acknowledged, and Reconcile extends the data file to the logged size.
// What no crash leaves is a data file shorter than a checkpoint made
// durable: a checkpoint syncs every data file written since the last one
// before it is written, and a shrink is logged and forced before the data
// file is cut. So each regular file's data file holds at least the least
// size the inode had from the checkpoint on: its size in the checkpoint and
// every size replay gives it after (a file created since starts at 0, and
// needs nothing). In data-journal mode the same holds: data files catch up
// at checkpoints, and replay writes the logged bytes after. A size-follows
// mark lets a data file be longer than the logged size, never shorter. One
// that holds less was deleted or cut behind the store's back: its bytes are
// gone, and reading zeros in their place would be a lie.

// MissingData is a regular file whose data file lacks bytes that were
// durable.
type MissingData struct {
	Ino      meta.Ino
	Path     string // a path of the inode from the root; "" if none was found
	DataFile string // the data file
	Want     int64  // bytes the data file must hold at least
	Found    int64  // bytes it holds (0 if it is missing)
	Exists   bool   // the data file exists
}

func (d MissingData) String() string {
	path := d.Path
	if path == "" {
		path = "no path"
	}
	if !d.Exists {
		return fmt.Sprintf("inode %d (%s): data file %s is missing; it must hold at least %d bytes, made durable by a checkpoint",
			d.Ino, path, d.DataFile, d.Want)
	}
	return fmt.Sprintf("inode %d (%s): data file %s holds %d bytes; it must hold at least %d, made durable by a checkpoint",
		d.Ino, path, d.DataFile, d.Found, d.Want)
}

// MissingDataError is a mount's refusal of a store whose data files lack
// bytes that were durable.
type MissingDataError struct {
	Files []MissingData
}

// missingNamed is how many files a MissingDataError names; xlogfs check
// lists them all.
const missingNamed = 10

func (e *MissingDataError) Error() string {
	var b strings.Builder
	if len(e.Files) == 1 {
		b.WriteString("1 regular file lacks bytes the store had made durable (its data file deleted or cut outside xlogfs): ")
	} else {
		fmt.Fprintf(&b, "%d regular files lack bytes the store had made durable (data files deleted or cut outside xlogfs): ", len(e.Files))
	}
	for i, d := range e.Files[:min(len(e.Files), missingNamed)] {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(d.String())
	}
	if len(e.Files) > missingNamed {
		fmt.Fprintf(&b, "; and %d more (xlogfs check lists them all)", len(e.Files)-missingNamed)
	}
	b.WriteString(". Mount with --allow-missing-data to mount anyway: those files then fail reads and writes with EIO, never reading as zeros, until truncated to 0 or removed")
	return b.String()
}

// dataFloors is, per regular inode, the least size it had from the
// checkpoint on, when more than 0: what its data file must hold at least.
// An inode it does not hold needs nothing.
type dataFloors map[meta.Ino]int64

func newDataFloors(m *meta.Model) dataFloors {
	f := dataFloors{}
	for ino, in := range m.Inodes {
		if in.IsRegular() && in.Size > 0 {
			f[ino] = in.Size
		}
	}
	return f
}

// note sees op after m applied it: the size it left its inode with.
// Only an op's own inode changes size (write, setattr, fallocate); an
// inode freed needs nothing, and inode numbers are never reused.
func (f dataFloors) note(m *meta.Model, op *meta.Op) {
	floor, ok := f[op.Ino]
	if !ok {
		return
	}
	switch in := m.Inodes[op.Ino]; {
	case in == nil || in.Size <= 0:
		delete(f, op.Ino)
	case in.Size < floor:
		f[op.Ino] = in.Size
	}
}

// missing lists, by inode, the regular files of m (replayed, orphans
// dropped) whose data file is shorter than its floor; sizes holds each
// data file's size (datafile.Sizes), dataFile names one.
func (f dataFloors) missing(m *meta.Model, sizes map[meta.Ino]int64, dataFile func(meta.Ino) string) []MissingData {
	var out []MissingData
	for _, ino := range slices.Sorted(maps.Keys(f)) {
		in := m.Inodes[ino]
		if in == nil || !in.IsRegular() {
			continue
		}
		found, ok := sizes[ino]
		if ok && found >= f[ino] {
			continue
		}
		out = append(out, MissingData{Ino: ino, DataFile: dataFile(ino), Want: f[ino], Found: found, Exists: ok})
	}
	if len(out) > 0 {
		paths := pathsOf(m, out)
		for i := range out {
			out[i].Path = paths[out[i].Ino]
		}
	}
	return out
}

// pathsOf finds a path from the root for each of the inodes of ds: the
// first in a walk of the tree by depth, then name.
func pathsOf(m *meta.Model, ds []MissingData) map[meta.Ino]string {
	want := map[meta.Ino]bool{}
	for _, d := range ds {
		want[d.Ino] = true
	}
	paths := map[meta.Ino]string{}
	type dir struct {
		ino  meta.Ino
		path string
	}
	queue := []dir{{meta.RootIno, ""}}
	seen := map[meta.Ino]bool{meta.RootIno: true}
	for len(queue) > 0 && len(paths) < len(want) {
		d := queue[0]
		queue = queue[1:]
		in := m.Inodes[d.ino]
		if in == nil {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(in.Entries)) {
			child, p := in.Entries[name], d.path+"/"+name
			if want[child] && paths[child] == "" {
				paths[child] = p
			}
			if c := m.Inodes[child]; c != nil && c.IsDir() && !seen[child] {
				seen[child] = true
				queue = append(queue, dir{child, p})
			}
		}
	}
	return paths
}

// replayModel replays the committed transactions of s onto m, the model
// only, and returns the floors of m's regular files (dataFloors). Inspect
// replays so; and a mount first, on a copy, to refuse missing data before
// replay writes anything to a data file.
func replayModel(s *xlog.Scan, ck *store.Checkpoint, m *meta.Model) (Replayed, dataFloors, error) {
	floors := newDataFloors(m)
	r, err := Replay(s, ck.LastTID, func(op *meta.Op) error {
		if err := m.Apply(op); err != nil {
			return err
		}
		floors.note(m, op)
		return nil
	})
	return r, floors, err
}
