package journal

import (
	"strings"
	"syscall"

	"github.com/xlogfs/xlogfs/journal/meta"
)

// Extended attributes as Linux filesystems keep them (xattr(7)).
//
// A name belongs to a namespace, named by its prefix: user., trusted.,
// security. or system. A local filesystem finds a handler by the prefix and
// answers EOPNOTSUPP for a name with none, and EINVAL for a bare prefix
// (xattr_resolve_name). system. holds only the POSIX ACLs on most
// filesystems; xlogfs has no ACLs (the kernel would never apply them to
// the mode without FUSE_POSIX_ACL, so stored inert they would leave cp -a
// with wrong permissions), so all of system. is EOPNOTSUPP, and tools fall
// back to chmod. The kernel itself keeps trusted. to CAP_SYS_ADMIN and
// checks security.capability's format before asking us.
//
// listxattr(2) can return at most XattrListMax bytes of names (each with
// its NUL), and no larger size answer is of any use: the kernel caps a
// FUSE size query there, so a longer list would be reported as 64 KiB and
// then fail with E2BIG, and getfattr and cp -a fail on the file. So a
// setxattr that would make the list longer is refused with ENOSPC, as ext4
// refuses one that no longer fits its xattr space (setxattr(2): "There is
// insufficient space remaining to store the extended attribute"); E2BIG
// there means that the one name or value is too large, which is not the
// case. XFS and btrfs accept such lists and fail the listxattr instead,
// which is the failure this avoids.

// XattrListMax is the longest name list listxattr(2) returns (XATTR_LIST_MAX).
const XattrListMax = 64 << 10

// XattrSizeMax is the largest value (XATTR_SIZE_MAX).
const XattrSizeMax = 64 << 10

var xattrNamespaces = []string{"user.", "trusted.", "security."}

// checkXattrName returns the errno for a name no Linux filesystem would
// take, nil for a name in a namespace that xlogfs keeps.
func checkXattrName(name string) error {
	if strings.HasPrefix(name, "system.") {
		return syscall.EOPNOTSUPP
	}
	for _, ns := range xattrNamespaces {
		if strings.HasPrefix(name, ns) {
			if name == ns {
				return syscall.EINVAL
			}
			return nil
		}
	}
	return syscall.EOPNOTSUPP
}

// xattrListLen is the length of in's name list as listxattr returns it.
func xattrListLen(in *meta.Inode) int {
	n := 0
	for name := range in.Xattrs {
		n += len(name) + 1
	}
	return n
}

// checkSetXattr refuses a setxattr before it is logged: a name outside the
// namespaces, a value over XattrSizeMax, a new name the list has no room
// for. The caller holds fs.mu.
func (fs *FS) checkSetXattr(ino meta.Ino, name string, value []byte) error {
	if err := checkXattrName(name); err != nil {
		return err
	}
	if len(value) > XattrSizeMax {
		return syscall.E2BIG
	}
	in := fs.model.Inodes[ino]
	if in == nil {
		return syscall.ENOENT
	}
	if _, replace := in.Xattrs[name]; !replace && xattrListLen(in)+len(name)+1 > XattrListMax {
		return syscall.ENOSPC
	}
	return nil
}
