package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memgate/memgate"
)

// parse parses args with fs, allowing flags after positional arguments
// (memgate get ID --json), and returns the positional arguments. "--" ends
// flag parsing.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// fs.Parse stops at the first non-flag, or after "--".
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// newFlagSet returns a flag set that reports errors instead of exiting.
func newFlagSet(name string, stderr io.Writer, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: memgate %s %s\n\nflags:\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// listFlag collects a repeatable, comma-separated flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// timeFlag is an optional RFC 3339 time.
type timeFlag struct {
	field string
	t     *time.Time
}

func (f *timeFlag) String() string {
	if f.t == nil {
		return ""
	}
	return f.t.Format(time.RFC3339)
}
func (f *timeFlag) Set(s string) error {
	t, err := parseTime(f.field, s)
	if err != nil {
		return err
	}
	f.t = &t
	return nil
}

func parseTime(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if d, err2 := time.Parse("2006-01-02", s); err2 == nil {
			return d, nil
		}
		return time.Time{}, memgate.FieldError(field, "must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
	}
	return t, nil
}

// scopeFlags are the scope flags most commands take.
type scopeFlags struct {
	tenant, principal, agent, conversation string
}

func (s *scopeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.tenant, "tenant", "", "tenant (required; with --server it is the key's and may be left out)")
	fs.StringVar(&s.principal, "principal", "", "principal: the person or actor the memory is about")
	fs.StringVar(&s.agent, "agent", "", "agent (optional: narrows to this agent and agent-wide memories)")
	fs.StringVar(&s.conversation, "conversation", "", "conversation (optional: narrows likewise)")
}

func (s *scopeFlags) scope() memgate.Scope {
	return memgate.Scope{Tenant: s.tenant, Principal: s.principal, Agent: s.agent, Conversation: s.conversation}
}
