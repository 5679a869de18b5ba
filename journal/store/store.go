package store

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/logbuf"
)

// A store is a directory (the package documentation, The store):
//
//	superblock   magic, format version, UUID, log size, default logbsize, CRC coverage
//	log          the circular log
//	checkpoint   the metadata as of a log position, replaced atomically
//	data/<ino>   the bytes of each regular file
const (
	SuperblockName = "superblock"
	LogName        = "log"
	CheckpointName = "checkpoint"
	DataDirName    = "data"

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
	// Coverage is what every log record's CRC covers (mkfs --crc); zero,
	// CoverWhole, in stores made before it was a choice.
	Coverage logbuf.Coverage
}

func (sb *Superblock) encode() []byte {
	b := make([]byte, superSize)
	copy(b, superMagic)
	binary.BigEndian.PutUint32(b[8:], sb.Version)
	copy(b[12:28], sb.UUID[:])
	binary.BigEndian.PutUint64(b[28:], uint64(sb.LogSize))
	binary.BigEndian.PutUint32(b[36:], uint32(sb.LogBSize))
	b[40] = byte(sb.Coverage)
	binary.LittleEndian.PutUint32(b[superSize-4:], cksum.Checksum(b[:superSize-4]))
	return b
}

func decodeSuperblock(b []byte, path string) (*Superblock, error) {
	if !bytes.HasPrefix(b, []byte(superMagic)) {
		return nil, fmt.Errorf("%s: not an xlogfs superblock (no %q magic at offset 0)", path, superMagic)
	}
	if len(b) != superSize {
		return nil, fmt.Errorf("%s: not an xlogfs superblock: %d bytes, want %d (truncated or extended)", path, len(b), superSize)
	}
	if got, want := binary.LittleEndian.Uint32(b[superSize-4:]), cksum.Checksum(b[:superSize-4]); got != want {
		return nil, fmt.Errorf("%s: superblock CRC mismatch: stored %#08x, computed %#08x", path, got, want)
	}
	sb := &Superblock{Version: binary.BigEndian.Uint32(b[8:])}
	copy(sb.UUID[:], b[12:28])
	sb.LogSize = int64(binary.BigEndian.Uint64(b[28:]))
	sb.LogBSize = int(binary.BigEndian.Uint32(b[36:]))
	sb.Coverage = logbuf.Coverage(b[40])
	switch {
	case sb.Version != formatVersion:
		return nil, fmt.Errorf("%s: format version %d, this xlogfs reads %d", path, sb.Version, formatVersion)
	case sb.LogSize < MinLogSize || sb.LogSize > MaxLogSize || sb.LogSize%logbuf.BBSize != 0:
		return nil, fmt.Errorf("%s: bad log size %d", path, sb.LogSize)
	case logbuf.CheckLogBSize(sb.LogBSize) != nil:
		return nil, fmt.Errorf("%s: bad default logbsize %d", path, sb.LogBSize)
	case !sb.Coverage.Valid():
		return nil, fmt.Errorf("%s: unknown CRC coverage %d at offset 40 (this xlogfs knows 0, whole, and 1, xfs)", path, b[40])
	}
	return sb, nil
}

func ReadSuperblock(st StoreFS, dir string) (*Superblock, error) {
	path := filepath.Join(dir, SuperblockName)
	b, err := ReadFile(st, path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if halfBuilt(st, dir) {
				return nil, fmt.Errorf("%s holds a half-built xlogfs store (no superblock: mkfs did not finish); "+
					"make it again with xlogfs mkfs --force", dir)
			}
			return nil, fmt.Errorf("%s is not an xlogfs store (no superblock; make one with xlogfs mkfs)", dir)
		}
		return nil, err
	}
	return decodeSuperblock(b, path)
}

func IsStore(st StoreFS, dir string) bool {
	_, err := st.Stat(filepath.Join(dir, SuperblockName))
	return err == nil
}

// storeNames are the names mkfs makes in a store, the superblock last.
var storeNames = []string{DataDirName, LogName, CheckpointName + ".tmp", CheckpointName, SuperblockName + ".tmp", SuperblockName}

// halfBuilt reports whether dir holds what an interrupted mkfs leaves: no
// superblock, nothing but names mkfs makes (and the daemon's message file),
// and data/ (if there) a directory of data files.
func halfBuilt(st StoreFS, dir string) bool {
	names, err := st.ReadDir(dir)
	if err != nil || len(names) == 0 || IsStore(st, dir) {
		return false
	}
	for _, n := range names {
		if !slices.Contains(storeNames, n) && n != daemonLogName {
			return false
		}
	}
	if info, err := st.Stat(filepath.Join(dir, DataDirName)); err == nil && !info.IsDir() {
		return false
	}
	data, _ := st.ReadDir(filepath.Join(dir, DataDirName))
	for _, n := range data {
		if _, err := strconv.ParseUint(n, 10, 64); err != nil {
			return false
		}
	}
	return true
}

// daemonLogName is where a daemonized mount writes its messages (the
// command's default; mkfs --force recognizes it as the store's).
const daemonLogName = "xlogfs.log"

// MkfsOptions are the choices mkfs makes once for the store's life.
type MkfsOptions struct {
	LogSize  int64           // 0: DefaultLogSize
	LogBSize int             // 0: the largest iclog size up to 256 KiB that suits LogSize
	Coverage logbuf.Coverage // what log records' CRCs cover (zero: CoverWhole)
	Force    bool            // recreate an existing or half-built store (never a foreign directory)
	Store    StoreFS         // the filesystem the store is made on; nil: the real one
}

// mkfsSlack is the space mkfs wants besides the log: the superblock, the
// first checkpoints, and room for data files to begin.
const mkfsSlack = 1 << 20

// Mkfs makes an empty filesystem in dir: superblock, zeroed log, and an
// initial checkpoint holding the root directory. dir may be missing or
// empty; a non-empty directory is refused unless it is an xlogfs store (or
// one mkfs left half-built) and Force is set. It checks first that the
// filesystem under dir has room for the log, and removes what it made if it
// fails part way.
func Mkfs(dir string, o MkfsOptions) (*Superblock, error) {
	st := o.Store
	if st == nil {
		st = OSFS()
	}
	if o.LogSize == 0 {
		o.LogSize = DefaultLogSize
	}
	if o.LogSize < MinLogSize || o.LogSize > MaxLogSize {
		return nil, fmt.Errorf("log size %d out of range (%d KiB to %d GiB)", o.LogSize, MinLogSize>>10, MaxLogSize>>30)
	}
	o.LogSize &^= logbuf.BBSize - 1
	if o.LogBSize == 0 {
		o.LogBSize = logbuf.MaxLogBSize
		for o.LogBSize > logbuf.MinLogBSize && !LogFits(o.LogSize, logbuf.MinLogBufs, o.LogBSize) {
			o.LogBSize /= 2
		}
	}
	if err := logbuf.CheckLogBSize(o.LogBSize); err != nil {
		return nil, err
	}
	if !o.Coverage.Valid() {
		return nil, fmt.Errorf("unknown CRC coverage %d", o.Coverage)
	}
	if !LogFits(o.LogSize, logbuf.MinLogBufs, o.LogBSize) {
		return nil, fmt.Errorf("a %d KiB log is too small for %d KiB log buffers", o.LogSize>>10, o.LogBSize>>10)
	}
	made, err := prepareDir(st, dir, o.Force, o.LogSize+mkfsSlack)
	if err != nil {
		return nil, err
	}
	sb, err := buildStore(st, dir, o)
	if err != nil {
		if cerr := cleanMkfs(st, dir, made); cerr != nil {
			return nil, fmt.Errorf("mkfs %s: %w (and removing what it made: %v)", dir, err, cerr)
		}
		return nil, fmt.Errorf("mkfs %s: %w", dir, err)
	}
	return sb, nil
}

func buildStore(st StoreFS, dir string, o MkfsOptions) (*Superblock, error) {
	sb := &Superblock{Version: formatVersion, LogSize: o.LogSize, LogBSize: o.LogBSize, Coverage: o.Coverage}
	if _, err := rand.Read(sb.UUID[:]); err != nil {
		return nil, err
	}
	if err := st.Mkdir(filepath.Join(dir, DataDirName), 0o755); err != nil {
		return nil, err
	}
	lf, err := st.OpenFile(filepath.Join(dir, LogName), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating the log: %w", err)
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
		Model: meta.NewModel(NowNanos()),
	}
	// The checkpoint's directory sync makes data/ and the log's name
	// durable too.
	if err := WriteCheckpoint(st, dir, ck); err != nil {
		return nil, err
	}
	// The superblock goes last, whole or not at all (a temporary file
	// renamed into place): a directory with one is a complete store.
	tmp := filepath.Join(dir, SuperblockName+".tmp")
	if err := writeFileSync(st, tmp, sb.encode()); err != nil {
		return nil, fmt.Errorf("writing the superblock: %w", err)
	}
	if err := st.Rename(tmp, filepath.Join(dir, SuperblockName)); err != nil {
		return nil, fmt.Errorf("writing the superblock: %w", err)
	}
	if err := st.SyncDir(dir); err != nil {
		return nil, fmt.Errorf("writing the superblock: %w", err)
	}
	return sb, nil
}

// cleanMkfs removes what a failed mkfs made: the store's files, and dir
// itself if mkfs made it.
func cleanMkfs(st StoreFS, dir string, madeDir bool) error {
	if madeDir {
		if err := RemoveAll(st, dir); err != nil {
			return err
		}
		return st.SyncDir(filepath.Dir(dir))
	}
	for _, name := range slices.Backward(storeNames) {
		if err := RemoveAll(st, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return st.SyncDir(dir)
}

// prepareDir makes dir exist and be empty, or refuses; made says it made
// dir. The filesystem under dir must have need bytes free.
func prepareDir(st StoreFS, dir string, force bool, need int64) (made bool, err error) {
	names, err := st.ReadDir(dir)
	missing := errors.Is(err, os.ErrNotExist)
	if err != nil && !missing {
		return false, err
	}
	if len(names) > 0 {
		switch {
		case IsStore(st, dir) && !force:
			return false, fmt.Errorf("%s is already an xlogfs store; use --force to recreate it (its files are lost)", dir)
		case halfBuilt(st, dir) && !force:
			return false, fmt.Errorf("%s holds a half-built xlogfs store (mkfs did not finish); use --force to make it again", dir)
		case !IsStore(st, dir) && !halfBuilt(st, dir):
			return false, fmt.Errorf("%s is not empty and is not an xlogfs store; refusing to touch it", dir)
		}
	}
	// Room for the log, asked of the nearest directory that exists.
	at := dir
	for missing && filepath.Dir(at) != at {
		at = filepath.Dir(at)
		if _, err := st.Stat(at); err == nil {
			break
		}
	}
	sp, err := st.Statfs(at)
	if err != nil {
		return false, err
	}
	// A store being recreated gives its space back first.
	var old int64
	if len(names) > 0 {
		if info, err := st.Stat(filepath.Join(dir, LogName)); err == nil {
			old = info.Size()
		}
	}
	if sp.Avail()+old < need {
		return false, fmt.Errorf("not enough space for the store in %s: it needs %s (the log and %s more), the filesystem has %s free",
			at, sizeString(need), sizeString(mkfsSlack), sizeString(sp.Avail()))
	}
	if missing {
		return MkdirAll(st, dir)
	}
	for _, name := range names {
		if name == daemonLogName {
			continue
		}
		if err := RemoveAll(st, filepath.Join(dir, name)); err != nil {
			return false, err
		}
	}
	return false, st.SyncDir(dir)
}

// sizeString writes n bytes the way the commands take sizes.
func sizeString(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// LogFits reports whether a log of logSize bytes leaves Open's headroom for
// logbufs iclogs of logbsize: the in-flight records, the wrap gap and the
// largest transaction must all fit at once with room to spare.
func LogFits(logSize int64, logbufs, logbsize int) bool {
	return logSize >= 4*int64(logbufs+1)*int64(logbsize)
}

func writeZeros(f StoreFile, n int64) error {
	zero := make([]byte, min(n, 1<<20))
	for off := int64(0); off < n; off += int64(len(zero)) {
		if _, err := f.WriteAt(zero[:min(int64(len(zero)), n-off)], off); err != nil {
			return err
		}
	}
	return nil
}
