package meta

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"syscall"
)

// File type bits of Inode.Mode (S_IFMT and friends).
const (
	ModeType  = syscall.S_IFMT
	ModeDir   = syscall.S_IFDIR
	ModeReg   = syscall.S_IFREG
	ModeLink  = syscall.S_IFLNK
	ModeFIFO  = syscall.S_IFIFO
	ModeChar  = syscall.S_IFCHR
	ModeBlock = syscall.S_IFBLK
	ModeSock  = syscall.S_IFSOCK
)

// MaxNameLen is the longest directory entry name, in bytes (NAME_MAX).
const MaxNameLen = 255

// Fallocate mode bits the model understands (linux/falloc.h).
const (
	FallocKeepSize  = 0x01
	FallocPunchHole = 0x02
	FallocZeroRange = 0x10
)

// Xattr flags (linux/xattr.h).
const (
	XattrCreate  = 1
	XattrReplace = 2
)

// Inode is the metadata of one file, directory, symlink or node.
type Inode struct {
	Ino                 Ino
	Mode                uint32 // type and permission bits
	UID, GID            uint32
	Nlink               uint32
	Size                int64
	Rdev                uint32
	Atime, Mtime, Ctime int64 // ns since the epoch
	Target              string
	Xattrs              map[string][]byte
	Entries             map[string]Ino // directories only
	Parent              Ino            // directories only: the ".." entry
	// SizeFollows marks a regular file that the kernel may write in
	// passthrough, synchronously too (O_SYNC, O_DSYNC, RWF_DSYNC),
	// without the journal seeing it: recovery takes its size to be at
	// least its data file's (journal/datafile/passthrough.go). Set and cleared by
	// OpSizeFollows, and cleared by a shrinking setattr.
	SizeFollows bool
}

// IsDir reports whether the inode is a directory.
func (in *Inode) IsDir() bool { return in.Mode&ModeType == ModeDir }

// IsRegular reports whether the inode is a regular file.
func (in *Inode) IsRegular() bool { return in.Mode&ModeType == ModeReg }

// Model is the filesystem's metadata: every inode, and the next inode
// number to allocate. Apply is its only mutator, so the live filesystem,
// log replay and the checkpoint's shadow copy all evolve identically.
type Model struct {
	Inodes  map[Ino]*Inode
	NextIno Ino
}

// NewModel returns the metadata of a freshly made filesystem: a root
// directory owned by root, mode 0755.
func NewModel(now int64) *Model {
	return &Model{
		Inodes: map[Ino]*Inode{RootIno: {
			Ino: RootIno, Mode: ModeDir | 0o755, Nlink: 2, Atime: now, Mtime: now, Ctime: now,
			Entries: map[string]Ino{}, Parent: RootIno,
		}},
		NextIno: RootIno + 1,
	}
}

// CheckName reports whether name can be a directory entry.
func CheckName(name string) error {
	switch {
	case len(name) > MaxNameLen:
		return syscall.ENAMETOOLONG
	case name == "" || name == "." || name == "..":
		return syscall.EINVAL
	case bytes.ContainsAny([]byte(name), "/\x00"):
		return syscall.EINVAL
	}
	return nil
}

// Dir returns the directory ino, or the errno explaining why it is not one.
func (m *Model) Dir(ino Ino) (*Inode, error) {
	d := m.Inodes[ino]
	if d == nil {
		return nil, syscall.ENOENT
	}
	if !d.IsDir() {
		return nil, syscall.ENOTDIR
	}
	return d, nil
}

// liveDir returns directory ino if entries can still be added to it: not
// a directory that was removed while something still held it.
func (m *Model) liveDir(ino Ino) (*Inode, error) {
	d, err := m.Dir(ino)
	if err == nil && d.Nlink == 0 {
		return nil, syscall.ENOENT
	}
	return d, err
}

// Lookup returns the inode named name in directory parent.
func (m *Model) Lookup(parent Ino, name string) (*Inode, error) {
	d, err := m.Dir(parent)
	if err != nil {
		return nil, err
	}
	if len(name) > MaxNameLen {
		return nil, syscall.ENAMETOOLONG
	}
	ino, ok := d.Entries[name]
	if !ok {
		return nil, syscall.ENOENT
	}
	return m.Inodes[ino], nil
}

// Apply performs op on the model, or returns an errno and changes nothing.
func (m *Model) Apply(op *Op) error { return m.apply(op, true) }

// Validate returns the errno Apply would return for op, changing nothing:
// nil means Apply will succeed on the model as it is now. The filesystem
// validates, logs, then applies, so that an op the log refuses leaves the
// model as it was.
func (m *Model) Validate(op *Op) error { return m.apply(op, false) }

// apply checks op and, if do is set and op is valid, performs it. Every
// case checks everything before it changes anything, with "if !do" between
// the two.
func (m *Model) apply(op *Op, do bool) error {
	switch op.Type {
	case OpCreate:
		return m.create(op, do)
	case OpLink:
		return m.link(op, do)
	case OpUnlink, OpRmdir:
		return m.remove(op, do)
	case OpRename:
		return m.rename(op, do)
	case OpSetattr:
		return m.setattr(op, do)
	case OpWrite, OpFallocate:
		return m.write(op, do)
	case OpSetxattr, OpRemovexattr:
		return m.xattr(op, do)
	case OpSizeFollows:
		in := m.Inodes[op.Ino]
		if in == nil {
			return syscall.ENOENT
		}
		if !in.IsRegular() || op.Flags&^SizeFollowsSet != 0 {
			return syscall.EINVAL
		}
		if do {
			in.SizeFollows = op.Flags&SizeFollowsSet != 0 // no time changes: nothing a stat shows
		}
		return nil
	case OpFree:
		in := m.Inodes[op.Ino]
		if in == nil || in.Nlink != 0 || op.Ino == RootIno {
			return syscall.EINVAL
		}
		if !do {
			return nil
		}
		delete(m.Inodes, op.Ino)
		return nil
	}
	return syscall.EINVAL
}

// create makes an inode named Name in Parent; an empty Name makes an
// O_TMPFILE: a regular file with no link, alive while open.
func (m *Model) create(op *Op, do bool) error {
	tmpfile := op.Name == ""
	if tmpfile && op.Mode&ModeType != ModeReg {
		return syscall.EINVAL
	}
	if !tmpfile {
		if err := CheckName(op.Name); err != nil {
			return err
		}
	}
	d, err := m.liveDir(op.Parent)
	if err != nil {
		return err
	}
	if _, ok := d.Entries[op.Name]; ok && !tmpfile {
		return syscall.EEXIST
	}
	if op.Ino < m.NextIno || m.Inodes[op.Ino] != nil {
		return syscall.EINVAL // allocation is sequential; anything else is a bug or corruption
	}
	if op.Ino == math.MaxUint64 {
		return syscall.ENOSPC // the last number: NextIno would wrap to 0, which no checkpoint can hold
	}
	t := op.Mode & ModeType
	switch t {
	case ModeReg, ModeDir, ModeLink, ModeFIFO, ModeChar, ModeBlock, ModeSock:
	default:
		return syscall.EINVAL
	}
	if (t == ModeLink) != (op.Target != "") {
		return syscall.EINVAL
	}
	if op.Flags&^SizeFollowsSet != 0 || op.Flags != 0 && t != ModeReg {
		return syscall.EINVAL // the mark is a regular file's
	}
	if !do {
		return nil
	}
	in := &Inode{
		Ino: op.Ino, Mode: op.Mode, UID: op.UID, GID: op.GID, Nlink: 1, Rdev: op.Rdev,
		Atime: op.Ctime, Mtime: op.Ctime, Ctime: op.Ctime, Target: op.Target,
		SizeFollows: op.Flags&SizeFollowsSet != 0,
	}
	if t == ModeLink {
		in.Size = int64(len(op.Target))
	}
	if t == ModeDir {
		in.Nlink = 2
		in.Entries = map[string]Ino{}
		in.Parent = op.Parent
		d.Nlink++
	}
	m.Inodes[op.Ino] = in
	m.NextIno = op.Ino + 1
	if tmpfile {
		in.Nlink = 0
		return nil
	}
	d.Entries[op.Name] = op.Ino
	d.Mtime, d.Ctime = op.Ctime, op.Ctime
	return nil
}

func (m *Model) link(op *Op, do bool) error {
	if err := CheckName(op.Name); err != nil {
		return err
	}
	in := m.Inodes[op.Ino]
	if in == nil {
		return syscall.ENOENT
	}
	if in.IsDir() {
		return syscall.EPERM
	}
	// An inode without links gets here only as an O_TMPFILE being linked
	// in (the kernel refuses linkat of other unlinked files).
	if in.Nlink >= 65000 {
		return syscall.EMLINK
	}
	d, err := m.liveDir(op.Parent)
	if err != nil {
		return err
	}
	if _, ok := d.Entries[op.Name]; ok {
		return syscall.EEXIST
	}
	if !do {
		return nil
	}
	d.Entries[op.Name] = op.Ino
	in.Nlink++
	in.Ctime = op.Ctime
	d.Mtime, d.Ctime = op.Ctime, op.Ctime
	return nil
}

// remove handles unlink and rmdir.
func (m *Model) remove(op *Op, do bool) error {
	d, err := m.Dir(op.Parent)
	if err != nil {
		return err
	}
	in, err := m.Lookup(op.Parent, op.Name)
	if err != nil {
		return err
	}
	if op.Type == OpRmdir {
		if !in.IsDir() {
			return syscall.ENOTDIR
		}
		if len(in.Entries) > 0 {
			return syscall.ENOTEMPTY
		}
	} else if in.IsDir() {
		return syscall.EISDIR
	}
	if op.Free && !in.IsDir() && in.Nlink != 1 {
		return syscall.EINVAL // only the last link can free an inode
	}
	if !do {
		return nil
	}
	delete(d.Entries, op.Name)
	d.Mtime, d.Ctime = op.Ctime, op.Ctime
	m.unlinkInode(d, in, op.Ctime, op.Free)
	return nil
}

// unlinkInode drops one link of in (an entry of d already removed).
func (m *Model) unlinkInode(d, in *Inode, now int64, free bool) {
	if in.IsDir() {
		d.Nlink--
		in.Nlink = 0
	} else {
		in.Nlink--
	}
	in.Ctime = now
	if free && in.Nlink == 0 {
		delete(m.Inodes, in.Ino)
	}
}

// isAncestor reports whether a is dir or one of its ancestors.
func (m *Model) isAncestor(a Ino, dir Ino) bool {
	for i := 0; i < len(m.Inodes)+1; i++ {
		if dir == a {
			return true
		}
		if dir == RootIno {
			return false
		}
		d := m.Inodes[dir]
		if d == nil {
			return false
		}
		dir = d.Parent
	}
	return false
}

func (m *Model) rename(op *Op, do bool) error {
	if err := CheckName(op.NewName); err != nil {
		return err
	}
	if len(op.Name) > MaxNameLen {
		return syscall.ENAMETOOLONG
	}
	if op.Flags&^(RenameNoReplace|RenameExchange) != 0 || op.Flags == RenameNoReplace|RenameExchange {
		return syscall.EINVAL
	}
	od, err := m.Dir(op.Parent)
	if err != nil {
		return err
	}
	nd, err := m.liveDir(op.NewParent)
	if err != nil {
		return err
	}
	src, ok := od.Entries[op.Name]
	if !ok {
		return syscall.ENOENT
	}
	sin := m.Inodes[src]
	dst, exists := nd.Entries[op.NewName]
	var din *Inode
	if exists {
		din = m.Inodes[dst]
	}
	now := op.Ctime
	if op.Flags&RenameExchange != 0 {
		if !exists {
			return syscall.ENOENT
		}
		if sin.IsDir() && m.isAncestor(src, op.NewParent) || din.IsDir() && m.isAncestor(dst, op.Parent) {
			return syscall.EINVAL
		}
		if op.Free {
			return syscall.EINVAL
		}
		if !do {
			return nil
		}
		od.Entries[op.Name], nd.Entries[op.NewName] = dst, src
		if sin.IsDir() && op.Parent != op.NewParent {
			sin.Parent = op.NewParent
			od.Nlink--
			nd.Nlink++
		}
		if din.IsDir() && op.Parent != op.NewParent {
			din.Parent = op.Parent
			nd.Nlink--
			od.Nlink++
		}
		sin.Ctime, din.Ctime = now, now
		od.Mtime, od.Ctime, nd.Mtime, nd.Ctime = now, now, now, now
		return nil
	}
	if exists {
		if op.Flags&RenameNoReplace != 0 {
			return syscall.EEXIST
		}
		if dst == src {
			return nil // both names link the same inode: rename(2) does nothing
		}
		switch {
		case sin.IsDir() && !din.IsDir():
			return syscall.ENOTDIR
		case !sin.IsDir() && din.IsDir():
			return syscall.EISDIR
		case din.IsDir() && len(din.Entries) > 0:
			return syscall.ENOTEMPTY
		}
	}
	if sin.IsDir() && m.isAncestor(src, op.NewParent) {
		return syscall.EINVAL // a directory cannot move under itself
	}
	if op.Free && (!exists || !din.IsDir() && din.Nlink != 1) {
		return syscall.EINVAL
	}
	if !do {
		return nil
	}
	if exists {
		delete(nd.Entries, op.NewName)
		m.unlinkInode(nd, din, now, op.Free)
	}
	delete(od.Entries, op.Name)
	nd.Entries[op.NewName] = src
	if sin.IsDir() && op.Parent != op.NewParent {
		sin.Parent = op.NewParent
		od.Nlink--
		nd.Nlink++
	}
	sin.Ctime = now
	od.Mtime, od.Ctime, nd.Mtime, nd.Ctime = now, now, now, now
	return nil
}

func (m *Model) setattr(op *Op, do bool) error {
	in := m.Inodes[op.Ino]
	if in == nil {
		return syscall.ENOENT
	}
	if op.Mask&SetSize != 0 {
		if in.IsDir() {
			return syscall.EISDIR
		}
		if !in.IsRegular() || op.Size < 0 {
			return syscall.EINVAL
		}
	}
	if !do {
		return nil
	}
	if op.Mask&SetMode != 0 {
		in.Mode = in.Mode&ModeType | op.Mode&^ModeType
	}
	if op.Mask&SetUID != 0 {
		in.UID = op.UID
	}
	if op.Mask&SetGID != 0 {
		in.GID = op.GID
	}
	if op.Mask&SetSize != 0 {
		if op.Size < in.Size {
			// A shrink ends the mark: until the cut is durable and
			// the mark set again (journal/datafile/passthrough.go), the
			// data file may be longer than the file with bytes
			// that are not the file's.
			in.SizeFollows = false
		}
		in.Size = op.Size
		in.Mtime = op.Ctime
	}
	if op.Mask&SetAtime != 0 {
		in.Atime = op.Atime
	}
	if op.Mask&SetMtime != 0 {
		in.Mtime = op.Mtime
	}
	in.Ctime = op.Ctime
	return nil
}

// write handles write and fallocate: both may extend the file.
func (m *Model) write(op *Op, do bool) error {
	in := m.Inodes[op.Ino]
	if in == nil {
		return syscall.ENOENT
	}
	if in.IsDir() {
		return syscall.EISDIR
	}
	if !in.IsRegular() || op.Off < 0 || op.Len < 0 || op.Off+op.Len < op.Off {
		return syscall.EINVAL
	}
	if op.Type == OpWrite && op.Data != nil && int64(len(op.Data)) != op.Len {
		return syscall.EINVAL
	}
	if op.Type == OpFallocate {
		if op.Mode&^(FallocKeepSize|FallocPunchHole|FallocZeroRange) != 0 ||
			op.Mode&FallocPunchHole != 0 && op.Mode&FallocKeepSize == 0 {
			return syscall.EOPNOTSUPP
		}
		if op.Len == 0 {
			return syscall.EINVAL
		}
	}
	if !do {
		return nil
	}
	if op.Type == OpWrite || op.Mode&FallocKeepSize == 0 {
		in.Size = max(in.Size, op.Off+op.Len)
	}
	if op.Type == OpWrite || op.Mode&(FallocPunchHole|FallocZeroRange) != 0 {
		in.Mtime = op.Ctime
	}
	in.Ctime = op.Ctime
	return nil
}

func (m *Model) xattr(op *Op, do bool) error {
	in := m.Inodes[op.Ino]
	if in == nil {
		return syscall.ENOENT
	}
	if op.Name == "" || len(op.Name) > MaxNameLen {
		return syscall.ERANGE
	}
	_, has := in.Xattrs[op.Name]
	if op.Type == OpRemovexattr {
		if !has {
			return syscall.ENODATA
		}
		if !do {
			return nil
		}
		delete(in.Xattrs, op.Name)
	} else {
		if op.Flags&XattrCreate != 0 && has {
			return syscall.EEXIST
		}
		if op.Flags&XattrReplace != 0 && !has {
			return syscall.ENODATA
		}
		if !do {
			return nil
		}
		if in.Xattrs == nil {
			in.Xattrs = map[string][]byte{}
		}
		in.Xattrs[op.Name] = bytes.Clone(op.Data)
	}
	in.Ctime = op.Ctime
	return nil
}

// Clone returns a deep copy.
func (m *Model) Clone() *Model {
	c := &Model{Inodes: make(map[Ino]*Inode, len(m.Inodes)), NextIno: m.NextIno}
	for ino, in := range m.Inodes {
		n := *in
		if in.Xattrs != nil {
			n.Xattrs = make(map[string][]byte, len(in.Xattrs))
			for k, v := range in.Xattrs {
				n.Xattrs[k] = bytes.Clone(v)
			}
		}
		if in.Entries != nil {
			n.Entries = maps.Clone(in.Entries)
		}
		c.Inodes[ino] = &n
	}
	return c
}

// Encode serializes the model deterministically: inodes by number, names
// sorted, so equal models encode to equal bytes. The inodes marked
// SizeFollows, if any, follow the inodes as a count and their numbers in
// order: a model with none encodes as models did before the mark existed,
// and DecodeModel reads either.
func (m *Model) Encode() []byte {
	var b []byte
	b = binary.AppendUvarint(b, uint64(m.NextIno))
	b = binary.AppendUvarint(b, uint64(len(m.Inodes)))
	for _, ino := range slices.Sorted(maps.Keys(m.Inodes)) {
		in := m.Inodes[ino]
		for _, v := range []uint64{uint64(in.Ino), uint64(in.Mode), uint64(in.UID), uint64(in.GID), uint64(in.Nlink), uint64(in.Rdev), uint64(in.Parent)} {
			b = binary.AppendUvarint(b, v)
		}
		for _, v := range []int64{in.Size, in.Atime, in.Mtime, in.Ctime} {
			b = binary.AppendVarint(b, v)
		}
		b = appendBytes(b, []byte(in.Target))
		b = binary.AppendUvarint(b, uint64(len(in.Xattrs)))
		for _, k := range slices.Sorted(maps.Keys(in.Xattrs)) {
			b = appendBytes(b, []byte(k))
			b = appendBytes(b, in.Xattrs[k])
		}
		if in.IsDir() {
			b = binary.AppendUvarint(b, uint64(len(in.Entries)))
			for _, k := range slices.Sorted(maps.Keys(in.Entries)) {
				b = appendBytes(b, []byte(k))
				b = binary.AppendUvarint(b, uint64(in.Entries[k]))
			}
		}
	}
	if follows := m.SizeFollows(); len(follows) > 0 {
		b = binary.AppendUvarint(b, uint64(len(follows)))
		for _, ino := range follows {
			b = binary.AppendUvarint(b, uint64(ino))
		}
	}
	return b
}

// SizeFollows lists the inodes marked SizeFollows, in order.
func (m *Model) SizeFollows() []Ino {
	var out []Ino
	for ino, in := range m.Inodes {
		if in.SizeFollows {
			out = append(out, ino)
		}
	}
	slices.Sort(out)
	return out
}

// DecodeModel is the inverse of Encode, checking that the result is a
// consistent tree: every entry names an existing inode, and the root exists.
func DecodeModel(b []byte) (*Model, error) {
	d := Decoder{B: b}
	m := &Model{NextIno: Ino(d.Uvarint())}
	n := d.Uvarint()
	if d.Err == nil && n > uint64(len(b)) {
		return nil, fmt.Errorf("model: %d inodes cannot fit in %d bytes", n, len(b))
	}
	m.Inodes = make(map[Ino]*Inode, n)
	for i := uint64(0); i < n && d.Err == nil; i++ {
		in := &Inode{Ino: Ino(d.Uvarint()), Mode: d.Uint32(), UID: d.Uint32(), GID: d.Uint32(), Nlink: d.Uint32(), Rdev: d.Uint32(), Parent: Ino(d.Uvarint())}
		in.Size, in.Atime, in.Mtime, in.Ctime = d.varint(), d.varint(), d.varint(), d.varint()
		in.Target = string(d.bytes())
		if nx := d.Uvarint(); nx > 0 && d.Err == nil {
			if nx > uint64(len(d.B)) {
				return nil, fmt.Errorf("model: inode %d: bad xattr count %d", in.Ino, nx)
			}
			in.Xattrs = make(map[string][]byte, nx)
			for range nx {
				k := string(d.bytes())
				in.Xattrs[k] = bytes.Clone(d.bytes())
			}
		}
		if in.IsDir() {
			ne := d.Uvarint()
			if d.Err == nil && ne > uint64(len(d.B)) {
				return nil, fmt.Errorf("model: inode %d: bad entry count %d", in.Ino, ne)
			}
			in.Entries = make(map[string]Ino, ne)
			for range ne {
				k := string(d.bytes())
				in.Entries[k] = Ino(d.Uvarint())
			}
		}
		if d.Err == nil && (in.Ino == 0 || in.Ino >= m.NextIno || m.Inodes[in.Ino] != nil) {
			return nil, fmt.Errorf("model: bad or duplicate inode number %d", in.Ino)
		}
		m.Inodes[in.Ino] = in
	}
	if d.Err == nil && len(d.B) != 0 {
		// The inodes whose size follows their data file.
		nf := d.Uvarint()
		if d.Err == nil && (nf == 0 || nf > uint64(len(d.B))) {
			return nil, fmt.Errorf("model: bad count %d of inodes whose size follows their data file", nf)
		}
		for range nf {
			ino := Ino(d.Uvarint())
			if d.Err != nil {
				break
			}
			in := m.Inodes[ino]
			if in == nil || !in.IsRegular() || in.SizeFollows {
				return nil, fmt.Errorf("model: inode %d, marked as following its data file's size, is no regular file or marked twice", ino)
			}
			in.SizeFollows = true
		}
	}
	if d.Err != nil {
		return nil, fmt.Errorf("model: %w", d.Err)
	}
	if len(d.B) != 0 {
		return nil, fmt.Errorf("model: %d stray bytes at the end", len(d.B))
	}
	if r := m.Inodes[RootIno]; r == nil || !r.IsDir() {
		return nil, fmt.Errorf("model: no root directory")
	}
	for _, in := range m.Inodes {
		for name, e := range in.Entries {
			if m.Inodes[e] == nil {
				return nil, fmt.Errorf("model: directory %d entry %q names missing inode %d", in.Ino, name, e)
			}
		}
	}
	return m, nil
}

// Digest is a hash of the encoded model, for comparing states in tests and
// for check's report.
func (m *Model) Digest() [32]byte { return sha256.Sum256(m.Encode()) }

// DropOrphans removes inodes with no links (open-but-unlinked files whose
// last close the log never saw, e.g. after a crash) and returns them.
func (m *Model) DropOrphans() []Ino {
	var gone []Ino
	for ino, in := range m.Inodes {
		if in.Nlink == 0 && ino != RootIno {
			delete(m.Inodes, ino)
			gone = append(gone, ino)
		}
	}
	slices.Sort(gone)
	return gone
}
