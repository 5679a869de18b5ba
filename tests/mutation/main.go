// Command mutation plants deliberate bugs in a temporary copy of the tree,
// one at a time, and shows that the test suite catches every one (make
// mutation). The bugs are a fixed list (mutants.go), each an exact snippet
// of a source file, its replacement, and the tests that must catch it:
// bugs this project had, or that an audit found the tests let through, in
// the places where a bug loses data silently (durability order, torn versus
// corrupt, checksums, timestamps). A snippet that no longer matches its
// file exactly once is an error, so the list is kept up to date as the code
// changes (the package's test checks that on every `make test`).
//
// For each mutant it copies the file back to the original, applies the
// edits, runs the listed tests (go test -count=1 -json -run '^(A|B)$' PKG,
// in the order listed, stopping at the first package run that fails), and
// restores the file. A mutant is caught when a listed test fails; one that
// does not compile is an error in the list, not a catch. Before the
// mutants, the same tests run on the unmutated copy (the baseline): a test
// that fails anyway would catch everything.
//
// Usage:
//
//	go run ./tests/mutation [-run REGEXP] [-list] [-keep] [-v] [-baseline=false]
//	                        [-tests PKG:TestA,TestB]
//
// -tests runs other tests than the listed ones against the chosen mutants,
// to see what else catches them (or which tests a new mutant needs).
//
// It prints a table: mutant, where, caught by, time; and the first failure
// message of each catch, so a reader can see it failed for the right
// reason. Exit status 0: every mutant caught; 1: a mutant survived or the
// list is out of date; 2: usage.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: go run ./tests/mutation [flags]\n\n"+
			"Plants each deliberate bug of the list (mutants.go) in a temporary copy of the\n"+
			"tree and shows that the tests listed with it catch it.\n\nFlags:\n")
		flag.PrintDefaults()
	}
	run := flag.String("run", "", "only the mutants whose name matches this regular expression")
	list := flag.Bool("list", false, "list the mutants and exit")
	keep := flag.Bool("keep", false, "keep the temporary copy of the tree and its logs")
	verbose := flag.Bool("v", false, "print every go test output line")
	baseline := flag.Bool("baseline", true, "first run the tests on the unmutated copy")
	root := flag.String("root", ".", "the module's root directory")
	tests := flag.String("tests", "", "run these tests instead of each mutant's own (PKG:TestA,TestB, e.g. ./journal:TestPowerLoss), to see what else catches it")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "mutation: unexpected argument %q\n", flag.Arg(0))
		flag.Usage()
		os.Exit(2)
	}
	var sel *regexp.Regexp
	if *run != "" {
		var err error
		if sel, err = regexp.Compile(*run); err != nil {
			fmt.Fprintf(os.Stderr, "mutation: -run: %v\n", err)
			os.Exit(2)
		}
	}
	var chosen []Mutant
	for _, m := range Mutants {
		if sel == nil || sel.MatchString(m.Name) {
			chosen = append(chosen, m)
		}
	}
	if len(chosen) == 0 {
		fmt.Fprintf(os.Stderr, "mutation: no mutant matches -run %q\n", *run)
		os.Exit(2)
	}
	if *tests != "" {
		pkg, names, ok := strings.Cut(*tests, ":")
		if !ok || names == "" {
			fmt.Fprintf(os.Stderr, "mutation: -tests %q: want PKG:TestA,TestB\n", *tests)
			os.Exit(2)
		}
		for i := range chosen {
			chosen[i].Checks = []Check{{Pkg: pkg, Tests: strings.Split(names, ",")}}
		}
	}
	if *list {
		for _, m := range chosen {
			fmt.Printf("%-26s %-22s %s\n", m.Name, m.Edits[0].File, m.Bug)
		}
		return
	}
	if err := Validate(*root, chosen); err != nil {
		fmt.Fprintf(os.Stderr, "mutation: the list is out of date (edit tests/mutation/mutants.go):\n%v\n", err)
		os.Exit(1)
	}
	r := &runner{verbose: *verbose}
	if err := r.copyTree(*root); err != nil {
		fmt.Fprintf(os.Stderr, "mutation: copying the tree: %v\n", err)
		os.Exit(1)
	}
	if *keep {
		fmt.Fprintf(os.Stderr, "mutation: the copy is %s\n", r.dir)
	} else {
		defer os.RemoveAll(r.dir)
	}
	code := r.runAll(chosen, *baseline)
	if !*keep {
		os.RemoveAll(r.dir)
	}
	os.Exit(code)
}

// Validate checks that every edit of every mutant matches its file (under
// root) exactly once, changes something, and leaves the file parseable as
// Go, and that every listed test exists in its package.
func Validate(root string, ms []Mutant) error {
	var errs []error
	names := map[string]bool{}
	for _, m := range ms {
		if names[m.Name] {
			errs = append(errs, fmt.Errorf("%s: two mutants of that name", m.Name))
		}
		names[m.Name] = true
		if len(m.Edits) == 0 || len(m.Checks) == 0 || m.Bug == "" {
			errs = append(errs, fmt.Errorf("%s: needs a bug, edits and checks", m.Name))
			continue
		}
		files := map[string][]byte{}
		for _, e := range m.Edits {
			src, ok := files[e.File]
			if !ok {
				b, err := os.ReadFile(filepath.Join(root, e.File))
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", m.Name, err))
					continue
				}
				src = b
			}
			if n := bytes.Count(src, []byte(e.Old)); n != 1 {
				errs = append(errs, fmt.Errorf("%s: %s holds the snippet %d times, want exactly once:\n%s", m.Name, e.File, n, indent(e.Old)))
				continue
			}
			if e.Old == e.New {
				errs = append(errs, fmt.Errorf("%s: an edit of %s changes nothing", m.Name, e.File))
				continue
			}
			files[e.File] = bytes.Replace(src, []byte(e.Old), []byte(e.New), 1)
		}
		for file, src := range files {
			if err := parses(file, src); err != nil {
				errs = append(errs, fmt.Errorf("%s: the mutated %s does not parse: %w", m.Name, file, err))
			}
		}
		for _, c := range m.Checks {
			for _, test := range c.Tests {
				if err := testExists(root, c.Pkg, test); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", m.Name, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

func indent(s string) string {
	return "\t" + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n\t")
}

// testExists reports whether package dir pkg (./journal) has a test
// function of that name in a _test.go file.
func testExists(root, pkg, name string) error {
	files, err := filepath.Glob(filepath.Join(root, pkg, "*_test.go"))
	if err != nil {
		return err
	}
	decl := []byte("func " + name + "(t *testing.T)")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if bytes.Contains(b, decl) {
			return nil
		}
	}
	return fmt.Errorf("no %s in %s", decl, pkg)
}

// runner runs mutants in one copy of the tree.
type runner struct {
	dir     string // the copy of the tree
	tmp     string // TMPDIR of the tests, inside dir
	verbose bool
	logs    string
}

// copyTree copies the module's files (tracked, and untracked ones git does
// not ignore, so uncommitted work is tested as it is) into a new temporary
// directory.
func (r *runner) copyTree(root string) error {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return fmt.Errorf("git ls-files in %s: %w", root, err)
	}
	r.dir, err = os.MkdirTemp("", "xlogfs-mutation-")
	if err != nil {
		return err
	}
	r.logs = filepath.Join(r.dir, ".mutation-logs")
	r.tmp = filepath.Join(r.dir, ".mutation-tmp")
	for _, d := range []string{r.logs, r.tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	// Like /tmp: some tests run helpers as other users (set-ID tests),
	// which must reach their files under the tests' TMPDIR.
	if err := os.Chmod(r.dir, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(r.tmp, 0o1777); err != nil {
		return err
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, name)
		info, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the work tree, not yet in git
		}
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		dst := filepath.Join(r.dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// outcome is what one go test run of a check found.
type outcome struct {
	failed   []string // failing tests, top-level first
	message  string   // the first failure message
	pkgFail  string   // the package failed with no failing test (panic, timeout, TestMain)
	buildErr string   // it did not compile
	log      string   // where the output went
}

func (o outcome) caught() bool { return len(o.failed) > 0 || o.pkgFail != "" }

// event is a line of go test -json.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// runCheck runs one check's tests in the copy.
func (r *runner) runCheck(c Check, logName string) (outcome, error) {
	var o outcome
	regex := "^(" + strings.Join(c.Tests, "|") + ")$"
	timeout := c.Timeout
	if timeout == "" {
		timeout = "5m"
	}
	args := []string{"test", "-count=1", "-json", "-timeout", timeout, "-run", regex, c.Pkg}
	cmd := exec.Command("go", args...)
	cmd.Dir = r.dir
	// The tests' temporary directories (and so their mounts) go under
	// the copy: a mount a failed test left behind is then known to be
	// ours, and never one of another process's.
	cmd.Env = append(os.Environ(), "TMPDIR="+r.tmp)
	cmd.Env = append(cmd.Env, c.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return o, err
	}
	o.log = filepath.Join(r.logs, logName+".log")
	logf, err := os.Create(o.log)
	if err != nil {
		return o, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "$ %s go %s\n", strings.Join(c.Env, " "), strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		return o, err
	}
	outputs := map[string][]string{} // per test, its output lines
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var pkgOutput []string
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			fmt.Fprintln(logf, sc.Text())
			continue
		}
		switch e.Action {
		case "output", "build-output":
			logf.WriteString(e.Output)
			if r.verbose {
				os.Stderr.WriteString(e.Output)
			}
			if e.Test != "" {
				outputs[e.Test] = append(outputs[e.Test], e.Output)
			} else {
				pkgOutput = append(pkgOutput, e.Output)
			}
			if e.Action == "build-output" {
				o.buildErr += e.Output
			}
		case "build-fail":
			if o.buildErr == "" {
				o.buildErr = "build failed"
			}
		case "fail":
			if e.Test != "" {
				o.failed = append(o.failed, e.Test)
			} else if len(o.failed) == 0 {
				o.pkgFail = lastLines(pkgOutput, 3)
			}
		}
	}
	werr := cmd.Wait()
	logf.Write(stderr.Bytes())
	if stray := r.strayMounts(); len(stray) > 0 {
		fmt.Fprintf(os.Stderr, "mutation: %s left FUSE mounts %v behind; unmounting them\n", logName, stray)
		for _, m := range stray {
			exec.Command("fusermount3", "-u", "-z", m).Run()
		}
	}
	if strings.Contains(stderr.String(), "[setup failed]") || strings.Contains(stderr.String(), "build failed") && o.buildErr == "" {
		o.buildErr = stderr.String()
	}
	if o.buildErr != "" {
		return o, nil
	}
	if werr != nil && !o.caught() {
		o.pkgFail = strings.TrimSpace(stderr.String() + lastLines(pkgOutput, 3))
		if o.pkgFail == "" {
			o.pkgFail = werr.Error()
		}
	}
	// Subtests before their parents, so the name says where it failed;
	// the message is the first line a failing test printed that is not
	// go test's own bookkeeping.
	slices.SortStableFunc(o.failed, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, name := range o.failed {
		if msg := failureMessage(outputs[name]); msg != "" {
			o.message = msg
			break
		}
	}
	if o.message == "" && o.pkgFail != "" {
		o.message = o.pkgFail
	}
	return o, nil
}

// testLine is the first line of what t.Log, t.Error or t.Fatal printed.
var testLine = regexp.MustCompile(`^\s*[\w.-]+_test\.go:\d+: `)

// failing is how a failure message reads, and a log line does not.
var failing = regexp.MustCompile(`\b(want|got|not|neither|failed|does not|did not|unexpected|inconsistent|mismatch)\b`)

// failureMessage is the first line of the first message of a failing test
// that reads like a failure (t.Log and t.Error print alike), else of its
// last message (a t.Fatal's comes last), else the first line that says
// anything.
func failureMessage(lines []string) string {
	for _, l := range lines {
		if testLine.MatchString(l) && failing.MatchString(l) {
			return strings.TrimSpace(l)
		}
	}
	for _, l := range slices.Backward(lines) {
		if testLine.MatchString(l) {
			return strings.TrimSpace(l)
		}
	}
	for _, l := range lines {
		s := strings.TrimSpace(l)
		if s == "" || strings.HasPrefix(s, "===") || strings.HasPrefix(s, "---") || strings.HasPrefix(s, "FAIL") || strings.HasPrefix(s, "PASS") {
			continue
		}
		return s
	}
	return ""
}

func lastLines(lines []string, n int) string {
	var out []string
	for _, l := range lines {
		if s := strings.TrimSpace(l); s != "" && !strings.HasPrefix(s, "FAIL") && !strings.HasPrefix(s, "ok ") {
			out = append(out, s)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return strings.Join(out, " | ")
}

// strayMounts lists the FUSE mounts under the copy's temporary directory:
// left behind by a test that did not get to unmount (a timeout).
func (r *runner) strayMounts() []string {
	var out []string
	b, err := os.ReadFile("/proc/mounts")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && strings.HasPrefix(f[2], "fuse") && strings.HasPrefix(f[1], r.tmp+"/") {
			out = append(out, f[1])
		}
	}
	return out
}

// result is what became of one mutant.
type result struct {
	m       Mutant
	where   string
	caught  string // "pkg TestName" of the first check that caught it
	message string
	dur     time.Duration
	err     error // it could not be run (does not compile, ...)
}

func (r *runner) runAll(ms []Mutant, baseline bool) int {
	start := time.Now()
	if baseline {
		if err := r.baseline(ms); err != nil {
			fmt.Fprintf(os.Stderr, "mutation: %v\n", err)
			return 1
		}
	}
	var results []result
	for i, m := range ms {
		fmt.Fprintf(os.Stderr, "mutation: [%d/%d] %s: %s\n", i+1, len(ms), m.Name, m.Bug)
		res := r.runMutant(m)
		switch {
		case res.err != nil:
			fmt.Fprintf(os.Stderr, "mutation:   ERROR %v\n", res.err)
		case res.caught == "":
			fmt.Fprintf(os.Stderr, "mutation:   SURVIVED (%s)\n", res.dur.Round(100*time.Millisecond))
		default:
			fmt.Fprintf(os.Stderr, "mutation:   caught by %s (%s)\n", res.caught, res.dur.Round(100*time.Millisecond))
		}
		results = append(results, res)
	}
	return report(os.Stdout, results, time.Since(start))
}

// baseline runs every check's tests, grouped per package and environment,
// on the unmutated copy: they must pass.
func (r *runner) baseline(ms []Mutant) error {
	type key struct{ pkg, env, timeout string }
	tests := map[key][]string{}
	var order []key
	for _, m := range ms {
		for _, c := range m.Checks {
			k := key{c.Pkg, strings.Join(c.Env, " "), c.Timeout}
			if _, ok := tests[k]; !ok {
				order = append(order, k)
			}
			for _, t := range c.Tests {
				if !slices.Contains(tests[k], t) {
					tests[k] = append(tests[k], t)
				}
			}
		}
	}
	for i, k := range order {
		c := Check{Pkg: k.pkg, Tests: tests[k], Timeout: k.timeout}
		if k.env != "" {
			c.Env = strings.Split(k.env, " ")
		}
		t0 := time.Now()
		fmt.Fprintf(os.Stderr, "mutation: baseline %s %s %s\n", strings.Join(c.Env, " "), c.Pkg, strings.Join(c.Tests, ","))
		o, err := r.runCheck(c, fmt.Sprintf("baseline-%d", i))
		if err != nil {
			return err
		}
		if o.buildErr != "" {
			return fmt.Errorf("baseline: %s does not build unmutated:\n%s", c.Pkg, o.buildErr)
		}
		if o.caught() {
			return fmt.Errorf("baseline: %s fails without any mutant (%s: %s); fix that first, see %s",
				c.Pkg, strings.Join(o.failed, ", ")+o.pkgFail, o.message, o.log)
		}
		fmt.Fprintf(os.Stderr, "mutation:   passed (%s)\n", time.Since(t0).Round(100*time.Millisecond))
	}
	return nil
}

// runMutant applies m in the copy, runs its checks until one catches it,
// and restores the files.
func (r *runner) runMutant(m Mutant) (res result) {
	res.m = m
	t0 := time.Now()
	defer func() { res.dur = time.Since(t0) }()
	originals := map[string][]byte{}
	defer func() {
		for file, b := range originals {
			if err := os.WriteFile(filepath.Join(r.dir, file), b, 0o644); err != nil && res.err == nil {
				res.err = fmt.Errorf("restoring %s: %w", file, err)
			}
		}
	}()
	for _, e := range m.Edits {
		path := filepath.Join(r.dir, e.File)
		src, err := os.ReadFile(path)
		if err != nil {
			res.err = err
			return
		}
		if _, ok := originals[e.File]; !ok {
			originals[e.File] = src
		}
		i := bytes.Index(src, []byte(e.Old))
		if i < 0 || bytes.Count(src, []byte(e.Old)) != 1 {
			res.err = fmt.Errorf("%s: the snippet does not match exactly once", e.File)
			return
		}
		if res.where == "" {
			res.where = fmt.Sprintf("%s:%d", e.File, 1+bytes.Count(src[:i], []byte("\n")))
		}
		src = slices.Concat(src[:i], []byte(e.New), src[i+len(e.Old):])
		if err := os.WriteFile(path, src, 0o644); err != nil {
			res.err = err
			return
		}
	}
	for i, c := range m.Checks {
		o, err := r.runCheck(c, fmt.Sprintf("%s-%d", m.Name, i))
		if err != nil {
			res.err = err
			return
		}
		if o.buildErr != "" {
			res.err = fmt.Errorf("the mutant does not compile (fix its replacement):\n%s", strings.TrimSpace(o.buildErr))
			return
		}
		if o.caught() {
			pkg := strings.TrimPrefix(c.Pkg, "./")
			if len(o.failed) > 0 {
				var top []string // the top-level tests that failed
				for _, f := range o.failed {
					if name, _, _ := strings.Cut(f, "/"); !slices.Contains(top, name) {
						top = append(top, name)
					}
				}
				slices.Sort(top)
				res.caught = pkg + " " + strings.Join(top, ", ")
			} else {
				res.caught = pkg + " (package failed: " + firstLine(o.pkgFail) + ")"
			}
			res.message = o.message
			return
		}
	}
	return
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

// report prints the table and returns the exit status.
func report(w io.Writer, results []result, total time.Duration) int {
	nameW, whereW, byW := len("mutant"), len("where"), len("caught by")
	for _, r := range results {
		nameW = max(nameW, len(r.m.Name))
		whereW = max(whereW, len(r.where))
		byW = max(byW, len(r.caughtBy()))
	}
	fmt.Fprintf(w, "\n%-*s  %-*s  %-*s  %s\n", nameW, "mutant", whereW, "where", byW, "caught by", "time")
	caught := 0
	for _, r := range results {
		if r.err == nil && r.caught != "" {
			caught++
		}
		fmt.Fprintf(w, "%-*s  %-*s  %-*s  %s\n", nameW, r.m.Name, whereW, r.where, byW, r.caughtBy(), r.dur.Round(100*time.Millisecond))
	}
	fmt.Fprintf(w, "\n%d of %d mutants caught in %s.\n", caught, len(results), total.Round(time.Second))
	fmt.Fprintf(w, "\nThe bugs, and the first failure each caused:\n")
	for _, r := range results {
		msg := r.message
		if r.err != nil {
			msg = "ERROR: " + r.err.Error()
		} else if r.caught == "" {
			msg = "SURVIVED: no listed test failed; strengthen the tests"
		}
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		fmt.Fprintf(w, "  %s: %s\n      %s\n", r.m.Name, r.m.Bug, msg)
	}
	if caught != len(results) {
		return 1
	}
	return 0
}

func (r result) caughtBy() string {
	switch {
	case r.err != nil:
		return "ERROR"
	case r.caught == "":
		return "SURVIVED"
	}
	return r.caught
}
