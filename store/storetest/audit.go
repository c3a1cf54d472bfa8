package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var auditTests = []test{
	{"RoundTrip", testAuditRoundTrip},
	{"Filters", testAuditFilters},
	{"Paging", testAuditPaging},
	{"StableUnderAppends", testAuditStableUnderAppends},
	{"TenantIsolation", testAuditTenants},
	{"RefusesInvalidEvents", testAuditInvalid},
	{"SurvivesForget", testAuditSurvivesForget},
}

// queryHash is a valid query_sha256 (of the empty string).
const queryHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// event returns a minimal valid event of tenant, numbered n in Counts so
// tests can tell events apart.
func event(tenant string, n int) store.AuditEvent {
	return store.AuditEvent{
		Tenant: tenant, Actor: "key-1", Action: "remember",
		At:     t0.Add(time.Duration(n) * time.Minute),
		Counts: map[string]int64{"n": int64(n)},
	}
}

func mustAppend(t *testing.T, s store.Store, evs ...store.AuditEvent) {
	t.Helper()
	if err := s.AppendAudit(t.Context(), evs); err != nil {
		t.Fatalf("AppendAudit: %v", err)
	}
}

// auditAll walks every page of ListAudit.
func auditAll(t *testing.T, s store.Store, tenant string, f store.AuditFilter) []store.AuditEvent {
	t.Helper()
	var all []store.AuditEvent
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("ListAudit %s: more than 1000 pages; the cursor does not advance", tenant)
		}
		p, err := s.ListAudit(t.Context(), tenant, f)
		if err != nil {
			t.Fatalf("ListAudit %s (%+v): %v", tenant, f, err)
		}
		all = append(all, p.Events...)
		if p.NextCursor == "" {
			return all
		}
		if len(p.Events) == 0 {
			t.Fatalf("ListAudit %s: empty page with a next cursor", tenant)
		}
		f.Cursor = p.NextCursor
	}
}

// auditNs returns the Counts["n"] of each event listed for tenant and f.
func auditNs(t *testing.T, s store.Store, tenant string, f store.AuditFilter) []int {
	t.Helper()
	ns := []int{}
	for _, e := range auditAll(t, s, tenant, f) {
		ns = append(ns, int(e.Counts["n"]))
	}
	return ns
}

// desc returns ns newest first (appended in ascending order).
func desc(ns ...int) []int {
	out := slices.Clone(ns)
	slices.Reverse(out)
	if out == nil {
		out = []int{}
	}
	return out
}

func requireNs(t *testing.T, what string, got, want []int) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got events %v, want %v", what, got, want)
	}
}

// diffEvent compares every field but Seq.
func diffEvent(want, got store.AuditEvent) []string {
	var d []string
	str := func(name, w, g string) {
		if w != g {
			d = append(d, fmt.Sprintf("%s: got %q, want %q", name, g, w))
		}
	}
	str("Tenant", want.Tenant, got.Tenant)
	str("Principal", want.Principal, got.Principal)
	str("Agent", want.Agent, got.Agent)
	str("Actor", want.Actor, got.Actor)
	str("Action", want.Action, got.Action)
	str("RecallID", want.RecallID, got.RecallID)
	str("QuerySHA256", want.QuerySHA256, got.QuerySHA256)
	str("Reason", want.Reason, got.Reason)
	if !want.At.Equal(got.At) || got.At.Location() != time.UTC {
		d = append(d, fmt.Sprintf("At: got %s, want %s in UTC", got.At.Format(time.RFC3339Nano), want.At.Format(time.RFC3339Nano)))
	}
	if !slices.Equal(want.MemoryIDs, got.MemoryIDs) {
		d = append(d, fmt.Sprintf("MemoryIDs: got %q, want %q", got.MemoryIDs, want.MemoryIDs))
	}
	if !slices.Equal(want.Scores, got.Scores) {
		d = append(d, fmt.Sprintf("Scores: got %v, want %v", got.Scores, want.Scores))
	}
	if fmt.Sprint(want.Counts) != fmt.Sprint(got.Counts) {
		d = append(d, fmt.Sprintf("Counts: got %v, want %v", got.Counts, want.Counts))
	}
	return d
}

func testAuditRoundTrip(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	full := store.AuditEvent{
		Seq:    999, // ignored: the store assigns it
		Tenant: "acme", Principal: "alice", Agent: "agent-1", Actor: "key:01HZX", Action: "recall",
		At:        time.Date(2025, 6, 1, 17, 30, 0, 123456000, time.FixedZone("IST", 5*3600+1800)),
		MemoryIDs: []string{id(3), id(1), id(2)},
		Scores:    []float64{0.912345678901234, 0.5, 1.0 / 3},
		RecallID:  "rc_01HZX", QuerySHA256: queryHash,
		Counts: map[string]int64{"candidates": 120, "below_floor": 117, "big": 1 << 62, "neg": -3},
		Reason: "contains_secret",
	}
	minimal := event("acme", 2)
	minimal.Counts = nil
	mustAppend(t, s, full, minimal)
	mustAppend(t, s, event("acme", 3))

	got := auditAll(t, s, "acme", store.AuditFilter{})
	if len(got) != 3 {
		t.Fatalf("ListAudit: %d events, want 3", len(got))
	}
	for i, want := range []store.AuditEvent{event("acme", 3), minimal, full} {
		if d := diffEvent(want, got[i]); len(d) > 0 {
			t.Fatalf("event %d differs from what was appended:\n  %s", i, strings.Join(d, "\n  "))
		}
	}
	if got[2].Seq <= 0 || got[2].Seq == 999 || !(got[2].Seq < got[1].Seq && got[1].Seq < got[0].Seq) {
		t.Fatalf("Seq %d, %d, %d: want assigned by the store, rising in append order", got[2].Seq, got[1].Seq, got[0].Seq)
	}
	if got[1].MemoryIDs != nil || got[1].Scores != nil || got[1].Counts != nil {
		t.Fatalf("minimal event came back with %+v", got[1])
	}
	if err := s.AppendAudit(t.Context(), nil); err != nil {
		t.Fatalf("AppendAudit of nothing: %v", err)
	}
}

func testAuditFilters(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mk := func(n int, principal, action, recall string, ids ...string) store.AuditEvent {
		e := event("acme", n)
		e.Principal, e.Action, e.RecallID, e.MemoryIDs = principal, action, recall, ids
		return e
	}
	mustAppend(t, s,
		mk(1, "alice", "remember", "", id(1)),
		mk(2, "alice", "recall", "r-1", id(1), id(2)),
		mk(3, "bob", "recall", "r-2", id(1)),
		mk(4, "alice", "revoke", "", id(2)),
		mk(5, "", "sweep", "", id(1), id(3), id(1)), // names m-001 twice
		mk(6, "alice", "recall", "r-3"),
		mk(7, "bob", "forget", ""),
	)
	// Another tenant's events match every filter below by value.
	other := mk(100, "alice", "recall", "r-1", id(1), id(2))
	other.Tenant = "globex"
	mustAppend(t, s, other)

	at := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	cases := []struct {
		name string
		f    store.AuditFilter
		want []int
	}{
		{"no filter", store.AuditFilter{}, desc(1, 2, 3, 4, 5, 6, 7)},
		{"principal", store.AuditFilter{Principal: "alice"}, desc(1, 2, 4, 6)},
		{"principal bob", store.AuditFilter{Principal: "bob"}, desc(3, 7)},
		{"unknown principal", store.AuditFilter{Principal: "carol"}, desc()},
		{"action", store.AuditFilter{Action: "recall"}, desc(2, 3, 6)},
		{"recall id", store.AuditFilter{RecallID: "r-1"}, desc(2)},
		{"memory id", store.AuditFilter{MemoryID: id(1)}, desc(1, 2, 3, 5)},
		{"memory id named twice in one event: listed once", store.AuditFilter{MemoryID: id(3)}, desc(5)},
		{"memory id and principal", store.AuditFilter{MemoryID: id(1), Principal: "alice"}, desc(1, 2)},
		{"memory id and action", store.AuditFilter{MemoryID: id(2), Action: "revoke"}, desc(4)},
		{"unknown memory id", store.AuditFilter{MemoryID: missingID}, desc()},
		{"from is inclusive", store.AuditFilter{From: at(5)}, desc(5, 6, 7)},
		{"to is exclusive", store.AuditFilter{To: at(3)}, desc(1, 2)},
		{"from and to", store.AuditFilter{From: at(2), To: at(5)}, desc(2, 3, 4)},
		{"to at from: nothing", store.AuditFilter{From: at(3), To: at(3)}, desc()},
		{"principal, action and time", store.AuditFilter{Principal: "alice", Action: "recall", From: at(3)}, desc(6)},
		{"memory id across pages", store.AuditFilter{MemoryID: id(1), Limit: 1}, desc(1, 2, 3, 5)},
		{"principal across pages", store.AuditFilter{Principal: "alice", Limit: 3}, desc(1, 2, 4, 6)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireNs(t, "ListAudit", auditNs(t, s, "acme", tc.f), tc.want)
		})
	}
	// Control: the other tenant's event is there for its tenant.
	requireNs(t, "globex", auditNs(t, s, "globex", store.AuditFilter{MemoryID: id(1), RecallID: "r-1"}), []int{100})
}

func testAuditPaging(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	var evs []store.AuditEvent
	var all []int
	for n := 1; n <= store.DefaultPageSize+10; n++ {
		evs = append(evs, event("acme", n))
		all = append(all, n)
	}
	mustAppend(t, s, evs...)

	t.Run("default limit", func(t *testing.T) {
		p, err := s.ListAudit(t.Context(), "acme", store.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Events) != store.DefaultPageSize || p.Limit != store.DefaultPageSize || p.Clamped || p.NextCursor == "" {
			t.Fatalf("first page: %d events, limit %d, clamped %v, cursor %q", len(p.Events), p.Limit, p.Clamped, p.NextCursor)
		}
		requireNs(t, "walk", auditNs(t, s, "acme", store.AuditFilter{}), desc(all...))
	})
	t.Run("clamped", func(t *testing.T) {
		p, err := s.ListAudit(t.Context(), "acme", store.AuditFilter{Limit: store.MaxPageSize + 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Events) != len(all) || p.Limit != store.MaxPageSize || !p.Clamped || p.NextCursor != "" {
			t.Fatalf("got %d events, limit %d, clamped %v, cursor %q", len(p.Events), p.Limit, p.Clamped, p.NextCursor)
		}
	})
	t.Run("walk with small pages", func(t *testing.T) {
		for _, limit := range []int{1, 7, len(all) - 1, len(all), len(all) + 1} {
			requireNs(t, fmt.Sprintf("limit %d", limit), auditNs(t, s, "acme", store.AuditFilter{Limit: limit}), desc(all...))
		}
	})
	t.Run("bad cursor", func(t *testing.T) {
		for _, c := range []string{"!!", store.EncodeCursor(0)[:2], "YzE6MA"} {
			p, err := s.ListAudit(t.Context(), "acme", store.AuditFilter{Cursor: c})
			requireCode(t, fmt.Sprintf("ListAudit cursor %q", c), err, memgate.EINVALID, "cursor")
			if p != nil && len(p.Events) > 0 {
				t.Fatal("ListAudit returned events with the error")
			}
		}
	})
	t.Run("invalid tenant", func(t *testing.T) {
		for _, tenant := range []string{"", "ac me"} {
			_, err := s.ListAudit(t.Context(), tenant, store.AuditFilter{})
			requireCode(t, fmt.Sprintf("ListAudit tenant %q", tenant), err, memgate.EINVALID, "tenant")
		}
	})
}

// testAuditStableUnderAppends appends events between pages: later pages
// neither repeat nor skip events that existed when paging began.
func testAuditStableUnderAppends(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	var evs []store.AuditEvent
	for n := 1; n <= 5; n++ {
		evs = append(evs, event("acme", n))
	}
	mustAppend(t, s, evs...)
	var got []int
	f := store.AuditFilter{Limit: 2}
	next := 500
	for pages := 0; ; pages++ {
		if pages > 20 {
			t.Fatal("cursor does not advance")
		}
		p, err := s.ListAudit(t.Context(), "acme", f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Events {
			got = append(got, int(e.Counts["n"]))
		}
		if p.NextCursor == "" {
			break
		}
		f.Cursor = p.NextCursor
		mustAppend(t, s, event("acme", next), event("globex", next))
		next++
	}
	requireNs(t, "pages while appending", got, desc(1, 2, 3, 4, 5))
	// Control: a fresh walk sees the new events first.
	if n := len(auditNs(t, s, "acme", store.AuditFilter{})); n != 5+next-500 {
		t.Fatalf("fresh walk: %d events, want %d", n, 5+next-500)
	}
}

func testAuditTenants(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	same := func(tenant string, n int) store.AuditEvent {
		e := event(tenant, n)
		e.Principal, e.Action, e.RecallID, e.MemoryIDs = "alice", "recall", "r-1", []string{id(1)}
		return e
	}
	mustAppend(t, s, same("acme", 1), same("globex", 2), same("acme", 3))
	filters := []store.AuditFilter{
		{}, {Principal: "alice"}, {MemoryID: id(1)}, {RecallID: "r-1"}, {Action: "recall"},
		{From: t0, To: t0.Add(time.Hour)}, {MemoryID: id(1), Principal: "alice", RecallID: "r-1"},
	}
	for _, f := range filters {
		requireNs(t, fmt.Sprintf("acme %+v", f), auditNs(t, s, "acme", f), desc(1, 3))
		requireNs(t, fmt.Sprintf("globex %+v", f), auditNs(t, s, "globex", f), []int{2})
		requireNs(t, fmt.Sprintf("initech %+v", f), auditNs(t, s, "initech", f), []int{})
	}
	// A cursor from one tenant's listing, used for another, still reads
	// only that other tenant's events (acme's event 1 is older than it).
	p, err := s.ListAudit(t.Context(), "acme", store.AuditFilter{Limit: 1})
	if err != nil || p.NextCursor == "" {
		t.Fatalf("acme first page: %v", err)
	}
	requireNs(t, "globex with acme's cursor", auditNs(t, s, "globex", store.AuditFilter{Cursor: p.NextCursor}), []int{2})
}

func testAuditInvalid(t *testing.T, newStore func(*testing.T) store.Store) {
	cases := []struct {
		name   string
		mutate func(e *store.AuditEvent)
		field  string
	}{
		{"no tenant", func(e *store.AuditEvent) { e.Tenant = "" }, "tenant"},
		{"malformed tenant", func(e *store.AuditEvent) { e.Tenant = "ac me" }, "tenant"},
		{"no actor", func(e *store.AuditEvent) { e.Actor = "" }, "actor"},
		{"no action", func(e *store.AuditEvent) { e.Action = "" }, "action"},
		{"no time", func(e *store.AuditEvent) { e.At = time.Time{} }, "at"},
		{"query text instead of its hash", func(e *store.AuditEvent) { e.QuerySHA256 = "what does alice like?" }, "query_sha256"},
		{"free text reason", func(e *store.AuditEvent) { e.Reason = "the content said: my password is hunter2" }, "reason"},
		{"malformed memory id", func(e *store.AuditEvent) { e.MemoryIDs = []string{id(1), "not an id"} }, "memory_ids"},
		{"scores without their ids", func(e *store.AuditEvent) { e.MemoryIDs, e.Scores = []string{id(1)}, []float64{0.5, 0.4} }, "scores"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			mustAppend(t, s, event("acme", 1))
			bad := event("acme", 3)
			tc.mutate(&bad)
			err := s.AppendAudit(t.Context(), []store.AuditEvent{event("acme", 2), bad, event("acme", 4)})
			requireCode(t, "AppendAudit", err, memgate.EINVALID, tc.field)
			requireNs(t, "after the refused batch", auditNs(t, s, "acme", store.AuditFilter{}), []int{1})

			// Control: the batch without the bad event goes in whole.
			mustAppend(t, s, event("acme", 2), event("acme", 4))
			requireNs(t, "after the good batch", auditNs(t, s, "acme", store.AuditFilter{}), desc(1, 2, 4))
		})
	}
}

// testAuditSurvivesForget: forget erases the principal's memories, not the
// record of what happened to them (which holds no content).
func testAuditSurvivesForget(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	m := newMemory(alice, id(1), "alice's memory")
	mustInsert(t, s, m)
	e := event("acme", 1)
	e.Principal, e.Agent, e.MemoryIDs = "alice", "zqxvbn-alices-coach", []string{m.ID}
	mustAppend(t, s, e)
	// An event forgotten before agents were: its principal is the
	// pseudonym, its agent still the name.
	legacy := event("acme", 5)
	legacy.Principal, legacy.Agent = pseudonymOf("acme", "alice"), "zqxvbn-legacy-bot"
	mustAppend(t, s, legacy)

	if n, err := s.Forget(t.Context(), "acme", "alice", pseudonymOf("acme", "alice")); err != nil || n != 1 {
		t.Fatalf("Forget: %d, %v", n, err)
	}
	// The agents take their keyed pseudonyms.
	key, err := s.PseudonymKey(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	agents := map[int64]string{}
	for _, ev := range auditAll(t, s, "acme", store.AuditFilter{Principal: pseudonymOf("acme", "alice")}) {
		agents[ev.Counts["n"]] = ev.Agent
	}
	for n, name := range map[int64]string{1: e.Agent, 5: legacy.Agent} {
		if want := store.AgentPseudonym(key, pseudonymOf("acme", "alice"), name); agents[n] != want || strings.Contains(agents[n], name) {
			t.Errorf("event %d after forget: agent %q, want its pseudonym %q", n, agents[n], want)
		}
	}
	if store.AgentPseudonym(key, pseudonymOf("acme", "alice"), e.Agent) == store.AgentPseudonym(key, pseudonymOf("acme", "bob"), e.Agent) {
		t.Error("one agent has one pseudonym for two people: the log links them")
	}
	e.Agent = store.AgentPseudonym(key, pseudonymOf("acme", "alice"), e.Agent)
	requireGone(t, s, alice, m.ID)
	// The event stays, under the pseudonym: nothing in the log names alice.
	requireNs(t, "by principal", auditNs(t, s, "acme", store.AuditFilter{Principal: "alice"}), []int{})
	requireNs(t, "by pseudonym", auditNs(t, s, "acme", store.AuditFilter{Principal: pseudonymOf("acme", "alice")}), []int{5, 1})
	requireNs(t, "by memory id", auditNs(t, s, "acme", store.AuditFilter{MemoryID: m.ID}), []int{1})
	if got := auditAll(t, s, "acme", store.AuditFilter{MemoryID: m.ID}); len(got) != 1 || got[0].Principal != pseudonymOf("acme", "alice") ||
		got[0].Action != e.Action || got[0].Actor != e.Actor || got[0].Agent != e.Agent || !slices.Equal(got[0].MemoryIDs, e.MemoryIDs) {
		t.Fatalf("the event after forget: %+v; want it unchanged but for the pseudonyms", got)
	}
	// Control: another principal's events keep their principal and agent.
	b := event("acme", 2)
	b.Principal, b.Agent = "bob", "zqxvbn-alices-coach"
	mustAppend(t, s, b)
	if _, err := s.Forget(t.Context(), "acme", "carol", pseudonymOf("acme", "carol")); err != nil {
		t.Fatal(err)
	}
	requireNs(t, "bob's after carol's forget", auditNs(t, s, "acme", store.AuditFilter{Principal: "bob"}), []int{2})
	if got := auditAll(t, s, "acme", store.AuditFilter{Principal: "bob"}); got[0].Agent != b.Agent {
		t.Fatalf("bob's event after another's forget: agent %q, want %q", got[0].Agent, b.Agent)
	}
	// A malformed pseudonym is refused before anything is erased.
	mustInsert(t, s, newMemory(bob, id(3), "bob's memory"))
	if _, err := s.Forget(t.Context(), "acme", "bob", "bob"); memgate.ErrorField(err) != "pseudonym" {
		t.Fatalf("Forget with the principal as its pseudonym: %v", err)
	}
	requireNs(t, "bob's after a refused forget", auditNs(t, s, "acme", store.AuditFilter{Principal: "bob"}), []int{2})
}
