package meta

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Ino is an inode number. Numbers are allocated in increasing order and
// never reused, so a data file's name always means one inode.
type Ino uint64

// RootIno is the root directory's inode number (FUSE's root node id).
const RootIno Ino = 1

// OpType is the kind of a logical log operation (see the journal package's
// documentation, What the log carries). Each transaction carries one op;
// replaying the ops in log order onto the checkpoint's state reproduces the
// filesystem's metadata exactly.
type OpType uint8

const (
	OpCreate      OpType = 1 + iota // new inode linked at Parent/Name: file, dir, symlink, node
	OpLink                          // new name Parent/Name for Ino
	OpUnlink                        // remove Parent/Name (not a directory)
	OpRmdir                         // remove the empty directory Parent/Name
	OpRename                        // Parent/Name -> NewParent/NewName, with Flags
	OpSetattr                       // attributes of Ino selected by Mask; Size truncates
	OpWrite                         // Len bytes at Off of Ino; Data too in data-journal mode
	OpFallocate                     // fallocate(Mode, Off, Len) on Ino
	OpSetxattr                      // xattr Name of Ino = Data
	OpRemovexattr                   // remove xattr Name of Ino
	OpFree                          // drop the unlinked inode Ino once its last open is gone
	OpSizeFollows                   // Ino's size follows its data file (Flags 1) or the log again (Flags 0): journal/datafile/passthrough.go
	OpMax
)

var opNames = [...]string{
	OpCreate: "create", OpLink: "link", OpUnlink: "unlink", OpRmdir: "rmdir", OpRename: "rename",
	OpSetattr: "setattr", OpWrite: "write", OpFallocate: "fallocate", OpSetxattr: "setxattr",
	OpRemovexattr: "removexattr", OpFree: "free", OpSizeFollows: "sizefollows",
}

func (t OpType) String() string {
	if t > 0 && t < OpMax {
		return opNames[t]
	}
	return fmt.Sprintf("op(%d)", uint8(t))
}

// Setattr mask bits (Op.Mask).
const (
	SetMode uint32 = 1 << iota
	SetUID
	SetGID
	SetSize
	SetAtime
	SetMtime
	SetCtime
)

// SizeFollowsSet is OpSizeFollows's flag (Op.Flags): set the inode's
// mark; without it the op clears the mark. On OpCreate of a regular file
// it creates the inode marked: the mark travels in the transaction that
// creates the file, so its first open for writing forces nothing
// (journal/datafile/passthrough.go).
const SizeFollowsSet uint32 = 1

// Rename flags (Op.Flags), as renameat2(2).
const (
	RenameNoReplace uint32 = 1 << 0
	RenameExchange  uint32 = 1 << 1
)

// Op is one logical operation. Which fields matter depends on Type; the
// encoding writes only those. Times are nanoseconds since the Unix epoch.
type Op struct {
	Type      OpType
	Ino       Ino    // the inode operated on (create: the new inode)
	Parent    Ino    // directory of Name
	NewParent Ino    // rename: directory of NewName
	Name      string // entry name, or xattr name
	NewName   string // rename: new entry name
	Target    string // symlink target
	Mode      uint32 // create, setattr: mode with type bits; fallocate: its mode
	UID, GID  uint32
	Rdev      uint32
	Flags     uint32 // rename flags, setxattr flags
	Mask      uint32 // setattr: which fields
	Off, Len  int64  // write, fallocate
	Size      int64  // setattr: new size
	Atime     int64
	Mtime     int64
	Ctime     int64 // the op's time: ctime (and mtime where the op changes content)
	Free      bool  // unlink, rmdir, rename: the inode losing its last link is dropped now
	Data      []byte
}

// fields each op type encodes, in order.
type field uint8

const (
	fIno field = iota
	fParent
	fNewParent
	fName
	fNewName
	fTarget
	fMode
	fUID
	fGID
	fRdev
	fFlags
	fMask
	fOff
	fLen
	fSize
	fAtime
	fMtime
	fCtime
	fFree
	fData
)

// opFields lists each type's fields in encoding order. A field added to
// a type's list later goes at its end and is optional in decoding (see
// optionalFrom): records written before it was added end before it and
// decode with it zero, so old logs and checkpoints read as they always did.
var opFields = [OpMax][]field{
	OpCreate:      {fParent, fName, fIno, fMode, fUID, fGID, fRdev, fCtime, fTarget, fFlags},
	OpLink:        {fIno, fParent, fName, fCtime},
	OpUnlink:      {fParent, fName, fCtime, fFree},
	OpRmdir:       {fParent, fName, fCtime, fFree},
	OpRename:      {fParent, fName, fNewParent, fNewName, fFlags, fCtime, fFree},
	OpSetattr:     {fIno, fMask, fMode, fUID, fGID, fSize, fAtime, fMtime, fCtime},
	OpWrite:       {fIno, fOff, fLen, fCtime, fData},
	OpFallocate:   {fIno, fMode, fOff, fLen, fCtime},
	OpSetxattr:    {fIno, fName, fFlags, fCtime, fData},
	OpRemovexattr: {fIno, fName, fCtime},
	OpFree:        {fIno},
	OpSizeFollows: {fIno, fFlags},
}

// optionalFrom is, per type, the index in opFields of the first field
// added after the type's first release: a region may end before it.
var optionalFrom = [OpMax]int{
	OpCreate: 9, // fFlags: SizeFollowsSet, added with the create-time mark
}

// Encode appends the op's region bytes: the type, then its fields as
// unsigned varints or length-prefixed bytes. Varints keep the metadata ops
// of a small-write workload at a few dozen bytes.
func (op *Op) Encode(b []byte) []byte {
	b = append(b, byte(op.Type))
	for _, f := range opFields[op.Type] {
		switch f {
		case fIno:
			b = binary.AppendUvarint(b, uint64(op.Ino))
		case fParent:
			b = binary.AppendUvarint(b, uint64(op.Parent))
		case fNewParent:
			b = binary.AppendUvarint(b, uint64(op.NewParent))
		case fName:
			b = appendBytes(b, []byte(op.Name))
		case fNewName:
			b = appendBytes(b, []byte(op.NewName))
		case fTarget:
			b = appendBytes(b, []byte(op.Target))
		case fMode:
			b = binary.AppendUvarint(b, uint64(op.Mode))
		case fUID:
			b = binary.AppendUvarint(b, uint64(op.UID))
		case fGID:
			b = binary.AppendUvarint(b, uint64(op.GID))
		case fRdev:
			b = binary.AppendUvarint(b, uint64(op.Rdev))
		case fFlags:
			b = binary.AppendUvarint(b, uint64(op.Flags))
		case fMask:
			b = binary.AppendUvarint(b, uint64(op.Mask))
		case fOff:
			b = binary.AppendVarint(b, op.Off)
		case fLen:
			b = binary.AppendVarint(b, op.Len)
		case fSize:
			b = binary.AppendVarint(b, op.Size)
		case fAtime:
			b = binary.AppendVarint(b, op.Atime)
		case fMtime:
			b = binary.AppendVarint(b, op.Mtime)
		case fCtime:
			b = binary.AppendVarint(b, op.Ctime)
		case fFree:
			if op.Free {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		case fData:
			b = appendBytes(b, op.Data)
		}
	}
	return b
}

// EncodedLen is an upper bound of len(op.Encode(nil)): the type byte, a
// varint per field (or the length prefix of a byte field), and the bytes.
func (op *Op) EncodedLen() int {
	n := 1 + len(op.Name) + len(op.NewName) + len(op.Target) + len(op.Data)
	if op.Type > 0 && op.Type < OpMax {
		n += len(opFields[op.Type]) * binary.MaxVarintLen64
	}
	return n
}

func appendBytes(b, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errShortOp = errors.New("op region ends early")

// DecodeOp decodes one op region. Data aliases b.
func DecodeOp(b []byte) (Op, error) {
	var op Op
	if len(b) == 0 {
		return op, errShortOp
	}
	op.Type = OpType(b[0])
	if op.Type == 0 || op.Type >= OpMax {
		return op, fmt.Errorf("unknown op type %d", b[0])
	}
	d := Decoder{B: b[1:]}
	for i, f := range opFields[op.Type] {
		if len(d.B) == 0 && d.Err == nil && optionalFrom[op.Type] > 0 && i >= optionalFrom[op.Type] {
			break // written before the field existed
		}
		switch f {
		case fIno:
			op.Ino = Ino(d.Uvarint())
		case fParent:
			op.Parent = Ino(d.Uvarint())
		case fNewParent:
			op.NewParent = Ino(d.Uvarint())
		case fName:
			op.Name = string(d.bytes())
		case fNewName:
			op.NewName = string(d.bytes())
		case fTarget:
			op.Target = string(d.bytes())
		case fMode:
			op.Mode = d.Uint32()
		case fUID:
			op.UID = d.Uint32()
		case fGID:
			op.GID = d.Uint32()
		case fRdev:
			op.Rdev = d.Uint32()
		case fFlags:
			op.Flags = d.Uint32()
		case fMask:
			op.Mask = d.Uint32()
		case fOff:
			op.Off = d.varint()
		case fLen:
			op.Len = d.varint()
		case fSize:
			op.Size = d.varint()
		case fAtime:
			op.Atime = d.varint()
		case fMtime:
			op.Mtime = d.varint()
		case fCtime:
			op.Ctime = d.varint()
		case fFree:
			if len(d.B) == 0 {
				d.Err = errShortOp
			} else {
				op.Free = d.B[0] != 0
				d.B = d.B[1:]
			}
		case fData:
			if b := d.bytes(); len(b) > 0 {
				op.Data = b
			}
		}
	}
	if d.Err != nil {
		return op, fmt.Errorf("%s op: %w", op.Type, d.Err)
	}
	if len(d.B) != 0 {
		return op, fmt.Errorf("%s op: %d stray bytes after the last field", op.Type, len(d.B))
	}
	return op, nil
}

// varintErr is the error of a varint binary.Uvarint or Varint refused with
// n: the region ended inside it (0), or it runs past 64 bits (n < 0).
func varintErr(n int) error {
	if n < 0 {
		return errLongVarint
	}
	return errShortOp
}

var errLongVarint = errors.New("a varint field runs past 64 bits")

// Decoder reads varints and byte strings, remembering the first error.
type Decoder struct {
	B   []byte
	Err error
}

func (d *Decoder) Uvarint() uint64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.B)
	if n <= 0 {
		d.Err = varintErr(n)
		return 0
	}
	d.B = d.B[n:]
	return v
}

func (d *Decoder) varint() int64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Varint(d.B)
	if n <= 0 {
		d.Err = varintErr(n)
		return 0
	}
	d.B = d.B[n:]
	return v
}

func (d *Decoder) Uint32() uint32 {
	v := d.Uvarint()
	if v > 0xffffffff && d.Err == nil {
		d.Err = fmt.Errorf("value %d out of range", v)
	}
	return uint32(v)
}

func (d *Decoder) bytes() []byte {
	n := d.Uvarint()
	if d.Err != nil {
		return nil
	}
	if n > uint64(len(d.B)) {
		d.Err = errShortOp
		return nil
	}
	s := d.B[:n]
	d.B = d.B[n:]
	return s
}

// String describes the op for logprint --ops.
func (op *Op) String() string {
	switch op.Type {
	case OpCreate:
		s := fmt.Sprintf("create ino %d at %d/%q mode %#o uid %d gid %d", op.Ino, op.Parent, op.Name, op.Mode, op.UID, op.GID)
		if op.Target != "" {
			s += fmt.Sprintf(" -> %q", op.Target)
		}
		if op.Flags&SizeFollowsSet != 0 {
			s += " sizefollows"
		}
		return s
	case OpLink:
		return fmt.Sprintf("link ino %d at %d/%q", op.Ino, op.Parent, op.Name)
	case OpUnlink, OpRmdir:
		return fmt.Sprintf("%s %d/%q free=%v", op.Type, op.Parent, op.Name, op.Free)
	case OpRename:
		return fmt.Sprintf("rename %d/%q -> %d/%q flags %#x free=%v", op.Parent, op.Name, op.NewParent, op.NewName, op.Flags, op.Free)
	case OpSetattr:
		return fmt.Sprintf("setattr ino %d mask %#x mode %#o uid %d gid %d size %d", op.Ino, op.Mask, op.Mode, op.UID, op.GID, op.Size)
	case OpWrite:
		return fmt.Sprintf("write ino %d off %d len %d (%d bytes logged)", op.Ino, op.Off, op.Len, len(op.Data))
	case OpFallocate:
		return fmt.Sprintf("fallocate ino %d mode %#x off %d len %d", op.Ino, op.Mode, op.Off, op.Len)
	case OpSetxattr:
		return fmt.Sprintf("setxattr ino %d %q (%d bytes)", op.Ino, op.Name, len(op.Data))
	case OpRemovexattr:
		return fmt.Sprintf("removexattr ino %d %q", op.Ino, op.Name)
	case OpFree:
		return fmt.Sprintf("free ino %d", op.Ino)
	case OpSizeFollows:
		if op.Flags&SizeFollowsSet != 0 {
			return fmt.Sprintf("sizefollows ino %d: set (its size is at least its data file's)", op.Ino)
		}
		return fmt.Sprintf("sizefollows ino %d: clear (its size is the logged one)", op.Ino)
	}
	return op.Type.String()
}
