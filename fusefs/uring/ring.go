// Package uring serves FUSE requests over io_uring (Linux 6.14+,
// CONFIG_FUSE_IO_URING, the fuse module's enable_uring parameter): one
// queue per possible CPU, each an io_uring of its own driven by one OS
// thread pinned to that CPU. The kernel puts a request on the queue of the
// CPU its caller runs on, so the request is read, served and answered
// there, and one FUSE_IO_URING_CMD_COMMIT_AND_FETCH both answers it and
// hands the entry back for the next one.
//
// The requests are decoded into go-fuse's wire types and served by a
// fuse.RawFileSystem, the same one go-fuse's own server calls for the
// requests that still come through /dev/fuse (INIT, FORGET, BATCH_FORGET
// and INTERRUPT, which the kernel never puts on a ring); the daemon's
// notifications and backing-file registrations (passthrough) go over
// /dev/fuse too. A NOTIFY_REPLY (the answer to a retrieve, which xlogfs
// never asks for) would come on a ring and get ENOSYS.
//
// The ABI is the kernel's: Documentation/filesystems/fuse-io-uring.rst,
// include/uapi/linux/fuse.h (struct fuse_uring_req_header,
// fuse_uring_ent_in_out, fuse_uring_cmd_req) and fs/fuse/dev_uring.c.
package uring

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// io_uring's ABI (include/uapi/linux/io_uring.h), what this package uses.
const (
	setupCQSize        = 1 << 3
	setupSQE128        = 1 << 10
	setupSingleIssuer  = 1 << 12
	setupDeferTaskrun  = 1 << 13
	featSingleMmap     = 1 << 0
	enterGetEvents     = 1 << 0
	offSQRing          = 0
	offCQRing          = 0x8000000
	offSQEs            = 0x10000000
	opRead             = 22
	opURingCmd         = 46
	sqeSize            = 128 // IORING_SETUP_SQE128
	cqeSize            = 16
	sqeCmdOffset       = 48 // struct io_uring_sqe's cmd[]: 80 bytes with SQE128
	sqeCmdLen          = sqeSize - sqeCmdOffset
	ioringParamsLength = 120
)

// sqringOffsets is struct io_sqring_offsets.
type sqringOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, Resv1 uint32
	UserAddr                                                        uint64
}

// cqringOffsets is struct io_cqring_offsets.
type cqringOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, Cqes, Flags, Resv1 uint32
	UserAddr                                                        uint64
}

// ringParams is struct io_uring_params.
type ringParams struct {
	SqEntries, CqEntries, Flags, SqThreadCPU, SqThreadIdle, Features, WqFd uint32
	Resv                                                                   [3]uint32
	SqOff                                                                  sqringOffsets
	CqOff                                                                  cqringOffsets
}

var _ [ioringParamsLength - unsafe.Sizeof(ringParams{})]byte
var _ [unsafe.Sizeof(ringParams{}) - ioringParamsLength]byte

// cqe is struct io_uring_cqe (16 bytes, no IORING_SETUP_CQE32).
type cqe struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// ring is one io_uring, used by one thread only (IORING_SETUP_SINGLE_ISSUER
// when the kernel has it): every method must be called from the thread
// that made it.
type ring struct {
	fd             int
	sqMem, cqMem   []byte // the mapped rings (one mapping with SINGLE_MMAP)
	sqes           []byte
	sqHead, sqTail *uint32
	sqMask         uint32
	sqArray        unsafe.Pointer
	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           unsafe.Pointer
	pending        uint32 // SQEs filled but not yet submitted
	localTail      uint32
}

// newRing sets up an io_uring with entries 128-byte SQEs and twice as
// many CQEs.
func newRing(entries uint32) (*ring, error) {
	var p ringParams
	p.Flags = setupSQE128 | setupCQSize | setupSingleIssuer | setupDeferTaskrun
	p.CqEntries = 2 * entries
	fd, err := setup(entries, &p)
	if err == syscall.EINVAL {
		// Before Linux 6.1: no DEFER_TASKRUN; the transport wants
		// 6.14 anyway, but say so through the FUSE command's error.
		p = ringParams{Flags: setupSQE128 | setupCQSize, CqEntries: 2 * entries}
		fd, err = setup(entries, &p)
	}
	if err != nil {
		return nil, fmt.Errorf("io_uring_setup(%d entries, SQE128): %w", entries, err)
	}
	r := &ring{fd: fd}
	if err := r.mapRings(&p); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func setup(entries uint32, p *ringParams) (int, error) {
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if e != 0 {
		return -1, e
	}
	unix.CloseOnExec(int(fd))
	return int(fd), nil
}

func (r *ring) mapRings(p *ringParams) error {
	sqLen := int(p.SqOff.Array + p.SqEntries*4)
	cqLen := int(p.CqOff.Cqes + p.CqEntries*cqeSize)
	if p.Features&featSingleMmap != 0 {
		sqLen = max(sqLen, cqLen)
	}
	var err error
	r.sqMem, err = unix.Mmap(r.fd, offSQRing, sqLen, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("mmap io_uring SQ ring: %w", err)
	}
	if p.Features&featSingleMmap != 0 {
		r.cqMem = r.sqMem
	} else if r.cqMem, err = unix.Mmap(r.fd, offCQRing, cqLen, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fmt.Errorf("mmap io_uring CQ ring: %w", err)
	}
	if r.sqes, err = unix.Mmap(r.fd, offSQEs, int(p.SqEntries)*sqeSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fmt.Errorf("mmap io_uring SQEs: %w", err)
	}
	sq := unsafe.Pointer(&r.sqMem[0])
	cq := unsafe.Pointer(&r.cqMem[0])
	r.sqHead = (*uint32)(unsafe.Add(sq, p.SqOff.Head))
	r.sqTail = (*uint32)(unsafe.Add(sq, p.SqOff.Tail))
	r.sqMask = *(*uint32)(unsafe.Add(sq, p.SqOff.RingMask))
	r.sqArray = unsafe.Add(sq, p.SqOff.Array)
	r.cqHead = (*uint32)(unsafe.Add(cq, p.CqOff.Head))
	r.cqTail = (*uint32)(unsafe.Add(cq, p.CqOff.Tail))
	r.cqMask = *(*uint32)(unsafe.Add(cq, p.CqOff.RingMask))
	r.cqes = unsafe.Add(cq, p.CqOff.Cqes)
	r.localTail = atomic.LoadUint32(r.sqTail)
	return nil
}

// getSQE returns the next free SQE, zeroed, or nil when the SQ ring is
// full (the caller submits and retries).
func (r *ring) getSQE() []byte {
	head := atomic.LoadUint32(r.sqHead)
	if r.localTail-head > r.sqMask {
		return nil
	}
	idx := r.localTail & r.sqMask
	*(*uint32)(unsafe.Add(r.sqArray, 4*idx)) = idx
	s := r.sqes[int(idx)*sqeSize : int(idx+1)*sqeSize]
	clear(s)
	r.localTail++
	r.pending++
	return s
}

// enter publishes the filled SQEs and submits them, waiting for at least
// wait completions. EINTR is not an error: the caller reaps what there
// is and comes back.
func (r *ring) enter(wait uint32) error {
	flags := uintptr(0)
	if wait > 0 {
		flags = enterGetEvents
	}
	return r.enterFlags(wait, flags)
}

func (r *ring) enterFlags(wait uint32, flags uintptr) error {
	atomic.StoreUint32(r.sqTail, r.localTail)
	for {
		n, _, e := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.pending), uintptr(wait), flags, 0, 0)
		if e == syscall.EINTR {
			if r.pending == 0 {
				return nil
			}
			continue
		}
		if e != 0 {
			return fmt.Errorf("io_uring_enter: %w", e)
		}
		r.pending -= min(r.pending, uint32(n))
		return nil
	}
}

// reap calls f with every completion there is and frees their slots.
func (r *ring) reap(f func(c cqe)) int {
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail)
	n := 0
	for ; head != tail; head++ {
		c := *(*cqe)(unsafe.Add(r.cqes, uintptr(head&r.cqMask)*cqeSize))
		atomic.StoreUint32(r.cqHead, head+1)
		f(c)
		n++
	}
	return n
}

func (r *ring) close() {
	shared := r.cqMem != nil && r.sqMem != nil && &r.cqMem[0] == &r.sqMem[0]
	for _, m := range [][]byte{r.sqes, r.sqMem} {
		if m != nil {
			unix.Munmap(m)
		}
	}
	if r.cqMem != nil && !shared {
		unix.Munmap(r.cqMem)
	}
	unix.Close(r.fd)
}
