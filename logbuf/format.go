package logbuf

import (
	"fmt"

	"github.com/xlogfs/xlogfs/cksum"
)

// Sizes, as XFS names them.
const (
	BBSize          = cksum.BlockSize // basic block
	BBShift         = 9
	HeaderMagic     = 0xFEEDBABE // XLOG_HEADER_MAGIC_NUM
	Version2        = 2          // XLOG_VERSION_2: large iclogs
	FmtLinuxLE      = 1          // XLOG_FMT_LINUX_LE
	HeaderCycleSize = 32 << 10   // payload bytes one header's cycle data covers
	CycleDataSize   = HeaderCycleSize / BBSize
	MinLogBSize     = 32 << 10  // smallest iclog xlogfs accepts (XLOG_BIG_RECORD_BSIZE)
	MaxLogBSize     = 256 << 10 // XLOG_MAX_RECORD_BSIZE
	MinLogBufs      = 2         // XLOG_MIN_ICLOGS
	MaxLogBufs      = 8         // XLOG_MAX_ICLOGS
	OpHeaderSize    = 12        // sizeof(struct xlog_op_header)
)

// Op header client ids and flags (oh_clientid, oh_flags).
const (
	ClientTransaction = 0x69 // XFS_TRANSACTION
	ClientLog         = 0xaa // XFS_LOG

	FlagStart    = 0x01 // XLOG_START_TRANS
	FlagCommit   = 0x02 // XLOG_COMMIT_TRANS
	FlagContinue = 0x04 // XLOG_CONTINUE_TRANS: region continues in the next op
	FlagWasCont  = 0x08 // XLOG_WAS_CONT_TRANS: this op continues the previous one
	FlagEnd      = 0x10 // XLOG_END_TRANS: last piece of a continued region
	FlagUnmount  = 0x20 // XLOG_UNMOUNT_TRANS

	UnmountType = 0x556e // XLOG_UNMOUNT_TYPE ("Un"), the unmount record's magic
)

// Byte offsets of struct xlog_rec_header fields (all big-endian but h_crc).
const (
	offMagic     = 0
	offCycle     = 4
	offVersion   = 8
	offLen       = 12
	offLSN       = 16
	offTailLSN   = 24
	offCRC       = 32 // little-endian
	offPrevBlock = 36
	offNumLogOps = 40
	offCycleData = 44 // [64]uint32
	offFmt       = 300
	offUUID      = 304 // [16]byte
	offSize      = 320
	offPad0      = 324
	offDurable   = 328 // h_durable_lsn: xlogfs's durable watermark, in XFS's h_reserved
	offDurableX  = 336 // its bitwise complement under CoverXFS (zero under CoverWhole)
	offReserved  = 344 // to 512
)

// CRC coverage: what a record's CRC covers, a property of the store (see
// the package documentation, CRC coverage, and cksum.Coverage).
type Coverage = cksum.Coverage

const (
	CoverWhole = cksum.CoverWhole // every header block in full, then the payload
	CoverXFS   = cksum.CoverXFS   // xlog_cksum's regions
)

// The header layout is XFS's, which cksum.CoverXFS knows by its sizes.
var _ = [1]struct{}{}[offDurable-cksum.RecHeaderSize]
var _ = [1]struct{}{}[xoffReserved-cksum.ExtHeaderSize]
var _ = [1]struct{}{}[HeaderCycleSize-cksum.HeaderCycleSize]

// Byte offsets of struct xlog_rec_ext_header fields.
const (
	xoffCycle     = 0
	xoffCycleData = 4 // [64]uint32
	xoffReserved  = 260
)

// LSN is a log sequence number: cycle<<32 | block, block being the 512-byte
// block of the record header within the log (xlog_assign_lsn).
type LSN uint64

// MakeLSN assembles an LSN.
func MakeLSN(cycle, block uint32) LSN { return LSN(cycle)<<32 | LSN(block) }

// Cycle is CYCLE_LSN.
func (l LSN) Cycle() uint32 { return uint32(l >> 32) }

// Block is BLOCK_LSN.
func (l LSN) Block() uint32 { return uint32(l) }

// String prints the LSN as xfs_logprint does: cycle,block.
func (l LSN) String() string { return fmt.Sprintf("%d,%d", l.Cycle(), l.Block()) }

// HeaderBlocks is the number of header blocks (record header plus extension
// headers) of a record from an iclog of logbsize bytes: one per 32 KiB.
func HeaderBlocks(logbsize int) int { return (logbsize + HeaderCycleSize - 1) / HeaderCycleSize }

// CheckLogBSize reports whether logbsize is a valid iclog size: a power of
// two from 32 KiB to 256 KiB.
func CheckLogBSize(logbsize int) error {
	if logbsize < MinLogBSize || logbsize > MaxLogBSize || logbsize&(logbsize-1) != 0 {
		return fmt.Errorf("logbsize %d: must be a power of two from 32 KiB to 256 KiB", logbsize)
	}
	return nil
}

// NextCycle returns the cycle after c, skipping 0 (the value of a never
// written block) and the header magic (which xlog_get_cycle would mistake for
// a header), as XFS's xlog_state_switch_iclogs does.
func NextCycle(c uint32) uint32 {
	c++
	if c == HeaderMagic {
		c++
	}
	if c == 0 {
		c = 1
	}
	return c
}
