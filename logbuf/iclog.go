package logbuf

import (
	"encoding/binary"
	"fmt"

	"github.com/xlogfs/xlogfs/cksum"
)

var be = binary.BigEndian

// Iclog is an in-core log buffer: one log record being filled. Its buffer is
// the record as it will be written, header blocks first, so that sealing it
// (stamp + checksum) works in place and the record is written with one call.
//
// Its records are checksummed under the store's coverage (NewIclog), in
// the mode of the Summer that seals them.
//
// In inline mode (Start with an inline Summer) the stamping and most of the
// checksum move from Seal to AppendOp: each op is copied with CopyUpdate,
// every block whose first word it completes is stamped on the spot, and
// Seal only checksums the header and combines it with the CRC of the rest.
// Under CoverWhole that is the first header block: the payload's CRC
// continues that of the extension header blocks as Start leaves them, and
// the words stamping saves into them are folded in as they are saved
// (cksum.Payload.Restart, Save). Under CoverXFS the covered parts of the
// extension headers depend on the record's final length, so the payload's
// CRC starts afresh and Seal checksums the header regions h_len needs.
type Iclog struct {
	buf   []byte // logbsize bytes: hsize of header blocks, then the data area
	hsize int    // bytes of header blocks
	off   int    // payload bytes used
	nops  int    // op headers in the payload
	uuid  [16]byte
	cov   Coverage

	// inline mode, from Start to Reset
	inline  bool
	cycle   uint32        // the record's cycle, stamped as blocks fill
	stamped int           // payload blocks stamped so far
	sum     *cksum.Summer // counts the copy-time work (every mode: CopyPlain)
	pay     cksum.Payload // CRC of the extension headers and the payload so far

	// The CRC of the extension header blocks as Start leaves them (their
	// cycle, nothing else) for cycle xcycle and implementation ximpl
	// (xvalid): the payload's CRC continues it, so Seal checksums only the
	// first header block. It changes when the log wraps.
	xcrc, xcycle uint32
	ximpl        string
	xvalid       bool
}

// NewIclog returns an empty iclog of logbsize bytes for filesystem uuid,
// whose records are checksummed under coverage cov.
func NewIclog(logbsize int, uuid [16]byte, cov Coverage) (*Iclog, error) {
	if err := CheckLogBSize(logbsize); err != nil {
		return nil, err
	}
	if !cov.Valid() {
		return nil, fmt.Errorf("unknown CRC coverage %d", cov)
	}
	return &Iclog{
		buf:   make([]byte, logbsize),
		hsize: HeaderBlocks(logbsize) * BBSize,
		uuid:  uuid,
		cov:   cov,
	}, nil
}

// Coverage is the CRC coverage of the iclog's records.
func (ic *Iclog) Coverage() Coverage { return ic.cov }

// Reset empties the iclog for reuse, out of inline mode.
func (ic *Iclog) Reset() { ic.off, ic.nops, ic.inline, ic.stamped, ic.sum = 0, 0, false, 0, nil }

// Start empties the iclog for a record at cycle that sum will checksum. When
// sum's mode is inline, AppendOp stamps and checksums as it copies; the
// record must then be sealed at an LSN of that cycle (Seal undoes the stamps
// and does all the work itself otherwise).
func (ic *Iclog) Start(cycle uint32, sum *cksum.Summer) {
	ic.Reset()
	ic.sum = sum
	if sum == nil || sum.Mode() != cksum.Inline {
		return
	}
	ic.inline, ic.cycle = true, cycle
	// Stamping fills the cycle data as it goes, and Seal keeps it: no
	// saved word of an earlier record may linger there.
	clear(ic.buf[:ic.hsize])
	impl := sum.Impl()
	if ic.hsize == BBSize || ic.cov != CoverWhole {
		ic.pay.Reset(impl)
		return
	}
	// The extension headers hold their cycle and the saved words of
	// blocks 64 on (Payload.Save, from stampTo), nothing else: their CRC
	// is known now, but for those words.
	for x := BBSize; x < ic.hsize; x += BBSize {
		be.PutUint32(ic.buf[x+xoffCycle:], cycle)
	}
	if !ic.xvalid || ic.xcycle != cycle || ic.ximpl != impl.Name {
		ic.xcrc, ic.xcycle, ic.ximpl, ic.xvalid = impl.Update(0, ic.buf[BBSize:ic.hsize]), cycle, impl.Name, true
	}
	ic.pay.Restart(impl, ic.xcrc, ic.hsize-BBSize)
}

// Size is the iclog size (h_size, logbsize).
func (ic *Iclog) Size() int { return len(ic.buf) }

// HeaderBytes is the size of the header blocks of every record from this iclog.
func (ic *Iclog) HeaderBytes() int { return ic.hsize }

// Used is the number of payload bytes written so far.
func (ic *Iclog) Used() int { return ic.off }

// NumOps is the number of op headers written so far.
func (ic *Iclog) NumOps() int { return ic.nops }

// Free is the number of payload bytes still free, op headers included.
func (ic *Iclog) Free() int { return len(ic.buf) - ic.hsize - ic.off }

// Capacity is the payload capacity of an empty iclog.
func (ic *Iclog) Capacity() int { return len(ic.buf) - ic.hsize }

// RecordBytes is the on-disk size the record would have if sealed now:
// header blocks plus the payload rounded up to a block.
func (ic *Iclog) RecordBytes() int { return ic.hsize + roundBB(ic.off) }

func roundBB(n int) int { return (n + BBSize - 1) &^ (BBSize - 1) }

// AppendOp writes an op header and as much of region as fits, and returns
// how many bytes of region it took. A region that does not fit is split as
// XFS's xlog_write_partial does: the first piece carries flags|CONTINUE, and
// the caller passes cont=true for the rest, which go to later iclogs with
// WAS_CONT and either CONTINUE (more to come) or END (last piece).
//
// The caller must leave room for at least an op header: AppendOp panics if
// Free() < OpHeaderSize, which is a bug in the caller, not bad input. A
// piece is only split when at least one byte of it fits.
func (ic *Iclog) AppendOp(tid uint32, clientID, flags uint8, region []byte, cont bool) int {
	space := ic.Free() - OpHeaderSize
	if space < 0 || (space == 0 && len(region) > 0) {
		panic(fmt.Sprintf("logbuf: AppendOp with %d bytes free", ic.Free()))
	}
	n := min(len(region), space)
	switch {
	case cont && n == len(region):
		flags = FlagWasCont | FlagEnd
	case cont:
		flags = FlagWasCont | FlagContinue
	case n < len(region):
		flags |= FlagContinue
	}
	p := ic.buf[ic.hsize+ic.off:]
	be.PutUint32(p[0:], tid)
	be.PutUint32(p[4:], uint32(n))
	p[8] = clientID
	p[9] = flags
	p[10], p[11] = 0, 0
	end := ic.off + OpHeaderSize + n
	if ic.inline {
		ic.sum.Copy(&ic.pay, p[:OpHeaderSize], p[OpHeaderSize:], region[:n], func() { ic.stampTo(end) })
	} else if ic.sum != nil && n > 0 {
		// Timed, so that copy and checksum add up to the same work in
		// every mode (cksum.Stats.CopyCksumNanos); an op without a
		// region copies nothing, and is not worth the clock reads.
		ic.sum.CopyPlain(p[OpHeaderSize:], region[:n])
	} else {
		copy(p[OpHeaderSize:], region[:n])
	}
	ic.off = end
	ic.nops++
	return n
}

// stampTo stamps, in inline mode, every block whose first word now lies
// wholly before payload offset end and that is not stamped yet, as pack
// does, and tells the payload's CRC.
func (ic *Iclog) stampTo(end int) {
	for ; ic.stamped*BBSize+4 <= end; ic.stamped++ {
		saved, stamp := stampBlock(ic.buf, ic.hsize, ic.stamped, ic.cycle)
		ic.pay.Stamp(saved, stamp)
		if ic.stamped >= CycleDataSize && ic.pay.PrefixLen() > 0 { // in an extension header: the payload's prefix
			ic.pay.Save(saved, cycleDataSlot(ic.stamped)-BBSize)
		}
	}
}

// Seal turns the iclog's contents into a record ready to write at lsn: it
// zero-pads the payload to a whole block (h_len includes the padding, as in
// XFS v2 logs), fills the headers, stamps the cycle into the first word of
// every payload block (xlog_pack_data) and stores the CRC computed by sum.
// durableLSN is the durable watermark (h_durable_lsn): the newest record
// already durable, 0 if none, below lsn; under CoverXFS its complement
// goes beside it. It returns the record's bytes, which alias the iclog's
// buffer until Reset.
//
// In inline mode the payload blocks are stamped already, but for a last one
// whose first word ends in the padding, and the CRC is the header's
// combined with that of the payload kept since Start (Summer.SealRegions):
// under CoverWhole, the first header block's, the payload's CRC including
// the extension headers (one block and one shift at seal); under CoverXFS,
// the header regions h_len needs, one call each, as XFS makes them. Sealed
// at an LSN of another cycle than Start's, it puts the saved words back
// and does all the work here, as the other modes do.
func (ic *Iclog) Seal(lsn, tailLSN, durableLSN LSN, prevBlock uint32, sum *cksum.Summer) []byte {
	plen := roundBB(ic.off)
	clear(ic.buf[ic.hsize+ic.off : ic.hsize+plen])
	rec := ic.buf[:ic.hsize+plen]
	cycle := lsn.Cycle()
	if ic.inline && cycle != ic.cycle {
		unpack(ic.buf[:ic.hsize+ic.stamped*BBSize], ic.hsize)
		ic.inline, ic.stamped = false, 0
	}

	h := rec[:BBSize]
	clearHeader(h, offCycleData, ic.inline)
	be.PutUint32(h[offMagic:], HeaderMagic)
	be.PutUint32(h[offCycle:], cycle)
	be.PutUint32(h[offVersion:], Version2)
	be.PutUint32(h[offLen:], uint32(plen))
	be.PutUint64(h[offLSN:], uint64(lsn))
	be.PutUint64(h[offTailLSN:], uint64(tailLSN))
	be.PutUint32(h[offPrevBlock:], prevBlock)
	be.PutUint32(h[offNumLogOps:], uint32(ic.nops))
	be.PutUint32(h[offFmt:], FmtLinuxLE)
	copy(h[offUUID:offUUID+16], ic.uuid[:])
	be.PutUint32(h[offSize:], uint32(len(ic.buf)))
	be.PutUint64(h[offDurable:], uint64(durableLSN))
	if ic.cov == CoverXFS {
		be.PutUint64(h[offDurableX:], ^uint64(durableLSN))
	}
	for x := BBSize; x < ic.hsize; x += BBSize {
		xh := rec[x : x+BBSize]
		clearHeader(xh, xoffCycleData, ic.inline)
		be.PutUint32(xh[xoffCycle:], cycle)
	}
	var crc uint32
	pad := ic.buf[ic.hsize+ic.off : ic.hsize+plen]
	switch {
	case ic.inline && sum.Mode() == cksum.Inline && ic.cov == CoverWhole:
		// The extension headers are the payload's prefix: only the
		// first header block is left to checksum.
		crc = sum.Seal(&ic.pay, pad, rec[:ic.hsize-ic.pay.PrefixLen()], func() { ic.stampTo(plen) })
	case ic.inline && sum.Mode() == cksum.Inline:
		var regions [cksum.MaxRegions][]byte
		crc = sum.SealRegions(&ic.pay, pad, ic.cov.HeaderRegions(regions[:0], rec[:ic.hsize], plen), func() { ic.stampTo(plen) })
	case ic.inline: // stamped at copy time, summed by another mode
		crc = sum.PackRecord(rec, ic.hsize, ic.cov, func() { ic.stampTo(plen) })
	default:
		crc = sum.PackRecord(rec, ic.hsize, ic.cov, func() { pack(rec, ic.hsize, cycle) })
	}
	binary.LittleEndian.PutUint32(h[offCRC:], crc)
	return rec
}

// clearHeader zeroes a header block, keeping its cycle data (at cd) when
// keep is set: inline mode saves displaced words there as it stamps.
func clearHeader(b []byte, cd int, keep bool) {
	if !keep {
		clear(b)
		return
	}
	clear(b[:cd])
	clear(b[cd+4*CycleDataSize:])
}

// cycleDataSlot returns where the saved first word of payload block i lives:
// slot i of the record header for i < 64, else slot i%64 of extension header
// i/64 (whose block is i/64 after the record header).
func cycleDataSlot(i int) int {
	if i < CycleDataSize {
		return offCycleData + 4*i
	}
	return (i/CycleDataSize)*BBSize + xoffCycleData + 4*(i%CycleDataSize)
}

// pack stamps every payload block's first word with the cycle, saving the
// word in the headers' cycle data. A torn write then shows as a block whose
// first word is not the record's cycle; the saved words make it reversible.
func pack(rec []byte, hsize int, cycle uint32) {
	for i := 0; i*BBSize < len(rec)-hsize; i++ {
		stampBlock(rec, hsize, i, cycle)
	}
}

// stampBlock stamps payload block i of rec: its first word goes to the
// cycle data and the cycle takes its place. It returns the saved word and
// the stamp, in place.
func stampBlock(rec []byte, hsize, i int, cycle uint32) (saved, stamp []byte) {
	stamp = rec[hsize+i*BBSize:][:4]
	saved = rec[cycleDataSlot(i):][:4]
	copy(saved, stamp)
	be.PutUint32(stamp, cycle)
	return saved, stamp
}

// unpack is the inverse of pack (xlog_unpack_data).
func unpack(rec []byte, hsize int) {
	payload := rec[hsize:]
	for i := 0; i*BBSize < len(payload); i++ {
		copy(payload[i*BBSize:i*BBSize+4], rec[cycleDataSlot(i):])
	}
}

// unpackPartial is unpack for a record that may be cut short: it restores
// the blocks there are whose saved words are in rec.
func unpackPartial(rec []byte, hsize int) {
	payload := rec[hsize:]
	for i := 0; i*BBSize+4 <= len(payload) && cycleDataSlot(i)+4 <= hsize; i++ {
		copy(payload[i*BBSize:i*BBSize+4], rec[cycleDataSlot(i):])
	}
}
