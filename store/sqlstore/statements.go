package sqlstore

import (
	"fmt"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// Statement is one of the statements on the hot and the background paths,
// with arguments of the right types, for a driver's tests of its query
// plans (each must read an index range in the order it needs: no scan of
// a table, no sort).
type Statement struct {
	Name string
	SQL  string
	Args []any
}

// Statements returns the statements a driver's plan tests check, as d
// words them.
func Statements(d *Dialect) []Statement {
	s := &Store{dl: d}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := []Statement{
		{"load index", loadIndexSQL, []any{"builtin", "hybrid-v2", int64(484), "analysis-v1", "acme", "alice"}},
		{"fill index terms", fillTermsSQL, []any{[]byte{0}, "analysis-v1", "acme", "alice", "m-1", "c", "analysis-v1"}},
		{"dedup lookup", dedupSQL, []any{"acme", "alice", "fact", "k", "", "", "", "user", "active", at}},
		{"key holder", keyHolderSQL, []any{"acme", "alice", "", "", "pref:coffee", "user"}},
		{"retention count", populationCountSQL, []any{"acme", "alice", "", "message", "assistant"}},
		{"retention eviction", evictSQL, []any{"acme", "acme", "alice", "", "message", "assistant", 3}},
		{"sweep", fmt.Sprintf(sweepSQL, d.SkipLocked), []any{at, 500}},
		{"partition head", partitionHeadSQL, []any{"acme", "alice", "acme", "acme", "alice", "acme"}},
		{"changed memories", changedSQL, []any{"acme", "alice", 7, 100}},
		{"deleted ids", deletedSQL, []any{"acme", "alice", 7, 100}},
		{"prune changes", pruneChangesSQL + d.SkipLocked + ")", []any{at, 500}},
		{"prune idempotency", pruneIdempotencySQL + d.SkipLocked + ")", []any{at, 500}},
		{"drop idempotency of deleted memories", dropIdempotencySQL(2), []any{"acme", "m-1", "m-2"}},
	}
	add := func(name string, q *Query) { out = append(out, Statement{name, q.String(), q.Args()}) }
	m := &memgate.Memory{ID: "m-1", Tenant: "acme", Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser,
		Sensitivity: memgate.SensitivityStandard, Status: memgate.StatusActive, Content: "c", DedupKey: "k", CreatedAt: at, UpdatedAt: at, Version: 1}
	args, err := memoryArgs(m)
	if err != nil {
		panic(err)
	}
	out = append(out, Statement{"insert unless duplicate", insertUnlessDuplicateSQL, append(args, dedupArgs(m)...)})
	fetch, err := s.gateQuery(memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "a", Conversation: "c"}, []string{"a", "b"},
		store.ReadGate{Now: at, AsOf: at, Metadata: map[string]any{"k": "v"}})
	if err != nil {
		panic(err)
	}
	add("fetch", fetch)
	for _, f := range []struct {
		name string
		f    store.AuditFilter
	}{
		{"audit of a tenant", store.AuditFilter{}},
		{"audit of a tenant, next page", store.AuditFilter{Cursor: store.EncodeCursor(9), Action: "recall"}},
		{"audit of a principal", store.AuditFilter{Principal: "alice", From: at}},
		{"audit of a recall", store.AuditFilter{RecallID: "r-1"}},
		{"audit of a memory", store.AuditFilter{MemoryID: "m-1", Principal: "alice", Cursor: store.EncodeCursor(9)}},
	} {
		before, _ := store.DecodeCursor(f.f.Cursor)
		add(f.name, auditQuery("acme", f.f, before, 50))
	}
	for _, p := range []string{"", "alice"} {
		add("audit histogram of "+map[string]string{"": "a tenant", "alice": "a principal"}[p], s.auditHistogramQuery(store.AuditHistogramQuery{
			Tenant: "acme", Principal: p, Action: "recall", From: at, To: at.Add(14 * 24 * time.Hour), Bucket: 24 * time.Hour}))
	}
	return out
}

// PopulationSQL is the predicate retention counts and evicts with, and
// PopulationCountSQL the read of the counter a schema's triggers keep for
// it (five arguments each: tenant, principal, agent, kind, source), for a
// driver's test that the two agree.
const (
	PopulationSQL      = populationSQL
	PopulationCountSQL = populationCountSQL
)

// EvictSQL is retention's eviction (seven arguments: tenant, then the
// population's five, then how many to evict), for a driver's test of how
// the database runs it.
const EvictSQL = evictSQL
