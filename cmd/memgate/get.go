package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/memgate/memgate"
)

func cmdGet(e env, args []string) error {
	var id, key string
	c, s := scoped(e, "get", "--tenant T --principal P ID | --key KEY")
	c.fs.StringVar(&key, "key", "", "get the memory with this key at the scope's level (principal, agent, conversation) instead of by ID")
	check := func(pos []string) error {
		if key != "" {
			if len(pos) != 0 {
				return usageError{"give an ID or --key, not both"}
			}
			return nil
		}
		return oneID(&id)(pos)
	}
	return runBackend(args, e, c, check,
		func(be backend) (*memgate.Memory, error) {
			if key != "" {
				return be.GetByKey(e.ctx, s.scope(), key)
			}
			return be.Get(e.ctx, s.scope(), id)
		},
		func(m *memgate.Memory) error { printMemory(e.stdout, m); return nil })
}

func printMemory(w io.Writer, m *memgate.Memory) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, v)
		}
	}
	tm := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.Format(time.RFC3339)
	}
	row("id", m.ID)
	row("tenant", m.Tenant)
	row("principal", m.Principal)
	row("agent", m.Agent)
	row("conversation", m.Conversation)
	row("kind", string(m.Kind))
	row("source", string(m.Source))
	row("sensitivity", string(m.Sensitivity))
	row("status", statusText(m))
	row("status reason", m.StatusReason)
	row("reason", m.Reason)
	row("created", m.CreatedAt.Format(time.RFC3339))
	row("updated", m.UpdatedAt.Format(time.RFC3339))
	row("expires", tm(m.ExpiresAt))
	row("valid from", tm(m.ValidFrom))
	row("valid until", tm(m.ValidUntil))
	row("version", fmt.Sprint(m.Version))
	row("key", m.Key)
	row("created by", m.CreatedBy)
	row("updated by", m.UpdatedBy)
	row("supersedes", m.Supersedes)
	row("superseded by", m.SupersededBy)
	if m.Embedding != nil {
		row("embedding", fmt.Sprintf("%s %s dim %d", m.Embedding.Provider, m.Embedding.Model, m.Embedding.Dim))
	} else {
		row("embedding", "none")
	}
	row("sha256", m.ContentSHA256)
	if m.Metadata != nil {
		b, _ := json.Marshal(m.Metadata)
		row("metadata", string(b))
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%s\n", m.Content)
}
