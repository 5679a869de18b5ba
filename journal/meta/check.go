package meta

import (
	"fmt"
)

// Check returns the inconsistencies of a model: entries naming missing
// inodes, wrong link counts, directories whose ".." is wrong (the root's
// is itself).
func (m *Model) Check() []string {
	var out []string
	if root := m.Inodes[RootIno]; root == nil {
		out = append(out, fmt.Sprintf("the root directory (inode %d) is missing", RootIno))
	} else if root.Parent != RootIno {
		out = append(out, fmt.Sprintf("the root directory (inode %d) has parent %d, want itself", RootIno, root.Parent))
	}
	links := map[Ino]uint32{}
	subdirs := map[Ino]uint32{}
	for _, in := range m.Inodes {
		for name, e := range in.Entries {
			c := m.Inodes[e]
			if c == nil {
				out = append(out, fmt.Sprintf("directory %d: entry %q names missing inode %d", in.Ino, name, e))
				continue
			}
			links[e]++
			if c.IsDir() {
				subdirs[in.Ino]++
				if c.Parent != in.Ino {
					out = append(out, fmt.Sprintf("directory %d (%q in %d) has parent %d", e, name, in.Ino, c.Parent))
				}
			}
		}
	}
	for ino, in := range m.Inodes {
		switch {
		case in.IsDir():
			if want := 2 + subdirs[ino]; in.Nlink != want {
				out = append(out, fmt.Sprintf("directory %d: nlink %d, want %d", ino, in.Nlink, want))
			}
			if ino != RootIno && links[ino] != 1 {
				out = append(out, fmt.Sprintf("directory %d has %d names", ino, links[ino]))
			}
		case in.Nlink != links[ino]:
			out = append(out, fmt.Sprintf("inode %d: nlink %d, but %d names", ino, in.Nlink, links[ino]))
		}
	}
	return out
}
