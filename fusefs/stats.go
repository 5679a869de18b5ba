package fusefs

import (
	"bytes"
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/xlogfs/xlogfs/journal"
)

// statsNode is the root's read-only .stats file: the journal's counters as
// "name value" lines, taken fresh at each open.
type statsNode struct {
	fs.Inode
	fsys *journal.FS
	m    *mount
}

var (
	_ fs.NodeGetattrer = (*statsNode)(nil)
	_ fs.NodeOpener    = (*statsNode)(nil)
	_ fs.NodeReader    = (*statsNode)(nil)
	_ fs.NodeFsyncer   = (*statsNode)(nil)
)

// Fsync of .stats has nothing to make durable.
func (s *statsNode) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno { return 0 }

func (n *node) statsInode(ctx context.Context, out *fuse.EntryOut) *fs.Inode {
	s := &statsNode{fsys: n.fsys, m: n.m}
	s.fill(&out.Attr)
	return n.NewInode(ctx, s, fs.StableAttr{Mode: syscall.S_IFREG, Ino: statsIno})
}

// content is .stats: the journal's counters and the daemon's CPU time
// (StatsText), then this mount's: whether regular files are open in
// kernel passthrough, the FUSE transport (and with io_uring, how many
// requests came over the rings), and the FUSE requests served so far
// (those reading .stats included).
func (s *statsNode) content() []byte {
	b := bytes.NewBuffer(StatsText(s.fsys))
	fmt.Fprintf(b, "passthrough %s\n", map[bool]string{true: "on", false: "off"}[s.m.pt.Load()])
	fmt.Fprintf(b, "transport %s\n", s.m.transport)
	if s.m.rings != nil {
		fmt.Fprintf(b, "uring_requests %d\n", s.m.rings.Served())
	}
	s.m.reqs.WriteTo(b)
	return b.Bytes()
}

// StatsText is what .stats shows of fsys: its counters in the .stats
// format (journal.ParseStats reads it back), and the daemon's CPU time.
func StatsText(fsys *journal.FS) []byte {
	var b bytes.Buffer
	st := fsys.Stats()
	st.WriteTo(&b)
	// The daemon's CPU time so far (all threads, user and system), the
	// denominator of the checksum's share of CPU over a window between
	// two reads; and that share over the mount's life, in percent
	// (cksum_ns / process_cpu_ns).
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		cpu := ru.Utime.Nano() + ru.Stime.Nano()
		fmt.Fprintf(&b, "process_cpu_ns %d\n", cpu)
		if cpu > 0 {
			fmt.Fprintf(&b, "cksum_cpu_pct %.4f\n", 100*float64(st.Cksum.TotalNanos())/float64(cpu))
		}
	}
	return b.Bytes()
}

func (s *statsNode) fill(out *fuse.Attr) {
	out.Ino = statsIno
	out.Mode = syscall.S_IFREG | 0o444
	out.Nlink = 1
	out.Size = uint64(len(s.content()))
	now := time.Now()
	out.SetTimes(&now, &now, &now)
}

func (s *statsNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	s.fill(&out.Attr)
	out.SetTimeout(0) // the counters change all the time
	return 0
}

type statsHandle struct{ data []byte }

func (s *statsNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return nil, 0, syscall.EACCES
	}
	// Direct I/O: the size in the attributes is only a snapshot.
	return &statsHandle{data: s.content()}, fuse.FOPEN_DIRECT_IO, 0
}

func (s *statsNode) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h := f.(*statsHandle)
	if off >= int64(len(h.data)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(h.data[off:min(int64(len(h.data)), off+int64(len(dest)))]), 0
}
