package journal

import (
	"syscall"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/logbuf"
)

// Dropping privileges on change. A set-user-ID or set-group-ID program that
// someone else can rewrite, or that changes hands, must stop being one, or
// the bits become a way to run chosen code as the file's owner. Linux does
// this in the VFS for local filesystems (setattr_should_drop_suidgid,
// chown_common); under FUSE_HANDLE_KILLPRIV_V2 the kernel leaves it to the
// filesystem and marks the requests that need it (FATTR_KILL_SUIDGID on
// setattr, FUSE_WRITE_KILL_SUIDGID on write). The rules, as the VFS applies
// them:
//
//   - a write or truncate by a caller without CAP_FSETID, and any chown of
//     something other than a directory, clear S_ISUID;
//   - they clear S_ISGID too when the group may execute the file; when it
//     may not (S_ISGID alone once meant mandatory locking), only when the
//     caller is not in the file's group and is not privileged;
//   - they remove the file capabilities (the security.capability xattr).
//
// Each change is logged as ops of its own (a setattr of the mode, a
// removexattr), never left for replay to recompute, so a replay reaches the
// same modes whatever it knows about callers.

// capabilityXattr holds a file's capabilities (capabilities(7)).
const capabilityXattr = "security.capability"

// KillPriv asks an operation to drop privileges as described above.
type KillPriv struct {
	// Kill: drop them (the kernel asked, or it is a chown).
	Kill bool
	// InGroup reports whether the caller is in group gid or privileged
	// enough to count as if it were (CAP_FSETID); nil: it is not.
	InGroup func(gid uint32) bool
}

// dropMask is the set-ID bits k clears from mode, of a file in group gid.
func (k KillPriv) dropMask(mode, gid uint32) uint32 {
	if !k.Kill || mode&meta.ModeType == meta.ModeDir {
		return 0
	}
	kill := mode & syscall.S_ISUID
	if mode&syscall.S_ISGID != 0 {
		if mode&syscall.S_IXGRP != 0 || k.InGroup == nil || !k.InGroup(gid) {
			kill |= syscall.S_ISGID
		}
	}
	return kill
}

// DropPrivs drops ino's privileges before a write by a caller without
// CAP_FSETID (FUSE_WRITE_KILL_SUIDGID). It logs nothing when there is
// nothing to drop, which is every write to a file without set-ID bits or
// capabilities. Only regular files are affected.
func (fs *FS) DropPrivs(ino meta.Ino, k KillPriv) error {
	fs.mu.RLock()
	in := fs.model.Inodes[ino]
	needed := in != nil && in.IsRegular() && (k.dropMask(in.Mode, in.GID) != 0 || hasXattr(in, capabilityXattr))
	fs.mu.RUnlock()
	if !needed {
		return nil
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	in = fs.model.Inodes[ino]
	if in == nil || !in.IsRegular() || k.dropMask(in.Mode, in.GID) == 0 && !hasXattr(in, capabilityXattr) {
		return nil // dropped meanwhile
	}
	op := meta.Op{Type: meta.OpSetattr, Ino: ino, Ctime: store.NowNanos()}
	_, err := fs.commitSetattrLocked(&op, k)
	return errno(err)
}

func hasXattr(in *meta.Inode, name string) bool {
	_, ok := in.Xattrs[name]
	return ok
}

// commitSetattr commits a setattr op, first adding to it the mode change
// that k asks for, computed from the inode as it is under the lock; then
// removes the file's capabilities if k drops privileges. It returns the LSN
// of the last op committed, which a force must reach.
func (fs *FS) commitSetattr(op *meta.Op, k KillPriv) (logbuf.LSN, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.commitSetattrLocked(op, k)
}

func (fs *FS) commitSetattrLocked(op *meta.Op, k KillPriv) (logbuf.LSN, error) {
	in := fs.model.Inodes[op.Ino]
	if in == nil {
		return 0, syscall.ENOENT
	}
	dropCaps := k.Kill && !in.IsDir() && hasXattr(in, capabilityXattr)
	// The bits go from the mode the inode ends with (a mode change never
	// comes with a kill from the kernel, but one here gets the same rule).
	mode := in.Mode
	if op.Mask&meta.SetMode != 0 {
		mode = in.Mode&meta.ModeType | op.Mode&^meta.ModeType
	}
	if kill := k.dropMask(mode, in.GID); kill != 0 {
		op.Mask |= meta.SetMode
		op.Mode = mode &^ kill
	}
	if op.Mask == 0 && dropCaps {
		// Only the capabilities go: the removexattr is the whole change.
		rm := meta.Op{Type: meta.OpRemovexattr, Ino: op.Ino, Name: capabilityXattr, Ctime: op.Ctime}
		return fs.commitLocked(&rm)
	}
	lsn, err := fs.commitLocked(op)
	if err != nil || !dropCaps {
		return lsn, err
	}
	rm := meta.Op{Type: meta.OpRemovexattr, Ino: op.Ino, Name: capabilityXattr, Ctime: op.Ctime}
	return fs.commitLocked(&rm)
}
