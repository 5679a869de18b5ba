package uring

import (
	"errors"
	"fmt"
	"log"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// The FUSE ring commands (enum fuse_uring_cmd) and struct
// fuse_uring_cmd_req's layout in the SQE's command area.
const (
	cmdRegister       = 1
	cmdCommitAndFetch = 2
	cmdReqCommitIDOff = 8
	cmdReqQidOff      = 16
)

// EntriesPerQueue is how many requests one queue holds at once: the
// kernel hands a queue's requests to its free entries, and queues the
// rest until one is committed.
const EntriesPerQueue = 8

// efdTag is the user_data of the eventfd read that wakes a queue's
// thread when a request served on another goroutine is answered.
const efdTag = ^uint64(0)

// ParamPath is the fuse module's switch for io_uring.
const ParamPath = "/sys/module/fuse/parameters/enable_uring"

// Available reports whether this kernel can serve FUSE over io_uring now,
// and why not when it cannot.
func Available() error {
	b, err := os.ReadFile(ParamPath)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("this kernel has no FUSE over io_uring (no %s: needs Linux 6.14+ with CONFIG_FUSE_IO_URING)", ParamPath)
	}
	if err != nil {
		return fmt.Errorf("FUSE over io_uring: %w", err)
	}
	if strings.TrimSpace(string(b)) != "Y" {
		return fmt.Errorf("FUSE over io_uring is disabled (%s is %s; as root: echo Y > %s)", ParamPath, strings.TrimSpace(string(b)), ParamPath)
	}
	return nil
}

// Enable sets enable_uring to Y; it needs root. It reports whether it
// changed anything.
func Enable() (bool, error) {
	if Available() == nil {
		return false, nil
	}
	if _, err := os.Stat(ParamPath); err != nil {
		return false, Available()
	}
	if err := os.WriteFile(ParamPath, []byte("Y\n"), 0); err != nil {
		return false, fmt.Errorf("enable FUSE over io_uring: %w", err)
	}
	return true, Available()
}

// Queues is the number of queues the kernel wants: one per possible CPU
// (num_possible_cpus, the ring's nr_queues), numbered by CPU.
func Queues() (int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		return 0, fmt.Errorf("possible CPUs: %w", err)
	}
	n := 0
	for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, ok := strings.Cut(r, "-")
		a, err1 := strconv.Atoi(lo)
		z := a
		var err2 error
		if ok {
			z, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || z < a {
			return 0, fmt.Errorf("possible CPUs: cannot parse %q", b)
		}
		n += z - a + 1
	}
	return n, nil
}

// Transport serves one FUSE connection's rings.
type Transport struct {
	fd      int // our dup of the connection's /dev/fuse descriptor
	fs      fuse.RawFileSystem
	payload int
	queues  []*queue
	wg      sync.WaitGroup
	served  atomic.Uint64
}

// Start registers EntriesPerQueue entries on each queue of the FUSE
// connection of fuseFD, whose INIT reply negotiated FUSE_OVER_IO_URING,
// and serves the requests they receive with fs. maxPayload is the largest
// request or reply argument the connection carries (the kernel's
// max(FUSE_MIN_READ_BUFFER, max_write, max_pages * page size)). Start
// returns once every queue is registered, so the kernel has switched the
// connection to the rings, or with the error that kept one from it.
func Start(fuseFD int, fs fuse.RawFileSystem, maxPayload int) (*Transport, error) {
	nq, err := Queues()
	if err != nil {
		return nil, err
	}
	fd, err := unix.FcntlInt(uintptr(fuseFD), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("dup /dev/fuse descriptor %d: %w", fuseFD, err)
	}
	t := &Transport{fd: fd, fs: fs, payload: maxPayload}
	ready := make(chan error, nq)
	for qid := range nq {
		q := &queue{t: t, qid: qid, efd: -1}
		t.queues = append(t.queues, q)
		t.wg.Add(1)
		go q.run(ready)
	}
	var first error
	for range nq {
		if err := <-ready; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		t.Stop()
		t.Wait()
		return nil, first
	}
	return t, nil
}

// Served is the number of requests served over the rings so far.
func (t *Transport) Served() uint64 { return t.served.Load() }

// Stop makes every queue's thread leave once its requests in progress are
// answered (its ring's remaining commands are cancelled as it closes). An
// unmount needs no Stop: the kernel ends the rings' commands itself.
func (t *Transport) Stop() {
	for _, q := range t.queues {
		q.stop.Store(true)
		q.mu.Lock()
		q.wake()
		q.mu.Unlock()
	}
}

// Wait waits for every queue's thread to leave, then closes the
// descriptor.
func (t *Transport) Wait() {
	t.wg.Wait()
	if t.fd >= 0 {
		unix.Close(t.fd)
		t.fd = -1
	}
}

// entry is one registered ring entry: its header area, payload buffer
// and the request it holds.
type entry struct {
	hdr     []byte
	payload []byte
	iov     [2]unix.Iovec
	req     request
	rep     reply
	unique  uint64
	st      fuse.Status
	n       int
	live    bool // registered with the kernel, not ended
}

// queue is one CPU's ring and entries, served by one thread pinned to
// that CPU.
type queue struct {
	t      *Transport
	qid    int
	r      *ring
	mem    []byte // the entries' header areas and payload buffers
	ents   []entry
	efd    int
	efdBuf [8]byte
	stop   atomic.Bool
	mu     sync.Mutex
	done   []int // entries answered on other goroutines
	async  int   // entries being served on other goroutines (thread only)
	early  []cqe // completions setup reaped, for the loop
}

// wake makes the queue's thread look at q.done and q.stop; q.mu held, so
// the thread cannot close the eventfd in between.
func (q *queue) wake() {
	if q.efd >= 0 {
		one := [8]byte{1}
		unix.Write(q.efd, one[:])
	}
}

func (q *queue) run(ready chan<- error) {
	defer q.t.wg.Done()
	// The thread stays locked to this goroutine: it exits with it, so
	// its CPU affinity never leaks to other goroutines.
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(q.qid)
	// A possible CPU that is offline cannot be had; its queue gets no
	// requests until it comes online, so serve it unpinned.
	_ = unix.SchedSetaffinity(0, &set)
	err := q.setup()
	if err != nil {
		q.teardown()
		ready <- fmt.Errorf("FUSE over io_uring, queue %d: %w", q.qid, err)
		return
	}
	ready <- nil
	q.loop()
	q.teardown()
}

func (q *queue) setup() error {
	var err error
	if q.efd, err = unix.Eventfd(0, unix.EFD_CLOEXEC); err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	if q.r, err = newRing(2 * EntriesPerQueue); err != nil {
		return err
	}
	page := os.Getpagesize()
	hdrs := (EntriesPerQueue*reqHeaderSize + page - 1) / page * page
	pay := (q.t.payload + page - 1) / page * page
	if q.mem, err = unix.Mmap(-1, 0, hdrs+EntriesPerQueue*pay, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS); err != nil {
		return fmt.Errorf("mmap ring buffers: %w", err)
	}
	q.ents = make([]entry, EntriesPerQueue)
	for i := range q.ents {
		e := &q.ents[i]
		e.hdr = q.mem[i*reqHeaderSize : (i+1)*reqHeaderSize]
		e.payload = q.mem[hdrs+i*pay : hdrs+(i+1)*pay]
		e.iov[0] = unix.Iovec{Base: &e.hdr[0]}
		e.iov[0].SetLen(len(e.hdr))
		e.iov[1] = unix.Iovec{Base: &e.payload[0]}
		e.iov[1].SetLen(len(e.payload))
		s := q.r.getSQE()
		fillCmd(s, q.t.fd, cmdRegister, uint64(i), uint16(q.qid), 0)
		*(*uint64)(unsafe.Pointer(&s[16])) = uint64(uintptr(unsafe.Pointer(&e.iov[0])))
		*(*uint32)(unsafe.Pointer(&s[24])) = 2
		e.live = true
	}
	q.armEventfd()
	// Submit, and run the task work of commands that failed at once
	// (GETEVENTS with nothing to wait for), so their CQEs are there.
	if err := q.r.enterFlags(0, enterGetEvents); err != nil {
		return err
	}
	// A completion now is a failed REGISTER, or already a request (the
	// other queues may have made the ring ready), kept for the loop.
	var regErr error
	q.r.reap(func(c cqe) {
		if c.UserData != efdTag && c.Res < 0 {
			q.ents[c.UserData].live = false
			if regErr == nil {
				regErr = fmt.Errorf("FUSE_IO_URING_CMD_REGISTER: %w", syscall.Errno(-c.Res))
			}
			return
		}
		q.early = append(q.early, c)
	})
	return regErr
}

// fillCmd fills s as a FUSE ring command.
func fillCmd(s []byte, fd int, op uint32, user uint64, qid uint16, commitID uint64) {
	s[0] = opURingCmd
	*(*int32)(unsafe.Pointer(&s[4])) = int32(fd)
	*(*uint32)(unsafe.Pointer(&s[8])) = op
	*(*uint64)(unsafe.Pointer(&s[32])) = user
	*(*uint64)(unsafe.Pointer(&s[sqeCmdOffset+cmdReqCommitIDOff])) = commitID
	*(*uint16)(unsafe.Pointer(&s[sqeCmdOffset+cmdReqQidOff])) = qid
}

func (q *queue) armEventfd() {
	s := q.sqe()
	s[0] = opRead
	*(*int32)(unsafe.Pointer(&s[4])) = int32(q.efd)
	*(*uint64)(unsafe.Pointer(&s[16])) = uint64(uintptr(unsafe.Pointer(&q.efdBuf[0])))
	*(*uint32)(unsafe.Pointer(&s[24])) = 8
	*(*uint64)(unsafe.Pointer(&s[32])) = efdTag
}

// sqe returns a free SQE, submitting what is queued if the ring is full.
func (q *queue) sqe() []byte {
	for {
		if s := q.r.getSQE(); s != nil {
			return s
		}
		if err := q.r.enter(0); err != nil {
			log.Printf("FUSE over io_uring, queue %d: %v", q.qid, err)
		}
	}
}

// commit queues entry i's answer, which fetches the next request.
func (q *queue) commit(i int) {
	e := &q.ents[i]
	encodeReply(e.hdr, e.unique, e.st, e.n)
	fillCmd(q.sqe(), q.t.fd, cmdCommitAndFetch, uint64(i), uint16(q.qid), e.unique)
}

func (q *queue) liveEntries() int {
	n := 0
	for i := range q.ents {
		if q.ents[i].live {
			n++
		}
	}
	return n
}

// slow says whether a request may wait for a log force or the disk: it is
// served on a goroutine of its own, so it does not hold up the queue's
// other requests.
func slow(op uint32) bool {
	switch op {
	case opFsync, opFsyncdir, opFlush, opFallocate, opCopyFileRange, opSetlkw, opSyncfs:
		return true
	}
	return false
}

func (q *queue) loop() {
	for _, c := range q.early {
		q.complete(c)
	}
	q.early = nil
	for {
		if q.liveEntries() == 0 && q.async == 0 {
			return
		}
		if q.stop.Load() && q.async == 0 {
			return
		}
		if err := q.r.enter(1); err != nil {
			log.Printf("FUSE over io_uring, queue %d: %v", q.qid, err)
			return
		}
		q.r.reap(q.complete)
	}
}

// complete handles one CQE: a request in an entry, an entry's end, or the
// eventfd's wakeup.
func (q *queue) complete(c cqe) {
	if c.UserData == efdTag {
		q.mu.Lock()
		done := q.done
		q.done = nil
		q.mu.Unlock()
		for _, i := range done {
			q.async--
			if q.ents[i].live {
				q.commit(i)
			}
		}
		if c.Res >= 0 || c.Res == -int32(syscall.EINTR) || c.Res == -int32(syscall.EAGAIN) {
			q.armEventfd()
		}
		return
	}
	e := &q.ents[c.UserData]
	if c.Res < 0 {
		// ENOTCONN, ECONNABORTED: the connection is gone (unmount,
		// abort) or the command was cancelled; the entry is over.
		e.live = false
		return
	}
	if q.stop.Load() {
		e.live = false
		return
	}
	if err := e.req.decode(e.hdr, e.payload); err != nil {
		log.Printf("FUSE over io_uring, queue %d: %v", q.qid, err)
		e.unique = e.req.header().Unique
		e.st, e.n = fuse.EIO, 0
		q.commit(int(c.UserData))
		return
	}
	e.unique = e.req.header().Unique
	if slow(e.req.header().Opcode) {
		q.async++
		i := int(c.UserData)
		go func() {
			e.st, e.n = serve(q.t.fs, &e.req, &e.rep, e.payload)
			q.t.served.Add(1)
			q.mu.Lock()
			q.done = append(q.done, i)
			q.wake()
			q.mu.Unlock()
		}()
		return
	}
	e.st, e.n = serve(q.t.fs, &e.req, &e.rep, e.payload)
	q.t.served.Add(1)
	q.commit(int(c.UserData))
}

func (q *queue) teardown() {
	if q.r != nil {
		q.r.close() // cancels the ring's remaining commands
		q.r = nil
	}
	// Unmap the buffers only once the kernel has ended every entry:
	// after Stop, the ring's close cancels the rest asynchronously, so
	// their buffers stay mapped (and are lost) rather than risk a late
	// copy into memory mapped again for something else.
	if q.mem != nil && q.liveEntries() == 0 {
		unix.Munmap(q.mem)
		q.mem = nil
	}
	q.mu.Lock()
	if q.efd >= 0 {
		unix.Close(q.efd)
		q.efd = -1
	}
	q.mu.Unlock()
}
