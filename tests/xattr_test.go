package tests

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestXattrsAsLinux holds xattrs on the mount to what a Linux filesystem
// does, with the host's directory alongside as the reference: names
// outside the user., trusted., security. namespaces are EOPNOTSUPP, a bare
// prefix is EINVAL; a file filled with names until setxattr refuses gets
// ENOSPC (ext4 at its block, xlogfs at listxattr's 64 KiB), and then the
// size query of listxattr answers the list's true size, which a listxattr
// into that much room returns whole.
func TestXattrsAsLinux(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	m := mountDaemon(t, store, mnt)
	native := t.TempDir()
	for _, target := range []struct{ name, root string }{{"xlogfs", mnt}, {"native", native}} {
		t.Run(target.name, func(t *testing.T) {
			path := filepath.Join(target.root, "f")
			mustOK(t, os.WriteFile(path, []byte("x"), 0o644))
			for name, want := range map[string]error{
				"user.x": nil, "trusted.x": nil, "security.x": nil,
				"bogusns.x": unix.EOPNOTSUPP, "system.foo": unix.EOPNOTSUPP, "user.": unix.EINVAL,
			} {
				err := unix.Setxattr(path, name, []byte("v"), 0)
				if want == nil && err != nil || want != nil && !errors.Is(err, want) {
					t.Errorf("setxattr %q: %v, want %v", name, err, want)
				}
			}

			full := filepath.Join(target.root, "full")
			mustOK(t, os.WriteFile(full, nil, 0o644))
			var err error
			names := 0
			for ; names < 1000; names++ {
				name := fmt.Sprintf("user.%04d.%s", names, strings.Repeat("n", 190))
				if err = unix.Setxattr(full, name, nil, 0); err != nil {
					break
				}
			}
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatalf("setxattr of the %d-th name: %v, want ENOSPC once the names fill what the file can list", names+1, err)
			}
			size, err := unix.Listxattr(full, nil)
			if err != nil {
				t.Fatalf("listxattr size query of a full list: %v", err)
			}
			if want := names * 201; size != want {
				t.Errorf("listxattr size query: %d, want %d (%d names of 200 bytes and a NUL)", size, want, names)
			}
			buf := make([]byte, size)
			n, err := unix.Listxattr(full, buf)
			if err != nil || n != size {
				t.Errorf("listxattr into %d bytes: %d, %v; want the whole list", size, n, err)
			}
			if _, err := unix.Listxattr(full, make([]byte, size-1)); !errors.Is(err, unix.ERANGE) {
				t.Errorf("listxattr into one byte too few: %v, want ERANGE", err)
			}
			if target.name == "xlogfs" && size <= 64<<10-201 {
				t.Errorf("xlogfs refused a name with %d bytes of names: it must take names up to 64 KiB", size)
			}
		})
	}
	m.unmount(t)
	checkStore(t, store, true)
}
