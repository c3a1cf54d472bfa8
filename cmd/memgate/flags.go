package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memgate/memgate"
)

// parse parses args with fs, allowing flags after positional arguments
// (memgate get ID --json), and returns the positional arguments. "--" ends
// flag parsing. A flag the set does not know, a missing or malformed value
// is a usage error (exit 2), returned for run to print once; a time flag's
// malformed value is bad input naming its field (exit 1), as any other
// field's is.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{fmt.Sprintf("%v (memgate %s -h lists the flags)", err, fs.Name())}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		// fs.Parse stops at the first non-flag, or after "--".
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	var bad error
	fs.Visit(func(f *flag.Flag) {
		if tf, ok := f.Value.(*timeFlag); ok && tf.err != nil && bad == nil {
			bad = tf.err
		}
	})
	if bad != nil {
		return nil, bad
	}
	return pos, nil
}

// newFlagSet returns a flag set that neither exits nor prints on an error:
// the flag package would print the error and the whole usage itself, and
// run prints it again; parse returns it instead, and run prints it once.
// -h prints the usage and the flags on stderr.
func newFlagSet(name string, stderr io.Writer, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	out := &flagErrors{}
	fs.SetOutput(out)
	fs.Usage = func() {
		if out.failed {
			return // a parse error, which parse returns
		}
		fmt.Fprintf(stderr, "usage: memgate %s %s\n\nflags:\n", name, usage)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		fs.SetOutput(out)
	}
	return fs
}

// flagErrors swallows what the flag package prints about a parse error
// (the error, which parse returns) and remembers that it did, so Usage
// knows it is called for an error rather than for -h.
type flagErrors struct{ failed bool }

func (f *flagErrors) Write(p []byte) (int, error) {
	f.failed = true
	return len(p), nil
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

// values converts the values of a list flag (nil for none).
func values[T ~string](l listFlag) []T {
	var out []T
	for _, v := range l {
		out = append(out, T(v))
	}
	return out
}

// timeFlag is an optional RFC 3339 time. A malformed value is kept in err
// for parse to return as bad input naming the field: returned by Set, the
// flag package would turn it into a usage error's text.
type timeFlag struct {
	field string
	t     *time.Time
	err   error
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
		f.t, f.err = nil, err
		return nil
	}
	f.t, f.err = &t, nil
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

// givenFlags tells which of the flags a register method added to fs (those
// match accepts) were given on the command line.
type givenFlags struct {
	fs    *flag.FlagSet
	match func(name string) bool
}

// explicit returns the matching flags given on the command line, in
// lexical order (none before the flags are registered).
func (g givenFlags) explicit() []string {
	if g.fs == nil {
		return nil
	}
	var set []string
	g.fs.Visit(func(f *flag.Flag) {
		if g.match(f.Name) {
			set = append(set, f.Name)
		}
	})
	return set
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
