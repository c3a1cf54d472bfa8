package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// Fetch must look rows up by id, not scan the partition: recall calls it on
// every request, and a partition can hold 100k memories.
func TestFetchLooksUpByID(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := memgate.Scope{Tenant: "t", Principal: "p", Agent: "a", Conversation: "c"}
	now := time.Now()
	where, args := fetchScopeSQL(s)
	q, args, err := gateSQL(where, args, []string{"a", "b"}, store.ReadGate{Now: now, AsOf: now, Metadata: map[string]any{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "(tenant=? AND id=?)") {
		t.Fatalf("Fetch does not look up by (tenant, id):\n%s", text)
	}
}

// queryPlan returns SQLite's plan for q, one step per line.
func queryPlan(t *testing.T, db *DB, q string, args ...any) string {
	t.Helper()
	rows, err := db.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("EXPLAIN QUERY PLAN: %v\n%s", err, q)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

// The write gate, retention, the sweeper and the audit log each read one
// index range in the order they need: no table scan, no sort. A partial
// index is used only when the query repeats its WHERE clause, which these
// tests hold the queries to.
func TestWritePathAndAuditPlans(t *testing.T) {
	db := openTest(t, filepath.Join(t.TempDir(), "m.db"))
	audit := func(f store.AuditFilter) (string, []any) {
		before, err := store.DecodeCursor(f.Cursor)
		if err != nil {
			t.Fatal(err)
		}
		return auditQuery("acme", f, before, 50)
	}
	cases := []struct {
		name string
		q    string
		args []any
		want []string
	}{
		{"dedup lookup", dedupSQL, []any{"acme", "alice", "fact", "k", "", "", "active", 1}, []string{"USING INDEX memories_dedup (tenant=? AND principal=? AND kind=? AND dedup_key=?)"}},
		{"retention count", populationCountSQL, []any{"acme", "alice", "", "message"}, []string{"SEARCH populations USING PRIMARY KEY (tenant=? AND principal=? AND agent=? AND kind=?)"}},
		{"retention eviction", evictSQL, []any{"acme", "alice", "", "message", 3}, []string{"USING COVERING INDEX memories_retention (tenant=? AND principal=? AND agent=? AND kind=?)", "INTEGER PRIMARY KEY"}},
		{"sweep", sweepSQL, []any{1, 500}, []string{"USING COVERING INDEX memories_expiry", "INTEGER PRIMARY KEY"}},
	}
	for _, f := range []struct {
		name string
		f    store.AuditFilter
		want []string
	}{
		{"audit of a tenant", store.AuditFilter{}, []string{"USING INDEX audit_events_tenant (tenant=?)"}},
		{"audit of a tenant, next page", store.AuditFilter{Cursor: store.EncodeCursor(9), Action: "recall"}, []string{"USING INDEX audit_events_tenant (tenant=? AND seq<?)"}},
		{"audit of a principal", store.AuditFilter{Principal: "alice", From: time.Now()}, []string{"USING INDEX audit_events_principal (tenant=? AND principal=?)"}},
		{"audit of a recall", store.AuditFilter{RecallID: "r-1"}, []string{"USING INDEX audit_events_recall (tenant=? AND recall_id=?)"}},
		{"audit of a memory", store.AuditFilter{MemoryID: "m-1", Principal: "alice", Cursor: store.EncodeCursor(9)},
			[]string{"SEARCH r USING PRIMARY KEY (tenant=? AND memory_id=? AND seq<?)", "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)"}},
	} {
		q, args := audit(f.f)
		cases = append(cases, struct {
			name string
			q    string
			args []any
			want []string
		}{f.name, q, args, f.want})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := queryPlan(t, db, tc.q, tc.args...)
			for _, w := range tc.want {
				if !strings.Contains(plan, w) {
					t.Errorf("plan lacks %q:\n%s", w, plan)
				}
			}
			for _, bad := range []string{"TEMP B-TREE", "SCAN "} {
				// SCAN CONSTANT ROW is the one row of a SELECT without
				// FROM (subqueries of a constant), not a table scan.
				if strings.Contains(strings.ReplaceAll(plan, "SCAN CONSTANT ROW", ""), bad) {
					t.Errorf("plan has %q:\n%s", bad, plan)
				}
			}
		})
	}
}

// The populations counter and the eviction predicate must agree after any
// mix of operations: retention counts what it evicts from.
func TestPopulationCounterMatchesPredicate(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(i int, principal string, kind memgate.Kind, status memgate.Status) *memgate.Memory {
		c := fmt.Sprintf("memory %d", i)
		m := &memgate.Memory{ID: fmt.Sprintf("m-%04d", i), Tenant: "t", Principal: principal, Kind: kind, Source: memgate.SourceUser,
			Sensitivity: memgate.SensitivityStandard, Status: status, Content: c, ContentSHA256: memgate.ContentHash(c),
			CreatedAt: base, UpdatedAt: base, Version: 1, SeenCount: 1}
		if i%7 == 0 {
			exp := base.Add(time.Hour)
			m.ExpiresAt = &exp
		}
		return m
	}
	principals := []string{"alice", "bob"}
	kinds := []memgate.Kind{memgate.KindMessage, memgate.KindFact}
	var ms []*memgate.Memory
	for i := range 60 {
		st := memgate.StatusActive
		if i%5 == 0 {
			st = memgate.StatusPending
		}
		ms = append(ms, mk(i, principals[i%2], kinds[(i/2)%2], st))
	}
	if err := db.Insert(ctx, ms); err != nil {
		t.Fatal(err)
	}
	sc := func(p string) memgate.Scope { return memgate.Scope{Tenant: "t", Principal: p} }
	for i := 0; i < 60; i += 3 { // revoke some, delete some, supersede one
		switch i % 9 {
		case 0:
			db.SetStatus(ctx, sc(ms[i].Principal), ms[i].ID, store.StatusChange{From: []memgate.Status{memgate.StatusActive, memgate.StatusPending}, To: memgate.StatusRevoked, At: base})
		case 3:
			db.Delete(ctx, sc(ms[i].Principal), ms[i].ID)
		case 6:
			next := mk(100+i, ms[i].Principal, ms[i].Kind, memgate.StatusActive)
			next.Supersedes = ms[i].ID
			db.Supersede(ctx, sc(ms[i].Principal), ms[i].ID, next, base)
		}
	}
	if _, err := db.Remember(ctx, []*memgate.Memory{mk(200, "alice", memgate.KindMessage, memgate.StatusActive), mk(201, "alice", memgate.KindMessage, memgate.StatusActive)},
		map[memgate.Kind]int{memgate.KindMessage: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteExpired(ctx, base.Add(2*time.Hour), 100); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Forget(ctx, "t", "bob", "forgotten:0123456789abcdef0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		for _, p := range append(principals, "carol") {
			for _, k := range kinds {
				var counted, kept int
				if err := db.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM memories WHERE "+populationSQL, "t", p, "", string(k)).Scan(&counted); err != nil {
					t.Fatal(err)
				}
				if err := db.r.QueryRowContext(ctx, populationCountSQL, "t", p, "", string(k)).Scan(&kept); err != nil && !errors.Is(err, sql.ErrNoRows) {
					t.Fatal(err)
				}
				if counted != kept {
					t.Fatalf("%s/%s: the predicate counts %d, the counter holds %d", p, k, counted, kept)
				}
			}
		}
	}
	check()
	// Control: the population is not trivially empty.
	var alive int
	db.r.QueryRowContext(ctx, populationCountSQL, "t", "alice", "", string(memgate.KindMessage)).Scan(&alive)
	if alive < 1 || alive > 5 {
		t.Fatalf("alice's messages after a cap of 5 and a sweep: %d", alive)
	}
}

// The audit histogram reads one range of a covering index (the events of
// one action in the time range, of the tenant or of one principal): no
// scan of the log, no read of the table. The grouping sorts the bucket
// numbers of that range (SQLite cannot tell that the bucket rises with
// at); nothing else is sorted.
func TestAuditHistogramPlan(t *testing.T) {
	db := openTest(t, filepath.Join(t.TempDir(), "m.db"))
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		principal string
		want      string
	}{
		{"tenant", "", "SEARCH e USING COVERING INDEX audit_events_action (tenant=? AND action=? AND at>? AND at<?)"},
		{"principal", "alice", "SEARCH e USING COVERING INDEX audit_events_principal_action (tenant=? AND principal=? AND action=? AND at>? AND at<?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, args := auditHistogramQuery(store.AuditHistogramQuery{Tenant: "acme", Principal: tc.principal, Action: "recall",
				From: from, To: from.Add(14 * 24 * time.Hour), Bucket: 24 * time.Hour})
			plan := queryPlan(t, db, q, args...)
			if !strings.Contains(plan, tc.want) {
				t.Errorf("plan lacks %q:\n%s", tc.want, plan)
			}
			rest := strings.ReplaceAll(plan, "USE TEMP B-TREE FOR GROUP BY", "")
			for _, bad := range []string{"TEMP B-TREE", "SCAN "} {
				if strings.Contains(rest, bad) {
					t.Errorf("plan has %q:\n%s", bad, plan)
				}
			}
		})
	}
}

// Recall reads PartitionHead on every call: one primary-key lookup.
// ChangesSince reads one index range per list, in sequence order (no sort),
// and looks each tombstone's id up by (tenant, id); pruning reads the
// oldest tombstones from their time index.
func TestChangesPlans(t *testing.T) {
	db := openTest(t, filepath.Join(t.TempDir(), "m.db"))
	for _, tc := range []struct {
		name string
		q    string
		args []any
		want []string
	}{
		{"partition head", partitionHeadSQL, []any{"acme", "alice"}, []string{"SEARCH partition_heads USING PRIMARY KEY (tenant=? AND principal=?)"}},
		{"changed memories", changedSQL, []any{"acme", "alice", 7, 100}, []string{"SEARCH memories USING INDEX memories_changes (tenant=? AND principal=? AND change_seq>?)"}},
		{"deleted ids", deletedSQL, []any{"acme", "alice", 7, 100}, []string{
			"SEARCH t USING PRIMARY KEY (tenant=? AND principal=? AND change_seq>?)",
			"SEARCH m USING INDEX sqlite_autoindex_memories_1 (tenant=? AND id=?)",
		}},
		{"prune", pruneSQL, []any{1, 500}, []string{"SEARCH memory_tombstones USING COVERING INDEX memory_tombstones_deleted_at (deleted_at<?)", "SEARCH memory_tombstones USING PRIMARY KEY (tenant=? AND principal=? AND change_seq=?)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := queryPlan(t, db, tc.q, tc.args...)
			for _, w := range tc.want {
				if !strings.Contains(plan, w) {
					t.Errorf("plan lacks %q:\n%s", w, plan)
				}
			}
			for _, bad := range []string{"TEMP B-TREE", "SCAN "} {
				// SCAN CONSTANT ROW is the one row of a SELECT without
				// FROM (subqueries of a constant), not a table scan.
				if strings.Contains(strings.ReplaceAll(plan, "SCAN CONSTANT ROW", ""), bad) {
					t.Errorf("plan has %q:\n%s", bad, plan)
				}
			}
		})
	}
}
