package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The command line is spf13/cobra's commands over spf13/pflag's flags:
// GNU-style flags (--name VALUE or --name=VALUE, a few one-letter ones such
// as -i), flags after positional arguments too, shell completion and man
// pages. What stays ours is the wording: a usage error is three short
// lines (what is wrong, the usage line, where to read more) and exits 2,
// and --help prints every flag with its placeholder, default and, for an
// enumeration, its values.

// command is one subcommand. setup defines its flags on fs and returns
// what runs with the positional arguments once they are parsed; an error
// it returns is printed (a *usageError as a usage error, exit 2; an
// exitCode as that status, having explained itself).
type command struct {
	name     string // "mount", or "bench report" for a subcommand
	summary  string
	args     string // the positional arguments' synopsis: "DIR MOUNTPOINT"
	min, max int    // how many positional arguments (max -1: no limit)
	hidden   bool   // not listed (a generator of the docs)
	setup    func(fs *flagSet) func(pos []string) error
}

var commands []command

func register(c command) { commands = append(commands, c) }

// exitCode asks main to exit with a status after printing nothing more.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// flagSet is a command's flags and what its help and usage errors say.
type flagSet struct {
	*pflag.FlagSet
	cmd   string   // "mount", "bench report"
	args  string   // "DIR MOUNTPOINT"
	about string   // the longer description --help prints
	also  []string // further usage lines (another form of the command)
	// raw are the arguments after the command's name, as given (a mount
	// starts its daemon with them); ctx is the command's context.
	raw []string
	ctx context.Context
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
	return &usageError{cmd: fs.cmd, args: fs.args, hasFlags: len(fs.flags()) > 0, msg: fmt.Sprintf(format, a...)}
}

// enumFlag is a flag whose value is one of a few words, parsed once into
// its typed value v by parse; its help lists the words, and so does its
// error (parse's, which names them).
type enumFlag[T any] struct {
	v      T
	text   string
	values []string
	parse  func(string) (T, error)
}

func (e *enumFlag[T]) String() string { return e.text }
func (e *enumFlag[T]) Type() string   { return "enum" }
func (e *enumFlag[T]) Set(s string) error {
	v, err := e.parse(s)
	if err != nil {
		return err
	}
	e.v, e.text = v, s
	return nil
}
func (e *enumFlag[T]) choices() []string { return e.values }

// enumer is what help and completion ask of any enumFlag.
type enumer interface{ choices() []string }

// enumVar defines an enumeration flag of the values given, parsed by
// parse, starting as def.
func enumVar[T any](fs *flagSet, name, def string, values []string, parse func(string) (T, error), usage string) *enumFlag[T] {
	e := &enumFlag[T]{values: values, parse: parse}
	if err := e.Set(def); err != nil {
		panic(fmt.Sprintf("flag --%s: default %q: %v", name, def, err)) // a programming error
	}
	fs.Var(e, name, usage)
	return e
}

// stringEnum defines an enumeration flag whose value is the word itself.
func stringEnum(fs *flagSet, name, def string, values []string, what, usage string) *enumFlag[string] {
	return enumVar(fs, name, def, values, func(s string) (string, error) {
		if s == def {
			return s, nil
		}
		for _, v := range values {
			if s == v {
				return s, nil
			}
		}
		return "", fmt.Errorf("unknown %s %q (want %s)", what, s, orList(values))
	}, usage)
}

// orList spells a list as a sentence does: "a, b or c".
func orList(vs []string) string {
	if len(vs) < 2 {
		return strings.Join(vs, "")
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " or " + vs[len(vs)-1]
}

// flagErrorText says what is wrong with a flag as help spells flags.
func flagErrorText(err error) string {
	var notExist *pflag.NotExistError
	var needs *pflag.ValueRequiredError
	var invalid *pflag.InvalidValueError
	var syntax *pflag.InvalidSyntaxError
	switch {
	case errors.As(err, &notExist):
		if s := notExist.GetSpecifiedShortnames(); s != "" {
			return fmt.Sprintf("unknown flag -%s in -%s", notExist.GetSpecifiedName()[:1], s)
		}
		return "unknown flag --" + notExist.GetSpecifiedName()
	case errors.As(err, &needs):
		return "flag needs an argument: " + dashed(needs.GetFlag())
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		if _, ok := f.Value.(enumer); ok {
			return fmt.Sprintf("%s: %v", dashed(f), invalid.Unwrap())
		}
		why := invalid.Unwrap().Error()
		switch f.Value.Type() {
		case "bool":
			why = "want true or false"
		case "duration":
			why = "want a duration such as 500ms, 2s or 1m30s"
		case "int", "int64", "uint", "uint64":
			why = "want a whole number"
		case "float64":
			why = "want a number"
		}
		return fmt.Sprintf("invalid value %q for %s: %s", invalid.GetValue(), dashed(f), why)
	case errors.As(err, &syntax):
		return "bad flag syntax: " + syntax.GetSpecifiedFlag()
	}
	return err.Error()
}

// dashed spells a flag as the user may have: -i for one with a one-letter
// name too, else --name.
func dashed(f *pflag.Flag) string {
	if f.Shorthand != "" {
		return "-" + f.Shorthand + "/--" + f.Name
	}
	return "--" + f.Name
}

// newRoot builds the command tree afresh (each run parses into new flag
// variables), with the flag sets of its commands.
func newRoot(args []string) (*cobra.Command, map[*cobra.Command]*flagSet) {
	root := &cobra.Command{
		Use:           "xlogfs",
		Short:         "a FUSE filesystem with an XFS-style write-ahead log, for measuring log checksum cost",
		SilenceErrors: true,
		SilenceUsage:  true,
		// The completion command of cobra: bash, zsh, fish (and powershell).
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
	}
	sets := map[*cobra.Command]*flagSet{}
	byName := map[string]*cobra.Command{"": root}
	for _, c := range sortedCommands() {
		parentName, leaf := "", c.name
		if i := strings.LastIndex(c.name, " "); i >= 0 {
			parentName, leaf = c.name[:i], c.name[i+1:]
		}
		use := leaf
		if c.args != "" {
			use += " " + c.args
		}
		cc := &cobra.Command{Use: use, Short: c.summary, SilenceErrors: true, SilenceUsage: true,
			Hidden: c.hidden}
		fs := &flagSet{FlagSet: cc.Flags(), cmd: c.name, args: c.args}
		fs.SortFlags = true
		exec := c.setup(fs)
		cc.Long = strings.TrimSpace(fs.about)
		min, max := c.min, c.max
		cc.Args = func(_ *cobra.Command, pos []string) error {
			if len(pos) < min {
				return fs.usagef("missing %s", missingArgs(fs.args, len(pos), min))
			}
			if max >= 0 && len(pos) > max {
				extra := strings.Join(pos[max:], " ")
				if max == 0 {
					return fs.usagef("takes no arguments, got %q", extra)
				}
				return fs.usagef("too many arguments: %q (want %s)", extra, fs.args)
			}
			return nil
		}
		cc.RunE = func(cc *cobra.Command, pos []string) error {
			fs.ctx = cc.Context()
			if n := len(strings.Fields(fs.cmd)); n <= len(args) {
				fs.raw = args[n:]
			}
			return exec(pos)
		}
		if min == 0 && max == 0 {
			cc.ValidArgsFunction = cobra.NoFileCompletions
		}
		fs.VisitAll(func(f *pflag.Flag) {
			if e, ok := f.Value.(enumer); ok {
				vals := e.choices()
				// Help, man pages and completion all list the values.
				f.Usage += " (one of: " + strings.Join(vals, ", ") + ")"
				cc.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp))
			}
		})
		sets[cc] = fs
		byName[c.name] = cc
		byName[parentName].AddCommand(cc)
	}
	// cobra's help and completion commands, made now so that run finds
	// them and the top-level usage lists them.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Short = "print a command's help (xlogfs help COMMAND)"
		case "completion":
			c.Short = "print a shell completion script: bash, zsh, fish (or powershell)"
		}
	}
	root.SetFlagErrorFunc(func(cc *cobra.Command, err error) error {
		fs := sets[cc]
		if fs == nil {
			fs = &flagSet{FlagSet: cc.Flags(), cmd: strings.TrimPrefix(cc.CommandPath(), "xlogfs ")}
		}
		return fs.usagef("%s", flagErrorText(err))
	})
	root.SetHelpFunc(func(cc *cobra.Command, _ []string) {
		if fs := sets[cc]; fs != nil {
			fs.printHelp(cc.OutOrStdout())
			return
		}
		if cc == root {
			usage(cc.OutOrStdout(), root)
			return
		}
		// cobra's own commands (completion) keep cobra's help.
		cc.SetHelpFunc(nil)
		cc.Parent().SetHelpFunc(nil)
		root.SetHelpFunc(nil)
		cc.Help()
	})
	return root, sets
}

func sortedCommands() []command {
	out := append([]command(nil), commands...)
	// Parents before their subcommands, each level by name.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].name < out[j-1].name; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func run(args []string, stdout, stderr io.Writer) int {
	root, _ := newRoot(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if len(args) == 0 {
		usage(stderr, root)
		return 2
	}
	switch args[0] {
	case "-h", "--help":
		usage(stdout, root)
		return 0
	case "help":
		if len(args) == 1 {
			usage(stdout, root)
			return 0
		}
	}
	if args[0] != "help" && !strings.HasPrefix(args[0], "__") {
		if cc, _, err := root.Find(args[:1]); err != nil || cc == root {
			fmt.Fprintf(stderr, "xlogfs: unknown command %q\n", args[0])
			fmt.Fprintln(stderr, "usage: xlogfs <command> [flags] [args]")
			fmt.Fprintln(stderr, "Try 'xlogfs help' for the list of commands.")
			return 2
		}
	}
	root.SetArgs(args)
	cc, err := root.ExecuteC()
	var code exitCode
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	case errors.As(err, &ue):
		ue.print(stderr)
		return 2
	}
	name := strings.TrimPrefix(cc.CommandPath(), "xlogfs ")
	if cc == root {
		name = args[0]
	}
	fmt.Fprintf(stderr, "xlogfs %s: %v\n", name, err)
	return 1
}

// usage is the top-level help: the commands and their summaries.
func usage(w io.Writer, root *cobra.Command) {
	fmt.Fprintln(w, "xlogfs — "+root.Short)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: xlogfs <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	width := 0
	var cmds []*cobra.Command
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			cmds = append(cmds, c)
			width = max(width, len(c.Name()))
		}
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name(), c.Short)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "xlogfs <command> --help" for a command's flags.`)
	fmt.Fprintln(w, "Exit status: 0 on success, 2 for a mistake on the command line, 1 for any other failure.")
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
// of its usage, else one for its name or type.
func flagArg(f *pflag.Flag) string {
	if f.Value.Type() == "bool" {
		return ""
	}
	if name, _ := pflag.UnquoteUsage(f); strings.Contains(f.Usage, "`") {
		return name
	}
	if n := argNames[f.Name]; n != "" {
		return n
	}
	if e, ok := f.Value.(enumer); ok {
		if alts := strings.Join(e.choices(), "|"); len(alts) <= 24 {
			return alts
		}
	}
	switch f.Value.Type() {
	case "size":
		return "SIZE"
	case "duration":
		return "DURATION"
	case "int", "int64", "uint", "uint64":
		return "N"
	case "float64":
		return "X"
	}
	// A string: its name's last word, upper-cased (--cksum-impl IMPL).
	words := strings.Split(f.Name, "-")
	return strings.ToUpper(words[len(words)-1])
}

// argNames are the placeholders of flags whose name does not say what
// their value is; a flag of that name means the same in every command.
var argNames = map[string]string{
	"cpuprofile": "FILE", "log": "FILE", "pprof": "ADDR", "syslog": "SOCKET", "journal": "MODE",
	"out": "DIR", "scan-dir": "DIR", "reference": "TARGET", "mount-flags": "FLAGS",
	"workload": "NAME", "device": "NAME", "type": "OP", "from": "LSN", "to": "LSN",
	"baseline": "LIST", "modes": "LIST", "impls": "LIST", "algos": "LIST", "sizes": "LIST",
	"sections": "LIST", "record-sizes": "LIST", "transports": "LIST",
}

// flags returns the command's flags, sorted, without --help.
func (fs *flagSet) flags() []*pflag.Flag {
	var out []*pflag.Flag
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" && !f.Hidden {
			out = append(out, f)
		}
	})
	return out
}

// synopsis is the usage line --help prints: every flag, then the
// positional arguments, wrapped at 80 columns under the command.
func (fs *flagSet) synopsis() string {
	lead := "usage: xlogfs " + fs.cmd
	var words []string
	for _, f := range fs.flags() {
		w := "--" + f.Name
		if f.Shorthand != "" {
			w = "-" + f.Shorthand + "|" + w
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

// flagHelp is one flag's description in --help: its usage, its values if
// an enumeration, its default.
func flagHelp(f *pflag.Flag) string {
	_, text := pflag.UnquoteUsage(f)
	if f.Value.Type() != "bool" && f.DefValue != "" && f.DefValue != "0" && f.DefValue != "0s" && f.DefValue != "[]" {
		text += fmt.Sprintf(" (default %s)", f.DefValue)
	}
	return text
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
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + ", " + name
		}
		if arg := flagArg(f); arg != "" {
			name += " " + arg
		}
		fmt.Fprintf(w, "  %s\n%s\n", name, wrap(flagHelp(f), "        ", 80))
	}
}

// printJSON writes v to w as the commands' --json output: indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
