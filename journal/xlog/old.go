package xlog

import (
	"bytes"
	"encoding/binary"

	"github.com/xlogfs/xlogfs/logbuf"
)

// OldRecords returns the records behind the tail that the log file still
// holds, oldest first: what checkpoints have made history but no record
// has overwritten yet. The log is written in a circle: the head's cycle c
// is stamped on every block before the head, the previous pass's c-1 on
// every block from the head to the end of the log. So the free part of the
// log, from the head round to the tail, holds records of c-1 from the head
// to the end, then records of c from block 0 to the tail (when the live
// part does not wrap), and a record found there belongs to the pass its
// position says. The walk takes, at each block, a record whose header
// names that block and the cycle the block must carry, and goes on after
// it; any other block (part of a record the head has overwritten the start
// of, a wrap gap, zeros) is stepped over. So it stops only where the cycle
// stops matching: at the tail, or at the head's blocks of the pass before.
// A record whose header is there but whose CRC fails is returned with Err.
func OldRecords(img []byte, s *Scan) []ScannedRecord {
	logBlocks := uint64(len(img) / logbuf.BBSize)
	head := s.Head
	cur, prev := head.cycle, PrevCycle(head.cycle)
	var out []ScannedRecord
	for d := uint64(0); d < logBlocks-s.Live; {
		b := (uint64(head.block) + d) % logBlocks
		want := cur
		if b >= uint64(head.block) {
			want = prev
		}
		off := b * logbuf.BBSize
		lsn := logbuf.MakeLSN(want, uint32(b))
		if want == 0 || binary.BigEndian.Uint32(img[off:]) != logbuf.HeaderMagic {
			d++
			continue
		}
		h, err := logbuf.ParseHeader(img[off:])
		if err != nil || h.LSN != lsn || h.Cycle != want || off+uint64(h.RecordBytes()) > uint64(len(img)) {
			d++
			continue
		}
		r := ScannedRecord{At: Pos{cycle: want, block: uint32(b)}, Offset: int64(off), Header: h, Stored: h.CRC}
		buf := bytes.Clone(img[off : off+uint64(h.RecordBytes())])
		_, crc, err := logbuf.VerifyRecord(buf, s.cov)
		r.Computed = crc
		if err == nil {
			r.Record, err = logbuf.UnpackRecord(buf, h)
		}
		if err != nil {
			r.Err = err
			out = append(out, r)
			d++
			continue
		}
		out = append(out, r)
		d += uint64(h.RecordBlocks())
	}
	return out
}

// PrevCycle is the cycle before c, as logbuf.NextCycle counts; 0 for the
// first pass, which had none before it.
func PrevCycle(c uint32) uint32 {
	if c <= 1 {
		return 0
	}
	c--
	if c == logbuf.HeaderMagic {
		c--
	}
	return c
}
