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
	"sort"
	"strings"

	"github.com/xlogfs/xlogfs/logbuf"
)

// A store that lost only its superblock (deleted, or damaged: no magic, a
// CRC that does not verify) still has all it needs: the superblock says
// four things, and each is in the store elsewhere.
//
//   - The UUID is in every log record's header (h_fs_uuid). Every record
//     in the log carries the same one, since mkfs zeroes the log; the
//     records whose CRC verifies say which.
//   - The log size is the log file's size: mkfs makes the log exactly as
//     large as the superblock says, and nothing changes it after.
//   - The default logbsize is a choice for mounts that make none; the
//     checkpoint records the iclog size of the writer of the records after
//     it, which is the superblock's unless a mount chose another.
//   - The CRC coverage is the one the log's records verify under: a record
//     verifies under its store's only (their CRCs cover other bytes).
//
// A log with no valid record says no UUID and no coverage; then there is
// nothing either must match, and the rebuilt superblock gets a new UUID and
// whole coverage, mkfs's default.
//
// An interrupted mkfs leaves no superblock too. It is told apart by what is
// there: no checkpoint yet (mkfs writes the log, then the checkpoint, then
// the superblock), or a checkpoint as mkfs writes it (sequence 0, the root
// alone) beside a log without records and no data files, which hold nothing
// to lose. A store that was ever mounted has records in its log (at least
// the unmount record) and a later checkpoint.

// remains is what a directory without a readable superblock still holds.
type remains struct {
	ck        *Checkpoint
	ckErr     error
	ckMissing bool // no checkpoint file at all
	logSize   int64
	logErr    error
	records   int                     // log records whose CRC verifies
	uuids     map[[16]byte]int        // their h_fs_uuid, and how many carry each
	coverages map[logbuf.Coverage]int // the CRC coverages they verify under, and how many under each
	dataFiles int                     // names in data/
}

// readRemains reads dir's log and checkpoint, as far as they go. The log's
// records are counted even when its size is not one mkfs makes.
func readRemains(st StoreFS, dir string) *remains {
	r := &remains{}
	r.ck, r.ckErr = ReadCheckpoint(st, dir)
	if _, err := st.Stat(filepath.Join(dir, CheckpointName)); errors.Is(err, os.ErrNotExist) {
		r.ckMissing = true
	}
	var size int64
	size, r.logErr = logFileSize(st, dir)
	if size > 0 {
		n, uuids, covs, err := logUUIDs(st, filepath.Join(dir, LogName), size&^(logbuf.BBSize-1))
		r.records, r.uuids, r.coverages = n, uuids, covs
		if r.logErr == nil {
			r.logErr = err
		}
	}
	if r.logErr == nil {
		r.logSize = size
	}
	if names, err := st.ReadDir(filepath.Join(dir, DataDirName)); err == nil {
		r.dataFiles = len(names)
	}
	return r
}

// usable reports whether a superblock can be rebuilt from r: a log of a
// size mkfs makes, readable, and a sound checkpoint.
func (r *remains) usable() bool { return r.ck != nil && r.logErr == nil }

// fresh reports whether r is what an interrupted mkfs leaves and nothing
// more: no log record, no data file, and no checkpoint or the one mkfs
// writes. Nothing in it can be lost.
func (r *remains) fresh() bool {
	if r.records > 0 || r.dataFiles > 0 {
		return false
	}
	if r.ck == nil {
		return r.ckMissing
	}
	return r.ck.Seq == 0 && r.ck.LastTID == 0 && len(r.ck.Model.Inodes) == 1
}

// lost reports whether r is a store that lost its superblock, as against
// one mkfs did not finish: its log, checkpoint or data hold something.
func (r *remains) lost() bool { return !r.fresh() }

// describe says what r holds, for messages.
func (r *remains) describe() string {
	s := fmt.Sprintf("%s in the log", plural(r.records, "valid record"))
	switch len(r.uuids) {
	case 0:
	case 1:
		for u := range r.uuids {
			s += fmt.Sprintf(", uuid %x", u)
		}
	default:
		s += fmt.Sprintf(", %d different uuids", len(r.uuids))
	}
	if r.ck != nil {
		s += fmt.Sprintf("; checkpoint #%d, %s", r.ck.Seq, plural(len(r.ck.Model.Inodes), "inode"))
	}
	return s + "; " + plural(r.dataFiles, "data file")
}

// logFileSize is the size of dir's log file; the error says when it is
// not a size mkfs makes (the size is returned then too).
func logFileSize(st StoreFS, dir string) (int64, error) {
	path := filepath.Join(dir, LogName)
	info, err := st.Stat(path)
	switch {
	case err != nil:
		return 0, err
	case !info.Mode().IsRegular():
		return 0, fmt.Errorf("%s: not a regular file", path)
	case info.Size() < MinLogSize || info.Size() > MaxLogSize || info.Size()%logbuf.BBSize != 0:
		return info.Size(), fmt.Errorf("%s: %d bytes, not a log mkfs makes (a multiple of %d from %d KiB to %d GiB)",
			path, info.Size(), logbuf.BBSize, MinLogSize>>10, MaxLogSize>>30)
	}
	return info.Size(), nil
}

// logUUIDs finds the records in the log file whose CRC verifies under
// either coverage, wherever they are (the walk from the tail needs the
// checkpoint's window and the placement rule; any record written whole
// says the store's UUID and coverage), and counts the UUIDs they carry and
// the coverages they verify under.
func logUUIDs(st StoreFS, path string, size int64) (int, map[[16]byte]int, map[logbuf.Coverage]int, error) {
	f, err := st.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return 0, nil, nil, err
	}
	defer f.Close()
	uuids, covs := map[[16]byte]int{}, map[logbuf.Coverage]int{}
	n := 0
	const chunk = 1 << 20
	buf := make([]byte, chunk)
	for base := int64(0); base < size; base += chunk {
		m := min(chunk, size-base)
		if _, err := f.ReadAt(buf[:m], base); err != nil && !(errors.Is(err, io.EOF) && m == size-base) {
			return 0, nil, nil, fmt.Errorf("%s: reading at offset %d: %w", path, base, err)
		}
		for off := int64(0); off < m; off += logbuf.BBSize {
			b := buf[off:m]
			if binary.BigEndian.Uint32(b) != logbuf.HeaderMagic {
				continue
			}
			h, err := logbuf.ParseHeader(b)
			at := base + off
			if err != nil || int64(h.LSN.Block())*logbuf.BBSize != at || at+int64(h.RecordBytes()) > size {
				continue
			}
			var rec []byte
			if off+int64(h.RecordBytes()) <= m {
				rec = bytes.Clone(b[:h.RecordBytes()])
			} else {
				rec = make([]byte, h.RecordBytes())
				if _, err := f.ReadAt(rec, at); err != nil {
					return 0, nil, nil, fmt.Errorf("%s: reading the record at offset %d: %w", path, at, err)
				}
			}
			valid := false
			for _, cov := range []logbuf.Coverage{logbuf.CoverWhole, logbuf.CoverXFS} {
				if _, _, err := logbuf.VerifyRecord(rec, cov); err == nil {
					covs[cov]++
					valid = true
				}
			}
			if valid {
				uuids[h.UUID]++
				n++
			}
		}
	}
	return n, uuids, covs, nil
}

// ErrSuperblockSound is PlanSuperblock's answer for a store whose
// superblock reads: there is nothing to rebuild.
var ErrSuperblockSound = errors.New("the superblock is sound; nothing to rebuild")

// SuperblockPlan is the superblock RebuildSuperblock writes, and where
// each of its fields comes from.
type SuperblockPlan struct {
	Superblock Superblock
	Problem    string // what is wrong with the superblock in place
	// Records is how many valid log records carry Superblock.UUID; 0
	// means the log holds none, and the UUID is new.
	Records int
	// LogBSizeFrom says where the default logbsize comes from.
	LogBSizeFrom string
	// CoverageFrom says where the CRC coverage comes from.
	CoverageFrom string
	// Fresh: the store holds nothing yet (mkfs did not finish).
	Fresh bool
}

// PlanSuperblock works out the superblock of a store that lost it, from
// its log and checkpoint (see above), without changing anything. It
// refuses a directory that is not a store, a store whose superblock reads
// (ErrSuperblockSound) or is intact but not one this xlogfs takes, one
// that mkfs --force was remaking (make it again), and one whose log or
// checkpoint is missing or unsound, or whose records disagree on the UUID.
func PlanSuperblock(st StoreFS, dir string) (*SuperblockPlan, error) {
	path := filepath.Join(dir, SuperblockName)
	p := &SuperblockPlan{}
	b, err := ReadFile(st, path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if !halfBuilt(st, dir) {
			return nil, fmt.Errorf("%s is not an xlogfs store (no superblock, and it holds more than a store does)", dir)
		}
		p.Problem = "missing"
	case err != nil:
		return nil, err
	case isRemakeMark(b):
		return nil, errRemaking(dir)
	default:
		_, damaged, err := decodeSuperblock(b, path)
		switch {
		case err == nil:
			return nil, ErrSuperblockSound
		case !damaged:
			return nil, fmt.Errorf("%w; its CRC verifies, so it is as written: it is not rebuilt", err)
		}
		p.Problem = err.Error()
	}
	r := readRemains(st, dir)
	switch {
	case r.ckErr != nil:
		return nil, fmt.Errorf("cannot rebuild the superblock of %s: %w", dir, r.ckErr)
	case r.logErr != nil:
		return nil, fmt.Errorf("cannot rebuild the superblock of %s: %w", dir, r.logErr)
	case len(r.uuids) > 1:
		var us []string
		for u, n := range r.uuids {
			us = append(us, fmt.Sprintf("%x (%s)", u, plural(n, "record")))
		}
		sort.Strings(us)
		return nil, fmt.Errorf("cannot rebuild the superblock of %s: its log's valid records carry %d different uuids, %s; which is the store's is not known",
			dir, len(r.uuids), strings.Join(us, ", "))
	case len(r.coverages) > 1:
		return nil, fmt.Errorf("cannot rebuild the superblock of %s: of its log's valid records, %s verify under whole CRC coverage and %s under xfs; which is the store's is not known",
			dir, plural(r.coverages[logbuf.CoverWhole], "record"), plural(r.coverages[logbuf.CoverXFS], "record"))
	}
	p.Fresh = r.fresh()
	p.Superblock = Superblock{Version: formatVersion, LogSize: r.logSize, LogBSize: r.ck.LogBSize}
	p.LogBSizeFrom = "the iclog size of the checkpoint's writer"
	if !LogFits(r.logSize, logbuf.MinLogBufs, p.Superblock.LogBSize) {
		p.Superblock.LogBSize = defaultLogBSize(r.logSize)
		p.LogBSizeFrom = "the largest the log has room for, as mkfs chooses (the checkpoint's writer's is too large for it)"
	}
	for u, n := range r.uuids {
		p.Superblock.UUID, p.Records = u, n
	}
	p.CoverageFrom = "no record says: mkfs's default"
	for c := range r.coverages {
		p.Superblock.Coverage, p.CoverageFrom = c, "the one the log's valid records verify under"
	}
	if p.Records == 0 {
		if _, err := rand.Read(p.Superblock.UUID[:]); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// RebuildSuperblock writes the superblock p planned for dir (the store's
// UUID, log size and default logbsize: PlanSuperblock), whole or not at
// all as mkfs writes it, and touches nothing else. It holds the store's
// lock throughout: that of a damaged superblock still there (a process
// holding it is using the store: *InUseError), and that of the new one from
// before it takes the superblock's name until it is durable. A superblock
// that reads by then is left alone (ErrSuperblockSound).
func RebuildSuperblock(st StoreFS, dir string, p *SuperblockPlan) error {
	path := filepath.Join(dir, SuperblockName)
	if _, err := st.Stat(path); err == nil {
		l, err := Lock(st, dir)
		if err != nil {
			return err
		}
		defer l.Close()
	}
	if b, err := ReadFile(st, path); err == nil {
		if _, _, err := decodeSuperblock(b, path); err == nil {
			return ErrSuperblockSound
		}
	}
	var locked io.Closer
	err := writeSuperblock(st, dir, &p.Superblock, &locked)
	if locked != nil {
		locked.Close()
	}
	if err != nil {
		return fmt.Errorf("rebuilding the superblock of %s: %w", dir, err)
	}
	return nil
}

// defaultLogBSize is mkfs's default iclog size for a log of logSize
// bytes: the largest up to 256 KiB that it has room for.
func defaultLogBSize(logSize int64) int {
	n := logbuf.MaxLogBSize
	for n > logbuf.MinLogBSize && !LogFits(logSize, logbuf.MinLogBufs, n) {
		n /= 2
	}
	return n
}

// plural writes n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
