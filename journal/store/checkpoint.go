package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/logbuf"
)

// Checkpoint is the metadata as of a point in the log. Recovery loads it
// and replays the transactions after it: those in records from TailLSN on
// whose tid is after LastTID.
type Checkpoint struct {
	Seq      uint64     // checkpoints written so far on this store
	TailLSN  logbuf.LSN // where recovery starts walking: a record position
	LastTID  uint32     // last transaction the model includes
	LogBufs  int        // iclog count of the writer of the records after TailLSN: how many can be in flight
	LogBSize int        // iclog size of that writer: the largest record it writes
	Model    *meta.Model
}

const (
	ckptMagic     = "XLGCKPT1"
	ckptHeaderLen = 8 + 4 + 8 // magic, CRC, payload length
)

func (c *Checkpoint) encode() []byte {
	var p []byte
	p = binary.AppendUvarint(p, c.Seq)
	p = binary.AppendUvarint(p, uint64(c.TailLSN))
	p = binary.AppendUvarint(p, uint64(c.LastTID))
	p = binary.AppendUvarint(p, uint64(c.LogBufs))
	p = binary.AppendUvarint(p, uint64(c.LogBSize))
	p = append(p, c.Model.Encode()...)
	b := make([]byte, ckptHeaderLen, ckptHeaderLen+len(p))
	copy(b, ckptMagic)
	binary.BigEndian.PutUint64(b[12:], uint64(len(p)))
	b = append(b, p...)
	// CRC over everything but itself (it sits at 8..12, read as zero).
	binary.LittleEndian.PutUint32(b[8:], cksum.Checksum(b))
	return b
}

// EncodedLen is the size of c's checkpoint file: what writing it needs.
func (c *Checkpoint) EncodedLen() int { return len(c.encode()) }

func DecodeCheckpoint(b []byte, path string) (*Checkpoint, error) {
	if len(b) < ckptHeaderLen || !bytes.HasPrefix(b, []byte(ckptMagic)) {
		return nil, fmt.Errorf("%s: not an xlogfs checkpoint", path)
	}
	n := binary.BigEndian.Uint64(b[12:])
	if n != uint64(len(b)-ckptHeaderLen) {
		return nil, fmt.Errorf("%s: %d payload bytes, header says %d (truncated?)", path, len(b)-ckptHeaderLen, n)
	}
	stored := binary.LittleEndian.Uint32(b[8:])
	c := bytes.Clone(b)
	clear(c[8:12])
	if computed := cksum.Checksum(c); computed != stored {
		return nil, fmt.Errorf("%s: checkpoint CRC mismatch: stored %#08x, computed %#08x", path, stored, computed)
	}
	d := meta.Decoder{B: b[ckptHeaderLen:]}
	ck := &Checkpoint{
		Seq:      d.Uvarint(),
		TailLSN:  logbuf.LSN(d.Uvarint()),
		LastTID:  d.Uint32(),
		LogBufs:  int(d.Uint32()),
		LogBSize: int(d.Uint32()),
	}
	if d.Err != nil {
		return nil, fmt.Errorf("%s: %w", path, d.Err)
	}
	m, err := meta.DecodeModel(d.B)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ck.Model = m
	if ck.LogBufs < logbuf.MinLogBufs || ck.LogBufs > logbuf.MaxLogBufs || logbuf.CheckLogBSize(ck.LogBSize) != nil {
		return nil, fmt.Errorf("%s: bad log geometry %d × %d", path, ck.LogBufs, ck.LogBSize)
	}
	return ck, nil
}

func ReadCheckpoint(st StoreFS, dir string) (*Checkpoint, error) {
	path := filepath.Join(dir, CheckpointName)
	b, err := ReadFile(st, path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: missing; the store is damaged", path)
		}
		return nil, err
	}
	return DecodeCheckpoint(b, path)
}

// WriteCheckpoint replaces DIR/checkpoint atomically: write a temporary
// file, fsync it, rename it over the old one, fsync the directory. A crash
// leaves either the old checkpoint or the new one, whole. If it fails, the
// old one is still in force, unless the rename was done: then either one
// may be found after a crash, and both are sound, since the caller moves
// the log tail only once this returned.
func WriteCheckpoint(st StoreFS, dir string, c *Checkpoint) error {
	tmp := filepath.Join(dir, CheckpointName+".tmp")
	if err := writeFileSync(st, tmp, c.encode()); err != nil {
		return fmt.Errorf("writing checkpoint: %w", err)
	}
	if err := st.Rename(tmp, filepath.Join(dir, CheckpointName)); err != nil {
		return fmt.Errorf("writing checkpoint: %w", err)
	}
	if err := st.SyncDir(dir); err != nil {
		return fmt.Errorf("writing checkpoint: %w", err)
	}
	return nil
}

func NowNanos() int64 { return time.Now().UnixNano() }
