// Command xlogfs is a FUSE filesystem whose journal is an XFS-style
// write-ahead log, and the tools to inspect it and measure what its
// checksum costs. Run "xlogfs help" for the commands.
//
// Exit status: 0 on success; 2 when the command line itself is wrong (an
// unknown flag, a bad flag value, a missing argument: decided without
// looking at the system), with a short message, the command's usage line
// and a pointer to --help; 1 for every other failure.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one subcommand: run gets the arguments after the command name
// and returns an error to print (a *usageError for a mistake on the
// command line, errSilent-like exitCode when it already explained itself).
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
			var ue *usageError
			switch {
			case err == nil:
				return 0
			case errors.Is(err, flag.ErrHelp):
				return 0
			case errors.As(err, &code):
				return int(code)
			case errors.As(err, &ue):
				ue.print(stderr)
				return 2
			}
			fmt.Fprintf(stderr, "xlogfs %s: %v\n", name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "xlogfs: unknown command %q\n", name)
	fmt.Fprintln(stderr, "usage: xlogfs <command> [flags] [args]")
	fmt.Fprintln(stderr, "Try 'xlogfs help' for the list of commands.")
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
	fmt.Fprintln(w, "Exit status: 0 on success, 2 for a mistake on the command line, 1 for any other failure.")
}
