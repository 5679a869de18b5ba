package uring

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log"
	"os"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// A ring entry's header area is struct fuse_uring_req_header: the in (or
// out) header in the first 128 bytes, the op's first argument (op_in) in
// the next 128, then struct fuse_uring_ent_in_out (flags, commit_id,
// payload_sz). The request's other arguments, and all of the reply's, are
// in the entry's payload buffer.
const (
	inHeaderSize    = int(unsafe.Sizeof(fuse.InHeader{}))
	outHeaderSize   = int(unsafe.Sizeof(fuse.OutHeader{}))
	hdrOpInOff      = 128 // FUSE_URING_IN_OUT_HEADER_SZ
	hdrOpInSize     = 128 // FUSE_URING_OP_IN_OUT_SZ
	entPayloadSzOff = hdrOpInOff + hdrOpInSize + 16
	reqHeaderSize   = hdrOpInOff + hdrOpInSize + 32 // 288
	opInit          = 26                            // FUSE_INIT
	opIoctl         = 39                            // FUSE_IOCTL
)

// newProtocolServer returns go-fuse's ProtocolServer over fs, told the
// connection's INIT (kernel, as go-fuse's /dev/fuse server got and
// answered it with opts) so that both parse alike (SETXATTR's first
// argument depends on what INIT negotiated), and the largest argument the
// connection carries (max_payload_sz: max(FUSE_MIN_READ_BUFFER, max_write,
// max_pages pages)).
func newProtocolServer(fs fuse.RawFileSystem, opts *fuse.MountOptions, kernel *fuse.InitIn) (*fuse.ProtocolServer, int, error) {
	ps := fuse.NewProtocolServer(fs, opts)
	in := *kernel
	in.InHeader = fuse.InHeader{Length: uint32(unsafe.Sizeof(in)), Opcode: opInit}
	var out struct {
		h fuse.OutHeader
		o fuse.InitOut
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&out)), unsafe.Sizeof(out))
	n, st := ps.HandleRequest([][]byte{unsafe.Slice((*byte)(unsafe.Pointer(&in)), unsafe.Sizeof(in))}, [][]byte{b})
	if !st.Ok() || n < outHeaderSize || out.h.Status != 0 {
		return nil, 0, fmt.Errorf("go-fuse's ProtocolServer refused the connection's INIT (%d.%d, flags %#x): %v, status %d",
			kernel.Major, kernel.Minor, kernel.Flags64(), st, out.h.Status)
	}
	page := os.Getpagesize()
	return ps, max(8192, int(out.o.MaxWrite), int(out.o.MaxPages)*page), nil
}

// serve answers the request in e with t.ps and leaves the reply in e:
// its out header in the header area, payload_sz set, its arguments in the
// payload buffer, where the request's names and data were (go-fuse copies
// names; IOCTL's input, which its output would overwrite, is copied here).
func (t *Transport) serve(e *entry) {
	h := *(*fuse.InHeader)(unsafe.Pointer(&e.hdr[0]))
	defer func() {
		if p := recover(); p != nil {
			log.Printf("FUSE over io_uring: opcode %d (request %d) panicked: %v", h.Opcode, h.Unique, p)
			errorReply(e.hdr, h.Unique, fuse.EIO)
		}
	}()
	t.served.Add(1)
	psz := int(binary.LittleEndian.Uint32(e.hdr[entPayloadSzOff:]))
	argSz := int(h.Length) - inHeaderSize - psz
	if psz > len(e.payload) || argSz < 0 || argSz > hdrOpInSize {
		log.Printf("FUSE over io_uring: request %d (opcode %d): length %d with a payload of %d bytes (buffer %d) leaves %d for op_in (0..%d)",
			h.Unique, h.Opcode, h.Length, psz, len(e.payload), argSz, hdrOpInSize)
		errorReply(e.hdr, h.Unique, fuse.EIO)
		return
	}
	e.in = [3][]byte{e.hdr[:inHeaderSize], e.hdr[hdrOpInOff : hdrOpInOff+argSz], e.payload[:psz]}
	e.out = [2][]byte{e.hdr[:outHeaderSize], e.payload}
	if h.Opcode == opIoctl {
		e.in[2] = bytes.Clone(e.in[2])
	}
	if n, st := t.ps.HandleRequest(e.in[:], e.out[:]); n >= outHeaderSize {
		binary.LittleEndian.PutUint32(e.hdr[entPayloadSzOff:], uint32(n-outHeaderSize))
	} else if st.Ok() { // no reply: FORGET, NOTIFY_REPLY (the kernel sends those over /dev/fuse)
		errorReply(e.hdr, h.Unique, fuse.ENOSYS)
	} else { // refused unparsed
		errorReply(e.hdr, h.Unique, st)
	}
}

// errorReply puts a reply of status st and no arguments in hdr.
func errorReply(hdr []byte, unique uint64, st fuse.Status) {
	*(*fuse.OutHeader)(unsafe.Pointer(&hdr[0])) = fuse.OutHeader{Length: uint32(outHeaderSize), Status: -int32(st), Unique: unique}
	binary.LittleEndian.PutUint32(hdr[entPayloadSzOff:], 0)
}
