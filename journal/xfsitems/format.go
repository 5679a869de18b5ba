package xfsitems

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strings"
)

// Log item types (xfs_log_format.h: XFS_LI_*) and the magic numbers the
// item regions carry. Log item formats are written in the host's byte
// order, which for xlogfs records (h_fmt XLOG_FMT_LINUX_LE) is
// little-endian; the icreate item's fields after its type and size are
// big-endian, as XFS declares them (__be32).
const (
	TypeEFI     = 0x1236 // XFS_LI_EFI: extent free intent
	TypeEFD     = 0x1237 // XFS_LI_EFD: extent free done
	TypeInode   = 0x123b // XFS_LI_INODE
	TypeBuf     = 0x123c // XFS_LI_BUF
	TypeICreate = 0x123f // XFS_LI_ICREATE

	TransMagic      = 0x5452414e // XFS_TRANS_HEADER_MAGIC, "TRAN"
	TransCheckpoint = 40         // XFS_TRANS_CHECKPOINT, the only th_type of a CIL checkpoint
	DinodeMagic     = 0x494e     // XFS_DINODE_MAGIC, "IN"
	DinodeVersion   = 3          // v3 (v5 filesystem) inodes
)

// Sizes of the log item formats, as XFS checks them (xfs_ondisk.h:
// XFS_CHECK_STRUCT_SIZE) or lays them out (xfs_log_format.h).
const (
	InodeFormatSize  = 56  // struct xfs_inode_log_format (64-bit layout)
	DinodeCoreSize   = 176 // struct xfs_log_dinode, v3 inodes
	BufFormatBase    = 20  // offsetof(struct xfs_buf_log_format, blf_data_map)
	ChunkSize        = 128 // XFS_BLF_CHUNK: the granule of a buffer's dirty map
	EFIFormatBase    = 16  // struct xfs_efi_log_format without its extents
	ExtentSize       = 16  // struct xfs_extent (64-bit layout, padded)
	ICreateSize      = 28  // struct xfs_icreate_log
	TransHeaderSize  = 16  // struct xfs_trans_header
	BmbtRecSize      = 16  // struct xfs_bmbt_rec: one extent of an inode's extent list
	maxBufMapWords   = 16  // 64 KiB (XFS_MAX_BLOCKSIZE) / 128 / 32: the widest dirty map
	maxBufChunkWords = 4   // the widest this package writes: a 16 KiB inode cluster buffer
)

// Fields of an inode log item (ilf_fields, XFS_ILOG_*).
const (
	ILogCore   = 0x001 // XFS_ILOG_CORE
	ILogDData  = 0x002 // XFS_ILOG_DDATA: local (inline) data fork
	ILogDExt   = 0x004 // XFS_ILOG_DEXT: data fork extent list
	ILogDBroot = 0x008 // XFS_ILOG_DBROOT
	ILogDev    = 0x010 // XFS_ILOG_DEV
	ILogAData  = 0x040 // XFS_ILOG_ADATA: local attr fork
	ILogAExt   = 0x080 // XFS_ILOG_AEXT
	ILogABroot = 0x100 // XFS_ILOG_ABROOT

	iLogDFork = ILogDData | ILogDExt | ILogDBroot
	iLogAFork = ILogAData | ILogAExt | ILogABroot
	iLogKnown = ILogCore | iLogDFork | ILogDev | iLogAFork
)

// Buffer types (enum xfs_blft), kept in the top five bits of blf_flags
// (XFS_BLFT_SHIFT 11).
const (
	BlftBtree    = 4  // XFS_BLFT_BTREE_BUF
	BlftAGF      = 5  // XFS_BLFT_AGF_BUF
	BlftAGI      = 7  // XFS_BLFT_AGI_BUF
	BlftDino     = 8  // XFS_BLFT_DINO_BUF
	BlftSymlink  = 9  // XFS_BLFT_SYMLINK_BUF
	BlftDirBlock = 10 // XFS_BLFT_DIR_BLOCK_BUF
	BlftDirData  = 11 // XFS_BLFT_DIR_DATA_BUF
	BlftDirFree  = 12 // XFS_BLFT_DIR_FREE_BUF
	BlftDirLeaf1 = 13 // XFS_BLFT_DIR_LEAF1_BUF
	BlftDirLeafN = 14 // XFS_BLFT_DIR_LEAFN_BUF
	BlftAttrLeaf = 16 // XFS_BLFT_ATTR_LEAF_BUF
	blftShift    = 11
)

var blftNames = map[uint16]string{
	BlftBtree: "btree", BlftAGF: "agf", BlftAGI: "agi", BlftDino: "inode-cluster", BlftSymlink: "symlink",
	BlftDirBlock: "dir-block", BlftDirData: "dir-data", BlftDirFree: "dir-free", BlftDirLeaf1: "dir-leaf1",
	BlftDirLeafN: "dir-leafn", BlftAttrLeaf: "attr-leaf",
}

var le = binary.LittleEndian

// RegionLen is the length a region of n bytes takes in the log: XFS rounds
// every log iovec up to 4 bytes (xlog_calc_iovec_len), zeroing the tail.
func RegionLen(n int) int { return (n + 3) &^ 3 }

// builder packs the regions of one transaction into one buffer it reuses.
type builder struct {
	data []byte
	ends []int
}

func (b *builder) reset() { b.data, b.ends = b.data[:0], b.ends[:0] }

// region appends a zeroed region of RegionLen(n) bytes and returns it; it
// is valid until the next call.
func (b *builder) region(n int) []byte {
	n = RegionLen(n)
	start := len(b.data)
	b.data = append(b.data, make([]byte, n)...)
	b.ends = append(b.ends, len(b.data))
	return b.data[start:]
}

// appendTo appends the regions to out.
func (b *builder) appendTo(out [][]byte) [][]byte {
	start := 0
	for _, e := range b.ends {
		out = append(out, b.data[start:e:e])
		start = e
	}
	return out
}

// Item is one log item as Parse found it: enough to name it and to count
// its bytes.
type Item struct {
	Type    uint16 // TypeInode, ... ; 0 for a transaction header
	Regions int    // regions it took, its format region included
	Bytes   int    // bytes of those regions, without op headers

	Ino            uint64 // inode items: ilf_ino
	Fields         uint32 // inode items: ilf_fields
	DSize, ASize   int    // inode items: ilf_dsize, ilf_asize
	Blkno          int64  // buffer items: blf_blkno; inode items: ilf_blkno
	BufLen         int    // buffer items: blf_len, in 512-byte blocks
	BufType        uint16 // buffer items: XFS_BLFT_* from blf_flags
	Chunks         []int  // buffer items: the dirty 128-byte chunks logged
	ID             uint64 // EFI: efi_id; EFD: efd_efi_id
	Extents        [][2]uint64
	AG, AGBno, Cnt uint32 // icreate: icl_ag, icl_agbno, icl_count
}

func (it Item) String() string {
	switch it.Type {
	case 0:
		return "trans header (TRAN, checkpoint)"
	case TypeInode:
		s := fmt.Sprintf("inode ino %d", it.Ino)
		var parts []string
		for _, f := range []struct {
			bit  uint32
			name string
		}{{ILogCore, "core"}, {ILogDData, "ddata"}, {ILogDExt, "dext"}, {ILogDBroot, "dbroot"}, {ILogDev, "dev"}, {ILogAData, "adata"}, {ILogAExt, "aext"}, {ILogABroot, "abroot"}} {
			if it.Fields&f.bit != 0 {
				parts = append(parts, f.name)
			}
		}
		s += " " + strings.Join(parts, "+")
		if it.DSize > 0 {
			s += fmt.Sprintf(" dsize %d", it.DSize)
		}
		if it.ASize > 0 {
			s += fmt.Sprintf(" asize %d", it.ASize)
		}
		return s
	case TypeBuf:
		name := blftNames[it.BufType]
		if name == "" {
			name = fmt.Sprintf("type %d", it.BufType)
		}
		return fmt.Sprintf("buf %s blkno %d len %d chunks %s", name, it.Blkno, it.BufLen, chunkRanges(it.Chunks))
	case TypeEFI, TypeEFD:
		name := "efi id"
		if it.Type == TypeEFD {
			name = "efd efi id"
		}
		var ex []string
		for _, e := range it.Extents {
			ex = append(ex, fmt.Sprintf("%d+%d", e[0], e[1]))
		}
		return fmt.Sprintf("%s %#x extents %s", name, it.ID, strings.Join(ex, ","))
	case TypeICreate:
		return fmt.Sprintf("icreate ag %d agbno %d count %d", it.AG, it.AGBno, it.Cnt)
	}
	return fmt.Sprintf("item type %#x", it.Type)
}

// chunkRanges prints chunk numbers as ranges: 0-1,5.
func chunkRanges(c []int) string {
	var parts []string
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", c[i], c[j]))
		} else {
			parts = append(parts, fmt.Sprint(c[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Parse reads the item regions of one transaction (the regions after its
// logical op) and checks each is a well-formed XFS log item: a known type,
// a format region of its type's size, and as many further regions as its
// format says, each of the size it says (an inode's core, its forks; a
// buffer's dirty chunks, one region per run of contiguous chunks). It
// returns the items, or an error naming the region that is wrong.
func Parse(regions [][]byte) ([]Item, error) {
	var items []Item
	for i := 0; i < len(regions); {
		it, n, err := parseItem(regions[i:])
		if err != nil {
			return items, fmt.Errorf("item region %d: %w", i, err)
		}
		items = append(items, it)
		i += n
	}
	return items, nil
}

// parseItem parses the item starting at regions[0] and returns how many
// regions it took.
func parseItem(regions [][]byte) (Item, int, error) {
	r := regions[0]
	if len(r) == TransHeaderSize && le.Uint32(r) == TransMagic {
		if t := le.Uint32(r[4:]); t != TransCheckpoint {
			return Item{}, 0, fmt.Errorf("transaction header of type %d, want %d (checkpoint)", t, TransCheckpoint)
		}
		return Item{Regions: 1, Bytes: len(r)}, 1, nil
	}
	if len(r) < 4 {
		return Item{}, 0, fmt.Errorf("%d bytes: too short for a log item format", len(r))
	}
	typ, size := le.Uint16(r), int(le.Uint16(r[2:]))
	if size < 1 || size > len(regions) {
		return Item{}, 0, fmt.Errorf("item type %#x says it has %d regions, %d are left", typ, size, len(regions))
	}
	it := Item{Type: typ, Regions: size}
	for _, reg := range regions[:size] {
		it.Bytes += len(reg)
	}
	var err error
	switch typ {
	case TypeInode:
		err = parseInode(&it, regions[:size])
	case TypeBuf:
		err = parseBuf(&it, regions[:size])
	case TypeEFI, TypeEFD:
		err = parseEF(&it, r, size)
	case TypeICreate:
		if len(r) != ICreateSize || size != 1 {
			err = fmt.Errorf("icreate item of %d bytes and %d regions, want %d and 1", len(r), size, ICreateSize)
		}
		it.AG, it.AGBno, it.Cnt = be32(r[4:]), be32(r[8:]), be32(r[12:])
	default:
		err = fmt.Errorf("unknown log item type %#x", typ)
	}
	return it, size, err
}

func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }

func decodeInode(it *Item, f []byte) error {
	if len(f) != InodeFormatSize {
		return fmt.Errorf("inode item format of %d bytes, want %d", len(f), InodeFormatSize)
	}
	it.Fields = le.Uint32(f[4:])
	it.ASize, it.DSize = int(le.Uint16(f[8:])), int(le.Uint16(f[10:]))
	it.Ino, it.Blkno = le.Uint64(f[16:]), int64(le.Uint64(f[40:]))
	return nil
}

func parseInode(it *Item, regs [][]byte) error {
	if err := decodeInode(it, regs[0]); err != nil {
		return err
	}
	if it.Fields&^iLogKnown != 0 {
		return fmt.Errorf("inode %d: unknown ilf_fields bits %#x", it.Ino, it.Fields&^iLogKnown)
	}
	if bits.OnesCount32(it.Fields&iLogDFork) > 1 || bits.OnesCount32(it.Fields&iLogAFork) > 1 {
		return fmt.Errorf("inode %d: ilf_fields %#x logs a fork in two formats", it.Ino, it.Fields)
	}
	want := []int{InodeFormatSize}
	if it.Fields&ILogCore != 0 {
		want = append(want, DinodeCoreSize)
	}
	if it.Fields&iLogDFork != 0 && it.DSize > 0 {
		want = append(want, RegionLen(it.DSize))
	}
	if it.Fields&iLogAFork != 0 && it.ASize > 0 {
		want = append(want, RegionLen(it.ASize))
	}
	if len(regs) != len(want) {
		return fmt.Errorf("inode %d: %d regions, its fields %#x and sizes (d %d, a %d) want %d", it.Ino, len(regs), it.Fields, it.DSize, it.ASize, len(want))
	}
	for i, w := range want {
		if len(regs[i]) != w {
			return fmt.Errorf("inode %d: region %d of the item has %d bytes, want %d", it.Ino, i, len(regs[i]), w)
		}
	}
	if it.Fields&ILogCore != 0 {
		c := regs[1]
		if m := le.Uint16(c); m != DinodeMagic {
			return fmt.Errorf("inode %d: core magic %#x, want %#x", it.Ino, m, DinodeMagic)
		}
		if ino := le.Uint64(c[coreIno:]); ino != it.Ino {
			return fmt.Errorf("inode %d: core of inode %d", it.Ino, ino)
		}
	}
	return nil
}

func decodeBuf(it *Item, f []byte) (words int, err error) {
	if len(f) < BufFormatBase+4 {
		return 0, fmt.Errorf("buffer item format of %d bytes, want at least %d", len(f), BufFormatBase+4)
	}
	flags := le.Uint16(f[4:])
	it.BufType = flags >> blftShift
	it.BufLen = int(le.Uint16(f[6:]))
	it.Blkno = int64(le.Uint64(f[8:]))
	words = int(le.Uint32(f[16:]))
	if words < 1 || words > maxBufMapWords || len(f) != BufFormatBase+4*words {
		return 0, fmt.Errorf("buffer %d: map of %d words in a format of %d bytes", it.Blkno, words, len(f))
	}
	return words, nil
}

func parseBuf(it *Item, regs [][]byte) error {
	f := regs[0]
	words, err := decodeBuf(it, f)
	if err != nil {
		return err
	}
	chunks := it.BufLen * 512 / ChunkSize
	if it.BufLen < 1 || (chunks+31)/32 != words {
		return fmt.Errorf("buffer %d: %d blocks need a map of %d words, not %d", it.Blkno, it.BufLen, (chunks+31)/32, words)
	}
	var runs [][2]int // first chunk, count
	for c := 0; c < words*32; c++ {
		if le.Uint32(f[BufFormatBase+4*(c/32):])&(1<<(c%32)) == 0 {
			continue
		}
		if c >= chunks {
			return fmt.Errorf("buffer %d: chunk %d is past its %d chunks", it.Blkno, c, chunks)
		}
		it.Chunks = append(it.Chunks, c)
		if n := len(runs); n > 0 && runs[n-1][0]+runs[n-1][1] == c {
			runs[n-1][1]++
		} else {
			runs = append(runs, [2]int{c, 1})
		}
	}
	if len(runs) == 0 {
		return fmt.Errorf("buffer %d: no dirty chunk", it.Blkno)
	}
	if len(regs) != 1+len(runs) {
		return fmt.Errorf("buffer %d: %d data regions for %d runs of dirty chunks", it.Blkno, len(regs)-1, len(runs))
	}
	for i, run := range runs {
		if len(regs[1+i]) != run[1]*ChunkSize {
			return fmt.Errorf("buffer %d: region of chunks %d-%d has %d bytes, want %d", it.Blkno, run[0], run[0]+run[1]-1, len(regs[1+i]), run[1]*ChunkSize)
		}
	}
	return nil
}

func parseEF(it *Item, r []byte, size int) error {
	name := "efi"
	if it.Type == TypeEFD {
		name = "efd"
	}
	if len(r) < EFIFormatBase || size != 1 {
		return fmt.Errorf("%s item of %d bytes and %d regions", name, len(r), size)
	}
	n := int(le.Uint32(r[4:]))
	it.ID = le.Uint64(r[8:])
	if n < 1 || len(r) != EFIFormatBase+n*ExtentSize {
		return fmt.Errorf("%s %#x: %d extents in %d bytes", name, it.ID, n, len(r))
	}
	for i := range n {
		e := r[EFIFormatBase+i*ExtentSize:]
		it.Extents = append(it.Extents, [2]uint64{le.Uint64(e), uint64(le.Uint32(e[8:]))})
	}
	return nil
}

// DescribeFormat names the item whose format region r is, and how many
// regions the item takes, for a dump of op headers one at a time; ok is
// false for any other region (an item's body, or an op).
func DescribeFormat(r []byte) (desc string, regions int, ok bool) {
	if len(r) == TransHeaderSize && le.Uint32(r) == TransMagic {
		return Item{}.String(), 1, true
	}
	if len(r) < 4 {
		return "", 0, false
	}
	typ, size := le.Uint16(r), int(le.Uint16(r[2:]))
	it := Item{Type: typ}
	var err error
	switch typ {
	case TypeInode:
		err = decodeInode(&it, r)
	case TypeBuf:
		_, err = decodeBuf(&it, r)
		it.Chunks = bufChunks(r)
	case TypeEFI, TypeEFD, TypeICreate:
		var n int
		it, n, err = parseItem([][]byte{r})
		size = n
	default:
		return "", 0, false
	}
	if err != nil || size < 1 {
		return "", 0, false
	}
	return it.String(), size, true
}

// bufChunks lists the chunks set in a buffer format's dirty map.
func bufChunks(f []byte) []int {
	var out []int
	words := int(le.Uint32(f[16:]))
	for c := 0; c < words*32 && BufFormatBase+4*(c/32)+4 <= len(f); c++ {
		if le.Uint32(f[BufFormatBase+4*(c/32):])&(1<<(c%32)) != 0 {
			out = append(out, c)
		}
	}
	return out
}
