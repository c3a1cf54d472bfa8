package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/postgres"
	"github.com/memgate/memgate/store"
)

const keysUsage = `usage: memgate keys SUBCOMMAND [flags]

subcommands:
  create   memgate keys create --tenant T --role admin|agent|user [--principal P] [--agent A] [--sources S,S] [--name N] [--json]
  list     memgate keys list --tenant T [--json]
  revoke   memgate keys revoke --tenant T ID

Every subcommand works on the embedded database (--db), on PostgreSQL
(--postgres URL, or $MEMGATE_POSTGRES_URL), or on a running server
(--server URL, with an admin key in $MEMGATE_API_KEY: its tenant is the
key's). The secret of a new key is printed once; only its SHA-256 is stored.
--sources names the sources the key may claim for what it writes (default
for its role: agent assistant,tool; user user; admin all).
`

// cmdKeys manages the API keys of the local database.
func cmdKeys(e env, args []string) error {
	sub, rest := subcommand(args)
	switch sub {
	case "create":
		return cmdKeysCreate(e, rest)
	case "list":
		return cmdKeysList(e, rest)
	case "revoke":
		return cmdKeysRevoke(e, rest)
	case "help":
		fmt.Fprint(e.stdout, keysUsage)
		return nil
	case "":
		fmt.Fprint(e.stderr, keysUsage)
		return usageError{"missing subcommand (create, list or revoke)"}
	}
	return usageError{fmt.Sprintf("unknown subcommand %q (create, list or revoke)", sub)}
}

// subcommand finds the subcommand among args, which may follow flags
// (memgate keys --db x.db list): the first argument that is neither a flag
// nor the value of one. It returns the other arguments in order.
func subcommand(args []string) (string, []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-h" || a == "-help" || a == "--help":
			return "help", nil
		case a == "--":
			return "", nil
		case strings.HasPrefix(a, "-"):
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && name != "json" {
				i++ // the flag's value
			}
		default:
			rest := append(append([]string{}, args[:i]...), args[i+1:]...)
			return a, rest
		}
	}
	return "", nil
}

// keyAdmin is where the keys subcommands act: the guard over a local
// database (SQLite or PostgreSQL), or a server's /v1/keys.
type keyAdmin interface {
	CreateKey(ctx context.Context, t memgate.Key) (string, *memgate.Key, error)
	ListKeys(ctx context.Context) ([]*memgate.Key, error)
	RevokeKey(ctx context.Context, id string) (*memgate.Key, error)
}

// keysFlags are the flags every keys subcommand shares.
type keysFlags struct {
	c        common
	postgres string
	tenant   string
	// create lets keys create make a missing SQLite file (the first key
	// of a new database); list and revoke need one that exists.
	create bool
}

// register returns the flag set of the keys subcommand name, with the
// flags every subcommand takes.
func (k *keysFlags) register(e env, name, usage string) *flag.FlagSet {
	fs := newFlagSet(name, e.stderr, usage)
	k.c.register(fs)
	fs.StringVar(&k.postgres, "postgres", os.Getenv(postgresURLEnv), "PostgreSQL URL to use instead of --db (default $"+postgresURLEnv+")")
	fs.StringVar(&k.tenant, "tenant", "", "tenant of the keys (required locally; with --server the key's, which --tenant may repeat)")
	return fs
}

// runKeys runs a keys subcommand against the key administration k opens.
func runKeys[T any](k *keysFlags, args []string, e env, check func([]string) error, call func(keyAdmin) (T, error), text func(T) error) error {
	return runCommand(args, e, command[keyAdmin, T]{fs: k.c.fs, json: &k.c.json, check: check,
		open: func() (keyAdmin, func(), error) { return k.open(e) }, call: call, text: text})
}

// open returns the key administration the flags name. Locally the keys go
// through the guard as a tenant admin's would (the process owner holds the
// database); remotely the server's guard decides for the key in
// $MEMGATE_API_KEY.
func (k *keysFlags) open(e env) (keyAdmin, func(), error) {
	c := &k.c
	if c.server != "" {
		if k.postgres != "" && c.explicit("postgres") || c.explicit("db") {
			return nil, nil, usageError{"--db and --postgres apply to a local database; with --server the server's own applies"}
		}
		r, err := newRemote(c.server, k.tenant)
		if err != nil {
			return nil, nil, err
		}
		return remoteKeys{r}, func() {}, nil
	}
	if err := memgate.CheckIdent("tenant", k.tenant); err != nil {
		return nil, nil, err
	}
	var db store.Store
	if k.postgres != "" {
		if c.explicit("db") {
			return nil, nil, usageError{"--db and --postgres (or $" + postgresURLEnv + ") name two databases: use one"}
		}
		pg, err := postgres.Open(e.ctx, postgres.Config{URL: k.postgres})
		if err != nil {
			return nil, nil, fmt.Errorf("open PostgreSQL: %w", err)
		}
		db = pg
	} else {
		var created io.Writer
		if k.create {
			created = e.stderr
		}
		sq, err := openSQLite(e.ctx, c.db, created)
		if err != nil {
			return nil, nil, err
		}
		db = sq
	}
	g, done, err := openGuard(func() (*engine.Engine, func(), error) {
		eng, err := engine.New(engine.Config{Store: db})
		if err != nil {
			db.Close()
			return nil, nil, err
		}
		return eng, func() { eng.Close(); db.Close() }, nil
	})
	if err != nil {
		return nil, nil, err
	}
	sess, err := g.Local(memgate.Key{ID: "cli", Tenant: k.tenant, Role: memgate.RoleAdmin})
	if err != nil {
		done()
		return nil, nil, err
	}
	return sess, done, nil
}

// remoteKeys is /v1/keys of a server.
type remoteKeys struct{ r *remoteBackend }

func (k remoteKeys) CreateKey(ctx context.Context, t memgate.Key) (string, *memgate.Key, error) {
	out, err := k.r.c.CreateKey(ctx, client.NewKey{Role: t.Role, Principal: t.Principal, Agent: t.Agent, Name: t.Name, Sources: t.Sources})
	if err != nil {
		return "", nil, err
	}
	return out.Secret, out.Key, nil
}

func (k remoteKeys) ListKeys(ctx context.Context) ([]*memgate.Key, error) { return k.r.c.ListKeys(ctx) }

func (k remoteKeys) RevokeKey(ctx context.Context, id string) (*memgate.Key, error) {
	return k.r.c.RevokeKey(ctx, id)
}

// CreatedKey is the JSON shape of keys create: the record and, this once,
// the secret.
type CreatedKey struct {
	Key    *memgate.Key `json:"key"`
	Secret string       `json:"secret"`
}

func cmdKeysCreate(e env, args []string) error {
	k := keysFlags{create: true}
	var tmpl memgate.Key
	var role, sources string
	fs := k.register(e, "keys create", "--tenant T --role admin|agent|user [--principal P] [--agent A] [--sources S,S] [--name N]")
	fs.StringVar(&role, "role", "", "admin, agent or user (required)")
	fs.StringVar(&tmpl.Principal, "principal", "", "bind the key to this principal (required for user)")
	fs.StringVar(&tmpl.Agent, "agent", "", "bind an agent key to this agent")
	fs.StringVar(&sources, "sources", "", "comma-separated sources the key may claim (default: its role's; e.g. user,assistant,tool for an agent that relays what people say)")
	fs.StringVar(&tmpl.Name, "name", "", "a label for people (e.g. which service uses the key)")
	check := func(pos []string) error {
		if len(pos) > 0 {
			return usageError{"keys create takes no arguments"}
		}
		r, err := memgate.ParseRole(role)
		if err != nil {
			return err
		}
		tmpl.Role = r
		for _, src := range strings.Split(sources, ",") {
			if src = strings.TrimSpace(src); src != "" {
				tmpl.Sources = append(tmpl.Sources, memgate.Source(src))
			}
		}
		return memgate.CheckSources("sources", tmpl.Sources)
	}
	return runKeys(&k, args, e, check,
		func(adm keyAdmin) (CreatedKey, error) {
			secret, rec, err := adm.CreateKey(e.ctx, tmpl)
			return CreatedKey{Key: rec, Secret: secret}, err
		},
		func(ck CreatedKey) error {
			fmt.Fprintln(e.stdout, ck.Secret)
			return printLine(e.stderr, "created %s key %s for tenant %s%s; the secret above is shown only this once",
				ck.Key.Role, ck.Key.ID, ck.Key.Tenant, bindingText(ck.Key))
		})
}

func bindingText(k *memgate.Key) string {
	s := ""
	if k.Principal != "" {
		s += ", principal " + k.Principal
	}
	if k.Agent != "" {
		s += ", agent " + k.Agent
	}
	return s
}

// keyList is the JSON shape of keys list.
type keyList struct {
	Keys []*memgate.Key `json:"keys"`
}

func cmdKeysList(e env, args []string) error {
	var k keysFlags
	k.register(e, "keys list", "--tenant T")
	return runKeys(&k, args, e, noArgs("keys list takes no arguments"),
		func(adm keyAdmin) (keyList, error) {
			keys, err := adm.ListKeys(e.ctx)
			return keyList{keys}, err
		},
		func(l keyList) error {
			return table(e.stdout, "ID\tROLE\tPRINCIPAL\tAGENT\tSOURCES\tNAME\tCREATED\tREVOKED", len(l.Keys), func(i int) string {
				key := l.Keys[i]
				revoked := ""
				if key.RevokedAt != nil {
					revoked = key.RevokedAt.Format(time.RFC3339)
				}
				return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", key.ID, key.Role, key.Principal, key.Agent,
					memgate.JoinSources(auth.SourcesOf(key)), key.Name, key.CreatedAt.Format(time.RFC3339), revoked)
			})
		})
}

func cmdKeysRevoke(e env, args []string) error {
	var k keysFlags
	var id string
	k.register(e, "keys revoke", "--tenant T ID")
	check := func(pos []string) error {
		if len(pos) != 1 {
			return usageError{"expected exactly one key ID"}
		}
		id = pos[0]
		return nil
	}
	return runKeys(&k, args, e, check,
		func(adm keyAdmin) (*memgate.Key, error) { return adm.RevokeKey(e.ctx, id) },
		func(key *memgate.Key) error { return printLine(e.stdout, "%s revoked", key.ID) })
}
