package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/policy"
	"github.com/memgate/memgate/store"
)

const usage = `memgate: governed long-term memory for AI agents

usage: memgate COMMAND [flags] [args]

commands:
  remember   store a memory:            memgate remember --tenant T --principal P [--kind fact] CONTENT
  recall     what matters for a prompt: memgate recall --tenant T --principal P [--k 5] [--explain] QUERY
  get        show one memory:           memgate get --tenant T --principal P ID
  list       list memories:             memgate list --tenant T --principal P [--status active] [--q TEXT]
  update     change a memory (CAS):     memgate update --tenant T --principal P ID --version N --content TEXT
  supersede  replace a memory:          memgate supersede --tenant T --principal P ID NEW-CONTENT
  revoke     revoke a memory:           memgate revoke --tenant T --principal P ID --reason WHY
  approve    approve a pending memory:  memgate approve --tenant T --principal P --version N ID
  reject     reject a pending memory:   memgate reject --tenant T --principal P --version N ID [--reason WHY]
  feedback   rate a memory's use:       memgate feedback --tenant T --principal P ID --value 0.8
  audit      the audit log:             memgate audit --tenant T [--principal P] [--memory ID] [--recall R]
  sweep      delete expired memories:   memgate sweep [--grace 24h]
  delete     delete a memory for good:  memgate delete --tenant T --principal P ID
  forget     erase a principal:         memgate forget --tenant T --principal P
  counts     counts by kind and status: memgate counts --tenant T [--principal P]
  import     import JSONL memories:     memgate import --tenant T FILE.jsonl
  export     export JSONL memories:     memgate export --tenant T [--principal P]
  bench      quality harness:           memgate bench locomo [--data DIR] [--json]
  keys       API keys:                  memgate keys create --tenant T --role admin|agent|user [--principal P] [--agent A] [--sources S,S]
                                        memgate keys list --tenant T;  memgate keys revoke --tenant T ID
  serve      the HTTP API:              memgate serve [--addr 127.0.0.1:7070] [--policy FILE] [--postgres URL]
  mcp        MCP tools on stdio:        memgate mcp --tenant T --principal P [--agent A] [--allow-forget]
  chat       talk with memory:          memgate chat --tenant T --principal P --llm ollama:MODEL [--extract]
  reembed    vectors of a new embedder: memgate reembed --tenant T [--principal P] --embedder ollama:MODEL
  migrate    copy a whole database:     memgate migrate --from sqlite:PATH --to postgres:URL [--into-nonempty]
  backup     copy a live SQLite file:   memgate backup --db PATH --to COPY.db (consistent while serve writes; verified)
  version    the build's version:       memgate version [--json] (or memgate --version)

Embedder: --embedder builtin (default) | ollama:MODEL | openai:MODEL, with --embedder-url URL
and --embedder-dim N (defaults from $MEMGATE_EMBEDDER, $MEMGATE_EMBEDDER_URL,
$MEMGATE_EMBEDDER_DIM; an OpenAI-compatible key from $MEMGATE_EMBEDDER_API_KEY), on serve and
every local command that embeds. Memories embedded by another model are recalled by text
until "memgate reembed" gives them vectors of the current one.

Chat model: --llm ollama:MODEL | openai:MODEL (any OpenAI-compatible server), with --llm-url
URL (defaults from $MEMGATE_LLM and $MEMGATE_LLM_URL; an OpenAI-compatible key from
$MEMGATE_LLM_API_KEY), on serve (POST /v1/chat) and chat; --extract has the model propose
facts and preferences, which wait as pending for approval under the default policy.

The commands that open a database take --db PATH (default ./memgate.db, or $MEMGATE_DB),
and most take --json. Only serve, remember, import, keys create and migrate --to create a
missing database (and say so); every other command refuses one that does not exist.

Remote: with --server URL (or $MEMGATE_SERVER), remember, recall, get, list, update,
supersede, revoke, approve, reject, feedback, delete, forget, counts, audit, import,
export, mcp and chat call a memgate server instead of opening --db, with the API key in
$MEMGATE_API_KEY (there is no key flag, so the key stays out of shell history and the
process list):
  MEMGATE_API_KEY=mgk_... memgate list --server http://127.0.0.1:7070 --principal alice
The tenant is the key's: --tenant may be left out, and one that differs is refused.
The server's policy applies (--db and --policy are refused with --server); import is
sent whole and batched by the server (--batch is refused). keys takes --server too, with an
admin key. sweep, serve, reembed, migrate, backup and bench work on local databases only.

Run "memgate COMMAND -h" for a command's flags.
`

// env is what a command runs with.
type env struct {
	ctx    context.Context // carries the actor "cli" for the audit log
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// usageError is a command-line mistake: exit status 2.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// run runs one command and returns the process exit status: 0 success,
// 1 an error (printed on one line naming the field), 2 a usage mistake.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		fmt.Fprint(stderr, usage)
		return 2
	case args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help":
		fmt.Fprint(stdout, usage)
		return 0
	case args[0] == "--version" || args[0] == "-version":
		args = append([]string{"version"}, args[1:]...)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "memgate: unknown command %q (memgate help lists the commands)\n", args[0])
		return 2
	}
	e := env{ctx: engine.WithActor(ctx, "cli"), stdin: stdin, stdout: stdout, stderr: stderr}
	err := cmd(e, args[1:])
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "memgate %s: %s\n", args[0], ue.msg)
		return 2
	}
	fmt.Fprintf(stderr, "memgate %s: %s\n", args[0], errorLine(err))
	return 1
}

// errorLine is the one-line message for err: an application error's message
// (with its field), or the wrapped chain for anything else, which on the CLI
// is the operator's own environment (a path, a permission).
func errorLine(err error) string {
	var me *memgate.Error
	if errors.As(err, &me) {
		if me.Code == memgate.EUNAVAILABLE {
			// A server that cannot be reached: the whole chain says
			// which request and why (refused, timed out).
			return me.Code + ": " + strings.ReplaceAll(err.Error(), "\n", " ")
		}
		return me.Code + ": " + me.Error()
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

var commands map[string]func(env, []string) error

func init() {
	commands = map[string]func(env, []string) error{
		"remember":  cmdRemember,
		"recall":    cmdRecall,
		"get":       cmdGet,
		"list":      cmdList,
		"update":    cmdUpdate,
		"supersede": cmdSupersede,
		"revoke":    cmdRevoke,
		"delete":    cmdDelete,
		"forget":    cmdForget,
		"counts":    cmdCounts,
		"import":    cmdImport,
		"export":    cmdExport,
		"bench":     cmdBench,
		"approve":   cmdApprove,
		"reject":    cmdReject,
		"feedback":  cmdFeedback,
		"audit":     cmdAudit,
		"sweep":     cmdSweep,
		"keys":      cmdKeys,
		"serve":     cmdServe,
		"mcp":       cmdMCP,
		"chat":      cmdChat,
		"reembed":   cmdReembed,
		"migrate":   cmdMigrate,
		"backup":    cmdBackup,
		"version":   cmdVersion,
	}
}

// common holds the flags every command takes.
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

func (c *common) register(fs *flag.FlagSet) {
	def := os.Getenv("MEMGATE_DB")
	if def == "" {
		def = "memgate.db"
	}
	c.fs = fs
	fs.StringVar(&c.db, "db", def, "path of the embedded database")
	fs.BoolVar(&c.json, "json", false, "print JSON (the HTTP API's shapes)")
	fs.StringVar(&c.policy, "policy", os.Getenv("MEMGATE_POLICY"), "write-gate policy file (JSON; default: the built-in policy)")
	fs.StringVar(&c.server, "server", os.Getenv("MEMGATE_SERVER"), "URL of a memgate server to use instead of --db (key from $MEMGATE_API_KEY)")
	c.emb.register(fs)
}

// explicit reports whether the flag name was given on the command line.
func (c *common) explicit(name string) bool {
	set := false
	c.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
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

// open returns the backend the command runs against: a memgate server with
// --server (or $MEMGATE_SERVER), authenticated with $MEMGATE_API_KEY, or
// else the database at --db with an engine over it. Remotely the tenant is
// the key's; the command's --tenant, when given, is sent so that the
// server refuses one that differs.
func (c *common) open(ctx context.Context) (backend, func(), error) {
	if c.server != "" {
		for _, f := range []string{"db", "policy"} {
			if c.explicit(f) {
				return nil, nil, usageError{"--" + f + " applies to the local database; with --server the server's own applies"}
			}
		}
		if set := c.emb.explicit(); len(set) > 0 {
			return nil, nil, usageError{"--" + set[0] + " applies to the local database; with --server the server's own embedder applies"}
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

// memoryFlags are the fields remember, supersede and update take.
type memoryFlags struct {
	kind, source, reason, sensitivity, ttl, metadata, content string
	expiresAt, validFrom, validUntil                          timeFlag
}

func (m *memoryFlags) register(fs *flag.FlagSet, defaults bool) {
	kind, source := "", ""
	if defaults {
		kind, source = "fact", "user"
	}
	fs.StringVar(&m.kind, "kind", kind, "kind: message, fact, preference, task, summary")
	if defaults {
		fs.StringVar(&m.source, "source", source, "source: user, assistant, tool, verified_tool, system, import")
	}
	fs.StringVar(&m.reason, "reason", "", "why this is remembered")
	fs.StringVar(&m.sensitivity, "sensitivity", "", "standard (default) or restricted")
	fs.StringVar(&m.ttl, "ttl", "", "time to live, e.g. 30d, 12h")
	fs.StringVar(&m.metadata, "metadata", "", "metadata as a JSON object")
	m.expiresAt.field, m.validFrom.field, m.validUntil.field = "expires_at", "valid_from", "valid_until"
	fs.Var(&m.expiresAt, "expires-at", "expiry time (RFC 3339)")
	fs.Var(&m.validFrom, "valid-from", "when the fact started to hold (RFC 3339)")
	fs.Var(&m.validUntil, "valid-until", "when the fact stopped holding (RFC 3339)")
}

func (m *memoryFlags) parseMetadata() (map[string]any, error) {
	if m.metadata == "" {
		return nil, nil
	}
	return memgate.DecodeMetadata([]byte(m.metadata))
}

func (m *memoryFlags) parseTTL() (time.Duration, error) {
	if m.ttl == "" {
		return 0, nil
	}
	return memgate.ParseTTL(m.ttl)
}

// request builds a RememberRequest from the flags and content.
func (m *memoryFlags) request(s scopeFlags, content string) (engine.RememberRequest, error) {
	md, err := m.parseMetadata()
	if err != nil {
		return engine.RememberRequest{}, err
	}
	ttl, err := m.parseTTL()
	if err != nil {
		return engine.RememberRequest{}, err
	}
	return engine.RememberRequest{
		Memory: memgate.Memory{
			Tenant: s.tenant, Principal: s.principal, Agent: s.agent, Conversation: s.conversation,
			Kind: memgate.Kind(m.kind), Source: memgate.Source(m.source), Sensitivity: memgate.Sensitivity(m.sensitivity),
			Content: content, Reason: m.reason, Metadata: md,
			ExpiresAt: m.expiresAt.t, ValidFrom: m.validFrom.t, ValidUntil: m.validUntil.t,
		},
		TTL: ttl,
	}, nil
}

// contentArg returns the content from the positional arguments ("-" reads
// standard input).
func contentArg(e env, pos []string) (string, error) {
	if len(pos) == 0 {
		return "", usageError{"missing CONTENT (or - to read standard input)"}
	}
	if len(pos) == 1 && pos[0] == "-" {
		b, err := io.ReadAll(io.LimitReader(e.stdin, 1<<20))
		if err != nil {
			return "", fmt.Errorf("read standard input: %w", err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	return strings.Join(pos, " "), nil
}

func cmdRemember(e env, args []string) error {
	var c common
	var s scopeFlags
	var m memoryFlags
	fs := newFlagSet("remember", e.stderr, "--tenant T --principal P [flags] CONTENT|-")
	c.register(fs)
	s.register(fs)
	m.register(fs, true)
	c.created = e.stderr
	var supersedes, key string
	fs.StringVar(&supersedes, "supersedes", "", "ID of the memory this one replaces (atomically marked superseded)")
	fs.StringVar(&key, "idempotency-key", "", "a key for retrying safely: the same key and memory again stores nothing and prints the first call's id (kept a day)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	content, err := contentArg(e, pos)
	if err != nil {
		return err
	}
	req, err := m.request(s, content)
	if err != nil {
		return err
	}
	req.Supersedes = supersedes
	req.IdempotencyKey = key
	be, done, err := c.open(e.ctx)
	if err != nil {
		return err
	}
	defer done()
	mem, err := be.Remember(e.ctx, req)
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(e.stdout, mem)
	}
	fmt.Fprintln(e.stdout, mem.ID)
	switch {
	case mem.Replayed:
		fmt.Fprintln(e.stderr, "replayed: stored by an earlier call with this idempotency key; nothing new was stored")
	case mem.Deduplicated:
		fmt.Fprintf(e.stderr, "deduplicated: already remembered (seen %d times)\n", mem.SeenCount)
	case mem.Status == memgate.StatusPending:
		fmt.Fprintf(e.stderr, "pending approval: %s\n", mem.StatusReason)
	}
	return nil
}

// oneID returns the single positional ID argument.
func oneID(pos []string) (string, error) {
	if len(pos) != 1 {
		return "", usageError{"expected exactly one memory ID"}
	}
	return pos[0], nil
}

// openForID parses args with fs, takes the one memory ID they must hold and
// opens the backend: the start every single-memory command shares.
func (c *common) openForID(e env, fs *flag.FlagSet, args []string) (backend, string, func(), error) {
	pos, err := parse(fs, args)
	if err != nil {
		return nil, "", nil, err
	}
	id, err := oneID(pos)
	if err != nil {
		return nil, "", nil, err
	}
	be, done, err := c.open(e.ctx)
	if err != nil {
		return nil, "", nil, err
	}
	return be, id, done, nil
}

func cmdGet(e env, args []string) error {
	var c common
	var s scopeFlags
	fs := newFlagSet("get", e.stderr, "--tenant T --principal P ID")
	c.register(fs)
	s.register(fs)
	be, id, done, err := c.openForID(e, fs, args)
	if err != nil {
		return err
	}
	defer done()
	m, err := be.Get(e.ctx, s.scope(), id)
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(e.stdout, m)
	}
	printMemory(e.stdout, m)
	return nil
}

func cmdList(e env, args []string) error {
	var c common
	var s scopeFlags
	var kinds, sources, statuses listFlag
	var q, cursor string
	var limit int
	var all bool
	fs := newFlagSet("list", e.stderr, "--tenant T (--principal P | --all-principals) [flags]")
	c.register(fs)
	s.register(fs)
	fs.BoolVar(&all, "all-principals", false, "list every principal of the tenant")
	fs.Var(&kinds, "kind", "only these kinds (repeatable or comma-separated)")
	fs.Var(&sources, "source", "only these sources")
	fs.Var(&statuses, "status", "only these statuses: active, pending, revoked, superseded, expired")
	fs.StringVar(&q, "q", "", "literal text the content must contain (case-insensitive)")
	fs.IntVar(&limit, "limit", store.DefaultPageSize, fmt.Sprintf("page size (max %d)", store.MaxPageSize))
	fs.StringVar(&cursor, "cursor", "", "next_cursor of the previous page")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{"list takes no arguments (use --q for text)"}
	}
	scope := s.scope()
	scope.AllPrincipals = all
	f := engine.ListRequest{Text: q, Limit: limit, Cursor: cursor}
	for _, k := range kinds {
		f.Kinds = append(f.Kinds, memgate.Kind(k))
	}
	for _, src := range sources {
		f.Sources = append(f.Sources, memgate.Source(src))
	}
	for _, st := range statuses {
		f.Statuses = append(f.Statuses, memgate.Status(st))
	}
	be, done, err := c.open(e.ctx)
	if err != nil {
		return err
	}
	defer done()
	p, err := be.List(e.ctx, scope, f)
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(e.stdout, listResponse(p))
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tVERSION\tKIND\tSOURCE\tCREATED\tCONTENT")
	for _, m := range p.Memories {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", m.ID, statusText(m), m.Version, m.Kind, m.Source, m.CreatedAt.Format(time.RFC3339), preview(m.Content, 60))
	}
	tw.Flush()
	if p.Clamped {
		fmt.Fprintf(e.stderr, "note: limit clamped to %d\n", p.Limit)
	}
	if p.NextCursor != "" {
		fmt.Fprintf(e.stderr, "more: --cursor %s\n", p.NextCursor)
	}
	return nil
}

// ListResponse is the JSON shape of a list (the HTTP API's too).
type ListResponse struct {
	Memories   []*memgate.Memory `json:"memories"`
	NextCursor string            `json:"next_cursor,omitempty"`
	Limit      int               `json:"limit"`
	Clamped    bool              `json:"clamped,omitempty"`
}

func listResponse(p *store.Page) ListResponse {
	ms := p.Memories
	if ms == nil {
		ms = []*memgate.Memory{}
	}
	return ListResponse{Memories: ms, NextCursor: p.NextCursor, Limit: p.Limit, Clamped: p.Clamped}
}

func cmdUpdate(e env, args []string) error {
	var c common
	var s scopeFlags
	var m memoryFlags
	var version int64
	var clearExpiry bool
	fs := newFlagSet("update", e.stderr, "--tenant T --principal P ID [--version N] [--content TEXT] [flags]")
	c.register(fs)
	s.register(fs)
	m.register(fs, false)
	fs.StringVar(&m.content, "content", "", "new content")
	fs.Int64Var(&version, "version", 0, "the version this update is based on (compare-and-set); default: the current one")
	fs.BoolVar(&clearExpiry, "clear-expiry", false, "remove the expiry")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	id, err := oneID(pos)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var p engine.Patch
	if set["content"] {
		p.Content = &m.content
	}
	if set["reason"] {
		p.Reason = &m.reason
	}
	if set["kind"] {
		k := memgate.Kind(m.kind)
		p.Kind = &k
	}
	if set["sensitivity"] {
		sv := memgate.Sensitivity(m.sensitivity)
		p.Sensitivity = &sv
	}
	if set["metadata"] {
		md, err := m.parseMetadata()
		if err != nil {
			return err
		}
		p.Metadata, p.ReplaceMetadata = md, true
	}
	if p.TTL, err = m.parseTTL(); err != nil {
		return err
	}
	p.ExpiresAt, p.ValidFrom, p.ValidUntil, p.ClearExpiresAt = m.expiresAt.t, m.validFrom.t, m.validUntil.t, clearExpiry
	be, done, err := c.open(e.ctx)
	if err != nil {
		return err
	}
	defer done()
	if !set["version"] {
		cur, err := be.Get(e.ctx, s.scope(), id)
		if err != nil {
			return err
		}
		version = cur.Version
	}
	out, err := be.Update(e.ctx, s.scope(), id, version, p)
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(e.stdout, out)
	}
	fmt.Fprintf(e.stdout, "%s version %d\n", out.ID, out.Version)
	return nil
}

func cmdSupersede(e env, args []string) error {
	var c common
	var s scopeFlags
	var m memoryFlags
	fs := newFlagSet("supersede", e.stderr, "--tenant T --principal P ID NEW-CONTENT|-")
	c.register(fs)
	s.register(fs)
	m.register(fs, false)
	fs.StringVar(&m.source, "source", "user", "source of the new memory")
	var key string
	fs.StringVar(&key, "idempotency-key", "", "a key for retrying safely: the same key and memory again supersedes nothing and prints the first call's id (kept a day)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usageError{"expected the ID to supersede and the new content"}
	}
	content, err := contentArg(e, pos[1:])
	if err != nil {
		return err
	}
	req, err := m.request(scopeFlags{}, content)
	if err != nil {
		return err
	}
	req.Memory.Agent, req.Memory.Conversation = s.agent, s.conversation
	req.IdempotencyKey = key
	be, done, err := c.open(e.ctx)
	if err != nil {
		return err
	}
	defer done()
	next, err := be.Supersede(e.ctx, s.scope(), pos[0], req)
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(e.stdout, next)
	}
	fmt.Fprintln(e.stdout, next.ID)
	return nil
}

func cmdRevoke(e env, args []string) error {
	var c common
	var s scopeFlags
	var reason string
	fs := newFlagSet("revoke", e.stderr, "--tenant T --principal P ID [--reason WHY]")
	c.register(fs)
	s.register(fs)
	fs.StringVar(&reason, "reason", "", "why it is revoked")
	be, id, done, err := c.openForID(e, fs, args)
	if err != nil {
		return err
	}
	defer done()
	m, err := be.Revoke(e.ctx, s.scope(), id, reason)
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(e.stdout, m)
	}
	fmt.Fprintf(e.stdout, "%s revoked\n", m.ID)
	return nil
}

func cmdDelete(e env, args []string) error {
	var c common
	var s scopeFlags
	fs := newFlagSet("delete", e.stderr, "--tenant T --principal P ID")
	c.register(fs)
	s.register(fs)
	be, id, done, err := c.openForID(e, fs, args)
	if err != nil {
		return err
	}
	defer done()
	if err := be.Delete(e.ctx, s.scope(), id); err != nil {
		return err
	}
	if c.json {
		return writeJSON(e.stdout, map[string]any{"deleted": id})
	}
	fmt.Fprintf(e.stdout, "%s deleted\n", id)
	return nil
}

func cmdForget(e env, args []string) error {
	var c common
	var tenant, principal string
	fs := newFlagSet("forget", e.stderr, "--tenant T --principal P")
	c.register(fs)
	fs.StringVar(&tenant, "tenant", "", "tenant (required; with --server it is the key's and may be left out)")
	fs.StringVar(&principal, "principal", "", "the principal whose memories are erased (required)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{"forget takes no arguments"}
	}
	be, done, err := c.open(e.ctx)
	if err != nil {
		return err
	}
	defer done()
	rc, err := be.Forget(e.ctx, memgate.Scope{Tenant: tenant, Principal: principal})
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(e.stdout, rc)
	}
	fmt.Fprintf(e.stdout, "forgot %d memories of %s\n", rc.Forgotten, principal)
	return nil
}

func cmdCounts(e env, args []string) error {
	var c common
	var s scopeFlags
	fs := newFlagSet("counts", e.stderr, "--tenant T [--principal P]")
	c.register(fs)
	s.register(fs)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	scope := s.scope()
	scope.AllPrincipals = s.principal == ""
	be, done, err := c.open(e.ctx)
	if err != nil {
		return err
	}
	defer done()
	counts, err := be.Counts(e.ctx, scope)
	if err != nil {
		return err
	}
	if counts == nil {
		counts = []store.Count{}
	}
	if c.json {
		return writeJSON(e.stdout, map[string]any{"counts": counts})
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PRINCIPAL\tKIND\tSTATUS\tCOUNT")
	for _, n := range counts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", n.Principal, n.Kind, n.Status, n.N)
	}
	return tw.Flush()
}

func cmdImport(e env, args []string) error {
	var c common
	var tenant string
	var batch int
	fs := newFlagSet("import", e.stderr, "--tenant T FILE.jsonl|-")
	c.register(fs)
	c.created = e.stderr
	fs.StringVar(&tenant, "tenant", "", "tenant that owns the imported memories (required; with --server the key's)")
	fs.IntVar(&batch, "batch", engine.DefaultMaxBatch, "memories per atomic batch")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"expected one FILE.jsonl (or - for standard input)"}
	}
	if c.server != "" && c.explicit("batch") {
		return usageError{"--batch applies to the local database; the server batches an import itself"}
	}
	var r io.Reader = e.stdin
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	be, done, err := c.open(e.ctx)
	if err != nil {
		return err
	}
	defer done()
	res, err := be.Import(e.ctx, engine.ImportRequest{Tenant: tenant, BatchSize: batch}, r)
	if err != nil {
		if res.Imported > 0 {
			fmt.Fprintf(e.stderr, "memgate import: %d memories were stored before the error\n", res.Imported)
		}
		return err
	}
	if c.json {
		return writeJSON(e.stdout, res)
	}
	fmt.Fprintf(e.stdout, "imported %d memories from %d lines in %d batches\n", res.Imported, res.Lines, res.Batches)
	return nil
}

func cmdExport(e env, args []string) error {
	var c common
	var s scopeFlags
	var out string
	fs := newFlagSet("export", e.stderr, "--tenant T [--principal P] [--out FILE]")
	c.register(fs)
	s.register(fs)
	fs.StringVar(&out, "out", "", "write to FILE instead of standard output")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	scope := s.scope()
	scope.AllPrincipals = s.principal == ""
	be, done, err := c.open(e.ctx)
	if err != nil {
		return err
	}
	defer done()
	w := e.stdout
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	n, err := be.Export(e.ctx, scope, w)
	if err != nil {
		return err
	}
	if out != "" {
		fmt.Fprintf(e.stderr, "exported %d memories to %s\n", n, out)
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func statusText(m *memgate.Memory) string {
	if m.Expired {
		return "expired"
	}
	return string(m.Status)
}

// preview shortens content for a table cell, on one line.
func preview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
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

func cmdRecall(e env, args []string) error {
	var c common
	var s scopeFlags
	var kinds, sources listFlag
	var k, budget int
	var minScore float64
	var asOf timeFlag
	var explain, render, restricted, diversify bool
	var metadata string
	fs := newFlagSet("recall", e.stderr, "--tenant T --principal P [flags] QUERY")
	c.register(fs)
	s.register(fs)
	fs.IntVar(&k, "k", engine.DefaultK, fmt.Sprintf("maximum number of memories (at most %d)", engine.MaxK))
	fs.Float64Var(&minScore, "min-score", 0, "floor on the final score in [0, 1]; 0 turns it off (default: the measured default floor)")
	fs.Var(&kinds, "kind", "only these kinds")
	fs.Var(&sources, "source", "only these sources")
	fs.StringVar(&metadata, "metadata", "", "metadata equality filters as a JSON object")
	asOf.field = "as_of"
	fs.Var(&asOf, "as-of", "only memories valid at this time (RFC 3339; default now)")
	fs.BoolVar(&restricted, "include-restricted", false, "include restricted memories")
	fs.IntVar(&budget, "budget-chars", 0, "maximum total characters of content returned (whole memories)")
	fs.BoolVar(&diversify, "diversify", false, "reorder for diversity (MMR)")
	fs.BoolVar(&explain, "explain", false, "show each score's components and what fell below the floor")
	fs.BoolVar(&render, "render", false, "print the context block to paste into a prompt")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError{"missing QUERY"}
	}
	req := engine.RecallRequest{
		Scope: s.scope(), Query: strings.Join(pos, " "), K: k, IncludeRestricted: restricted,
		BudgetChars: budget, Diversify: diversify, Explain: explain, Render: render,
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["min-score"] {
		req.MinScore = &minScore
	}
	if asOf.t != nil {
		req.AsOf = *asOf.t
	}
	for _, v := range kinds {
		req.Kinds = append(req.Kinds, memgate.Kind(v))
	}
	for _, v := range sources {
		req.Sources = append(req.Sources, memgate.Source(v))
	}
	if metadata != "" {
		md, err := memgate.DecodeMetadata([]byte(metadata))
		if err != nil {
			return err
		}
		req.Metadata = md
	}
	be, done, err := c.open(e.ctx)
	if err != nil {
		return err
	}
	defer done()
	res, err := be.Recall(e.ctx, req)
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(e.stdout, res)
	}
	if render {
		fmt.Fprintln(e.stdout, res.Context)
		return nil
	}
	if len(res.Results) == 0 {
		fmt.Fprintf(e.stdout, "nothing recalled (%d candidates below the floor %.2f)\n", res.BelowFloor, res.MinScore)
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	if explain {
		fmt.Fprintln(tw, "SCORE\tTEXT\tVECTOR\tCONTEXT\tID\tKIND\tCONTENT")
	} else {
		fmt.Fprintln(tw, "SCORE\tID\tKIND\tSOURCE\tCONTENT")
	}
	for _, h := range res.Results {
		m := h.Memory
		if explain {
			x := h.Explain
			fmt.Fprintf(tw, "%.3f\t%.3f\t%.3f\t%.3f\t%s\t%s\t%s\n", h.Score, x.Text, x.Vector, x.Context, m.ID, m.Kind, preview(m.Content, 60))
		} else {
			fmt.Fprintf(tw, "%.3f\t%s\t%s\t%s\t%s\n", h.Score, m.ID, m.Kind, m.Source, preview(m.Content, 70))
		}
	}
	tw.Flush()
	if explain {
		x := res.Explain
		fmt.Fprintf(e.stdout, "recall %s: %d proposed, %d ranked, %d below the floor %.2f, relatedness %.3f, %d µs\n",
			res.RecallID, x.Proposed, x.Ranked, x.BelowFloor, x.Floor, x.Relatedness, x.TookMicros)
	}
	return nil
}
