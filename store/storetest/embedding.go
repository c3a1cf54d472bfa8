package storetest

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var setEmbeddingTests = []test{
	{"WritesTheEmbeddingOnly", testSetEmbeddingOnly},
	{"AnyStatusAnyPrincipal", testSetEmbeddingAnyStatus},
	{"ChangedContentWins", testSetEmbeddingChangedContent},
	{"ForeignAndMissing", testSetEmbeddingForeign},
	{"RefusesUnusable", testSetEmbeddingRefuses},
	{"RaceWithUpdate", testSetEmbeddingRace},
}

func embeddingOf(model string, v ...float32) *memgate.Embedding {
	return &memgate.Embedding{Provider: "ollama", Model: model, Dim: len(v), Vector: v}
}

func mustSetEmbedding(t *testing.T, s store.Store, m *memgate.Memory, e *memgate.Embedding) {
	t.Helper()
	ok, err := s.SetEmbedding(t.Context(), m.Tenant, m.ID, m.ContentSHA256, e)
	if err != nil || !ok {
		t.Fatalf("SetEmbedding %s: %v, %v; want it written", m.ID, ok, err)
	}
}

// testSetEmbeddingOnly: the four embedding fields change, bit for bit, and
// nothing else (version and updated_at included); reads and the partition
// load see the new vector.
func testSetEmbeddingOnly(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	m := fullMemory(t, alice, id(1))
	m.Status, m.StatusReason = memgate.StatusActive, ""
	m.Version, m.UpdatedAt = 3, t1
	other := fullMemory(t, alice, id(2))
	other.Status, other.StatusReason = memgate.StatusActive, ""
	mustInsert(t, s, m, other)
	before := mustGet(t, s, alice, m.ID)

	e := embeddingOf("nomic-embed-text", 0.25, -1e-8, float32(math.Pi), 7)
	mustSetEmbedding(t, s, m, e)
	want := before.Clone()
	want.Embedding = e
	requireUnchanged(t, s, alice, want)
	requireUnchanged(t, s, alice, other)

	// What the engine loads to build the index carries the new vector.
	ms, err := s.LoadPartition(t.Context(), alice.Tenant, alice.Principal)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, got := range ms {
		if got.ID == m.ID {
			found = true
			requireEqualMemory(t, "LoadPartition", want, got)
		}
	}
	if !found {
		t.Fatalf("LoadPartition lost %s", m.ID)
	}
	// A memory without an embedding gets one.
	bare := newMemory(alice, id(3), "no vector yet")
	mustInsert(t, s, bare)
	mustSetEmbedding(t, s, bare, embeddingOf("m", 1, 0))
	if got := mustGet(t, s, alice, bare.ID); got.Embedding == nil || got.Embedding.Model != "m" || got.Version != 1 {
		t.Fatalf("bare memory after SetEmbedding: %+v", got.Embedding)
	}
}

// testSetEmbeddingAnyStatus: pending, revoked, superseded and expired
// memories, of any principal of the tenant, in agents and conversations,
// take a new embedding too (the content is what it is, whatever the status).
func testSetEmbeddingAnyStatus(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	var ms []*memgate.Memory
	for i, st := range []memgate.Status{memgate.StatusActive, memgate.StatusPending, memgate.StatusRevoked, memgate.StatusSuperseded} {
		sc := alice
		if i%2 == 1 {
			sc = bob
		}
		sc.Agent, sc.Conversation = "agent-x", fmt.Sprintf("conv-%d", i)
		m := newMemory(sc, id(i+1), fmt.Sprintf("memory in status %s", st))
		m.Status = st
		m.ExpiresAt = ptr(t1) // expired at now
		ms = append(ms, m)
	}
	mustInsert(t, s, ms...)
	for _, m := range ms {
		mustSetEmbedding(t, s, m, embeddingOf("model-b", 0, 1))
		got := mustGet(t, s, memgate.Scope{Tenant: m.Tenant, Principal: m.Principal}, m.ID)
		if got.Embedding == nil || got.Embedding.Model != "model-b" || got.Status != m.Status || got.Version != m.Version {
			t.Fatalf("%s (%s): embedding %+v, status %s, version %d", m.ID, m.Status, got.Embedding, got.Status, got.Version)
		}
	}
}

// testSetEmbeddingChangedContent: a vector computed from old content is not
// stored once the content has changed; the control with the new hash is.
func testSetEmbeddingChangedContent(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	m := newMemory(alice, id(1), "old content")
	m.Embedding = embeddingOf("model-a", 1, 0)
	mustInsert(t, s, m)
	oldHash := m.ContentSHA256

	u := m.Clone()
	u.Content = "new content"
	u.ContentSHA256 = memgate.ContentHash(u.Content)
	u.Embedding = embeddingOf("model-a", 0, 1)
	updated, err := s.Update(t.Context(), alice, u, 1)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := s.SetEmbedding(t.Context(), alice.Tenant, m.ID, oldHash, embeddingOf("model-b", 1, 1))
	if err != nil || ok {
		t.Fatalf("SetEmbedding with the old content's hash: %v, %v; want false, nil", ok, err)
	}
	requireUnchanged(t, s, alice, updated)

	// Control: the current hash writes.
	mustSetEmbedding(t, s, updated, embeddingOf("model-b", 1, 1))
	if got := mustGet(t, s, alice, m.ID); got.Embedding.Model != "model-b" || got.Version != updated.Version {
		t.Fatalf("control: %+v version %d", got.Embedding, got.Version)
	}
}

// testSetEmbeddingForeign: an id of another tenant, or none, reports false
// and touches nothing; the owner's tenant writes.
func testSetEmbeddingForeign(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	theirs := newMemory(aliceGlobex, id(1), "globex memory")
	theirs.Embedding = embeddingOf("model-a", 1, 0)
	mustInsert(t, s, theirs)
	for _, c := range []struct{ name, tenant, id string }{
		{"OtherTenant", alice.Tenant, theirs.ID},
		{"Missing", aliceGlobex.Tenant, missingID},
	} {
		ok, err := s.SetEmbedding(t.Context(), c.tenant, c.id, theirs.ContentSHA256, embeddingOf("model-b", 0, 1))
		if err != nil || ok {
			t.Fatalf("%s: %v, %v; want false, nil", c.name, ok, err)
		}
	}
	requireUnchanged(t, s, aliceGlobex, theirs)
	mustSetEmbedding(t, s, theirs, embeddingOf("model-b", 0, 1))
}

// testSetEmbeddingRefuses: an unusable embedding or tenant is
// invalid_argument and writes nothing.
func testSetEmbeddingRefuses(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	m := newMemory(alice, id(1), "content")
	m.Embedding = embeddingOf("model-a", 1, 0)
	mustInsert(t, s, m)
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		name   string
		tenant string
		e      *memgate.Embedding
	}{
		{"Nil", alice.Tenant, nil},
		{"NaN", alice.Tenant, embeddingOf("b", nan, 1)},
		{"Inf", alice.Tenant, embeddingOf("b", inf, 1)},
		{"Zero", alice.Tenant, embeddingOf("b", 0, 0)},
		{"Empty", alice.Tenant, embeddingOf("b")},
		{"DimMismatch", alice.Tenant, &memgate.Embedding{Provider: "p", Model: "b", Dim: 3, Vector: []float32{1, 0}}},
		{"NoProvider", alice.Tenant, &memgate.Embedding{Model: "b", Dim: 2, Vector: []float32{1, 0}}},
		{"NoModel", alice.Tenant, &memgate.Embedding{Provider: "p", Dim: 2, Vector: []float32{1, 0}}},
		{"NoTenant", "", embeddingOf("b", 1, 0)},
	} {
		ok, err := s.SetEmbedding(t.Context(), c.tenant, m.ID, m.ContentSHA256, c.e)
		if ok {
			t.Fatalf("%s: written", c.name)
		}
		requireCode(t, c.name, err, memgate.EINVALID, "")
	}
	requireUnchanged(t, s, alice, m)
}

// testSetEmbeddingRace: a content update racing a re-embed of the old
// content never leaves the new content with the old content's vector.
func testSetEmbeddingRace(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	const n = 20
	ms := make([]*memgate.Memory, n)
	for i := range ms {
		ms[i] = newMemory(alice, id(i+1), fmt.Sprintf("old content %d", i))
	}
	mustInsert(t, s, ms...)
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(2)
		go func() {
			defer wg.Done()
			u := m.Clone()
			u.Content = "new " + m.Content
			u.ContentSHA256 = memgate.ContentHash(u.Content)
			u.Embedding = embeddingOf("of-new-content", 0, 1)
			if _, err := s.Update(t.Context(), alice, u, 1); err != nil {
				t.Errorf("Update %s: %v", m.ID, err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := s.SetEmbedding(t.Context(), m.Tenant, m.ID, m.ContentSHA256, embeddingOf("of-old-content", 1, 0)); err != nil {
				t.Errorf("SetEmbedding %s: %v", m.ID, err)
			}
		}()
	}
	wg.Wait()
	for _, m := range ms {
		got := mustGet(t, s, alice, m.ID)
		if got.Embedding == nil || got.Embedding.Model != "of-new-content" {
			t.Fatalf("%s: content %q stored with the vector %+v", m.ID, got.Content, got.Embedding)
		}
	}
}
