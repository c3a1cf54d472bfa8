package sqlite

import (
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
		{"retention count", populationCountSQL, []any{"acme", "alice", "message"}, []string{"USING COVERING INDEX memories_retention (tenant=? AND principal=? AND kind=?)"}},
		{"retention eviction", evictSQL, []any{"acme", "alice", "message", 3}, []string{"USING COVERING INDEX memories_retention (tenant=? AND principal=? AND kind=?)", "INTEGER PRIMARY KEY"}},
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
				if strings.Contains(plan, bad) {
					t.Errorf("plan has %q:\n%s", bad, plan)
				}
			}
		})
	}
}
