package main

import (
	"fmt"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

func cmdList(e env, args []string) error {
	var f memgate.ListRequest
	var kinds, sources, statuses listFlag
	var all bool
	c, s := scoped(e, "list", "--tenant T (--principal P | --all-principals) [flags]")
	c.fs.BoolVar(&all, "all-principals", false, "list every principal of the tenant")
	c.fs.Var(&kinds, "kind", "only these kinds (repeatable or comma-separated)")
	c.fs.Var(&sources, "source", "only these sources")
	c.fs.Var(&statuses, "status", "only these statuses: active, pending, revoked, superseded, expired")
	c.fs.StringVar(&f.Text, "q", "", "literal text the content must contain (case-insensitive)")
	c.fs.IntVar(&f.Limit, "limit", store.DefaultPageSize, fmt.Sprintf("page size (max %d)", store.MaxPageSize))
	c.fs.StringVar(&f.Cursor, "cursor", "", "next_cursor of the previous page")
	check := func(pos []string) error {
		f.Kinds, f.Sources, f.Statuses = values[memgate.Kind](kinds), values[memgate.Source](sources), values[memgate.Status](statuses)
		return noArgs("list takes no arguments (use --q for text)")(pos)
	}
	return runBackend(args, e, c, check,
		func(be backend) (ListResponse, error) {
			scope := s.scope()
			scope.AllPrincipals = all
			p, err := be.List(e.ctx, scope, f)
			if err != nil {
				return ListResponse{}, err
			}
			return listResponse(p), nil
		},
		func(p ListResponse) error {
			table(e.stdout, "ID\tSTATUS\tVERSION\tKIND\tSOURCE\tCREATED\tCONTENT", len(p.Memories), func(i int) string {
				m := p.Memories[i]
				return fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%s\t%s", m.ID, statusText(m), m.Version, m.Kind, m.Source, m.CreatedAt.Format(time.RFC3339), preview(m.Content, 60))
			})
			if p.Clamped {
				fmt.Fprintf(e.stderr, "note: limit clamped to %d\n", p.Limit)
			}
			if p.NextCursor != "" {
				fmt.Fprintf(e.stderr, "more: --cursor %s\n", p.NextCursor)
			}
			return nil
		})
}

// ListResponse is the JSON shape of a list (the HTTP API's too).
type ListResponse struct {
	Memories   []*memgate.Memory `json:"memories"`
	NextCursor string            `json:"next_cursor,omitempty"`
	Limit      int               `json:"limit"`
	Clamped    bool              `json:"clamped,omitempty"`
}

func listResponse(p *memgate.Page) ListResponse {
	ms := p.Memories
	if ms == nil {
		ms = []*memgate.Memory{}
	}
	return ListResponse{Memories: ms, NextCursor: p.NextCursor, Limit: p.Limit, Clamped: p.Clamped}
}
