package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/postgres/pgtest"
	"github.com/memgate/memgate/store"
	"github.com/memgate/memgate/store/sqlstore"
	"github.com/memgate/memgate/store/sqlstore/drivertest"
	"github.com/memgate/memgate/store/storetest"
)

// testURL returns the test database's URL, or ends the test without one
// (pgtest decides: a skip on a developer's machine, a failure in CI).
func testURL(t testing.TB) string { return pgtest.URL(t) }

var (
	adminOnce sync.Once
	adminPool *pgxpool.Pool
	adminErr  error
)

// admin returns a pool on the test database for creating and dropping
// schemas, shared by every test of the package.
func admin(t testing.TB) *pgxpool.Pool {
	t.Helper()
	u := testURL(t)
	adminOnce.Do(func() {
		cfg, err := pgxpool.ParseConfig(u)
		if err != nil {
			adminErr = err
			return
		}
		cfg.MaxConns = 2
		adminPool, adminErr = pgxpool.NewWithConfig(context.Background(), cfg)
	})
	if adminErr != nil {
		t.Fatalf("connect to %s: %v", RedactURL(u), adminErr)
	}
	return adminPool
}

// freshSchema returns the name of a schema that does not exist yet and is
// dropped (with everything in it) when the test ends.
func freshSchema(t testing.TB) string {
	t.Helper()
	pool := admin(t)
	var b [8]byte
	rand.Read(b[:])
	name := "memgate_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		// context.Background: t.Context is already cancelled during cleanup.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	return name
}

// openTest opens a DB in schema that is closed when the test ends (before
// the schema is dropped: cleanups run last-in first-out).
func openTest(t testing.TB, schema string) *DB {
	t.Helper()
	db, err := Open(t.Context(), Config{URL: testURL(t), Schema: schema, MaxConns: 4})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	testURL(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		db := openTest(t, freshSchema(t))
		// Runs before Close: the populations counters must equal the
		// populations they count whatever the suite did.
		t.Cleanup(func() { requirePopulationsExact(t, db) })
		return db
	})
}

func TestDriver(t *testing.T) {
	testURL(t)
	drivertest.Run(t, func(t *testing.T) sqlstore.Driver {
		return openTest(t, freshSchema(t)).c
	})
}

// requirePopulationsExact fails unless every row of populations equals a
// COUNT of the population it stands for, with the predicate eviction uses,
// and no population is missing a row.
func requirePopulationsExact(t testing.TB, db *DB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var bad int
	err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM (
		SELECT tenant, principal, agent, kind, source, COUNT(*) AS n FROM memories WHERE status IN ('active', 'pending')
		GROUP BY tenant, principal, agent, kind, source) c
		FULL JOIN populations p USING (tenant, principal, agent, kind, source)
		WHERE COALESCE(c.n, 0) <> COALESCE(p.n, 0)`).Scan(&bad)
	if err != nil {
		t.Errorf("check populations: %v", err)
		return
	}
	if bad > 0 {
		t.Errorf("%d populations counters differ from a COUNT of their population", bad)
	}
}

func TestConcurrentOpenMigratesOnce(t *testing.T) {
	t.Parallel()
	schema := freshSchema(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	dbs := make([]*DB, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			dbs[i], errs[i] = Open(t.Context(), Config{URL: testURL(t), Schema: schema, MaxConns: 2})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d of %d at once: %v", i, n, err)
		}
		t.Cleanup(func() { dbs[i].Close() })
	}
	ms, err := sqlstore.LoadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	var rows, distinct, maxVersion int
	if err := dbs[0].pool.QueryRow(t.Context(), `SELECT COUNT(*), COUNT(DISTINCT version), MAX(version) FROM schema_migrations`).Scan(&rows, &distinct, &maxVersion); err != nil {
		t.Fatal(err)
	}
	if rows != len(ms) || distinct != len(ms) || maxVersion != ms[len(ms)-1].Version {
		t.Fatalf("schema_migrations: %d rows, %d versions, up to %d; want each of the %d migrations once", rows, distinct, maxVersion, len(ms))
	}
	// Every store works on the one schema: what one writes, another reads.
	m := testMemory("m-001", "written by the first")
	if err := dbs[0].Insert(t.Context(), []*memgate.Memory{m}); err != nil {
		t.Fatal(err)
	}
	got, err := dbs[n-1].Get(t.Context(), alice, m.ID)
	if err != nil || got.Content != m.Content {
		t.Fatalf("Get through another store: %v, %+v", err, got)
	}
}

func TestReopenKeepsDataAndMigratesOnce(t *testing.T) {
	t.Parallel()
	schema := freshSchema(t)
	db := openTest(t, schema)
	if err := db.Insert(t.Context(), []*memgate.Memory{testMemory("m-001", "persisted")}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for i := range 2 {
		db := openTest(t, schema)
		m, err := db.Get(t.Context(), alice, "m-001")
		if err != nil || m.Content != "persisted" {
			t.Fatalf("reopen %d: Get: %v, %+v", i, err, m)
		}
		var rows int
		if err := db.pool.QueryRow(t.Context(), "SELECT COUNT(*) FROM schema_migrations").Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if ms, _ := sqlstore.LoadMigrations(migrationFiles); rows != len(ms) {
			t.Fatalf("reopen %d: schema_migrations has %d rows, want %d", i, rows, len(ms))
		}
		db.Close()
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	schema := freshSchema(t)
	db := openTest(t, schema)
	if _, err := db.pool.Exec(t.Context(), "INSERT INTO schema_migrations (version, name) VALUES (9999, 'from_the_future')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db2, err := Open(t.Context(), Config{URL: testURL(t), Schema: schema, MaxConns: 2})
	if !errors.Is(err, ErrSchemaTooNew) {
		if db2 != nil {
			db2.Close()
		}
		t.Fatalf("Open of a newer schema: %v, want ErrSchemaTooNew", err)
	}
}

// TestTenantLeadsEveryPrimaryKey holds the schema to what a Citus
// deployment needs to distribute every table by tenant: each primary key
// starts with tenant (schema_migrations, which describes the database, and
// embedder_calibrations, which describes embedder models, are the
// exceptions: reference tables under Citus).
func TestTenantLeadsEveryPrimaryKey(t *testing.T) {
	t.Parallel()
	db := openTest(t, freshSchema(t))
	rows, err := db.pool.Query(t.Context(), `SELECT c.relname, a.attname
		FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
		WHERE i.indisprimary AND c.relnamespace = $1::regnamespace ORDER BY c.relname`, db.Schema())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rows.Next() {
		var table, first string
		if err := rows.Scan(&table, &first); err != nil {
			t.Fatal(err)
		}
		got[table] = first
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) < 7 { // control: the tables are there
		t.Fatalf("primary keys found: %v", got)
	}
	// audit_inbox is a queue of append batches, each of events of many
	// tenants, emptied into audit_events (whose key leads with tenant)
	// within seconds.
	for table, first := range got {
		if table != "schema_migrations" && table != "embedder_calibrations" && table != "pseudonym_key" && table != "audit_inbox" && first != "tenant" {
			t.Errorf("table %s: primary key starts with %s, want tenant", table, first)
		}
	}
}

func TestAuditIsAppendOnly(t *testing.T) {
	t.Parallel()
	db := openTest(t, freshSchema(t))
	ctx := t.Context()
	ev := store.AuditEvent{Tenant: "acme", Principal: "alice", Agent: "coach", Actor: "cli", Action: "recall", At: time.Now(), MemoryIDs: []string{"m-001"}}
	if err := db.AppendAudit(ctx, []store.AuditEvent{ev}); err != nil {
		t.Fatal(err)
	}
	if err := db.DrainAudit(ctx); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"UPDATE audit_events SET action = 'nothing'",
		"DELETE FROM audit_events",
		"TRUNCATE audit_events CASCADE",
		"UPDATE audit_refs SET memory_id = 'm-002'",
		"DELETE FROM audit_refs",
		"TRUNCATE audit_refs",
		"INSERT INTO audit_events (tenant, seq, actor, action, at) VALUES ('acme', 1, 'x', 'y', now())",
		// Forget's one exception is the principal alone, to a pseudonym,
		// once: nothing else rides along, and nothing else qualifies.
		"UPDATE audit_events SET principal = 'forgotten:0123456789abcdef0123456789abcdef', action = 'nothing'",
		"UPDATE audit_events SET principal = 'bob'",
		// Its agent may take a pseudonym with it, never alone, never a name.
		"UPDATE audit_events SET agent = 'forgotten:0123456789abcdef0123456789abcdef'",
		"UPDATE audit_events SET principal = 'forgotten:0123456789abcdef0123456789abcdef', agent = 'bot'",
		"UPDATE audit_events SET principal = 'forgotten:0123456789abcdef0123456789abcdef', agent = ''",
	} {
		if _, err := db.pool.Exec(ctx, stmt); err == nil {
			t.Errorf("%s: succeeded on the append-only log", stmt)
		}
	}
	// The exception itself, then not again.
	if _, err := db.pool.Exec(ctx, "UPDATE audit_events SET principal = 'forgotten:0123456789abcdef0123456789abcdef', agent = 'forgotten:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' WHERE principal = 'alice'"); err != nil {
		t.Fatalf("the pseudonym of a forget: %v", err)
	}
	if _, err := db.pool.Exec(ctx, "UPDATE audit_events SET principal = 'forgotten:ffffffffffffffffffffffffffffffff'"); err == nil {
		t.Error("a pseudonym was replaced by another")
	}
	for _, stmt := range []string{"UPDATE audit_events SET agent = 'coach'", "UPDATE audit_events SET agent = 'forgotten:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'"} {
		if _, err := db.pool.Exec(ctx, stmt); err == nil {
			t.Errorf("%s: an agent's pseudonym was changed", stmt)
		}
	}
	if _, err := db.pool.Exec(ctx, "UPDATE audit_events SET principal = 'alice'"); err == nil {
		t.Error("a pseudonym was turned back into a name")
	}
	ev.Principal, ev.Agent = "forgotten:0123456789abcdef0123456789abcdef", "forgotten:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	// Control: the event is still there, whole, and appending still works.
	if err := db.AppendAudit(ctx, []store.AuditEvent{ev}); err != nil {
		t.Fatal(err)
	}
	p, err := db.ListAudit(ctx, "acme", store.AuditFilter{MemoryID: "m-001"})
	if err != nil || len(p.Events) != 2 || p.Events[1].Action != "recall" {
		t.Fatalf("audit after the refused statements: %v, %+v", err, p)
	}
}

// TestAuditAppendAlone checks that a recall's audit append is one
// statement sent alone (sqlstore.Autocommitter), not Write's BEGIN,
// statement, COMMIT: three round trips of a recall's six. The events land
// whole, in order, and drain into the log. The control is a remember,
// which is a transaction.
func TestAuditAppendAlone(t *testing.T) {
	t.Parallel()
	db := openTest(t, freshSchema(t))
	ctx := t.Context()
	at := time.Now()
	before := db.c.writes.Load() // opening migrates
	for i := range 3 {
		evs := []store.AuditEvent{
			{Tenant: "acme", Principal: "alice", Actor: "cli", Action: "recall", At: at, MemoryIDs: []string{fmt.Sprintf("m-%d", i)}},
			{Tenant: "acme", Principal: "alice", Actor: "cli", Action: "recall", At: at, MemoryIDs: []string{fmt.Sprintf("m-%d", i), "m-x"}},
		}
		if err := db.AppendAudit(ctx, evs); err != nil {
			t.Fatal(err)
		}
	}
	if n := db.c.writes.Load() - before; n != 0 {
		t.Fatalf("three audit appends began %d transactions", n)
	}
	var rows int
	if err := db.pool.QueryRow(ctx, "SELECT count(*) FROM audit_inbox").Scan(&rows); err != nil || rows != 3 {
		t.Fatalf("the inbox holds %d rows (%v), want 3", rows, err)
	}
	if err := db.DrainAudit(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := db.ListAudit(ctx, "acme", store.AuditFilter{MemoryID: "m-x"})
	if err != nil || len(p.Events) != 3 {
		t.Fatalf("the log after the drain: %v, %+v", err, p)
	}
	// A batch the store refuses writes nothing.
	if err := db.AppendAudit(ctx, []store.AuditEvent{{Tenant: "acme", Principal: "alice", Action: "recall", At: at}}); err == nil {
		t.Fatal("an event without an actor was appended")
	}
	if err := db.pool.QueryRow(ctx, "SELECT count(*) FROM audit_inbox").Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("the inbox holds %d rows (%v) after the drain and a refused batch", rows, err)
	}
	// Control: a remember is a transaction, counted.
	if _, err := db.Remember(ctx, []*memgate.Memory{testMemory("m-1", "a remembered fact")}, nil); err != nil {
		t.Fatal(err)
	}
	if db.c.writes.Load() == before {
		t.Fatal("a remember began no transaction: the count counts nothing")
	}
	db.Close()
	if err := db.AppendAudit(ctx, []store.AuditEvent{{Tenant: "acme", Principal: "alice", Actor: "cli", Action: "recall", At: at}}); memgate.ErrorCode(err) != memgate.EUNAVAILABLE {
		t.Fatalf("an append to a closed DB: %v, want unavailable", err)
	}
}

func TestCloseIdempotentThenUnavailable(t *testing.T) {
	t.Parallel()
	db := openTest(t, freshSchema(t))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err := db.Get(t.Context(), alice, "m-001")
	if memgate.ErrorCode(err) != memgate.EUNAVAILABLE {
		t.Fatalf("Get after Close: %v, want unavailable", err)
	}
	err = db.Insert(t.Context(), []*memgate.Memory{testMemory("m-001", "x")})
	if memgate.ErrorCode(err) != memgate.EUNAVAILABLE {
		t.Fatalf("Insert after Close: %v, want unavailable", err)
	}
}

// TestUnreachableRedactsPassword: a server that cannot be reached fails Open
// with an error that names the address but never the password.
func TestUnreachableRedactsPassword(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-Pa55"
	_, err := Open(t.Context(), Config{URL: "postgres://memgate:" + secret + "@127.0.0.1:1/memgate?sslmode=disable", ConnectTimeout: 2 * time.Second})
	if err == nil {
		t.Fatal("Open of an unreachable server succeeded")
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("error holds the password: %v", err)
	}
	if !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("error does not name the server: %v", err)
	}
	// A wrong password on the real server: refused, and not echoed.
	u, err := url.Parse(testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), secret)
	if _, err := Open(t.Context(), Config{URL: u.String()}); err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("Open with a wrong password: %v", err)
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"postgres://u:pw@h:5432/db?sslmode=disable", "postgres://u:xxxxx@h:5432/db?sslmode=disable"},
		{"postgresql://u@h/db", "postgresql://u@h/db"},
		{"postgres://u@h/db?password=pw&sslpassword=pw2", "postgres://u@h/db?password=xxxxx&sslpassword=xxxxx"},
		{"host=h user=u password=pw dbname=db", "host=h user=u password=xxxxx dbname=db"},
		{"postgres://u:p w%zz@h/db", "postgres://(unparsable URL)"},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestInterpretError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	app := memgate.FieldError("x", "bad")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	cases := []struct {
		name string
		ctx  context.Context
		err  error
		code string
		msg  string
	}{
		{"application error passes", ctx, app, memgate.EINVALID, "x: bad"},
		{"duplicate memory id", ctx, &pgconn.PgError{Code: "23505", TableName: "memories"}, memgate.ECONFLICT, "id: is already used by another memory"},
		{"duplicate key", ctx, &pgconn.PgError{Code: "23505", TableName: "keys"}, memgate.ECONFLICT, "a key with this id or secret already exists"},
		{"deadlock", ctx, &pgconn.PgError{Code: "40P01"}, memgate.EUNAVAILABLE, "the database is busy, try again"},
		{"serialization", ctx, &pgconn.PgError{Code: "40001"}, memgate.EUNAVAILABLE, "the database is busy, try again"},
		{"statement timeout", ctx, &pgconn.PgError{Code: "57014"}, memgate.EUNAVAILABLE, "the database is busy, try again"},
		{"too many connections", ctx, &pgconn.PgError{Code: "53300"}, memgate.EUNAVAILABLE, "the database cannot be reached, try again"},
		{"admin shutdown", ctx, &pgconn.PgError{Code: "57P01"}, memgate.EUNAVAILABLE, "the database cannot be reached, try again"},
		{"connection failure", ctx, &pgconn.PgError{Code: "08006"}, memgate.EUNAVAILABLE, "the database cannot be reached, try again"},
		{"NUL in text", ctx, &pgconn.PgError{Code: "22021"}, memgate.EINVALID, "text must be valid UTF-8 without NUL bytes"},
		{"unexpected EOF", ctx, io.ErrUnexpectedEOF, memgate.EUNAVAILABLE, "the database cannot be reached, try again"},
		{"anything else", ctx, errors.New("boom"), memgate.EINTERNAL, "internal error"},
		{"check violation is a bug", ctx, &pgconn.PgError{Code: "23514"}, memgate.EINTERNAL, "internal error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := interpretError(tc.ctx, "op", tc.err)
			if memgate.ErrorCode(got) != tc.code || memgate.ErrorMessage(got) != tc.msg {
				t.Fatalf("got %s %q, want %s %q", memgate.ErrorCode(got), memgate.ErrorMessage(got), tc.code, tc.msg)
			}
			if tc.err != app && !errors.Is(got, tc.err) {
				t.Fatalf("the driver error is not wrapped for the log: %v", got)
			}
		})
	}
	if err := interpretError(cancelled, "op", errors.New("driver noise")); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v, want context.Canceled", err)
	}
	if interpretError(ctx, "op", nil) != nil {
		t.Fatal("nil error translated into something")
	}
}

var alice = memgate.Scope{Tenant: "acme", Principal: "alice"}

func testMemory(id, content string) *memgate.Memory {
	at := time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)
	return &memgate.Memory{
		ID: id, Tenant: "acme", Principal: "alice",
		Kind: memgate.KindFact, Source: memgate.SourceUser, Sensitivity: memgate.SensitivityStandard,
		Status: memgate.StatusActive, Content: content, ContentSHA256: memgate.ContentHash(content),
		CreatedAt: at, UpdatedAt: at, Version: 1,
	}
}

// TestConflictMessages: a unique violation is told apart by its table, so
// a reused key and a reused memory id each get their own message.
func TestConflictMessages(t *testing.T) {
	t.Parallel()
	db := openTest(t, freshSchema(t))
	ctx := t.Context()
	m := testMemory("m-001", "once")
	if err := db.Insert(ctx, []*memgate.Memory{m}); err != nil {
		t.Fatal(err)
	}
	err := db.Insert(ctx, []*memgate.Memory{m})
	if memgate.ErrorCode(err) != memgate.ECONFLICT || memgate.ErrorMessage(err) != "id: is already used by another memory" {
		t.Fatalf("Insert of a used id: %v", err)
	}
	k := &memgate.Key{ID: "key_1", Tenant: "acme", Role: memgate.RoleAdmin, CreatedAt: m.CreatedAt, Hash: memgate.ContentHash("s")}
	if err := db.CreateKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	other := *k
	other.ID = "key_2" // same hash
	for _, dup := range []*memgate.Key{k, &other} {
		err := db.CreateKey(ctx, dup)
		if memgate.ErrorCode(err) != memgate.ECONFLICT || memgate.ErrorMessage(err) != "a key with this id or secret already exists" {
			t.Fatalf("CreateKey of %s again: %v", dup.ID, err)
		}
	}
}

// TestForgetLeavesNoRow: after forget no row of any table names the person
// or holds their memories' content, reasons or metadata (the audit log
// keeps its events under the pseudonym), and the tables were vacuumed.
// What VACUUM cannot erase (freed space is not zeroed, WAL, replicas,
// backups) is in README. The populated control: before forget the markers
// are in the tables, and another person's row stays.
func TestForgetLeavesNoRow(t *testing.T) {
	t.Parallel()
	schema := freshSchema(t)
	db := openTest(t, schema)
	ctx := t.Context()
	const name, marker = "zqxvbn-principal-aurelia", "zqxvbnmarker"
	alice := memgate.Scope{Tenant: "acme", Principal: name}
	var ms []*memgate.Memory
	for i := range 5 {
		m := testMemory(fmt.Sprintf("m-%03d", i), fmt.Sprintf("Aurelia keeps %d hives %s.", i, marker))
		m.Principal, m.Reason, m.Metadata = name, "said so "+marker, map[string]any{"note": marker}
		ms = append(ms, m)
	}
	bob := testMemory("m-100", "Bob keeps a garden.")
	bob.Principal = "bob"
	if err := db.Insert(ctx, append(ms, bob)); err != nil {
		t.Fatal(err)
	}
	const agent, conv, idemKey = "zqxvbn-agent-aurelias-coach", "zqxvbn-conversation-aurelia", "zqxvbn-idem-key"
	if err := db.AppendAudit(ctx, []store.AuditEvent{{Tenant: "acme", Principal: name, Agent: agent, Actor: "cli", Action: "recall", At: time.Now(), MemoryIDs: []string{"m-001"}}}); err != nil {
		t.Fatal(err)
	}
	kept := testMemory("m-010", "Aurelia's kept memory "+marker)
	kept.Principal, kept.Agent, kept.Conversation = name, agent, conv
	doomed := testMemory("m-011", "Aurelia's doomed memory zqxvbn-deleted")
	doomed.Principal, doomed.Agent, doomed.Conversation = name, agent, conv
	const doomedHash = "d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0"
	if _, err := db.Remember(ctx, []*memgate.Memory{kept, doomed}, nil,
		store.IdempotencyKey{Key: idemKey + "-kept", RequestSHA256: strings.Repeat("ab", 32)},
		store.IdempotencyKey{Key: idemKey + "-doomed", RequestSHA256: doomedHash}); err != nil {
		t.Fatal(err)
	}
	rows := func(needle string) map[string]int {
		t.Helper()
		tables, err := db.pool.Query(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = $1", schema)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for tables.Next() {
			var n string
			if err := tables.Scan(&n); err != nil {
				t.Fatal(err)
			}
			names = append(names, n)
		}
		tables.Close()
		found := map[string]int{}
		for _, tb := range names {
			var n int
			q := "SELECT count(*) FROM " + pgx.Identifier{tb}.Sanitize() + " AS r WHERE r::text LIKE '%' || $1 || '%'"
			if err := db.pool.QueryRow(ctx, q, needle).Scan(&n); err != nil {
				t.Fatalf("%s: %v", tb, err)
			}
			if n > 0 {
				found[tb] = n
			}
		}
		return found
	}
	// The audit event is still in the inbox (nothing read the log): forget
	// must take it from there too.
	if len(rows(marker)) == 0 || len(rows(name)) < 3 || rows(agent)["audit_inbox"] != 1 || rows(conv)["idempotency_keys"] != 2 || rows(doomedHash)["idempotency_keys"] != 1 {
		t.Fatalf("control: before forget, the markers are in %v, the name in %v, the agent in %v, the conversation in %v, the hash in %v",
			rows(marker), rows(name), rows(agent), rows(conv), rows(doomedHash))
	}
	// Delete takes the memory's idempotency record: key and request hash.
	if err := db.Delete(ctx, alice, doomed.ID); err != nil {
		t.Fatal(err)
	}
	for _, needle := range []string{"zqxvbn-deleted", idemKey + "-doomed", doomedHash} {
		if found := rows(needle); len(found) != 0 {
			t.Errorf("after delete, %q is in %v", needle, found)
		}
	}
	if found := rows(idemKey + "-kept"); found["idempotency_keys"] != 1 {
		t.Errorf("control: the record of the memory that stays: %v", found)
	}
	n, err := db.Forget(ctx, alice.Tenant, alice.Principal, "forgotten:0123456789abcdef0123456789abcdef")
	if err != nil || n != 6 {
		t.Fatalf("Forget: %d, %v", n, err)
	}
	for _, needle := range []string{agent, conv, idemKey} {
		if found := rows(needle); len(found) != 0 {
			t.Errorf("after forget, %q is in %v", needle, found)
		}
	}
	if found := rows(marker); len(found) != 0 {
		t.Errorf("after forget, the content is in %v", found)
	}
	if found := rows(name); len(found) != 0 {
		t.Errorf("after forget, the name is in %v", found)
	}
	// Still in the inbox, rewritten there; drained, it is in the log.
	if found := rows("forgotten:0123456789abcdef0123456789abcdef"); found["audit_events"]+found["audit_inbox"] != 1 {
		t.Errorf("the audit event under the pseudonym: %v", found)
	}
	if err := db.DrainAudit(ctx); err != nil {
		t.Fatal(err)
	}
	if found := rows("forgotten:0123456789abcdef0123456789abcdef"); found["audit_events"] != 1 || found["audit_inbox"] != 0 {
		t.Errorf("the audit event under the pseudonym, drained: %v", found)
	}
	if found := rows(agent); len(found) != 0 {
		t.Errorf("after the drain, %q is in %v", agent, found)
	}
	if found := rows("Bob keeps a garden"); found["memories"] != 1 {
		t.Errorf("control: bob's memory after aurelia's forget: %v", found)
	}
	var vacuumed bool
	if err := db.pool.QueryRow(ctx, "SELECT last_vacuum IS NOT NULL FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'memories'", schema).Scan(&vacuumed); err != nil {
		t.Fatal(err)
	}
	if !vacuumed {
		t.Error("memories was not vacuumed after forget")
	}
}
