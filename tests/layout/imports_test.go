package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/xlogfs/xlogfs"

// A layer is a set of packages (paths relative to the module; "x/..." is x
// and everything under it). A package may import the module's packages of
// the layers below its own, and of its own layer only if shared is set.
type layer struct {
	pkgs   []string
	shared bool
}

// layers, top first: imports flow down, never up.
var layers = []layer{
	{pkgs: []string{"cmd/..."}, shared: true},
	{pkgs: []string{"fusefs"}},
	{pkgs: []string{"fusefs/uring"}}, // the io_uring transport: go-fuse's wire types, none of the journal
	{pkgs: []string{"journal"}},
	{pkgs: []string{"journal/recovery"}}, // mount's recovery, and check's inspection: joins the log, the model and the data files
	{pkgs: []string{"journal/datafile"}}, // the file data path, behind datafile.Engine: none of the log
	{pkgs: []string{"journal/internal/testfs"}},
	{pkgs: []string{"journal/store", "journal/xlog", "journal/statsfile", "journal/xfsitems"}}, // xfsitems: the XFS log items a transaction carries beside its op
	{pkgs: []string{"journal/meta", "journal/internal/span", "journal/internal/lockorder"}},    // lockorder: the ranks of the journal's mutexes (journal/doc.go, Locking)
	{pkgs: []string{"logbuf"}},
	{pkgs: []string{"cksum"}},
	{pkgs: []string{"amd64", "ppc64"}},
	{pkgs: []string{"cksum/crc32c"}},
}

// apart are packages outside the layers: each may import only the module
// packages its own pattern matches (profiling never imports the
// filesystem), and only the layers above the line named may import it.
// journalOpen are the journal's packages the code above it (cmd, fusefs,
// tests) may import: each owns types its callers name (the model's ops and
// inodes, the store's superblock and checkpoint, the log's records and
// errors, .stats, the XFS log items, the data path's mount options, and
// recovery's reports of a store for check, logprint and info). What else
// is inside journal is reached through journal.
var journalOpen = []string{"journal", "journal/meta", "journal/store", "journal/xlog", "journal/statsfile", "journal/xfsitems", "journal/datafile", "journal/recovery"}

type apartPkg struct {
	pkg        string
	importedBy int // index in layers of the lowest layer that may import it
}

var apart = []apartPkg{
	{pkg: "profiling/labels", importedBy: 7}, // the label keys: the log's writer runs under them
	{pkg: "profiling/...", importedBy: 0},
}

// forbidden are edges the layers would allow but the design does not: the
// metadata model and the log know nothing of each other, the log nothing
// of the store, and the data path reaches the log only through the engine
// (datafile.Engine).
var forbidden = [][2]string{
	{"journal/xlog", "journal/meta"},
	{"journal/meta", "journal/xlog"},
	{"journal/xlog", "journal/store"},
	{"journal/datafile", "journal/xlog"},
}

// stdOnly are packages that import the standard library alone.
var stdOnly = []string{"journal/meta", "journal/internal/span", "journal/internal/lockorder", "cksum/crc32c", "internal/crctest"}

// free are packages of tests only: they may import anything, and nothing
// imports them (go list's Imports leave out those of _test.go files, so
// internal/crctest, the CRC tests' reference arithmetic, stays free as long
// as only tests import it).
var free = []string{"tests/...", "internal/crctest"}

func matches(pattern, pkg string) bool {
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == p || strings.HasPrefix(pkg, p+"/")
	}
	return pkg == pattern
}

func matchesAny(patterns []string, pkg string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matches(p, pkg) })
}

// placeOf returns the layer of pkg, or -1 if it is in none.
func placeOf(pkg string) int {
	for i, l := range layers {
		if matchesAny(l.pkgs, pkg) {
			return i
		}
	}
	return -1
}

// pkgInfo is what go list says of one package.
type pkgInfo struct {
	ImportPath string
	Imports    []string
	Standard   bool
	Module     *struct{ Path string }
}

// violations checks the import graph (module-relative paths to their
// module-relative imports) against the rules and returns what breaks them.
func violations(graph map[string][]string) []string {
	var out []string
	for _, pkg := range slices.Sorted(maps.Keys(graph)) {
		if matchesAny(free, pkg) {
			continue
		}
		from := placeOf(pkg)
		ap := -1
		for i, a := range apart {
			if matches(a.pkg, pkg) {
				ap = i
			}
		}
		if from < 0 && ap < 0 {
			out = append(out, fmt.Sprintf("%s is in no layer of the import rules (tests/layout/imports_test.go): place it", pkg))
			continue
		}
		for _, dep := range graph[pkg] {
			if ap >= 0 {
				if !matches(apart[ap].pkg, dep) {
					out = append(out, fmt.Sprintf("%s imports %s: %s imports none of the module's other packages", pkg, dep, apart[ap].pkg))
				}
				continue
			}
			if matchesAny(free, dep) {
				out = append(out, fmt.Sprintf("%s imports %s, a package of tests only", pkg, dep))
				continue
			}
			if i := slices.IndexFunc(apart, func(a apartPkg) bool { return matches(a.pkg, dep) }); i >= 0 {
				if from > apart[i].importedBy {
					out = append(out, fmt.Sprintf("%s imports %s, which only the layers down to %s may import", pkg, dep, strings.Join(layers[apart[i].importedBy].pkgs, ", ")))
				}
				continue
			}
			if !matches("journal/...", pkg) && matches("journal/...", dep) && !slices.Contains(journalOpen, dep) {
				out = append(out, fmt.Sprintf("%s imports %s: above the journal, only %s are imported", pkg, dep, strings.Join(journalOpen, ", ")))
				continue
			}
			if slices.Contains(forbidden, [2]string{pkg, dep}) {
				out = append(out, fmt.Sprintf("%s imports %s: the design keeps the two apart", pkg, dep))
				continue
			}
			to := placeOf(dep)
			switch {
			case to < 0:
				// reported as unplaced on its own line
			case to < from:
				out = append(out, fmt.Sprintf("%s imports %s: an upward edge (%s is above %s)", pkg, dep, strings.Join(layers[to].pkgs, ", "), strings.Join(layers[from].pkgs, ", ")))
			case to == from && !layers[from].shared && !matches(pkg, dep) && dep != pkg:
				out = append(out, fmt.Sprintf("%s imports %s: the two are in one layer, and neither may import the other", pkg, dep))
			}
		}
	}
	return out
}

// stdViolations reports the packages of stdOnly that import anything but
// the standard library (the module's packages or another module's).
func stdViolations(graph, external map[string][]string) []string {
	var out []string
	for _, pkg := range stdOnly {
		for _, dep := range append(slices.Clone(graph[pkg]), external[pkg]...) {
			out = append(out, fmt.Sprintf("%s imports %s: it imports the standard library only", pkg, dep))
		}
	}
	return out
}

// goList runs go list -deps -json over the whole module for goarch and
// returns every package it lists.
func goList(t *testing.T, goarch string) []pkgInfo {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-deps", "-json=ImportPath,Imports,Standard,Module", "./...")
	cmd.Dir = moduleRoot(t)
	cmd.Env = append(os.Environ(), "GOARCH="+goarch, "GOOS=linux", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("GOARCH=%s go list: %v\n%s", goarch, err, stderr.Bytes())
	}
	var pkgs []pkgInfo
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkgInfo
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("GOARCH=%s go list output: %v", goarch, err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod two levels up from tests/layout: %v", err)
	}
	return dir
}

// moduleGraph keeps the module's packages and their imports of the
// module's packages, module-relative; external has their imports of other
// modules' packages (not the standard library's).
func moduleGraph(pkgs []pkgInfo) (graph, external map[string][]string) {
	std := map[string]bool{}
	for _, p := range pkgs {
		std[p.ImportPath] = p.Standard
	}
	graph, external = map[string][]string{}, map[string][]string{}
	for _, p := range pkgs {
		rel, ok := relPath(p.ImportPath)
		if !ok {
			continue
		}
		var deps []string
		for _, imp := range p.Imports {
			if r, ok := relPath(imp); ok {
				deps = append(deps, r)
			} else if !std[imp] && imp != "C" && imp != "unsafe" {
				external[rel] = append(external[rel], imp)
			}
		}
		graph[rel] = deps
	}
	return graph, external
}

func relPath(importPath string) (string, bool) {
	if r, ok := strings.CutPrefix(importPath, module+"/"); ok {
		return r, true
	}
	return "", false
}

// TestImportDirection checks every import edge between the module's
// packages against the layers, on amd64, on both POWER byte orders (whose
// files differ: cksum imports ppc64 only there) and on an architecture with
// neither kernel.
func TestImportDirection(t *testing.T) {
	for _, goarch := range []string{"amd64", "ppc64le", "ppc64", "arm64"} {
		t.Run(goarch, func(t *testing.T) {
			graph, external := moduleGraph(goList(t, goarch))
			for _, want := range []string{"cmd/xlogfs", "fusefs", "journal", "journal/meta", "journal/xlog", "journal/store",
				"logbuf", "cksum", "cksum/crc32c", "profiling"} {
				if _, ok := graph[want]; !ok {
					t.Fatalf("go list did not list %s: %v", want, slices.Sorted(maps.Keys(graph)))
				}
			}
			for _, v := range append(violations(graph), stdViolations(graph, external)...) {
				t.Error(v)
			}
		})
	}
}

// TestViolationsCatchesBadEdges shows the checker is not vacuous: each
// kind of bad edge in a made-up graph is reported, and the real shape is
// not.
func TestViolationsCatchesBadEdges(t *testing.T) {
	good := map[string][]string{
		"cmd/xlogfs":                     {"fusefs", "journal", "cmd/xlogfs/internal/benchstat", "profiling"},
		"cmd/xlogfs/internal/benchstat":  nil,
		"cmd/xlogfs/internal/benchchart": {"cmd/xlogfs/internal/benchstat"},
		"fusefs":                         {"journal", "journal/meta", "journal/store"},
		"journal":                        {"journal/meta", "journal/xlog", "journal/store", "logbuf", "cksum"},
		"journal/store":                  {"journal/meta", "logbuf"},
		"journal/xlog":                   {"logbuf", "cksum", "profiling/labels"},
		"journal/meta":                   nil,
		"profiling/labels":               nil,
		"logbuf":                         {"cksum"},
		"cksum":                          {"amd64", "cksum/crc32c"},
		"amd64":                          {"cksum/crc32c"},
		"ppc64":                          {"cksum/crc32c"},
		"cksum/crc32c":                   nil,
		"profiling":                      {"profiling/labels"},
		"tests":                          {"journal", "fusefs"},
	}
	if v := violations(good); len(v) > 0 {
		t.Fatalf("the intended graph breaks the rules: %q", v)
	}
	for _, c := range []struct {
		from, to, want string
	}{
		{"logbuf", "journal", "upward edge"},
		{"cksum", "logbuf", "upward edge"},
		{"amd64", "cksum", "upward edge"},
		{"cksum/crc32c", "amd64", "upward edge"},
		{"amd64", "ppc64", "one layer"},
		{"profiling", "journal", "imports none"},
		{"journal", "profiling", "only the layers down to cmd/... may import"},
		{"journal", "tests", "tests only"},
		{"cksum", "internal/crctest", "tests only"},
		{"journal/xlog", "journal/meta", "keeps the two apart"},
		{"journal/meta", "journal/xlog", "keeps the two apart"},
		{"journal/xlog", "journal/store", "keeps the two apart"},
		{"journal/meta", "journal", "upward edge"},
		{"logbuf", "profiling/labels", "which only"},
		{"newpkg", "", "no layer"},
		{"fusefs", "journal/internal/testfs", "only journal, journal/meta"},
		{"cmd/xlogfs", "journal/internal/span", "only journal, journal/meta"},
	} {
		g := map[string][]string{}
		for k, v := range good {
			g[k] = slices.Clone(v)
		}
		if c.to == "" {
			g[c.from] = nil
		} else {
			g[c.from] = append(g[c.from], c.to)
		}
		v := violations(g)
		if len(v) != 1 || !strings.Contains(v[0], c.want) {
			t.Errorf("%s → %s: violations %q, want one saying %q", c.from, c.to, v, c.want)
		}
	}
}

// TestStdOnly shows the standard-library check reports an import of the
// module's and of another module's.
func TestStdOnly(t *testing.T) {
	graph := map[string][]string{"journal/meta": {"logbuf"}}
	external := map[string][]string{"journal/meta": {"golang.org/x/sys/unix"}}
	v := stdViolations(graph, external)
	if len(v) != 2 || !strings.Contains(v[0], "logbuf") || !strings.Contains(v[1], "golang.org/x/sys/unix") {
		t.Errorf("stdViolations = %q, want the two imports", v)
	}
	if v := stdViolations(map[string][]string{"journal/meta": nil}, nil); len(v) != 0 {
		t.Errorf("stdViolations of a clean graph = %q", v)
	}
}
