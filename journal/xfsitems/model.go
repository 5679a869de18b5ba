package xfsitems

import (
	"strings"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/logbuf"
)

// The filesystem the items are sized for: what mkfs.xfs makes of a 2 GiB
// device (v5, 4 KiB blocks, 512-byte inodes, four allocation groups).
const (
	BlockSize        = 4096
	InodeSize        = 512
	LiteralArea      = InodeSize - DinodeCoreSize // the forks' room in an inode: 336 bytes
	AGCount          = 4
	agBlocks         = 131072 // 512 MiB allocation groups
	inodesPerChunk   = 64     // XFS_INODES_PER_CHUNK
	inodesPerCluster = 32     // a 16 KiB inode cluster buffer of 512-byte inodes
	clusterBytes     = inodesPerCluster * InodeSize
	sectorBlocks     = 1 // the AGF and AGI are one 512-byte sector each

	dirBlockHdr  = 64   // struct xfs_dir3_data_hdr (and xfs_dir3_leaf_hdr)
	dirLeafEnt   = 8    // struct xfs_dir2_leaf_entry
	dirTail      = 8    // struct xfs_dir2_block_tail
	dirDotDots   = 32   // the "." and ".." entries of a block-form directory, 16 bytes each
	sfDirHdr     = 6    // struct xfs_dir2_sf_hdr with 4-byte inode numbers
	sfDirEnt     = 8    // namelen, offset, ftype and a 4-byte inode number, beside the name
	sfAttrHdr    = 4    // struct xfs_attr_sf_hdr
	sfAttrEnt    = 3    // namelen, valuelen, flags, beside name and value
	btreeHdr     = 56   // struct xfs_btree_block, short form with CRC
	allocRec     = 8    // struct xfs_alloc_rec
	inobtRec     = 16   // struct xfs_inobt_rec
	freeSpaceRec = 16   // records modelled in a free-space btree leaf
	agiUnlinked  = 0x28 // offset of agi_unlinked[64] in the AGI
	extentBytes  = 256 << 10
)

// On-disk magic numbers put at the start of a logged chunk 0, so that a
// dump shows what the buffer is.
const (
	magicAGF   = 0x58414746 // XAGF
	magicAGI   = 0x58414749 // XAGI
	magicBno   = 0x41423342 // AB3B
	magicCnt   = 0x41423343 // AB3C
	magicIno   = 0x49414233 // IAB3
	magicFino  = 0x46494233 // FIB3
	magicDir   = 0x58444233 // XDB3: a block-form directory
	magicData  = 0x58444433 // XDD3
	magicLeaf1 = 0x3df1     // XFS_DIR3_LEAF1_MAGIC (a da block's 16-bit magic)
	magicLeafN = 0x3dff
	magicFree  = 0x58444633 // XDF3
	magicAttr  = 0x3bee     // XFS_ATTR3_LEAF_MAGIC
	magicSymln = 0x58534c4d // XSLM
)

type kind uint8

const (
	kTrans kind = iota + 1
	kInode
	kAGF
	kAGI
	kBnobt
	kCntbt
	kInobt
	kFinobt
	kDirBlock // b: the directory block's index
	kAttrLeaf
	kSymlink
)

type key struct {
	k    kind
	a, b uint64
}

// state is what the tracker knows of one item: the chunks (a buffer) or
// forks (an inode, in word 0) dirtied since the last checkpoint, and
// those already logged in record rec.
type state struct {
	rec    logbuf.LSN
	dirty  [maxBufChunkWords]uint32
	logged [maxBufChunkWords]uint32
}

// Inode forks as the tracker marks them dirty (state.dirty[0]).
const (
	forkCore = 1 << iota
	forkData
	forkAttr
)

// Tracker decides the item regions of each transaction: what XFS would
// log for the op (see package logbuf's documentation, Log items), once
// per record for each item, each time with all that the item has had
// dirtied since the last checkpoint, as XFS's CIL formats each dirty item
// once per checkpoint, with every change since the item was last written
// back. The caller serializes Build calls.
type Tracker struct {
	items   map[key]state
	dirs    map[meta.Ino]*dirStat
	rec     logbuf.LSN
	gen     uint64
	b       builder
	out     [][]byte
	efiID   uint64
	pending []pendingInode
	bufs    []pendingBuf
}

type pendingInode struct {
	ino   meta.Ino
	forks uint32   // forks this op dirties
	in    inodeNow // the inode as the op leaves it
}

// inodeNow is what an inode item says of an inode after the op.
type inodeNow struct {
	mode   uint32
	nlink  uint32
	size   int64
	target int  // a symlink's target length
	attrSF int  // the attr fork's shortform size, 0: none
	gone   bool // freed: its forks are empty
}

type pendingBuf struct {
	k     key
	mask  [maxBufChunkWords]uint32
	blkno int64
	blen  int
	blft  uint16
	magic uint32
}

// NewTracker returns a tracker with nothing dirty.
func NewTracker() *Tracker {
	return &Tracker{items: map[key]state{}, dirs: map[meta.Ino]*dirStat{}}
}

// Reset forgets everything: what a failed commit leaves may not match the
// model any more.
func (t *Tracker) Reset() {
	clear(t.items)
	clear(t.dirs)
}

// Build returns the regions of op's transaction: opRegion (the logical
// op, which replay applies) and then the regions of the log items XFS
// would log for op, leaving out what record rec already holds. m is the
// model before op (op is valid on it); gen counts the checkpoints so far:
// a checkpoint writes the metadata back, so what was dirty before it need
// not be logged again. The regions alias the tracker's buffer until the
// next Build.
func (t *Tracker) Build(m *meta.Model, op *meta.Op, opRegion []byte, rec logbuf.LSN, gen uint64) [][]byte {
	if gen != t.gen {
		clear(t.items)
		t.gen = gen
	}
	t.rec = rec
	t.b.reset()
	t.pending, t.bufs = t.pending[:0], t.bufs[:0]
	if st := t.items[key{k: kTrans}]; st.rec != rec {
		// The first transaction of a record carries the checkpoint's
		// transaction header, as a CIL checkpoint has one.
		t.items[key{k: kTrans}] = state{rec: rec}
		t.b.transHeader()
	}
	t.model(m, op)
	for _, p := range t.pending {
		t.emitInode(p)
	}
	for i := range t.bufs {
		t.emitBuf(&t.bufs[i])
	}
	t.out = append(t.out[:0], opRegion)
	return t.b.appendTo(t.out)
}

// model works out the items op dirties, into t.pending and t.bufs.
func (t *Tracker) model(m *meta.Model, op *meta.Op) {
	switch op.Type {
	case meta.OpCreate:
		t.create(m, op)
	case meta.OpLink:
		in := m.Inodes[op.Ino]
		t.dirAdd(m, op.Parent, op.Name)
		t.inode(m, op.Parent, 0, nil)
		now := nowOf(in)
		now.nlink++
		t.inode(m, op.Ino, 0, &now)
		if in.Nlink == 0 { // an O_TMPFILE linked in: off the unlinked list
			t.agiBucket(op.Ino)
		}
	case meta.OpUnlink, meta.OpRmdir:
		d := m.Inodes[op.Parent]
		victim := d.Entries[op.Name]
		t.dirRemove(m, op.Parent, op.Name)
		t.inode(m, op.Parent, 0, nil)
		t.dropLink(m, victim, op.Free)
	case meta.OpRename:
		t.rename(m, op)
	case meta.OpSetattr:
		in := m.Inodes[op.Ino]
		now := nowOf(in)
		forks := uint32(0)
		if op.Mask&meta.SetSize != 0 {
			now.size = op.Size
			if allocEnd(op.Size) < allocEnd(in.Size) {
				t.free(agOf(op.Ino), uint64(op.Ino), extentsOf(in.Size)-extentsOf(op.Size)+1)
				forks |= forkData
			}
		}
		t.inode(m, op.Ino, forks, &now)
	case meta.OpWrite, meta.OpFallocate:
		in := m.Inodes[op.Ino]
		now := nowOf(in)
		end := op.Off + op.Len
		if op.Type == meta.OpWrite || op.Mode&meta.FallocKeepSize == 0 {
			now.size = max(now.size, end)
		}
		forks := uint32(0)
		switch {
		case op.Type == meta.OpFallocate && op.Mode&meta.FallocPunchHole != 0:
			if op.Off < allocEnd(in.Size) {
				t.free(agOf(op.Ino), uint64(op.Ino)+uint64(op.Off), 1)
				forks |= forkData
			}
		case op.Type == meta.OpFallocate || end > allocEnd(in.Size):
			// Blocks past those the file has: an allocation (XFS
			// allocates delayed blocks at writeback, before the fsync
			// that forces this record).
			t.alloc(agOf(op.Ino), uint64(op.Ino)+uint64(in.Size))
			forks |= forkData
		}
		t.inode(m, op.Ino, forks, &now)
	case meta.OpSetxattr, meta.OpRemovexattr:
		t.xattr(m, op)
	case meta.OpFree:
		t.ifree(m, op.Ino)
	case meta.OpSizeFollows:
		t.inode(m, op.Ino, 0, nil)
	}
}

func (t *Tracker) create(m *meta.Model, op *meta.Op) {
	typ := op.Mode & meta.ModeType
	now := inodeNow{mode: op.Mode, nlink: 1}
	forks := uint32(0)
	switch typ {
	case meta.ModeDir:
		now.nlink = 2
		forks |= forkData // xfs_dir_init: a shortform directory with its parent
		t.dirs[op.Ino] = &dirStat{}
	case meta.ModeLink:
		now.target, now.size = len(op.Target), int64(len(op.Target))
		forks |= forkData
		if len(op.Target) > LiteralArea {
			// A remote symlink: one block, its header and the target.
			t.alloc(agOf(op.Ino), uint64(op.Ino))
			t.buf(key{k: kSymlink, a: uint64(op.Ino)}, dataDaddr(op.Ino, 1<<20), BlftSymlink, magicSymln, 0, 56+len(op.Target))
		}
	}
	if op.Name == "" {
		now.nlink = 0
		t.agiBucket(op.Ino) // an O_TMPFILE goes on the unlinked list
	} else {
		t.dirAdd(m, op.Parent, op.Name)
	}
	t.inode(m, op.Parent, 0, nil)
	t.inode(m, op.Ino, forks, &now)
	t.ialloc(op.Ino)
}

// dropLink drops one link of victim, whose entry is gone: its core, the
// unlinked list if that was its last, and its free if free is set.
func (t *Tracker) dropLink(m *meta.Model, victim meta.Ino, free bool) {
	in := m.Inodes[victim]
	now := nowOf(in)
	if in.IsDir() {
		now.nlink = 0
	} else if now.nlink > 0 {
		now.nlink--
	}
	t.inode(m, victim, 0, &now)
	if now.nlink == 0 {
		t.agiBucket(victim) // xfs_iunlink: on the AGI's unlinked list
		if free {
			t.ifreeNow(victim, in)
		}
	}
}

func (t *Tracker) rename(m *meta.Model, op *meta.Op) {
	od, nd := m.Inodes[op.Parent], m.Inodes[op.NewParent]
	src := od.Entries[op.Name]
	dst, exists := nd.Entries[op.NewName]
	if exists && dst == src {
		return // rename(2) of a name onto a link of the same inode: nothing changes
	}
	if op.Flags&meta.RenameExchange != 0 {
		t.dirReplace(m, op.Parent, op.Name)
		t.dirReplace(m, op.NewParent, op.NewName)
	} else {
		t.dirRemove(m, op.Parent, op.Name)
		if exists {
			t.dirReplace(m, op.NewParent, op.NewName)
		} else {
			t.dirAdd(m, op.NewParent, op.NewName)
		}
	}
	t.inode(m, op.Parent, 0, nil)
	t.inode(m, op.NewParent, 0, nil)
	sin := m.Inodes[src]
	if sin.IsDir() && op.Parent != op.NewParent {
		t.dotdot(m, src)
	}
	t.inode(m, src, 0, nil)
	if exists {
		if op.Flags&meta.RenameExchange != 0 {
			if m.Inodes[dst].IsDir() && op.Parent != op.NewParent {
				t.dotdot(m, dst)
			}
			t.inode(m, dst, 0, nil)
		} else {
			t.dropLink(m, dst, op.Free)
		}
	}
}

func (t *Tracker) xattr(m *meta.Model, op *meta.Op) {
	in := m.Inodes[op.Ino]
	now := nowOf(in)
	n := attrName(op.Name)
	old, had := in.Xattrs[op.Name]
	switch {
	case op.Type == meta.OpRemovexattr:
		now.attrSF -= sfAttrEnt + n + len(old)
	case had:
		now.attrSF += len(op.Data) - len(old)
	case now.attrSF == 0:
		now.attrSF = sfAttrHdr + sfAttrEnt + n + len(op.Data)
	default:
		now.attrSF += sfAttrEnt + n + len(op.Data)
	}
	if now.attrSF <= sfAttrHdr {
		now.attrSF = 0
	}
	dsize, _ := t.dfork(m, op.Ino, in)
	wasLeaf := len(in.Xattrs) > 0 && attrSize(in)+dsize > LiteralArea
	if now.attrSF > 0 && now.attrSF+dsize > LiteralArea {
		// A leaf block: its header, the entry's slot in the hash-ordered
		// entries after it, and the name and value, kept from the end.
		if !wasLeaf {
			t.alloc(agOf(op.Ino), uint64(op.Ino))
		}
		h := hash(op.Name)
		k := key{k: kAttrLeaf, a: uint64(op.Ino)}
		daddr := dataDaddr(op.Ino, 1<<21)
		t.buf(k, daddr, BlftAttrLeaf, magicAttr, 0, 80)
		ents := len(in.Xattrs) + 1
		t.buf(k, daddr, BlftAttrLeaf, magicAttr, 80+8*int(h%uint32(ents)), 8)
		t.buf(k, daddr, BlftAttrLeaf, magicAttr, BlockSize-now.attrSF%(BlockSize-128)-n-len(op.Data)-4, n+len(op.Data)+4)
	}
	t.inode(m, op.Ino, forkAttr, &now)
}

// ifree frees an unlinked inode whose last open is gone.
func (t *Tracker) ifree(m *meta.Model, ino meta.Ino) {
	in := m.Inodes[ino]
	t.ifreeNow(ino, in)
}

// ifreeNow logs what freeing in takes (xfs_inactive: the truncate of its
// blocks, then xfs_ifree): the extents freed with an EFI and EFD, the
// AGI's counters and unlinked bucket, the inode btrees' records, and the
// inode's core.
func (t *Tracker) ifreeNow(ino meta.Ino, in *meta.Inode) {
	ag := agOf(ino)
	blocks := in.IsRegular() && in.Size > 0 || in.Mode&meta.ModeType == meta.ModeLink && len(in.Target) > LiteralArea
	if blocks {
		t.free(ag, uint64(ino), extentsOf(in.Size))
	}
	if d := t.dirs[ino]; d != nil {
		delete(t.dirs, ino)
	}
	t.agiBucket(ino)
	t.agi(ag, 0)
	idx := recIndex(ino)
	t.buf(key{k: kInobt, a: uint64(ag)}, btreeDaddr(ag, 3), BlftBtree, magicIno, btreeHdr+inobtRec*idx, inobtRec)
	t.buf(key{k: kFinobt, a: uint64(ag)}, btreeDaddr(ag, 4), BlftBtree, magicFino, btreeHdr+inobtRec*idx, inobtRec)
	now := inodeNow{gone: true}
	forks := uint32(0)
	if blocks {
		forks |= forkData
	}
	t.pend(ino, forks, now)
}

// ialloc logs an inode's allocation (xfs_dialloc): the AGI's free count,
// the inode's record in the inode btree and the free inode btree, and for
// the first of a chunk of 64 the chunk itself: an icreate item, the
// blocks, and the records inserted.
func (t *Tracker) ialloc(ino meta.Ino) {
	ag := agOf(ino)
	idx := recIndex(ino)
	t.agi(ag, 0)
	t.buf(key{k: kInobt, a: uint64(ag)}, btreeDaddr(ag, 3), BlftBtree, magicIno, btreeHdr+inobtRec*idx, inobtRec)
	t.buf(key{k: kFinobt, a: uint64(ag)}, btreeDaddr(ag, 4), BlftBtree, magicFino, btreeHdr+inobtRec*idx, inobtRec)
	if agino := uint64(ino) / AGCount; agino%inodesPerChunk == 0 {
		agbno := uint32(64 + agino/inodesPerChunk*(inodesPerChunk*InodeSize/BlockSize))
		t.b.icreate(uint32(ag), agbno)
		t.alloc(ag, uint64(ino))
		t.buf(key{k: kInobt, a: uint64(ag)}, btreeDaddr(ag, 3), BlftBtree, magicIno, 0, btreeHdr)
		t.buf(key{k: kFinobt, a: uint64(ag)}, btreeDaddr(ag, 4), BlftBtree, magicFino, 0, btreeHdr)
	}
}

// alloc logs an extent allocation in ag (xfs_alloc_fixup_trees): the
// AGF's free counters, and the records of the by-block and by-size free
// space btrees that change, in their (modelled) one-leaf trees. h picks
// the records.
func (t *Tracker) alloc(ag int, h uint64) {
	t.agf(ag)
	i, j := int(mix(h)%freeSpaceRec), int(mix(h+1)%freeSpaceRec)
	// by block: the free extent shrinks in place
	t.buf(key{k: kBnobt, a: uint64(ag)}, btreeDaddr(ag, 1), BlftBtree, magicBno, btreeHdr+allocRec*i, allocRec)
	// by size: deleted at i and inserted at j, the records between shift
	lo := min(i, j)
	t.buf(key{k: kCntbt, a: uint64(ag)}, btreeDaddr(ag, 2), BlftBtree, magicCnt, 0, btreeHdr)
	t.buf(key{k: kCntbt, a: uint64(ag)}, btreeDaddr(ag, 2), BlftBtree, magicCnt, btreeHdr+allocRec*lo, allocRec*(freeSpaceRec-lo))
}

// free logs the free of n extents in ag: the EFI that the transaction
// logs and the EFD of the one that finishes it (deferred frees, in the
// same checkpoint), and the free space btrees' changes.
func (t *Tracker) free(ag int, h uint64, n int) {
	n = max(1, min(n, 16))
	t.efiID++
	id := t.efiID<<8 | uint64(ag)
	var ext [16][2]uint64
	for i := range n {
		ext[i] = [2]uint64{uint64(ag)*agBlocks + 1024 + mix(h+uint64(i))%(agBlocks-1024), 1}
	}
	t.b.extentFree(TypeEFI, id, ext[:n])
	t.b.extentFree(TypeEFD, id, ext[:n])
	for i := range n {
		t.alloc(ag, h+uint64(i))
	}
}

func (t *Tracker) agf(ag int) {
	t.buf(key{k: kAGF, a: uint64(ag)}, agDaddr(ag)+1, BlftAGF, magicAGF, 0, 0x40)
}

// agi logs the AGI's counters (off 0) or an unlinked bucket.
func (t *Tracker) agi(ag int, off int) {
	t.buf(key{k: kAGI, a: uint64(ag)}, agDaddr(ag)+2, BlftAGI, magicAGI, off, 4)
	if off != 0 {
		return
	}
	t.buf(key{k: kAGI, a: uint64(ag)}, agDaddr(ag)+2, BlftAGI, magicAGI, 0, 0x28)
}

// agiBucket logs the AGI's unlinked bucket of ino (xfs_iunlink and its
// removal).
func (t *Tracker) agiBucket(ino meta.Ino) {
	agino := uint64(ino) / AGCount
	t.agi(agOf(ino), agiUnlinked+4*int(agino%64))
}

// inode marks ino's forks dirty; now, if not nil, is the inode as the op
// leaves it (else the model's).
func (t *Tracker) inode(m *meta.Model, ino meta.Ino, forks uint32, now *inodeNow) {
	var n inodeNow
	if now != nil {
		n = *now
	} else {
		n = nowOf(m.Inodes[ino])
	}
	for i := range t.pending {
		if t.pending[i].ino == ino {
			t.pending[i].forks |= forks
			if now != nil {
				t.pending[i].in = n
			}
			return
		}
	}
	t.pend(ino, forks, n)
}

func (t *Tracker) pend(ino meta.Ino, forks uint32, now inodeNow) {
	for i := range t.pending {
		if t.pending[i].ino == ino {
			t.pending[i].forks |= forks
			t.pending[i].in = now
			return
		}
	}
	t.pending = append(t.pending, pendingInode{ino: ino, forks: forks, in: now})
}

// dotdot logs the change of a moved directory's ".." entry.
func (t *Tracker) dotdot(m *meta.Model, dir meta.Ino) {
	d := t.dir(m, dir)
	if d.form() == formShort {
		t.inode(m, dir, forkData, nil)
		return
	}
	t.buf(key{k: kDirBlock, a: uint64(dir)}, dataDaddr(dir, 0), d.dataBlft(), d.dataMagic(), dirBlockHdr+16, 16)
}

// emitInode appends the inode item of p for this record: its core and
// every fork dirty since the checkpoint the first time in the record,
// then only forks newly dirty.
func (t *Tracker) emitInode(p pendingInode) {
	k := key{k: kInode, a: uint64(p.ino)}
	st := t.items[k]
	if st.rec != t.rec {
		st.rec, st.logged = t.rec, [maxBufChunkWords]uint32{}
	}
	st.dirty[0] |= p.forks | forkCore
	want := st.dirty[0] &^ st.logged[0]
	if p.in.gone {
		want &= forkCore // freed: the forks are empty
	}
	if want == 0 {
		t.items[k] = st
		return
	}
	st.logged[0] |= want
	t.items[k] = st
	it := inodeItem{ino: uint64(p.ino), mode: p.in.mode, nlink: p.in.nlink, size: p.in.size}
	if want&forkCore != 0 {
		it.fields |= ILogCore
	}
	dsize, dflag := t.dforkNow(p)
	it.nextents = dsize / BmbtRecSize
	it.format = fmtExtents
	switch dflag {
	case ILogDData:
		it.format, it.nextents = fmtLocal, 0
	case ILogDev:
		it.format = fmtDev
	}
	if want&forkData != 0 && dsize > 0 {
		it.fields |= dflag
		it.dsize = dsize
	}
	if want&forkAttr != 0 && p.in.attrSF > 0 {
		if p.in.attrSF+dsize > LiteralArea { // a leaf block: the fork maps it
			it.fields |= ILogAExt
			it.asize = BmbtRecSize
		} else {
			it.fields |= ILogAData
			it.asize = p.in.attrSF
		}
	}
	if it.fields == 0 {
		return
	}
	t.b.inode(it)
}

// dforkNow is the data fork an inode item logs for p: its size and flag.
func (t *Tracker) dforkNow(p pendingInode) (int, uint32) {
	switch p.in.mode & meta.ModeType {
	case meta.ModeDir:
		d := t.dirs[p.ino]
		if d == nil {
			return sfDirHdr, ILogDData
		}
		if d.form() == formShort {
			return d.sfSize(), ILogDData
		}
		return min(LiteralArea, d.blocks()*BmbtRecSize), ILogDExt
	case meta.ModeReg:
		return min(LiteralArea, extentsOf(p.in.size)*BmbtRecSize), ILogDExt
	case meta.ModeLink:
		if p.in.target > LiteralArea {
			return BmbtRecSize, ILogDExt
		}
		return p.in.target, ILogDData
	case meta.ModeChar, meta.ModeBlock:
		return 0, ILogDev
	}
	return 0, ILogDExt
}

// dfork is the data fork size of in as the model has it.
func (t *Tracker) dfork(m *meta.Model, ino meta.Ino, in *meta.Inode) (int, uint32) {
	if in.IsDir() {
		t.dir(m, ino)
	}
	return t.dforkNow(pendingInode{ino: ino, in: nowOf(in)})
}

// buf marks bytes [off, off+n) of a buffer dirty in this op.
func (t *Tracker) buf(k key, daddr int64, blft uint16, magic uint32, off, n int) {
	blen := BlockSize / 512
	switch blft {
	case BlftAGF, BlftAGI:
		blen = sectorBlocks
	}
	if n <= 0 {
		n = 1
	}
	off = max(0, min(off, blen*512-1))
	last := min(off+n-1, blen*512-1)
	var i int
	for i = range t.bufs {
		if t.bufs[i].k == k {
			break
		}
	}
	if len(t.bufs) == 0 || t.bufs[i].k != k {
		t.bufs = append(t.bufs, pendingBuf{k: k, blkno: daddr, blen: blen, blft: blft, magic: magic})
		i = len(t.bufs) - 1
	}
	for c := off / ChunkSize; c <= last/ChunkSize; c++ {
		t.bufs[i].mask[c/32] |= 1 << (c % 32)
	}
}

// emitBuf appends the buffer item of p for this record: every chunk dirty
// since the checkpoint the first time in the record, then only chunks
// newly dirty.
func (t *Tracker) emitBuf(p *pendingBuf) {
	st := t.items[p.k]
	if st.rec != t.rec {
		st.rec, st.logged = t.rec, [maxBufChunkWords]uint32{}
	}
	var want [maxBufChunkWords]uint32
	any := false
	for w := range want {
		st.dirty[w] |= p.mask[w]
		want[w] = st.dirty[w] &^ st.logged[w]
		st.logged[w] |= want[w]
		any = any || want[w] != 0
	}
	t.items[p.k] = st
	if any {
		t.b.buf(p.blkno, p.blen, p.blft, &want, p.magic)
	}
}

// nowOf is the inode item's view of in as the model has it.
func nowOf(in *meta.Inode) inodeNow {
	n := inodeNow{mode: in.Mode, nlink: in.Nlink, size: in.Size, target: len(in.Target)}
	if len(in.Xattrs) > 0 {
		n.attrSF = attrSize(in)
	}
	return n
}

func attrSize(in *meta.Inode) int {
	if len(in.Xattrs) == 0 {
		return 0
	}
	n := sfAttrHdr
	for k, v := range in.Xattrs {
		n += sfAttrEnt + attrName(k) + len(v)
	}
	return n
}

// attrName is the length of an xattr's name as XFS stores it: without its
// namespace ("user.", "trusted.", ...), which a flag carries.
func attrName(name string) int {
	if _, rest, ok := strings.Cut(name, "."); ok {
		return len(rest)
	}
	return len(name)
}

// agOf is the allocation group of an inode: the modelled filesystem spreads
// inodes over its groups by number.
func agOf(ino meta.Ino) int { return int(uint64(ino) % AGCount) }

// recIndex is the index of ino's chunk record in its group's inode btree
// leaf (a leaf holds (4096-56)/16 = 252 records).
func recIndex(ino meta.Ino) int {
	return int(uint64(ino) / AGCount / inodesPerChunk % ((BlockSize - btreeHdr) / inobtRec))
}

// allocEnd is where the blocks of a file of size bytes end: its last
// block's end. XFS gives a growing file speculative preallocation past
// EOF, but under an fsync-heavy workload it allocates on most appends all
// the same: xfs_logprint of a dbench -F run shows the AGF and the free
// space btrees in four checkpoints out of five, and the extent list in
// nearly half the inode items.
func allocEnd(size int64) int64 {
	if size <= 0 {
		return 0
	}
	return (size + BlockSize - 1) &^ (BlockSize - 1)
}

// extentsOf is the modelled extent count of a file of size bytes: one per
// 256 KiB started.
func extentsOf(size int64) int {
	if size <= 0 {
		return 0
	}
	return int(min((size+extentBytes-1)/extentBytes, LiteralArea/BmbtRecSize))
}

func agDaddr(ag int) int64 { return int64(ag) * agBlocks * (BlockSize / 512) }

// btreeDaddr is the root block n of ag's btrees as mkfs.xfs lays them out
// (1 bnobt, 2 cntbt, 3 inobt, 4 finobt).
func btreeDaddr(ag int, n int) int64 { return agDaddr(ag) + int64(n)*(BlockSize/512) }

// dataDaddr is a made-up but stable address for block n of ino's own
// blocks (directory, attr, symlink): in ino's group, past its inodes.
func dataDaddr(ino meta.Ino, n uint64) int64 {
	ag := agOf(ino)
	return agDaddr(ag) + int64(1024+mix(uint64(ino)<<24+n)%(agBlocks-1024))*(BlockSize/512)
}

// clusterDaddr is the inode cluster buffer holding ino.
func clusterDaddr(ino uint64) int64 {
	agino := ino / AGCount
	return agDaddr(int(ino%AGCount)) + int64(64+agino/inodesPerCluster*(clusterBytes/BlockSize))*(BlockSize/512)
}

// hash is FNV-1a of a name: where its entry falls among others.
func hash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// mix scrambles a number (splitmix64's finalizer).
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
