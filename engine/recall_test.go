package engine_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/sqlite"
)

// newRecallEngine returns an engine with the built-in embedder over db (a
// new database when db is nil).
func newRecallEngine(t *testing.T, db *sqlite.DB, clk *clock) *engine.Engine {
	t.Helper()
	if db == nil {
		var err error
		db, err = sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
	}
	cfg := engine.Config{Store: db, Embedder: builtin.New()}
	if clk != nil {
		cfg.Now = clk.Now
	}
	eng, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

func rememberAll(t *testing.T, eng *engine.Engine, tenant, principal string, contents ...string) []*memgate.Memory {
	t.Helper()
	rs := make([]memgate.RememberRequest, len(contents))
	for i, c := range contents {
		rs[i] = memgate.RememberRequest{Memory: memgate.Memory{Tenant: tenant, Principal: principal, Kind: memgate.KindFact, Source: memgate.SourceUser, Content: c}}
	}
	rms, err := eng.RememberBatch(ctx, rs)
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]*memgate.Memory, len(rms))
	for i, r := range rms {
		ms[i] = r.Memory
	}
	return ms
}

func recallIDs(t *testing.T, eng *engine.Engine, req memgate.RecallRequest) []string {
	t.Helper()
	res, err := eng.Recall(ctx, req)
	if err != nil {
		t.Fatalf("recall: %v", err)
	}
	ids := make([]string, len(res.Results))
	for i, h := range res.Results {
		ids[i] = h.Memory.ID
	}
	return ids
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

var dogFacts = []string{
	"Alice adopted a golden retriever puppy named Biscuit in March.",
	"Biscuit the dog needs his rabies vaccination renewed every year at the vet.",
	"Alice walks her dog Biscuit along the river every morning before work.",
}

func TestRecallUnrelatedReturnsNothingRelatedReturnsMatchFirst(t *testing.T) {
	t.Parallel()
	eng := newRecallEngine(t, nil, nil)
	ms := rememberAll(t, eng, "t", "alice", dogFacts...)
	// Unrelated: nothing at the default floor, however large k.
	for _, q := range []string{
		"What is the deadline for filing quarterly corporate taxes?",
		"Explain how a Kubernetes operator reconciles custom resources",
		"Recommend a vegetarian lasagna recipe",
	} {
		res, err := eng.Recall(ctx, memgate.RecallRequest{Scope: scope("t", "alice"), Query: q, K: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Results) != 0 {
			t.Errorf("unrelated query %q recalled %d memories (best score %.3f)", q, len(res.Results), res.Results[0].Score)
		}
	}
	// Control: related queries find the right memory first.
	for q, want := range map[string]string{
		"When does the dog need his rabies shot?": ms[1].ID,
		"Where does Alice walk Biscuit?":          ms[2].ID,
		"What breed of puppy did Alice adopt?":    ms[0].ID,
		"Is the dog's rabies vaccine due?":        ms[1].ID,
	} {
		ids := recallIDs(t, eng, memgate.RecallRequest{Scope: scope("t", "alice"), Query: q})
		if len(ids) == 0 || ids[0] != want {
			t.Errorf("query %q: got %v, want %s first", q, ids, want)
		}
	}
}

func TestRecallScoresAndExplain(t *testing.T) {
	t.Parallel()
	eng := newRecallEngine(t, nil, nil)
	rememberAll(t, eng, "t", "alice", dogFacts...)
	res, err := eng.Recall(ctx, memgate.RecallRequest{Scope: scope("t", "alice"), Query: "rabies vaccination for Biscuit", Explain: true, Render: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) == 0 || res.Explain == nil || !strings.HasPrefix(res.RecallID, "r_") {
		t.Fatalf("result %+v", res)
	}
	prev := 2.0
	for _, h := range res.Results {
		if h.Score < res.MinScore || h.Score > 1 || h.Score > prev {
			t.Fatalf("score %.3f out of order or range (floor %.3f)", h.Score, res.MinScore)
		}
		prev = h.Score
		x := h.Explain
		if x == nil || x.Text < 0 || x.Text > 1 || x.Vector < 0 || x.Vector > 1 || x.Fused <= 0 {
			t.Fatalf("explain %+v", x)
		}
	}
	if res.Explain.Embedder == nil || res.Explain.Embedder.Model != builtin.Model {
		t.Fatalf("explain embedder %+v", res.Explain.Embedder)
	}
	if !strings.Contains(res.Context, res.Results[0].Memory.ID) || !strings.HasPrefix(res.Context, "<memories>") {
		t.Fatalf("context block %q", res.Context)
	}
	// Floor off returns at least as much, and the floor value is reported.
	off := 0.0
	all, err := eng.Recall(ctx, memgate.RecallRequest{Scope: scope("t", "alice"), Query: "rabies vaccination for Biscuit", MinScore: &off, K: 10})
	if err != nil || len(all.Results) < len(res.Results) || all.MinScore != 0 {
		t.Fatalf("floor off: %d results (floor %v), %v", len(all.Results), all.MinScore, err)
	}
}

func TestRecallNeverReturnsWhatLeft(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	eng := newRecallEngine(t, nil, clk)
	q := memgate.RecallRequest{Scope: scope("t", "alice"), Query: "rabies vaccination for the dog Biscuit", K: 10}
	setup := func(principal string) *memgate.Memory {
		t.Helper()
		ms := rememberAll(t, eng, "t", principal, dogFacts...)
		q := q
		q.Scope = scope("t", principal)
		if ids := recallIDs(t, eng, q); !contains(ids, ms[1].ID) {
			t.Fatalf("control: %s not recalled before it left: %v", ms[1].ID, ids)
		}
		return ms[1]
	}

	t.Run("revoke", func(t *testing.T) {
		m := setup("p-revoke")
		if _, err := eng.Revoke(ctx, m.Scope(), m.ID, "wrong"); err != nil {
			t.Fatal(err)
		}
		q := q
		q.Scope = scope("t", "p-revoke")
		if ids := recallIDs(t, eng, q); contains(ids, m.ID) {
			t.Fatal("revoked memory recalled")
		}
	})
	t.Run("supersede", func(t *testing.T) {
		m := setup("p-supersede")
		_, next, err := eng.Supersede(ctx, m.Scope(), m.ID, memgate.RememberRequest{Memory: memgate.Memory{Source: "user", Content: "Biscuit's rabies vaccination is now every three years."}})
		if err != nil {
			t.Fatal(err)
		}
		q := q
		q.Scope = scope("t", "p-supersede")
		ids := recallIDs(t, eng, q)
		if contains(ids, m.ID) || !contains(ids, next.ID) {
			t.Fatalf("after supersede: %v (old %s, new %s)", ids, m.ID, next.ID)
		}
	})
	t.Run("delete", func(t *testing.T) {
		m := setup("p-delete")
		if err := eng.Delete(ctx, m.Scope(), m.ID); err != nil {
			t.Fatal(err)
		}
		q := q
		q.Scope = scope("t", "p-delete")
		if ids := recallIDs(t, eng, q); contains(ids, m.ID) {
			t.Fatal("deleted memory recalled")
		}
	})
	t.Run("forget", func(t *testing.T) {
		setup("p-forget")
		if _, err := eng.Forget(ctx, memgate.Scope{Tenant: "t", Principal: "p-forget"}); err != nil {
			t.Fatal(err)
		}
		q := q
		q.Scope = scope("t", "p-forget")
		if ids := recallIDs(t, eng, q); len(ids) != 0 {
			t.Fatalf("forgotten principal recalled %v", ids)
		}
	})
	t.Run("expire", func(t *testing.T) {
		m, err := eng.Remember(ctx, memgate.RememberRequest{Memory: memgate.Memory{Tenant: "t", Principal: "p-expire", Kind: "task", Source: "user", Content: dogFacts[1]}, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		q := q
		q.Scope = scope("t", "p-expire")
		if ids := recallIDs(t, eng, q); !contains(ids, m.ID) {
			t.Fatal("control: fresh memory not recalled")
		}
		later := q
		later.AsOf = clk.Now().Add(2 * time.Hour)
		if ids := recallIDs(t, eng, later); contains(ids, m.ID) {
			t.Fatal("memory recalled as of after its expiry")
		}
		clk.Add(time.Hour)
		if ids := recallIDs(t, eng, q); contains(ids, m.ID) {
			t.Fatal("expired memory recalled")
		}
	})
}

// Two engines over one database: A has the partition cached, B changes it.
// A's index is stale, but the store's read gate keeps what left from
// coming back through A.
func TestStaleIndexNeverLeaks(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a := newRecallEngine(t, db, nil)
	b := newRecallEngine(t, db, nil)
	ms := rememberAll(t, a, "t", "alice", dogFacts...)
	q := memgate.RecallRequest{Scope: scope("t", "alice"), Query: "rabies vaccination dog", K: 10}
	if ids := recallIDs(t, a, q); !contains(ids, ms[1].ID) {
		t.Fatalf("control: %v", ids)
	}
	if _, err := b.Revoke(ctx, scope("t", "alice"), ms[1].ID, "wrong"); err != nil {
		t.Fatal(err)
	}
	if ids := recallIDs(t, a, q); contains(ids, ms[1].ID) {
		t.Fatal("revoked on B, recalled on A")
	}
	if _, err := b.Forget(ctx, memgate.Scope{Tenant: "t", Principal: "alice"}); err != nil {
		t.Fatal(err)
	}
	if ids := recallIDs(t, a, q); len(ids) != 0 {
		t.Fatalf("forgotten on B, recalled on A: %v", ids)
	}
}

func TestRecallScopeAndFilters(t *testing.T) {
	t.Parallel()
	eng := newRecallEngine(t, nil, nil)
	mk := func(principal, agent, kind, source, sens string, md map[string]any) *memgate.Memory {
		m, err := eng.Remember(ctx, memgate.RememberRequest{Memory: memgate.Memory{
			Tenant: "t", Principal: principal, Agent: agent, Kind: memgate.Kind(kind), Source: memgate.Source(source),
			Sensitivity: memgate.Sensitivity(sens), Metadata: md, Content: "Biscuit the dog needs his rabies vaccination renewed.",
		}})
		if err != nil {
			t.Fatal(err)
		}
		return m.Memory
	}
	wide := mk("alice", "", "fact", "user", "", map[string]any{"topic": "pets"})
	agentA := mk("alice", "a", "task", "tool", "", nil)
	agentB := mk("alice", "b", "fact", "user", "", nil)
	restricted := mk("alice", "", "fact", "user", "restricted", nil)
	bobs := mk("bob", "", "fact", "user", "", nil)
	q := func(change func(r *memgate.RecallRequest)) []string {
		off := 0.0
		r := memgate.RecallRequest{Scope: scope("t", "alice"), Query: "rabies vaccination", K: 10, MinScore: &off}
		change(&r)
		ids := recallIDs(t, eng, r)
		return ids
	}
	same := func(got []string, want ...*memgate.Memory) bool {
		if len(got) != len(want) {
			return false
		}
		for _, m := range want {
			if !contains(got, m.ID) {
				return false
			}
		}
		return true
	}
	if got := q(func(r *memgate.RecallRequest) {}); !same(got, wide, agentA, agentB) {
		t.Errorf("alice, no narrowing: %v", got)
	}
	if got := q(func(r *memgate.RecallRequest) { r.Scope.Agent = "a" }); !same(got, wide, agentA) {
		t.Errorf("alice as agent a: %v", got)
	}
	if got := q(func(r *memgate.RecallRequest) { r.IncludeRestricted = true }); !same(got, wide, agentA, agentB, restricted) {
		t.Errorf("include restricted: %v", got)
	}
	if got := q(func(r *memgate.RecallRequest) { r.Kinds = []memgate.Kind{"task"} }); !same(got, agentA) {
		t.Errorf("kind task: %v", got)
	}
	if got := q(func(r *memgate.RecallRequest) { r.Sources = []memgate.Source{"tool"} }); !same(got, agentA) {
		t.Errorf("source tool: %v", got)
	}
	if got := q(func(r *memgate.RecallRequest) { r.Metadata = map[string]any{"topic": "pets"} }); !same(got, wide) {
		t.Errorf("metadata topic: %v", got)
	}
	if got := q(func(r *memgate.RecallRequest) { r.Scope = scope("t", "bob") }); !same(got, bobs) {
		t.Errorf("bob: %v", got)
	}
	if got := q(func(r *memgate.RecallRequest) { r.Scope = scope("u", "alice") }); len(got) != 0 {
		t.Errorf("other tenant: %v", got)
	}
	if got := q(func(r *memgate.RecallRequest) { r.K = 1 }); len(got) != 1 {
		t.Errorf("k=1: %v", got)
	}
	n := len("Biscuit the dog needs his rabies vaccination renewed.")
	if got := q(func(r *memgate.RecallRequest) { r.BudgetChars = 2*n + 1 }); len(got) != 2 {
		t.Errorf("budget for two: %v", got)
	}
}

func TestRecallValidates(t *testing.T) {
	t.Parallel()
	eng := newRecallEngine(t, nil, nil)
	bad := -0.5
	over := 1.5
	tests := map[string]memgate.RecallRequest{
		"query":        {Scope: scope("t", "p"), Query: "  \n"},
		"k":            {Scope: scope("t", "p"), Query: "x", K: 101},
		"min_score":    {Scope: scope("t", "p"), Query: "x", MinScore: &bad},
		"principal":    {Scope: memgate.Scope{Tenant: "t"}, Query: "x"},
		"kinds":        {Scope: scope("t", "p"), Query: "x", Kinds: []memgate.Kind{"nope"}},
		"sources":      {Scope: scope("t", "p"), Query: "x", Sources: []memgate.Source{"root"}},
		"budget_chars": {Scope: scope("t", "p"), Query: "x", BudgetChars: -1},
	}
	tests["min_score "] = memgate.RecallRequest{Scope: scope("t", "p"), Query: "x", MinScore: &over}
	for field, req := range tests {
		_, err := eng.Recall(ctx, req)
		if memgate.ErrorField(err) != strings.TrimSpace(field) {
			t.Errorf("%s: %v", field, err)
		}
	}
	// Every list is bounded, naming its field: 30,000 kinds once grew a
	// server to 1.3 GB (the statement cache), 32,767 gave a 500.
	many := make([]memgate.Kind, 30_000)
	for i := range many {
		many[i] = memgate.KindFact
	}
	manySources := make([]memgate.Source, engine.MaxFilterValues+1)
	for i := range manySources {
		manySources[i] = memgate.SourceUser
	}
	for _, req := range []memgate.RecallRequest{
		{Scope: scope("t", "p"), Query: "x", Kinds: many},
		{Scope: scope("t", "p"), Query: "x", Sources: manySources},
	} {
		_, err := eng.Recall(ctx, req)
		if f := memgate.ErrorField(err); memgate.ErrorCode(err) != memgate.ETOOLARGE || (f != "kinds" && f != "sources") {
			t.Errorf("a recall with %d kinds and %d sources: %v", len(req.Kinds), len(req.Sources), err)
		}
	}
	if _, err := eng.List(ctx, scope("t", "p"), memgate.ListRequest{Kinds: many}); memgate.ErrorCode(err) != memgate.ETOOLARGE || memgate.ErrorField(err) != "kind" {
		t.Errorf("a list with 30,000 kinds: %v", err)
	}
	// Control: the most values a list may hold pass.
	if _, err := eng.Recall(ctx, memgate.RecallRequest{Scope: scope("t", "p"), Query: "x", Kinds: many[:engine.MaxFilterValues], Sources: manySources[:engine.MaxFilterValues]}); err != nil {
		t.Errorf("a recall with %d kinds and sources: %v", engine.MaxFilterValues, err)
	}
	if _, err := eng.List(ctx, scope("t", "p"), memgate.ListRequest{Kinds: many[:engine.MaxFilterValues]}); err != nil {
		t.Errorf("a list with %d kinds: %v", engine.MaxFilterValues, err)
	}
	if _, err := eng.Recall(ctx, memgate.RecallRequest{Scope: scope("t", "p"), Query: strings.Repeat("x", engine.MaxQueryBytes+1)}); memgate.ErrorCode(err) != memgate.ETOOLARGE {
		t.Errorf("huge query: %v", err)
	}
	// Control: a valid request on an empty partition answers with nothing.
	res, err := eng.Recall(ctx, memgate.RecallRequest{Scope: scope("t", "p"), Query: "x"})
	if err != nil || len(res.Results) != 0 {
		t.Fatalf("empty partition: %+v %v", res, err)
	}
}

func TestRecallLogsNoQueryText(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const secret = "Quetzalcoatl-omelette-4412"
	m := h.remember(t, "t", "p", "the recipe calls for "+secret)
	if _, err := h.eng.Recall(ctx, memgate.RecallRequest{Scope: scope("t", "p"), Query: "recipe " + secret, Explain: true, Render: true}); err != nil {
		t.Fatal(err)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, `"recall_id"`) || !strings.Contains(logs, m.ID) || !strings.Contains(logs, `"returned":1`) {
		t.Fatalf("control: recall not logged:\n%s", logs)
	}
	if strings.Contains(logs, secret) {
		t.Fatalf("logs carry query or content:\n%s", logs)
	}
}
