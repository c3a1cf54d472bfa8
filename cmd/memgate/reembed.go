package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/postgres"
)

// cmdReembed gives the memories of a tenant (or one principal) vectors of
// the embedder named by --embedder, in batches, through the store, while a
// server may keep serving the same database. It is resumable: memories
// already embedded by that model are skipped, so after an interruption the
// same command continues where it stopped. Progress goes to standard
// error, at most once a second and after the last batch. With --postgres
// (or $MEMGATE_POSTGRES_URL) it works on a PostgreSQL database instead of
// the SQLite file.
func cmdReembed(e env, args []string) error {
	var tenant, principal, pg string
	var batch int
	c := newCommon(e, "reembed", "--tenant T [--principal P] --embedder ollama:MODEL|openai:MODEL|builtin [--embedder-url URL] [--batch N] [--db PATH | --postgres URL]")
	c.fs.StringVar(&tenant, "tenant", "", "tenant whose memories are re-embedded (required)")
	c.fs.StringVar(&principal, "principal", "", "only this principal's memories (default: every principal of the tenant)")
	c.fs.IntVar(&batch, "batch", engine.DefaultReembedBatch, "memories read and embedded at a time")
	c.fs.StringVar(&pg, "postgres", os.Getenv(postgresURLEnv), "PostgreSQL URL to use instead of --db (default $"+postgresURLEnv+")")
	check := func(pos []string) error {
		switch {
		case len(pos) > 0:
			return usageError{"reembed takes no arguments"}
		case c.server != "":
			return c.local("reembed")
		case batch <= 0:
			return usageError{"--batch must be positive"}
		case pg != "" && c.explicit("db"):
			return usageError{"--db and --postgres (or $" + postgresURLEnv + ") name two databases: use one"}
		}
		return nil
	}
	open := func() (*engine.Engine, func(), error) {
		if pg != "" {
			return openPostgresEngine(e.ctx, pg, &c.emb)
		}
		return c.openEngine(e.ctx)
	}
	return runCommand(args, e, command[*engine.Engine, *engine.ReembedResult]{fs: c.fs, json: &c.json, check: check, open: open,
		call: func(eng *engine.Engine) (*engine.ReembedResult, error) {
			return reembed(e, eng, memgate.Scope{Tenant: tenant, Principal: principal, AllPrincipals: principal == ""}, batch)
		},
		text: func(res *engine.ReembedResult) error {
			return printLine(e.stdout, "re-embedded %d of %d memories with %s %s (%d dimensions); %d were already current, %d changed meanwhile",
				res.Reembedded, res.Total, res.Model.Provider, res.Model.Model, res.Model.Dim, res.Current, res.Changed)
		},
	})
}

// reembed re-embeds the memories of s in batches, with progress on
// standard error at most once a second and after the last batch, each
// line once.
func reembed(e env, eng *engine.Engine, s memgate.Scope, batch int) (*engine.ReembedResult, error) {
	var last time.Time
	var shown *engine.ReembedProgress
	report := func(p engine.ReembedProgress, final bool) {
		if !final && time.Since(last) < time.Second || shown != nil && *shown == p {
			return // too soon, or said already (the last batch's line is the final one)
		}
		last, shown = time.Now(), &p
		fmt.Fprintf(e.stderr, "reembed: %d/%d examined, %d re-embedded, %d already current, %d changed meanwhile\n",
			p.Examined, p.Total, p.Reembedded, p.Current, p.Changed)
	}
	res, err := eng.Reembed(e.ctx, s, engine.ReembedOptions{Batch: batch, Progress: func(p engine.ReembedProgress) { report(p, false) }})
	if err != nil {
		if res != nil && res.Examined > 0 {
			report(res.ReembedProgress, true)
			fmt.Fprintf(e.stderr, "memgate reembed: stopped after re-embedding %d memories; run it again to continue (memories already done are skipped)\n", res.Reembedded)
		}
		return nil, err
	}
	report(res.ReembedProgress, true)
	return res, nil
}

// openPostgresEngine opens the PostgreSQL database at url (errors show it
// with the password redacted) and an engine over it with the embedder the
// flags name.
func openPostgresEngine(ctx context.Context, url string, ef *embedderFlags) (*engine.Engine, func(), error) {
	emb, err := ef.embedder()
	if err != nil {
		return nil, nil, err
	}
	db, err := postgres.Open(ctx, postgres.Config{URL: url})
	if err != nil {
		return nil, nil, err
	}
	eng, err := engine.New(engine.Config{Store: db, Embedder: emb})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return eng, func() { eng.Close(); db.Close() }, nil
}
