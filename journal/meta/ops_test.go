package meta

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"
)

// fullOp has every field set, to values of every encoding width: what
// survives its encoding for a given type is what that type carries.
var fullOp = Op{
	Ino: 1 << 40, Parent: 3, NewParent: math.MaxUint64, Name: "name", NewName: "new\x00name",
	Target: strings.Repeat("t", 300), Mode: math.MaxUint32, UID: 1000, GID: 1 << 31, Rdev: 0x0801,
	Flags: 2, Mask: SetMode | SetSize | SetCtime, Off: math.MaxInt64, Len: -1, Size: math.MinInt64,
	Atime: -1_000_000_007, Mtime: 1 << 62, Ctime: 1_700_000_000_123_456_789, Free: true,
	Data: []byte{0, 1, 2, 0xff},
}

// carried is, per op type, the op fullOp decodes to: the fields the type's
// Apply reads, and no others.
func carried(typ OpType) Op {
	f := fullOp
	switch typ {
	case OpCreate:
		return Op{Type: typ, Parent: f.Parent, Name: f.Name, Ino: f.Ino, Mode: f.Mode, UID: f.UID, GID: f.GID, Rdev: f.Rdev, Ctime: f.Ctime, Target: f.Target, Flags: f.Flags}
	case OpLink:
		return Op{Type: typ, Ino: f.Ino, Parent: f.Parent, Name: f.Name, Ctime: f.Ctime}
	case OpUnlink, OpRmdir:
		return Op{Type: typ, Parent: f.Parent, Name: f.Name, Ctime: f.Ctime, Free: f.Free}
	case OpRename:
		return Op{Type: typ, Parent: f.Parent, Name: f.Name, NewParent: f.NewParent, NewName: f.NewName, Flags: f.Flags, Ctime: f.Ctime, Free: f.Free}
	case OpSetattr:
		return Op{Type: typ, Ino: f.Ino, Mask: f.Mask, Mode: f.Mode, UID: f.UID, GID: f.GID, Size: f.Size, Atime: f.Atime, Mtime: f.Mtime, Ctime: f.Ctime}
	case OpWrite:
		return Op{Type: typ, Ino: f.Ino, Off: f.Off, Len: f.Len, Ctime: f.Ctime, Data: f.Data}
	case OpFallocate:
		return Op{Type: typ, Ino: f.Ino, Mode: f.Mode, Off: f.Off, Len: f.Len, Ctime: f.Ctime}
	case OpSetxattr:
		return Op{Type: typ, Ino: f.Ino, Name: f.Name, Flags: f.Flags, Ctime: f.Ctime, Data: f.Data}
	case OpRemovexattr:
		return Op{Type: typ, Ino: f.Ino, Name: f.Name, Ctime: f.Ctime}
	case OpFree:
		return Op{Type: typ, Ino: f.Ino}
	case OpSizeFollows:
		return Op{Type: typ, Ino: f.Ino, Flags: f.Flags}
	}
	return Op{}
}

func allTypes() []OpType {
	var out []OpType
	for typ := OpType(1); typ < OpMax; typ++ {
		out = append(out, typ)
	}
	return out
}

func TestOpRoundTrip(t *testing.T) {
	if len(allTypes()) != 12 {
		t.Errorf("%d op types; this test knows 12", len(allTypes()))
	}
	for _, typ := range allTypes() {
		want := carried(typ)
		if want.Type != typ {
			t.Errorf("%s: no expected decoding", typ)
			continue
		}
		op := fullOp
		op.Type = typ
		b := op.Encode(nil)
		if b[0] != byte(typ) {
			t.Errorf("%s: type byte %d", typ, b[0])
		}
		if n := op.EncodedLen(); n < len(b) {
			t.Errorf("%s: EncodedLen %d < %d encoded bytes", typ, n, len(b))
		}
		got, err := DecodeOp(b)
		if err != nil {
			t.Errorf("%s: DecodeOp: %v", typ, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded\n%+v\nwant\n%+v", typ, got, want)
		}
		// The zero op of each type too: the smallest encoding.
		zero := Op{Type: typ}
		zb := zero.Encode(nil)
		if got, err := DecodeOp(zb); err != nil || !reflect.DeepEqual(got, zero) {
			t.Errorf("%s: zero op decoded to %+v, %v", typ, got, err)
		}
		if len(zb) > 1+len(opFields[typ]) {
			t.Errorf("%s: zero op takes %d bytes, want one per field and the type", typ, len(zb))
		}
		// Encode appends.
		pre := []byte("prefix")
		if ab := op.Encode(pre); !bytes.Equal(ab[:6], []byte("prefix")) || !bytes.Equal(ab[6:], b) {
			t.Errorf("%s: Encode does not append", typ)
		}
	}
}

// TestOpEncodingSmall pins the point of varints: a small-write op is a
// handful of bytes.
func TestOpEncodingSmall(t *testing.T) {
	op := Op{Type: OpWrite, Ino: 12, Off: 4096, Len: 4096, Ctime: 1_700_000_000_000_000_000}
	if n := len(op.Encode(nil)); n > 16 {
		t.Errorf("a write op takes %d bytes", n)
	}
}

func TestDecodeOpAliasesData(t *testing.T) {
	op := Op{Type: OpWrite, Ino: 2, Len: 3, Data: []byte("abc")}
	b := op.Encode(nil)
	got, err := DecodeOp(b)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] = 'Z'
	if string(got.Data) != "abZ" {
		t.Errorf("Data %q does not alias the region", got.Data)
	}
	// No data decodes as nil, whatever was encoded.
	op.Data, op.Len = []byte{}, 0
	if got, _ := DecodeOp(op.Encode(nil)); got.Data != nil {
		t.Errorf("empty data decoded as %#v, want nil", got.Data)
	}
}

func TestDecodeOpTruncated(t *testing.T) {
	if _, err := DecodeOp(nil); err == nil || !strings.Contains(err.Error(), "ends early") {
		t.Errorf("DecodeOp(nil) = %v", err)
	}
	for _, typ := range allTypes() {
		for _, op := range []Op{fullOp, {}} {
			op.Type = typ
			b := op.Encode(nil)
			old := oldLen(op)
			for n := 1; n < len(b); n++ {
				_, err := DecodeOp(b[:n])
				if n == old {
					continue // the encoding from before the optional fields: TestOldCreateDecodes
				}
				if err == nil {
					t.Fatalf("%s: %d of %d bytes decoded without error", typ, n, len(b))
				}
				if msg := err.Error(); !strings.HasPrefix(msg, typ.String()+" op: ") || !strings.Contains(msg, "ends early") {
					t.Fatalf("%s cut at %d bytes: error %q does not name the op and what is wrong", typ, n, msg)
				}
			}
			_, err := DecodeOp(append(b, 0, 0))
			if err == nil || err.Error() != typ.String()+" op: 2 stray bytes after the last field" {
				t.Errorf("%s with 2 bytes more: %v", typ, err)
			}
		}
	}
}

// oldLen is the length of op's encoding without the fields its type
// gained later (optionalFrom), or -1 if it has none.
func oldLen(op Op) int {
	from := optionalFrom[op.Type]
	if from == 0 {
		return -1
	}
	fields := opFields[op.Type]
	defer func() { opFields[op.Type] = fields }()
	opFields[op.Type] = fields[:from]
	return len(op.Encode(nil))
}

// A create written before its flags field existed (the bytes below are
// such a record's, type to target) decodes as unmarked; one with the flag
// decodes marked, and the model makes the file marked.
func TestOldCreateDecodes(t *testing.T) {
	old := []byte{byte(OpCreate), 1, 1, 'f', 2, 0xa4, 0x83, 2, 0, 0, 0, 10, 0}
	op, err := DecodeOp(old)
	if err != nil || op.Flags != 0 || op.Name != "f" || op.Ino != 2 || op.Mode != ModeReg|0o644 || op.Ctime != 5 {
		t.Fatalf("an old create decoded to %+v, %v", op, err)
	}
	op.Flags = SizeFollowsSet
	b := op.Encode(nil)
	if !bytes.Equal(b[:len(old)], old) || len(b) != len(old)+1 {
		t.Fatalf("a marked create encodes as % x, want the old bytes and a flag", b)
	}
	got, err := DecodeOp(b)
	if err != nil || got.Flags != SizeFollowsSet {
		t.Fatalf("a marked create decoded to %+v, %v", got, err)
	}
	m := NewModel(1)
	if err := m.Apply(&got); err != nil || !m.Inodes[2].SizeFollows {
		t.Fatalf("the model applied a marked create: %v, marked %v", err, m.Inodes[2] != nil && m.Inodes[2].SizeFollows)
	}
	// Only a regular file takes the mark, and no other flag exists.
	for _, bad := range []Op{
		{Type: OpCreate, Parent: RootIno, Name: "d", Ino: 3, Mode: ModeDir | 0o755, Flags: SizeFollowsSet},
		{Type: OpCreate, Parent: RootIno, Name: "g", Ino: 3, Mode: ModeReg | 0o644, Flags: 2},
	} {
		if err := m.Validate(&bad); err == nil {
			t.Errorf("create %q mode %#o flags %d validated", bad.Name, bad.Mode, bad.Flags)
		}
	}
}

func TestDecodeOpCorrupt(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"type 0", []byte{0, 1, 2}, "unknown op type 0"},
		{"type OpMax", []byte{byte(OpMax), 1}, "unknown op type 13"},
		{"type 255", []byte{255}, "unknown op type 255"},
		// free: ino a varint of 11 bytes, too long for 64 bits.
		{"overlong varint", append([]byte{byte(OpFree)}, bytes.Repeat([]byte{0xff}, 11)...), "free op: a varint field runs past 64 bits"},
		// sizefollows: ino 1, flags 1<<32.
		{"uint32 out of range", []byte{byte(OpSizeFollows), 1, 0x80, 0x80, 0x80, 0x80, 0x10}, "sizefollows op: value 4294967296 out of range"},
		// removexattr: ino 1, a name of 100 bytes with 3 present.
		{"name past the end", []byte{byte(OpRemovexattr), 1, 100, 'a', 'b', 'c'}, "removexattr op: op region ends early"},
		// write: ino, off, len, ctime, then a data length of 2^63.
		{"huge length", []byte{byte(OpWrite), 1, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, "write op: op region ends early"},
	} {
		_, err := DecodeOp(c.b)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

func TestOpTypeString(t *testing.T) {
	want := []string{"create", "link", "unlink", "rmdir", "rename", "setattr", "write", "fallocate", "setxattr", "removexattr", "free", "sizefollows"}
	for i, typ := range allTypes() {
		if typ.String() != want[i] {
			t.Errorf("OpType(%d) = %q, want %q", typ, typ.String(), want[i])
		}
	}
	if s := OpType(0).String(); s != "op(0)" {
		t.Errorf("OpType(0) = %q", s)
	}
	if s := OpMax.String(); s != "op(13)" {
		t.Errorf("OpMax = %q", s)
	}
}

func TestOpString(t *testing.T) {
	for _, c := range []struct {
		op   Op
		want string
	}{
		{Op{Type: OpCreate, Ino: 5, Parent: 1, Name: "f", Mode: ModeReg | 0o644, UID: 1, GID: 2}, `create ino 5 at 1/"f" mode 0100644 uid 1 gid 2`},
		{Op{Type: OpCreate, Ino: 6, Parent: 1, Name: "s", Mode: ModeLink | 0o777, Target: "t"}, `create ino 6 at 1/"s" mode 0120777 uid 0 gid 0 -> "t"`},
		{Op{Type: OpLink, Ino: 5, Parent: 2, Name: "g"}, `link ino 5 at 2/"g"`},
		{Op{Type: OpUnlink, Parent: 2, Name: "g", Free: true}, `unlink 2/"g" free=true`},
		{Op{Type: OpRmdir, Parent: 1, Name: "d"}, `rmdir 1/"d" free=false`},
		{Op{Type: OpRename, Parent: 1, Name: "a", NewParent: 2, NewName: "b", Flags: RenameExchange}, `rename 1/"a" -> 2/"b" flags 0x2 free=false`},
		{Op{Type: OpSetattr, Ino: 3, Mask: SetSize, Size: 10}, "setattr ino 3 mask 0x8 mode 0 uid 0 gid 0 size 10"},
		{Op{Type: OpWrite, Ino: 3, Off: 4096, Len: 2, Data: []byte("ab")}, "write ino 3 off 4096 len 2 (2 bytes logged)"},
		{Op{Type: OpFallocate, Ino: 3, Mode: FallocKeepSize, Off: 0, Len: 9}, "fallocate ino 3 mode 0x1 off 0 len 9"},
		{Op{Type: OpSetxattr, Ino: 3, Name: "user.a", Data: []byte("xyz")}, `setxattr ino 3 "user.a" (3 bytes)`},
		{Op{Type: OpRemovexattr, Ino: 3, Name: "user.a"}, `removexattr ino 3 "user.a"`},
		{Op{Type: OpFree, Ino: 9}, "free ino 9"},
		{Op{Type: OpSizeFollows, Ino: 9, Flags: SizeFollowsSet}, "sizefollows ino 9: set (its size is at least its data file's)"},
		{Op{Type: OpSizeFollows, Ino: 9}, "sizefollows ino 9: clear (its size is the logged one)"},
		{Op{Type: 77}, "op(77)"},
	} {
		if got := c.op.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
}

// FuzzDecodeOp holds DecodeOp to never panic, to name the op in every
// error about an op of a known type, and, on what it accepts, to decode
// its own re-encoding to the same op in no more bytes (varints written
// shortest).
func FuzzDecodeOp(f *testing.F) {
	for _, typ := range allTypes() {
		op := fullOp
		op.Type = typ
		b := op.Encode(nil)
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add((&Op{Type: typ}).Encode(nil))
	}
	f.Add([]byte{})
	f.Add([]byte{0})
	f.Add([]byte{byte(OpMax)})
	f.Add([]byte{byte(OpFree), 0x80, 0x00}) // a varint written long
	f.Add(binary.AppendUvarint([]byte{byte(OpSizeFollows), 1}, 1<<32))
	f.Fuzz(func(t *testing.T, b []byte) {
		op, err := DecodeOp(b)
		if err != nil {
			if len(b) > 0 && b[0] > 0 && b[0] < byte(OpMax) && !strings.HasPrefix(err.Error(), OpType(b[0]).String()+" op: ") {
				t.Fatalf("error %q does not name the op", err)
			}
			return
		}
		if op.Type != OpType(b[0]) {
			t.Fatalf("type %d decoded as %s", b[0], op.Type)
		}
		re := op.Encode(nil)
		if len(re) > len(b) {
			t.Fatalf("re-encoding takes %d bytes, the input %d", len(re), len(b))
		}
		if n := op.EncodedLen(); n < len(re) {
			t.Fatalf("EncodedLen %d < %d", n, len(re))
		}
		again, err := DecodeOp(re)
		if err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		if !reflect.DeepEqual(again, op) {
			t.Fatalf("re-encoding decodes to\n%+v\nnot\n%+v", again, op)
		}
	})
}
