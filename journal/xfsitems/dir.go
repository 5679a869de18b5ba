package xfsitems

import "github.com/xlogfs/xlogfs/journal/meta"

// dirStat is the tracker's account of a directory's size: enough to tell
// its XFS form and where in its blocks an entry falls.
type dirStat struct {
	count int // entries, without "." and ".."
	names int // bytes of their names
	data  int // bytes of their data entries in a block
}

type dirForm uint8

const (
	formShort dirForm = iota // inline in the inode (XFS_DINODE_FMT_LOCAL)
	formBlock                // one block holding entries and their hash leaf
	formLeaf                 // data blocks, and leaf (or node) blocks
)

// entSize is a data entry's size (xfs_dir2_data_entsize with the file
// type): inode number 8, name length 1, the name, file type 1, tag 2,
// rounded up to 8.
func entSize(n int) int { return (12 + n + 7) &^ 7 }

func (d *dirStat) sfSize() int { return sfDirHdr + d.count*sfDirEnt + d.names }

func (d *dirStat) form() dirForm {
	switch {
	case d.sfSize() <= LiteralArea:
		return formShort
	case dirBlockHdr+dirDotDots+d.data+dirLeafEnt*(d.count+2)+dirTail <= BlockSize:
		return formBlock
	}
	return formLeaf
}

func (d *dirStat) dataBlocks() int {
	return (dirDotDots + d.data + BlockSize - dirBlockHdr - 1) / (BlockSize - dirBlockHdr)
}

func (d *dirStat) leafBlocks() int {
	return (dirLeafEnt*(d.count+2) + BlockSize - dirBlockHdr - 1) / (BlockSize - dirBlockHdr)
}

// blocks is the directory's block count, for its extent list: one per
// block.
func (d *dirStat) blocks() int {
	switch d.form() {
	case formShort:
		return 0
	case formBlock:
		return 1
	}
	n := d.dataBlocks() + d.leafBlocks()
	if d.leafBlocks() > 1 {
		n += 2 // node form: a da node block and a free index block
	}
	return n
}

func (d *dirStat) dataBlft() uint16 {
	if d.form() == formBlock {
		return BlftDirBlock
	}
	return BlftDirData
}

func (d *dirStat) dataMagic() uint32 {
	if d.form() == formBlock {
		return magicDir
	}
	return magicData
}

// dir returns the tracker's account of directory ino, made from the model
// the first time.
func (t *Tracker) dir(m *meta.Model, ino meta.Ino) *dirStat {
	if d := t.dirs[ino]; d != nil {
		return d
	}
	d := &dirStat{}
	if in := m.Inodes[ino]; in != nil {
		for name := range in.Entries {
			d.count++
			d.names += len(name)
			d.data += entSize(len(name))
		}
	}
	t.dirs[ino] = d
	return d
}

// dirAdd logs the addition of name to directory dir.
func (t *Tracker) dirAdd(m *meta.Model, dir meta.Ino, name string) {
	d := t.dir(m, dir)
	before := *d
	off := dirDotDots + d.data // a new entry goes after the others
	d.count++
	d.names += len(name)
	d.data += entSize(len(name))
	t.dirChange(m, dir, before, off, entSize(len(name)), hash(name), +1)
}

// dirRemove logs the removal of name from directory dir.
func (t *Tracker) dirRemove(m *meta.Model, dir meta.Ino, name string) {
	d := t.dir(m, dir)
	before := *d
	es := entSize(len(name))
	h := hash(name)
	off := dirDotDots + int(h%uint32(max(1, d.data)))&^7
	d.count = max(0, d.count-1)
	d.names = max(0, d.names-len(name))
	d.data = max(0, d.data-es)
	t.dirChange(m, dir, before, off, es, h, -1)
}

// dirReplace logs name's entry in dir taking another inode number.
func (t *Tracker) dirReplace(m *meta.Model, dir meta.Ino, name string) {
	d := t.dir(m, dir)
	h := hash(name)
	off := dirDotDots + int(h%uint32(max(1, d.data)))&^7
	t.dirChange(m, dir, *d, off, 8, h, 0)
}

// dirChange logs what changing directory dir (before: its account before
// the change) by an entry of es bytes at data offset off takes: delta is
// +1 (added), -1 (removed) or 0 (rewritten in place).
func (t *Tracker) dirChange(m *meta.Model, dir meta.Ino, before dirStat, off, es int, h uint32, delta int) {
	d := t.dirs[dir]
	f0, f1 := before.form(), d.form()
	ag := agOf(dir)
	switch {
	case f1 == formShort:
		if f0 != formShort { // back to shortform: its blocks are freed
			t.free(ag, uint64(dir), before.blocks())
		}
		t.inode(m, dir, forkData, nil)
		return
	case f0 == formShort:
		// Out of shortform (xfs_dir2_sf_to_block): a block, logged whole
		// as far as it is used.
		t.alloc(ag, uint64(dir))
		t.inode(m, dir, forkData, nil)
		k := key{k: kDirBlock, a: uint64(dir)}
		t.buf(k, dataDaddr(dir, 0), BlftDirBlock, magicDir, 0, dirBlockHdr+dirDotDots+d.data)
		leaf := dirLeafEnt*(d.count+2) + dirTail
		t.buf(k, dataDaddr(dir, 0), BlftDirBlock, magicDir, BlockSize-leaf, leaf)
		return
	case f1 == formBlock:
		if f0 == formLeaf {
			t.free(ag, uint64(dir), before.blocks()-1)
			t.inode(m, dir, forkData, nil)
		}
		k := key{k: kDirBlock, a: uint64(dir)}
		da := dataDaddr(dir, 0)
		t.buf(k, da, BlftDirBlock, magicDir, 0, dirBlockHdr)             // bestfree
		t.buf(k, da, BlftDirBlock, magicDir, dirBlockHdr+off, es)        // the entry
		t.buf(k, da, BlftDirBlock, magicDir, dirBlockHdr+off+es, 4)      // the free space after it
		t.buf(k, da, BlftDirBlock, magicDir, BlockSize-dirTail, dirTail) // the tail's counts
		leafStart := BlockSize - dirTail - dirLeafEnt*(d.count+2)
		i := int(h % uint32(d.count+2))
		switch delta {
		case +1: // inserted at i, the entries below it moved down one
			t.buf(k, da, BlftDirBlock, magicDir, leafStart, dirLeafEnt*(i+1))
		case -1: // marked stale
			t.buf(k, da, BlftDirBlock, magicDir, leafStart+dirLeafEnt*i, dirLeafEnt)
		}
		return
	}
	// Leaf or node form.
	if f0 == formBlock { // xfs_dir2_block_to_leaf: a leaf block, and the block turns data block
		t.alloc(ag, uint64(dir))
		t.inode(m, dir, forkData, nil)
	}
	nd, nl := d.dataBlocks(), d.leafBlocks()
	if nd > before.dataBlocks() || nl > before.leafBlocks() {
		t.alloc(ag, uint64(dir)+uint64(nd+nl))
		t.inode(m, dir, forkData, nil)
	}
	b := nd - 1
	boff := dirBlockHdr + off%(BlockSize-dirBlockHdr-es)
	if delta != +1 {
		b = int(h % uint32(nd))
	}
	k := key{k: kDirBlock, a: uint64(dir), b: uint64(b)}
	da := dataDaddr(dir, uint64(b))
	t.buf(k, da, BlftDirData, magicData, 0, dirBlockHdr)
	t.buf(k, da, BlftDirData, magicData, boff, es)
	t.buf(k, da, BlftDirData, magicData, boff+es, 4)
	lb := int(h>>8) % nl
	lk := key{k: kDirBlock, a: uint64(dir), b: 1<<32 + uint64(lb)}
	lda := dataDaddr(dir, 1<<32+uint64(lb))
	blft, magic := uint16(BlftDirLeaf1), uint32(magicLeaf1)
	if nl > 1 {
		blft, magic = BlftDirLeafN, magicLeafN
	}
	ents := (d.count + 2 + nl - 1) / nl
	i := int(h % uint32(ents))
	t.buf(lk, lda, blft, magic, 0, dirBlockHdr)
	if delta == +1 { // inserted at i: the entries after it moved up one
		t.buf(lk, lda, blft, magic, dirBlockHdr+dirLeafEnt*i, dirLeafEnt*(ents-i))
	} else if delta == -1 {
		t.buf(lk, lda, blft, magic, dirBlockHdr+dirLeafEnt*i, dirLeafEnt)
	}
	if nl == 1 { // leaf1: the data blocks' best free sizes at the leaf's tail
		t.buf(lk, lda, blft, magic, BlockSize-8-2*nd, 8+2*nd)
	} else { // node form: a free index block
		fk := key{k: kDirBlock, a: uint64(dir), b: 1 << 33}
		fda := dataDaddr(dir, 1<<33)
		t.buf(fk, fda, BlftDirFree, magicFree, 0, dirBlockHdr)
		t.buf(fk, fda, BlftDirFree, magicFree, dirBlockHdr+2*b, 2)
	}
}
