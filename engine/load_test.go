package engine

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/index"
	"github.com/memgate/memgate/postgres"
	"github.com/memgate/memgate/postgres/pgtest"
	"github.com/memgate/memgate/sqlite"
	"github.com/memgate/memgate/store"
)

// TestLoadIndexBuildsTheSamePartition: a partition loaded from the compact
// columns (load, store.Store.LoadIndex) answers every search exactly as one
// built from the full memories (LoadPartition, entry) does: the same
// candidates, scores, ranks, neighbours and statistics, on both backends.
func TestLoadIndexBuildsTheSamePartition(t *testing.T) {
	t.Parallel()
	for _, b := range []struct {
		name string
		open func(t *testing.T) store.Store
	}{
		{"SQLite", func(t *testing.T) store.Store {
			db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}},
		{"PostgreSQL", func(t *testing.T) store.Store {
			db, err := postgres.Open(t.Context(), postgres.Config{URL: pgtest.URL(t), Schema: pgtest.NewSchema(t), MaxConns: 4})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testSamePartition(t, b.open(t))
		})
	}
}

func testSamePartition(t *testing.T, db store.Store) {
	ctx := t.Context()
	eng, err := New(Config{Store: db, Embedder: builtin.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	sc := memgate.Scope{Tenant: "acme", Principal: "alice"}
	var rs []RememberRequest
	for i := range 300 {
		m := memgate.Memory{Tenant: "acme", Principal: "alice", Kind: memgate.KindMessage, Source: memgate.SourceUser,
			Conversation: fmt.Sprintf("c%d", i/40),
			Content:      fmt.Sprintf("Message %d: the garden needs watering on day %d; the %d tomatoes are ripe near bed %d, bed %d.", i, i%31, i%17, i%7, i%7)}
		switch i % 5 {
		case 1:
			m.Kind, m.Conversation = memgate.KindFact, ""
			m.Content = fmt.Sprintf("Alice's sister %d lives in Lisbon and likes café au lait (note %d).", i, i%11)
		case 2:
			m.Agent = fmt.Sprintf("agent-%d", i%3)
		case 3:
			m.Sensitivity = memgate.SensitivityRestricted
		case 4:
			m.ExpiresAt = ptr(time.Now().Add(time.Duration(i) * time.Hour))
		}
		rs = append(rs, RememberRequest{Memory: m})
	}
	if _, err := eng.RememberBatch(ctx, rs); err != nil {
		t.Fatal(err)
	}
	// A recall makes the engine learn its model, as a running one has.
	if _, err := eng.Recall(ctx, RecallRequest{Scope: sc, Query: "tomatoes", K: 5}); err != nil {
		t.Fatal(err)
	}
	if eng.rec.current().dim == 0 {
		t.Fatal("the engine does not know its model after a recall")
	}

	full := index.NewPartition(index.Config{})
	ms, err := db.LoadPartition(ctx, "acme", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 300 {
		t.Fatalf("LoadPartition: %d memories, want 300", len(ms))
	}
	for _, m := range ms {
		if err := full.Upsert(eng.rec.entry(m)); err != nil {
			t.Fatal(err)
		}
	}
	compact := index.NewPartition(index.Config{})
	if _, err := eng.load(ctx, "acme", "alice", addFunc(func(e *index.Entry) error { return compact.Upsert(*e) })); err != nil {
		t.Fatal(err)
	}
	if f, c := full.Stats(), compact.Stats(); f != c || c.Vectors != 300 || c.Groups == 0 {
		t.Fatalf("stats: compact %+v, full %+v", c, f)
	}

	emb := builtin.New()
	now := time.Now()
	searched := 0
	for _, text := range []string{"when are the tomatoes ripe in the garden", "where does Alice's sister live", "café", "bed 3 watering day 12", "nothing matches zebra"} {
		out, err := emb.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []index.Filter{
			{Now: now},
			{Now: now, IncludeRestricted: true, Agent: "agent-1"},
			{Now: now.Add(30 * time.Hour), Kinds: []memgate.Kind{memgate.KindMessage}, Conversation: "c2"},
		} {
			q := index.Query{Vector: out[0].Vector, Terms: analysis.Terms(text), K: 20, Filter: f, Neighbors: index.Neighbors{Prev: 2, Next: 1}}
			want, err := full.Search(q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := compact.Search(q)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("search %q %+v: compact\n%+v\nfull\n%+v", text, f, got, want)
			}
			searched += len(got.Candidates)
		}
	}
	if searched == 0 {
		t.Fatal("no search found anything: the comparison compared nothing")
	}
}

func ptr[T any](v T) *T { return &v }

// addFunc is a loadSink of a test: it adds with itself and ignores the
// size announced.
type addFunc func(*index.Entry) error

func (f addFunc) Expect(int)               {}
func (f addFunc) Add(e *index.Entry) error { return f(e) }

// countingSink is a loadSink that records the sizes announced, and
// whether one came after an entry.
type countingSink struct {
	add      func(*index.Entry) error
	expected []int
	added    int
	late     bool
}

func (s *countingSink) Expect(n int) {
	s.expected = append(s.expected, n)
	s.late = s.late || s.added > 0
}

func (s *countingSink) Add(e *index.Entry) error { s.added++; return s.add(e) }

// TestLoadStopsAtTheIndexError: when the index refuses an entry (a
// partition over its budget), load stops reading and returns that error;
// the control load of the same partition hands over every memory, after
// announcing their number (store.Store.PartitionSize).
func TestLoadStopsAtTheIndexError(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	eng, err := New(Config{Store: db, Embedder: builtin.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var rs []RememberRequest
	for i := range 3*loadBatchRows + 7 {
		rs = append(rs, RememberRequest{Memory: memgate.Memory{Tenant: "acme", Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser,
			Content: fmt.Sprintf("Fact %d about the garden.", i)}})
	}
	for len(rs) > 0 {
		n := min(len(rs), 500)
		if _, err := eng.RememberBatch(ctx, rs[:n]); err != nil {
			t.Fatal(err)
		}
		rs = rs[n:]
	}
	var ids []string
	sink := &countingSink{add: func(e *index.Entry) error { ids = append(ids, e.ID); return nil }}
	if _, err := eng.load(ctx, "acme", "alice", sink); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 3*loadBatchRows+7 {
		t.Fatalf("control load handed over %d entries, want %d", len(ids), 3*loadBatchRows+7)
	}
	if !slices.Equal(sink.expected, []int{len(ids)}) || sink.late {
		t.Fatalf("the load announced %v (after an entry: %v), want [%d] first", sink.expected, sink.late, len(ids))
	}
	stop := fmt.Errorf("over budget: %w", index.ErrTooLarge)
	n := 0
	_, err = eng.load(ctx, "acme", "alice", addFunc(func(e *index.Entry) error {
		if e.ID != ids[n] {
			t.Errorf("entry %d is %s, want %s", n, e.ID, ids[n])
		}
		if n++; n == loadBatchRows+3 {
			return stop
		}
		return nil
	}))
	if err != stop || n != loadBatchRows+3 {
		t.Fatalf("load after the index's error: %v after %d entries, want %v after %d", err, n, stop, loadBatchRows+3)
	}
}

// TestFirstRecallCalibratesWhileLoading: the first recall of a fresh
// engine calibrates the embedder while the partition loads; it must answer
// exactly as a recall of an engine already calibrated and loaded does,
// calibration included.
func TestFirstRecallCalibratesWhileLoading(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	var rs []RememberRequest
	for i := range 400 {
		m := memgate.Memory{Tenant: "acme", Principal: "alice", Kind: memgate.KindMessage, Source: memgate.SourceUser,
			Conversation: fmt.Sprintf("c%d", i/40),
			Content:      fmt.Sprintf("Message %d: the garden needs watering on day %d; the %d tomatoes are ripe near bed %d.", i, i%31, i%17, i%7)}
		if i%10 == 3 {
			m.Kind, m.Conversation = memgate.KindFact, ""
			m.Content = fmt.Sprintf("Alice's sister %d lives in Lisbon and likes café au lait (note %d).", i, i%11)
		}
		rs = append(rs, RememberRequest{Memory: m})
	}
	writer, err := New(Config{Store: db, Embedder: builtin.New()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.RememberBatch(ctx, rs); err != nil {
		t.Fatal(err)
	}
	writer.Close()
	at := time.Now()
	req := RecallRequest{Scope: memgate.Scope{Tenant: "acme", Principal: "alice"}, Query: "where does Alice's sister live", K: 10, Explain: true, AsOf: at}
	recall := func(e *Engine) *RecallResult {
		t.Helper()
		res, err := e.Recall(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Explain == nil || res.Explain.Calibration == nil || res.Explain.Calibration.Probes == 0 {
			t.Fatalf("recall not calibrated: %+v", res.Explain)
		}
		if len(res.Results) == 0 {
			t.Fatal("no results")
		}
		return res
	}
	fresh, err := New(Config{Store: db, Embedder: builtin.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	first := recall(fresh) // calibrates while it loads
	again := recall(fresh) // calibrated and loaded
	if !reflect.DeepEqual(ids(first), ids(again)) || !reflect.DeepEqual(first.Explain.Calibration, again.Explain.Calibration) {
		t.Fatalf("the first recall of a fresh engine: %v %+v; the next: %v %+v", ids(first), first.Explain.Calibration, ids(again), again.Explain.Calibration)
	}
	for i := range first.Results {
		if first.Results[i].Score != again.Results[i].Score {
			t.Fatalf("result %d: score %v first, %v next", i, first.Results[i].Score, again.Results[i].Score)
		}
	}
}

func ids(res *RecallResult) []string {
	var out []string
	for _, r := range res.Results {
		out = append(out, r.Memory.ID)
	}
	return out
}
