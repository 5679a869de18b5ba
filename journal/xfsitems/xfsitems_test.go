package xfsitems

import (
	"fmt"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/logbuf"
)

// TestFormatSizes checks the transcribed sizes against XFS's (the
// XFS_CHECK_STRUCT_SIZE lines of fs/xfs/xfs_ondisk.h and the layouts in
// fs/xfs/libxfs/xfs_log_format.h), and that the regions this package
// writes have them.
func TestFormatSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"struct xfs_inode_log_format", InodeFormatSize, 56},
		{"struct xfs_log_dinode (v3)", DinodeCoreSize, 176},
		{"offsetof(struct xfs_buf_log_format, blf_data_map)", BufFormatBase, 20},
		{"XFS_BLF_CHUNK", ChunkSize, 128},
		{"struct xfs_efi_log_format", EFIFormatBase, 16},
		{"struct xfs_extent (64-bit)", ExtentSize, 16},
		{"struct xfs_icreate_log", ICreateSize, 28},
		{"struct xfs_trans_header", TransHeaderSize, 16},
		{"struct xfs_bmbt_rec", BmbtRecSize, 16},
		{"the literal area of a 512-byte v3 inode", LiteralArea, 336},
		{"xlog_calc_iovec_len(53)", RegionLen(53), 56},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, XFS has %d", c.name, c.got, c.want)
		}
	}
	var b builder
	b.inode(inodeItem{ino: 7, fields: ILogCore | ILogDData, dsize: 30, mode: meta.ModeDir})
	var mask [maxBufChunkWords]uint32
	mask[0] = 1<<0 | 1<<1 | 1<<5
	b.buf(8, 8, BlftBtree, &mask, magicBno)
	b.extentFree(TypeEFI, 1, [][2]uint64{{100, 1}})
	b.icreate(1, 64)
	b.transHeader()
	regs := b.appendTo(nil)
	want := []int{56, 176, 32, 24, 256, 128, 32, 28, 16}
	if len(regs) != len(want) {
		t.Fatalf("%d regions, want %d", len(regs), len(want))
	}
	for i, r := range regs {
		if len(r) != want[i] {
			t.Errorf("region %d: %d bytes, want %d", i, len(r), want[i])
		}
	}
	items, err := Parse(regs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range items {
		names = append(names, it.String())
	}
	got := strings.Join(names, "; ")
	if wantS := "inode ino 7 core+ddata dsize 30; buf btree blkno 8 len 8 chunks 0-1,5; efi id 0x1 extents 100+1; icreate ag 1 agbno 64 count 64; trans header (TRAN, checkpoint)"; got != wantS {
		t.Errorf("parsed %q\nwant   %q", got, wantS)
	}
}

// TestParseRefuses shows each check of Parse refusing what it checks.
func TestParseRefuses(t *testing.T) {
	good := func() [][]byte {
		var b builder
		b.inode(inodeItem{ino: 7, fields: ILogCore | ILogDExt, dsize: 16, mode: meta.ModeReg})
		var mask [maxBufChunkWords]uint32
		mask[0] = 1<<0 | 1<<3
		b.buf(8, 8, BlftBtree, &mask, 0)
		return b.appendTo(nil)
	}
	if _, err := Parse(good()); err != nil {
		t.Fatalf("the good regions: %v", err)
	}
	for _, c := range []struct {
		name  string
		spoil func([][]byte) [][]byte
		want  string
	}{
		{"core magic", func(r [][]byte) [][]byte { r[1][0] = 0; return r }, "core magic"},
		{"core of another inode", func(r [][]byte) [][]byte { le.PutUint64(r[1][coreIno:], 8); return r }, "core of inode 8"},
		{"fork size", func(r [][]byte) [][]byte { r[2] = r[2][:8]; return r }, "has 8 bytes, want 16"},
		{"unknown field", func(r [][]byte) [][]byte { le.PutUint32(r[0][4:], ILogCore|0x800); return r }, "unknown ilf_fields"},
		{"two data forks", func(r [][]byte) [][]byte { le.PutUint32(r[0][4:], ILogCore|ILogDExt|ILogDData); return r }, "two formats"},
		{"too few regions", func(r [][]byte) [][]byte { return r[:4] }, "says it has 3 regions"},
		{"chunk region size", func(r [][]byte) [][]byte { r[4] = r[4][:64]; return r }, "has 64 bytes, want 128"},
		{"runs and regions", func(r [][]byte) [][]byte { le.PutUint32(r[3][BufFormatBase:], 1<<0|1<<1); return r }, "runs"},
		{"chunk past the buffer", func(r [][]byte) [][]byte {
			le.PutUint16(r[3][6:], 1)
			le.PutUint32(r[3][BufFormatBase:], 1<<0|1<<5)
			return r
		}, "past its 4 chunks"},
		{"no dirty chunk", func(r [][]byte) [][]byte { le.PutUint32(r[3][BufFormatBase:], 0); return r }, "no dirty chunk"},
		{"unknown type", func(r [][]byte) [][]byte { le.PutUint16(r[3], 0x1250); return r }, "unknown log item type 0x1250"},
		{"short region", func(r [][]byte) [][]byte { return append(r, []byte{1}) }, "too short"},
	} {
		_, err := Parse(c.spoil(good()))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Parse says %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// itemsOf builds op's items in record rec on m, checks they parse, applies
// op, and returns the items.
func itemsOf(t *testing.T, tr *Tracker, m *meta.Model, op meta.Op, rec logbuf.LSN, gen uint64) []Item {
	t.Helper()
	opRegion := op.Encode(nil)
	regs := tr.Build(m, &op, opRegion, rec, gen)
	if len(regs) == 0 || &regs[0][0] != &opRegion[0] {
		t.Fatalf("%s: the first region is not the op's", op.String())
	}
	items, err := Parse(regs[1:])
	if err != nil {
		t.Fatalf("%s: its items do not parse: %v", op.String(), err)
	}
	if err := m.Apply(&op); err != nil {
		t.Fatalf("%s: %v", op.String(), err)
	}
	return items
}

func has(items []Item, f func(Item) bool) bool {
	for _, it := range items {
		if f(it) {
			return true
		}
	}
	return false
}

func inodeItem7(ino uint64) func(Item) bool {
	return func(it Item) bool { return it.Type == TypeInode && it.Ino == ino && it.Fields&ILogCore != 0 }
}

// TestOncePerRecord: an item dirtied twice in one record is logged the
// first time only; in the next record it is logged again, whole, and
// after a checkpoint only what was dirtied since.
func TestOncePerRecord(t *testing.T) {
	m := meta.NewModel(0)
	tr := NewTracker()
	r1, r2 := logbuf.MakeLSN(1, 0), logbuf.MakeLSN(1, 9)
	itemsOf(t, tr, m, meta.Op{Type: meta.OpCreate, Ino: 2, Parent: 1, Name: "f", Mode: meta.ModeReg | 0o644}, r1, 0)
	chmod := meta.Op{Type: meta.OpSetattr, Ino: 2, Mask: meta.SetMode, Mode: 0o600}
	if items := itemsOf(t, tr, m, chmod, r1, 0); has(items, inodeItem7(2)) || len(items) != 0 {
		t.Errorf("a second change of inode 2 in the record logged %v, want nothing", items)
	}
	items := itemsOf(t, tr, m, chmod, r2, 0)
	if !has(items, inodeItem7(2)) || !has(items, func(it Item) bool { return it.Type == 0 }) {
		t.Errorf("the first change of inode 2 in the next record logged %v, want its core after the record's transaction header", items)
	}

	// A buffer logged again carries every chunk dirtied since the
	// checkpoint: the AGF's and btrees' chunks from the write in r2
	// again in r3, with what the new write dirties.
	w := func(ino meta.Ino, off int64) meta.Op {
		return meta.Op{Type: meta.OpWrite, Ino: ino, Off: off, Len: 4096}
	}
	r3, r4 := logbuf.MakeLSN(1, 20), logbuf.MakeLSN(1, 30)
	first := itemsOf(t, tr, m, w(2, 0), r2, 0)
	chunks := func(items []Item, typ uint16) map[int64]string {
		out := map[int64]string{}
		for _, it := range items {
			if it.Type == TypeBuf && it.BufType == typ {
				out[it.Blkno] = fmt.Sprint(it.Chunks)
			}
		}
		return out
	}
	before := chunks(first, BlftBtree)
	if len(before) == 0 {
		t.Fatalf("an allocating write logged no btree buffer: %v", first)
	}
	again := chunks(itemsOf(t, tr, m, meta.Op{Type: meta.OpSetattr, Ino: 2, Mask: meta.SetSize, Size: 0}, r3, 0), BlftBtree)
	for blkno, c := range before {
		if !strings.Contains(again[blkno], strings.Trim(c, "[]")) {
			t.Errorf("btree buffer %d: logged chunks %s, then %s in the next record: want the earlier ones again (relogged whole)", blkno, c, again[blkno])
		}
	}
	// The AGI: an O_TMPFILE (inode 90, group 2) goes on unlinked bucket
	// 22, in the AGI's chunk 1; a later create in group 2 changes the
	// counters alone (chunk 0), but its record relogs the AGI with the
	// bucket's chunk too, until a checkpoint.
	agi := func(items []Item) string {
		for _, it := range items {
			if it.Type == TypeBuf && it.BufType == BlftAGI && it.Blkno == agDaddr(2)+2 {
				return fmt.Sprint(it.Chunks)
			}
		}
		return "none"
	}
	if got := agi(itemsOf(t, tr, m, meta.Op{Type: meta.OpCreate, Ino: 90, Parent: 1, Mode: meta.ModeReg | 0o600}, r3, 0)); got != "[0 1]" {
		t.Errorf("an O_TMPFILE in group 2 logged its AGI chunks %s, want [0 1]", got)
	}
	if got := agi(itemsOf(t, tr, m, meta.Op{Type: meta.OpCreate, Ino: 94, Parent: 1, Name: "g", Mode: meta.ModeReg | 0o644}, r4, 0)); got != "[0 1]" {
		t.Errorf("a create in group 2 in the next record logged its AGI chunks %s, want [0 1]: all dirtied since the checkpoint", got)
	}
	if got := agi(itemsOf(t, tr, m, meta.Op{Type: meta.OpCreate, Ino: 98, Parent: 1, Name: "h", Mode: meta.ModeReg | 0o644}, r4+8, 1)); got != "[0]" {
		t.Errorf("after a checkpoint, a create in group 2 logged its AGI chunks %s, want [0]", got)
	}
	r4 += 16

	// After a checkpoint (gen 1), nothing dirty before it is logged, and
	// a change of inode 2 alone logs its core alone.
	if items := itemsOf(t, tr, m, chmod, r4, 2); len(items) != 2 || !has(items, inodeItem7(2)) || items[1].Fields != ILogCore {
		t.Errorf("after a checkpoint, a chmod logged %v, want the transaction header and inode 2's core", items)
	}
}

// TestDirectoryForms grows a directory through XFS's forms (shortform in
// the inode, one block, leaf, node) and shrinks it back: what each op logs
// parses, and the forms log what they hold (the inline fork, then the
// directory's blocks).
func TestDirectoryForms(t *testing.T) {
	m := meta.NewModel(0)
	tr := NewTracker()
	ino := meta.Ino(2)
	rec := logbuf.LSN(0)
	next := func() logbuf.LSN { rec += 8; return rec } // every op in its own record
	itemsOf(t, tr, m, meta.Op{Type: meta.OpCreate, Ino: ino, Parent: 1, Name: "d", Mode: meta.ModeDir | 0o755}, next(), 0)
	seen := map[string]bool{}
	for i := range 1200 {
		ino++
		name := fmt.Sprintf("a-rather-long-file-name-%04d", i)
		items := itemsOf(t, tr, m, meta.Op{Type: meta.OpCreate, Ino: ino, Parent: 2, Name: name, Mode: meta.ModeReg | 0o644}, next(), 0)
		for _, it := range items {
			if it.Type == TypeInode && it.Ino == 2 && it.Fields&ILogDData != 0 {
				seen["inline"] = true
			}
			if it.Type == TypeBuf {
				seen[blftNames[it.BufType]] = true
			}
		}
	}
	for _, want := range []string{"inline", "dir-block", "dir-data", "dir-leaf1", "dir-leafn", "dir-free"} {
		if !seen[want] {
			t.Errorf("growing a directory to 1200 entries never logged %s: %v", want, seen)
		}
	}
	for i := range 1200 {
		name := fmt.Sprintf("a-rather-long-file-name-%04d", i)
		itemsOf(t, tr, m, meta.Op{Type: meta.OpUnlink, Parent: 2, Name: name, Free: true}, next(), 0)
	}
	if d := tr.dirs[2]; d == nil || d.count != 0 || d.form() != formShort {
		t.Errorf("the emptied directory's account: %+v, want no entries, shortform", d)
	}
}

// TestEveryOpParses runs every kind of op, with a tracker, through one
// record after another, and checks that what each logs parses and that
// the model's and the tracker's directories agree.
func TestEveryOpParses(t *testing.T) {
	m := meta.NewModel(0)
	tr := NewTracker()
	rec := logbuf.LSN(8)
	ops := []meta.Op{
		{Type: meta.OpCreate, Ino: 2, Parent: 1, Name: "dir", Mode: meta.ModeDir | 0o755},
		{Type: meta.OpCreate, Ino: 3, Parent: 2, Name: "f", Mode: meta.ModeReg | 0o644},
		{Type: meta.OpCreate, Ino: 4, Parent: 2, Name: "short", Mode: meta.ModeLink | 0o777, Target: "x"},
		{Type: meta.OpCreate, Ino: 5, Parent: 2, Name: "long", Mode: meta.ModeLink | 0o777, Target: strings.Repeat("t", 600)},
		{Type: meta.OpCreate, Ino: 6, Parent: 1, Name: "", Mode: meta.ModeReg | 0o600},
		{Type: meta.OpCreate, Ino: 7, Parent: 1, Name: "dev", Mode: meta.ModeChar | 0o600, Rdev: 5},
		{Type: meta.OpLink, Ino: 6, Parent: 2, Name: "was-tmp"},
		{Type: meta.OpLink, Ino: 3, Parent: 1, Name: "f2"},
		{Type: meta.OpWrite, Ino: 3, Off: 0, Len: 1 << 20},
		{Type: meta.OpWrite, Ino: 3, Off: 100, Len: 10},
		{Type: meta.OpFallocate, Ino: 3, Mode: meta.FallocKeepSize | meta.FallocPunchHole, Off: 4096, Len: 8192},
		{Type: meta.OpFallocate, Ino: 3, Off: 1 << 20, Len: 1 << 20},
		{Type: meta.OpSetattr, Ino: 3, Mask: meta.SetSize, Size: 100},
		{Type: meta.OpSetxattr, Ino: 3, Name: "user.a", Data: []byte("1")},
		{Type: meta.OpSetxattr, Ino: 3, Name: "user.big", Data: make([]byte, 400)},
		{Type: meta.OpRemovexattr, Ino: 3, Name: "user.big"},
		{Type: meta.OpRename, Parent: 2, Name: "f", NewParent: 1, NewName: "moved"},
		{Type: meta.OpCreate, Ino: 8, Parent: 1, Name: "sub", Mode: meta.ModeDir | 0o755},
		{Type: meta.OpRename, Parent: 1, Name: "sub", NewParent: 2, NewName: "sub"},
		{Type: meta.OpRename, Parent: 2, Name: "short", NewParent: 1, NewName: "moved", Free: false},
		{Type: meta.OpRename, Parent: 2, Name: "was-tmp", NewParent: 1, NewName: "dev", Flags: meta.RenameExchange},
		{Type: meta.OpSizeFollows, Ino: 6, Flags: meta.SizeFollowsSet},
		{Type: meta.OpUnlink, Parent: 1, Name: "f2"},
		{Type: meta.OpFree, Ino: 3},
		{Type: meta.OpUnlink, Parent: 2, Name: "long", Free: true},
		{Type: meta.OpRmdir, Parent: 2, Name: "sub", Free: true},
	}
	for i, op := range ops {
		if i%3 == 0 {
			rec += 8
		}
		if err := m.Validate(&op); err != nil {
			t.Fatalf("op %d %s: %v", i, op.String(), err)
		}
		itemsOf(t, tr, m, op, rec, uint64(i/10))
	}
	for ino, d := range tr.dirs {
		in := m.Inodes[ino]
		if in == nil {
			t.Errorf("the tracker keeps directory %d, which is gone", ino)
			continue
		}
		names := 0
		for n := range in.Entries {
			names += len(n)
		}
		if d.count != len(in.Entries) || d.names != names {
			t.Errorf("directory %d: tracker counts %d entries (%d bytes of names), the model %d (%d)", ino, d.count, d.names, len(in.Entries), names)
		}
	}
}
