package storetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/store"
)

var recallTests = []test{
	{"LoadPartitionOnlyActiveOfThatPrincipal", testLoadPartition},
	{"LoadIndexIsLoadPartitionCompact", testLoadIndex},
	{"LoadIndexDecodesIntoLentVectors", testLoadIndexLent},
	{"FetchAppliesScope", testFetchScope},
	{"FetchAppliesReadGate", testFetchGate},
	{"FetchMetadataEquality", testFetchMetadata},
	{"FetchRefusesTooManyIDs", testFetchTooMany},
	{"FetchReturnsEachMemoryOnce", testFetchEachOnce},
}

// gate is a read gate judged at now, as of now.
func gate() store.ReadGate { return store.ReadGate{Now: now, AsOf: now} }

func fetchIDs(t *testing.T, s store.Store, sc memgate.Scope, ids []string, g store.ReadGate) []string {
	t.Helper()
	ms, err := s.Fetch(t.Context(), sc, ids, g)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	got := idsOf(ms)
	slices.Sort(got)
	return got
}

func testLoadPartition(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	active := newMemory(alice, id(1), "active")
	active.Embedding = &memgate.Embedding{Provider: "p", Model: "m", Dim: 2, Vector: []float32{0.6, 0.8}}
	agentOnly := newMemory(memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "a1", Conversation: "c1"}, id(2), "agent one")
	expired := newMemory(alice, id(3), "expired but active")
	expired.ExpiresAt = ptr(t0.Add(time.Minute))
	pending := newMemory(alice, id(4), "pending")
	pending.Status = memgate.StatusPending
	revoked := newMemory(alice, id(5), "revoked")
	revoked.Status = memgate.StatusRevoked
	superseded := newMemory(alice, id(6), "superseded")
	superseded.Status = memgate.StatusSuperseded
	bobs := newMemory(bob, id(7), "bob's")
	globex := newMemory(aliceGlobex, id(8), "alice in globex")
	mustInsert(t, s, active, agentOnly, expired, pending, revoked, superseded, bobs, globex)

	ms, err := s.LoadPartition(t.Context(), "acme", "alice")
	if err != nil {
		t.Fatal(err)
	}
	got := idsOf(ms)
	slices.Sort(got)
	requireIDs(t, "LoadPartition(acme, alice)", got, []string{id(1), id(2), id(3)})
	for _, m := range ms {
		if m.ID == id(1) {
			requireEqualMemory(t, "loaded memory with embedding", active, m)
		}
	}
	// Control: bob's partition holds bob's memory, and only it.
	ms, err = s.LoadPartition(t.Context(), "acme", "bob")
	if err != nil {
		t.Fatal(err)
	}
	requireIDs(t, "LoadPartition(acme, bob)", idsOf(ms), []string{id(7)})
	if _, err := s.LoadPartition(t.Context(), "", "alice"); memgate.ErrorCode(err) != memgate.EINVALID {
		t.Fatalf("LoadPartition without tenant: %v, want invalid_argument", err)
	}
}

func testFetchScope(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a1 := memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "a1"}
	wide := newMemory(alice, id(1), "wide")
	mine := newMemory(a1, id(2), "agent a1")
	other := newMemory(memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "a2"}, id(3), "agent a2")
	conv := newMemory(memgate.Scope{Tenant: "acme", Principal: "alice", Conversation: "c9"}, id(4), "conversation c9")
	bobs := newMemory(bob, id(5), "bob's")
	globex := newMemory(aliceGlobex, id(6), "globex alice")
	mustInsert(t, s, wide, mine, other, conv, bobs, globex)
	all := []string{id(1), id(2), id(3), id(4), id(5), id(6), missingID}

	requireIDs(t, "alice, no narrowing", fetchIDs(t, s, alice, all, gate()), []string{id(1), id(2), id(3), id(4)})
	requireIDs(t, "alice as agent a1", fetchIDs(t, s, a1, all, gate()), []string{id(1), id(2), id(4)})
	requireIDs(t, "alice in conversation c1", fetchIDs(t, s, memgate.Scope{Tenant: "acme", Principal: "alice", Conversation: "c1"}, all, gate()), []string{id(1), id(2), id(3)})
	requireIDs(t, "bob", fetchIDs(t, s, bob, all, gate()), []string{id(5)})
	requireIDs(t, "alice in globex", fetchIDs(t, s, aliceGlobex, all, gate()), []string{id(6)})
	if _, err := s.Fetch(t.Context(), memgate.Scope{Tenant: "acme"}, all, gate()); memgate.ErrorCode(err) != memgate.EINVALID {
		t.Fatalf("Fetch without principal: %v, want invalid_argument", err)
	}
}

func testFetchGate(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	mk := func(i int, change func(m *memgate.Memory)) *memgate.Memory {
		m := newMemory(alice, id(i), "memory")
		change(m)
		return m
	}
	ms := []*memgate.Memory{
		mk(1, func(m *memgate.Memory) {}), // the control: passes every default gate
		mk(2, func(m *memgate.Memory) { m.Status = memgate.StatusPending }),
		mk(3, func(m *memgate.Memory) { m.Status = memgate.StatusRevoked }),
		mk(4, func(m *memgate.Memory) { m.Status = memgate.StatusSuperseded }),
		mk(5, func(m *memgate.Memory) { m.ExpiresAt = ptr(now) }),                   // expires exactly now: gone
		mk(6, func(m *memgate.Memory) { m.ExpiresAt = ptr(now.Add(time.Second)) }),  // still valid now
		mk(7, func(m *memgate.Memory) { m.ValidFrom = ptr(now.Add(time.Hour)) }),    // not yet valid
		mk(8, func(m *memgate.Memory) { m.ValidUntil = ptr(now) }),                  // no longer valid
		mk(9, func(m *memgate.Memory) { m.ValidUntil = ptr(now.Add(time.Second)) }), // still valid
		mk(10, func(m *memgate.Memory) { m.Sensitivity = memgate.SensitivityRestricted }),
		mk(11, func(m *memgate.Memory) { m.Kind = memgate.KindTask }),
		mk(12, func(m *memgate.Memory) { m.Source = memgate.SourceTool }),
	}
	mustInsert(t, s, ms...)
	all := idsOf(ms)

	got := fetchIDs(t, s, alice, all, gate())
	requireIDs(t, "default gate", got, sorted(id(1), id(6), id(9), id(11), id(12)))

	g := gate()
	g.IncludeRestricted = true
	requireIDs(t, "include restricted", fetchIDs(t, s, alice, all, g), sorted(id(1), id(6), id(9), id(10), id(11), id(12)))

	g = gate()
	g.Kinds = []memgate.Kind{memgate.KindTask}
	requireIDs(t, "kind task", fetchIDs(t, s, alice, all, g), []string{id(11)})

	g = gate()
	g.Sources = []memgate.Source{memgate.SourceTool, memgate.SourceAssistant}
	requireIDs(t, "source tool", fetchIDs(t, s, alice, all, g), []string{id(12)})

	// as_of in the future: the memory not yet valid now becomes valid, the
	// ones expiring or ending soon are gone.
	g = gate()
	g.AsOf = now.Add(2 * time.Hour)
	requireIDs(t, "as of two hours later", fetchIDs(t, s, alice, all, g), sorted(id(1), id(7), id(11), id(12)))

	// as_of in the past never resurrects what has expired by now.
	g = gate()
	g.AsOf = t0
	got = fetchIDs(t, s, alice, all, g)
	if slices.Contains(got, id(5)) {
		t.Fatalf("as_of before expiry returned a memory expired now: %v", got)
	}
	if _, err := s.Fetch(t.Context(), alice, all, store.ReadGate{}); memgate.ErrorCode(err) != memgate.EINVALID {
		t.Fatalf("Fetch without now: %v, want invalid_argument", err)
	}
}

func sorted(ids ...string) []string {
	slices.Sort(ids)
	return ids
}

func testFetchMetadata(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a := newMemory(alice, id(1), "a")
	a.Metadata = metadata(t, `{"speaker":"Caroline","session":"1","n":3,"big":12345678901234567,"ok":true}`)
	b := newMemory(alice, id(2), "b")
	b.Metadata = metadata(t, `{"speaker":"Melanie","session":1,"n":3.5,"ok":false}`)
	c := newMemory(alice, id(3), "c") // no metadata
	mustInsert(t, s, a, b, c)
	all := []string{id(1), id(2), id(3)}
	tests := []struct {
		name string
		md   map[string]any
		want []string
	}{
		{"no filter", nil, all},
		{"string", map[string]any{"speaker": "Caroline"}, []string{id(1)}},
		{"string is not number", map[string]any{"session": "1"}, []string{id(1)}},
		{"number is not string", map[string]any{"session": json.Number("1")}, []string{id(2)}},
		{"integer", map[string]any{"n": json.Number("3")}, []string{id(1)}},
		{"real", map[string]any{"n": 3.5}, []string{id(2)}},
		{"big integer exact", map[string]any{"big": json.Number("12345678901234567")}, []string{id(1)}},
		{"big integer off by one", map[string]any{"big": json.Number("12345678901234568")}, nil},
		{"bool true", map[string]any{"ok": true}, []string{id(1)}},
		{"bool false", map[string]any{"ok": false}, []string{id(2)}},
		{"two keys", map[string]any{"speaker": "Melanie", "ok": false}, []string{id(2)}},
		{"two keys, one fails", map[string]any{"speaker": "Melanie", "ok": true}, nil},
		{"absent key", map[string]any{"mood": "happy"}, nil},
		{"quote in key", map[string]any{`speaker"]`: "Caroline"}, nil},
	}
	for _, tt := range tests {
		g := gate()
		g.Metadata = tt.md
		requireIDs(t, tt.name, fetchIDs(t, s, alice, all, g), tt.want)
	}
}

func testFetchTooMany(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, newMemory(alice, id(1), "x"))
	ids := make([]string, store.MaxFetch+1)
	for i := range ids {
		ids[i] = id(1)
	}
	if _, err := s.Fetch(t.Context(), alice, ids, gate()); memgate.ErrorCode(err) != memgate.EINVALID {
		t.Fatalf("Fetch of %d ids: %v, want invalid_argument", len(ids), err)
	}
	requireIDs(t, "control: max ids", fetchIDs(t, s, alice, ids[:store.MaxFetch], gate()), []string{id(1)})
}

// testFetchEachOnce fetches lists of every length around the sizes a store
// may pad an id list to (sqlstore.In repeats the last id up to 8, 16, 32
// ids...), the last id one that passes or one that does not, and ids
// given twice: each memory that passes comes back once, with its own
// content, and none that does not.
func testFetchEachOnce(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	var ms []*memgate.Memory
	for i := 1; i <= 45; i++ {
		m := newMemory(alice, id(i), fmt.Sprintf("memory %d", i))
		if i%5 == 0 {
			m.Status = memgate.StatusRevoked // refused by the read gate
		}
		ms = append(ms, m)
	}
	mustInsert(t, s, append(ms, newMemory(bob, id(46), "bob's"))...)
	for _, n := range []int{1, 2, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40} {
		for _, last := range []string{"passes", "revoked", "missing", "bob's", "twice"} {
			var ids, want []string
			for i := n; i >= 1; i-- { // not in the order they were stored
				ids = append(ids, id(i))
				if i%5 != 0 {
					want = append(want, id(i))
				}
			}
			switch last {
			case "passes":
				next := n + 1
				if next%5 == 0 {
					next++
				}
				ids = append(ids, id(next))
				want = append(want, id(next))
			case "revoked":
				ids = append(ids, id(5))
			case "missing":
				ids = append(ids, missingID)
			case "bob's":
				ids = append(ids, id(46))
			case "twice":
				ids = append(ids, ids...)
			}
			got, err := s.Fetch(t.Context(), alice, ids, gate())
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			for _, m := range got {
				if m.Content != "memory "+strings.TrimLeft(strings.TrimPrefix(m.ID, "m-"), "0") {
					t.Fatalf("%d ids, then one that %s: %s holds %q", n, last, m.ID, m.Content)
				}
			}
			gotIDs := idsOf(got)
			slices.Sort(gotIDs)
			slices.Sort(want)
			requireIDs(t, fmt.Sprintf("%d ids, then one that %s", n, last), gotIDs, want)
		}
	}
}

// IndexRowOf is what LoadIndex must give for a memory LoadPartition
// returns, with model's vectors: drivers' tests compare the two.
func IndexRowOf(m *memgate.Memory, model store.EmbeddingModel) store.IndexRow {
	r := store.IndexRow{
		ID: m.ID, Agent: m.Agent, Conversation: m.Conversation,
		Kind: m.Kind, Source: m.Source, Sensitivity: m.Sensitivity,
		CreatedAt: micros(&m.CreatedAt), ExpiresAt: micros(m.ExpiresAt),
		ValidFrom: micros(m.ValidFrom), ValidUntil: micros(m.ValidUntil),
		Terms: analysis.Terms(m.Content),
	}
	if e := m.Embedding; e != nil && model.Dim > 0 && e.Provider == model.Provider && e.Model == model.Model && e.Dim == model.Dim && len(e.Vector) == model.Dim {
		r.Vector = e.Vector
	}
	return r
}

func micros(t *time.Time) int64 {
	if t == nil || t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// LoadIndexRows returns a copy of every row LoadIndex gives, in order.
func LoadIndexRows(t *testing.T, s store.Store, tenant, principal string, model store.EmbeddingModel) []store.IndexRow {
	t.Helper()
	var out []store.IndexRow
	err := s.LoadIndex(t.Context(), tenant, principal, model, func(r *store.IndexRow) error {
		c := *r
		c.Vector = slices.Clone(r.Vector)
		c.Terms = make([]string, len(r.Terms))
		for i, term := range r.Terms {
			c.Terms[i] = string([]byte(term)) // the row's memory is reused
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatalf("LoadIndex(%s, %s): %v", tenant, principal, err)
	}
	return out
}

// RequireIndexRows fails unless got are the rows of ms, in order: every
// field equal, the terms the same with the same counts.
func RequireIndexRows(t *testing.T, what string, got []store.IndexRow, ms []*memgate.Memory, model store.EmbeddingModel) {
	t.Helper()
	if len(got) != len(ms) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(ms))
	}
	for i, m := range ms {
		want := IndexRowOf(m, model)
		g := got[i]
		gt, wt := slices.Sorted(slices.Values(g.Terms)), slices.Sorted(slices.Values(want.Terms))
		g.Terms, want.Terms = nil, nil
		gv, wv := g.Vector, want.Vector
		g.Vector, want.Vector = nil, nil
		if !reflect.DeepEqual(g, want) || !slices.Equal(gt, wt) || !slices.Equal(gv, wv) || (gv == nil) != (wv == nil) {
			t.Fatalf("%s: row %d = %+v terms %q vector %v; want %+v terms %q vector %v", what, i, g, gt, gv, want, wt, wv)
		}
	}
}

func testLoadIndex(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	model := store.EmbeddingModel{Provider: "p", Model: "m", Dim: 2}
	active := newMemory(alice, id(1), "Alice likes the garden; the garden likes rain.")
	active.Embedding = &memgate.Embedding{Provider: "p", Model: "m", Dim: 2, Vector: []float32{0.6, 0.8}}
	other := newMemory(memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "a1", Conversation: "c1"}, id(2), "agent one, another model")
	other.Kind = memgate.KindMessage
	other.Embedding = &memgate.Embedding{Provider: "p", Model: "other", Dim: 2, Vector: []float32{1, 0}}
	timed := newMemory(alice, id(3), "expired but active")
	timed.ExpiresAt = ptr(t0.Add(time.Minute))
	timed.ValidFrom, timed.ValidUntil = ptr(t0.Add(-time.Hour)), ptr(t0.Add(time.Hour))
	timed.Sensitivity = memgate.SensitivityRestricted
	empty := newMemory(alice, id(4), "the and of") // stop words only: no terms
	pending := newMemory(alice, id(5), "pending")
	pending.Status = memgate.StatusPending
	bobs := newMemory(bob, id(7), "bob's")
	mustInsert(t, s, active, other, timed, empty, pending, bobs)

	ms, err := s.LoadPartition(t.Context(), "acme", "alice")
	if err != nil {
		t.Fatal(err)
	}
	requireIDs(t, "LoadPartition(acme, alice)", idsOf(ms), []string{id(1), id(2), id(3), id(4)})
	got := LoadIndexRows(t, s, "acme", "alice", model)
	RequireIndexRows(t, "LoadIndex(acme, alice)", got, ms, model)
	if got[0].Vector == nil || got[1].Vector != nil {
		t.Fatalf("vectors of the model and of another: %v, %v", got[0].Vector, got[1].Vector)
	}
	if len(got[0].Terms) == 0 {
		t.Fatal("no terms for the first memory")
	}
	// No model: no vectors.
	for _, r := range LoadIndexRows(t, s, "acme", "alice", store.EmbeddingModel{}) {
		if r.Vector != nil {
			t.Fatalf("LoadIndex without a model gave %s a vector", r.ID)
		}
	}
	// An update of the content changes the terms.
	upd := *ms[0]
	upd.Content, upd.ContentSHA256 = "Bees visit the orchard", memgate.ContentHash("Bees visit the orchard")
	if _, err := s.Update(t.Context(), alice, &upd, upd.Version); err != nil {
		t.Fatal(err)
	}
	ms, err = s.LoadPartition(t.Context(), "acme", "alice")
	if err != nil {
		t.Fatal(err)
	}
	RequireIndexRows(t, "LoadIndex after an update", LoadIndexRows(t, s, "acme", "alice", model), ms, model)
	// Control: bob's partition holds bob's memory, and only it.
	bm, err := s.LoadPartition(t.Context(), "acme", "bob")
	if err != nil {
		t.Fatal(err)
	}
	RequireIndexRows(t, "LoadIndex(acme, bob)", LoadIndexRows(t, s, "acme", "bob", model), bm, model)
	if err := s.LoadIndex(t.Context(), "", "alice", model, func(*store.IndexRow) error { return nil }); memgate.ErrorCode(err) != memgate.EINVALID {
		t.Fatalf("LoadIndex without tenant: %v, want invalid_argument", err)
	}
}

// testLoadIndexLent lends LoadIndex a buffer for each next row's vector, as
// the engine does to read vectors in place: the rows are the same as
// without, whatever the store does with the buffer, and it writes nothing
// past a buffer's capacity nor into one lent before a row without a vector.
func testLoadIndexLent(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	model := store.EmbeddingModel{Provider: "p", Model: "m", Dim: 3}
	var ms []*memgate.Memory
	for i := range 8 {
		m := newMemory(alice, id(i+1), fmt.Sprintf("memory %d of the garden", i))
		switch i {
		case 2:
			// No vector.
		case 5:
			m.Embedding = &memgate.Embedding{Provider: "p", Model: "other", Dim: 3, Vector: []float32{1, 0, 0}}
		default:
			m.Embedding = &memgate.Embedding{Provider: "p", Model: "m", Dim: 3, Vector: []float32{float32(i), 1, 0.5}}
		}
		ms = append(ms, m)
	}
	mustInsert(t, s, ms...)
	want, err := s.LoadPartition(t.Context(), "acme", "alice")
	if err != nil {
		t.Fatal(err)
	}
	const guard = -7
	type lent struct {
		buf  []float32 // the buffer and its guard cell past the lent capacity
		next int       // the row it was lent for
	}
	var (
		got   []store.IndexRow
		lends []lent
	)
	err = s.LoadIndex(t.Context(), "acme", "alice", model, func(r *store.IndexRow) error {
		c := *r
		c.Vector = slices.Clone(r.Vector)
		c.Terms = make([]string, len(r.Terms))
		for i, term := range r.Terms {
			c.Terms[i] = string([]byte(term))
		}
		got = append(got, c)
		// Lend a buffer of the model's dimension (one row short of it
		// every third row), with a guard cell after its capacity.
		n := model.Dim
		if len(got)%3 == 0 {
			n--
		}
		buf := make([]float32, n+1)
		for i := range buf {
			buf[i] = guard
		}
		lends = append(lends, lent{buf, len(got)})
		r.Vector = buf[:0:n]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	RequireIndexRows(t, "LoadIndex with lent vectors", got, want, model)
	for _, l := range lends {
		if l.buf[len(l.buf)-1] != guard {
			t.Fatalf("the buffer lent after row %d was written past its capacity: %v", l.next, l.buf)
		}
		if l.next < len(got) && got[l.next].Vector == nil && !slices.Equal(l.buf, slices.Repeat([]float32{guard}, len(l.buf))) {
			t.Fatalf("the buffer lent before row %d, which has no vector, was written: %v", l.next, l.buf)
		}
		if l.next < len(got) && got[l.next].Vector != nil && l.buf[0] != guard && !slices.Equal(l.buf[:len(l.buf)-1], got[l.next].Vector) {
			t.Fatalf("the buffer lent before row %d holds %v, not its vector %v", l.next, l.buf, got[l.next].Vector)
		}
	}
}
