package xfsbase

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// Spec is the XFS filesystem a round makes: an image file of Size bytes in
// Dir (sparse: it takes room only as it is written), a loop device over it,
// mkfs.xfs with an internal version 2 log of LogBytes and no log stripe
// unit, mounted at Mnt with logbsize=LogBSize and logbufs=LogBufs: the log
// geometry of the xlogfs store it is compared with.
type Spec struct {
	Dir      string
	Mnt      string
	Size     int64
	LogBytes int64
	LogBSize int
	LogBufs  int
	// DirectIO asks the loop device for direct I/O on its image file, so
	// that the image's blocks are not cached a second time (as the image
	// file's pages) under XFS's own cache.
	DirectIO bool
	Mkfs     string // mkfs.xfs's path
	Losetup  string // losetup's path
	// Device, if set, is a block device to make the filesystem on instead
	// of an image and loop device of Setup's own (the bench's device with
	// delayed flushes, over its own image): Setup formats and mounts it,
	// Teardown unmounts it and leaves the device to its maker.
	Device string
}

// Image is a made and mounted XFS image.
type Image struct {
	Spec
	Path      string   // the image file
	Loop      string   // /dev/loopN
	DirectIO  bool     // direct I/O as the loop device reports it (/sys/block/loopN/loop/dio)
	MkfsArgs  []string // mkfs.xfs's arguments
	MountOpts string
	mounted   bool
}

// XFS's limits on the log buffers (logbsize, logbufs).
const (
	minLogBSize = 32 << 10
	maxLogBSize = 256 << 10
	minLogBufs  = 2
	maxLogBufs  = 8
	blockSize   = 4096 // mkfs.xfs's default filesystem block, the log's unit of size
)

// HeaderBlocks is the 512-byte blocks of a log record's header in a
// version 2 log with log buffers of logbsize bytes: one per 32 KiB of the
// buffer (the record header, then extension headers holding the cycle
// data of the rest), whatever the record holds.
func HeaderBlocks(logbsize int) int { return (logbsize + 32<<10 - 1) / (32 << 10) }

// Check says what is wrong with s's log geometry for XFS.
func (s Spec) Check() error {
	switch {
	case s.LogBSize < minLogBSize || s.LogBSize > maxLogBSize || s.LogBSize&(s.LogBSize-1) != 0:
		return fmt.Errorf("logbsize %d: XFS takes a power of two from 32k to 256k", s.LogBSize)
	case s.LogBufs < minLogBufs || s.LogBufs > maxLogBufs:
		return fmt.Errorf("logbufs %d: XFS takes 2 to 8", s.LogBufs)
	case s.LogBytes < blockSize:
		return fmt.Errorf("log size %d: too small", s.LogBytes)
	case s.Size < 4*s.LogBytes:
		return fmt.Errorf("image size %d: too small for a %d-byte log", s.Size, s.LogBytes)
	}
	return nil
}

// Setup makes, loop-attaches, formats and mounts the image. On an error it
// undoes what it did.
func Setup(s Spec) (img *Image, err error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	img = &Image{Spec: s}
	if s.Device == "" {
		img.Path = filepath.Join(s.Dir, "xfs.img")
	}
	defer func() {
		if err != nil {
			if terr := img.Teardown(); terr != nil {
				err = fmt.Errorf("%w (and undoing it: %v)", err, terr)
			}
			img = nil
		}
	}()
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return img, err
	}
	if err := os.MkdirAll(s.Mnt, 0o755); err != nil {
		return img, err
	}
	dev := s.Device
	if dev == "" {
		if dev, err = img.makeLoop(); err != nil {
			return img, err
		}
	}

	// -K: no discard of the whole device first (a sparse image has
	// nothing to discard, and on disk it only costs time).
	log := s.LogBytes / blockSize * blockSize
	img.MkfsArgs = []string{"-f", "-q", "-K", "-m", "crc=1", "-l", fmt.Sprintf("size=%dk,version=2", log>>10), dev}
	if out, err := exec.Command(s.Mkfs, img.MkfsArgs...).CombinedOutput(); err != nil {
		msg, _, _ := strings.Cut(string(out), "Usage:") // not its whole usage
		return img, fmt.Errorf("mkfs.xfs %s: %v: %s", strings.Join(img.MkfsArgs, " "), err, strings.TrimSpace(msg))
	}
	img.MountOpts = fmt.Sprintf("logbsize=%dk,logbufs=%d", s.LogBSize>>10, s.LogBufs)
	if err := unix.Mount(dev, s.Mnt, "xfs", 0, img.MountOpts); err != nil {
		return img, fmt.Errorf("mount -t xfs -o %s %s %s: %w", img.MountOpts, dev, s.Mnt, err)
	}
	img.mounted = true
	return img, nil
}

// makeLoop makes the image file and a loop device over it, and returns
// the device.
func (img *Image) makeLoop() (string, error) {
	s := img.Spec
	f, err := os.OpenFile(img.Path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("making the XFS image: %w", err)
	}
	err = f.Truncate(s.Size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("sizing the XFS image %s to %d bytes: %w", img.Path, s.Size, err)
	}

	args := []string{"--find", "--show"}
	if s.DirectIO {
		args = append(args, "--direct-io=on")
	}
	out, err := exec.Command(s.Losetup, append(args, img.Path)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("losetup %s: %v: %s", strings.Join(append(args, img.Path), " "), err, strings.TrimSpace(string(out)))
	}
	// losetup prints warnings (a direct I/O it could not set) before the
	// device's name, the last line.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	img.Loop = strings.TrimSpace(lines[len(lines)-1])
	if !strings.HasPrefix(img.Loop, "/dev/loop") {
		return "", fmt.Errorf("losetup --show printed %q, not a loop device", strings.TrimSpace(string(out)))
	}
	if b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(img.Loop), "loop", "dio")); err == nil {
		img.DirectIO = strings.TrimSpace(string(b)) == "1"
	}
	return img.Loop, nil
}

// Teardown unmounts the filesystem, detaches the loop device and removes
// the image, trying every step whatever failed before, and returns what
// failed. A mount still busy after a few tries is detached lazily (it goes
// once its last user does), which the error says.
func (img *Image) Teardown() error {
	var errs []error
	if img.mounted {
		var err error
		for try := 0; try < 10; try++ {
			if err = unix.Unmount(img.Mnt, 0); err != unix.EBUSY {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err == unix.EBUSY {
			if derr := unix.Unmount(img.Mnt, unix.MNT_DETACH); derr == nil {
				err = fmt.Errorf("unmounting XFS at %s: busy; detached it lazily", img.Mnt)
			}
		}
		if err != nil && err != unix.EINVAL {
			errs = append(errs, fmt.Errorf("unmounting XFS at %s: %w", img.Mnt, err))
		}
		img.mounted = false
	}
	if img.Loop != "" {
		if out, err := exec.Command(img.Losetup, "-d", img.Loop).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("losetup -d %s: %v: %s", img.Loop, err, strings.TrimSpace(string(out))))
		}
		img.Loop = ""
	}
	if img.Path != "" {
		if err := os.Remove(img.Path); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// OtherMounts lists the XFS filesystems mounted on the machine other than
// at mnt ("SOURCE on MOUNTPOINT"), from this mount namespace's table: their
// work counts in the kernel's counters too.
func OtherMounts(mnt string) ([]string, error) {
	ms, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("xfs"))
	if err != nil {
		return nil, fmt.Errorf("other XFS mounts: %w", err)
	}
	return otherMounts(ms, mnt), nil
}

// otherMounts is OtherMounts of the table ms.
func otherMounts(ms []*mountinfo.Info, mnt string) []string {
	var out []string
	for _, m := range ms {
		if m.FSType == "xfs" && m.Mountpoint != mnt {
			out = append(out, m.Source+" on "+m.Mountpoint)
		}
	}
	return out
}
