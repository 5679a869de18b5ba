package store

import (
	"os"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// When an overwrite needs no metadata. An fsync that finds its file's
// size unchanged since the data file's last fdatasync, and every byte of
// it allocated and written on the device then, can write the data back
// without a flush of its own (sync_file_range) and let the log force's
// flush cover it: the blocks were in place, so once they reach the
// device's media they are the file's, with no metadata of the host
// filesystem to commit. That holds on filesystems that overwrite a written
// block in place: ext4 (unless it journals data: data=journal, or the
// inode's journal-data flag) and XFS (unless the extent is shared by a
// reflink, which FIEMAP says). Copy-on-write filesystems (btrfs, ZFS,
// bcachefs) allocate anew on every write, and tmpfs has no device; for
// those, and any other, overwritable answers 0, and fsync pays the data
// file's fdatasync as always.

// FIEMAP (linux/fiemap.h).
const (
	fsIocFiemap = 0xc020660b // _IOWR('f', 11, struct fiemap)

	fiemapExtentLast      = 0x0001
	fiemapExtentUnknown   = 0x0002
	fiemapExtentDelalloc  = 0x0004
	fiemapExtentEncoded   = 0x0008
	fiemapExtentEncrypted = 0x0080
	fiemapExtentNotAlign  = 0x0100
	fiemapExtentInline    = 0x0200
	fiemapExtentTail      = 0x0400
	fiemapExtentUnwritten = 0x0800
	fiemapExtentShared    = 0x2000

	// An extent with any of these is not plain written blocks in place.
	fiemapNotInPlace = fiemapExtentUnknown | fiemapExtentDelalloc | fiemapExtentEncoded | fiemapExtentEncrypted |
		fiemapExtentNotAlign | fiemapExtentInline | fiemapExtentTail | fiemapExtentUnwritten | fiemapExtentShared

	fsJournalDataFl = 0x00004000 // FS_JOURNAL_DATA_FL
)

type fiemapHeader struct {
	start, length                  uint64
	flags, mapped, count, reserved uint32
}

type fiemapExtent struct {
	logical, physical, length uint64
	reserved64                [2]uint64
	flags                     uint32
	reserved                  [3]uint32
}

// fiemapBatch is how many extents one FIEMAP call asks for.
const fiemapBatch = 64

type fiemapRequest struct {
	h fiemapHeader
	e [fiemapBatch]fiemapExtent
}

// overwritable is osFile.Overwritable: the length of f's leading run of
// plain written extents, on a filesystem that overwrites in place.
func overwritable(f *os.File) (int64, error) {
	fd := int(f.Fd())
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return 0, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	switch sfs.Type {
	case unix.XFS_SUPER_MAGIC:
	case unix.EXT4_SUPER_MAGIC:
		flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
		if err != nil || flags&fsJournalDataFl != 0 || journalsData(st.Dev) {
			return 0, nil
		}
	default:
		return 0, nil
	}
	var end int64
	for end < st.Size {
		var req fiemapRequest
		req.h = fiemapHeader{start: uint64(end), length: uint64(st.Size - end), count: fiemapBatch}
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), fsIocFiemap, uintptr(unsafe.Pointer(&req))); errno != 0 {
			if errno == unix.EOPNOTSUPP || errno == unix.ENOTTY {
				return 0, nil
			}
			return 0, errno
		}
		if req.h.mapped == 0 {
			break // a hole to the end
		}
		start := end
		for _, e := range req.e[:req.h.mapped] {
			if int64(e.logical) > end || e.flags&fiemapNotInPlace != 0 {
				return min(end, st.Size), nil // a hole, or blocks not plainly in place
			}
			end = max(end, int64(e.logical+e.length))
			if e.flags&fiemapExtentLast != 0 {
				return min(end, st.Size), nil
			}
		}
		if end == start {
			break // no progress: say no more than is known
		}
	}
	return min(end, st.Size), nil
}

// dataJournaled caches, per device, whether an ext4 mount journals data.
var dataJournaled sync.Map // dev uint64 → bool

// journalsData reports whether the ext4 filesystem on dev is mounted
// data=journal (its super options in /proc/self/mountinfo). Unknown counts
// as yes.
func journalsData(dev uint64) bool {
	if v, ok := dataJournaled.Load(dev); ok {
		return v.(bool)
	}
	yes := true
	maj, mnr := int(unix.Major(dev)), int(unix.Minor(dev))
	ms, err := mountinfo.GetMounts(func(m *mountinfo.Info) (skip, stop bool) {
		match := m.Major == maj && m.Minor == mnr
		return !match, match // the first mount of dev: its super options are every mount's
	})
	if err == nil && len(ms) > 0 {
		yes = slices.Contains(strings.Split(ms[0].VFSOptions, ","), "data=journal")
	}
	dataJournaled.Store(dev, yes)
	return yes
}
