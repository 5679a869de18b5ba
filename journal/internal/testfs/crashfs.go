package testfs

import (
	"io"
	iofs "io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/xlogfs/xlogfs/journal/internal/span"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
)

// CrashFS is an in-memory StoreFS that models what a host filesystem keeps
// through a power failure, in the spirit of LazyFS (a FUSE filesystem that
// keeps unsynced writes in its own cache and drops them on a simulated
// crash, which Jepsen uses against etcd and PostgreSQL). Crash returns the
// image a power cut at that moment could leave; the live filesystem goes on
// untouched, so one run yields many crash states.
//
// The durability model, call by call:
//
//   - Data. WriteAt, Truncate and Allocate change the file at once for every
//     reader (a page cache) and are durable only after the file's Sync or
//     Datasync. At a crash, each change since is lost, kept, or (a write)
//     torn: each 512-byte sector of the file it covers independently old or
//     new — a sector write is atomic, a larger one is not. Changes are
//     applied in issue order, so where two kept writes overlap the later
//     wins. A hole punch or zero range is a write of zeros; a truncate that
//     shrinks zeroes what it cut when it is kept. O_DIRECT writes are no
//     different: a disk's write cache loses them too.
//   - Size. Likewise volatile: after a crash a file has any one of the sizes
//     it had since its last sync, holding its durable bytes and the kept
//     changes below that size and zeros above them (the zero-filled files
//     delayed allocation leaves).
//   - Sync (fsync) makes the file's data and size durable. Datasync
//     (fdatasync) does the same on Linux for everything this model keeps:
//     fdatasync writes the size when it changed, since reading the data back
//     needs it (fdatasync(2)), and skips only timestamps, which no crash
//     image keeps (fstat shows them while the filesystem lives). Neither
//     makes the file's name durable.
//   - Write-back without a flush. Writeback (sync_file_range) writes the
//     file's dirty pages to the device and waits, but the device may still
//     hold them in its volatile cache, and the file's metadata is not
//     written: so it helps only an overwrite of blocks that are allocated
//     and written on the device already, which needs no metadata to be read
//     back. The model keeps, per file, the byte ranges durably written (data
//     written and then synced; a hole punch, a zero range or a shrink takes
//     ranges away, a preallocation adds none: its extents are unwritten).
//     Writeback moves the file's changes into the device's cache only when
//     every one of them is such an overwrite, inside the durable size, and
//     the size has not changed; otherwise it moves nothing (and the changes
//     stay as volatile as before). The device's cache is flushed by every
//     Sync, Datasync and SyncDir of any file or directory, as a filesystem
//     on one device flushes its cache for each of them; until then a crash
//     loses, keeps or tears each change in it like any other. Overwritable
//     reports the written prefix of a file.
//   - Names. Creating a file, Mkdir, Rename (atomic, within one directory)
//     and Remove change the directory at once for every reader and are
//     durable only after SyncDir of that directory. At a crash a directory
//     holds its durable entries plus a prefix of the changes made since (a
//     journaling filesystem commits its metadata in order). No other call
//     makes them durable: not a file's fsync, not another directory's sync —
//     though ext4 and XFS often do, POSIX does not promise it, and relying on
//     it is the bug this model is here to find. The root always exists.
//   - Space. SetCapacity caps the bytes of all linked files (holes count): a
//     call that would pass it fails with ENOSPC and changes nothing. Statfs
//     reports what is left.
//   - Locks are held in memory, per file; a crash image has none, as after
//     a reboot.
//
// Paths are taken from the root; a relative one is read from the root too.
type CrashFS struct {
	mu       sync.Mutex
	root     *cnode
	capacity int64 // 0: unlimited
	used     int64 // bytes of linked files

	// OnChange, if set (by tests), runs after every call that changes
	// something or makes it durable, with mu held, naming the call (as
	// FaultCall.Op does) and the path: a place to take a crash image
	// (crashLocked) in the middle of any sequence of calls.
	OnChange func(c *CrashFS, op, name string)

	cached map[*cnode]bool // files with changes in the device's cache
}

func (c *CrashFS) changed(op, name string) {
	if c.OnChange != nil {
		c.OnChange(c, op, name)
	}
}

// SectorSize is the unit a disk writes atomically.
const SectorSize = 512

type cnode struct {
	dir   bool
	nlink int // names in the live tree

	// Directories.
	entries map[string]*cnode // what every reader sees
	durable map[string]*cnode // as of the last SyncDir
	changes []nameChange      // made since, in order

	// Files.
	data    []byte       // what every reader sees
	disk    []byte       // durable bytes; len is the durable size
	written []span.Span  // durably allocated and written ranges of disk, sorted, apart
	cached  []dataChange // written back into the device's cache, not flushed: before every pending one
	pending []dataChange // made since the last sync (and not written back), in order
	minSize int64        // smallest size since the last sync
	lost    []span.Span  // ranges a failed sync dropped: no later sync writes them, unless written again
	lock    int          // flock: >0 shared holders, -1 exclusive
	mtime   int64        // last change of data or size (ns), as fstat shows it; not kept by a crash
}

// nameChange is one entry change: name now names node (nil: removed);
// from, when set, is removed in the same change (a rename).
type nameChange struct {
	name, from string
	node       *cnode
}

// dataChange is one change to a file's data or size.
type dataChange struct {
	off    int64
	data   []byte // bytes written from off (nil: a size change only)
	zeroTo int64  // a shrinking truncate to off: the bytes cut, to here
	size   int64  // the file's size after the change
	unmap  bool   // the data is zeros of a hole punch or zero range: the range is no longer written
}

// NewCrashFS returns an empty filesystem holding only its root directory.
func NewCrashFS() *CrashFS {
	return &CrashFS{root: newDirNode()}
}

func newDirNode() *cnode {
	return &cnode{dir: true, nlink: 1, entries: map[string]*cnode{}, durable: map[string]*cnode{}}
}

// SetCapacity caps the bytes the files may hold (0: no cap).
func (c *CrashFS) SetCapacity(n int64) {
	c.mu.Lock()
	c.capacity = n
	c.mu.Unlock()
}

func splitPath(name string) []string {
	name = filepath.Clean("/" + name)
	if name == "/" {
		return nil
	}
	return strings.Split(name[1:], "/")
}

func pathErr(op, name string, err syscall.Errno) error {
	return &os.PathError{Op: op, Path: name, Err: err}
}

// WithLock runs f with c's lock held, as OnChange runs: f may call the
// methods that need it held (CrashLocked, FileLocked), and no call of the
// filesystem runs meanwhile.
func (c *CrashFS) WithLock(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
}

// FileLocked returns the bytes of the file name as every reader sees them,
// and false if there is no such file. The caller holds c's lock (OnChange,
// WithLock); the bytes are c's own, to copy before the lock is released.
func (c *CrashFS) FileLocked(name string) ([]byte, bool) {
	_, _, n, err := c.lookup("read", name)
	if err != nil || n == nil || n.dir {
		return nil, false
	}
	return n.data, true
}

// SetHeadroom limits the filesystem to what its files use now plus n
// bytes: a write beyond that fails with ENOSPC (see SetCapacity).
func (c *CrashFS) SetHeadroom(n int64) {
	c.mu.Lock()
	c.capacity = c.used + n
	c.mu.Unlock()
}

// lookup finds name's parent directory and the node (nil if missing).
func (c *CrashFS) lookup(op, name string) (parent *cnode, base string, n *cnode, err error) {
	parts := splitPath(name)
	if len(parts) == 0 {
		return nil, "", c.root, nil
	}
	d := c.root
	for _, p := range parts[:len(parts)-1] {
		next := d.entries[p]
		if next == nil {
			return nil, "", nil, pathErr(op, name, syscall.ENOENT)
		}
		if !next.dir {
			return nil, "", nil, pathErr(op, name, syscall.ENOTDIR)
		}
		d = next
	}
	base = parts[len(parts)-1]
	return d, base, d.entries[base], nil
}

// setEntry changes one entry of d and records the change.
func (c *CrashFS) setEntry(d *cnode, ch nameChange) {
	if ch.from != "" {
		delete(d.entries, ch.from)
	}
	if old := d.entries[ch.name]; old != nil && old != ch.node {
		c.unlink(old)
	}
	if ch.node == nil {
		delete(d.entries, ch.name)
	} else {
		if ch.from == "" {
			ch.node.nlink++
			if !ch.node.dir {
				c.used += int64(len(ch.node.data))
			}
		}
		d.entries[ch.name] = ch.node
	}
	d.changes = append(d.changes, ch)
}

func (c *CrashFS) unlink(n *cnode) {
	n.nlink--
	if n.nlink == 0 && !n.dir {
		c.used -= int64(len(n.data))
	}
}

// grow reports whether n may grow to size bytes within the capacity.
func (c *CrashFS) grow(n *cnode, size int64) bool {
	extra := size - int64(len(n.data))
	return c.capacity == 0 || extra <= 0 || n.nlink == 0 || c.used+extra <= c.capacity
}

// resize sets n's size, zeroing what it adds.
func (c *CrashFS) resize(n *cnode, size int64) {
	if n.nlink > 0 {
		c.used += size - int64(len(n.data))
	}
	n.data = Resized(n.data, size)
	n.minSize = min(n.minSize, size)
}

// Resized returns b at length n: cut, or extended with zeros.
func Resized(b []byte, n int64) []byte {
	if n <= int64(len(b)) {
		return b[:n]
	}
	if n <= int64(cap(b)) {
		old := len(b)
		b = b[:n]
		clear(b[old:])
		return b
	}
	return append(b, make([]byte, n-int64(len(b)))...)
}

func (c *CrashFS) OpenFile(name string, flag int, perm os.FileMode) (store.StoreFile, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, base, n, err := c.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, pathErr("open", name, syscall.EISDIR)
	}
	acc := flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	switch {
	case n != nil && flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		return nil, pathErr("open", name, syscall.EEXIST)
	case n != nil && n.dir:
		return nil, pathErr("open", name, syscall.EISDIR)
	case n == nil && flag&os.O_CREATE == 0:
		return nil, pathErr("open", name, syscall.ENOENT)
	case n == nil && d.nlink == 0:
		return nil, pathErr("open", name, syscall.ENOENT)
	case n == nil:
		n = &cnode{}
		c.setEntry(d, nameChange{name: base, node: n})
	}
	f := &crashFile{fs: c, n: n, name: name, read: acc != os.O_WRONLY, write: acc != os.O_RDONLY}
	if flag&os.O_TRUNC != 0 && f.write && len(n.data) > 0 {
		c.truncate(n, 0)
	}
	c.changed("open", name)
	return f, nil
}

func (c *CrashFS) truncate(n *cnode, size int64) {
	ch := dataChange{off: size, size: size}
	if size < int64(len(n.data)) {
		ch.zeroTo = int64(len(n.data))
	}
	c.resize(n, size)
	n.touch()
	n.pending = append(n.pending, ch)
}

func (c *CrashFS) Mkdir(name string, perm os.FileMode) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, base, n, err := c.lookup("mkdir", name)
	switch {
	case err != nil:
		return err
	case d == nil || n != nil:
		return pathErr("mkdir", name, syscall.EEXIST)
	case d.nlink == 0:
		return pathErr("mkdir", name, syscall.ENOENT)
	}
	nd := newDirNode()
	nd.nlink = 0
	c.setEntry(d, nameChange{name: base, node: nd})
	c.changed("mkdir", name)
	return nil
}

func (c *CrashFS) Remove(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, base, n, err := c.lookup("remove", name)
	switch {
	case err != nil:
		return err
	case d == nil:
		return pathErr("remove", name, syscall.EBUSY)
	case n == nil:
		return pathErr("remove", name, syscall.ENOENT)
	case n.dir && len(n.entries) > 0:
		return pathErr("remove", name, syscall.ENOTEMPTY)
	}
	c.setEntry(d, nameChange{name: base})
	c.changed("remove", name)
	return nil
}

func (c *CrashFS) Rename(oldname, newname string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	od, obase, on, err := c.lookup("rename", oldname)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err.(*os.PathError).Err}
	}
	nd, nbase, nn, err := c.lookup("rename", newname)
	lerr := func(e syscall.Errno) error { return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: e} }
	switch {
	case err != nil:
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err.(*os.PathError).Err}
	case od == nil || nd == nil:
		return lerr(syscall.EBUSY)
	case on == nil:
		return lerr(syscall.ENOENT)
	case od != nd:
		return lerr(syscall.EXDEV) // the store renames within a directory only
	case on == nn:
		return nil
	case nn != nil && nn.dir != on.dir:
		return lerr(map[bool]syscall.Errno{true: syscall.EISDIR, false: syscall.ENOTDIR}[nn.dir])
	case nn != nil && nn.dir && len(nn.entries) > 0:
		return lerr(syscall.ENOTEMPTY)
	}
	c.setEntry(od, nameChange{name: nbase, from: obase, node: on})
	c.changed("rename", oldname)
	return nil
}

func (c *CrashFS) ReadDir(name string) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _, n, err := c.lookup("readdir", name)
	switch {
	case err != nil:
		return nil, err
	case n == nil:
		return nil, pathErr("readdir", name, syscall.ENOENT)
	case !n.dir:
		return nil, pathErr("readdir", name, syscall.ENOTDIR)
	}
	return slices.Sorted(maps.Keys(n.entries)), nil
}

func (c *CrashFS) Stat(name string) (iofs.FileInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, base, n, err := c.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, pathErr("stat", name, syscall.ENOENT)
	}
	return crashInfo{name: base, size: int64(len(n.data)), dir: n.dir}, nil
}

func (c *CrashFS) SyncDir(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _, n, err := c.lookup("fsync", name)
	switch {
	case err != nil:
		return err
	case n == nil:
		return pathErr("fsync", name, syscall.ENOENT)
	case !n.dir:
		return pathErr("fsync", name, syscall.ENOTDIR)
	}
	n.durable = maps.Clone(n.entries)
	n.changes = nil
	c.flushCacheLocked()
	c.changed("syncdir", name)
	return nil
}

// flushCacheLocked makes what the device's cache holds durable, as a flush
// of the device does. The caller holds c.mu.
func (c *CrashFS) flushCacheLocked() {
	for n := range c.cached {
		for _, ch := range n.cached {
			copy(n.disk[ch.off:], ch.data)
		}
		n.cached = nil
	}
	clear(c.cached)
}

func (c *CrashFS) Statfs(name string) (store.Space, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := c.capacity
	if total == 0 {
		total = 1 << 40
	}
	free := uint64(max(0, total-c.used)) / 4096
	return store.Space{Bsize: 4096, Blocks: uint64(total) / 4096, Bfree: free, Bavail: free}, nil
}

func (c *CrashFS) Lock(name string, exclusive bool) (io.Closer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _, n, err := c.lookup("flock", name)
	switch {
	case err != nil:
		return nil, err
	case n == nil:
		return nil, pathErr("flock", name, syscall.ENOENT)
	case n.lock < 0 || exclusive && n.lock > 0:
		return nil, pathErr("flock", name, syscall.EWOULDBLOCK)
	}
	if exclusive {
		n.lock = -1
	} else {
		n.lock++
	}
	return &crashLock{fs: c, n: n}, nil
}

type crashLock struct {
	fs   *CrashFS
	n    *cnode
	once sync.Once
}

func (l *crashLock) Close() error {
	l.once.Do(func() {
		l.fs.mu.Lock()
		if l.n.lock < 0 {
			l.n.lock = 0
		} else {
			l.n.lock--
		}
		l.fs.mu.Unlock()
	})
	return nil
}

type crashInfo struct {
	name string
	size int64
	dir  bool
}

func (i crashInfo) Name() string { return i.name }
func (i crashInfo) Size() int64  { return i.size }
func (i crashInfo) Mode() iofs.FileMode {
	if i.dir {
		return iofs.ModeDir | 0o755
	}
	return 0o644
}
func (i crashInfo) ModTime() time.Time { return time.Time{} }
func (i crashInfo) IsDir() bool        { return i.dir }
func (i crashInfo) Sys() any           { return nil }

// crashFile is an open file of a CrashFS. It keeps working after its name
// is removed, as an open file does.
type crashFile struct {
	fs          *CrashFS
	n           *cnode
	name        string
	read, write bool
	closed      bool
}

func (f *crashFile) check(op string, write bool) error {
	switch {
	case f.closed:
		return pathErr(op, f.name, syscall.EBADF)
	case write && !f.write, !write && !f.read:
		return pathErr(op, f.name, syscall.EBADF)
	}
	return nil
}

func (f *crashFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("read", f.name, syscall.EINVAL)
	}
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *crashFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("write", f.name, syscall.EINVAL)
	}
	if len(p) == 0 {
		return 0, nil
	}
	end := off + int64(len(p))
	if !f.fs.grow(f.n, end) {
		return 0, pathErr("write", f.name, syscall.ENOSPC)
	}
	if end > int64(len(f.n.data)) {
		f.fs.resize(f.n, end)
	}
	copy(f.n.data[off:], p)
	f.n.touch()
	f.n.pending = append(f.n.pending, dataChange{off: off, data: slices.Clone(p), size: int64(len(f.n.data))})
	f.fs.changed("write", f.name)
	return len(p), nil
}

func (f *crashFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return pathErr("truncate", f.name, syscall.EINVAL)
	}
	if !f.fs.grow(f.n, size) {
		return pathErr("truncate", f.name, syscall.ENOSPC)
	}
	f.fs.truncate(f.n, size)
	f.fs.changed("truncate", f.name)
	return nil
}

func (f *crashFile) Allocate(mode uint32, off, n int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("fallocate", true); err != nil {
		return err
	}
	if off < 0 || n <= 0 || mode&^(meta.FallocKeepSize|meta.FallocPunchHole|meta.FallocZeroRange) != 0 ||
		mode&meta.FallocPunchHole != 0 && mode&meta.FallocKeepSize == 0 {
		return pathErr("fallocate", f.name, syscall.EINVAL)
	}
	end := off + n
	size := int64(len(f.n.data))
	if mode&meta.FallocKeepSize == 0 {
		size = max(size, end)
	}
	if !f.fs.grow(f.n, size) {
		return pathErr("fallocate", f.name, syscall.ENOSPC)
	}
	if size > int64(len(f.n.data)) {
		f.fs.resize(f.n, size)
	}
	ch := dataChange{off: off, size: size}
	if mode&(meta.FallocPunchHole|meta.FallocZeroRange) != 0 && off < size {
		clear(f.n.data[off:min(end, size)])
		ch.data = make([]byte, min(end, size)-off)
		ch.unmap = true
	}
	f.n.touch()
	f.n.pending = append(f.n.pending, ch)
	f.fs.changed("fallocate", f.name)
	return nil
}

func (f *crashFile) Sync() error     { return f.sync("fsync") }
func (f *crashFile) Datasync() error { return f.sync("fdatasync") }

// sync makes the file's data and size durable. Every byte where the disk
// and the page cache differ lies in a pending change's range or past the
// smallest size since the last sync, so only those are copied.
func (f *crashFile) sync(op string) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return pathErr(op, f.name, syscall.EBADF)
	}
	n := f.n
	size := int64(len(n.data))
	keep := min(int64(len(n.disk)), n.minSize, size)
	disk := Resized(n.disk[:keep], size)
	copy(disk[keep:], n.data[keep:])
	// Past the durable size, what a failed sync dropped reaches the disk
	// as zeros (the size does, the pages do not), unless written again.
	lost := span.Remove(slices.Clone(n.lost), 0, keep)
	for _, l := range lost {
		if l.Lo < size {
			clear(disk[l.Lo:min(l.Hi, size)])
		}
	}
	for _, ch := range slices.Concat(n.cached, n.pending) {
		if ch.data == nil {
			continue
		}
		end := ch.off + int64(len(ch.data))
		if ch.off < keep {
			hi := min(end, keep)
			copy(disk[ch.off:hi], n.data[ch.off:hi])
		}
		for _, l := range lost {
			if lo, hi := max(l.Lo, ch.off), min(l.Hi, end, size); lo < hi {
				copy(disk[lo:hi], n.data[lo:hi])
			}
		}
	}
	// What is now allocated and written on the device.
	for _, ch := range n.pending {
		switch {
		case ch.zeroTo > 0:
			n.written = span.Remove(n.written, ch.off, ch.zeroTo)
		case ch.unmap:
			n.written = span.Remove(n.written, ch.off, ch.off+int64(len(ch.data)))
		case ch.data != nil:
			n.written = span.Add(n.written, ch.off, ch.off+int64(len(ch.data)))
		}
	}
	n.written = span.Remove(n.written, size, 1<<62)
	n.disk, n.cached, n.pending, n.minSize, n.lost = disk, nil, nil, size, nil
	delete(f.fs.cached, n)
	f.fs.flushCacheLocked()
	f.fs.changed(op, f.name)
	return nil
}

// Writeback is sync_file_range(WAIT_BEFORE|WRITE|WAIT_AFTER) over the
// whole file: see the type's comment for what it makes durable, and when.
func (f *crashFile) Writeback() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return pathErr("sync_file_range", f.name, syscall.EBADF)
	}
	n := f.n
	size := int64(len(n.disk))
	if int64(len(n.data)) != size || n.minSize < size {
		return nil // the size changed: writing back cannot make that durable
	}
	for _, ch := range n.pending {
		if ch.data == nil || ch.unmap || ch.zeroTo > 0 || !span.Covers(n.written, ch.off, ch.off+int64(len(ch.data))) {
			return nil // not an overwrite of written blocks: stays as volatile as it was
		}
	}
	if len(n.pending) > 0 {
		n.cached = append(n.cached, n.pending...)
		n.pending = nil
		if f.fs.cached == nil {
			f.fs.cached = map[*cnode]bool{}
		}
		f.fs.cached[n] = true
	}
	f.fs.changed("writeback", f.name)
	return nil
}

// Overwritable reports how long a prefix of the file is durably allocated
// and written.
func (f *crashFile) Overwritable() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, pathErr("fiemap", f.name, syscall.EBADF)
	}
	var end int64
	for _, s := range f.n.written {
		if s.Lo > end {
			break
		}
		end = max(end, s.Hi)
	}
	return min(end, int64(len(f.n.disk))), nil
}

// writebackFailed models a failed fsync on Linux: the changes it was to
// write never reach the disk, yet the pages are clean again, so no later
// sync writes them either (the page cache keeps showing them until they
// are overwritten). A later sync makes the size durable, and what an
// append's lost pages held past the old durable size reads back as zeros.
func (f *crashFile) writebackFailed() {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	for _, ch := range f.n.pending {
		if ch.data != nil {
			f.n.lost = span.Add(f.n.lost, ch.off, ch.off+int64(len(ch.data)))
		}
	}
	f.n.pending = nil
	f.n.minSize = int64(len(f.n.data))
}

func (f *crashFile) Stat() (store.FileStat, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return store.FileStat{}, pathErr("fstat", f.name, syscall.EBADF)
	}
	return store.FileStat{Size: int64(len(f.n.data)), Mtime: f.n.mtime, Ctime: f.n.mtime}, nil
}

// touch stamps a change of n's data or size, as the kernel stamps mtime
// and ctime: from its coarse clock, one tick (4 ms at HZ=250) at a time,
// so that changes within a tick leave the times as they were, as on most
// Linux filesystems.
func (n *cnode) touch() {
	now := time.Now().UnixNano()
	n.mtime = now - now%int64(4*time.Millisecond)
}

func (f *crashFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, pathErr("stat", f.name, syscall.EBADF)
	}
	return int64(len(f.n.data)), nil
}

func (f *crashFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return pathErr("close", f.name, syscall.EBADF)
	}
	f.closed = true
	return nil
}

// Crash returns what the filesystem could hold after a power cut now: every
// durable byte and name, and of what is not yet durable whatever the model
// in the type's comment allows, chosen by r. A nil r keeps nothing that is
// not durable. The result is a filesystem of its own, with nothing pending.
func (c *CrashFS) Crash(r *rand.Rand) *CrashFS {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.CrashLocked(r)
}

func (c *CrashFS) CrashLocked(r *rand.Rand) *CrashFS {
	// How this crash treats volatile changes: each one decided at random,
	// or all lost, or all kept where the model lets them be.
	policy := 0
	if r != nil {
		policy = r.IntN(4) // 0, 1: each at random; 2: all lost; 3: all kept
	}
	out := &CrashFS{capacity: c.capacity}
	seen := map[*cnode]*cnode{}
	var conv func(n *cnode) *cnode
	conv = func(n *cnode) *cnode {
		if m := seen[n]; m != nil {
			return m
		}
		m := &cnode{dir: n.dir}
		seen[n] = m
		if n.dir {
			ents := maps.Clone(n.durable)
			keep := 0
			switch {
			case r == nil || policy == 2:
			case policy == 3:
				keep = len(n.changes)
			default:
				keep = r.IntN(len(n.changes) + 1)
			}
			for _, ch := range n.changes[:keep] {
				if ch.from != "" {
					delete(ents, ch.from)
				}
				if ch.node == nil {
					delete(ents, ch.name)
				} else {
					ents[ch.name] = ch.node
				}
			}
			m.entries = map[string]*cnode{}
			for name, e := range ents {
				ce := conv(e)
				ce.nlink++
				m.entries[name] = ce
			}
			m.durable = maps.Clone(m.entries)
			return m
		}
		m.disk = crashData(n, r, policy)
		m.data = slices.Clone(m.disk)
		m.minSize = int64(len(m.data))
		m.written = span.Remove(slices.Clone(n.written), int64(len(m.disk)), 1<<62)
		return m
	}
	out.root = conv(c.root)
	out.root.nlink = 1
	for _, m := range seen {
		if !m.dir && m.nlink > 0 {
			out.used += int64(len(m.data))
		}
	}
	return out
}

// crashData is a file's bytes after a crash.
func crashData(n *cnode, r *rand.Rand, policy int) []byte {
	img := slices.Clone(n.disk)
	if r == nil || policy == 2 || len(n.pending)+len(n.cached) == 0 {
		return img
	}
	for _, ch := range slices.Concat(n.cached, n.pending) {
		fate := 1 // kept
		if policy < 2 {
			fate = r.IntN(3) // 0 lost, 1 kept, 2 torn
		}
		if fate == 0 {
			continue
		}
		switch {
		case ch.zeroTo > 0: // a shrinking truncate: what it cut reads as zeros
			if ch.off < int64(len(img)) {
				clear(img[ch.off:min(ch.zeroTo, int64(len(img)))])
			}
		case ch.data != nil:
			end := ch.off + int64(len(ch.data))
			if end > int64(len(img)) {
				img = Resized(img, end)
			}
			if fate == 1 {
				copy(img[ch.off:], ch.data)
				continue
			}
			for s := ch.off - ch.off%SectorSize; s < end; s += SectorSize {
				if r.IntN(2) == 0 {
					lo, hi := max(s, ch.off), min(s+SectorSize, end)
					copy(img[lo:hi], ch.data[lo-ch.off:hi-ch.off])
				}
			}
		}
	}
	// The size: any the file had since its last sync (written-back
	// changes never changed it).
	size := int64(len(n.disk))
	switch k := r.IntN(len(n.pending) + 1); {
	case len(n.pending) == 0:
	case policy == 3:
		size = n.pending[len(n.pending)-1].size
	case k > 0:
		size = n.pending[k-1].size
	}
	return Resized(img, size)
}

// Edit changes a file's bytes in place, durably (for damaging a crash
// image: bit flips, zeroed or stale blocks). edit may not change the length.
func (c *CrashFS) Edit(name string, edit func(b []byte)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _, n, err := c.lookup("edit", name)
	switch {
	case err != nil:
		return err
	case n == nil:
		return pathErr("edit", name, syscall.ENOENT)
	case n.dir || len(n.pending)+len(n.cached) > 0:
		return pathErr("edit", name, syscall.EINVAL)
	}
	edit(n.data)
	n.disk = slices.Clone(n.data)
	return nil
}

// Pending reports how many changes are not yet durable: data changes of
// files and entry changes of directories.
func (c *CrashFS) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[*cnode]bool{}
	var count func(n *cnode) int
	count = func(n *cnode) int {
		if seen[n] {
			return 0
		}
		seen[n] = true
		k := len(n.pending) + len(n.cached) + len(n.changes)
		for _, e := range n.entries {
			k += count(e)
		}
		return k
	}
	return count(c.root)
}
