package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/guard"
	"github.com/memgate/memgate/policy"
)

// common holds the flags every command over a backend takes.
type common struct {
	db     string
	json   bool
	policy string
	server string
	emb    embedderFlags
	fs     *flag.FlagSet
	// created, set by the commands meant to create a database (remember,
	// import), lets openEngine create a missing --db file and is where it
	// says so; nil, the file must exist (see openSQLite).
	created io.Writer
}

// newCommon returns the flag set of the command name (in c.fs) with the
// common flags registered.
func newCommon(e env, name, usage string) *common {
	c := &common{}
	c.register(newFlagSet(name, e.stderr, usage))
	return c
}

// scoped is newCommon with the scope flags registered too.
func scoped(e env, name, usage string) (*common, *scopeFlags) {
	c, s := newCommon(e, name, usage), &scopeFlags{}
	s.register(c.fs)
	return c, s
}

func (c *common) register(fs *flag.FlagSet) {
	c.registerLocal(fs)
	fs.BoolVar(&c.json, "json", false, "print JSON (the HTTP API's shapes)")
	c.emb.register(fs)
}

// registerLocal registers the flags that say where a command acts: --db,
// --policy and --server.
func (c *common) registerLocal(fs *flag.FlagSet) {
	c.fs = fs
	fs.StringVar(&c.db, "db", envDefault("MEMGATE_DB", "memgate.db"), "path of the embedded database")
	fs.StringVar(&c.policy, "policy", os.Getenv("MEMGATE_POLICY"), "write-gate policy file (JSON; default: the built-in policy)")
	fs.StringVar(&c.server, "server", os.Getenv("MEMGATE_SERVER"), "URL of a memgate server to use instead of --db (key from $MEMGATE_API_KEY)")
}

// envDefault is the environment variable name, or def when it is empty.
func envDefault(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// explicit reports whether the flag name was given on the command line.
func (c *common) explicit(name string) bool { return explicitFlag(c.fs, name) }

// explicitFlag reports whether the flag name was given on the command line.
func explicitFlag(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// local refuses --server for a command that only works on the embedded
// database.
func (c *common) local(what string) error {
	if c.server == "" {
		return nil
	}
	return usageError{what + " works on the local database only: drop --server (or unset MEMGATE_SERVER)"}
}

// remoteOnly refuses, with --server, --db, --policy, the embedder flags
// and the flags named in extra: where names what they apply to, whose
// what applies instead.
func (c *common) remoteOnly(where, whose string, extra []string) error {
	for _, f := range []string{"db", "policy"} {
		if c.explicit(f) {
			return usageError{"--" + f + " applies to " + where + "; with --server the server's own applies"}
		}
	}
	if set := append(c.emb.explicit(), extra...); len(set) > 0 {
		return usageError{"--" + set[0] + " applies to " + where + "; with --server the server's " + whose}
	}
	return nil
}

// open returns the backend the command runs against: a memgate server with
// --server (or $MEMGATE_SERVER), authenticated with $MEMGATE_API_KEY, or
// else the database at --db with an engine over it. Remotely the tenant is
// the key's; the command's --tenant, when given, is sent so that the
// server refuses one that differs.
func (c *common) open(ctx context.Context) (backend, func(), error) {
	if c.server != "" {
		if err := c.remoteOnly("the local database", "own embedder applies", nil); err != nil {
			return nil, nil, err
		}
		tenant := ""
		if f := c.fs.Lookup("tenant"); f != nil {
			tenant = f.Value.String()
		}
		r, err := newRemote(c.server, tenant)
		if err != nil {
			return nil, nil, err
		}
		return r, func() {}, nil
	}
	eng, done, err := c.openEngine(ctx)
	if err != nil {
		return nil, nil, err
	}
	return localBackend{eng}, done, nil
}

// openEngine opens the database and an engine over it.
func (c *common) openEngine(ctx context.Context) (*engine.Engine, func(), error) {
	pol := policy.Default()
	if c.policy != "" {
		p, err := policy.Load(c.policy)
		if err != nil {
			return nil, nil, fmt.Errorf("policy %s: %w", c.policy, err)
		}
		pol = p
	}
	emb, err := c.emb.embedder()
	if err != nil {
		return nil, nil, err
	}
	db, err := openSQLite(ctx, c.db, c.created)
	if err != nil {
		return nil, nil, err
	}
	eng, err := engine.New(engine.Config{Store: db, Embedder: emb, Policy: pol})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return eng, func() { eng.Close(); db.Close() }, nil
}

// openGuard opens an engine with open and the guard over it that a local
// session acts through (mcp, keys): the process owner holds the database,
// so no rate limit applies.
func openGuard(open func() (*engine.Engine, func(), error)) (*guard.Guard, func(), error) {
	eng, done, err := open()
	if err != nil {
		return nil, nil, err
	}
	g, err := guard.New(guard.Config{Engine: eng, RateLimit: guard.RateLimit{PerSecond: -1}})
	if err != nil {
		done()
		return nil, nil, err
	}
	return g, done, nil
}
