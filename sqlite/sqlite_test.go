package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
	"github.com/memgate/memgate/store/sqlstore"
	"github.com/memgate/memgate/store/sqlstore/drivertest"
	"github.com/memgate/memgate/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
		// Runs before Close (cleanups run last-in first-out): the suite must
		// leave a sound file behind.
		t.Cleanup(func() { requireIntegrity(t, db) })
		return db
	})
}

func TestDriver(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) sqlstore.Driver {
		return openTest(t, filepath.Join(t.TempDir(), "memgate.db")).c
	})
}

// openTest opens a DB that is closed when the test ends.
func openTest(t *testing.T, path string, opts ...Option) *DB {
	t.Helper()
	db, err := Open(t.Context(), path, opts...)
	if err != nil {
		t.Fatalf("Open %s: %v", path, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

func requireIntegrity(t *testing.T, db *DB) {
	t.Helper()
	var res string
	// context.Background: t.Context is already cancelled during cleanup.
	if err := db.r.QueryRowContext(context.Background(), "PRAGMA integrity_check").Scan(&res); err != nil {
		t.Fatalf("integrity_check: %v", err)
	}
	if res != "ok" {
		t.Fatalf("integrity_check: %s", res)
	}
}

func testMemory(id, content string) *memgate.Memory {
	return &memgate.Memory{
		ID: id, Tenant: "acme", Principal: "alice",
		Kind: memgate.KindFact, Source: memgate.SourceUser, Sensitivity: memgate.SensitivityStandard,
		Status: memgate.StatusActive, Content: content, ContentSHA256: memgate.ContentHash(content),
		CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC), UpdatedAt: time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC),
		Version: 1,
	}
}

var alice = memgate.Scope{Tenant: "acme", Principal: "alice"}

func TestReopenKeepsDataAndMigratesOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memgate.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Insert(t.Context(), []*memgate.Memory{testMemory("m-001", "persisted")}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	for i := range 2 {
		db := openTest(t, path)
		m, err := db.Get(t.Context(), alice, "m-001")
		if err != nil || m.Content != "persisted" {
			t.Fatalf("reopen %d: Get: %v, %+v", i, err, m)
		}
		ms, err := loadMigrations(migrationFiles)
		if err != nil {
			t.Fatal(err)
		}
		var rows, maxVersion int
		if err := db.r.QueryRow("SELECT COUNT(*), MAX(version) FROM schema_migrations").Scan(&rows, &maxVersion); err != nil {
			t.Fatal(err)
		}
		if rows != len(ms) || maxVersion != ms[len(ms)-1].Version {
			t.Fatalf("reopen %d: schema_migrations has %d rows up to %d, want %d up to %d", i, rows, maxVersion, len(ms), ms[len(ms)-1].Version)
		}
		db.Close()
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memgate.db")
	db := openTest(t, path)
	db.Close()

	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'from_the_future', 0)"); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	db2, err := Open(t.Context(), path)
	if err == nil {
		db2.Close()
		t.Fatal("Open of a database with a newer schema succeeded")
	}
	if !errors.Is(err, ErrSchemaTooNew) || !strings.Contains(err.Error(), "9999") {
		t.Fatalf("Open: %v, want ErrSchemaTooNew naming version 9999", err)
	}
}

func TestWALAndPragmas(t *testing.T) {
	t.Parallel()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
	cases := []struct {
		name   string
		conn   *sql.DB
		pragma string
		want   string
	}{
		{"writer journal mode", db.w, "journal_mode", "wal"},
		{"reader journal mode", db.r, "journal_mode", "wal"},
		{"writer synchronous NORMAL", db.w, "synchronous", "1"},
		{"writer foreign keys", db.w, "foreign_keys", "1"},
		{"writer busy timeout", db.w, "busy_timeout", "5000"},
		{"reader busy timeout", db.r, "busy_timeout", "5000"},
		{"reader query only", db.r, "query_only", "1"},
		// A mapped reader unmaps the file whenever the WAL changed
		// (sqlite.go): under writes it faulted in every page it read.
		{"reader reads without a memory map", db.r, "mmap_size", "0"},
		{"reader page cache", db.r, "cache_size", "-16384"},
		// The drain's random leaves of audit_refs (sqlite.go).
		{"writer page cache of the audit log", db.w, "audit.cache_size", "-16384"},
		{"control: the writer's page cache of the database is SQLite's default", db.w, "main.cache_size", "-2000"},
		{"writer not query only", db.w, "query_only", "0"},
		// The checkpointer checkpoints (checkpoint.go), not the writer's
		// commits; the setting is the connection's, so both files'.
		{"writer does not checkpoint the database", db.w, "main.wal_autocheckpoint", "0"},
		{"writer does not checkpoint the audit log", db.w, "audit.wal_autocheckpoint", "0"},
		{"control: reader keeps the automatic checkpoint", db.r, "wal_autocheckpoint", "1000"},
		{"checkpointer synchronous NORMAL", db.c.ckpt.db, "synchronous", "1"},
		{"checkpointer audit synchronous NORMAL", db.c.ckpt.db, "audit.synchronous", "1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			if err := tc.conn.QueryRow("PRAGMA " + tc.pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("PRAGMA %s = %s, want %s", tc.pragma, got, tc.want)
			}
		})
	}
	if _, err := os.Stat(db.Path() + "-wal"); err != nil {
		t.Fatalf("no WAL file beside the database: %v", err)
	}
}

func TestReadersCannotWrite(t *testing.T) {
	t.Parallel()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
	if _, err := db.w.Exec("DELETE FROM memories"); err != nil {
		t.Fatalf("control: writer: %v", err)
	}
	if _, err := db.r.Exec("DELETE FROM memories"); err == nil {
		t.Fatal("a reader connection wrote")
	}
}

func TestPathWithURICharacters(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "odd dir?x=1#frag", "mem%20gate.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db := openTest(t, path)
	if db.Path() != path {
		t.Fatalf("Path() = %q, want %q", db.Path(), path)
	}
	if err := db.Insert(t.Context(), []*memgate.Memory{testMemory("m-001", "x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at the given path: %v", err)
	}
}

func TestOpenRefusesNonFilePaths(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"", ":memory:", "file:x.db?mode=memory"} {
		if db, err := Open(t.Context(), p); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded", p)
		}
	}
}

// TestConcurrentOpenOfNewFile opens one new file from several handles at
// once, as replicas or restarted processes may, and checks that every Open
// succeeds and the schema is migrated once. The race is timing-bound (five
// rounds of eight caught the missing wait for the WAL switch in 9 runs of
// 40); TestOpenWaitsForWALSwitch pins that case down deterministically.
func TestConcurrentOpenOfNewFile(t *testing.T) {
	t.Parallel()
	ms, _ := loadMigrations(migrationFiles)
	for round := range 5 {
		path := filepath.Join(t.TempDir(), "memgate.db")
		var wg sync.WaitGroup
		dbs := make([]*DB, 8)
		errs := make([]error, len(dbs))
		for i := range dbs {
			wg.Go(func() { dbs[i], errs[i] = Open(t.Context(), path) })
		}
		wg.Wait()
		for _, db := range dbs {
			if db != nil {
				t.Cleanup(func() { db.Close() })
			}
		}
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: Open %d: %v", round, i, err)
			}
		}
		var rows int
		if err := dbs[0].r.QueryRow("SELECT COUNT(*) FROM schema_migrations").Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != len(ms) {
			t.Fatalf("round %d: schema_migrations has %d rows, want %d", round, rows, len(ms))
		}
		// Writes from every handle land (they share the file).
		for i, db := range dbs {
			if err := db.Insert(t.Context(), []*memgate.Memory{testMemory(fmt.Sprintf("m-%03d", i+1), "x")}); err != nil {
				t.Fatalf("round %d: insert via handle %d: %v", round, i, err)
			}
		}
		var n int
		if err := dbs[len(dbs)-1].r.QueryRow("SELECT COUNT(*) FROM memories").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != len(dbs) {
			t.Fatalf("round %d: %d memories stored, want %d", round, n, len(dbs))
		}
	}
}

func TestCloseIdempotentThenUnavailable(t *testing.T) {
	t.Parallel()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
	if _, err := db.Get(t.Context(), alice, "m-001"); memgate.ErrorCode(err) != memgate.ENOTFOUND {
		t.Fatalf("control: Get before Close: %v", err)
	}
	for i := range 3 {
		if err := db.Close(); err != nil {
			t.Fatalf("Close %d: %v", i, err)
		}
	}
	calls := map[string]error{}
	_, calls["Get"] = db.Get(t.Context(), alice, "m-001")
	_, calls["List"] = db.List(t.Context(), alice, store.Filter{})
	calls["Insert"] = db.Insert(t.Context(), []*memgate.Memory{testMemory("m-001", "x")})
	calls["Delete"] = db.Delete(t.Context(), alice, "m-001")
	_, calls["Counts"] = db.Counts(t.Context(), alice, time.Now())
	_, calls["Remember"] = db.Remember(t.Context(), []*memgate.Memory{testMemory("m-001", "x")}, nil)
	_, calls["AddFeedback"] = db.AddFeedback(t.Context(), alice, "m-001", 1)
	_, calls["DeleteExpired"] = db.DeleteExpired(t.Context(), time.Now(), 10)
	calls["AppendAudit"] = db.AppendAudit(t.Context(), []store.AuditEvent{{Tenant: "acme", Actor: "cli", Action: "x", At: time.Now()}})
	_, calls["ListAudit"] = db.ListAudit(t.Context(), "acme", store.AuditFilter{})
	for name, err := range calls {
		if memgate.ErrorCode(err) != memgate.EUNAVAILABLE {
			t.Errorf("%s after Close: %v, want unavailable", name, err)
		}
	}
}

// TestBusyIsUnavailable holds the write lock from another connection, as a
// second process would, and checks the store reports unavailable, not
// internal, once the busy timeout runs out.
func TestBusyIsUnavailable(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memgate.db")
	db := openTest(t, path, WithBusyTimeout(50*time.Millisecond))
	if err := db.Insert(t.Context(), []*memgate.Memory{testMemory("m-001", "before the lock")}); err != nil {
		t.Fatalf("control: %v", err)
	}

	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}

	err = db.Insert(t.Context(), []*memgate.Memory{testMemory("m-002", "while locked")})
	if memgate.ErrorCode(err) != memgate.EUNAVAILABLE || memgate.ErrorMessage(err) != sqlstore.ErrBusy().Message {
		t.Fatalf("Insert while another connection holds the lock: %v, want unavailable", err)
	}
	// Readers are not blocked by a writer in WAL mode.
	if _, err := db.Get(t.Context(), alice, "m-001"); err != nil {
		t.Fatalf("Get while locked: %v", err)
	}

	if _, err := conn.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := db.Insert(t.Context(), []*memgate.Memory{testMemory("m-002", "after the lock")}); err != nil {
		t.Fatalf("Insert after the lock is released: %v", err)
	}
}

// TestWritesBeginImmediate checks a write transaction takes the write lock
// when it begins (BEGIN IMMEDIATE), not at its first write, which is what
// keeps two writers from deadlocking on a lock upgrade.
func TestWritesBeginImmediate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memgate.db")
	db := openTest(t, path)
	other, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetMaxOpenConns(1)

	tx, err := db.w.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec("BEGIN IMMEDIATE"); err == nil {
		other.Exec("ROLLBACK")
		t.Fatal("another connection took the write lock while a DB transaction was open")
	}
	tx.Rollback()
	// Control: with the transaction gone, the lock is free.
	if _, err := other.Exec("BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("BEGIN IMMEDIATE after Rollback: %v", err)
	}
	other.Exec("ROLLBACK")
}

func TestInterpretError(t *testing.T) {
	t.Parallel()
	live := context.Background()
	done, cancel := context.WithCancel(live)
	cancel()
	appErr := memgate.FieldError("x", "bad")
	driverErr := errors.New("disk I/O error: secret path /var/x")
	cases := []struct {
		name     string
		ctx      context.Context
		err      error
		wantCode string
		wantMsg  string
		wantIs   error
	}{
		{"nil", live, nil, "", "", nil},
		{"application error passes", live, appErr, memgate.EINVALID, "x: bad", appErr},
		{"cancelled context wins", done, driverErr, memgate.EINTERNAL, "internal error", context.Canceled},
		{"deadline passes through", live, context.DeadlineExceeded, memgate.EINTERNAL, "internal error", context.DeadlineExceeded},
		{"closed connection", live, sql.ErrConnDone, memgate.EUNAVAILABLE, "the database is closed", sql.ErrConnDone},
		{"other driver error is internal and kept for logs", live, driverErr, memgate.EINTERNAL, "internal error", driverErr},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := interpretError(tc.ctx, "op", tc.err)
			if memgate.ErrorCode(got) != tc.wantCode || memgate.ErrorMessage(got) != tc.wantMsg {
				t.Fatalf("got %s %q (%v), want %s %q", memgate.ErrorCode(got), memgate.ErrorMessage(got), got, tc.wantCode, tc.wantMsg)
			}
			if tc.wantIs != nil && !errors.Is(got, tc.wantIs) {
				t.Fatalf("%v does not wrap %v", got, tc.wantIs)
			}
		})
	}
}

func TestLoadMigrations(t *testing.T) {
	t.Parallel()
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	cases := []struct {
		name    string
		files   fstest.MapFS
		wantErr string
	}{
		{"ordered", fstest.MapFS{"migrations/0002_b.sql": file("B"), "migrations/0001_a.sql": file("A")}, ""},
		{"gap", fstest.MapFS{"migrations/0001_a.sql": file("A"), "migrations/0003_c.sql": file("C")}, "want version 2"},
		{"repeat", fstest.MapFS{"migrations/0001_a.sql": file("A"), "migrations/0001_b.sql": file("B")}, "want version 2"},
		{"not starting at one", fstest.MapFS{"migrations/0002_b.sql": file("B")}, "want version 1"},
		{"bad name", fstest.MapFS{"migrations/1_a.sql": file("A")}, "NNNN_name.sql"},
		{"empty", fstest.MapFS{"migrations/.keep": file("")}, "NNNN_name.sql"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := loadMigrations(tc.files)
			if tc.wantErr == "" {
				if err != nil || len(ms) != 2 || ms[0].SQL != "A" || ms[1].Version != 2 {
					t.Fatalf("got %+v, %v", ms, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
	// The shipped migrations load.
	if _, err := loadMigrations(migrationFiles); err != nil {
		t.Fatal(err)
	}
}

// TestAuditIsAppendOnly checks the triggers: no statement through this
// database changes or removes an audit event or ref, whatever its form,
// while the same connection can still append and write memories.
func TestAuditIsAppendOnly(t *testing.T) {
	t.Parallel()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
	ctx := t.Context()
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	ev := store.AuditEvent{Tenant: "acme", Principal: "alice", Agent: "coach", Actor: "cli", Action: "recall", At: at, MemoryIDs: []string{"m-001", "m-002"}}
	if err := db.AppendAudit(ctx, []store.AuditEvent{ev, ev}); err != nil {
		t.Fatal(err)
	}
	if err := db.DrainAudit(ctx); err != nil {
		t.Fatal(err)
	}
	snapshot := func() string {
		t.Helper()
		var events, refs string
		if err := db.r.QueryRowContext(ctx, `SELECT json_group_array(json_array(seq, tenant, principal, agent, actor,
			action, at, recall_id, query_sha256, reason, counts, memory_ids, scores)) FROM audit_events`).Scan(&events); err != nil {
			t.Fatal(err)
		}
		if err := db.r.QueryRowContext(ctx, `SELECT json_group_array(json_array(tenant, memory_id, seq)) FROM audit_refs`).Scan(&refs); err != nil {
			t.Fatal(err)
		}
		return events + refs
	}
	before := snapshot()

	attempts := []string{
		"UPDATE audit_events SET action = 'nothing'",
		"UPDATE audit_events SET tenant = 'globex' WHERE seq = 1",
		"DELETE FROM audit_events WHERE seq = 1",
		"DELETE FROM audit_events",
		"INSERT OR REPLACE INTO audit_events (seq, tenant, actor, action, at) VALUES (1, 'acme', 'mallory', 'nothing', 0)",
		"REPLACE INTO audit_events (seq, tenant, actor, action, at) VALUES (2, 'acme', 'mallory', 'nothing', 0)",
		"INSERT INTO audit_events (seq, tenant, actor, action, at) VALUES (1, 'acme', 'mallory', 'nothing', 0) ON CONFLICT (seq) DO UPDATE SET action = 'nothing'",
		"UPDATE audit_refs SET memory_id = 'm-003'",
		"DELETE FROM audit_refs WHERE memory_id = 'm-001'",
		"DELETE FROM audit_refs",
		// Forget's one exception is the principal alone, to a pseudonym,
		// once: nothing else rides along, and nothing else qualifies.
		"UPDATE audit_events SET principal = 'forgotten:0123456789abcdef0123456789abcdef', action = 'nothing'",
		"UPDATE audit_events SET principal = 'bob'",
		// Its agent may take a pseudonym with it, never alone, never a name.
		"UPDATE audit_events SET agent = 'forgotten:0123456789abcdef0123456789abcdef'",
		"UPDATE audit_events SET principal = 'forgotten:0123456789abcdef0123456789abcdef', agent = 'bot'",
		"UPDATE audit_events SET principal = 'forgotten:0123456789abcdef0123456789abcdef', agent = ''",
	}
	for _, q := range attempts {
		_, err := db.w.ExecContext(ctx, q)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want the append-only abort", q, err)
		}
	}
	if after := snapshot(); after != before {
		t.Fatalf("audit log changed:\nbefore %s\nafter  %s", before, after)
	}
	// The exception itself, then not again.
	if _, err := db.w.ExecContext(ctx, "UPDATE audit_events SET principal = 'forgotten:0123456789abcdef0123456789abcdef', agent = 'forgotten:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' WHERE principal = 'alice'"); err != nil {
		t.Fatalf("the pseudonym of a forget: %v", err)
	}
	for _, q := range []string{
		"UPDATE audit_events SET principal = 'forgotten:ffffffffffffffffffffffffffffffff'",
		"UPDATE audit_events SET principal = 'alice'",
		"UPDATE audit_events SET agent = 'coach'",
		"UPDATE audit_events SET agent = 'forgotten:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'",
	} {
		if _, err := db.w.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s after the pseudonym: %v, want the append-only abort", q, err)
		}
	}

	// Controls: the writer writes memories, and appends to the log, also
	// with plain SQL (an insert without a seq is not a replacement).
	if err := db.Insert(ctx, []*memgate.Memory{testMemory("m-001", "x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, "UPDATE memories SET reason = 'edited' WHERE id = 'm-001'"); err != nil {
		t.Fatalf("control: UPDATE memories: %v", err)
	}
	if _, err := db.w.ExecContext(ctx, "INSERT INTO audit_events (tenant, actor, action, at) VALUES ('acme', 'cli', 'raw', 0)"); err != nil {
		t.Fatalf("control: plain INSERT into audit_events: %v", err)
	}
	if err := db.AppendAudit(ctx, []store.AuditEvent{ev}); err != nil {
		t.Fatalf("control: AppendAudit: %v", err)
	}
	p, err := db.ListAudit(ctx, "acme", store.AuditFilter{})
	if err != nil || len(p.Events) != 4 {
		t.Fatalf("ListAudit: %v, %d events, want 4", err, len(p.Events))
	}
}

// TestMigrateKeepsVersion1Data opens a database written at schema version 1
// (before the write gate's columns and the audit log) and checks its rows
// read back with the new fields at their defaults and take part in dedup.
func TestMigrateKeepsVersion1Data(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "memgate.db")
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, raw, ms[:1]); err != nil {
		t.Fatal(err)
	}
	m := testMemory("m-001", "written by version 1")
	m.SeenCount = 1
	args, err := memoryArgs(m)
	if err != nil {
		t.Fatal(err)
	}
	v1Columns := memoryColumns[:strings.Index(memoryColumns, ",\n\tdedup_key")]
	if _, err := raw.ExecContext(ctx, "INSERT INTO memories ("+v1Columns+") VALUES ("+placeholders(26)+")", args[:26]...); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	db := openTest(t, path)
	got, err := db.Get(ctx, alice, "m-001")
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != m.Content || got.SeenCount != 1 || got.Flags != nil || got.Feedback != (memgate.Feedback{}) || got.DedupKey != "" {
		t.Fatalf("migrated row: %+v", got)
	}
	var version int
	if err := db.r.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&version); err != nil || version != len(ms) {
		t.Fatalf("schema version %d (%v), want %d", version, err, len(ms))
	}
	// The old row has no key, so it takes no part in dedup; a keyed one does.
	for i, want := range []bool{false, true} {
		n := testMemory(fmt.Sprintf("m-1%02d", i), "written by version 1")
		n.DedupKey = "k"
		res, err := db.Remember(ctx, []*memgate.Memory{n}, nil)
		if err != nil || res.Deduplicated[0] != want {
			t.Fatalf("Remember %d: %+v, %v; want deduplicated %v", i, res, err, want)
		}
	}
	if _, err := db.AddFeedback(ctx, alice, "m-001", -0.5); err != nil {
		t.Fatalf("AddFeedback on a migrated row: %v", err)
	}
}

// TestMigrateNumbersExistingChanges opens a database written at schema
// version 5, before change tracking: every partition's head starts at its
// newest row, ChangesSince(0) reports every row, and the next change is
// numbered above them.
func TestMigrateNumbersExistingChanges(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "memgate.db")
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, raw, ms[:5]); err != nil {
		t.Fatal(err)
	}
	bob := memgate.Scope{Tenant: "acme", Principal: "bob"}
	var rows []*memgate.Memory
	for i := range 6 {
		m := testMemory(fmt.Sprintf("m-%03d", i), fmt.Sprintf("written by version 5, %d", i))
		if i%2 == 1 {
			m.Principal = bob.Principal
		}
		rows = append(rows, m)
	}
	// The columns of version 5: those added by 0009 (created_by,
	// updated_by) are not there yet.
	v5Columns := strings.TrimSuffix(memoryColumns, ", created_by, updated_by")
	v5Insert := "INSERT INTO memories (" + v5Columns + ") VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", strings.Count(v5Columns, ",")+1), ", ") + ")"
	for _, m := range rows {
		args, err := memoryArgs(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.ExecContext(ctx, v5Insert, args[:len(args)-2]...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.ExecContext(ctx, "DELETE FROM memories WHERE id = 'm-004'"); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	db := openTest(t, path)
	for _, c := range []struct {
		sc   memgate.Scope
		ids  []string
		head int64 // seq of the newest row
	}{
		{alice, []string{"m-000", "m-002"}, 3},
		{bob, []string{"m-001", "m-003", "m-005"}, 6},
	} {
		h, err := db.PartitionHead(ctx, c.sc.Tenant, c.sc.Principal)
		if err != nil || h != c.head {
			t.Fatalf("%s: head %d (%v), want %d", c.sc.Principal, h, err, c.head)
		}
		ch, err := db.ChangesSince(ctx, c.sc.Tenant, c.sc.Principal, 0, 100)
		if err != nil || ch.Reset || ch.Head != c.head || len(ch.Deleted) != 0 {
			t.Fatalf("%s: ChangesSince(0): %+v, %v", c.sc.Principal, ch, err)
		}
		var got []string
		for _, m := range ch.Memories {
			got = append(got, m.ID)
		}
		if !slices.Equal(got, c.ids) {
			t.Fatalf("%s: ChangesSince(0) reports %v, want %v", c.sc.Principal, got, c.ids)
		}
	}
	if _, err := db.AddFeedback(ctx, alice, "m-000", 1); err != nil {
		t.Fatal(err)
	}
	ch, err := db.ChangesSince(ctx, "acme", "alice", 3, 100)
	if err != nil || len(ch.Memories) != 1 || ch.Memories[0].ID != "m-000" || ch.Head != 4 {
		t.Fatalf("after a change: %+v, %v", ch, err)
	}
}

// The triggers of change tracking keep a memory in its partition: its
// owner and id cannot change, whoever writes.
func TestMemoryOwnerIsFixed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
	if err := db.Insert(ctx, []*memgate.Memory{testMemory("m-001", "mine")}); err != nil {
		t.Fatal(err)
	}
	for _, set := range []string{"tenant = 'other'", "principal = 'bob'", "id = 'm-002'"} {
		if _, err := db.w.ExecContext(ctx, "UPDATE memories SET "+set+" WHERE id = 'm-001'"); err == nil || !strings.Contains(err.Error(), "cannot change") {
			t.Errorf("UPDATE memories SET %s: %v", set, err)
		}
	}
	// Control: other columns change, and so does the head.
	before, _ := db.PartitionHead(ctx, "acme", "alice")
	if _, err := db.w.ExecContext(ctx, "UPDATE memories SET reason = 'why', principal = 'alice' WHERE id = 'm-001'"); err != nil {
		t.Fatal(err)
	}
	if after, _ := db.PartitionHead(ctx, "acme", "alice"); after != before+1 {
		t.Fatalf("head %d after an update, was %d", after, before)
	}
}

// TestOpenWaitsForWALSwitch holds a write lock on a new file, as another
// process opening it may, while Open switches the file to WAL. SQLite refuses
// the switch at once, without its busy handler (the switch already holds a
// read lock, and waiting while holding one could deadlock), so Open must wait
// for the lock itself and succeed once it is released; with too short a busy
// timeout it fails as busy instead of hanging.
func TestOpenWaitsForWALSwitch(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memgate.db")
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec("CREATE TABLE held (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	hold := func() *sql.Tx {
		tx, err := other.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("INSERT INTO held VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		return tx
	}

	// Control: held past the busy timeout, Open fails as busy.
	tx := hold()
	if db, err := Open(t.Context(), path, WithBusyTimeout(100*time.Millisecond)); err == nil {
		db.Close()
		t.Fatal("Open succeeded while another connection held the file past the busy timeout")
	} else if !strings.Contains(err.Error(), "SQLITE_BUSY") {
		t.Fatalf("Open: %v, want SQLITE_BUSY", err)
	}
	tx.Rollback()

	// Released within the busy timeout, Open waits and succeeds.
	tx = hold()
	released := make(chan struct{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		tx.Rollback()
		close(released)
	}()
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open while another connection held the file for 200ms: %v", err)
	}
	defer db.Close()
	select {
	case <-released:
	default:
		t.Fatal("Open returned before the other connection let go of the file")
	}
	if err := db.Insert(t.Context(), []*memgate.Memory{testMemory("m-001", "x")}); err != nil {
		t.Fatal(err)
	}
}
