package uring

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"syscall"
	"testing"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// fakeFS records what each call got and answers with fixed, recognizable
// values, so a test can check both directions of the wire format.
type fakeFS struct {
	fuse.RawFileSystem
	call  string   // the method called
	names []string // its name arguments
	data  []byte   // its data argument
	in    any      // a copy of its input struct
	st    fuse.Status
}

func newFake() *fakeFS { return &fakeFS{RawFileSystem: fuse.NewDefaultRawFileSystem()} }

var testEntry = fuse.EntryOut{NodeId: 42, Generation: 7, EntryValid: 1, AttrValid: 2, Attr: fuse.Attr{Ino: 42, Size: 5, Mode: syscall.S_IFREG | 0o644, Nlink: 1}}

func (f *fakeFS) Lookup(c <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	f.call, f.names, f.in = "Lookup", []string{name}, *h
	*out = testEntry
	return f.st
}
func (f *fakeFS) GetAttr(c <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	f.call, f.in = "GetAttr", *in
	out.Attr = testEntry.Attr
	out.AttrValid = 3
	return f.st
}
func (f *fakeFS) SetAttr(c <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	f.call, f.in = "SetAttr", *in
	out.Attr = testEntry.Attr
	return f.st
}
func (f *fakeFS) Readlink(c <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	f.call, f.in = "Readlink", *h
	return []byte("target"), f.st
}
func (f *fakeFS) Symlink(c <-chan struct{}, h *fuse.InHeader, to, name string, out *fuse.EntryOut) fuse.Status {
	f.call, f.names = "Symlink", []string{to, name}
	*out = testEntry
	return f.st
}
func (f *fakeFS) Mknod(c <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	f.call, f.names, f.in = "Mknod", []string{name}, *in
	*out = testEntry
	return f.st
}
func (f *fakeFS) Mkdir(c <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	f.call, f.names, f.in = "Mkdir", []string{name}, *in
	*out = testEntry
	return f.st
}
func (f *fakeFS) Unlink(c <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	f.call, f.names = "Unlink", []string{name}
	return f.st
}
func (f *fakeFS) Rmdir(c <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	f.call, f.names = "Rmdir", []string{name}
	return f.st
}
func (f *fakeFS) Rename(c <-chan struct{}, in *fuse.RenameIn, o, n string) fuse.Status {
	f.call, f.names, f.in = "Rename", []string{o, n}, *in
	return f.st
}
func (f *fakeFS) Link(c <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	f.call, f.names, f.in = "Link", []string{name}, *in
	*out = testEntry
	return f.st
}
func (f *fakeFS) Access(c <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	f.call, f.in = "Access", *in
	return f.st
}
func (f *fakeFS) GetXAttr(c <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	f.call, f.names = "GetXAttr", []string{attr}
	v := []byte("value")
	if len(dest) < len(v) {
		return uint32(len(v)), fuse.ERANGE
	}
	return uint32(copy(dest, v)), f.st
}
func (f *fakeFS) ListXAttr(c <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	f.call = "ListXAttr"
	v := []byte("user.a\x00user.b\x00")
	if len(dest) < len(v) {
		return uint32(len(v)), fuse.ERANGE
	}
	return uint32(copy(dest, v)), f.st
}
func (f *fakeFS) SetXAttr(c <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	f.call, f.names, f.data, f.in = "SetXAttr", []string{attr}, bytes.Clone(data), *in
	return f.st
}
func (f *fakeFS) RemoveXAttr(c <-chan struct{}, h *fuse.InHeader, attr string) fuse.Status {
	f.call, f.names = "RemoveXAttr", []string{attr}
	return f.st
}
func (f *fakeFS) Create(c <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	f.call, f.names, f.in = "Create", []string{name}, *in
	out.EntryOut = testEntry
	out.OpenOut = fuse.OpenOut{Fh: 9, OpenFlags: fuse.FOPEN_KEEP_CACHE | fuse.FOPEN_PASSTHROUGH, BackingID: 3}
	return f.st
}
func (f *fakeFS) Tmpfile(c <-chan struct{}, in *fuse.CreateIn, out *fuse.CreateOut) fuse.Status {
	f.call, f.in = "Tmpfile", *in
	out.EntryOut = testEntry
	out.OpenOut = fuse.OpenOut{Fh: 10}
	return f.st
}
func (f *fakeFS) Open(c <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	f.call, f.in = "Open", *in
	*out = fuse.OpenOut{Fh: 11, OpenFlags: fuse.FOPEN_PASSTHROUGH, BackingID: 5}
	return f.st
}
func (f *fakeFS) OpenDir(c <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	f.call, f.in = "OpenDir", *in
	*out = fuse.OpenOut{Fh: 12, OpenFlags: fuse.FOPEN_CACHE_DIR}
	return f.st
}
func (f *fakeFS) Read(c <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	f.call, f.in = "Read", *in
	return fuse.ReadResultData([]byte("0123456789")[:min(10, int(in.Size))]), f.st
}
func (f *fakeFS) Write(c <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	f.call, f.data, f.in = "Write", bytes.Clone(data), *in
	return uint32(len(data)), f.st
}
func (f *fakeFS) Lseek(c <-chan struct{}, in *fuse.LseekIn, out *fuse.LseekOut) fuse.Status {
	f.call, f.in = "Lseek", *in
	out.Offset = 4096
	return f.st
}
func (f *fakeFS) Release(c <-chan struct{}, in *fuse.ReleaseIn) { f.call, f.in = "Release", *in }
func (f *fakeFS) ReleaseDir(in *fuse.ReleaseIn)                 { f.call, f.in = "ReleaseDir", *in }
func (f *fakeFS) Flush(c <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	f.call, f.in = "Flush", *in
	return f.st
}
func (f *fakeFS) Fsync(c <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	f.call, f.in = "Fsync", *in
	return f.st
}
func (f *fakeFS) FsyncDir(c <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	f.call, f.in = "FsyncDir", *in
	return f.st
}
func (f *fakeFS) Fallocate(c <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	f.call, f.in = "Fallocate", *in
	return f.st
}
func (f *fakeFS) CopyFileRange(c <-chan struct{}, in *fuse.CopyFileRangeIn) (uint32, fuse.Status) {
	f.call, f.in = "CopyFileRange", *in
	return uint32(in.Len), f.st
}
func (f *fakeFS) StatFs(c <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	f.call = "StatFs"
	*out = fuse.StatfsOut{Blocks: 100, Bfree: 50, Bavail: 40, Files: 10, Ffree: 5, Bsize: 4096, NameLen: 255, Frsize: 4096}
	return f.st
}
func (f *fakeFS) ReadDir(c <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	f.call, f.in = "ReadDir", *in
	out.AddDirEntry(fuse.DirEntry{Name: "a", Ino: 5, Mode: syscall.S_IFREG})
	return f.st
}
func (f *fakeFS) ReadDirPlus(c <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	f.call, f.in = "ReadDirPlus", *in
	if e := out.AddDirLookupEntry(fuse.DirEntry{Name: "bb", Ino: 6, Mode: syscall.S_IFDIR}); e != nil {
		*e = testEntry
	}
	return f.st
}
func (f *fakeFS) Ioctl(c <-chan struct{}, in *fuse.IoctlIn, inbuf []byte, out *fuse.IoctlOut, outbuf []byte) fuse.Status {
	f.call, f.in = "Ioctl", *in
	return fuse.ENOSYS
}

// kernelRequest lays out a request as fs/fuse/dev_uring.c does: the in
// header in the header area's first 128 bytes, the first argument (arg,
// the op's struct without its InHeader) in op_in, the others in the
// payload, whose length goes to ring_ent_in_out.payload_sz.
func kernelRequest(t *testing.T, h fuse.InHeader, arg []byte, payload ...[]byte) (hdr, pay []byte) {
	t.Helper()
	hdr = make([]byte, reqHeaderSize)
	pay = make([]byte, 1<<16)
	// Stale bytes from an earlier request: decode must not read them.
	for i := range hdr {
		hdr[i] = 0xa5
	}
	p := bytes.Join(payload, nil)
	copy(pay, p)
	h.Length = uint32(inHeaderSize + len(arg) + len(p))
	copy(hdr, unsafe.Slice((*byte)(unsafe.Pointer(&h)), inHeaderSize))
	copy(hdr[hdrOpInOff:], arg)
	binary.LittleEndian.PutUint32(hdr[entPayloadSzOff:], uint32(len(p)))
	return hdr, pay
}

// argBytes is a wire struct's bytes after its InHeader.
func argBytes[T any](v *T) []byte {
	b := unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v))
	return bytes.Clone(b[inHeaderSize:])
}

func structBytes[T any](v *T) []byte {
	return bytes.Clone(unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v)))
}

func z(s string) []byte { return append([]byte(s), 0) }

// roundTrip decodes a kernel-made request, serves it with f and returns
// the reply's header and arguments as the kernel would read them back.
func roundTrip(t *testing.T, f *fakeFS, hdr, pay []byte) (fuse.OutHeader, []byte) {
	t.Helper()
	var r request
	if err := r.decode(hdr, pay); err != nil {
		t.Fatal(err)
	}
	var o reply
	st, n := serve(f, &r, &o, pay)
	encodeReply(hdr, r.header().Unique, st, n)
	oh := *(*fuse.OutHeader)(unsafe.Pointer(&hdr[0]))
	psz := binary.LittleEndian.Uint32(hdr[entPayloadSzOff:])
	if int(oh.Length) != outHeaderSize+int(psz) {
		t.Errorf("out header length %d, payload_sz %d: they disagree", oh.Length, psz)
	}
	return oh, bytes.Clone(pay[:psz])
}

func TestDecodeEncodeEveryOpcode(t *testing.T) {
	caller := fuse.Caller{Owner: fuse.Owner{Uid: 1000, Gid: 100}, Pid: 4321}
	hdr := func(op uint32) fuse.InHeader {
		return fuse.InHeader{Opcode: op, Unique: 77 + uint64(op), NodeId: 9, Caller: caller}
	}
	entry := structBytes(&testEntry)
	type tc struct {
		name      string
		op        uint32
		arg       []byte   // the first argument (op_in)
		payload   [][]byte // the rest
		call      string
		names     []string
		data      []byte
		in        any    // the decoded input struct the call must get
		wantReply []byte // the reply's arguments
	}
	getattr := fuse.GetAttrIn{InHeader: hdr(opGetattr), Flags_: 1, Fh_: 33}
	setattr := fuse.SetAttrIn{SetAttrInCommon: fuse.SetAttrInCommon{InHeader: hdr(opSetattr), Valid: fuse.FATTR_MODE | fuse.FATTR_SIZE, Size: 1234, Mode: 0o600}}
	mknod := fuse.MknodIn{InHeader: hdr(opMknod), Mode: syscall.S_IFIFO | 0o644, Rdev: 5, Umask: 0o22}
	mkdir := fuse.MkdirIn{InHeader: hdr(opMkdir), Mode: 0o755, Umask: 0o22}
	rename := fuse.RenameIn{InHeader: hdr(opRename), Newdir: 12}
	rename2 := fuse.RenameIn{InHeader: hdr(opRename2), Newdir: 13, Flags: 1}
	link := fuse.LinkIn{InHeader: hdr(opLink), Oldnodeid: 44}
	open := fuse.OpenIn{InHeader: hdr(opOpen), Flags: syscall.O_RDWR}
	opendir := fuse.OpenIn{InHeader: hdr(opOpendir), Flags: syscall.O_RDONLY}
	create := fuse.CreateIn{InHeader: hdr(opCreate), Flags: syscall.O_CREAT | syscall.O_WRONLY, Mode: 0o640, Umask: 0o22}
	tmpfile := fuse.CreateIn{InHeader: hdr(opTmpfile), Flags: syscall.O_RDWR, Mode: 0o600}
	read := fuse.ReadIn{InHeader: hdr(opReadF), Fh: 11, Offset: 100, Size: 4}
	write := fuse.WriteIn{InHeader: hdr(opWrite), Fh: 11, Offset: 200, Size: 5}
	release := fuse.ReleaseIn{InHeader: hdr(opRelease), Fh: 11, Flags: 2}
	releasedir := fuse.ReleaseIn{InHeader: hdr(opReleasedir), Fh: 12}
	fsync := fuse.FsyncIn{InHeader: hdr(opFsync), Fh: 11, FsyncFlags: 1}
	fsyncdir := fuse.FsyncIn{InHeader: hdr(opFsyncdir), Fh: 12}
	flush := fuse.FlushIn{InHeader: hdr(opFlush), Fh: 11, LockOwner: 99}
	access := fuse.AccessIn{InHeader: hdr(opAccess), Mask: 4}
	fallocate := fuse.FallocateIn{InHeader: hdr(opFallocate), Fh: 11, Offset: 4096, Length: 8192, Mode: 1}
	lseek := fuse.LseekIn{InHeader: hdr(opLseek), Fh: 11, Offset: 10, Whence: 3}
	cfr := fuse.CopyFileRangeIn{InHeader: hdr(opCopyFileRange), FhIn: 1, OffIn: 2, NodeIdOut: 3, FhOut: 4, OffOut: 5, Len: 6000, Flags: 0}
	getxattr := fuse.GetXAttrIn{InHeader: hdr(opGetxattr), Size: 64}
	getxattr0 := fuse.GetXAttrIn{InHeader: hdr(opGetxattr), Size: 0}
	listxattr := fuse.GetXAttrIn{InHeader: hdr(opListxattr), Size: 64}
	listxattr0 := fuse.GetXAttrIn{InHeader: hdr(opListxattr)}
	setxattr := fuse.SetXAttrIn{InHeader: hdr(opSetxattr), Size: 3, Flags: 1}
	readdir := fuse.ReadIn{InHeader: hdr(opReaddir), Fh: 12, Size: 4096}
	readdirplus := fuse.ReadIn{InHeader: hdr(opReaddirplus), Fh: 12, Size: 4096}

	u32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	u64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	attrOut := func(valid uint64) []byte {
		a := fuse.AttrOut{AttrValid: valid, Attr: testEntry.Attr}
		return structBytes(&a)
	}
	createOut := fuse.CreateOut{EntryOut: testEntry, OpenOut: fuse.OpenOut{Fh: 9, OpenFlags: fuse.FOPEN_KEEP_CACHE | fuse.FOPEN_PASSTHROUGH, BackingID: 3}}
	tmpOut := fuse.CreateOut{EntryOut: testEntry, OpenOut: fuse.OpenOut{Fh: 10}}
	openOut := fuse.OpenOut{Fh: 11, OpenFlags: fuse.FOPEN_PASSTHROUGH, BackingID: 5}
	opendirOut := fuse.OpenOut{Fh: 12, OpenFlags: fuse.FOPEN_CACHE_DIR}
	statfsOut := fuse.StatfsOut{Blocks: 100, Bfree: 50, Bavail: 40, Files: 10, Ffree: 5, Bsize: 4096, NameLen: 255, Frsize: 4096}
	dirl := fuse.NewDirEntryList(make([]byte, 4096), 0)
	dirl.AddDirEntry(fuse.DirEntry{Name: "a", Ino: 5, Mode: syscall.S_IFREG})
	dirlp := fuse.NewDirEntryList(make([]byte, 4096), 0)
	*dirlp.AddDirLookupEntry(fuse.DirEntry{Name: "bb", Ino: 6, Mode: syscall.S_IFDIR}) = testEntry

	cases := []tc{
		{name: "lookup", op: opLookup, payload: [][]byte{z("file")}, call: "Lookup", names: []string{"file"}, wantReply: entry},
		{name: "getattr", op: opGetattr, arg: argBytes(&getattr), call: "GetAttr", in: getattr, wantReply: attrOut(3)},
		{name: "setattr", op: opSetattr, arg: argBytes(&setattr), call: "SetAttr", in: setattr, wantReply: attrOut(0)},
		{name: "readlink", op: opReadlink, call: "Readlink", wantReply: []byte("target")},
		{name: "symlink", op: opSymlink, payload: [][]byte{z("link"), z("the/target")}, call: "Symlink", names: []string{"the/target", "link"}, wantReply: entry},
		{name: "mknod", op: opMknod, arg: argBytes(&mknod), payload: [][]byte{z("fifo")}, call: "Mknod", names: []string{"fifo"}, in: mknod, wantReply: entry},
		{name: "mkdir", op: opMkdir, arg: argBytes(&mkdir), payload: [][]byte{z("dir")}, call: "Mkdir", names: []string{"dir"}, in: mkdir, wantReply: entry},
		{name: "unlink", op: opUnlink, payload: [][]byte{z("gone")}, call: "Unlink", names: []string{"gone"}},
		{name: "rmdir", op: opRmdir, payload: [][]byte{z("dir")}, call: "Rmdir", names: []string{"dir"}},
		// RENAME carries fuse_rename_in: newdir only (8 bytes).
		{name: "rename", op: opRename, arg: argBytes(&rename)[:8], payload: [][]byte{z("old"), z("new")}, call: "Rename", names: []string{"old", "new"}, in: rename},
		{name: "rename2", op: opRename2, arg: argBytes(&rename2), payload: [][]byte{z("a"), z("b")}, call: "Rename", names: []string{"a", "b"}, in: rename2},
		{name: "link", op: opLink, arg: argBytes(&link), payload: [][]byte{z("hard")}, call: "Link", names: []string{"hard"}, in: link, wantReply: entry},
		{name: "open", op: opOpen, arg: argBytes(&open), call: "Open", in: open, wantReply: structBytes(&openOut)},
		{name: "read", op: opReadF, arg: argBytes(&read), call: "Read", in: read, wantReply: []byte("0123")},
		{name: "write", op: opWrite, arg: argBytes(&write), payload: [][]byte{[]byte("hello")}, call: "Write", data: []byte("hello"), in: write, wantReply: append(u32(5), u32(0)...)},
		{name: "statfs", op: opStatfs, call: "StatFs", wantReply: structBytes(&statfsOut)},
		{name: "release", op: opRelease, arg: argBytes(&release), call: "Release", in: release},
		{name: "fsync", op: opFsync, arg: argBytes(&fsync), call: "Fsync", in: fsync},
		// Without FUSE_SETXATTR_EXT the kernel sends the 8-byte
		// fuse_setxattr_in (size, flags).
		{name: "setxattr", op: opSetxattr, arg: argBytes(&setxattr)[:8], payload: [][]byte{z("user.x"), []byte("abc")}, call: "SetXAttr", names: []string{"user.x"}, data: []byte("abc"), in: setxattr},
		{name: "getxattr", op: opGetxattr, arg: argBytes(&getxattr), payload: [][]byte{z("user.x")}, call: "GetXAttr", names: []string{"user.x"}, wantReply: []byte("value")},
		{name: "getxattr size", op: opGetxattr, arg: argBytes(&getxattr0), payload: [][]byte{z("user.x")}, call: "GetXAttr", names: []string{"user.x"}, wantReply: append(u32(5), u32(0)...)},
		{name: "listxattr", op: opListxattr, arg: argBytes(&listxattr), call: "ListXAttr", wantReply: []byte("user.a\x00user.b\x00")},
		{name: "listxattr size", op: opListxattr, arg: argBytes(&listxattr0), call: "ListXAttr", wantReply: append(u32(14), u32(0)...)},
		{name: "removexattr", op: opRemovexattr, payload: [][]byte{z("user.x")}, call: "RemoveXAttr", names: []string{"user.x"}},
		{name: "flush", op: opFlush, arg: argBytes(&flush), call: "Flush", in: flush},
		{name: "opendir", op: opOpendir, arg: argBytes(&opendir), call: "OpenDir", in: opendir, wantReply: structBytes(&opendirOut)},
		{name: "readdir", op: opReaddir, arg: argBytes(&readdir), call: "ReadDir", in: readdir, wantReply: dirl.Bytes()},
		{name: "releasedir", op: opReleasedir, arg: argBytes(&releasedir), call: "ReleaseDir", in: releasedir},
		{name: "fsyncdir", op: opFsyncdir, arg: argBytes(&fsyncdir), call: "FsyncDir", in: fsyncdir},
		{name: "access", op: opAccess, arg: argBytes(&access), call: "Access", in: access},
		{name: "create", op: opCreate, arg: argBytes(&create), payload: [][]byte{z("new")}, call: "Create", names: []string{"new"}, in: create, wantReply: structBytes(&createOut)},
		{name: "fallocate", op: opFallocate, arg: argBytes(&fallocate), call: "Fallocate", in: fallocate},
		{name: "readdirplus", op: opReaddirplus, arg: argBytes(&readdirplus), call: "ReadDirPlus", in: readdirplus, wantReply: dirlp.Bytes()},
		{name: "lseek", op: opLseek, arg: argBytes(&lseek), call: "Lseek", in: lseek, wantReply: u64(4096)},
		{name: "copy_file_range", op: opCopyFileRange, arg: argBytes(&cfr), call: "CopyFileRange", in: cfr, wantReply: append(u32(6000), u32(0)...)},
		{name: "tmpfile", op: opTmpfile, arg: argBytes(&tmpfile), payload: [][]byte{z("/")}, call: "Tmpfile", in: tmpfile, wantReply: structBytes(&tmpOut)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			h, p := kernelRequest(t, hdr(c.op), c.arg, c.payload...)
			oh, rep := roundTrip(t, f, h, p)
			if f.call != c.call {
				t.Fatalf("opcode %d called %q, want %q", c.op, f.call, c.call)
			}
			if c.names != nil && fmt.Sprint(f.names) != fmt.Sprint(c.names) {
				t.Errorf("names %q, want %q", f.names, c.names)
			}
			if c.data != nil && !bytes.Equal(f.data, c.data) {
				t.Errorf("data %q, want %q", f.data, c.data)
			}
			if c.in != nil {
				// The decoded struct, header included, with Length
				// as the kernel set it.
				want := fmt.Sprintf("%+v", c.in)
				if got := fmt.Sprintf("%+v", withLen(f.in, 0)); got != fmt.Sprintf("%+v", withLen(c.in, 0)) {
					t.Errorf("decoded input\n got %s\nwant %s", got, want)
				}
			}
			if oh.Status != 0 {
				t.Fatalf("status %d, want 0", oh.Status)
			}
			if oh.Unique != 77+uint64(c.op) {
				t.Errorf("reply unique %d, want %d", oh.Unique, 77+c.op)
			}
			if !bytes.Equal(rep, c.wantReply) {
				t.Errorf("reply arguments\n got %x\nwant %x", rep, c.wantReply)
			}
		})
	}
}

// withLen returns a copy of the wire struct v with its InHeader's Length
// (which the test's kernel side sets) replaced by n.
func withLen(v any, n uint32) any {
	switch s := v.(type) {
	case fuse.GetAttrIn:
		s.InHeader.Length = n
		return s
	case fuse.SetAttrIn:
		s.InHeader.Length = n
		return s
	case fuse.MknodIn:
		s.InHeader.Length = n
		return s
	case fuse.MkdirIn:
		s.InHeader.Length = n
		return s
	case fuse.RenameIn:
		s.InHeader.Length = n
		return s
	case fuse.LinkIn:
		s.InHeader.Length = n
		return s
	case fuse.OpenIn:
		s.InHeader.Length = n
		return s
	case fuse.CreateIn:
		s.InHeader.Length = n
		return s
	case fuse.ReadIn:
		s.InHeader.Length = n
		return s
	case fuse.WriteIn:
		s.InHeader.Length = n
		return s
	case fuse.ReleaseIn:
		s.InHeader.Length = n
		return s
	case fuse.FsyncIn:
		s.InHeader.Length = n
		return s
	case fuse.FlushIn:
		s.InHeader.Length = n
		return s
	case fuse.AccessIn:
		s.InHeader.Length = n
		return s
	case fuse.FallocateIn:
		s.InHeader.Length = n
		return s
	case fuse.LseekIn:
		s.InHeader.Length = n
		return s
	case fuse.CopyFileRangeIn:
		s.InHeader.Length = n
		return s
	case fuse.SetXAttrIn:
		s.InHeader.Length = n
		return s
	case fuse.InHeader:
		s.Length = n
		return s
	}
	return v
}

// Errors: a failed call's reply carries the negated errno and no
// arguments, whatever the call wrote to its output.
func TestDecodeEncodeErrors(t *testing.T) {
	f := newFake()
	f.st = fuse.ENOENT
	h, p := kernelRequest(t, fuse.InHeader{Opcode: opLookup, Unique: 5, NodeId: 1}, nil, z("missing"))
	oh, rep := roundTrip(t, f, h, p)
	if oh.Status != -int32(syscall.ENOENT) || len(rep) != 0 {
		t.Errorf("failed lookup: status %d with %d bytes of reply, want %d and none", oh.Status, len(rep), -int32(syscall.ENOENT))
	}
	// A value larger than the caller's buffer: ERANGE, as over /dev/fuse.
	in := fuse.GetXAttrIn{Size: 2}
	h, p = kernelRequest(t, fuse.InHeader{Opcode: opGetxattr, Unique: 6, NodeId: 1}, argBytes(&in), z("user.x"))
	if oh, _ := roundTrip(t, newFake(), h, p); oh.Status != -int32(syscall.ERANGE) {
		t.Errorf("getxattr into 2 bytes: status %d, want ERANGE", oh.Status)
	}
	// Opcodes go-fuse's server has no handler for get ENOSYS.
	for _, op := range []uint32{opPoll, opBmap, opStatx, opSyncfs, 200} {
		h, p = kernelRequest(t, fuse.InHeader{Opcode: op, Unique: 7, NodeId: 1}, nil)
		if oh, _ := roundTrip(t, newFake(), h, p); oh.Status != -int32(syscall.ENOSYS) {
			t.Errorf("opcode %d: status %d, want ENOSYS", op, oh.Status)
		}
	}
	// IOCTL reaches the filesystem, which refuses it.
	ioc := fuse.IoctlIn{Cmd: 1}
	h, p = kernelRequest(t, fuse.InHeader{Opcode: opIoctl, Unique: 8, NodeId: 1}, argBytes(&ioc))
	if oh, _ := roundTrip(t, newFake(), h, p); oh.Status != -int32(syscall.ENOSYS) {
		t.Errorf("ioctl: status %d, want ENOSYS", oh.Status)
	}
	// A name without its NUL is refused, not read past.
	h, p = kernelRequest(t, fuse.InHeader{Opcode: opUnlink, Unique: 9, NodeId: 1}, nil, []byte("noterm"))
	if oh, _ := roundTrip(t, newFake(), h, p); oh.Status != -int32(syscall.EINVAL) {
		t.Errorf("unterminated name: status %d, want EINVAL", oh.Status)
	}
}

// A header whose lengths do not add up is refused with a message naming
// the request, not decoded.
func TestDecodeBadLengths(t *testing.T) {
	h, p := kernelRequest(t, fuse.InHeader{Opcode: opLookup, Unique: 3}, nil, z("x"))
	binary.LittleEndian.PutUint32(h[entPayloadSzOff:], 1<<20)
	var r request
	if err := r.decode(h, p); err == nil {
		t.Error("a payload longer than its buffer was decoded")
	}
	h, p = kernelRequest(t, fuse.InHeader{Opcode: opLookup, Unique: 3}, nil, z("x"))
	binary.LittleEndian.PutUint32(h[0:], 4000) // in header length
	if err := r.decode(h, p); err == nil {
		t.Error("an op header of 3958 bytes was decoded")
	}
}
