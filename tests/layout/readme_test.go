package layout

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// layoutTable returns the folders the README's "## Layout" table lists, in
// order: the backquoted paths of each row's first cell.
func layoutTable(readme string) ([]string, error) {
	_, after, ok := strings.Cut(readme, "\n## Layout\n")
	if !ok {
		return nil, os.ErrNotExist
	}
	if i := strings.Index(after, "\n## "); i >= 0 {
		after = after[:i]
	}
	path := regexp.MustCompile("`([^`]+)`")
	var out []string
	for line := range strings.Lines(after) {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
		for _, m := range path.FindAllStringSubmatch(cell, -1) {
			out = append(out, m[1])
		}
	}
	return out, nil
}

// packageDirs returns every directory under root holding Go files, relative
// to root, leaving out hidden directories and testdata.
func packageDirs(root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); rel != "." && !slices.Contains(dirs, rel) {
				dirs = append(dirs, rel)
			}
		}
		return nil
	})
	return dirs, err
}

// TestReadmeLayout checks that the README's layout table matches the tree:
// every folder it lists exists and holds Go code, and every folder of Go
// code is listed.
func TestReadmeLayout(t *testing.T) {
	root := moduleRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed, err := layoutTable(string(b))
	if err != nil || len(listed) == 0 {
		t.Fatalf("README.md has no \"## Layout\" table of folders (%v)", err)
	}
	dirs, err := packageDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range listed {
		if !slices.Contains(dirs, l) {
			t.Errorf("README's layout table lists %s, which is no folder of Go code", l)
		}
	}
	for _, d := range dirs {
		if !slices.Contains(listed, d) {
			t.Errorf("%s holds Go code but is not in README's layout table", d)
		}
	}
}

func TestLayoutTableParse(t *testing.T) {
	readme := "# x\n\n## Layout\n\n| folder | job |\n|---|---|\n| `a` | one, `not/this` |\n| `b`, `c/d` | two |\n\nImports `e`.\n\n## Next\n\n| `f` | no |\n"
	got, err := layoutTable(readme)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c/d"}; !slices.Equal(got, want) {
		t.Errorf("layoutTable = %q, want %q", got, want)
	}
}
