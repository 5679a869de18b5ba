package uring

import (
	"bytes"
	"fmt"
	"log"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// FUSE opcodes (include/uapi/linux/fuse.h, enum fuse_opcode).
const (
	opLookup        = 1
	opForget        = 2
	opGetattr       = 3
	opSetattr       = 4
	opReadlink      = 5
	opSymlink       = 6
	opMknod         = 8
	opMkdir         = 9
	opUnlink        = 10
	opRmdir         = 11
	opRename        = 12
	opLink          = 13
	opOpen          = 14
	opReadF         = 15
	opWrite         = 16
	opStatfs        = 17
	opRelease       = 18
	opFsync         = 20
	opSetxattr      = 21
	opGetxattr      = 22
	opListxattr     = 23
	opRemovexattr   = 24
	opFlush         = 25
	opInit          = 26
	opOpendir       = 27
	opReaddir       = 28
	opReleasedir    = 29
	opFsyncdir      = 30
	opGetlk         = 31
	opSetlk         = 32
	opSetlkw        = 33
	opAccess        = 34
	opCreate        = 35
	opInterrupt     = 36
	opBmap          = 37
	opDestroy       = 38
	opIoctl         = 39
	opPoll          = 40
	opNotifyReply   = 41
	opBatchForget   = 42
	opFallocate     = 43
	opReaddirplus   = 44
	opRename2       = 45
	opLseek         = 46
	opCopyFileRange = 47
	opSyncfs        = 50
	opTmpfile       = 51
	opStatx         = 52
)

const (
	inHeaderSize  = int(unsafe.Sizeof(fuse.InHeader{})) // struct fuse_in_header: 40
	outHeaderSize = int(unsafe.Sizeof(fuse.OutHeader{}))
	// The ring's header area (struct fuse_uring_req_header): the
	// in/out header, the op's first argument, then
	// struct fuse_uring_ent_in_out.
	hdrInOutSize   = 128 // FUSE_URING_IN_OUT_HEADER_SZ
	hdrOpInSize    = 128 // FUSE_URING_OP_IN_OUT_SZ
	hdrOpInOff     = hdrInOutSize
	hdrEntInOutOff = hdrInOutSize + hdrOpInSize
	// struct fuse_uring_ent_in_out: flags, commit_id, payload_sz
	entPayloadSzOff = hdrEntInOutOff + 16
	reqHeaderSize   = hdrEntInOutOff + 32 // sizeof(struct fuse_uring_req_header): 288
	// maxOutFixed bounds the fixed part of a reply (CreateOut, the largest).
	maxOutFixed = int(unsafe.Sizeof(fuse.CreateOut{}))
)

// request is one request as the kernel put it in a ring entry, laid out
// as go-fuse's wire types want it: the in header followed by the op's
// first argument (the kernel's op_in area) in one aligned buffer, and the
// remaining arguments (names, written data) in the payload.
type request struct {
	in      [(inHeaderSize + hdrOpInSize) / 8]uint64
	payload []byte
}

func (r *request) header() *fuse.InHeader { return (*fuse.InHeader)(unsafe.Pointer(&r.in[0])) }
func (r *request) arg() unsafe.Pointer    { return unsafe.Pointer(&r.in[0]) }

// decode reads the request in a ring entry's header area hdr and payload
// buffer. The kernel copies the first argument to op_in and the rest to
// the payload, reporting the payload's length; the first argument's
// length is what remains of the header's total length.
func (r *request) decode(hdr, payload []byte) error {
	if len(hdr) < reqHeaderSize {
		return fmt.Errorf("ring entry header area of %d bytes, want %d", len(hdr), reqHeaderSize)
	}
	clear(r.in[:])
	b := unsafe.Slice((*byte)(unsafe.Pointer(&r.in[0])), len(r.in)*8)
	copy(b, hdr[:inHeaderSize])
	h := r.header()
	psz := int(le32(hdr[entPayloadSzOff:]))
	if psz > len(payload) {
		return fmt.Errorf("request %d (opcode %d): payload of %d bytes in a buffer of %d", h.Unique, h.Opcode, psz, len(payload))
	}
	argSz := int(h.Length) - inHeaderSize - psz
	if argSz < 0 || argSz > hdrOpInSize {
		return fmt.Errorf("request %d (opcode %d): length %d with a payload of %d leaves %d bytes for the op header (0..%d)",
			h.Unique, h.Opcode, h.Length, psz, argSz, hdrOpInSize)
	}
	copy(b[inHeaderSize:], hdr[hdrOpInOff:hdrOpInOff+argSz])
	r.payload = payload[:psz]
	return nil
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func putLE32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// names splits the payload into n NUL-terminated names.
func (r *request) names(n int) ([]string, fuse.Status) {
	p := r.payload
	out := make([]string, 0, n)
	for range n {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			return nil, fuse.EINVAL
		}
		out = append(out, string(p[:i]))
		p = p[i+1:]
	}
	return out, fuse.OK
}

func (r *request) name() (string, fuse.Status) {
	n, st := r.names(1)
	if !st.Ok() {
		return "", st
	}
	return n[0], st
}

// reply is what a request's answer puts in the ring entry: a status and
// the reply's arguments, a fixed part (out) then data, which serve
// writes to the payload buffer.
type reply struct {
	out [maxOutFixed / 8]uint64
}

func (o *reply) ptr() unsafe.Pointer { return unsafe.Pointer(&o.out[0]) }

func sizeOf[T any]() int { var t T; return int(unsafe.Sizeof(t)) }

// never is the cancel channel of every request served over a ring: it is
// never closed. The kernel sends a ring request's INTERRUPT over
// /dev/fuse, where go-fuse's server finds no such request in flight (it
// answers EAGAIN, which the kernel, finding the request on no /dev/fuse
// list, drops), so a ring request always runs to its end.
var never = make(chan struct{})

// serve answers r with fs and writes the reply's arguments to buf (the
// ring entry's payload buffer, which r.payload may alias: the request's
// names and data are used up before the reply is written). It returns the
// status and the length of the reply's arguments; an error status has
// none.
func serve(fs fuse.RawFileSystem, r *request, o *reply, buf []byte) (st fuse.Status, n int) {
	defer func() {
		if p := recover(); p != nil {
			log.Printf("fuse over io_uring: opcode %d (request %d) panicked: %v", r.header().Opcode, r.header().Unique, p)
			st, n = fuse.EIO, 0
		}
	}()
	clear(o.out[:])
	h := r.header()
	cancel := never
	fixed := 0      // bytes of o.out in the reply
	var data []byte // reply data after the fixed part
	switch h.Opcode {
	case opLookup:
		name, st := r.name()
		if !st.Ok() {
			return st, 0
		}
		st = fs.Lookup(cancel, h, name, (*fuse.EntryOut)(o.ptr()))
		if !st.Ok() {
			return st, 0
		}
		fixed = sizeOf[fuse.EntryOut]()
	case opGetattr:
		if st = fs.GetAttr(cancel, (*fuse.GetAttrIn)(r.arg()), (*fuse.AttrOut)(o.ptr())); !st.Ok() {
			return st, 0
		}
		fixed = sizeOf[fuse.AttrOut]()
	case opSetattr:
		if st = fs.SetAttr(cancel, (*fuse.SetAttrIn)(r.arg()), (*fuse.AttrOut)(o.ptr())); !st.Ok() {
			return st, 0
		}
		fixed = sizeOf[fuse.AttrOut]()
	case opReadlink:
		var t []byte
		if t, st = fs.Readlink(cancel, h); !st.Ok() {
			return st, 0
		}
		data = t
	case opSymlink:
		// The payload is the new entry's name, then the target.
		ns, st := r.names(2)
		if !st.Ok() {
			return st, 0
		}
		if st = fs.Symlink(cancel, h, ns[1], ns[0], (*fuse.EntryOut)(o.ptr())); !st.Ok() {
			return st, 0
		}
		fixed = sizeOf[fuse.EntryOut]()
	case opMknod, opMkdir, opLink:
		name, st := r.name()
		if !st.Ok() {
			return st, 0
		}
		out := (*fuse.EntryOut)(o.ptr())
		switch h.Opcode {
		case opMknod:
			st = fs.Mknod(cancel, (*fuse.MknodIn)(r.arg()), name, out)
		case opMkdir:
			st = fs.Mkdir(cancel, (*fuse.MkdirIn)(r.arg()), name, out)
		default:
			st = fs.Link(cancel, (*fuse.LinkIn)(r.arg()), name, out)
		}
		if !st.Ok() {
			return st, 0
		}
		fixed = sizeOf[fuse.EntryOut]()
	case opUnlink, opRmdir, opRemovexattr:
		name, st := r.name()
		if !st.Ok() {
			return st, 0
		}
		switch h.Opcode {
		case opUnlink:
			st = fs.Unlink(cancel, h, name)
		case opRmdir:
			st = fs.Rmdir(cancel, h, name)
		default:
			st = fs.RemoveXAttr(cancel, h, name)
		}
		return st, 0
	case opRename, opRename2:
		// RENAME carries fuse_rename_in (newdir only), RENAME2
		// fuse_rename2_in (with flags): decode zero-filled the rest.
		ns, st := r.names(2)
		if !st.Ok() {
			return st, 0
		}
		return fs.Rename(cancel, (*fuse.RenameIn)(r.arg()), ns[0], ns[1]), 0
	case opOpen, opOpendir:
		out := (*fuse.OpenOut)(o.ptr())
		if h.Opcode == opOpen {
			st = fs.Open(cancel, (*fuse.OpenIn)(r.arg()), out)
		} else {
			st = fs.OpenDir(cancel, (*fuse.OpenIn)(r.arg()), out)
		}
		if !st.Ok() {
			return st, 0
		}
		fixed = sizeOf[fuse.OpenOut]()
	case opCreate, opTmpfile:
		out := (*fuse.CreateOut)(o.ptr())
		if h.Opcode == opCreate {
			name, st := r.name()
			if !st.Ok() {
				return st, 0
			}
			st = fs.Create(cancel, (*fuse.CreateIn)(r.arg()), name, out)
			if !st.Ok() {
				return st, 0
			}
		} else if st = fs.Tmpfile(cancel, (*fuse.CreateIn)(r.arg()), out); !st.Ok() {
			return st, 0
		}
		fixed = sizeOf[fuse.CreateOut]()
	case opReadF:
		in := (*fuse.ReadIn)(r.arg())
		dest := buf[:min(int(in.Size), len(buf))]
		res, st := fs.Read(cancel, in, dest)
		if res != nil {
			defer res.Done()
		}
		if !st.Ok() {
			return st, 0
		}
		if res == nil {
			return fuse.OK, 0
		}
		b, st := res.Bytes(dest)
		if !st.Ok() {
			return st, 0
		}
		return fuse.OK, copy(buf, b)
	case opWrite:
		in := (*fuse.WriteIn)(r.arg())
		d := r.payload
		if int(in.Size) < len(d) {
			d = d[:in.Size]
		}
		out := (*fuse.WriteOut)(o.ptr())
		out.Size, st = fs.Writev(cancel, in, [][]byte{d})
		if st == fuse.ENOSYS {
			out.Size, st = fs.Write(cancel, in, d)
		}
		if !st.Ok() {
			return st, 0
		}
		fixed = sizeOf[fuse.WriteOut]()
	case opStatfs:
		if st = fs.StatFs(cancel, h, (*fuse.StatfsOut)(o.ptr())); !st.Ok() {
			return st, 0
		}
		fixed = sizeOf[fuse.StatfsOut]()
	case opRelease:
		fs.Release(cancel, (*fuse.ReleaseIn)(r.arg()))
		return fuse.OK, 0
	case opReleasedir:
		fs.ReleaseDir((*fuse.ReleaseIn)(r.arg()))
		return fuse.OK, 0
	case opFsync:
		return fs.Fsync(cancel, (*fuse.FsyncIn)(r.arg())), 0
	case opFsyncdir:
		return fs.FsyncDir(cancel, (*fuse.FsyncIn)(r.arg())), 0
	case opFlush:
		return fs.Flush(cancel, (*fuse.FlushIn)(r.arg())), 0
	case opAccess:
		return fs.Access(cancel, (*fuse.AccessIn)(r.arg())), 0
	case opFallocate:
		return fs.Fallocate(cancel, (*fuse.FallocateIn)(r.arg())), 0
	case opSetxattr:
		// fuse_setxattr_in without FUSE_SETXATTR_EXT (8 bytes: size,
		// flags); the payload is the name, then the value.
		i := bytes.IndexByte(r.payload, 0)
		if i < 0 {
			return fuse.EINVAL, 0
		}
		in := (*fuse.SetXAttrIn)(r.arg())
		v := r.payload[i+1:]
		if int(in.Size) < len(v) {
			v = v[:in.Size]
		}
		return fs.SetXAttr(cancel, in, string(r.payload[:i]), v), 0
	case opGetxattr, opListxattr:
		in := (*fuse.GetXAttrIn)(r.arg())
		dest := buf[:min(int(in.Size), len(buf))]
		var sz uint32
		if h.Opcode == opGetxattr {
			var name string
			if name, st = r.name(); !st.Ok() {
				return st, 0
			}
			sz, st = fs.GetXAttr(cancel, h, name, dest)
		} else {
			sz, st = fs.ListXAttr(cancel, h, dest)
		}
		if in.Size == 0 {
			// A size query: ERANGE is not an error here.
			if st != fuse.OK && st != fuse.ERANGE {
				return st, 0
			}
			(*fuse.GetXAttrOut)(o.ptr()).Size = sz
			fixed = sizeOf[fuse.GetXAttrOut]()
			break
		}
		if !st.Ok() {
			return st, 0
		}
		return fuse.OK, min(int(sz), len(dest))
	case opReaddir, opReaddirplus:
		in := (*fuse.ReadIn)(r.arg())
		l := fuse.NewDirEntryList(buf[:min(int(in.Size), len(buf))], in.Offset)
		if h.Opcode == opReaddir {
			st = fs.ReadDir(cancel, in, l)
		} else {
			st = fs.ReadDirPlus(cancel, in, l)
		}
		if !st.Ok() {
			return st, 0
		}
		return fuse.OK, len(l.Bytes())
	case opGetlk:
		if st = fs.GetLk(cancel, (*fuse.LkIn)(r.arg()), (*fuse.LkOut)(o.ptr())); !st.Ok() {
			return st, 0
		}
		fixed = sizeOf[fuse.LkOut]()
	case opSetlk:
		return fs.SetLk(cancel, (*fuse.LkIn)(r.arg())), 0
	case opSetlkw:
		return fs.SetLkw(cancel, (*fuse.LkIn)(r.arg())), 0
	case opIoctl:
		in := (*fuse.IoctlIn)(r.arg())
		inData := bytes.Clone(r.payload)
		outSz := min(int(in.OutSize), len(buf)-sizeOf[fuse.IoctlOut]())
		outData := make([]byte, max(outSz, 0))
		if st = fs.Ioctl(cancel, in, inData, (*fuse.IoctlOut)(o.ptr()), outData); !st.Ok() {
			return st, 0
		}
		fixed, data = sizeOf[fuse.IoctlOut](), outData
	case opLseek:
		if st = fs.Lseek(cancel, (*fuse.LseekIn)(r.arg()), (*fuse.LseekOut)(o.ptr())); !st.Ok() {
			return st, 0
		}
		fixed = sizeOf[fuse.LseekOut]()
	case opCopyFileRange:
		out := (*fuse.WriteOut)(o.ptr())
		if out.Size, st = fs.CopyFileRange(cancel, (*fuse.CopyFileRangeIn)(r.arg())); !st.Ok() {
			return st, 0
		}
		fixed = sizeOf[fuse.WriteOut]()
	case opDestroy:
		return fuse.OK, 0
	default:
		// What go-fuse's server answers too: POLL, BMAP, STATX,
		// SYNCFS and the rest it has no handler for. FORGET,
		// BATCH_FORGET, INTERRUPT and INIT never come on a ring.
		return fuse.ENOSYS, 0
	}
	if fixed+len(data) > len(buf) {
		return fuse.ERANGE, 0
	}
	copy(buf, unsafe.Slice((*byte)(o.ptr()), fixed))
	copy(buf[fixed:], data)
	return fuse.OK, fixed + len(data)
}

// encodeReply writes the out header of a reply of n argument bytes with
// status st to the entry's header area.
func encodeReply(hdr []byte, unique uint64, st fuse.Status, n int) {
	if st != fuse.OK {
		n = 0
	}
	oh := (*fuse.OutHeader)(unsafe.Pointer(&hdr[0]))
	oh.Length = uint32(outHeaderSize + n)
	oh.Status = -int32(st)
	oh.Unique = unique
	putLE32(hdr[entPayloadSzOff:], uint32(n))
}
