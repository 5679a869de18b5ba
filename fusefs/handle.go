package fusefs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// handle is an open file. It only counts as an open in the journal (an
// unlinked file lives until its last release); reads and writes go to the
// journal by inode.
type handle struct {
	n      *node
	direct bool // opened with O_DIRECT: aligned writes stay direct down to the data file
}

var (
	_ fs.FileReader    = (*handle)(nil)
	_ fs.FileWriter    = (*handle)(nil)
	_ fs.FileFlusher   = (*handle)(nil)
	_ fs.FileReleaser  = (*handle)(nil)
	_ fs.FileFsyncer   = (*handle)(nil)
	_ fs.FileAllocater = (*handle)(nil)
)

func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n, err := h.n.fsys.Read(h.n.ino, dest, off)
	if err != nil {
		return nil, errno(err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if k := h.n.killForWrite(ctx); k.Kill {
		if err := h.n.fsys.DropPrivs(h.n.ino, k); err != nil {
			return 0, errno(err)
		}
	}
	write := h.n.fsys.Write
	if h.direct {
		write = h.n.fsys.WriteDirect
	}
	n, err := write(h.n.ino, data, off)
	return uint32(n), errno(err)
}

// Flush (close(2)) has nothing to do: durability is fsync's job.
func (h *handle) Flush(ctx context.Context) syscall.Errno { return 0 }

func (h *handle) Release(ctx context.Context) syscall.Errno {
	return errno(h.n.fsys.Release(h.n.ino))
}

func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	return errno(h.n.fsys.Fsync(h.n.ino, flags&1 != 0))
}

func (h *handle) Allocate(ctx context.Context, off uint64, size uint64, mode uint32) syscall.Errno {
	return h.n.Allocate(ctx, h, off, size, mode)
}
