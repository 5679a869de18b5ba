package fusefs

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/xlogfs/xlogfs/journal"
	"github.com/xlogfs/xlogfs/journal/store"
)

// Kernel FUSE passthrough. With it, an open regular file's reads, writes,
// splices and mmaps go from the kernel straight to its data file, and
// never reach the daemon: the open's reply carries a backing id that
// stands for the data file (go-fuse's FilePassthroughFder, which registers
// the descriptor PassthroughFd gives, once per inode). The journal learns
// what those writes did to the inode's size and times from the data file
// (journal.OpenPassthrough). Only in --journal meta: --journal data must
// log every written byte. A write the kernel syncs itself (an O_SYNC or
// O_DSYNC open, pwritev2's RWF_DSYNC) is acknowledged before the journal
// learns its size; the journal marks every inode opened for writing in
// passthrough so that recovery keeps such a write's size (journal's
// passthrough notes).
//
// The kernel wants every open of an inode with a backing file to be a
// passthrough open too (it fails the open otherwise), and go-fuse makes it
// so; so in a passthrough mount every open of a regular file is one,
// O_DIRECT opens included (the kernel opens the data file O_DIRECT for
// them). Registering a backing file needs CAP_SYS_ADMIN; Mount tries one
// before it serves anything.
//
// Set-ID bits: a passthrough write by a caller without CAP_FSETID goes
// through file_remove_privs on the FUSE file. Under HANDLE_KILLPRIV_V2 the
// kernel leaves the clearing to the daemon, and what reaches it is a
// SETATTR naming no attribute at all (measured on Linux 6.18: without
// HANDLE_KILLPRIV_V2 the kernel sends the new mode itself, but then asks
// for security.capability before every write, a round trip each). Setattr
// takes such a request as the kernel's call to drop privileges for a
// write. The kernel skips the check once it has seen a file without
// set-ID bits and capabilities (S_NOSEC), so an ordinary file costs one
// GETXATTR for its first write, no more.

// PassthroughMode says whether a mount uses kernel passthrough.
type PassthroughMode uint8

const (
	// PassthroughAuto uses it when the kernel offers it, the process
	// may register backing files, and the journal is in meta mode.
	PassthroughAuto PassthroughMode = iota
	// PassthroughOn insists: the mount fails when passthrough cannot
	// be had.
	PassthroughOn
	// PassthroughOff sends every read and write through the daemon.
	PassthroughOff
)

func (m PassthroughMode) String() string {
	return [...]string{"auto", "on", "off"}[m]
}

// ParsePassthrough accepts auto, on and off.
func ParsePassthrough(s string) (PassthroughMode, error) {
	switch s {
	case "auto":
		return PassthroughAuto, nil
	case "on":
		return PassthroughOn, nil
	case "off":
		return PassthroughOff, nil
	}
	return 0, fmt.Errorf("unknown passthrough mode %q (want auto, on or off)", s)
}

// errNoPassthrough says why a mount cannot use passthrough.
type errNoPassthrough struct{ why string }

func (e *errNoPassthrough) Error() string { return e.why }

// passthroughPossible reports whether a mount of jfs served by server can
// use passthrough: meta journal, store files with descriptors, a kernel
// that offered it, and the privilege to register a backing file, which it
// tries with the store's superblock.
func passthroughPossible(server *fuse.Server, jfs *journal.FS) error {
	if jfs.Options().Journal != journal.JournalMeta {
		return &errNoPassthrough{"--journal data logs every write, so writes go through the daemon"}
	}
	if server.KernelSettings().Flags64()&fuse.CAP_PASSTHROUGH == 0 {
		return &errNoPassthrough{"the kernel does not offer FUSE passthrough (Linux 6.9 or later, CONFIG_FUSE_PASSTHROUGH)"}
	}
	f, err := jfs.OpenProbe()
	if err != nil {
		return &errNoPassthrough{fmt.Sprintf("opening a store file to try a backing file: %v", err)}
	}
	defer f.Close()
	fd, ok := store.FileFd(f)
	if !ok {
		return &errNoPassthrough{"the store's files have no descriptors (not on a real filesystem)"}
	}
	id, errno := server.RegisterBackingFd(&fuse.BackingMap{Fd: int32(fd)})
	if errno != 0 {
		why := fmt.Sprintf("registering a backing file failed: %v", errno)
		if errno == syscall.EPERM {
			why += " (it needs CAP_SYS_ADMIN: mount as root)"
		}
		return &errNoPassthrough{why}
	}
	if errno := server.UnregisterBackingFd(id); errno != 0 {
		return &errNoPassthrough{fmt.Sprintf("unregistering the trial backing file failed: %v", errno)}
	}
	return nil
}

// decidePassthrough settles the mount's passthrough mode once it is up,
// before anything reaches its files: on if possible (auto) or required
// (on), with one line saying which and why.
func (m *mount) decidePassthrough(server *fuse.Server, jfs *journal.FS, mode PassthroughMode, logf func(string, ...any)) error {
	if mode == PassthroughOff {
		logf("passthrough off (--passthrough=off): every read and write goes through the daemon")
		return nil
	}
	err := passthroughPossible(server, jfs)
	var why *errNoPassthrough
	switch {
	case err == nil:
		m.pt.Store(true)
		jfs.MarkCreates()
		logf("passthrough on: the kernel reads and writes regular files' data files directly")
		return nil
	case mode == PassthroughOn:
		return fmt.Errorf("--passthrough=on: %w", err)
	case errors.As(err, &why):
		logf("passthrough off: %v", err)
		return nil
	}
	return err
}

// ptHandle is an open whose reads and writes the kernel sends to the data
// file itself.
type ptHandle struct {
	handle
	file  store.StoreFile // the data file, open until the last release
	write bool            // the open may write
}

var (
	_ fs.FilePassthroughFder = (*ptHandle)(nil)
	_ fs.FileReleaser        = (*ptHandle)(nil)
)

// PassthroughFd gives go-fuse the data file's descriptor to register as
// the inode's backing file (at the inode's first open; the kernel holds
// its own reference from then on).
func (h *ptHandle) PassthroughFd() (int, bool) {
	fd, ok := store.FileFd(h.file)
	return int(fd), ok
}

func (h *ptHandle) Release(ctx context.Context) syscall.Errno {
	return errno(h.n.fsys.ReleasePassthrough(h.n.ino, h.write, true))
}

// daemonHandle is an open of a passthrough mount that goes through the
// daemon (see journal.OpenPassthrough), counted as such.
type daemonHandle struct{ handle }

var _ fs.FileReleaser = (*daemonHandle)(nil)

func (h *daemonHandle) Release(ctx context.Context) syscall.Errno {
	return errno(h.n.fsys.ReleasePassthrough(h.n.ino, false, false))
}

// openPassthrough opens n in a passthrough mount, counting the open: in
// passthrough, or (nil, no error) through the daemon when the journal says
// so (see journal.OpenPassthrough): an open that writes synchronously, or
// one of an inode open that way already.
func (n *node) openPassthrough(flags uint32) (*ptHandle, syscall.Errno) {
	write := flags&syscall.O_ACCMODE != syscall.O_RDONLY
	sync := write && flags&syscall.O_DSYNC != 0 // O_SYNC includes O_DSYNC
	f, err := n.fsys.OpenPassthrough(n.ino, write, sync)
	if err != nil {
		return nil, errno(err)
	}
	if f == nil {
		return nil, 0
	}
	return &ptHandle{handle: handle{n: n, direct: flags&syscall.O_DIRECT != 0}, file: f, write: write}, 0
}

// openInPassthroughMount is open in a passthrough mount: a passthrough
// open, or one through the daemon, which never keeps the page cache: the
// kernel's cache of the file may predate writes made in passthrough.
func (n *node) openInPassthroughMount(flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	h, e := n.openPassthrough(flags)
	switch {
	case e != 0:
		return nil, 0, e
	case h != nil:
		// Never FOPEN_DIRECT_IO: the kernel lets it override
		// FOPEN_PASSTHROUGH, sending every read and write to the
		// daemon. An O_DIRECT open is direct anyway: the kernel opens
		// the data file with the open's flags.
		return h, n.openFlags(flags) &^ fuse.FOPEN_DIRECT_IO, 0
	}
	return &daemonHandle{handle{n: n, direct: flags&syscall.O_DIRECT != 0}}, n.openFlags(flags) &^ fuse.FOPEN_KEEP_CACHE, 0
}
