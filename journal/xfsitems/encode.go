package xfsitems

import "encoding/binary"

// Offsets in the v3 inode core (struct xfs_log_dinode) of the fields the
// core regions fill in; the rest stays zero.
const (
	coreMode    = 2
	coreVersion = 4
	coreFormat  = 5
	coreNlink   = 16
	coreSize    = 56
	coreNext    = 76 // di_nextents
	coreIno     = 152
)

// Data fork formats (di_format, XFS_DINODE_FMT_*).
const (
	fmtDev     = 0
	fmtLocal   = 1
	fmtExtents = 2
)

// transHeader appends a checkpoint's transaction header (xfs_trans_header).
func (b *builder) transHeader() {
	r := b.region(TransHeaderSize)
	le.PutUint32(r, TransMagic)
	le.PutUint32(r[4:], TransCheckpoint)
}

// inodeItem describes one inode log item to append.
type inodeItem struct {
	ino          uint64
	fields       uint32 // ILogCore and the fork flags
	dsize, asize int
	mode         uint32
	nlink        uint32
	size         int64
	nextents     int
	format       uint8 // di_format
}

// inode appends an inode log item: the format, the core if fields has
// ILogCore, the data and attr fork regions if their flags are set.
func (b *builder) inode(it inodeItem) {
	regions := 1
	if it.fields&ILogCore != 0 {
		regions++
	}
	if it.fields&iLogDFork != 0 {
		regions++
	}
	if it.fields&iLogAFork != 0 {
		regions++
	}
	f := b.region(InodeFormatSize)
	le.PutUint16(f, TypeInode)
	le.PutUint16(f[2:], uint16(regions))
	le.PutUint32(f[4:], it.fields)
	le.PutUint16(f[8:], uint16(it.asize))
	le.PutUint16(f[10:], uint16(it.dsize))
	le.PutUint64(f[16:], it.ino)
	agino := it.ino / AGCount
	le.PutUint64(f[40:], uint64(clusterDaddr(it.ino)))
	le.PutUint32(f[48:], uint32(clusterBytes/512))
	le.PutUint32(f[52:], uint32(agino%inodesPerCluster*InodeSize))
	if it.fields&ILogCore != 0 {
		c := b.region(DinodeCoreSize)
		le.PutUint16(c, DinodeMagic)
		le.PutUint16(c[coreMode:], uint16(it.mode))
		c[coreVersion] = DinodeVersion
		c[coreFormat] = it.format
		le.PutUint32(c[coreNlink:], it.nlink)
		le.PutUint64(c[coreSize:], uint64(it.size))
		le.PutUint32(c[coreNext:], uint32(it.nextents))
		le.PutUint64(c[coreIno:], it.ino)
	}
	if it.fields&iLogDFork != 0 {
		b.region(it.dsize)
	}
	if it.fields&iLogAFork != 0 {
		b.region(it.asize)
	}
}

// buf appends a buffer log item for the chunks set in mask of a buffer
// of blen 512-byte blocks at daddr blkno: the format with its dirty map,
// then one region per run of contiguous chunks. magic, if not zero, goes
// at the start of chunk 0 when it is logged, big-endian as on disk.
func (b *builder) buf(blkno int64, blen int, blft uint16, mask *[maxBufChunkWords]uint32, magic uint32) {
	words := (blen*512/ChunkSize + 31) / 32
	runs := 0
	prev := false
	for c := 0; c < words*32; c++ {
		set := mask[c/32]&(1<<(c%32)) != 0
		if set && !prev {
			runs++
		}
		prev = set
	}
	f := b.region(BufFormatBase + 4*words)
	le.PutUint16(f, TypeBuf)
	le.PutUint16(f[2:], uint16(1+runs))
	le.PutUint16(f[4:], blft<<blftShift)
	le.PutUint16(f[6:], uint16(blen))
	le.PutUint64(f[8:], uint64(blkno))
	le.PutUint32(f[16:], uint32(words))
	for w := range words {
		le.PutUint32(f[BufFormatBase+4*w:], mask[w])
	}
	for c := 0; c < words*32; {
		if mask[c/32]&(1<<(c%32)) == 0 {
			c++
			continue
		}
		first := c
		for c < words*32 && mask[c/32]&(1<<(c%32)) != 0 {
			c++
		}
		r := b.region((c - first) * ChunkSize)
		if first == 0 && magic != 0 {
			binary.BigEndian.PutUint32(r, magic)
		}
	}
}

// extentFree appends an EFI (typ TypeEFI) or EFD (TypeEFD) for extents.
func (b *builder) extentFree(typ uint16, id uint64, extents [][2]uint64) {
	r := b.region(EFIFormatBase + ExtentSize*len(extents))
	le.PutUint16(r, typ)
	le.PutUint16(r[2:], 1)
	le.PutUint32(r[4:], uint32(len(extents)))
	le.PutUint64(r[8:], id)
	for i, e := range extents {
		le.PutUint64(r[EFIFormatBase+i*ExtentSize:], e[0])
		le.PutUint32(r[EFIFormatBase+i*ExtentSize+8:], uint32(e[1]))
	}
}

// icreate appends an inode chunk creation item (xfs_icreate_log).
func (b *builder) icreate(ag, agbno uint32) {
	r := b.region(ICreateSize)
	le.PutUint16(r, TypeICreate)
	le.PutUint16(r[2:], 1)
	be := binary.BigEndian
	be.PutUint32(r[4:], ag)
	be.PutUint32(r[8:], agbno)
	be.PutUint32(r[12:], inodesPerChunk)
	be.PutUint32(r[16:], InodeSize)
	be.PutUint32(r[20:], inodesPerChunk*InodeSize/BlockSize)
	be.PutUint32(r[24:], 1)
}
