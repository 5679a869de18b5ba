package store

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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

// decodeSuperblock decodes b, read from path. damaged says the bytes are
// not a superblock as written (no magic, a wrong length, a CRC that does
// not verify), as against one whose CRC verifies but whose contents this
// xlogfs does not take: only a damaged one is rebuilt from the log.
func decodeSuperblock(b []byte, path string) (sb *Superblock, damaged bool, err error) {
	if !bytes.HasPrefix(b, []byte(superMagic)) {
		return nil, true, fmt.Errorf("%s: not an xlogfs superblock (no %q magic at offset 0)", path, superMagic)
	}
	if len(b) != superSize {
		return nil, true, fmt.Errorf("%s: not an xlogfs superblock: %d bytes, want %d (truncated or extended)", path, len(b), superSize)
	}
	if got, want := binary.LittleEndian.Uint32(b[superSize-4:]), cksum.Checksum(b[:superSize-4]); got != want {
		return nil, true, fmt.Errorf("%s: superblock CRC mismatch: stored %#08x, computed %#08x", path, got, want)
	}
	sb = &Superblock{Version: binary.BigEndian.Uint32(b[8:])}
	copy(sb.UUID[:], b[12:28])
	sb.LogSize = int64(binary.BigEndian.Uint64(b[28:]))
	sb.LogBSize = int(binary.BigEndian.Uint32(b[36:]))
	sb.Coverage = logbuf.Coverage(b[40])
	switch {
	case sb.Version != formatVersion:
		return nil, false, fmt.Errorf("%s: format version %d, this xlogfs reads %d", path, sb.Version, formatVersion)
	case sb.LogSize < MinLogSize || sb.LogSize > MaxLogSize || sb.LogSize%logbuf.BBSize != 0:
		return nil, false, fmt.Errorf("%s: bad log size %d", path, sb.LogSize)
	case logbuf.CheckLogBSize(sb.LogBSize) != nil:
		return nil, false, fmt.Errorf("%s: bad default logbsize %d", path, sb.LogBSize)
	case !sb.Coverage.Valid():
		return nil, false, fmt.Errorf("%s: unknown CRC coverage %d at offset 40 (this xlogfs knows 0, whole, and 1, xfs)", path, b[40])
	}
	return sb, false, nil
}

// ReadSuperblock reads and checks dir's superblock. When there is none,
// or a damaged one, the error says what the directory holds and what to
// do: a store that lost only its superblock (its log and checkpoint are
// there) is rebuilt from them (RebuildSuperblock), never made again; a
// half-built one, which holds nothing yet, is made again.
func ReadSuperblock(st StoreFS, dir string) (*Superblock, error) {
	path := filepath.Join(dir, SuperblockName)
	b, err := ReadFile(st, path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, noSuperblock(st, dir)
	}
	if err != nil {
		return nil, err
	}
	if isRemakeMark(b) {
		return nil, errRemaking(dir)
	}
	sb, damaged, err := decodeSuperblock(b, path)
	if damaged {
		if r := readRemains(st, dir); r.usable() {
			return nil, fmt.Errorf("%w; the store's log and checkpoint are there (%s): rebuild the superblock from them with 'xlogfs check --rebuild-superblock %s'",
				err, r.describe(), dir)
		}
	}
	return sb, err
}

// noSuperblock is ReadSuperblock's error for a directory without one.
func noSuperblock(st StoreFS, dir string) error {
	if !halfBuilt(st, dir) {
		return fmt.Errorf("%s is not an xlogfs store (no superblock; make one with xlogfs mkfs)", dir)
	}
	switch r := readRemains(st, dir); {
	case r.lost() && r.usable():
		return fmt.Errorf("%s is an xlogfs store that lost its superblock: its log and checkpoint are there (%s); "+
			"rebuild the superblock from them with 'xlogfs check --rebuild-superblock %s'", dir, r.describe(), dir)
	case r.lost():
		why := r.ckErr
		if why == nil {
			why = r.logErr
		}
		return fmt.Errorf("%s is an xlogfs store that lost its superblock (%s), and it cannot be rebuilt: %v", dir, r.describe(), why)
	case r.usable():
		return fmt.Errorf("%s holds a half-built xlogfs store (no superblock: mkfs did not finish, and its log and checkpoint hold nothing yet); "+
			"make it again with xlogfs mkfs --force, or finish it with 'xlogfs check --rebuild-superblock %s'", dir, dir)
	}
	return fmt.Errorf("%s holds a half-built xlogfs store (no superblock: mkfs did not finish); "+
		"make it again with xlogfs mkfs --force", dir)
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
//
// An existing store is remade under its lock, taken before anything is
// looked at and held until the new superblock is durable: a store that a
// mount (or a repair, or another mkfs) holds is refused, Force or not,
// with an *InUseError, and no mount can start on the store while it is
// remade. The old superblock is first overwritten in place with a mark
// saying mkfs is remaking the store, so that a crash part way leaves a
// store that says so, never the old superblock over a new log.
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
		o.LogBSize = defaultLogBSize(o.LogSize)
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
	if IsStore(st, dir) {
		lock, err := Lock(st, dir)
		if err != nil {
			return nil, err
		}
		defer lock.Close()
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
	// The superblock goes last, whole or not at all: a directory with
	// one is a complete store. It is locked until it is durable.
	var locked io.Closer
	err = writeSuperblock(st, dir, sb, &locked)
	if locked != nil {
		locked.Close()
	}
	if err != nil {
		return nil, err
	}
	return sb, nil
}

// writeSuperblock writes sb as dir's superblock, whole or not at all: a
// temporary file, synced, renamed over the old one, the directory synced.
// With locked, the temporary file is locked (exclusively) before it takes
// the superblock's name, and the lock is returned in *locked: a mount
// finding the new superblock cannot start until the caller lets it.
func writeSuperblock(st StoreFS, dir string, sb *Superblock, locked *io.Closer) error {
	tmp := filepath.Join(dir, SuperblockName+".tmp")
	if err := writeFileSync(st, tmp, sb.encode()); err != nil {
		return fmt.Errorf("writing the superblock: %w", err)
	}
	if locked != nil {
		l, err := st.Lock(tmp, true)
		if err != nil {
			return fmt.Errorf("writing the superblock: %w", err)
		}
		*locked = l
	}
	if err := st.Rename(tmp, filepath.Join(dir, SuperblockName)); err != nil {
		return fmt.Errorf("writing the superblock: %w", err)
	}
	if err := st.SyncDir(dir); err != nil {
		return fmt.Errorf("writing the superblock: %w", err)
	}
	return nil
}

// remakeMagic begins what Mkfs writes over an old superblock before it
// removes the old store: the store is being made again.
const remakeMagic = "XLOGFSMK"

func isRemakeMark(b []byte) bool { return bytes.HasPrefix(b, []byte(remakeMagic)) }

func errRemaking(dir string) error {
	return fmt.Errorf("%s holds a half-built xlogfs store (mkfs --force was making it again and did not finish); "+
		"make it again with xlogfs mkfs --force", dir)
}

// markRemaking overwrites dir's superblock in place (the file Mkfs holds
// locked) with the remake mark, durably. If that fails, it puts the old
// bytes back: the store is as it was.
func markRemaking(st StoreFS, dir string) error {
	path := filepath.Join(dir, SuperblockName)
	old, err := ReadFile(st, path)
	if err != nil {
		return err
	}
	mark := make([]byte, superSize)
	copy(mark, remakeMagic+"\nxlogfs mkfs --force is making this store again\n")
	overwrite := func(b []byte) error {
		f, err := st.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteAt(b, 0)
		if err == nil {
			err = f.Truncate(int64(len(b)))
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if err := overwrite(mark); err != nil {
		if rerr := overwrite(old); rerr != nil {
			return fmt.Errorf("marking %s as being made again: %w (and putting it back: %v)", path, err, rerr)
		}
		return fmt.Errorf("marking %s as being made again: %w", path, err)
	}
	return nil
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
// dir. The filesystem under dir must have need bytes free. An old store's
// superblock is marked (markRemaking) before anything else of it goes, and
// stays, for the new one to replace: the directory is never empty while
// Mkfs holds its lock, and never looks like a store it is not.
func prepareDir(st StoreFS, dir string, force bool, need int64) (made bool, err error) {
	names, err := st.ReadDir(dir)
	missing := errors.Is(err, os.ErrNotExist)
	if err != nil && !missing {
		return false, err
	}
	isStore := len(names) > 0 && IsStore(st, dir)
	if len(names) > 0 {
		half := !isStore && halfBuilt(st, dir)
		switch {
		case !isStore && !half:
			return false, fmt.Errorf("%s is not empty and is not an xlogfs store; refusing to touch it", dir)
		case force:
		case isStore && remakeMarked(st, dir):
			return false, fmt.Errorf("%s holds a half-built xlogfs store (mkfs --force did not finish); use --force to make it again", dir)
		case isStore:
			return false, fmt.Errorf("%s is already an xlogfs store; use --force to recreate it (its files are lost)", dir)
		case readRemains(st, dir).lost():
			return false, fmt.Errorf("%w; --force would throw the store away", noSuperblock(st, dir))
		default:
			return false, fmt.Errorf("%s holds a half-built xlogfs store (mkfs did not finish); use --force to make it again", dir)
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
	if isStore {
		if err := markRemaking(st, dir); err != nil {
			return false, err
		}
	}
	for _, name := range names {
		if name == daemonLogName || isStore && name == SuperblockName {
			continue
		}
		if err := RemoveAll(st, filepath.Join(dir, name)); err != nil {
			return false, err
		}
	}
	return false, st.SyncDir(dir)
}

// remakeMarked reports whether dir's superblock is the mark of an
// unfinished mkfs --force.
func remakeMarked(st StoreFS, dir string) bool {
	b, err := ReadFile(st, filepath.Join(dir, SuperblockName))
	return err == nil && isRemakeMark(b)
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
