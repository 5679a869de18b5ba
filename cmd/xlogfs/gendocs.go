package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// gen-docs is the generator of docs/commands.md (every command's --help)
// and of the man pages (cobra/doc's, section 8), run by "make docs" and
// "make man". It is a hidden command of xlogfs itself, not a program of
// its own, because the command tree lives in this package main; a test
// (TestCommandsDocUpToDate) fails when docs/commands.md is stale.
func init() {
	register(command{name: "gen-docs", summary: "write docs/commands.md or the man pages (make docs, make man)", min: 0, max: 0, hidden: true, setup: runGenDocs})
}

func runGenDocs(fs *flagSet) func([]string) error {
	fs.about = `Writes every command's --help into one Markdown file (--markdown FILE),
or a man page of every command into a directory (--man DIR).`
	md := fs.String("markdown", "", "write the commands' help to this Markdown `FILE`")
	man := fs.String("man", "", "write man pages into this `DIR`")
	return func([]string) error {
		if (*md == "") == (*man == "") {
			return fs.usagef("give one of --markdown and --man")
		}
		if *md != "" {
			return os.WriteFile(*md, commandsMarkdown(), 0o644)
		}
		if err := os.MkdirAll(*man, 0o755); err != nil {
			return err
		}
		root, _ := newRoot(nil)
		root.DisableAutoGenTag = true
		manEscape(root)
		// A fixed date: the pages change only when the commands do.
		date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		hdr := &doc.GenManHeader{Title: "XLOGFS", Section: "8", Source: "xlogfs " + Version, Manual: "xlogfs", Date: &date}
		if err := doc.GenManTree(root, hdr, *man); err != nil {
			return err
		}
		fmt.Printf("man pages in %s\n", *man)
		return nil
	}
}

// manEscape readies c's tree for cobra/doc's man pages, which render
// each command's text and flags as Markdown: a placeholder such as
// <reason> would be taken for an HTML tag and dropped, so every '<' is
// escaped.
func manEscape(c *cobra.Command) {
	esc := func(s string) string { return strings.ReplaceAll(s, "<", `\<`) }
	c.Long, c.Example = esc(c.Long), esc(c.Example)
	for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.PersistentFlags()} {
		fs.VisitAll(func(f *pflag.Flag) { f.Usage = esc(f.Usage) })
	}
	for _, sub := range c.Commands() {
		manEscape(sub)
	}
}

// commandsMarkdown is docs/commands.md: the top-level usage, then every
// visible command's --help, exactly as the command prints it.
func commandsMarkdown() []byte {
	var b bytes.Buffer
	b.WriteString("# xlogfs commands\n\n")
	b.WriteString("Generated from `--help` by `make docs` (`xlogfs gen-docs --markdown docs/commands.md`); do not edit.\n")
	b.WriteString("A test (TestCommandsDocUpToDate) fails when this file and the commands disagree.\n\n")
	root, sets := newRoot(nil)
	b.WriteString("```\n")
	usage(&b, root)
	b.WriteString("```\n")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if fs := sets[sub]; fs != nil && !sub.Hidden {
				fmt.Fprintf(&b, "\n## xlogfs %s\n\n```\n", fs.cmd)
				fs.printHelp(&b)
				b.WriteString("```\n")
			}
			walk(sub)
		}
	}
	walk(root)
	return b.Bytes()
}

// repoFile is a path in the repository, from this package's directory.
func repoFile(rel string) string { return filepath.Join("..", "..", filepath.FromSlash(rel)) }
