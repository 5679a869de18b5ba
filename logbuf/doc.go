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
