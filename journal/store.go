package journal

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/logbuf"
)

// A store is a directory (DESIGN §1):
//
//	superblock   magic, format version, UUID, log size, default logbsize
//	log          the circular log
//	checkpoint   the metadata as of a log position, replaced atomically
//	data/<ino>   the bytes of each regular file
const (
	superblockName = "superblock"
	logName        = "log"
	checkpointName = "checkpoint"
	dataDirName    = "data"

	superMagic    = "XLOGFSSB"
	formatVersion = 1
	superSize     = 512

	// DefaultLogSize is mkfs's log size.
	DefaultLogSize = 64 << 20
	// MinLogSize is the smallest log mkfs makes: room for two 32 KiB
	// iclogs with the headroom Open requires.
	MinLogSize = 512 << 10
	// MaxLogSize keeps block numbers in 32 bits.
	MaxLogSize = 1 << 40
)

// Superblock is the store's fixed description, written once by Mkfs.
type Superblock struct {
	Version  uint32
	UUID     [16]byte
	LogSize  int64 // bytes, a multiple of 512
	LogBSize int   // default iclog size for mounts that do not choose one
}

func (sb *Superblock) encode() []byte {
	b := make([]byte, superSize)
	copy(b, superMagic)
	binary.BigEndian.PutUint32(b[8:], sb.Version)
	copy(b[12:28], sb.UUID[:])
	binary.BigEndian.PutUint64(b[28:], uint64(sb.LogSize))
	binary.BigEndian.PutUint32(b[36:], uint32(sb.LogBSize))
	binary.LittleEndian.PutUint32(b[superSize-4:], cksum.Checksum(b[:superSize-4]))
	return b
}

func decodeSuperblock(b []byte, path string) (*Superblock, error) {
	if len(b) != superSize || !bytes.HasPrefix(b, []byte(superMagic)) {
		return nil, fmt.Errorf("%s: not an xlogfs superblock", path)
	}
	if got, want := binary.LittleEndian.Uint32(b[superSize-4:]), cksum.Checksum(b[:superSize-4]); got != want {
		return nil, fmt.Errorf("%s: superblock CRC mismatch: stored %#08x, computed %#08x", path, got, want)
	}
	sb := &Superblock{Version: binary.BigEndian.Uint32(b[8:])}
	copy(sb.UUID[:], b[12:28])
	sb.LogSize = int64(binary.BigEndian.Uint64(b[28:]))
	sb.LogBSize = int(binary.BigEndian.Uint32(b[36:]))
	switch {
	case sb.Version != formatVersion:
		return nil, fmt.Errorf("%s: format version %d, this xlogfs reads %d", path, sb.Version, formatVersion)
	case sb.LogSize < MinLogSize || sb.LogSize > MaxLogSize || sb.LogSize%logbuf.BBSize != 0:
		return nil, fmt.Errorf("%s: bad log size %d", path, sb.LogSize)
	case logbuf.CheckLogBSize(sb.LogBSize) != nil:
		return nil, fmt.Errorf("%s: bad default logbsize %d", path, sb.LogBSize)
	}
	return sb, nil
}

// ReadSuperblock reads and checks DIR/superblock.
func ReadSuperblock(dir string) (*Superblock, error) {
	path := filepath.Join(dir, superblockName)
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not an xlogfs store (no superblock; make one with xlogfs mkfs)", dir)
		}
		return nil, err
	}
	return decodeSuperblock(b, path)
}

// IsStore reports whether dir holds a superblock (valid or not).
func IsStore(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, superblockName))
	return err == nil
}

// MkfsOptions are the choices mkfs makes once for the store's life.
type MkfsOptions struct {
	LogSize  int64 // 0: DefaultLogSize
	LogBSize int   // 0: the largest iclog size up to 256 KiB that suits LogSize
	Force    bool  // recreate an existing store (never a foreign directory)
}

// Mkfs makes an empty filesystem in dir: superblock, zeroed log, and an
// initial checkpoint holding the root directory. dir may be missing or
// empty; a non-empty directory is refused unless it is an xlogfs store and
// Force is set.
func Mkfs(dir string, o MkfsOptions) (*Superblock, error) {
	if o.LogSize == 0 {
		o.LogSize = DefaultLogSize
	}
	if o.LogSize < MinLogSize || o.LogSize > MaxLogSize {
		return nil, fmt.Errorf("log size %d out of range (%d KiB to %d GiB)", o.LogSize, MinLogSize>>10, MaxLogSize>>30)
	}
	o.LogSize &^= logbuf.BBSize - 1
	if o.LogBSize == 0 {
		o.LogBSize = logbuf.MaxLogBSize
		for o.LogBSize > logbuf.MinLogBSize && !logFits(o.LogSize, logbuf.MinLogBufs, o.LogBSize) {
			o.LogBSize /= 2
		}
	}
	if err := logbuf.CheckLogBSize(o.LogBSize); err != nil {
		return nil, err
	}
	if !logFits(o.LogSize, logbuf.MinLogBufs, o.LogBSize) {
		return nil, fmt.Errorf("a %d KiB log is too small for %d KiB log buffers", o.LogSize>>10, o.LogBSize>>10)
	}
	if err := prepareDir(dir, o.Force); err != nil {
		return nil, err
	}
	sb := &Superblock{Version: formatVersion, LogSize: o.LogSize, LogBSize: o.LogBSize}
	if _, err := rand.Read(sb.UUID[:]); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, dataDirName), 0o755); err != nil {
		return nil, err
	}
	lf, err := os.OpenFile(filepath.Join(dir, logName), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	// Zeros, written for real rather than left sparse: no block carries a
	// record header, and every later log write lands on allocated,
	// initialized blocks, so a log force's fdatasync flushes data only and
	// never commits block allocations in the filesystem under the store.
	err = writeZeros(lf, o.LogSize)
	if err == nil {
		err = lf.Sync()
	}
	if cerr := lf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("creating the log: %w", err)
	}
	ck := &Checkpoint{
		TailLSN: logbuf.MakeLSN(1, 0), LogBufs: logbuf.MinLogBufs, LogBSize: o.LogBSize,
		Model: NewModel(nowNanos()),
	}
	if err := writeCheckpoint(dir, ck); err != nil {
		return nil, err
	}
	// The superblock goes last: a directory with one is a complete store.
	if err := writeFileSync(filepath.Join(dir, superblockName), sb.encode()); err != nil {
		return nil, err
	}
	return sb, syncDir(dir)
}

// prepareDir makes dir exist and be empty, or refuses.
func prepareDir(dir string, force bool) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(ents) == 0 {
		return nil
	}
	if !IsStore(dir) {
		return fmt.Errorf("%s is not empty and is not an xlogfs store; refusing to touch it", dir)
	}
	if !force {
		return fmt.Errorf("%s is already an xlogfs store; use --force to recreate it (its files are lost)", dir)
	}
	for _, name := range []string{superblockName, checkpointName, checkpointName + ".tmp", logName, dataDirName} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// logFits reports whether a log of logSize bytes leaves Open's headroom for
// logbufs iclogs of logbsize: the in-flight records, the wrap gap and the
// largest transaction must all fit at once with room to spare.
func logFits(logSize int64, logbufs, logbsize int) bool {
	return logSize >= 4*int64(logbufs+1)*int64(logbsize)
}

func writeFileSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func writeZeros(f *os.File, n int64) error {
	zero := make([]byte, min(n, 1<<20))
	for off := int64(0); off < n; off += int64(len(zero)) {
		if _, err := f.WriteAt(zero[:min(int64(len(zero)), n-off)], off); err != nil {
			return err
		}
	}
	return nil
}
