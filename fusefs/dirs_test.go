package fusefs

import (
	"bytes"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// fakeDirs is a raw filesystem whose one directory lists names, two per
// read, through handles it counts; each handle lists the names as they
// were when it was opened, as the bridge's do.
type fakeDirs struct {
	fuse.RawFileSystem
	names    []string
	gen      uint64
	next     uint64
	open     map[uint64][]string
	opened   int
	released int
	readFh   []uint64
}

func (f *fakeDirs) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	f.next++
	f.open[f.next] = append([]string(nil), f.names...)
	f.opened++
	out.Fh = f.next
	return fuse.OK
}

func (f *fakeDirs) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	names, ok := f.open[in.Fh]
	if !ok {
		return fuse.EBADF
	}
	f.readFh = append(f.readFh, in.Fh)
	for i := in.Offset; i < uint64(len(names)) && i < in.Offset+2; i++ {
		if out.AddDirLookupEntry(fuse.DirEntry{Name: names[i], Ino: i + 10, Mode: fuse.S_IFREG, Off: i + 1}) == nil {
			break
		}
	}
	return fuse.OK
}

func (f *fakeDirs) ReleaseDir(in *fuse.ReleaseIn) {
	delete(f.open, in.Fh)
	f.released++
}

// A listing read without a directory handle (the kernel under
// FUSE_NO_OPENDIR_SUPPORT) is served through one handle of the bridge's
// from its first read to its end, which releases it; a new listing opens
// a new handle, and a read at an offset no listing is at gets one too.
func TestNoOpendirListings(t *testing.T) {
	f := &fakeDirs{RawFileSystem: fuse.NewDefaultRawFileSystem(), names: []string{"a", "b", "c", "d", "e"}, open: map[uint64][]string{}}
	d := newNoOpendir(f, func() uint64 { return f.gen })
	read := func(off uint64, pid uint32) int {
		t.Helper()
		in := &fuse.ReadIn{InHeader: fuse.InHeader{NodeId: 1, Caller: fuse.Caller{Pid: pid}}, Offset: off, Size: 4096}
		out := fuse.NewDirEntryList(make([]byte, 4096), off)
		if st := d.ReadDirPlus(nil, in, out); st != fuse.OK {
			t.Fatalf("read at %d: %v", off, st)
		}
		return int(out.Offset - off)
	}
	// One listing: 2 + 2 + 1 entries, then the end.
	for _, c := range []struct{ off, want uint64 }{{0, 2}, {2, 2}, {4, 1}, {5, 0}} {
		if got := read(c.off, 7); got != int(c.want) {
			t.Fatalf("listing read at %d: %d entries, want %d", c.off, got, c.want)
		}
	}
	if f.opened != 1 || f.released != 1 || len(f.open) != 0 {
		t.Fatalf("one listing: %d handles opened, %d released, %d left open; want 1, 1, 0", f.opened, f.released, len(f.open))
	}
	for i, fh := range f.readFh {
		if fh != f.readFh[0] {
			t.Fatalf("read %d of one listing went through handle %d, the first through %d", i, fh, f.readFh[0])
		}
	}
	// Two processes listing at once each keep their own.
	read(0, 1)
	read(0, 2)
	read(2, 1)
	read(2, 2)
	if f.opened != 3 || len(f.open) != 2 {
		t.Fatalf("two listings at once: %d opened, %d open; want 3, 2", f.opened, len(f.open))
	}
	// A new listing by a process drops its unfinished one.
	read(0, 1)
	if f.opened != 4 || len(f.open) != 2 {
		t.Fatalf("a new listing: %d opened, %d open; want 4, 2 (the old one released)", f.opened, len(f.open))
	}
	// A read at an offset no listing is at.
	if got := read(3, 9); got != 2 {
		t.Fatalf("a read at offset 3 with no listing there: %d entries, want 2", got)
	}
	// With a handle, the bridge's own is used.
	in := &fuse.ReadIn{InHeader: fuse.InHeader{NodeId: 1}, Fh: 1234, Size: 4096}
	if st := d.ReadDirPlus(nil, in, fuse.NewDirEntryList(make([]byte, 4096), 0)); st != fuse.EBADF {
		t.Fatalf("a read with the kernel's handle: %v, want the bridge's answer for it (EBADF here)", st)
	}
}

// A listing's reads may come from different threads of one process (a Go
// program's getdents calls do), so a read can find, at its offset, a
// handle an older listing left behind under its thread. Once a name was
// added since that handle was opened, the read must not continue it: it
// would list the directory without the new name (go-fuse's posixtest
// ReadDirBasic saw this as a listing missing the newest files).
func TestNoOpendirStaleHandle(t *testing.T) {
	f := &fakeDirs{RawFileSystem: fuse.NewDefaultRawFileSystem(), names: []string{"name-a", "name-b", "name-c"}, open: map[uint64][]string{}}
	d := newNoOpendir(f, func() uint64 { return f.gen })
	read := func(off uint64, tid uint32) []string {
		t.Helper()
		in := &fuse.ReadIn{InHeader: fuse.InHeader{NodeId: 1, Caller: fuse.Caller{Pid: tid}}, Offset: off, Size: 4096}
		buf := make([]byte, 4096)
		out := fuse.NewDirEntryList(buf, off)
		if st := d.ReadDirPlus(nil, in, out); st != fuse.OK {
			t.Fatalf("read at %d: %v", off, st)
		}
		var names []string
		for _, n := range []string{"name-a", "name-b", "name-c", "name-d"} {
			if bytes.Contains(out.Bytes(), []byte(n)) {
				names = append(names, n)
			}
		}
		return names
	}
	// Thread 2 starts a listing and leaves it at offset 2 (its next read
	// came from another thread and finished the listing there).
	read(0, 2)
	read(2, 3)
	read(3, 3)
	// A name is added; a new listing starts on thread 3 and goes on at
	// offset 2 on thread 2.
	f.names = append(f.names, "name-d")
	f.gen++
	if got := read(0, 3); len(got) != 2 {
		t.Fatalf("first read of the new listing: %v, want 2 names", got)
	}
	if got := read(2, 2); len(got) != 2 || got[0] != "name-c" || got[1] != "name-d" {
		t.Fatalf("the new listing's read at offset 2 on another thread lists %v, want [name-c name-d]: it continued the old listing's handle", got)
	}
	// Without a change, a thread's kept handle still serves the listing it
	// continues.
	opened := f.opened
	read(0, 4)
	read(2, 4)
	if f.opened != opened+1 {
		t.Fatalf("an unchanged listing opened %d handles, want 1", f.opened-opened)
	}
}
