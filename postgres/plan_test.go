package postgres

import (
	"strings"
	"testing"

	"github.com/memgate/memgate/store/sqlstore"
)

// TestLoadIndexPlan checks that a cold load walks a partition in seq order
// by an index, even when the partition is most of its table: PostgreSQL
// then finds a sequential scan cheaper, and its sort of 2 kB rows spills to
// disk past work_mem. The planner weighs the sort by the width of what it
// sorts, which it knows of a column but not of a CASE over it: the load
// selected its vectors inside a CASE, and sorted.
func TestLoadIndexPlan(t *testing.T) {
	t.Parallel()
	db := openTest(t, freshSchema(t))
	// 6,000 memories of one partition and a few of another.
	fillPartitions(t, db, 6000, 20)
	analyze(t, db)
	load := statementNamed(t, db, "load index")
	plan := explainPlan(t, db, load.SQL, load.Args)
	if strings.Contains(plan, "Sort") || !strings.Contains(plan, "Index Scan") {
		t.Fatalf("the load of a partition that is most of its table sorts, or reads no index:\n%s", plan)
	}
	t.Logf("the load:\n%s", plan)
	// For the record: the load as it was, with the vector in a CASE.
	old := strings.Replace(load.SQL, "embedding_vector,", "CASE WHEN embedding_dim > 0 THEN embedding_vector END,", 1)
	t.Logf("the load with its vector in a CASE:\n%s", explainPlan(t, db, old, load.Args))
}

// TestFetchPlan checks that a recall's verified read looks its few ids up
// by the primary key (tenant, id), not by walking the partition, before
// the table's first ANALYZE (a table filled since, as after a bulk import,
// until autovacuum comes by) and after it. Before, the planner took tenant
// and principal for a selective pair and walked the partition's
// memories_retention range: 5–10 ms at 10k rows against 0.05 ms, and
// 47–109 ms in bench/load's database of 40,000 memories. The control is
// the same statement with its principal and status written plainly,
// which walks the partition before the ANALYZE (the case must be one
// where the planner would go wrong).
func TestFetchPlan(t *testing.T) {
	t.Parallel()
	db := openTest(t, freshSchema(t))
	fillPartitions(t, db, 10000, 20)
	fetch := statementNamed(t, db, "fetch")
	plain := strings.NewReplacer("(principal || '')", "principal", "(status || '')", "status").Replace(fetch.SQL)
	if plain == fetch.SQL {
		t.Fatalf("the fetch writes neither its principal nor its status with Dialect.ByID:\n%s", fetch.SQL)
	}
	byKey := func(plan string) bool {
		return strings.Contains(plan, "memories_pkey") && !strings.Contains(plan, "Seq Scan") && !strings.Contains(plan, "memories_retention")
	}
	if plan := explainPlan(t, db, plain, fetch.Args); byKey(plan) {
		t.Fatalf("control: the fetch written plainly looks its ids up by the primary key before the first ANALYZE, so this case proves nothing:\n%s", plan)
	}
	if plan := explainPlan(t, db, fetch.SQL, fetch.Args); !byKey(plan) {
		t.Fatalf("before the first ANALYZE, the fetch of a few ids does not look them up by the primary key:\n%s", plan)
	}
	analyze(t, db)
	if plan := explainPlan(t, db, fetch.SQL, fetch.Args); !byKey(plan) {
		t.Fatalf("the fetch of a few ids does not look them up by the primary key:\n%s", plan)
	}
}

// fillPartitions stores alice memories of tenant acme in one partition
// and bob in another, each with a 484-d vector (1,936 bytes, as
// builtin/hybrid-v2's), in one statement each.
func fillPartitions(t *testing.T, db *DB, alice, bob int) {
	t.Helper()
	for _, p := range []struct {
		principal string
		n         int
	}{{"alice", alice}, {"bob", bob}} {
		if _, err := db.pool.Exec(t.Context(), `INSERT INTO memories (tenant, id, principal, kind, source, sensitivity, status, content,
			created_at, updated_at, version, content_sha256, embedding_provider, embedding_model, embedding_dim, embedding_vector,
			index_terms, terms_version)
			SELECT 'acme', $1 || g, $1, 'fact', 'user', 'standard', 'active', 'memory ' || g, now(), now(), 1, md5(g::text),
				'builtin', 'hybrid-v2', 484, decode(repeat('3f800000', 484), 'hex'), '\x00', 'analysis-v1'
			FROM generate_series(1, $2) g`, p.principal, p.n); err != nil {
			t.Fatal(err)
		}
	}
}

// analyze gathers the memories table's statistics, as autovacuum would.
func analyze(t *testing.T, db *DB) {
	t.Helper()
	if _, err := db.pool.Exec(t.Context(), "ANALYZE memories"); err != nil {
		t.Fatal(err)
	}
}

// statementNamed returns the store's statement of that name
// (sqlstore.Statements), as PostgreSQL runs it.
func statementNamed(t *testing.T, db *DB, name string) sqlstore.Statement {
	t.Helper()
	for _, st := range sqlstore.Statements(db.c.dialect) {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no %s statement", name)
	return sqlstore.Statement{}
}

// explainPlan returns PostgreSQL's plan of query with args.
func explainPlan(t *testing.T, db *DB, query string, args []any) string {
	t.Helper()
	rows, err := db.pool.Query(t.Context(), "EXPLAIN "+sqlstore.NumberedRebind(query), args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

// TestAuditRefsUnchecked: audit_refs has no foreign key to audit_events
// (0016): its check locked each reference's event, and doubled the cost of
// the drain's references (BenchmarkDrainAudit). The control is the table's
// primary key, which the same query finds.
func TestAuditRefsUnchecked(t *testing.T) {
	t.Parallel()
	db := openTest(t, freshSchema(t))
	count := func(kind string) int {
		var n int
		if err := db.pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_constraint WHERE conrelid = 'audit_refs'::regclass AND contype = $1`, kind).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("p"); n != 1 {
		t.Fatalf("control: audit_refs has %d primary keys, want 1", n)
	}
	if n := count("f"); n != 0 {
		t.Fatalf("audit_refs has %d foreign keys, want none", n)
	}
}
