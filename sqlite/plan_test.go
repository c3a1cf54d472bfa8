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
	"github.com/memgate/memgate/store/sqlstore"
)

// queryPlan returns SQLite's plan for q, one step per line.
func queryPlan(t *testing.T, db *DB, q string, args ...any) string {
	t.Helper()
	args, err := bind(args)
	if err != nil {
		t.Fatal(err)
	}
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

// Every statement of the hot and the background paths, as the portable
// store words it for SQLite, reads index ranges in the order it needs: no
// table scan, no sort (but the histogram's grouping of bucket numbers,
// which SQLite cannot tell rise with at). A partial index is used only when
// the query repeats its WHERE clause, which these tests hold the queries
// to. A statement without an expectation here fails: a new one gets its
// plan checked.
func TestPlans(t *testing.T) {
	db := openTest(t, filepath.Join(t.TempDir(), "m.db"))
	want := map[string][]string{
		// Fetch looks rows up by id, not by walking the partition: recall
		// calls it on every request, and a partition can hold 100k memories.
		"fetch":                   {"(tenant=? AND id=?)"},
		"dedup lookup":            {"USING INDEX memories_dedup (tenant=? AND principal=? AND kind=? AND dedup_key=? AND source=?)"},
		"insert unless duplicate": {"USING INDEX memories_dedup (tenant=? AND principal=? AND kind=? AND dedup_key=? AND source=?)"},
		"key holder":              {"USING INDEX memories_key (tenant=? AND principal=? AND agent=? AND conversation=? AND key=? AND source=?)"},
		"retention count":         {"SEARCH populations USING PRIMARY KEY (tenant=? AND principal=? AND agent=? AND kind=? AND source=?)"},
		"retention eviction":      {"INDEX memories_retention (tenant=? AND principal=? AND agent=? AND kind=? AND source=?)", "(tenant=? AND id=?)"},
		"sweep":                   {"USING INDEX memories_expiry", "(tenant=? AND id=?)"},
		// A cold load walks the partition in seq order; a fill updates
		// rows by id.
		"load index":       {"SEARCH memories USING INDEX memories_partition (tenant=? AND principal=?)"},
		"fill index terms": {"(tenant=? AND id=?)"},
		"partition head":   {"SEARCH partition_heads USING PRIMARY KEY (tenant=? AND principal=?)"},
		"changed memories": {"SEARCH memories USING INDEX memories_changes (tenant=? AND principal=? AND change_seq>?)"},
		"deleted ids": {
			"SEARCH t USING PRIMARY KEY (tenant=? AND principal=? AND change_seq>?)",
			"SEARCH m USING INDEX sqlite_autoindex_memories_1 (tenant=? AND id=?)",
		},
		"prune changes": {"SEARCH memory_tombstones USING COVERING INDEX memory_tombstones_deleted_at (deleted_at<?)",
			"SEARCH memory_tombstones USING PRIMARY KEY (tenant=? AND principal=? AND change_seq=?)"},
		"prune idempotency": {"idempotency_keys_created_at (created_at<?)"},
		"drop idempotency of deleted memories": {"USING COVERING INDEX idempotency_keys_memory (tenant=? AND memory_id=?)",
			"SEARCH idempotency_keys USING PRIMARY KEY (tenant=? AND principal=? AND agent=? AND conversation=? AND key=?)"},
		"audit of a tenant":            {"USING INDEX audit_events_tenant (tenant=?)"},
		"audit of a tenant, next page": {"USING INDEX audit_events_tenant (tenant=? AND seq<?)"},
		"audit of a principal":         {"USING INDEX audit_events_principal (tenant=? AND principal=?)"},
		"audit of a recall":            {"USING INDEX audit_events_recall (tenant=? AND recall_id=?)"},
		"audit of a memory": {"SEARCH r USING PRIMARY KEY (tenant=? AND memory_id=? AND seq<?)",
			"SEARCH e USING INTEGER PRIMARY KEY (rowid=?)"},
		"audit histogram of a tenant":    {"SEARCH e USING COVERING INDEX audit_events_action (tenant=? AND action=? AND at>? AND at<?)"},
		"audit histogram of a principal": {"SEARCH e USING COVERING INDEX audit_events_principal_action (tenant=? AND principal=? AND action=? AND at>? AND at<?)"},
	}
	for _, st := range sqlstore.Statements(dialect) {
		t.Run(st.Name, func(t *testing.T) {
			ws, ok := want[st.Name]
			if !ok {
				t.Fatalf("no plan expected for %q", st.Name)
			}
			plan := queryPlan(t, db, st.SQL, st.Args...)
			for _, w := range ws {
				if !strings.Contains(plan, w) {
					t.Errorf("plan lacks %q:\n%s", w, plan)
				}
			}
			// SCAN CONSTANT ROW is the one row of a SELECT without FROM
			// (subqueries of a constant), not a table scan.
			rest := strings.ReplaceAll(plan, "SCAN CONSTANT ROW", "")
			// The metadata filter reads the row's own JSON (json_each).
			rest = strings.ReplaceAll(rest, "SCAN j EXISTS VIRTUAL TABLE", "")
			if strings.HasPrefix(st.Name, "audit histogram") {
				rest = strings.ReplaceAll(rest, "USE TEMP B-TREE FOR GROUP BY", "")
			}
			for _, bad := range []string{"TEMP B-TREE", "SCAN "} {
				if strings.Contains(rest, bad) {
					t.Errorf("plan has %q:\n%s", bad, plan)
				}
			}
		})
	}
}

// The populations counter and the eviction predicate must agree after any
// mix of operations, over mixed kinds and sources: retention counts what it
// evicts from.
func TestPopulationCounterMatchesPredicate(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sources := []memgate.Source{memgate.SourceUser, memgate.SourceAssistant, memgate.SourceSystem}
	mk := func(i int, principal string, kind memgate.Kind, status memgate.Status) *memgate.Memory {
		c := fmt.Sprintf("memory %d", i)
		m := &memgate.Memory{ID: fmt.Sprintf("m-%04d", i), Tenant: "t", Principal: principal, Kind: kind, Source: sources[i%3],
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
				for _, src := range sources {
					var counted, kept int
					if err := db.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM memories WHERE "+sqlstore.PopulationSQL, "t", p, "", string(k), string(src)).Scan(&counted); err != nil {
						t.Fatal(err)
					}
					if err := db.r.QueryRowContext(ctx, sqlstore.PopulationCountSQL, "t", p, "", string(k), string(src)).Scan(&kept); err != nil && !errors.Is(err, sql.ErrNoRows) {
						t.Fatal(err)
					}
					if counted != kept {
						t.Fatalf("%s/%s/%s: the predicate counts %d, the counter holds %d", p, k, src, counted, kept)
					}
				}
			}
		}
	}
	check()
	// Control: the population is not trivially empty.
	var alive int
	db.r.QueryRowContext(ctx, sqlstore.PopulationCountSQL, "t", "alice", "", string(memgate.KindMessage), string(memgate.SourceUser)).Scan(&alive)
	if alive < 1 || alive > 5 {
		t.Fatalf("alice's own messages after a cap of 5 and a sweep: %d", alive)
	}
}
