package uring

import (
	"fmt"
	"log"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

const (
	// The FUSE ring commands (enum fuse_uring_cmd) and struct
	// fuse_uring_cmd_req's layout in the SQE's command area.
	cmdRegister       = 1
	cmdCommitAndFetch = 2
	cmdReqCommitIDOff = 8
	cmdReqQidOff      = 16
	// EntriesPerQueue is how many requests one queue holds at once: the
	// kernel hands a queue's requests to its free entries, and queues
	// the rest until one is committed.
	EntriesPerQueue = 8
	// efdTag is the user_data of the eventfd read that wakes a queue's
	// thread when a request served on another goroutine is answered.
	efdTag = ^uint64(0)
	// ParamPath is the fuse module's switch for io_uring.
	ParamPath = "/sys/module/fuse/parameters/enable_uring"
)

// Enable makes sure this kernel serves FUSE over io_uring: it sets the
// fuse module's enable_uring to Y if it is not (that needs root) and
// reports whether it did, or says why FUSE over io_uring cannot be had.
func Enable() (bool, error) {
	b, err := os.ReadFile(ParamPath)
	if os.IsNotExist(err) {
		return false, fmt.Errorf("this kernel has no FUSE over io_uring (no %s: needs Linux 6.14+ with CONFIG_FUSE_IO_URING)", ParamPath)
	} else if err != nil {
		return false, fmt.Errorf("FUSE over io_uring: %w", err)
	} else if v := strings.TrimSpace(string(b)); v != "Y" {
		if err := os.WriteFile(ParamPath, []byte("Y\n"), 0); err != nil {
			return false, fmt.Errorf("FUSE over io_uring is disabled (%s is %s) and cannot be enabled: %w", ParamPath, v, err)
		}
		return true, nil
	}
	return false, nil
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
		var lo, hi int
		if k, _ := fmt.Sscanf(r, "%d-%d", &lo, &hi); k == 1 {
			hi = lo
		} else if k != 2 || hi < lo {
			return 0, fmt.Errorf("possible CPUs: cannot parse %q", b)
		}
		n += hi - lo + 1
	}
	return n, nil
}

// Transport serves one FUSE connection's rings.
type Transport struct {
	fd      int // our dup of the connection's /dev/fuse descriptor
	ps      *fuse.ProtocolServer
	slow    func(opcode uint32) bool
	payload int
	queues  []*queue
	wg      sync.WaitGroup
	served  atomic.Uint64
}

// Start registers EntriesPerQueue entries on each queue of the FUSE
// connection of fuseFD, whose INIT (kernel, answered by go-fuse's server
// with opts) negotiated FUSE_OVER_IO_URING, and serves the requests they
// receive with go-fuse's ProtocolServer over fs. slow says which opcodes
// may wait for a log force or the disk: those are served on goroutines of
// their own, so they do not hold up the queue's other requests. Start
// returns once every queue is registered, so the kernel has switched the
// connection to the rings, or with the error that kept one from it.
func Start(fuseFD int, fs fuse.RawFileSystem, opts *fuse.MountOptions, kernel *fuse.InitIn, slow func(opcode uint32) bool) (*Transport, error) {
	nq, err := Queues()
	if err != nil {
		return nil, err
	}
	ps, payload, err := newProtocolServer(fs, opts, kernel)
	if err != nil {
		return nil, err
	}
	fd, err := unix.FcntlInt(uintptr(fuseFD), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("dup /dev/fuse descriptor %d: %w", fuseFD, err)
	}
	t := &Transport{fd: fd, ps: ps, slow: slow, payload: payload}
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

// entry is one registered ring entry: its header area and payload
// buffer, and the request it holds.
type entry struct {
	hdr, payload []byte
	iov          [2]unix.Iovec
	in           [3][]byte // the request, as serve hands it to go-fuse
	out          [2][]byte // where its reply goes
}

// queue is one CPU's ring and entries, served by one thread pinned to
// that CPU.
type queue struct {
	t      *Transport
	qid    int
	r      *ring
	mem    []byte // the entries' header areas and payload buffers
	ents   []entry
	live   int // entries registered with the kernel and not ended
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
		for j, b := range [][]byte{e.hdr, e.payload} {
			e.iov[j] = unix.Iovec{Base: &b[0]}
			e.iov[j].SetLen(len(b))
		}
		q.cmd(cmdRegister, i, 0, unsafe.Pointer(&e.iov[0]), 2)
		q.live++
	}
	q.armEventfd()
	if err := q.r.enter(0); err != nil {
		return err
	}
	// A completion now is a failed REGISTER, or already a request (the
	// other queues may have made the ring ready), kept for the loop.
	var regErr error
	q.r.reap(func(c cqe) {
		if c.UserData != efdTag && c.Res < 0 {
			q.live--
			if regErr == nil {
				regErr = fmt.Errorf("FUSE_IO_URING_CMD_REGISTER: %w", syscall.Errno(-c.Res))
			}
			return
		}
		q.early = append(q.early, c)
	})
	return regErr
}

// cmd queues FUSE ring command op for entry i: its buffers (REGISTER)
// or the unique of the request it answers (COMMIT_AND_FETCH).
func (q *queue) cmd(op uint32, i int, commitID uint64, iov unsafe.Pointer, niov uint32) {
	s := q.sqe()
	prep(s, opURingCmd, q.t.fd, iov, niov, uint64(i))
	*(*uint32)(unsafe.Pointer(&s[8])) = op
	*(*uint64)(unsafe.Pointer(&s[sqeCmdOffset+cmdReqCommitIDOff])) = commitID
	*(*uint16)(unsafe.Pointer(&s[sqeCmdOffset+cmdReqQidOff])) = uint16(q.qid)
}

func (q *queue) armEventfd() {
	prep(q.sqe(), opRead, q.efd, unsafe.Pointer(&q.efdBuf[0]), 8, efdTag)
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

// commit queues entry i's answer (serve left it in the entry, under the
// request's unique), which fetches the next request.
func (q *queue) commit(i int) {
	q.cmd(cmdCommitAndFetch, i, (*fuse.OutHeader)(unsafe.Pointer(&q.ents[i].hdr[0])).Unique, nil, 0)
}

func (q *queue) loop() {
	for _, c := range q.early {
		q.complete(c)
	}
	q.early = nil
	for {
		if (q.live == 0 || q.stop.Load()) && q.async == 0 {
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
			q.commit(i)
		}
		if c.Res >= 0 || c.Res == -int32(syscall.EINTR) || c.Res == -int32(syscall.EAGAIN) {
			q.armEventfd()
		}
		return
	}
	if c.Res < 0 || q.stop.Load() {
		// ENOTCONN, ECONNABORTED: the connection is gone (unmount,
		// abort) or the command was cancelled; the entry is over.
		q.live--
		return
	}
	i, e := int(c.UserData), &q.ents[c.UserData]
	if q.t.slow((*fuse.InHeader)(unsafe.Pointer(&e.hdr[0])).Opcode) {
		q.async++
		go func() {
			q.t.serve(e)
			q.mu.Lock()
			q.done = append(q.done, i)
			q.wake()
			q.mu.Unlock()
		}()
		return
	}
	q.t.serve(e)
	q.commit(i)
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
	if q.mem != nil && q.live == 0 {
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
