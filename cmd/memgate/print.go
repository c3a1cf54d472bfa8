package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/memgate/memgate"
)

// table writes a tab-aligned table: the header line, then a line for each
// of n rows, as row(i) gives it (its cells separated by tabs).
func table(w io.Writer, header string, n int, row func(i int) string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for i := range n {
		fmt.Fprintln(tw, row(i))
	}
	return tw.Flush()
}

func statusText(m *memgate.Memory) string {
	if m.Expired {
		return "expired"
	}
	return string(m.Status)
}

// preview shortens content for a table cell, on one line.
func preview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// printLine writes one line of text to w. It returns nil, as the commands
// always have: what a command printed is not its outcome.
func printLine(w io.Writer, format string, a ...any) error {
	fmt.Fprintf(w, format+"\n", a...)
	return nil
}
