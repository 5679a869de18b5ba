// Command xlogfs is a FUSE filesystem whose journal is an XFS-style
// write-ahead log, and the tools to inspect it and measure what its
// checksum costs. Run "xlogfs help" for the commands.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// command is one subcommand: run gets the arguments after the command name
// and returns an error to print (or errSilent when it already explained
// itself, or exitCode for a specific status).
type command struct {
	name    string
	summary string
	run     func(args []string) error
}

var commands []command

func register(c command) { commands = append(commands, c) }

// exitCode asks main to exit with a status after printing nothing more.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	sort.Slice(commands, func(i, j int) bool { return commands[i].name < commands[j].name })
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			return run([]string{args[1], "--help"}, stdout, stderr)
		}
		usage(stdout)
		return 0
	}
	for _, c := range commands {
		if c.name == name {
			err := c.run(args[1:])
			var code exitCode
			switch {
			case err == nil:
				return 0
			case errors.Is(err, flag.ErrHelp):
				return 0
			case errors.As(err, &code):
				return int(code)
			case errors.Is(err, errUsage):
				return 2
			}
			fmt.Fprintf(stderr, "xlogfs %s: %v\n", name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "xlogfs: unknown command %q\n\n", name)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "xlogfs — a FUSE filesystem with an XFS-style write-ahead log, for measuring log checksum cost")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: xlogfs <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "xlogfs <command> --help" for a command's flags.`)
}

// errUsage means the flag package already printed what was wrong and the usage.
var errUsage = errors.New("usage")

// newFlags returns a FlagSet for a command whose usage line is synopsis and
// whose longer description is about.
func newFlags(name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet("xlogfs "+name, flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: xlogfs %s %s\n\n", name, synopsis)
		if about != "" {
			fmt.Fprintln(w, strings.TrimSpace(about))
			fmt.Fprintln(w)
		}
		var any bool
		fs.VisitAll(func(*flag.Flag) { any = true })
		if any {
			fmt.Fprintln(w, "flags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parse parses args, allowing flags after positional arguments too
// ("xlogfs logprint DIR --json"), and checks the positional count.
func parse(fs *flag.FlagSet, args []string, minPos, maxPos int) ([]string, error) {
	// Help asked for goes to stdout; usage after a mistake goes to stderr.
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(os.Stdout)
			fs.Usage()
			return nil, flag.ErrHelp
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, errUsage
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
	if len(pos) < minPos || (maxPos >= 0 && len(pos) > maxPos) {
		want := fmt.Sprintf("%d", minPos)
		switch {
		case maxPos < 0:
			want = fmt.Sprintf("at least %d", minPos)
		case maxPos != minPos:
			want = fmt.Sprintf("%d to %d", minPos, maxPos)
		}
		fmt.Fprintf(fs.Output(), "xlogfs: %s takes %s argument(s), got %d\n", strings.TrimPrefix(fs.Name(), "xlogfs "), want, len(pos))
		fs.Usage()
		return nil, errUsage
	}
	return pos, nil
}
