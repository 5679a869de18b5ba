package benchreport

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// MaxWidth is the widest line of the report without --wide.
const MaxWidth = 120

// table takes a table's lines, cells separated by tabs as for
// text/tabwriter, and on Flush writes them aligned, two spaces between
// columns. Unless wide, it keeps as many columns, from the first, as fit
// in MaxWidth, and names the others below the table: they are in
// results.json, and --wide prints them.
type table struct {
	w     io.Writer
	wide  bool
	heads int // header lines: their cells name the columns
	buf   strings.Builder
}

func newTable(w io.Writer, wide bool, headerLines int) *table {
	return &table{w: w, wide: wide, heads: headerLines}
}

func (t *table) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the table.
func (t *table) Flush() {
	text := strings.TrimSuffix(t.buf.String(), "\n")
	t.buf.Reset()
	if text == "" {
		return
	}
	var rows [][]string
	ncol := 0
	for _, line := range strings.Split(text, "\n") {
		cells := strings.Split(line, "\t")
		if len(cells) > 1 && cells[len(cells)-1] == "" {
			cells = cells[:len(cells)-1]
		}
		rows = append(rows, cells)
		ncol = max(ncol, len(cells))
	}
	widths := make([]int, ncol)
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	keep := ncol
	if !t.wide {
		total := 0
		for i, wd := range widths {
			if i > 0 {
				total += 2
			}
			if total += wd; total > MaxWidth && i > 0 {
				keep = i
				break
			}
		}
	}
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r[:min(len(r), keep)] {
			if i > 0 {
				line.WriteString("  ")
			}
			line.WriteString(c)
			if i < min(len(r), keep)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
			}
		}
		fmt.Fprintln(t.w, strings.TrimRight(line.String(), " "))
	}
	if keep < ncol {
		var names []string
		for i := keep; i < ncol; i++ {
			var parts []string
			for _, r := range rows[:min(t.heads, len(rows))] {
				if i < len(r) && strings.TrimSpace(r[i]) != "" {
					parts = append(parts, strings.TrimSpace(r[i]))
				}
			}
			names = append(names, strings.Join(parts, " "))
		}
		wrap(t.w, fmt.Sprintf("(more columns with --wide, and in results.json: %s)", strings.Join(names, "; ")), " ")
	}
}
