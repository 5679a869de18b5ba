package datafile

import (
	"os"
	"sync"
	"syscall"
	"unsafe"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
)

// O_DIRECT writes. A file opened with O_DIRECT on the mount (a database's
// data files) asks for its writes to bypass the page cache; writing them
// buffered into the data file would only move that work into the fsync,
// which then writes every page back. So aligned writes from such opens go
// to the data file through an O_DIRECT descriptor of its own.

// directAlign is the alignment O_DIRECT needs of offsets, lengths and
// buffers (the logical block size of today's disks and filesystems).
const directAlign = 4096

// maxDirect is the largest write sent through an aligned bounce buffer.
const maxDirect = 1 << 20

// directBufs are bounce buffers: FUSE hands us the bytes at no particular
// memory alignment, so they are copied to an aligned buffer first.
var directBufs = sync.Pool{New: func() any {
	b := make([]byte, maxDirect+directAlign)
	return &b
}}

// aligned returns n bytes of b starting at a directAlign boundary.
func aligned(b []byte, n int) []byte {
	off := (directAlign - int(uintptr(unsafe.Pointer(&b[0]))%directAlign)) % directAlign
	return b[off : off+n]
}

// directOK reports whether a write can go through O_DIRECT.
func directOK(off int64, n int) bool {
	return n > 0 && n <= maxDirect && off%directAlign == 0 && n%directAlign == 0
}

// directFile returns an O_DIRECT descriptor of ino's data file (which
// exists: the caller opened it), or nil when the filesystem under the store
// refuses O_DIRECT (tmpfs does); then writes stay buffered. The caller
// holds st.mu.
func (f *Files) directFile(ino meta.Ino, st *Inode) store.StoreFile {
	if st.direct == nil && !st.noDirect {
		file, err := f.cfg.Store.OpenFile(f.Path(ino), os.O_RDWR|syscall.O_DIRECT, 0)
		if err != nil {
			st.noDirect = true
			return nil
		}
		st.direct = file
	}
	return st.direct
}

// writeAt writes p at off to ino's data file, through O_DIRECT when
// asked and possible. The caller holds st.mu.
func (f *Files) writeAt(ino meta.Ino, st *Inode, file store.StoreFile, p []byte, off int64, direct bool) (int, error) {
	if direct && directOK(off, len(p)) {
		if df := f.directFile(ino, st); df != nil {
			return writeDirect(df, p, off)
		}
	}
	return file.WriteAt(p, off)
}

// writeDirect writes p at off through the O_DIRECT descriptor.
func writeDirect(f store.StoreFile, p []byte, off int64) (int, error) {
	bp := directBufs.Get().(*[]byte)
	defer directBufs.Put(bp)
	b := aligned(*bp, len(p))
	copy(b, p)
	return f.WriteAt(b, off)
}

// DirectIO reports whether the inode's data file has an O_DIRECT
// descriptor open for aligned writes, and whether the filesystem under the
// store refused one (then they go buffered).
func (st *Inode) DirectIO() (open, refused bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.direct != nil, st.noDirect
}
