package main

import (
	"fmt"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

func cmdAudit(e env, args []string) error {
	var f memgate.AuditFilter
	var from, to timeFlag
	c, s := scoped(e, "audit", "--tenant T [--principal P] [--memory ID] [--recall R] [--action A] [--from T] [--to T]")
	fs := c.fs
	fs.StringVar(&f.MemoryID, "memory", "", "only events about this memory")
	fs.StringVar(&f.RecallID, "recall", "", "only this recall")
	fs.StringVar(&f.Action, "action", "", "only this action (remember, recall, update, revoke, approve, reject, delete, forget, ...)")
	from.field, to.field = "from", "to"
	fs.Var(&from, "from", "events at or after this time (RFC 3339)")
	fs.Var(&to, "to", "events before this time (RFC 3339)")
	fs.IntVar(&f.Limit, "limit", store.DefaultPageSize, "page size")
	fs.StringVar(&f.Cursor, "cursor", "", "next_cursor of the previous page")
	return runBackend(args, e, c, nil,
		func(be backend) (*memgate.AuditPage, error) {
			if from.t != nil {
				f.From = *from.t
			}
			if to.t != nil {
				f.To = *to.t
			}
			scope := s.scope()
			scope.AllPrincipals = s.principal == ""
			return be.Audit(e.ctx, scope, f)
		},
		func(p *memgate.AuditPage) error {
			table(e.stdout, "SEQ\tAT\tACTOR\tACTION\tPRINCIPAL\tRECALL\tMEMORIES\tCOUNTS", len(p.Events), func(i int) string {
				ev := p.Events[i]
				return fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%s\t%v\t%v", ev.Seq, ev.At.Format(time.RFC3339), ev.Actor, ev.Action, ev.Principal, ev.RecallID, ev.MemoryIDs, ev.Counts)
			})
			if p.NextCursor != "" {
				fmt.Fprintf(e.stderr, "more: --cursor %s\n", p.NextCursor)
			}
			return nil
		})
}
