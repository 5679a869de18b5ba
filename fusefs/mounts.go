package fusefs

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moby/sys/mountinfo"
)

// FsType is the mount table's type of an xlogfs mount: "fuse." and the
// name Mount mounts with.
const FsType = "fuse.xlogfs"

// StoreMounts returns where the store in dir is mounted in this mount
// namespace: the mount points of the xlogfs mounts whose source (FsName,
// the store's absolute path) is dir made absolute. It reads the table
// (/proc/self/mountinfo, through moby/sys/mountinfo) and never touches a
// mount point, so a mount whose daemon hangs cannot make it hang.
func StoreMounts(dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("store mounts of %s: %w", dir, err)
	}
	ms, err := mountinfo.GetMounts(mountinfo.FSTypeFilter(FsType))
	if err != nil {
		return nil, fmt.Errorf("store mounts of %s: %w", abs, err)
	}
	var out []string
	for _, m := range ms {
		if filepath.Clean(m.Source) == abs {
			out = append(out, m.Mountpoint)
		}
	}
	return out, nil
}

// UnescapeMountField undoes the \ooo octal escapes of a /proc/mounts field
// (\040 for a space, \011 for a tab, \012 for a newline, \134 for a
// backslash), so a mount point or source compares with the path it names.
//
// Only cmd/xlogfs/inuse.go still parses the table by hand with it; once it
// calls StoreMounts this goes.
func UnescapeMountField(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
