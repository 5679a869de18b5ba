package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Flags are spelled GNU style, --name VALUE or --name=VALUE (the flag
// package accepts one dash too); a few have a one-letter alias (-i for
// --interval). Help prints every flag with two dashes, and the usage line
// of --help lists every flag a command has, generated from its flag set
// so that it cannot leave one out.

// flagSet is a command's flags, its usage and its positional arguments.
type flagSet struct {
	*flag.FlagSet
	cmd     string            // "mount", "bench report"
	args    string            // the positional arguments' synopsis: "DIR MOUNTPOINT"
	about   string            // the longer description --help prints
	also    []string          // further usage lines (another form of the command)
	aliases map[string]string // one-letter alias → the flag's name
}

// newFlags returns the flag set of command cmd, whose positional arguments
// are args ("DIR MOUNTPOINT", "PROFILE...", "") and whose --help
// description is about.
func newFlags(cmd, args, about string) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet("xlogfs "+cmd, flag.ContinueOnError), cmd: cmd, args: args, about: about, aliases: map[string]string{}}
	// The flag package's own messages and usage are replaced by ours.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// alias makes -short another name for the flag --name.
func (fs *flagSet) alias(short, name string) {
	f := fs.Lookup(name)
	fs.Var(f.Value, short, f.Usage)
	fs.aliases[short] = name
}

// alsoUsage adds a usage line for another form of the command.
func (fs *flagSet) alsoUsage(line string) { fs.also = append(fs.also, line) }

// usageError is a mistake on the command line: run prints what is wrong,
// the command's short usage line and where to read more, and exits 2.
type usageError struct {
	cmd, args string
	hasFlags  bool
	msg       string
}

func (e *usageError) Error() string { return e.msg }

func (e *usageError) print(w io.Writer) {
	fmt.Fprintf(w, "xlogfs %s: %s\n", e.cmd, e.msg)
	line := "xlogfs " + e.cmd
	if e.hasFlags {
		line += " [flags]"
	}
	if e.args != "" {
		line += " " + e.args
	}
	fmt.Fprintf(w, "usage: %s\n", line)
	fmt.Fprintf(w, "Try 'xlogfs %s --help' for more information.\n", e.cmd)
}

// usagef returns a usage error of this command.
func (fs *flagSet) usagef(format string, a ...any) error {
	has := false
	fs.VisitAll(func(*flag.Flag) { has = true })
	return &usageError{cmd: fs.cmd, args: fs.args, hasFlags: has, msg: fmt.Sprintf(format, a...)}
}

// parse parses args, allowing flags after positional arguments too
// ("xlogfs logprint DIR --json"), and checks the number of positional
// arguments: at least minPos, at most maxPos (-1: no limit). --help
// prints the help to stdout and returns flag.ErrHelp.
func parse(fs *flagSet, args []string, minPos, maxPos int) ([]string, error) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fs.printHelp(os.Stdout)
			return nil, flag.ErrHelp
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, fs.usagef("%s", gnuFlagError(err))
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		if args[0] == "--" {
			pos = append(pos, args[1:]...)
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if len(pos) < minPos {
		return nil, fs.usagef("missing %s", missingArgs(fs.args, len(pos), minPos))
	}
	if maxPos >= 0 && len(pos) > maxPos {
		extra := strings.Join(pos[maxPos:], " ")
		if maxPos == 0 {
			return nil, fs.usagef("takes no arguments, got %q", extra)
		}
		return nil, fs.usagef("too many arguments: %q (want %s)", extra, fs.args)
	}
	return pos, nil
}

// missingArgs names the positional arguments from the have-th to the
// want-th of synopsis ("DIR MOUNTPOINT"): "MOUNTPOINT", "DIR and MOUNTPOINT".
func missingArgs(synopsis string, have, want int) string {
	var names []string
	for _, w := range strings.Fields(synopsis) {
		names = append(names, strings.Trim(w, "[]."))
	}
	if want > len(names) {
		return fmt.Sprintf("arguments (want %d, got %d)", want, have)
	}
	missing := names[have:want]
	if len(missing) == 1 {
		return missing[0]
	}
	return strings.Join(missing[:len(missing)-1], ", ") + " and " + missing[len(missing)-1]
}

// gnuFlagError rewords the flag package's errors with the flags spelled
// as the help spells them.
func gnuFlagError(err error) string {
	msg := err.Error()
	msg = strings.Replace(msg, "flag provided but not defined: ", "unknown flag ", 1)
	msg = strings.Replace(msg, "for flag -", "for -", 1)
	msg = strings.Replace(msg, "invalid boolean value", "invalid value", 1)
	msg = dashedFlag.ReplaceAllString(msg, "$1--$2")
	// A one-letter alias is spelled with one dash.
	return oneLetterFlag.ReplaceAllString(msg, "-$1")
}

var (
	dashedFlag    = regexp.MustCompile(`(^|[ :])-([a-zA-Z][\w-]*)`)
	oneLetterFlag = regexp.MustCompile(`--([a-zA-Z])\b`)
)

// wrap breaks text into lines of at most width columns after indent.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	col := 0
	for _, w := range strings.Fields(text) {
		if col > 0 && col+1+utf8.RuneCountInString(w) > width {
			b.WriteString("\n")
			col = 0
		}
		if col == 0 {
			b.WriteString(indent)
			col = len(indent)
		} else {
			b.WriteString(" ")
			col++
		}
		b.WriteString(w)
		col += utf8.RuneCountInString(w)
	}
	return b.String()
}

// flagArg is the placeholder of a flag's value in help: a backquoted word
// of its usage (the flag package's convention), else one for its type.
func flagArg(f *flag.Flag) string {
	if isBool(f) {
		return ""
	}
	name, _ := flag.UnquoteUsage(f)
	switch {
	case strings.Contains(f.Usage, "`"):
		return name
	case argNames[f.Name] != "":
		return argNames[f.Name]
	case isSize(f):
		return "SIZE"
	}
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case time.Duration:
			return "DURATION"
		case int, int64, uint, uint64:
			return "N"
		case float64:
			return "X"
		}
	}
	// A string: its name's last word, upper-cased (--cksum-impl IMPL).
	words := strings.Split(f.Name, "-")
	return strings.ToUpper(words[len(words)-1])
}

// argNames are the placeholders of string flags whose name does not say
// what their value is; a flag of that name means the same in every command.
var argNames = map[string]string{
	"cpuprofile": "FILE", "log": "FILE", "pprof": "ADDR", "syslog": "SOCKET", "journal": "MODE",
	"out": "DIR", "scan-dir": "DIR", "reference": "TARGET", "mount-flags": "FLAGS",
	"workload": "NAME", "device": "NAME", "type": "OP", "from": "LSN", "to": "LSN",
	"baseline": "LIST", "modes": "LIST", "impls": "LIST", "algos": "LIST", "sizes": "LIST",
	"sections": "LIST", "record-sizes": "LIST",
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func isSize(f *flag.Flag) bool {
	_, ok := f.Value.(*sizeFlag)
	return ok
}

// flags returns the command's flags, sorted, without aliases.
func (fs *flagSet) flags() []*flag.Flag {
	var out []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if _, alias := fs.aliases[f.Name]; !alias {
			out = append(out, f)
		}
	})
	return out
}

// aliasOf returns the one-letter alias of the flag name, if any.
func (fs *flagSet) aliasOf(name string) string {
	for s, n := range fs.aliases {
		if n == name {
			return s
		}
	}
	return ""
}

// synopsis is the usage line --help prints: every flag, then the
// positional arguments, wrapped at 80 columns under the command.
func (fs *flagSet) synopsis() string {
	lead := "usage: xlogfs " + fs.cmd
	var words []string
	for _, f := range fs.flags() {
		w := "--" + f.Name
		if s := fs.aliasOf(f.Name); s != "" {
			w = "-" + s + "|" + w
		}
		if arg := flagArg(f); arg != "" {
			w += " " + arg
		}
		words = append(words, "["+w+"]")
	}
	if fs.args != "" {
		words = append(words, fs.args)
	}
	var b strings.Builder
	b.WriteString(lead)
	col := len(lead)
	indent := strings.Repeat(" ", len(lead))
	for _, w := range words {
		if col+1+len(w) > 80 && col > len(lead) {
			b.WriteString("\n" + indent)
			col = len(indent)
		}
		b.WriteString(" " + w)
		col += 1 + len(w)
	}
	for _, l := range fs.also {
		b.WriteString("\n       " + l)
	}
	return b.String()
}

// printHelp prints the usage line, the description and every flag.
func (fs *flagSet) printHelp(w io.Writer) {
	fmt.Fprintln(w, fs.synopsis())
	fmt.Fprintln(w)
	if about := strings.TrimSpace(fs.about); about != "" {
		fmt.Fprintln(w, about)
		fmt.Fprintln(w)
	}
	flags := fs.flags()
	if len(flags) == 0 {
		return
	}
	fmt.Fprintln(w, "flags:")
	for _, f := range flags {
		name := "--" + f.Name
		if s := fs.aliasOf(f.Name); s != "" {
			name = "-" + s + ", " + name
		}
		if arg := flagArg(f); arg != "" {
			name += " " + arg
		}
		_, text := flag.UnquoteUsage(f)
		if !isBool(f) && f.DefValue != "" && f.DefValue != "0" && f.DefValue != "0s" {
			text += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "  %s\n%s\n", name, wrap(text, "        ", 80))
	}
}
