package fusefs

import (
	"fmt"
	"io"
	"sync/atomic"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Counting FUSE requests. A request that reaches the daemon costs a round
// trip (tens of microseconds when the caller and the daemon run on
// different CPUs), more than anything the journal does for most of them,
// so what a workload costs is largely how many it sends. RequestCounts
// wraps a RawFileSystem and counts every request by opcode; .stats shows
// the counts (fuse_requests and fuse_<OPCODE>), and the loopback baseline
// counts its own the same way.

// The FUSE opcodes the daemon serves (include/uapi/linux/fuse.h, enum
// fuse_opcode): xlogfs's one list of them, for counting and for the
// io_uring transport's choice of what to serve off its ring's thread.
const (
	opLookup        = 1
	opForget        = 2 // per inode forgotten (a BATCH_FORGET counts each)
	opGetattr       = 3
	opSetattr       = 4
	opReadlink      = 5
	opSymlink       = 6
	opMknod         = 8
	opMkdir         = 9
	opUnlink        = 10
	opRmdir         = 11
	opRename        = 12 // RENAME2 too
	opLink          = 13
	opOpen          = 14
	opRead          = 15
	opWrite         = 16
	opStatfs        = 17
	opRelease       = 18
	opFsync         = 20
	opSetxattr      = 21
	opGetxattr      = 22
	opListxattr     = 23
	opRemovexattr   = 24
	opFlush         = 25
	opOpendir       = 27
	opReaddir       = 28
	opReleasedir    = 29
	opFsyncdir      = 30
	opGetlk         = 31
	opSetlk         = 32
	opSetlkw        = 33
	opAccess        = 34
	opCreate        = 35
	opIoctl         = 39
	opFallocate     = 43
	opReaddirplus   = 44
	opLseek         = 46
	opCopyFileRange = 47
	opTmpfile       = 51
	opStatx         = 52
	opCount         = 53
)

// fuseOps names the opcodes counted, in the order .stats lists them.
var fuseOps = [...]struct {
	op   uint32
	name string
}{
	{opLookup, "LOOKUP"}, {opForget, "FORGET"}, {opGetattr, "GETATTR"}, {opSetattr, "SETATTR"},
	{opMknod, "MKNOD"}, {opMkdir, "MKDIR"}, {opUnlink, "UNLINK"}, {opRmdir, "RMDIR"}, {opRename, "RENAME"},
	{opLink, "LINK"}, {opSymlink, "SYMLINK"}, {opReadlink, "READLINK"}, {opAccess, "ACCESS"},
	{opGetxattr, "GETXATTR"}, {opListxattr, "LISTXATTR"}, {opSetxattr, "SETXATTR"}, {opRemovexattr, "REMOVEXATTR"},
	{opCreate, "CREATE"}, {opTmpfile, "TMPFILE"}, {opOpen, "OPEN"}, {opRead, "READ"}, {opLseek, "LSEEK"},
	{opGetlk, "GETLK"}, {opSetlk, "SETLK"}, {opSetlkw, "SETLKW"}, {opRelease, "RELEASE"}, {opWrite, "WRITE"},
	{opCopyFileRange, "COPY_FILE_RANGE"}, {opIoctl, "IOCTL"}, {opFlush, "FLUSH"}, {opFsync, "FSYNC"},
	{opFallocate, "FALLOCATE"}, {opOpendir, "OPENDIR"}, {opReaddir, "READDIR"}, {opReaddirplus, "READDIRPLUS"},
	{opReleasedir, "RELEASEDIR"}, {opFsyncdir, "FSYNCDIR"}, {opStatfs, "STATFS"}, {opStatx, "STATX"},
}

// mayWait says whether a request of opcode op may wait for a log force,
// the disk or another process (a blocking lock): the io_uring transport
// serves those on goroutines of their own, off the ring's thread.
func mayWait(op uint32) bool {
	switch op {
	case opFsync, opFsyncdir, opFlush, opFallocate, opCopyFileRange, opSetlkw:
		return true
	}
	return false
}

// RequestCounts is a RawFileSystem that counts the requests it passes on.
type RequestCounts struct {
	fuse.RawFileSystem
	n [opCount]atomic.Uint64 // by opcode
}

// CountRequests wraps fs.
func CountRequests(fs fuse.RawFileSystem) *RequestCounts { return &RequestCounts{RawFileSystem: fs} }

func (c *RequestCounts) add(op uint32) { c.n[op].Add(1) }

// Total is the number of requests so far, forgotten inodes included.
func (c *RequestCounts) Total() uint64 {
	var t uint64
	for i := range c.n {
		t += c.n[i].Load()
	}
	return t
}

// WriteTo writes "fuse_requests N" and a "fuse_<OPCODE> N" line for every
// opcode seen, as .stats shows them.
func (c *RequestCounts) WriteTo(w io.Writer) (int64, error) {
	var n int64
	k, err := fmt.Fprintf(w, "fuse_requests %d\n", c.Total())
	n += int64(k)
	for _, o := range fuseOps {
		if v := c.n[o.op].Load(); v > 0 && err == nil {
			k, err = fmt.Fprintf(w, "fuse_%s %d\n", o.name, v)
			n += int64(k)
		}
	}
	return n, err
}

func (c *RequestCounts) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	c.add(opLookup)
	return c.RawFileSystem.Lookup(cancel, h, name, out)
}

func (c *RequestCounts) Forget(nodeid, nlookup uint64) {
	c.add(opForget)
	c.RawFileSystem.Forget(nodeid, nlookup)
}

func (c *RequestCounts) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	c.add(opGetattr)
	return c.RawFileSystem.GetAttr(cancel, in, out)
}

func (c *RequestCounts) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	c.add(opSetattr)
	return c.RawFileSystem.SetAttr(cancel, in, out)
}

func (c *RequestCounts) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	c.add(opMknod)
	return c.RawFileSystem.Mknod(cancel, in, name, out)
}

func (c *RequestCounts) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	c.add(opMkdir)
	return c.RawFileSystem.Mkdir(cancel, in, name, out)
}

func (c *RequestCounts) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	c.add(opUnlink)
	return c.RawFileSystem.Unlink(cancel, h, name)
}

func (c *RequestCounts) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	c.add(opRmdir)
	return c.RawFileSystem.Rmdir(cancel, h, name)
}

func (c *RequestCounts) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	c.add(opRename)
	return c.RawFileSystem.Rename(cancel, in, oldName, newName)
}

func (c *RequestCounts) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	c.add(opLink)
	return c.RawFileSystem.Link(cancel, in, name, out)
}

func (c *RequestCounts) Symlink(cancel <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	c.add(opSymlink)
	return c.RawFileSystem.Symlink(cancel, h, target, name, out)
}

func (c *RequestCounts) Readlink(cancel <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	c.add(opReadlink)
	return c.RawFileSystem.Readlink(cancel, h)
}

func (c *RequestCounts) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	c.add(opAccess)
	return c.RawFileSystem.Access(cancel, in)
}

func (c *RequestCounts) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	c.add(opGetxattr)
	return c.RawFileSystem.GetXAttr(cancel, h, attr, dest)
}

func (c *RequestCounts) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	c.add(opListxattr)
	return c.RawFileSystem.ListXAttr(cancel, h, dest)
}

func (c *RequestCounts) SetXAttr(cancel <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	c.add(opSetxattr)
	return c.RawFileSystem.SetXAttr(cancel, in, attr, data)
}

func (c *RequestCounts) RemoveXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string) fuse.Status {
	c.add(opRemovexattr)
	return c.RawFileSystem.RemoveXAttr(cancel, h, attr)
}

func (c *RequestCounts) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	c.add(opCreate)
	return c.RawFileSystem.Create(cancel, in, name, out)
}

func (c *RequestCounts) Tmpfile(cancel <-chan struct{}, in *fuse.CreateIn, out *fuse.CreateOut) fuse.Status {
	c.add(opTmpfile)
	return c.RawFileSystem.Tmpfile(cancel, in, out)
}

func (c *RequestCounts) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	c.add(opOpen)
	return c.RawFileSystem.Open(cancel, in, out)
}

func (c *RequestCounts) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	c.add(opRead)
	return c.RawFileSystem.Read(cancel, in, buf)
}

func (c *RequestCounts) Lseek(cancel <-chan struct{}, in *fuse.LseekIn, out *fuse.LseekOut) fuse.Status {
	c.add(opLseek)
	return c.RawFileSystem.Lseek(cancel, in, out)
}

func (c *RequestCounts) GetLk(cancel <-chan struct{}, in *fuse.LkIn, out *fuse.LkOut) fuse.Status {
	c.add(opGetlk)
	return c.RawFileSystem.GetLk(cancel, in, out)
}

func (c *RequestCounts) SetLk(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	c.add(opSetlk)
	return c.RawFileSystem.SetLk(cancel, in)
}

func (c *RequestCounts) SetLkw(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	c.add(opSetlkw)
	return c.RawFileSystem.SetLkw(cancel, in)
}

func (c *RequestCounts) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	c.add(opRelease)
	c.RawFileSystem.Release(cancel, in)
}

func (c *RequestCounts) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	c.add(opWrite)
	return c.RawFileSystem.Write(cancel, in, data)
}

// Writev counts a WRITE unless it answers ENOSYS: go-fuse then calls
// Write with the same request, which counts it.
func (c *RequestCounts) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	n, st := c.RawFileSystem.Writev(cancel, in, data)
	if st != fuse.ENOSYS {
		c.add(opWrite)
	}
	return n, st
}

func (c *RequestCounts) CopyFileRange(cancel <-chan struct{}, in *fuse.CopyFileRangeIn) (uint32, fuse.Status) {
	c.add(opCopyFileRange)
	return c.RawFileSystem.CopyFileRange(cancel, in)
}

func (c *RequestCounts) Ioctl(cancel <-chan struct{}, in *fuse.IoctlIn, inbuf []byte, out *fuse.IoctlOut, outbuf []byte) fuse.Status {
	c.add(opIoctl)
	return c.RawFileSystem.Ioctl(cancel, in, inbuf, out, outbuf)
}

func (c *RequestCounts) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	c.add(opFlush)
	return c.RawFileSystem.Flush(cancel, in)
}

func (c *RequestCounts) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	c.add(opFsync)
	return c.RawFileSystem.Fsync(cancel, in)
}

func (c *RequestCounts) Fallocate(cancel <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	c.add(opFallocate)
	return c.RawFileSystem.Fallocate(cancel, in)
}

func (c *RequestCounts) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	c.add(opOpendir)
	return c.RawFileSystem.OpenDir(cancel, in, out)
}

func (c *RequestCounts) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	c.add(opReaddir)
	return c.RawFileSystem.ReadDir(cancel, in, out)
}

func (c *RequestCounts) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	c.add(opReaddirplus)
	return c.RawFileSystem.ReadDirPlus(cancel, in, out)
}

func (c *RequestCounts) ReleaseDir(in *fuse.ReleaseIn) {
	c.add(opReleasedir)
	c.RawFileSystem.ReleaseDir(in)
}

func (c *RequestCounts) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	c.add(opFsyncdir)
	return c.RawFileSystem.FsyncDir(cancel, in)
}

func (c *RequestCounts) StatFs(cancel <-chan struct{}, in *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	c.add(opStatfs)
	return c.RawFileSystem.StatFs(cancel, in, out)
}

func (c *RequestCounts) Statx(cancel <-chan struct{}, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	c.add(opStatx)
	return c.RawFileSystem.Statx(cancel, in, out)
}
