package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/sqlite"
)

const keysUsage = `usage: memgate keys SUBCOMMAND [flags]

subcommands:
  create   memgate keys create --tenant T --role admin|agent|user [--principal P] [--agent A] [--name N] [--json]
  list     memgate keys list --tenant T [--json]
  revoke   memgate keys revoke --tenant T ID

The secret of a new key is printed once; only its SHA-256 is stored.
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

// openDB opens the database alone: key management needs no engine.
func (c *common) openDB(e env) (*sqlite.DB, error) {
	if err := c.local("keys"); err != nil {
		return nil, err
	}
	db, err := sqlite.Open(e.ctx, c.db)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", c.db, err)
	}
	return db, nil
}

// CreatedKey is the JSON shape of keys create: the record and, this once,
// the secret.
type CreatedKey struct {
	Key    *memgate.Key `json:"key"`
	Secret string       `json:"secret"`
}

func cmdKeysCreate(e env, args []string) error {
	var c common
	var tmpl memgate.Key
	var role string
	fs := newFlagSet("keys create", e.stderr, "--tenant T --role admin|agent|user [--principal P] [--agent A] [--name N]")
	c.register(fs)
	fs.StringVar(&tmpl.Tenant, "tenant", "", "tenant the key is fixed to (required)")
	fs.StringVar(&role, "role", "", "admin, agent or user (required)")
	fs.StringVar(&tmpl.Principal, "principal", "", "bind the key to this principal (required for user)")
	fs.StringVar(&tmpl.Agent, "agent", "", "bind an agent key to this agent")
	fs.StringVar(&tmpl.Name, "name", "", "a label for people (e.g. which service uses the key)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{"keys create takes no arguments"}
	}
	tmpl.Role = memgate.Role(role)
	secret, rec, err := auth.NewKey(tmpl)
	if err != nil {
		return err
	}
	db, err := c.openDB(e)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.CreateKey(e.ctx, rec); err != nil {
		return err
	}
	if c.json {
		return writeJSON(e.stdout, CreatedKey{Key: rec, Secret: secret})
	}
	fmt.Fprintln(e.stdout, secret)
	fmt.Fprintf(e.stderr, "created %s key %s for tenant %s%s; the secret above is shown only this once\n",
		rec.Role, rec.ID, rec.Tenant, bindingText(rec))
	return nil
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

func cmdKeysList(e env, args []string) error {
	var c common
	var tenant string
	fs := newFlagSet("keys list", e.stderr, "--tenant T")
	c.register(fs)
	fs.StringVar(&tenant, "tenant", "", "tenant (required)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{"keys list takes no arguments"}
	}
	if err := memgate.CheckIdent("tenant", tenant); err != nil {
		return err
	}
	db, err := c.openDB(e)
	if err != nil {
		return err
	}
	defer db.Close()
	keys, err := db.ListKeys(e.ctx, tenant)
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(e.stdout, map[string]any{"keys": keys})
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tROLE\tPRINCIPAL\tAGENT\tNAME\tCREATED\tREVOKED")
	for _, k := range keys {
		revoked := ""
		if k.RevokedAt != nil {
			revoked = k.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Role, k.Principal, k.Agent, k.Name, k.CreatedAt.Format(time.RFC3339), revoked)
	}
	return tw.Flush()
}

func cmdKeysRevoke(e env, args []string) error {
	var c common
	var tenant string
	fs := newFlagSet("keys revoke", e.stderr, "--tenant T ID")
	c.register(fs)
	fs.StringVar(&tenant, "tenant", "", "tenant of the key (required)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"expected exactly one key ID"}
	}
	if err := memgate.CheckIdent("tenant", tenant); err != nil {
		return err
	}
	db, err := c.openDB(e)
	if err != nil {
		return err
	}
	defer db.Close()
	k, err := db.RevokeKey(e.ctx, tenant, pos[0], memgate.Now(time.Now()))
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(e.stdout, k)
	}
	fmt.Fprintf(e.stdout, "%s revoked\n", k.ID)
	return nil
}
