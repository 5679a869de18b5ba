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

// fakeFS records the names and data a call got and answers with fixed,
// recognizable values, so a test sees both directions of an entry.
type fakeFS struct {
	fuse.RawFileSystem
	names []string
	data  []byte
	st    fuse.Status
}

var testEntry = fuse.EntryOut{NodeId: 42, Generation: 7, Attr: fuse.Attr{Ino: 42, Size: 5, Mode: syscall.S_IFREG | 0o644, Nlink: 1}}

func (f *fakeFS) Lookup(c <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	f.names, *out = []string{name}, testEntry
	return f.st
}
func (f *fakeFS) Open(c <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	*out = fuse.OpenOut{Fh: 11, OpenFlags: fuse.FOPEN_PASSTHROUGH, BackingID: 5}
	return f.st
}
func (f *fakeFS) Read(c <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	return fuse.ReadResultData([]byte("0123456789")[:min(10, int(in.Size))]), f.st
}
func (f *fakeFS) Write(c <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	f.data = bytes.Clone(data)
	return uint32(len(data)), f.st
}
func (f *fakeFS) Ioctl(c <-chan struct{}, in *fuse.IoctlIn, inbuf []byte, out *fuse.IoctlOut, outbuf []byte) fuse.Status {
	copy(outbuf, "out!")
	f.data = bytes.Clone(inbuf)
	return f.st
}
func (f *fakeFS) GetXAttr(c <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	f.names = []string{attr}
	return uint32(copy(dest, "value")), f.st
}
func (f *fakeFS) SetXAttr(c <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	f.names, f.data = []string{attr}, bytes.Clone(data)
	return f.st
}

// newTestTransport is a Transport without rings, its ProtocolServer told
// an INIT from a kernel offering flags (32 bits), which the mount wants.
func newTestTransport(t *testing.T, fs fuse.RawFileSystem, flags uint32) *Transport {
	t.Helper()
	kernel := fuse.InitIn{Major: 7, Minor: 45, Flags: flags}
	ps, payload, err := newProtocolServer(fs, &fuse.MountOptions{MaxWrite: 1 << 20, ExtraCapabilities: uint64(flags)}, &kernel)
	if err != nil || payload != 1<<20 {
		t.Fatalf("payload buffers of %d bytes for max_write 1 MiB, %v", payload, err)
	}
	return &Transport{ps: ps}
}

// roundTrip lays a request out as fs/fuse/dev_uring.c does (the in
// header, arg, the op's first argument, in op_in; the rest in the
// payload, its length in payload_sz; stale bytes everywhere else), serves
// it, and returns the reply's header and arguments as the kernel reads
// them back.
func roundTrip(t *testing.T, tr *Transport, op uint32, arg []byte, payload ...[]byte) (fuse.OutHeader, []byte) {
	t.Helper()
	e := &entry{hdr: bytes.Repeat([]byte{0xa5}, reqHeaderSize), payload: bytes.Repeat([]byte{0x5a}, 1<<20)}
	p := bytes.Join(payload, nil)
	h := fuse.InHeader{Opcode: op, Unique: 77, NodeId: 9, Length: uint32(inHeaderSize + len(arg) + len(p))}
	copy(e.hdr, unsafe.Slice((*byte)(unsafe.Pointer(&h)), inHeaderSize))
	copy(e.hdr[hdrOpInOff:], arg)
	copy(e.payload, p)
	binary.LittleEndian.PutUint32(e.hdr[entPayloadSzOff:], uint32(len(p)))
	tr.serve(e)
	oh := *(*fuse.OutHeader)(unsafe.Pointer(&e.hdr[0]))
	psz := binary.LittleEndian.Uint32(e.hdr[entPayloadSzOff:])
	if int(oh.Length) != outHeaderSize+int(psz) || oh.Unique != 77 {
		t.Errorf("opcode %d: out header length %d unique %d, payload_sz %d", op, oh.Length, oh.Unique, psz)
	}
	return oh, e.payload[:psz]
}

func bytesOf[T any](v *T) []byte {
	return bytes.Clone(unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v)))
}

func z(s string) []byte { return append([]byte(s), 0) }

func u32(v ...uint32) (b []byte) {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

// Requests go from the entry to the filesystem and their replies back:
// names and data from the payload, the first argument from op_in, the
// reply's fixed part and data to the payload; a failure's reply carries
// no arguments, whatever the call wrote.
func TestServeEntry(t *testing.T) {
	open := fuse.OpenOut{Fh: 11, OpenFlags: fuse.FOPEN_PASSTHROUGH, BackingID: 5}
	for _, c := range []struct {
		name     string
		flags    uint32 // INIT's, offered and wanted
		op       uint32
		arg      []byte
		payload  [][]byte
		st       fuse.Status // the filesystem's answer
		got      string      // names and data the filesystem got
		wantSt   fuse.Status
		wantArgs []byte
	}{
		{name: "lookup", op: 1, payload: [][]byte{z("file")}, got: `["file"] ""`, wantArgs: bytesOf(&testEntry)},
		{name: "failed lookup", op: 1, payload: [][]byte{z("file")}, st: fuse.ENOENT, got: `["file"] ""`, wantSt: fuse.ENOENT},
		{name: "open, passthrough", op: 14, arg: make([]byte, 8), got: "[] \"\"", wantArgs: bytesOf(&open)},
		{name: "read", op: 15, arg: u32(11, 0, 0, 0, 4, 0, 0, 0, 0, 0), got: "[] \"\"", wantArgs: []byte("0123")},
		{name: "write", op: 16, arg: u32(11, 0, 200, 0, 5, 0, 0, 0, 0, 0), payload: [][]byte{[]byte("hello")}, got: `[] "hello"`, wantArgs: u32(5, 0)},
		// Without FUSE_SETXATTR_EXT, fuse_setxattr_in is size and flags;
		// with it, 16 bytes: read as 8, the name would be wrong.
		{name: "setxattr", op: 21, arg: u32(3, 0), payload: [][]byte{z("user.x"), []byte("abc")}, got: `["user.x"] "abc"`},
		{name: "setxattr ext", flags: fuse.CAP_SETXATTR_EXT, op: 21, arg: u32(3, 0, 0, 0), payload: [][]byte{z("user.x"), []byte("abc")}, got: `["user.x"] "abc"`},
		// The name and the value share the payload buffer.
		{name: "getxattr", op: 22, arg: u32(64, 0), payload: [][]byte{z("user.long.name")}, got: `["user.long.name"] ""`, wantArgs: []byte("value")},
		// Its output overwrites the entry's payload before it reads
		// its input.
		{name: "ioctl", op: 39, arg: u32(11, 0, 0, 0, 0, 0, 24, 4), payload: [][]byte{[]byte("0123456789abcdef01234567")}, got: `[] "0123456789abcdef01234567"`, wantArgs: append(make([]byte, 16), "out!"...)},
		{name: "no handler", op: 200, got: "[] \"\"", wantSt: fuse.ENOSYS},
		// op_in holds 128 bytes: the lengths leave it 136.
		{name: "bad lengths", op: 1, arg: make([]byte, hdrOpInSize+8), payload: [][]byte{z("x")}, got: "[] \"\"", wantSt: fuse.EIO},
	} {
		f := &fakeFS{RawFileSystem: fuse.NewDefaultRawFileSystem(), st: c.st}
		oh, args := roundTrip(t, newTestTransport(t, f, c.flags), c.op, c.arg, c.payload...)
		if got := fmt.Sprintf("%q %q", f.names, f.data); oh.Status != -int32(c.wantSt) || got != c.got || !bytes.Equal(args, c.wantArgs) {
			t.Errorf("%s: status %d, filesystem got %s, reply arguments %x; want %d, %s, %x", c.name, oh.Status, got, args, -int32(c.wantSt), c.got, c.wantArgs)
		}
	}
}
