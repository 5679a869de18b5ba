package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMutantsMatch keeps the list up to date: every snippet must match its
// file exactly once, the mutated file must parse, and every test named
// must exist. It runs with the rest of the suite (make test), so a change
// that moves a snippet fails here at once, not when someone next runs make
// mutation; fix the snippet in mutants.go to name the new code.
func TestMutantsMatch(t *testing.T) {
	if err := Validate("../..", Mutants); err != nil {
		t.Fatal(err)
	}
	if len(Mutants) < 20 {
		t.Errorf("%d mutants; the list should not shrink without a reason", len(Mutants))
	}
}

// TestMutantsCompile builds each mutant's packages with its edits laid
// over the tree (go build -overlay): a mutant that no longer compiles
// (code it names has moved, or changed its API) would be reported by
// make mutation as an error, not a catch, long after the change that broke
// it. Parsing, which TestMutantsMatch checks, does not see that.
func TestMutantsCompile(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH to build the mutants with")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Mutants {
		t.Run(m.Name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string][]byte{}
			for _, e := range m.Edits {
				src, ok := files[e.File]
				if !ok {
					if src, err = os.ReadFile(filepath.Join(root, e.File)); err != nil {
						t.Fatal(err)
					}
				}
				files[e.File] = bytes.Replace(src, []byte(e.Old), []byte(e.New), 1)
			}
			replace := map[string]string{}
			pkgs := map[string]bool{}
			for file, src := range files {
				tmp := filepath.Join(dir, strings.ReplaceAll(file, "/", "_"))
				if err := os.WriteFile(tmp, src, 0o644); err != nil {
					t.Fatal(err)
				}
				replace[filepath.Join(root, file)] = tmp
				pkgs["./"+filepath.Dir(file)] = true
			}
			overlay, err := json.Marshal(map[string]any{"Replace": replace})
			if err != nil {
				t.Fatal(err)
			}
			ov := filepath.Join(dir, "overlay.json")
			if err := os.WriteFile(ov, overlay, 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"build", "-overlay", ov}
			for p := range pkgs {
				args = append(args, p)
			}
			cmd := exec.Command("go", args...)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("the mutant does not compile: %v\n%s", err, out)
			}
		})
	}
}
