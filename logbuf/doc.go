// Package logbuf packs and unpacks xlogfs log records. This comment is the
// definition of the record format: the layout, what the CRC covers, the
// cycle stamps and the durable watermark. Package journal's documentation
// has the rest of the on-disk story (the store, the placement of records in
// the log, and how recovery reads them).
//
// # Layout
//
// A record is laid out as XFS lays out its v2 log records
// (fs/xfs/libxfs/xfs_log_format.h: struct xlog_rec_header,
// xlog_rec_ext_header, xlog_op_header), in 512-byte basic blocks (BBSize):
//
//	block 0         xlog_rec_header      magic, cycle, LSN, tail LSN, CRC, ...
//	blocks 1..n-1   xlog_rec_ext_header  one per further 32 KiB of iclog
//	payload         op headers (xlog_op_header), each followed by its region
//
// A record comes from an iclog of logbsize bytes (a power of two from 32 KiB
// to 256 KiB, h_size) and has HeaderBlocks(logbsize) header blocks, one per
// 32 KiB of iclog, whatever its payload: 1 for 32 KiB, 8 for 256 KiB. The
// payload is zero-padded to a whole block; h_len counts the padding.
//
// The record header block, big-endian but for h_crc:
//
//	  0  h_magicno      0xFEEDBABE
//	  4  h_cycle        the cycle the record was written in
//	  8  h_version      2
//	 12  h_len          payload bytes, a whole number of blocks
//	 16  h_lsn          cycle<<32 | block of this header
//	 24  h_tail_lsn     the log's tail when the record was written
//	 32  h_crc          CRC-32C, little-endian
//	 36  h_prev_block   block of the previous record
//	 40  h_num_logops   op headers in the payload
//	 44  h_cycle_data   saved first words of payload blocks 0..63
//	300  h_fmt          1 (little-endian Linux)
//	304  h_fs_uuid      the store's UUID
//	320  h_size         iclog size (logbsize)
//	324  h_pad0         zero (XFS: padding)
//	328  h_durable_lsn  xlogfs: the durable watermark (below)
//	336  h_durable_not  xlogfs: its bitwise complement under xfs coverage, else zero
//	344  reserved       zero, to 512
//
// An extension header block holds xh_cycle at 0 and xh_cycle_data (the saved
// first words of payload blocks 64i..64i+63) at 4; the rest is zero.
//
// An op header is 12 bytes, big-endian: oh_tid (4), oh_len (4, the region's
// bytes after the header), oh_clientid (1: 0x69 XFS_TRANSACTION, or 0xaa
// XFS_LOG for the unmount record), oh_flags (1) and two zero bytes.
// Transactions are delimited as XFS delimits them: a zero-length op with
// START, the regions, a zero-length op with COMMIT, all of one tid. A region
// too big for the iclog's space is split across records (XFS's
// xlog_write_partial): the first piece has CONTINUE, the rest WAS_CONT and
// either CONTINUE again or END on the last. Reassembler puts them back
// together. The unmount record is one op of client XFS_LOG with flag
// UNMOUNT whose 8-byte region (xfs_unmount_log_format) starts with the
// big-endian magic 0x556e, the rest zero. What a transaction's regions hold
// is the journal's business: to logbuf they are bytes.
//
// An LSN is cycle<<32 | block: the record header's 512-byte block within
// the log and the cycle, the number of times the log has been written
// around, starting at 1 and skipping 0 and the header magic (NextCycle).
//
// # Cycle stamps
//
// The first word of every payload block is replaced by the record's cycle
// before checksumming ("cycle stamping", xlog_pack_data) and the saved words
// live in the headers' cycle data; recovery unstamps after verifying the CRC
// (xlog_unpack_data). So every block of a record carries its cycle: the
// header in h_cycle (after the magic), an extension header in xh_cycle, a
// payload block in its first word. A 512-byte block is written whole or not
// at all, so a block that does not carry the record's cycle was left as it
// was by a write that did not finish (a torn write); a record whose blocks
// all carry its cycle was written whole, and if it fails verification it
// was damaged since.
//
// # CRC coverage
//
// h_crc is the standard CRC-32C (Castagnoli, package cksum) of the bytes
// the store's CRC coverage covers, in order, as they are written, with
// h_crc's four bytes read as zero; it is stored little-endian. The coverage
// (cksum.Coverage) is a property of the store, chosen by mkfs --crc and
// recorded in the superblock (package journal, The store); every record of
// the store is written and verified under it. There are two:
//
//   - whole, the default and what every store made before coverage was a
//     choice holds: the record's contiguous bytes, every header block in
//     full, then the payload with its cycle stamps and its padding. It
//     covers h_pad0, the durable watermark and the reserved bytes too, so
//     every bit of a record is in the CRC.
//   - xfs: what XFS's xlog_cksum covers. The record header's first 328
//     bytes (XLOG_REC_SIZE: up to and including h_pad0), then the first 260
//     bytes (XLOG_REC_EXT_SIZE: xh_cycle and xh_cycle_data) of each of the
//     DIV_ROUND_UP(h_len, 32 KiB) − 1 extension headers whose cycle data
//     the payload needs (cksum.ExtHeaders), then the h_len bytes of
//     payload: 2 + that many regions, 328 + 260 per extension header +
//     h_len bytes.
//
// Under xfs coverage the CRC leaves out bytes 328 to 511 of the record
// header (XFS's h_reserved, which holds the durable watermark), bytes 260
// to 511 of every extension header (xh_reserved), and the extension headers
// past those h_len needs whole (a record shorter than its iclog has them: a
// 256 KiB iclog's record of 40 KiB needs one of its seven). Every bit of a
// record is still checked, by a comparison instead of the CRC, so that the
// xfs mode's crc32c calls stay xlog_cksum's: bytes 336 to 343 hold the
// bitwise complement of h_durable_lsn and must be it; the rest of
// h_reserved, every xh_reserved and the cycle data of the extension headers
// h_len does not need must be zero; and such an extension header must
// carry the record's cycle in xh_cycle, as every block of a record does
// (Uncovered). The watermark is evidence recovery acts on (below): a
// damaged one that passed would make a later record prove less, or more,
// than the log was durable, which the CRC rules out under whole coverage
// and the complement under xfs coverage (h_pad0, which xlog_cksum covers,
// has room for half an LSN). A torn write cannot part the two copies: they
// are in the record header block, written whole.
//
// Every checksum mode (cksum.Mode: one call, XFS's per-region calls, one
// call per block, or inline at copy time) computes the coverage's one
// value; they differ only in how the work is cut and when it runs. Under
// whole coverage batched makes one call, xfs one per header block and one
// for the payload. Under xfs coverage the xfs mode makes exactly
// xlog_cksum's calls over exactly its bytes for the record's h_len; batched,
// whose one call needs contiguous bytes, makes the same calls (the seed
// thread's proposal, one call over the whole buffer, is whole coverage);
// sector makes one call per 512-byte piece of each region; inline
// checksums the payload at copy time and, at seal, the header regions,
// joined with one combine. The writer zeroes h_crc before computing;
// ComputeCRC, which reads records it must not change, makes three calls
// around the field instead.
//
// A record verifies (VerifyRecord) under its store's coverage when its
// header parses (ParseHeader: magic, version 2, format 1, a valid h_size,
// h_cycle equal to h_lsn's cycle, h_len within the iclog, the ops fitting,
// the watermark below the LSN), the CRC matches (else a *CRCError) and,
// under xfs coverage, the bytes the CRC leaves out are as above (else an
// error naming the record and the byte). So under either coverage every
// byte of a record that verifies is as it was written. Unpacking (UnpackRecord) then checks what that implies for a sane writer:
// every block carries the cycle, the h_num_logops ops fit, and what follows
// the last is zero padding shorter than a block.
//
// # Log items
//
// With --log-items xfs (journal.LogItemsXFS, the default of mount) a
// transaction carries, after its logical op, the regions XFS would log
// for the same change, so that records are the size XFS's are; with
// --log-items logical it carries the op alone. Recovery replays the op
// (the first region) and checks that every further region belongs to a
// well-formed item; it never applies them. Package journal/xfsitems
// writes and checks them. The formats and sizes, from
// fs/xfs/libxfs/xfs_log_format.h (checked by fs/xfs/xfs_ondisk.h), in
// the host byte order of h_fmt (little-endian), with the 12-byte op
// header each region has and each region's length rounded up to 4 bytes
// (xlog_calc_iovec_len, fs/xfs/xfs_log.h):
//
//	inode item     xfs_inode_log_format, 56 bytes (ilf_type 0x123b, ilf_size
//	               regions, ilf_fields, ilf_dsize/asize, ilf_ino, ilf_blkno)
//	               + the v3 core, xfs_log_dinode, 176 bytes (di_magic "IN")
//	               + the data fork if dirty: inline data (a shortform
//	               directory: 6 + 8 + name per entry; a symlink's target)
//	               or the extent list, 16 bytes an extent (xfs_bmbt_rec)
//	               + the attr fork if dirty (shortform: 4 + 3 + name + value
//	               per attr; else the extent of its leaf block)
//	buffer item    xfs_buf_log_format, 20 bytes + a dirty map word per 32
//	               chunks (24 for a 4 KiB block; blf_type 0x123c, blf_size
//	               regions, the XFS_BLFT_* type in blf_flags, blf_len,
//	               blf_blkno) + one region per run of dirty 128-byte chunks
//	               (XFS_BLF_CHUNK); the AGF and AGI are 512-byte sectors
//	EFI, EFD       xfs_efi_log_format / xfs_efd_log_format: 16 bytes + 16
//	               an extent (0x1236, 0x1237)
//	icreate        xfs_icreate_log, 28 bytes (0x123f), a new inode chunk
//	trans header   xfs_trans_header, 16 bytes, "TRAN", type 40 (checkpoint)
//
// Chunk bodies are zero but for the on-disk magic at the start of chunk
// 0 (XAGF, XAGI, AB3B, XDB3, ...); cores carry the magic, mode, format,
// link count, size, extent count and inode number. They are there to be
// the size XFS logs and recognisable (logprint --transactions and --ops
// name them), not to be replayed.
//
// Which items an op dirties models XFS v5 with 4 KiB blocks, 512-byte
// inodes and four allocation groups (mkfs.xfs of 2 GiB), after the
// transactions' own accounts of what they modify (xfs_trans_resv.c):
//
//	create, mkdir,  the parent's core and its directory data, the new
//	symlink         core (a new directory's or symlink's inline fork), the
//	                AGI's counters and the inode's inode btree and free
//	                inode btree records; every 64th inode a new chunk: an
//	                icreate item and an allocation
//	link            the directory's data, both cores
//	unlink, rmdir   the directory's data, both cores; a last link puts the
//	                inode on the AGI's unlinked bucket; its free (then, or
//	                at OpFree) is xfs_inactive: an EFI and EFD for its
//	                extents with the allocation's changes, the bucket, the
//	                AGI's counters, the inode btrees' records, the core
//	rename          both directories' data, their cores, the moved inode's
//	                core (and a moved directory's ".."), a replaced target
//	                as unlink
//	write           the core; past the file's last block, an allocation
//	fallocate       and the extent list (a punched hole: a free)
//	setattr         the core; a truncate that frees blocks: a free and
//	                the extent list
//	set/removexattr the core and the attr fork (past the inode's room: an
//	                allocation and chunks of a leaf block)
//	sizefollows     the core
//
// An allocation logs the AGF's counters (chunk 0), the by-block free
// space btree record that shrinks and the by-size btree's header and the
// records shifted by a delete and an insert (a one-leaf tree of 16
// records); a free logs an EFI, the EFD that finishes it in the same
// checkpoint, and an allocation's changes. A directory takes XFS's forms
// by its size: shortform while 6 + Σ(8 + name) fits the 336-byte fork
// (the inline fork is logged), one block while its entries (12 + name,
// rounded to 8), their 8-byte hash entries, the 64-byte header, "." and
// ".." and the tail fit 4 KiB (the header chunk, the entry's chunks, the
// free space after it, the tail, and the hash entries moved by an
// insert), then data blocks with a leaf block (leaf1, then leafn blocks
// with a free index block). Where an entry falls in its block comes from
// a hash of its name; what the tracker cannot know (where XFS put an
// inode, how fragmented a file is) is fixed: an inode's group is its
// number modulo 4, a file has one extent per 256 KiB, block addresses
// are made up but stable.
//
// XFS's CIL formats each dirty item once per checkpoint (a log force
// pushes the CIL), and relogs an item with every change since it was last
// written back ("re-logging", Documentation/filesystems/xfs-delayed-
// logging-design.rst). xlogfs does the same per record, which a force
// ends as it ends a checkpoint: the first transaction of a record carries
// the transaction header; an item is logged in the first transaction of
// the record that dirties it, with everything dirtied since the last
// checkpoint (which writes the metadata back, as the AIL does): an inode
// with its core and every fork dirtied since, a buffer with every chunk
// dirtied since; a later transaction of the record logs only what became
// dirty after (a fork, new chunks). Intents (EFI, EFD, icreate) are
// logged each time.
//
// # The durable watermark
//
// h_durable_lsn is xlogfs's own field, in the first eight bytes of what XFS
// keeps as h_reserved (XFS neither writes nor checksums them; h_pad0 is
// only four bytes and is XFS's i386 padding); under xfs coverage its
// complement follows it (CRC coverage). It is the LSN of the newest
// record that was durable (synced) when this record was sealed: the log was
// durable up to and including it. Zero means none was yet, and is what
// records from before the field existed hold; a non-zero watermark is
// always below the record's own LSN. A record that fails its checks at or
// below the watermark of a later valid record had been durable, so it
// cannot be a torn write: recovery refuses to cut the log there (package
// journal, Recovery).
package logbuf
