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

// Opcodes counted, in the order .stats lists them.
const (
	reqLookup = iota
	reqForget // per inode forgotten (a BATCH_FORGET counts each)
	reqGetattr
	reqSetattr
	reqMknod
	reqMkdir
	reqUnlink
	reqRmdir
	reqRename
	reqLink
	reqSymlink
	reqReadlink
	reqAccess
	reqGetxattr
	reqListxattr
	reqSetxattr
	reqRemovexattr
	reqCreate
	reqTmpfile
	reqOpen
	reqRead
	reqLseek
	reqGetlk
	reqSetlk
	reqSetlkw
	reqRelease
	reqWrite
	reqCopyFileRange
	reqIoctl
	reqFlush
	reqFsync
	reqFallocate
	reqOpendir
	reqReaddir
	reqReaddirplus
	reqReleasedir
	reqFsyncdir
	reqStatfs
	reqStatx
	reqCount
)

var reqNames = [reqCount]string{
	reqLookup: "LOOKUP", reqForget: "FORGET", reqGetattr: "GETATTR", reqSetattr: "SETATTR",
	reqMknod: "MKNOD", reqMkdir: "MKDIR", reqUnlink: "UNLINK", reqRmdir: "RMDIR", reqRename: "RENAME",
	reqLink: "LINK", reqSymlink: "SYMLINK", reqReadlink: "READLINK", reqAccess: "ACCESS",
	reqGetxattr: "GETXATTR", reqListxattr: "LISTXATTR", reqSetxattr: "SETXATTR", reqRemovexattr: "REMOVEXATTR",
	reqCreate: "CREATE", reqTmpfile: "TMPFILE", reqOpen: "OPEN", reqRead: "READ", reqLseek: "LSEEK",
	reqGetlk: "GETLK", reqSetlk: "SETLK", reqSetlkw: "SETLKW", reqRelease: "RELEASE", reqWrite: "WRITE",
	reqCopyFileRange: "COPY_FILE_RANGE", reqIoctl: "IOCTL", reqFlush: "FLUSH", reqFsync: "FSYNC",
	reqFallocate: "FALLOCATE", reqOpendir: "OPENDIR", reqReaddir: "READDIR", reqReaddirplus: "READDIRPLUS",
	reqReleasedir: "RELEASEDIR", reqFsyncdir: "FSYNCDIR", reqStatfs: "STATFS", reqStatx: "STATX",
}

// RequestCounts is a RawFileSystem that counts the requests it passes on.
type RequestCounts struct {
	fuse.RawFileSystem
	n [reqCount]atomic.Uint64
}

// CountRequests wraps fs.
func CountRequests(fs fuse.RawFileSystem) *RequestCounts { return &RequestCounts{RawFileSystem: fs} }

func (c *RequestCounts) add(op int) { c.n[op].Add(1) }

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
	for i := range c.n {
		if v := c.n[i].Load(); v > 0 && err == nil {
			k, err = fmt.Fprintf(w, "fuse_%s %d\n", reqNames[i], v)
			n += int64(k)
		}
	}
	return n, err
}

func (c *RequestCounts) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	c.add(reqLookup)
	return c.RawFileSystem.Lookup(cancel, h, name, out)
}

func (c *RequestCounts) Forget(nodeid, nlookup uint64) {
	c.add(reqForget)
	c.RawFileSystem.Forget(nodeid, nlookup)
}

func (c *RequestCounts) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	c.add(reqGetattr)
	return c.RawFileSystem.GetAttr(cancel, in, out)
}

func (c *RequestCounts) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	c.add(reqSetattr)
	return c.RawFileSystem.SetAttr(cancel, in, out)
}

func (c *RequestCounts) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	c.add(reqMknod)
	return c.RawFileSystem.Mknod(cancel, in, name, out)
}

func (c *RequestCounts) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	c.add(reqMkdir)
	return c.RawFileSystem.Mkdir(cancel, in, name, out)
}

func (c *RequestCounts) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	c.add(reqUnlink)
	return c.RawFileSystem.Unlink(cancel, h, name)
}

func (c *RequestCounts) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	c.add(reqRmdir)
	return c.RawFileSystem.Rmdir(cancel, h, name)
}

func (c *RequestCounts) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	c.add(reqRename)
	return c.RawFileSystem.Rename(cancel, in, oldName, newName)
}

func (c *RequestCounts) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	c.add(reqLink)
	return c.RawFileSystem.Link(cancel, in, name, out)
}

func (c *RequestCounts) Symlink(cancel <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	c.add(reqSymlink)
	return c.RawFileSystem.Symlink(cancel, h, target, name, out)
}

func (c *RequestCounts) Readlink(cancel <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	c.add(reqReadlink)
	return c.RawFileSystem.Readlink(cancel, h)
}

func (c *RequestCounts) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	c.add(reqAccess)
	return c.RawFileSystem.Access(cancel, in)
}

func (c *RequestCounts) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	c.add(reqGetxattr)
	return c.RawFileSystem.GetXAttr(cancel, h, attr, dest)
}

func (c *RequestCounts) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	c.add(reqListxattr)
	return c.RawFileSystem.ListXAttr(cancel, h, dest)
}

func (c *RequestCounts) SetXAttr(cancel <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	c.add(reqSetxattr)
	return c.RawFileSystem.SetXAttr(cancel, in, attr, data)
}

func (c *RequestCounts) RemoveXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string) fuse.Status {
	c.add(reqRemovexattr)
	return c.RawFileSystem.RemoveXAttr(cancel, h, attr)
}

func (c *RequestCounts) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	c.add(reqCreate)
	return c.RawFileSystem.Create(cancel, in, name, out)
}

func (c *RequestCounts) Tmpfile(cancel <-chan struct{}, in *fuse.CreateIn, out *fuse.CreateOut) fuse.Status {
	c.add(reqTmpfile)
	return c.RawFileSystem.Tmpfile(cancel, in, out)
}

func (c *RequestCounts) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	c.add(reqOpen)
	return c.RawFileSystem.Open(cancel, in, out)
}

func (c *RequestCounts) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	c.add(reqRead)
	return c.RawFileSystem.Read(cancel, in, buf)
}

func (c *RequestCounts) Lseek(cancel <-chan struct{}, in *fuse.LseekIn, out *fuse.LseekOut) fuse.Status {
	c.add(reqLseek)
	return c.RawFileSystem.Lseek(cancel, in, out)
}

func (c *RequestCounts) GetLk(cancel <-chan struct{}, in *fuse.LkIn, out *fuse.LkOut) fuse.Status {
	c.add(reqGetlk)
	return c.RawFileSystem.GetLk(cancel, in, out)
}

func (c *RequestCounts) SetLk(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	c.add(reqSetlk)
	return c.RawFileSystem.SetLk(cancel, in)
}

func (c *RequestCounts) SetLkw(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	c.add(reqSetlkw)
	return c.RawFileSystem.SetLkw(cancel, in)
}

func (c *RequestCounts) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	c.add(reqRelease)
	c.RawFileSystem.Release(cancel, in)
}

func (c *RequestCounts) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	c.add(reqWrite)
	return c.RawFileSystem.Write(cancel, in, data)
}

func (c *RequestCounts) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	c.add(reqWrite)
	return c.RawFileSystem.Writev(cancel, in, data)
}

func (c *RequestCounts) CopyFileRange(cancel <-chan struct{}, in *fuse.CopyFileRangeIn) (uint32, fuse.Status) {
	c.add(reqCopyFileRange)
	return c.RawFileSystem.CopyFileRange(cancel, in)
}

func (c *RequestCounts) Ioctl(cancel <-chan struct{}, in *fuse.IoctlIn, inbuf []byte, out *fuse.IoctlOut, outbuf []byte) fuse.Status {
	c.add(reqIoctl)
	return c.RawFileSystem.Ioctl(cancel, in, inbuf, out, outbuf)
}

func (c *RequestCounts) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	c.add(reqFlush)
	return c.RawFileSystem.Flush(cancel, in)
}

func (c *RequestCounts) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	c.add(reqFsync)
	return c.RawFileSystem.Fsync(cancel, in)
}

func (c *RequestCounts) Fallocate(cancel <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	c.add(reqFallocate)
	return c.RawFileSystem.Fallocate(cancel, in)
}

func (c *RequestCounts) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	c.add(reqOpendir)
	return c.RawFileSystem.OpenDir(cancel, in, out)
}

func (c *RequestCounts) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	c.add(reqReaddir)
	return c.RawFileSystem.ReadDir(cancel, in, out)
}

func (c *RequestCounts) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	c.add(reqReaddirplus)
	return c.RawFileSystem.ReadDirPlus(cancel, in, out)
}

func (c *RequestCounts) ReleaseDir(in *fuse.ReleaseIn) {
	c.add(reqReleasedir)
	c.RawFileSystem.ReleaseDir(in)
}

func (c *RequestCounts) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	c.add(reqFsyncdir)
	return c.RawFileSystem.FsyncDir(cancel, in)
}

func (c *RequestCounts) StatFs(cancel <-chan struct{}, in *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	c.add(reqStatfs)
	return c.RawFileSystem.StatFs(cancel, in, out)
}

func (c *RequestCounts) Statx(cancel <-chan struct{}, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	c.add(reqStatx)
	return c.RawFileSystem.Statx(cancel, in, out)
}
