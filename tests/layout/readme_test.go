package layout

import (
	"fmt"
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

// layoutDoc finds the layout table: in the README itself, or in a file
// of the repository the README links to (docs/design.md), the first
// holding a "## Layout" section. It returns the file's text and its path.
func layoutDoc(root string) (text, path string, err error) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return "", "", err
	}
	if _, err := layoutTable(string(readme)); err == nil {
		return string(readme), "README.md", nil
	}
	link := regexp.MustCompile(`\]\(([^)#:]+\.md)(?:#[^)]*)?\)`)
	var seen []string
	for _, m := range link.FindAllStringSubmatch(string(readme), -1) {
		rel := filepath.Clean(m[1])
		if slices.Contains(seen, rel) {
			continue
		}
		seen = append(seen, rel)
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			continue
		}
		if _, err := layoutTable(string(b)); err == nil {
			return string(b), rel, nil
		}
	}
	return "", "", fmt.Errorf("neither README.md nor the files it links to (%s) has a \"## Layout\" section", strings.Join(seen, ", "))
}

// TestReadmeLayout checks that the layout table, in the README or where
// the README links to it, matches the tree: every folder it lists exists
// and holds Go code, and every folder of Go code is listed.
func TestReadmeLayout(t *testing.T) {
	root := moduleRoot(t)
	text, where, err := layoutDoc(root)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := layoutTable(text)
	if err != nil || len(listed) == 0 {
		t.Fatalf("%s has no \"## Layout\" table of folders (%v)", where, err)
	}
	dirs, err := packageDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range listed {
		if !slices.Contains(dirs, l) {
			t.Errorf("the layout table of %s lists %s, which is no folder of Go code", where, l)
		}
	}
	for _, d := range dirs {
		if !slices.Contains(listed, d) {
			t.Errorf("%s holds Go code but is not in the layout table of %s", d, where)
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

// TestLayoutDocFollowsTheLink: a README without the table that links to a
// file with it leads there; one linking nowhere with it is an error.
func TestLayoutDocFollowsTheLink(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "docs"), 0o755)
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# x\n\nSee [the design](docs/design.md#layout) and [usage](docs/usage.md).\n"), 0o644)
	os.WriteFile(filepath.Join(root, "docs", "usage.md"), []byte("# usage\n"), 0o644)
	os.WriteFile(filepath.Join(root, "docs", "design.md"), []byte("# d\n\n## Layout\n\n| `a` | one |\n"), 0o644)
	text, where, err := layoutDoc(root)
	if got, _ := layoutTable(text); err != nil || where != filepath.Join("docs", "design.md") || !slices.Equal(got, []string{"a"}) {
		t.Errorf("layoutDoc = %q, %v, table %q", where, err, got)
	}
	os.Remove(filepath.Join(root, "docs", "design.md"))
	if _, _, err := layoutDoc(root); err == nil {
		t.Error("layoutDoc found a table nowhere linked")
	}
}
