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
	var c common
	var tenant, principal string
	var batch int
	var pg string
	fs := newFlagSet("reembed", e.stderr, "--tenant T [--principal P] --embedder ollama:MODEL|openai:MODEL|builtin [--embedder-url URL] [--batch N] [--db PATH | --postgres URL]")
	c.register(fs)
	fs.StringVar(&tenant, "tenant", "", "tenant whose memories are re-embedded (required)")
	fs.StringVar(&principal, "principal", "", "only this principal's memories (default: every principal of the tenant)")
	fs.IntVar(&batch, "batch", engine.DefaultReembedBatch, "memories read and embedded at a time")
	fs.StringVar(&pg, "postgres", os.Getenv(postgresURLEnv), "PostgreSQL URL to use instead of --db (default $"+postgresURLEnv+")")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{"reembed takes no arguments"}
	}
	if err := c.local("reembed"); err != nil {
		return err
	}
	if batch <= 0 {
		return usageError{"--batch must be positive"}
	}
	open := c.openEngine
	if pg != "" {
		if c.explicit("db") {
			return usageError{"--db and --postgres (or $" + postgresURLEnv + ") name two databases: use one"}
		}
		open = func(ctx context.Context) (*engine.Engine, func(), error) { return openPostgresEngine(ctx, pg, &c.emb) }
	}
	eng, done, err := open(e.ctx)
	if err != nil {
		return err
	}
	defer done()
	s := memgate.Scope{Tenant: tenant, Principal: principal, AllPrincipals: principal == ""}
	var last time.Time
	report := func(p engine.ReembedProgress, final bool) {
		if !final && time.Since(last) < time.Second {
			return
		}
		last = time.Now()
		fmt.Fprintf(e.stderr, "reembed: %d/%d examined, %d re-embedded, %d already current, %d changed meanwhile\n",
			p.Examined, p.Total, p.Reembedded, p.Current, p.Changed)
	}
	res, err := eng.Reembed(e.ctx, s, engine.ReembedOptions{Batch: batch, Progress: func(p engine.ReembedProgress) { report(p, false) }})
	if err != nil {
		if res != nil && res.Examined > 0 {
			report(res.ReembedProgress, true)
			fmt.Fprintf(e.stderr, "memgate reembed: stopped after re-embedding %d memories; run it again to continue (memories already done are skipped)\n", res.Reembedded)
		}
		return err
	}
	report(res.ReembedProgress, true)
	if c.json {
		return writeJSON(e.stdout, res)
	}
	fmt.Fprintf(e.stdout, "re-embedded %d of %d memories with %s %s (%d dimensions); %d were already current, %d changed meanwhile\n",
		res.Reembedded, res.Total, res.Model.Provider, res.Model.Model, res.Model.Dim, res.Current, res.Changed)
	return nil
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
