package journal

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/journal/meta"
)

// TestXattrNamespaces: names outside user., trusted. and security. are
// EOPNOTSUPP (system. too: no ACLs), a bare prefix is EINVAL, as a local
// filesystem answers; a refused setxattr logs nothing.
func TestXattrNamespaces(t *testing.T) {
	fs := mount(t, mkfs(t, 4<<20, 32<<10), Options{})
	defer fs.Close()
	f := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	for name, want := range map[string]error{
		"user.x": nil, "trusted.x": nil, "security.x": nil, "user.a.b": nil,
		"bogusns.x": syscall.EOPNOTSUPP, "x": syscall.EOPNOTSUPP, "users.x": syscall.EOPNOTSUPP, "USER.x": syscall.EOPNOTSUPP,
		"system.posix_acl_access": syscall.EOPNOTSUPP, "system.foo": syscall.EOPNOTSUPP,
		"user.": syscall.EINVAL, "trusted.": syscall.EINVAL, "security.": syscall.EINVAL,
	} {
		before := fs.Stats().Transactions
		if err := fs.SetXattr(f.Ino, name, []byte("v"), 0); err != want {
			t.Errorf("setxattr %q: %v, want %v", name, err, want)
		}
		if want != nil && fs.Stats().Transactions != before {
			t.Errorf("setxattr %q was refused but logged a transaction", name)
		}
		if _, err := fs.GetXattr(f.Ino, name); err != want {
			t.Errorf("getxattr %q: %v, want %v", name, err, want)
		}
		if err := fs.RemoveXattr(f.Ino, name); err != want {
			t.Errorf("removexattr %q: %v, want %v", name, err, want)
		}
		if _, err := fs.GetXattr(f.Ino, "user.missing"); err != syscall.ENODATA {
			t.Errorf("getxattr of a missing user. name: %v, want ENODATA", err)
		}
	}
	if err := fs.SetXattr(f.Ino, "user.big", make([]byte, XattrSizeMax+1), 0); err != syscall.E2BIG {
		t.Errorf("setxattr of a %d-byte value: %v, want E2BIG", XattrSizeMax+1, err)
	}
	check(t, fs.SetXattr(f.Ino, "user.max", make([]byte, XattrSizeMax), 0))
}

// TestXattrListLimit: names may fill listxattr's 64 KiB exactly, and the
// next new name is ENOSPC and changes nothing; replacing a value needs no
// room, and removing a name makes room again.
func TestXattrListLimit(t *testing.T) {
	fs := mount(t, mkfs(t, 16<<20, 256<<10), Options{})
	defer fs.Close()
	f := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	// 255-byte names take 256 bytes of the list: 256 of them fill it.
	name := func(i int) string { return fmt.Sprintf("user.%03d%s", i, strings.Repeat("n", 255-8)) }
	for i := range XattrListMax / 256 {
		if err := fs.SetXattr(f.Ino, name(i), nil, 0); err != nil {
			t.Fatalf("setxattr #%d (list %d bytes): %v", i, i*256, err)
		}
	}
	list := func() int {
		names := must[[]string](t)(fs.ListXattr(f.Ino))
		n := 0
		for _, s := range names {
			n += len(s) + 1
		}
		return n
	}
	if n := list(); n != XattrListMax {
		t.Fatalf("list is %d bytes, want exactly %d", n, XattrListMax)
	}
	before := fs.Stats().Transactions
	if err := fs.SetXattr(f.Ino, "user.x", nil, 0); err != syscall.ENOSPC {
		t.Errorf("setxattr of a new name on a full list: %v, want ENOSPC", err)
	}
	if fs.Stats().Transactions != before || list() != XattrListMax {
		t.Errorf("the refused setxattr changed something")
	}
	check(t, fs.SetXattr(f.Ino, name(3), []byte("new value"), meta.XattrReplace))
	check(t, fs.RemoveXattr(f.Ino, name(0)))
	check(t, fs.SetXattr(f.Ino, "user.x", nil, 0))
	if n := list(); n != XattrListMax-256+7 {
		t.Errorf("list is %d bytes, want %d", n, XattrListMax-256+7)
	}
}
