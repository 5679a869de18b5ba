package meta

import (
	"strings"
	"testing"
)

// TestCheck corrupts a consistent model in each way Check looks for and
// holds it to name the inode and what is wrong.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name    string
		corrupt func(m *Model)
		want    []string // each a substring of some problem
	}{
		{"consistent", func(m *Model) {}, nil},
		{"entry naming a missing inode", func(m *Model) {
			m.Inodes[2].Entries["ghost"] = 77
		}, []string{`directory 2: entry "ghost" names missing inode 77`}},
		{"file nlink too high", func(m *Model) {
			m.Inodes[3].Nlink = 2
		}, []string{"inode 3: nlink 2, but 1 names"}},
		{"file with an extra name", func(m *Model) {
			m.Inodes[4].Entries["f-again"] = 3
		}, []string{"inode 3: nlink 1, but 2 names"}},
		{"lost entry", func(m *Model) {
			delete(m.Inodes[RootIno].Entries, "g")
		}, []string{"inode 5: nlink 1, but 0 names"}},
		{"directory nlink", func(m *Model) {
			m.Inodes[RootIno].Nlink = 3
		}, []string{"directory 1: nlink 3, want 4"}},
		{"empty directory nlink", func(m *Model) {
			m.Inodes[4].Nlink = 1
		}, []string{"directory 4: nlink 1, want 2"}},
		{"wrong ..", func(m *Model) {
			m.Inodes[4].Parent = 2
		}, []string{`directory 4 ("e" in 1) has parent 2`}},
		{"directory with two names", func(m *Model) {
			m.Inodes[2].Entries["e2"] = 4
			m.Inodes[2].Nlink++
		}, []string{"directory 4 has 2 names", `directory 4 ("e2" in 2) has parent 1`}},
		{"directory with no name", func(m *Model) {
			delete(m.Inodes[RootIno].Entries, "e")
			m.Inodes[RootIno].Nlink--
		}, []string{"directory 4 has 0 names"}},
		{"root named in a directory", func(m *Model) {
			m.Inodes[4].Entries["loop"] = RootIno
			m.Inodes[4].Nlink++
		}, []string{`directory 1 ("loop" in 4) has parent 1`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := fixture(t)
			c.corrupt(m)
			got := m.Check()
			if len(c.want) == 0 && len(got) != 0 {
				t.Fatalf("Check() = %q, want nothing", got)
			}
			if len(c.want) > 0 && len(got) == 0 {
				t.Fatalf("Check() found nothing, want %q", c.want)
			}
			for _, w := range c.want {
				found := false
				for _, p := range got {
					found = found || strings.Contains(p, w)
				}
				if !found {
					t.Errorf("Check() = %q, want a problem containing %q", got, w)
				}
			}
		})
	}
}

// TestCheckRootParent: the root's ".." is itself (FS.Parent answers with
// it for the root), and Check promises to find directories whose ".." is
// wrong; the root is one it does not look at.
func TestCheckRootParent(t *testing.T) {
	m := fixture(t)
	m.Inodes[RootIno].Parent = 2
	if p := m.Check(); len(p) == 0 {
		t.Fatal("Check found nothing wrong with a root whose parent is 2")
	}
}
