package fusefs

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/xlogfs/xlogfs/journal"
)

// Set-ID bits under FUSE_HANDLE_KILLPRIV_V2 (see journal.KillPriv for the
// rules). The kernel marks the requests whose caller lacks CAP_FSETID:
// FATTR_KILL_SUIDGID on a truncate's setattr (and on every chown), and
// FUSE_WRITE_KILL_SUIDGID on a write. go-fuse's fs package hands a setattr
// its whole request, but a write only its data and offset; killWrites
// wraps the raw filesystem to see a write's flags and tells the node's
// Write through the request's cancel channel, which is the request's own
// for as long as it is served (go-fuse makes one per request buffer).

// killWrites remembers the in-flight writes that carry FUSE_WRITE_KILL_SUIDGID.
type killWrites struct {
	fuse.RawFileSystem
	marked sync.Map // request's cancel channel → struct{}
}

func (k *killWrites) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	if in.WriteFlags&fuse.WRITE_KILL_SUIDGID != 0 {
		k.marked.Store(cancel, struct{}{})
		defer k.marked.Delete(cancel)
	}
	return k.RawFileSystem.Write(cancel, in, data)
}

func (k *killWrites) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	if in.WriteFlags&fuse.WRITE_KILL_SUIDGID != 0 {
		k.marked.Store(cancel, struct{}{})
		defer k.marked.Delete(cancel)
	}
	return k.RawFileSystem.Writev(cancel, in, data)
}

// wants reports whether the write being served in ctx carries
// FUSE_WRITE_KILL_SUIDGID.
func (k *killWrites) wants(ctx context.Context) bool {
	c, ok := ctx.(*fuse.Context)
	if k == nil || !ok || c.Cancel == nil {
		return false
	}
	_, marked := k.marked.Load(c.Cancel)
	return marked
}

// killForWrite is what a write from the caller in ctx drops: privileges if
// the kernel asked, judged by the caller's own group membership (it lacks
// CAP_FSETID, or the kernel would not have asked).
func (n *node) killForWrite(ctx context.Context) journal.KillPriv {
	if !n.m.kw.wants(ctx) {
		return journal.KillPriv{}
	}
	return journal.KillPriv{Kill: true, InGroup: callerInGroup(ctx, false)}
}

// killForFallocate is what a fallocate drops. The VFS drops privileges on
// fallocate as on a write (file_modified), but under HANDLE_KILLPRIV_V2 the
// kernel neither does it nor marks the request, so the caller's uid is all
// there is to go by: anyone but root counts as without CAP_FSETID.
func killForFallocate(ctx context.Context) journal.KillPriv {
	c, ok := fuse.FromContext(ctx)
	if !ok || c.Uid == 0 {
		return journal.KillPriv{}
	}
	return journal.KillPriv{Kill: true, InGroup: callerInGroup(ctx, false)}
}

// killForSetattr is what a setattr drops: on a truncate by a caller without
// CAP_FSETID (the kernel sets FATTR_KILL_SUIDGID), and on any chown of
// something other than a directory — by root too, as chown(2) says Linux
// does since 2.2.13 — whether or not the kernel marked it.
func (n *node) killForSetattr(ctx context.Context, in *fuse.SetAttrIn, chown bool) journal.KillPriv {
	if in.Valid&fuse.FATTR_KILL_SUIDGID == 0 && !chown {
		return journal.KillPriv{}
	}
	// A chown is marked whoever makes it, so root counts as privileged
	// there; a marked truncate comes from a caller without CAP_FSETID.
	return journal.KillPriv{Kill: true, InGroup: callerInGroup(ctx, chown)}
}

// callerInGroup reports whether the caller of ctx is in a group: its
// filesystem gid, or one of its supplementary groups (from /proc, only
// read when the first does not answer). With rootPrivileged, uid 0 counts
// as being in every group (it stands in for CAP_FSETID). A caller whose
// groups cannot be read (another PID namespace) counts as not in the
// group: then S_ISGID goes, the safe side.
func callerInGroup(ctx context.Context, rootPrivileged bool) func(gid uint32) bool {
	c, ok := fuse.FromContext(ctx)
	if !ok {
		return nil
	}
	return func(gid uint32) bool {
		if rootPrivileged && c.Uid == 0 || c.Gid == gid {
			return true
		}
		groups, err := supplementaryGroups(c.Pid)
		if err != nil {
			return false
		}
		for _, g := range groups {
			if g == gid {
				return true
			}
		}
		return false
	}
}

// supplementaryGroups reads the "Groups:" line of /proc/PID/status.
func supplementaryGroups(pid uint32) ([]uint32, error) {
	if pid == 0 {
		return nil, fmt.Errorf("caller not visible in this PID namespace")
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "Groups:")
		if !ok {
			continue
		}
		var gs []uint32
		for _, s := range strings.Fields(rest) {
			g, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("/proc/%d/status: bad group %q", pid, s)
			}
			gs = append(gs, uint32(g))
		}
		return gs, nil
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("/proc/%d/status: no Groups line", pid)
}

// isChown reports whether a setattr changes the owner or group of an inode
// that is not a directory: then set-ID bits go (chown(2)).
func isChown(in *fuse.SetAttrIn, mode uint32) bool {
	return in.Valid&(fuse.FATTR_UID|fuse.FATTR_GID) != 0 && mode&syscall.S_IFMT != syscall.S_IFDIR
}
