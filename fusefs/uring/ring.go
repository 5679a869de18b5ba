// Package uring serves FUSE requests over io_uring (Linux 6.14+,
// CONFIG_FUSE_IO_URING, the fuse module's enable_uring parameter): one
// queue per possible CPU, each an io_uring of its own driven by one OS
// thread pinned to that CPU. The kernel puts a request on the queue of the
// CPU its caller runs on, so the request is read, served and answered
// there, and one FUSE_IO_URING_CMD_COMMIT_AND_FETCH both answers it and
// hands the entry back for the next one. A request that may wait for the
// disk is served on a goroutine of its own, which wakes the queue's
// thread through an eventfd when it is answered.
//
// The package keeps the ring alone. Each request goes as it lies in its
// entry to go-fuse's fuse.ProtocolServer (the seam go-fuse's virtiofs
// serves through), which parses it, calls the fuse.RawFileSystem that
// go-fuse's /dev/fuse server calls too, and writes the reply back into the
// entry; it is told the INIT that server answered, so both parse alike.
//
// What stays on /dev/fuse, with go-fuse's server: INIT, FORGET and
// BATCH_FORGET (the kernel never puts them on a ring); notifications and
// passthrough's backing-file registrations (ioctls on /dev/fuse; a backing
// id then travels in an OPEN or CREATE reply over the ring like any other
// field); and INTERRUPT, which the kernel sends there for a ring request
// too. go-fuse's server finds no such request in flight (it answers
// EAGAIN, which the kernel, finding the request on no /dev/fuse list,
// drops), and the ProtocolServer's table of requests in flight cannot be
// reached from outside go-fuse: a ring request is never interrupted.
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
	setupCQSize       = 1 << 3
	setupSQE128       = 1 << 10
	setupSingleIssuer = 1 << 12
	setupDeferTaskrun = 1 << 13
	featSingleMmap    = 1 << 0
	enterGetEvents    = 1 << 0
	offSQEs           = 0x10000000
	opRead            = 22
	opURingCmd        = 46
	sqeSize           = 128 // IORING_SETUP_SQE128
	cqeSize           = 16
	sqeCmdOffset      = 48 // struct io_uring_sqe's cmd[]: 80 bytes with SQE128
)

// ringParams is struct io_uring_params, its struct io_sqring_offsets and
// io_cqring_offsets inline.
type ringParams struct {
	SqEntries, CqEntries, Flags, SqThreadCPU, SqThreadIdle, Features, WqFd uint32
	Resv                                                                   [3]uint32
	SqHead, SqTail, SqRingMask, SqRingEntries, SqFlags, SqDropped, SqArray uint32
	_                                                                      [3]uint32
	CqHead, CqTail, CqRingMask, CqRingEntries, CqOverflow, Cqes            uint32
	_                                                                      [4]uint32
}

var _ = [1]int{}[unsafe.Sizeof(ringParams{})-120] // it is 120 bytes

// cqe is struct io_uring_cqe (16 bytes, no IORING_SETUP_CQE32).
type cqe struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// ring is one io_uring, used by one thread only (IORING_SETUP_SINGLE_ISSUER):
// every method must be called from the thread that made it.
type ring struct {
	fd             int
	mem, sqes      []byte // the rings (one mapping: FEAT_SINGLE_MMAP), the SQEs
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
// many CQEs, with the flags of Linux 6.1 and later (FUSE over io_uring
// wants 6.14).
func newRing(entries uint32) (*ring, error) {
	p := ringParams{Flags: setupSQE128 | setupCQSize | setupSingleIssuer | setupDeferTaskrun, CqEntries: 2 * entries}
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil, fmt.Errorf("io_uring_setup(%d entries, SQE128): %w", entries, e)
	}
	r := &ring{fd: int(fd)}
	n := int(max(p.SqArray+p.SqEntries*4, p.Cqes+p.CqEntries*cqeSize))
	var err error
	if p.Features&featSingleMmap == 0 {
		err = fmt.Errorf("io_uring without IORING_FEAT_SINGLE_MMAP (Linux 5.4)")
	} else if r.mem, err = unix.Mmap(r.fd, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		err = fmt.Errorf("mmap io_uring rings: %w", err)
	} else if r.sqes, err = unix.Mmap(r.fd, offSQEs, int(p.SqEntries)*sqeSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		err = fmt.Errorf("mmap io_uring SQEs: %w", err)
	}
	if err != nil {
		r.close()
		return nil, err
	}
	m := unsafe.Pointer(&r.mem[0])
	r.sqHead, r.sqTail = (*uint32)(unsafe.Add(m, p.SqHead)), (*uint32)(unsafe.Add(m, p.SqTail))
	r.sqMask = *(*uint32)(unsafe.Add(m, p.SqRingMask))
	r.sqArray = unsafe.Add(m, p.SqArray)
	r.cqHead, r.cqTail = (*uint32)(unsafe.Add(m, p.CqHead)), (*uint32)(unsafe.Add(m, p.CqTail))
	r.cqMask = *(*uint32)(unsafe.Add(m, p.CqRingMask))
	r.cqes = unsafe.Add(m, p.Cqes)
	r.localTail = atomic.LoadUint32(r.sqTail)
	return r, nil
}

// prep fills an SQE's common fields: opcode, fd, addr, len, user_data.
func prep(s []byte, op uint8, fd int, addr unsafe.Pointer, n uint32, user uint64) {
	s[0] = op
	*(*int32)(unsafe.Pointer(&s[4])) = int32(fd)
	*(*uint64)(unsafe.Pointer(&s[16])) = uint64(uintptr(addr))
	*(*uint32)(unsafe.Pointer(&s[24])) = n
	*(*uint64)(unsafe.Pointer(&s[32])) = user
}

// getSQE returns the next free SQE, zeroed, or nil when the SQ ring is
// full (the caller submits and retries).
func (r *ring) getSQE() []byte {
	if r.localTail-atomic.LoadUint32(r.sqHead) > r.sqMask {
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

// enter publishes the filled SQEs and submits them, runs the ring's
// deferred task work (so the completions of commands that failed at once
// are there) and waits for at least wait completions. EINTR is not an
// error: the caller reaps what there is and comes back.
func (r *ring) enter(wait uint32) error {
	atomic.StoreUint32(r.sqTail, r.localTail)
	for {
		n, _, e := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.pending), uintptr(wait), enterGetEvents, 0, 0)
		if e == syscall.EINTR && r.pending == 0 {
			return nil
		} else if e == syscall.EINTR {
			continue
		} else if e != 0 {
			return fmt.Errorf("io_uring_enter: %w", e)
		}
		r.pending -= min(r.pending, uint32(n))
		return nil
	}
}

// reap calls f with every completion there is and frees their slots.
func (r *ring) reap(f func(c cqe)) {
	for head := atomic.LoadUint32(r.cqHead); head != atomic.LoadUint32(r.cqTail); head++ {
		c := *(*cqe)(unsafe.Add(r.cqes, uintptr(head&r.cqMask)*cqeSize))
		atomic.StoreUint32(r.cqHead, head+1)
		f(c)
	}
}

func (r *ring) close() {
	unix.Munmap(r.sqes) // EINVAL, and nothing done, if not mapped
	unix.Munmap(r.mem)
	unix.Close(r.fd)
}
