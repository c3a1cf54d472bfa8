package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/postgres"
	"github.com/memgate/memgate/store"
)

// postgresURLEnv holds the PostgreSQL URL for serve and migrate, so a
// password need not be on the command line.
const postgresURLEnv = "MEMGATE_POSTGRES_URL"

// migrationEnd is one side of a migration: a store, read and written
// through the port alone (its Tenants lists what there is to copy).
type migrationEnd struct {
	name string // for the figures: the backend and the path or redacted URL
	st   store.Store
}

// openMigrationEnd opens "sqlite:PATH" or "postgres:URL" ("postgres:"
// alone takes the URL from $MEMGATE_POSTGRES_URL; a bare postgres://
// URL is accepted too). With created nil (the source) a SQLite file must
// exist; with it set (the destination) a missing one is created and the
// fact written there.
func openMigrationEnd(ctx context.Context, spec string, created io.Writer) (*migrationEnd, error) {
	kind, rest, ok := strings.Cut(spec, ":")
	if strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://") {
		kind, rest, ok = "postgres", spec, true
	}
	switch {
	case ok && kind == "sqlite" && rest != "":
		db, err := openSQLite(ctx, rest, created)
		if err != nil {
			return nil, err
		}
		return &migrationEnd{name: "sqlite:" + rest, st: db}, nil
	case ok && kind == "postgres":
		if rest == "" {
			rest = os.Getenv(postgresURLEnv)
			if rest == "" {
				return nil, usageError{"postgres: without a URL takes it from $" + postgresURLEnv + ", which is not set"}
			}
		}
		db, err := postgres.Open(ctx, postgres.Config{URL: rest})
		if err != nil {
			return nil, err // names the URL redacted
		}
		return &migrationEnd{name: "postgres:" + postgres.RedactURL(rest), st: db}, nil
	}
	return nil, usageError{fmt.Sprintf("%q: want sqlite:PATH or postgres:URL", clipSpec(spec))}
}

// clipSpec shows a mistyped endpoint in an error without a password it may
// hold.
func clipSpec(s string) string {
	if i := strings.LastIndex(s, "@"); i >= 0 {
		return "…" + s[i:]
	}
	return s
}

func cmdMigrate(e env, args []string) error {
	var from, to string
	var intoNonempty bool
	var batch int
	fs := newFlagSet("migrate", e.stderr, "--from sqlite:PATH|postgres:URL --to sqlite:PATH|postgres:URL [--into-nonempty]")
	fs.StringVar(&from, "from", "", "the database to copy: sqlite:PATH or postgres:URL (postgres: alone reads $"+postgresURLEnv+")")
	fs.StringVar(&to, "to", "", "the database to copy into, empty unless --into-nonempty")
	fs.BoolVar(&intoNonempty, "into-nonempty", false, "copy into a database that holds data already (a memory or key id it holds is then an error)")
	fs.IntVar(&batch, "batch", store.MaxPageSize, "memories and audit events per read and per write transaction")
	check := func(pos []string) error {
		switch {
		case len(pos) > 0:
			return usageError{"migrate takes no arguments"}
		case from == "" || to == "":
			return usageError{"--from and --to are required"}
		case batch < 1 || batch > store.MaxPageSize:
			return usageError{fmt.Sprintf("--batch must be from 1 to %d", store.MaxPageSize)}
		}
		return nil
	}
	open := func() (*migrator, func(), error) {
		src, err := openMigrationEnd(e.ctx, from, nil)
		if err != nil {
			return nil, nil, err
		}
		dst, err := openMigrationEnd(e.ctx, to, e.stderr)
		if err != nil {
			src.st.Close()
			return nil, nil, err
		}
		m := &migrator{ctx: e.ctx, src: src, dst: dst, batch: batch, out: e.stdout}
		return m, func() { dst.st.Close(); src.st.Close() }, nil
	}
	return runCommand(args, e, command[*migrator, struct{}]{fs: fs, check: check, open: open,
		call: func(m *migrator) (struct{}, error) { return struct{}{}, m.run(intoNonempty) }})
}

// migrator copies every tenant of src into dst through the store port:
// memories with their whole stored state (Insert keeps status, versions,
// seen counts, flags, feedback, embeddings, supersession links and times),
// the audit log (in its order; the destination numbers the events anew)
// and API keys (their hashes: a secret is never stored anywhere). Nothing
// is re-gated or re-embedded: a migration moves data, it does not re-admit
// it. The source should not be written meanwhile; the verification at the
// end reports any difference.
type migrator struct {
	ctx      context.Context
	src, dst *migrationEnd
	batch    int
	out      io.Writer
}

// tenantFigures is what the verification compares for one tenant.
type tenantFigures struct {
	byStatus map[memgate.Status]int
	digest   string
	ids      map[string]bool
	audit    int
	keys     int
}

func (f tenantFigures) memories() int {
	n := 0
	for _, c := range f.byStatus {
		n += c
	}
	return n
}

func (f tenantFigures) statusLine() string {
	var parts []string
	for _, st := range memgate.Statuses {
		parts = append(parts, fmt.Sprintf("%s %d", st, f.byStatus[st]))
	}
	return strings.Join(parts, ", ")
}

func (m *migrator) run(intoNonempty bool) error {
	fmt.Fprintf(m.out, "migrate: %s -> %s\n", m.src.name, m.dst.name)
	tenants, err := m.src.st.Tenants(m.ctx)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	dstTenants, err := m.dst.st.Tenants(m.ctx)
	if err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	dstKeys, err := m.dst.st.CountKeys(m.ctx)
	if err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	if (len(dstTenants) > 0 || dstKeys > 0) && !intoNonempty {
		return fmt.Errorf("the destination holds data already (%d tenants, %d keys): refusing to copy into it without --into-nonempty", len(dstTenants), dstKeys)
	}
	auditBefore := map[string]int{}
	for _, t := range tenants {
		if slices.Contains(dstTenants, t) {
			if auditBefore[t], err = m.countAudit(m.dst.st, t); err != nil {
				return fmt.Errorf("destination: %w", err)
			}
		}
	}

	var total tenantFigures
	total.byStatus = map[memgate.Status]int{}
	for _, t := range tenants {
		nm, err := m.copyMemories(t)
		if err != nil {
			return fmt.Errorf("tenant %s: memories: %w", t, err)
		}
		na, err := m.copyAudit(t)
		if err != nil {
			return fmt.Errorf("tenant %s: audit log: %w", t, err)
		}
		nk, err := m.copyKeys(t)
		if err != nil {
			return fmt.Errorf("tenant %s: keys: %w", t, err)
		}
		fmt.Fprintf(m.out, "tenant %s: copied %d memories, %d audit events, %d keys\n", t, nm, na, nk)
	}

	var failed []string
	for _, t := range tenants {
		s, err := m.figures(m.src.st, t, nil)
		if err != nil {
			return fmt.Errorf("verify tenant %s: source: %w", t, err)
		}
		var only map[string]bool
		if intoNonempty {
			only = s.ids // the destination may hold other memories of its own
		}
		d, err := m.figures(m.dst.st, t, only)
		if err != nil {
			return fmt.Errorf("verify tenant %s: destination: %w", t, err)
		}
		d.audit -= auditBefore[t]
		keysOK, err := m.keysPresent(t)
		if err != nil {
			return fmt.Errorf("verify tenant %s: %w", t, err)
		}
		ok := s.statusLine() == d.statusLine() && s.digest == d.digest && s.audit == d.audit && keysOK
		verdict := "ok"
		if !ok {
			verdict = "MISMATCH"
			failed = append(failed, t)
		}
		fmt.Fprintf(m.out, "verify %s: memories %d -> %d (%s -> %s), digest %s -> %s, audit events %d -> %d, keys %d (present: %v): %s\n",
			t, s.memories(), d.memories(), s.statusLine(), d.statusLine(), s.digest[:16], d.digest[:16], s.audit, d.audit, s.keys, keysOK, verdict)
		for st, n := range s.byStatus {
			total.byStatus[st] += n
		}
		total.audit += s.audit
		total.keys += s.keys
	}
	if len(failed) > 0 {
		return fmt.Errorf("verification failed for tenants %s: the destination differs from the source", strings.Join(failed, ", "))
	}
	fmt.Fprintf(m.out, "migrated %d tenants: %d memories (%s), %d audit events, %d keys; verified\n",
		len(tenants), total.memories(), total.statusLine(), total.audit, total.keys)
	return nil
}

// copyOldestFirst copies what list reads in pages, newest first as the
// port returns them, with write, oldest first and a page per write (one
// transaction), so that the destination's order of insertion, which List,
// export and the audit log follow, is the source's. The cursor starting
// each page is collected first and the pages then read again in reverse:
// memory stays bounded by a page whatever the tenant's size.
func copyOldestFirst[T any](list func(cursor string) ([]T, string, error), write func([]T) error) (int, error) {
	cursors := []string{""}
	for {
		_, next, err := list(cursors[len(cursors)-1])
		if err != nil {
			return 0, err
		}
		if next == "" {
			break
		}
		cursors = append(cursors, next)
	}
	n := 0
	for i := len(cursors) - 1; i >= 0; i-- {
		items, _, err := list(cursors[i])
		if err != nil {
			return n, err
		}
		if len(items) == 0 {
			continue
		}
		slices.Reverse(items)
		if err := write(items); err != nil {
			return n, err
		}
		n += len(items)
	}
	return n, nil
}

// copyMemories copies the tenant's memories with Insert, which keeps
// their whole stored state.
func (m *migrator) copyMemories(tenant string) (int, error) {
	scope := memgate.Scope{Tenant: tenant, AllPrincipals: true}
	return copyOldestFirst(func(cursor string) ([]*memgate.Memory, string, error) {
		p, err := m.src.st.List(m.ctx, scope, store.Filter{Limit: m.batch, Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return p.Memories, p.NextCursor, nil
	}, func(ms []*memgate.Memory) error { return m.dst.st.Insert(m.ctx, ms) })
}

// copyAudit appends the tenant's audit events.
func (m *migrator) copyAudit(tenant string) (int, error) {
	return copyOldestFirst(func(cursor string) ([]store.AuditEvent, string, error) {
		p, err := m.src.st.ListAudit(m.ctx, tenant, memgate.AuditFilter{Limit: m.batch, Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return p.Events, p.NextCursor, nil
	}, func(evs []store.AuditEvent) error { return m.dst.st.AppendAudit(m.ctx, evs) })
}

// copyKeys copies the tenant's key records, revoked ones included.
func (m *migrator) copyKeys(tenant string) (int, error) {
	keys, err := m.src.st.ListKeys(m.ctx, tenant)
	if err != nil {
		return 0, err
	}
	for i, k := range keys {
		if err := m.dst.st.CreateKey(m.ctx, k); err != nil {
			return i, fmt.Errorf("key %s: %w", k.ID, err)
		}
	}
	return len(keys), nil
}

// figures reads what verification compares for tenant in s: the memories
// per stored status and a SHA-256 over their ids, statuses, versions and
// content hashes (sorted by id, so the order of reading does not matter),
// the number of audit events and of keys. With only set, memories whose id
// it lacks are left out.
func (m *migrator) figures(s store.Store, tenant string, only map[string]bool) (tenantFigures, error) {
	f := tenantFigures{byStatus: map[memgate.Status]int{}, ids: map[string]bool{}}
	var lines []string
	filter := store.Filter{Limit: store.MaxPageSize}
	for {
		p, err := s.List(m.ctx, memgate.Scope{Tenant: tenant, AllPrincipals: true}, filter)
		if err != nil {
			return f, err
		}
		for _, mem := range p.Memories {
			if only != nil && !only[mem.ID] {
				continue
			}
			f.byStatus[mem.Status]++
			f.ids[mem.ID] = true
			lines = append(lines, fmt.Sprintf("%s\t%s\t%d\t%s\n", mem.ID, mem.Status, mem.Version, mem.ContentSHA256))
		}
		if p.NextCursor == "" {
			break
		}
		filter.Cursor = p.NextCursor
	}
	slices.Sort(lines)
	h := sha256.New()
	for _, l := range lines {
		io.WriteString(h, l)
	}
	f.digest = hex.EncodeToString(h.Sum(nil))
	var err error
	if f.audit, err = m.countAudit(s, tenant); err != nil {
		return f, err
	}
	keys, err := s.ListKeys(m.ctx, tenant)
	if err != nil {
		return f, err
	}
	f.keys = len(keys)
	return f, nil
}

func (m *migrator) countAudit(s store.Store, tenant string) (int, error) {
	n := 0
	f := memgate.AuditFilter{Limit: store.MaxPageSize}
	for {
		p, err := s.ListAudit(m.ctx, tenant, f)
		if err != nil {
			return 0, err
		}
		n += len(p.Events)
		if p.NextCursor == "" {
			return n, nil
		}
		f.Cursor = p.NextCursor
	}
}

// keysPresent reports whether every key of tenant in the source is in the
// destination, the same record found by its hash.
func (m *migrator) keysPresent(tenant string) (bool, error) {
	keys, err := m.src.st.ListKeys(m.ctx, tenant)
	if err != nil {
		return false, err
	}
	for _, k := range keys {
		got, err := m.dst.st.KeyByHash(m.ctx, k.Hash)
		if memgate.ErrorCode(err) == memgate.ENOTFOUND {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		same := got.Tenant == k.Tenant && got.ID == k.ID && got.Role == k.Role && got.Principal == k.Principal &&
			got.Agent == k.Agent && got.Name == k.Name && got.CreatedAt.Equal(k.CreatedAt) &&
			(got.RevokedAt == nil) == (k.RevokedAt == nil) && (k.RevokedAt == nil || got.RevokedAt.Equal(*k.RevokedAt))
		if !same {
			return false, nil
		}
	}
	return true, nil
}
