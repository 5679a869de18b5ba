package fusefs

import (
	"sync"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Directory listings without OPENDIR and RELEASEDIR. dbench lists a
// directory about every third operation, and each listing cost four round
// trips: OPENDIR, READDIRPLUS twice (the entries, then the empty end) and
// RELEASEDIR. The kernel keeps listings it read (OpendirHandle's
// FOPEN_CACHE_DIR), which saves the READDIRPLUS of an unchanged directory;
// and a daemon that answers OPENDIR with ENOSYS (FUSE_NO_OPENDIR_SUPPORT)
// is never asked to open or release a directory again, the kernel caching
// every listing as if it had said FOPEN_CACHE_DIR|FOPEN_KEEP_CACHE.
//
// go-fuse's fs bridge serves a listing only through a directory handle of
// its own, so noOpendir opens one itself for a READDIR(PLUS) that comes
// without one: at offset 0 it opens a fresh handle (the listing as it is
// now) and keeps it for the reads that continue the listing, each asking
// for the offset the last one ended at; the end of the listing, or a new
// listing by the same process, releases it. A read that finds no handle at
// its offset (a listing whose handle was dropped) gets a fresh one, moved
// to that offset.

// noOpendir serves directories without OPENDIR when the kernel allows it.
type noOpendir struct {
	fuse.RawFileSystem
	server *fuse.Server
	gen    func() uint64 // the namespace generation (journal.FS.NamespaceGen)

	mu    sync.Mutex
	lists map[listKey]*listing
}

// listKey names one listing in progress: a directory read by a process.
type listKey struct {
	node uint64
	pid  uint32
}

// listing is a directory handle of the bridge's, open for one listing.
type listing struct {
	fh   uint64
	gen  uint64 // the namespace generation when the handle was opened
	next uint64 // the offset the next read of the listing asks for
	used time.Time
}

// maxListings bounds the handles kept for listings left unfinished (a
// reader that stopped early); the oldest go first.
const maxListings = 256

func newNoOpendir(fs fuse.RawFileSystem, gen func() uint64) *noOpendir {
	return &noOpendir{RawFileSystem: fs, gen: gen, lists: map[listKey]*listing{}}
}

func (d *noOpendir) Init(s *fuse.Server) {
	d.server = s
	d.RawFileSystem.Init(s)
}

// enabled reports whether the kernel offered FUSE_NO_OPENDIR_SUPPORT.
func (d *noOpendir) enabled() bool {
	return d.server != nil && d.server.KernelSettings().Flags64()&fuse.CAP_NO_OPENDIR_SUPPORT != 0
}

func (d *noOpendir) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if d.enabled() {
		return fuse.ENOSYS // the kernel opens directories itself from now on
	}
	return d.RawFileSystem.OpenDir(cancel, in, out)
}

func (d *noOpendir) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return d.read(cancel, in, out, d.RawFileSystem.ReadDir)
}

func (d *noOpendir) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return d.read(cancel, in, out, d.RawFileSystem.ReadDirPlus)
}

// read serves one read of a listing, through a handle of its own when the
// kernel sent none.
func (d *noOpendir) read(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList,
	readdir func(<-chan struct{}, *fuse.ReadIn, *fuse.DirEntryList) fuse.Status) fuse.Status {
	if in.Fh != 0 {
		return readdir(cancel, in, out)
	}
	key := listKey{node: in.NodeId, pid: in.Caller.Pid}
	l, st := d.take(cancel, key, in)
	if st != fuse.OK {
		return st
	}
	req := *in
	req.Fh = l.fh
	st = readdir(cancel, &req, out)
	if st != fuse.OK || out.Offset == in.Offset {
		// An error, or the end of the listing (nothing after Offset).
		d.release(key, l)
		return st
	}
	l.next, l.used = out.Offset, time.Now()
	d.mu.Lock()
	if old := d.lists[key]; old != nil && old != l {
		defer d.release(key, old)
	}
	d.lists[key] = l
	d.evictLocked()
	d.mu.Unlock()
	return st
}

// take finds the listing a read continues, or opens a new one: a read at
// offset 0 starts a listing.
func (d *noOpendir) take(cancel <-chan struct{}, key listKey, in *fuse.ReadIn) (*listing, fuse.Status) {
	gen := d.gen()
	d.mu.Lock()
	l := d.lists[key]
	if l != nil && (in.Offset == 0 || l.next != in.Offset || l.gen != gen) {
		l = nil // a new listing, another of this process's, or a stale one
	} else if l != nil {
		delete(d.lists, key)
	}
	d.mu.Unlock()
	if l != nil {
		return l, fuse.OK
	}
	var out fuse.OpenOut
	open := fuse.OpenIn{InHeader: in.InHeader, Flags: in.Flags}
	if st := d.RawFileSystem.OpenDir(cancel, &open, &out); st != fuse.OK {
		return nil, st
	}
	return &listing{fh: out.Fh, gen: gen}, fuse.OK
}

// release gives a listing's handle back to the bridge.
func (d *noOpendir) release(key listKey, l *listing) {
	d.RawFileSystem.ReleaseDir(&fuse.ReleaseIn{InHeader: fuse.InHeader{NodeId: key.node}, Fh: l.fh})
}

// evictLocked releases the oldest listings beyond maxListings. The
// caller holds d.mu.
func (d *noOpendir) evictLocked() {
	for len(d.lists) > maxListings {
		var oldest listKey
		var ol *listing
		for k, l := range d.lists {
			if ol == nil || l.used.Before(ol.used) {
				oldest, ol = k, l
			}
		}
		delete(d.lists, oldest)
		go d.release(oldest, ol)
	}
}
