// Package fusefs serves a mounted xlogfs store over FUSE with go-fuse's fs
// package. It holds no state of its own beyond go-fuse's inode tree: every
// operation is a call into package journal, which owns the metadata, the
// data files and the log. In --journal meta, regular files are opened in
// kernel FUSE passthrough when the kernel and the process's privileges
// allow it (passthrough.go): their reads and writes go from the kernel to
// the data files directly, and the journal learns sizes and times from
// the data files. Otherwise, and always in --journal data, reads and
// writes go through our own handles, so the journal sees every byte.
package fusefs

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/xlogfs/xlogfs/fusefs/uring"
	"github.com/xlogfs/xlogfs/journal"
	"github.com/xlogfs/xlogfs/journal/meta"
)

// StatsName is the read-only file in the root that shows the journal's
// counters (journal.Stats, in the format journal.ParseStats reads). It is
// hidden from readdir.
const StatsName = ".stats"

// statsIno is the inode number of .stats: far above any the journal
// allocates (they count up from 2).
const statsIno = ^uint64(0) - 1

// Options configure the mount.
type Options struct {
	AllowOther bool          // let other users in (needs user_allow_other for non-root)
	Timeout    time.Duration // attribute and entry cache timeout; 0: DefaultTimeout
	FsName     string        // shown in /proc/mounts; the store directory
	Debug      bool          // log every FUSE request
	// DirectIO opens every file with FOPEN_DIRECT_IO: reads and writes
	// bypass the kernel's page cache and reach the journal one call each
	// (O_DIRECT opens always do). Passthrough opens bypass the daemon
	// instead, and take no notice of it.
	DirectIO bool
	// ReadOnly mounts read-only ("ro"): the kernel refuses every change
	// with EROFS before asking; the journal, mounted read-only too,
	// refuses any that reaches it.
	ReadOnly bool
	// Passthrough says whether regular files are opened in kernel
	// passthrough (see passthrough.go); the zero value is auto.
	Passthrough PassthroughMode
	// Logf says which passthrough mode the mount ended in; nil: quiet.
	Logf func(format string, a ...any)
	// Transport is how requests reach the daemon (transport.go); the
	// zero value is classic.
	Transport Transport
}

// mount is what every node of one mount shares.
type mount struct {
	// directIO: open every file with FOPEN_DIRECT_IO (Options.DirectIO)
	directIO bool
	kw       killWrites     // which writes must drop privileges
	pt       atomic.Bool    // regular files open in passthrough
	reqs     *RequestCounts // the requests served
	// transport is the one the mount serves with, for .stats
	transport Transport
	rings     *uring.Transport // the rings of a uring mount, for .stats
	// nodes maps a journal inode to the node made for it last (child),
	// which go-fuse keeps while the kernel knows the inode: a lookup
	// reuses it rather than making one go-fuse throws away.
	nodes sync.Map // meta.Ino -> *node
}

// DefaultTimeout is how long the kernel may cache attributes and entries.
// Metadata changes only through this mount, and the kernel invalidates what
// its own operations change, so caching is safe; it saves the GETATTR and
// LOOKUP round trips that dominate small-file workloads.
const DefaultTimeout = time.Second

// Mount serves jfs at mountpoint. It returns once the kernel has answered
// the mount; the caller waits on the server and closes jfs afterwards.
func Mount(jfs *journal.FS, mountpoint string, o Options) (*Server, error) {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	m := &mount{directIO: o.DirectIO}
	root := &node{fsys: jfs, ino: meta.RootIno, m: m}
	timeout := o.Timeout
	opts := &fs.Options{
		MountOptions: fuse.MountOptions{
			AllowOther: o.AllowOther,
			Name:       "xlogfs",
			FsName:     o.FsName,
			Options:    []string{"default_permissions"},
			Debug:      o.Debug,
			MaxWrite:   1 << 20,
			// With HANDLE_KILLPRIV_V2 the kernel leaves clearing
			// set-user/group-ID bits on write, truncate and chown to us
			// instead of asking for security.capability (a GETXATTR
			// round trip) before every write; see privs.go.
			// DIRECT_IO_ALLOW_MMAP keeps shared mmap working on direct-I/O files.
			ExtraCapabilities: fuse.CAP_HANDLE_KILLPRIV_V2 | fuse.CAP_DIRECT_IO_ALLOW_MMAP,
		},
		EntryTimeout:    &timeout,
		AttrTimeout:     &timeout,
		NegativeTimeout: &timeout,
		RootStableAttr:  &fs.StableAttr{Ino: uint64(meta.RootIno), Mode: syscall.S_IFDIR},
		// Modes are reported as they are: without this, go-fuse shows a
		// file created with mode 0 (open(O_CREAT, 0)) as 0644.
		NullPermissions: true,
	}
	if fi, err := os.Stat(mountpoint); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("mount point %s is not a directory", mountpoint)
	}
	// fs.Mount, with the raw filesystem wrapped to list directories
	// without opening them (dirs.go), to see write flags and to count
	// requests.
	if o.ReadOnly {
		opts.MountOptions.Options = append(opts.MountOptions.Options, "ro")
	}
	m.kw.RawFileSystem = newNoOpendir(fs.NewNodeFS(root, opts), jfs.NamespaceGen)
	m.reqs = CountRequests(&m.kw)
	srv := &Server{mountpoint: mountpoint}
	if o.Transport != TransportClassic {
		var err error
		if err = uringPossible(o.Logf); err == nil {
			srv.Server, srv.rings, err = mountURing(m.reqs, mountpoint, &opts.MountOptions)
		}
		if err != nil && o.Transport == TransportUring {
			return nil, fmt.Errorf("--transport uring: %w", err)
		}
		if err != nil {
			o.Logf("transport classic: %v", err)
		}
	}
	if srv.Server == nil {
		server, err := fuse.NewServer(m.reqs, mountpoint, &opts.MountOptions)
		if err != nil {
			return nil, err
		}
		srv.Server = server
	}
	m.transport, m.rings = srv.Transport(), srv.rings
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		return nil, err
	}
	if err := m.decidePassthrough(srv.Server, jfs, o.Passthrough, o.Logf); err != nil {
		srv.Unmount()
		return nil, err
	}
	return srv, nil
}

// node is every inode of the filesystem: directory, file, symlink or
// special node; what applies depends on the inode's type in the journal.
type node struct {
	fs.Inode
	fsys *journal.FS
	ino  meta.Ino
	held atomic.Bool // this go-fuse inode holds the journal inode (see child)
	m    *mount
}

var (
	_ fs.NodeLookuper       = (*node)(nil)
	_ fs.NodeGetattrer      = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeMkdirer        = (*node)(nil)
	_ fs.NodeMknoder        = (*node)(nil)
	_ fs.NodeSymlinker      = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRmdirer        = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeReadlinker     = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeReaddirer      = (*node)(nil)
	_ fs.NodeOpendirHandler = (*node)(nil)
	_ fs.NodeFsyncer        = (*node)(nil)
	_ fs.NodeStatfser       = (*node)(nil)
	_ fs.NodeGetxattrer     = (*node)(nil)
	_ fs.NodeSetxattrer     = (*node)(nil)
	_ fs.NodeListxattrer    = (*node)(nil)
	_ fs.NodeRemovexattrer  = (*node)(nil)
	_ fs.NodeAllocater      = (*node)(nil)
	_ fs.NodeOnForgetter    = (*node)(nil)
	_ fs.NodeTmpfiler       = (*node)(nil)
)

// errno turns a journal error into the errno FUSE returns: the journal's
// one mapping (journal.Errno).
func errno(err error) syscall.Errno { return journal.Errno(err) }

func fillAttr(a journal.Attr, out *fuse.Attr) {
	out.Ino = uint64(a.Ino)
	out.Size = uint64(a.Size)
	out.Blocks = (uint64(a.Size) + 511) / 512
	out.Blksize = 4096
	out.Mode = a.Mode
	out.Nlink = a.Nlink
	out.Uid, out.Gid = a.UID, a.GID
	out.Rdev = a.Rdev
	at, mt, ct := time.Unix(0, a.Atime), time.Unix(0, a.Mtime), time.Unix(0, a.Ctime)
	out.SetTimes(&at, &mt, &ct)
}

// child returns the go-fuse inode for a journal inode. The node holds its
// journal inode until the kernel forgets it (OnForget): an unlinked file
// or removed directory the kernel still reaches (an open descriptor, a
// cwd, a cached inode) keeps answering with nlink 0 instead of vanishing.
// The kernel serializes lookups and removals of a name on its directory's
// lock, so nothing frees the inode between the journal's answer and the
// hold.
//
// go-fuse keys the inodes the kernel knows by StableAttr.Ino (so hard
// links share one), and when a lookup returns a new node for an inode it
// knows already, it keeps its own and throws the new one away, with no
// OnForget: a hold taken for that one would never be dropped, and the
// inode never freed while mounted. So child makes one node per journal
// inode and returns it again (mount.nodes) while go-fuse may know it;
// NewInode returns a node it has seen as it is, reviving it if it was
// forgotten, and the node holds again then.
func (n *node) child(ctx context.Context, a journal.Attr, out *fuse.EntryOut) *fs.Inode {
	fillAttr(a, &out.Attr)
	cn := &node{fsys: n.fsys, ino: a.Ino, m: n.m}
	if v, loaded := n.m.nodes.LoadOrStore(a.Ino, cn); loaded {
		cn = v.(*node)
	}
	ch := n.NewInode(ctx, cn, fs.StableAttr{Mode: a.Mode & syscall.S_IFMT, Ino: uint64(a.Ino)})
	if cn, ok := ch.Operations().(*node); ok && !cn.held.Swap(true) {
		n.m.nodes.Store(a.Ino, cn)
		n.fsys.Hold(a.Ino)
	}
	return ch
}

// OnForget: the kernel no longer knows the inode; drop the hold, and the
// node unless a lookup took it up again meanwhile. go-fuse may call it
// again for a node revived in between (then child held it again), never
// twice for one hold.
func (n *node) OnForget() {
	if n.held.Swap(false) {
		n.m.nodes.CompareAndDelete(n.ino, n)
		n.fsys.Unhold(n.ino)
	}
}

// Tmpfile serves open(O_TMPFILE): a regular file with no name, freed at
// its last close unless linkat gives it one.
func (n *node) Tmpfile(ctx context.Context, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	uid, gid, mode := n.owner(ctx, mode&^syscall.S_IFMT|syscall.S_IFREG)
	a, err := n.fsys.CreateTmpfile(n.ino, mode, uid, gid)
	if err != nil {
		return nil, nil, 0, errno(err)
	}
	ch := n.child(ctx, a, out)
	cn := ch.Operations().(*node)
	if n.m.pt.Load() {
		// CreateTmpfile counted an open; this one takes its place
		// (counted first, so the file is never unused).
		h, fflags, e := cn.openInPassthroughMount(flags)
		n.fsys.Release(a.Ino)
		if e != 0 {
			return nil, nil, 0, e
		}
		return ch, h, fflags, 0
	}
	// CreateTmpfile counted this open already.
	return ch, &handle{n: cn, direct: flags&syscall.O_DIRECT != 0}, n.openFlags(flags), 0
}

func (n *node) isRoot() bool { return n.ino == meta.RootIno }

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if n.isRoot() && name == StatsName {
		return n.statsInode(ctx, out), 0
	}
	a, err := n.fsys.Lookup(n.ino, name)
	if err != nil {
		return nil, errno(err)
	}
	return n.child(ctx, a, out), 0
}

func (n *node) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	a, err := n.fsys.GetAttr(n.ino)
	if err != nil {
		return errno(err)
	}
	fillAttr(a, &out.Attr)
	return 0
}

func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	var s journal.SetAttrIn
	if m, ok := in.GetMode(); ok {
		s.Mask |= meta.SetMode
		s.Mode = m
	}
	if uid, ok := in.GetUID(); ok {
		s.Mask |= meta.SetUID
		s.UID = uid
	}
	if gid, ok := in.GetGID(); ok {
		s.Mask |= meta.SetGID
		s.GID = gid
	}
	if sz, ok := in.GetSize(); ok {
		s.Mask |= meta.SetSize
		s.Size = int64(sz)
	}
	if in.Valid&^(fuse.FATTR_FH|fuse.FATTR_LOCKOWNER) == 0 && n.Mode()&syscall.S_IFMT == syscall.S_IFREG {
		// No attribute at all: the kernel's file_remove_privs for a
		// write by a caller without CAP_FSETID under
		// HANDLE_KILLPRIV_V2, which a passthrough write makes (see
		// passthrough.go).
		if err := n.fsys.DropPrivs(n.ino, journal.KillPriv{Kill: true, InGroup: callerInGroup(ctx, false)}); err != nil {
			return errno(err)
		}
		return n.Getattr(ctx, f, out)
	}
	s.Kill = n.killForSetattr(ctx, in, isChown(in, n.Mode()))
	if t, ok := in.GetATime(); ok {
		s.Mask |= meta.SetAtime
		s.Atime = journal.TimeNanos(t)
	}
	if t, ok := in.GetMTime(); ok {
		s.Mask |= meta.SetMtime
		s.Mtime = journal.TimeNanos(t)
	}
	a, err := n.fsys.SetAttr(n.ino, s)
	if err != nil {
		return errno(err)
	}
	fillAttr(a, &out.Attr)
	return 0
}

// owner is who creates an inode in directory n: the caller, with the
// directory's group when it is set-group-ID (and then a new directory
// inherits the bit), as on every Unix filesystem.
func (n *node) owner(ctx context.Context, mode uint32) (uint32, uint32, uint32) {
	var uid, gid uint32
	if c, ok := fuse.FromContext(ctx); ok {
		uid, gid = c.Uid, c.Gid
	}
	if d, err := n.fsys.GetAttr(n.ino); err == nil && d.Mode&syscall.S_ISGID != 0 {
		gid = d.GID
		if mode&syscall.S_IFMT == syscall.S_IFDIR {
			mode |= syscall.S_ISGID
		}
	}
	return uid, gid, mode
}

// reserved refuses names the mount itself uses.
func (n *node) reserved(name string) bool { return n.isRoot() && name == StatsName }

func (n *node) create(ctx context.Context, name string, mode, rdev uint32, target string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if n.reserved(name) {
		return nil, syscall.EEXIST
	}
	uid, gid, mode := n.owner(ctx, mode)
	a, err := n.fsys.Create(n.ino, name, mode, uid, gid, rdev, target)
	if err != nil {
		return nil, errno(err)
	}
	return n.child(ctx, a, out), 0
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	ch, e := n.create(ctx, name, mode&^syscall.S_IFMT|syscall.S_IFREG, 0, "", out)
	if e != 0 {
		return nil, nil, 0, e
	}
	cn := ch.Operations().(*node)
	h, fflags, e := cn.open(flags)
	if e != 0 {
		return nil, nil, 0, e
	}
	return ch, h, fflags, 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.create(ctx, name, mode&^syscall.S_IFMT|syscall.S_IFDIR, 0, "", out)
}

func (n *node) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.create(ctx, name, mode, dev, "", out)
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if target == "" {
		return nil, syscall.ENOENT
	}
	return n.create(ctx, name, syscall.S_IFLNK|0o777, 0, target, out)
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	t, ok := target.(*node)
	if !ok {
		return nil, syscall.EPERM // .stats
	}
	if n.reserved(name) {
		return nil, syscall.EEXIST
	}
	a, err := n.fsys.Link(t.ino, n.ino, name)
	if err != nil {
		return nil, errno(err)
	}
	return n.child(ctx, a, out), 0
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	if n.reserved(name) {
		return syscall.EPERM
	}
	return errno(n.fsys.Unlink(n.ino, name))
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	if n.reserved(name) {
		return syscall.ENOTDIR
	}
	return errno(n.fsys.Rmdir(n.ino, name))
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	if n.reserved(name) || np.reserved(newName) {
		return syscall.EPERM
	}
	return errno(n.fsys.Rename(n.ino, name, np.ino, newName, flags))
}

func (n *node) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	t, err := n.fsys.Readlink(n.ino)
	if err != nil {
		return nil, errno(err)
	}
	return []byte(t), 0
}

func (n *node) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	ents, err := n.fsys.ReadDir(n.ino)
	if err != nil {
		return nil, errno(err)
	}
	list := make([]fuse.DirEntry, 0, len(ents))
	for _, e := range ents {
		list = append(list, fuse.DirEntry{Name: e.Name, Ino: uint64(e.Ino), Mode: e.Mode})
	}
	return fs.NewListDirStream(list), 0
}

// OpendirHandle opens a directory with its listing taken now, and lets
// the kernel keep the listings it reads (FOPEN_CACHE_DIR, FOPEN_KEEP_CACHE):
// a directory changes only through this mount, and the kernel drops its
// copy when one of its own operations changes the directory or the
// directory's mtime moves, so a listing of an unchanged directory (dbench's
// FIND_FIRST, every ls) costs no READDIR round trips at all.
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	ds, e := n.Readdir(ctx)
	if e != 0 {
		return nil, 0, e
	}
	return ds, fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE, 0
}

// Fsync serves fsync and fdatasync of files and directories. It never
// returns ENOSYS: the kernel would stop sending fsyncs and report success.
func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	return errno(n.fsys.Fsync(n.ino, flags&1 != 0)) // FUSE_FSYNC_FDATASYNC
}

func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	s, err := n.fsys.Statfs()
	if err != nil {
		return errno(err)
	}
	out.Blocks, out.Bfree, out.Bavail = s.Blocks, s.Bfree, s.Bavail
	out.Files, out.Ffree = s.Files, s.Ffree
	out.Bsize, out.Frsize, out.NameLen = s.Bsize, s.Bsize, s.NameLen
	return 0
}

func (n *node) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	v, err := n.fsys.GetXattr(n.ino, attr)
	if err != nil {
		return 0, errno(err)
	}
	if len(dest) < len(v) {
		return uint32(len(v)), syscall.ERANGE
	}
	return uint32(copy(dest, v)), 0
}

// Setxattr: the journal refuses names outside the Linux namespaces, and
// system.* with them: the POSIX ACLs, which the kernel hands us as plain
// xattrs without FUSE_POSIX_ACL and would never apply to the mode (see
// journal's xattr.go).
func (n *node) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	return errno(n.fsys.SetXattr(n.ino, attr, data, flags))
}

func (n *node) Removexattr(ctx context.Context, attr string) syscall.Errno {
	return errno(n.fsys.RemoveXattr(n.ino, attr))
}

func (n *node) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	names, err := n.fsys.ListXattr(n.ino)
	if err != nil {
		return 0, errno(err)
	}
	var b []byte
	for _, s := range names {
		b = append(append(b, s...), 0)
	}
	// The kernel caps a size query's answer at XATTR_LIST_MAX, so a list
	// longer than that (possible only in a store written before setxattr
	// kept to it) gets E2BIG, for the query too, not a size that fails.
	if len(b) > journal.XattrListMax {
		return 0, syscall.E2BIG
	}
	if len(dest) < len(b) {
		return uint32(len(b)), syscall.ERANGE
	}
	return uint32(copy(dest, b)), 0
}

func (n *node) Allocate(ctx context.Context, f fs.FileHandle, off uint64, size uint64, mode uint32) syscall.Errno {
	if err := n.fsys.DropPrivs(n.ino, killForFallocate(ctx)); err != nil {
		return errno(err)
	}
	return errno(n.fsys.Fallocate(n.ino, mode, int64(off), int64(size)))
}

// Open opens a regular file (other types: the kernel handles FIFOs and
// devices itself). O_DIRECT opens bypass the page cache (FOPEN_DIRECT_IO),
// so every read and write reaches the journal.
func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return n.open(flags)
}

func (n *node) open(flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if n.m.pt.Load() {
		return n.openInPassthroughMount(flags)
	}
	if err := n.fsys.Open(n.ino); err != nil {
		return nil, 0, errno(err)
	}
	return &handle{n: n, direct: flags&syscall.O_DIRECT != 0}, n.openFlags(flags), 0
}

// openFlags are the FOPEN flags of an open with these open(2) flags.
// Cached opens keep the page cache (FOPEN_KEEP_CACHE): a file changes only
// through this mount, whose writes the kernel's cache already reflects, so
// dropping the cache at every open (FUSE's default) would only make each
// open re-read the file through the daemon. No open wants a FLUSH at
// close(2) (FOPEN_NOFLUSH): writes reach the journal (or, in passthrough,
// the data file) before write(2) returns, so a close has nothing to hand
// over, and the kernel keeps POSIX locks itself. That spares a round trip
// per close. (A passthrough open's flags gain FOPEN_PASSTHROUGH and lose
// FOPEN_KEEP_CACHE in go-fuse.)
func (n *node) openFlags(flags uint32) uint32 {
	if n.m.directIO || flags&syscall.O_DIRECT != 0 {
		return fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH
	}
	return fuse.FOPEN_KEEP_CACHE | fuse.FOPEN_NOFLUSH
}
