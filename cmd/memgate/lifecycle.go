package main

import (
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/memgate/memgate/store"
)

func cmdApprove(e env, args []string) error {
	return statusCommand(e, args, "approve", func(be backend, s scopeFlags, id string, version int64, _ string) (string, error) {
		m, err := be.Approve(e.ctx, s.scope(), id, version)
		if err != nil {
			return "", err
		}
		return m.ID + " approved", nil
	})
}

func cmdReject(e env, args []string) error {
	return statusCommand(e, args, "reject", func(be backend, s scopeFlags, id string, version int64, reason string) (string, error) {
		m, err := be.Reject(e.ctx, s.scope(), id, version, reason)
		if err != nil {
			return "", err
		}
		return m.ID + " rejected", nil
	})
}

// statusCommand is the shape approve and reject share: both take the
// version that was reviewed (memgate get and memgate list show it), so
// a memory changed since is refused and stays pending.
func statusCommand(e env, args []string, name string, do func(backend, scopeFlags, string, int64, string) (string, error)) error {
	var c common
	var s scopeFlags
	var reason string
	var version int64
	fs := newFlagSet(name, e.stderr, "--tenant T --principal P --version N ID")
	c.register(fs)
	s.register(fs)
	fs.Int64Var(&version, "version", 0, "the version of the memory that was reviewed (required; memgate get and memgate list --status pending show it)")
	if name == "reject" {
		fs.StringVar(&reason, "reason", "", "why it is rejected")
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	id, err := oneID(pos)
	if err != nil {
		return err
	}
	if version <= 0 {
		return usageError{"--version is required: the version of the memory that was reviewed (memgate get and memgate list --status pending show it)"}
	}
	be, done, err := c.open(e.ctx)
	if err != nil {
		return err
	}
	defer done()
	msg, err := do(be, s, id, version, reason)
	if err != nil {
		return err
	}
	if c.json {
		m, err := be.Get(e.ctx, s.scope(), id)
		if err != nil {
			return err
		}
		return writeJSON(e.stdout, m)
	}
	fmt.Fprintln(e.stdout, msg)
	return nil
}

func cmdFeedback(e env, args []string) error {
	var c common
	var s scopeFlags
	var value float64
	fs := newFlagSet("feedback", e.stderr, "--tenant T --principal P ID --value X")
	c.register(fs)
	s.register(fs)
	fs.Float64Var(&value, "value", 0, "usefulness in [-1, 1] (required)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	id, err := oneID(pos)
	if err != nil {
		return err
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "value" })
	if !set {
		return usageError{"--value is required"}
	}
	be, done, err := c.open(e.ctx)
	if err != nil {
		return err
	}
	defer done()
	m, err := be.Feedback(e.ctx, s.scope(), id, value)
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(e.stdout, m)
	}
	fmt.Fprintf(e.stdout, "%s feedback: %d reports, mean %.2f\n", m.ID, m.Feedback.Count, m.Feedback.Mean())
	return nil
}

func cmdAudit(e env, args []string) error {
	var c common
	var s scopeFlags
	var f store.AuditFilter
	var from, to timeFlag
	fs := newFlagSet("audit", e.stderr, "--tenant T [--principal P] [--memory ID] [--recall R] [--action A] [--from T] [--to T]")
	c.register(fs)
	s.register(fs)
	fs.StringVar(&f.MemoryID, "memory", "", "only events about this memory")
	fs.StringVar(&f.RecallID, "recall", "", "only this recall")
	fs.StringVar(&f.Action, "action", "", "only this action (remember, recall, update, revoke, approve, reject, delete, forget, ...)")
	from.field, to.field = "from", "to"
	fs.Var(&from, "from", "events at or after this time (RFC 3339)")
	fs.Var(&to, "to", "events before this time (RFC 3339)")
	fs.IntVar(&f.Limit, "limit", store.DefaultPageSize, "page size")
	fs.StringVar(&f.Cursor, "cursor", "", "next_cursor of the previous page")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if from.t != nil {
		f.From = *from.t
	}
	if to.t != nil {
		f.To = *to.t
	}
	scope := s.scope()
	scope.AllPrincipals = s.principal == ""
	be, done, err := c.open(e.ctx)
	if err != nil {
		return err
	}
	defer done()
	p, err := be.Audit(e.ctx, scope, f)
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(e.stdout, p)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tAT\tACTOR\tACTION\tPRINCIPAL\tRECALL\tMEMORIES\tCOUNTS")
	for _, ev := range p.Events {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%v\t%v\n", ev.Seq, ev.At.Format(time.RFC3339), ev.Actor, ev.Action, ev.Principal, ev.RecallID, ev.MemoryIDs, ev.Counts)
	}
	tw.Flush()
	if p.NextCursor != "" {
		fmt.Fprintf(e.stderr, "more: --cursor %s\n", p.NextCursor)
	}
	return nil
}

func cmdSweep(e env, args []string) error {
	var c common
	var grace time.Duration
	fs := newFlagSet("sweep", e.stderr, "[--grace 24h]")
	c.register(fs)
	fs.DurationVar(&grace, "grace", 24*time.Hour, "delete memories that expired more than this long ago")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if c.server != "" {
		return usageError{"sweep runs on the server's own schedule (memgate serve --sweep-every); it has no --server form"}
	}
	be, done, err := c.open(e.ctx)
	if err != nil {
		return err
	}
	defer done()
	n, err := be.Sweep(e.ctx, grace)
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(e.stdout, map[string]int{"deleted": n})
	}
	fmt.Fprintf(e.stdout, "deleted %d expired memories\n", n)
	return nil
}
