package journal

import (
	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/logbuf"
)

// engine is the FS as the data path sees it (datafile.Engine).
type engine struct{ fs *FS }

func (e engine) Inode(ino meta.Ino) (datafile.Attrs, bool) {
	e.fs.mu.RLock()
	defer e.fs.mu.RUnlock()
	in := e.fs.model.Inodes[ino]
	if in == nil {
		return datafile.Attrs{}, false
	}
	return datafile.Attrs{Mode: in.Mode, Size: in.Size, Mtime: in.Mtime, Ctime: in.Ctime, SizeFollows: in.SizeFollows}, true
}

func (e engine) Commit(op *meta.Op) (logbuf.LSN, error) { return e.fs.commit(op) }
func (e engine) Force(lsn logbuf.LSN) error             { return e.fs.x.Force(lsn) }
func (e engine) TailLSN() logbuf.LSN                    { return e.fs.x.TailLSN() }
func (e engine) Refused() error                         { return e.fs.changeRefused() }
func (e engine) Checkpoints() uint64                    { return e.fs.ckpts.Load() }

// BetweenCheckpoints runs fn under ckptMu, which each checkpoint holds
// while it runs.
func (e engine) BetweenCheckpoints(fn func() error) error {
	e.fs.ckptMu.Lock()
	defer e.fs.ckptMu.Unlock()
	return fn()
}
