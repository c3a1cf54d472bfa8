package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var scopeTests = []test{
	{"ForeignIsNotFound", testForeignIsNotFound},
	{"ForeignListAndCounts", testForeignListAndCounts},
	{"AgentAndConversationVisibility", testVisibility},
	{"VisibilityOnWrites", testVisibilityOnWrites},
	{"InvalidScope", testInvalidScope},
	{"ExactAgentAndHideRestricted", testNarrowedScopes},
}

// testNarrowedScopes: a scope with ExactAgent holds only its agent's own
// memories (not the wider level), one with HideRestricted no restricted
// memory; every operation on a memory outside answers exactly like a
// missing id and writes nothing, and List, Counts and Fetch leave it out.
// The control: the same calls on a memory inside succeed.
func testNarrowedScopes(t *testing.T, newStore func(*testing.T) store.Store) {
	wide := memgate.Scope{Tenant: "acme", Principal: "alice"}
	agentA := memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "A"}
	restricted := func(m *memgate.Memory) *memgate.Memory {
		m.Sensitivity = memgate.SensitivityRestricted
		return m
	}
	cases := []struct {
		name    string
		sc      memgate.Scope
		outside func(i int) *memgate.Memory
		inside  func(i int) *memgate.Memory
	}{
		{"exact agent: the principal-wide level is outside",
			memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "A", ExactAgent: true},
			func(i int) *memgate.Memory { return newMemory(wide, id(i), "principal-wide") },
			func(i int) *memgate.Memory { return newMemory(agentA, id(i), "agent A's") }},
		{"exact agent: another agent is outside",
			memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "A", ExactAgent: true},
			func(i int) *memgate.Memory {
				return newMemory(memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "B"}, id(i), "agent B's")
			},
			func(i int) *memgate.Memory { return newMemory(agentA, id(i), "agent A's") }},
		{"hide restricted",
			memgate.Scope{Tenant: "acme", Principal: "alice", HideRestricted: true},
			func(i int) *memgate.Memory { return restricted(newMemory(wide, id(i), "restricted")) },
			func(i int) *memgate.Memory { return newMemory(wide, id(i), "standard") }},
		{"hide restricted with an agent",
			memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "A", HideRestricted: true},
			func(i int) *memgate.Memory { return restricted(newMemory(agentA, id(i), "restricted of A")) },
			func(i int) *memgate.Memory { return newMemory(agentA, id(i), "standard of A") }},
	}
	for _, tc := range cases {
		for _, op := range scopedOps {
			t.Run(tc.name+"/"+op.name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				s := newStore(t)
				out, in := tc.outside(1), tc.inside(2)
				mustInsert(t, s, out, in)
				missingErr := op.call(ctx, s, tc.sc, missingID)
				requireNotFound(t, op.name+" of a missing id", missingErr)
				requireSameError(t, op.name+" of a memory outside the scope", op.call(ctx, s, tc.sc, out.ID), missingErr)
				requireUnchanged(t, s, memgate.Scope{Tenant: "acme", AllPrincipals: true}, out)
				requireGone(t, s, memgate.Scope{Tenant: "acme", AllPrincipals: true}, nextID(tc.sc, out.ID))
				if err := op.call(ctx, s, tc.sc, in.ID); err != nil {
					t.Fatalf("control: %s inside the scope: %v", op.name, err)
				}
			})
		}
		t.Run(tc.name+"/ListCountsFetch", func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			out, in := tc.outside(1), tc.inside(2)
			mustInsert(t, s, out, in)
			requireIDs(t, "List", listIDs(t, s, tc.sc, store.Filter{}), []string{in.ID})
			if got := total(countsOf(t, s, tc.sc, now)); got != 1 {
				t.Fatalf("Counts: %d memories, want 1", got)
			}
			ms, err := s.Fetch(t.Context(), tc.sc, []string{out.ID, in.ID}, store.ReadGate{Now: now, AsOf: now, IncludeRestricted: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) != 1 || ms[0].ID != in.ID {
				t.Fatalf("Fetch: %v, want only %s", idsOf(ms), in.ID)
			}
			// Without the narrowing, both are there (the fixture is populated).
			open := tc.sc
			open.ExactAgent, open.HideRestricted = false, false
			open.Agent = ""
			requireIDs(t, "List without the narrowing", listIDs(t, s, open, store.Filter{}), newestFirst(out.ID, in.ID))
		})
	}
	// ExactAgent needs an agent.
	if err := (memgate.Scope{Tenant: "acme", Principal: "alice", ExactAgent: true}).Validate(); memgate.ErrorCode(err) != memgate.EINVALID {
		t.Fatalf("ExactAgent without an agent: %v, want invalid_argument", err)
	}
}

// scopedOp is a store call on one memory id, from one scope.
type scopedOp struct {
	name string
	call func(ctx context.Context, s store.Store, sc memgate.Scope, id string) error
}

// scopedOps covers every method that takes a scope and an id. Each call is
// one that succeeds for the owner of an active, version-1 memory.
var scopedOps = []scopedOp{
	{"Get", func(ctx context.Context, s store.Store, sc memgate.Scope, id string) error {
		_, err := s.Get(ctx, sc, id)
		return err
	}},
	{"Update", func(ctx context.Context, s store.Store, sc memgate.Scope, id string) error {
		m := newMemory(sc, id, "overwritten by "+sc.Principal)
		m.UpdatedAt = t1
		_, err := s.Update(ctx, sc, m, 1)
		return err
	}},
	{"SetStatus", func(ctx context.Context, s store.Store, sc memgate.Scope, id string) error {
		_, err := s.SetStatus(ctx, sc, id, store.StatusChange{
			From: []memgate.Status{memgate.StatusActive}, To: memgate.StatusRevoked, Reason: "revoked", At: t1,
		})
		return err
	}},
	{"Supersede", func(ctx context.Context, s store.Store, sc memgate.Scope, id string) error {
		owner := sc
		if owner.AllPrincipals {
			owner.Principal, owner.AllPrincipals = "alice", false
		}
		next := newMemory(owner, nextID(sc, id), "replacement")
		next.Supersedes = id
		_, err := s.Supersede(ctx, sc, id, next, t1)
		return err
	}},
	{"AddFeedback", func(ctx context.Context, s store.Store, sc memgate.Scope, id string) error {
		_, err := s.AddFeedback(ctx, sc, id, 0.5)
		return err
	}},
	{"Delete", func(ctx context.Context, s store.Store, sc memgate.Scope, id string) error {
		return s.Delete(ctx, sc, id)
	}},
}

// nextID is the id of the memory the Supersede op inserts for id from sc.
func nextID(sc memgate.Scope, id string) string {
	return "next-of-" + id + "-by-" + sc.Tenant + "-" + sc.Principal
}

// foreignScopes are scopes that must not reach alice's memories in acme.
var foreignScopes = []struct {
	name string
	sc   memgate.Scope
}{
	{"other principal, same tenant", bob},
	{"same principal name, other tenant", aliceGlobex},
	{"other principal, other tenant", memgate.Scope{Tenant: "globex", Principal: "bob"}},
	{"all principals of another tenant", memgate.Scope{Tenant: "globex", AllPrincipals: true}},
	{"owner's agent and conversation, other principal", memgate.Scope{Tenant: "acme", Principal: "bob", Agent: "agent-1", Conversation: "conv-1"}},
}

// testForeignIsNotFound checks that every operation on a foreign memory
// answers exactly like one on a missing id, writes nothing, and that the
// same operation succeeds for the owner.
func testForeignIsNotFound(t *testing.T, newStore func(*testing.T) store.Store) {
	for _, op := range scopedOps {
		for _, fs := range foreignScopes {
			t.Run(op.name+"/"+fs.name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				s := newStore(t)
				owner := memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "agent-1", Conversation: "conv-1"}
				target := newMemory(owner, id(1), "alice's secret")
				control := newMemory(owner, id(2), "alice's other memory")
				// The foreign scope's own memory, so its store is not empty.
				var theirs *memgate.Memory
				if !fs.sc.AllPrincipals {
					theirs = newMemory(fs.sc, id(50), "their own memory")
					mustInsert(t, s, theirs)
				}
				mustInsert(t, s, target, control)

				missingErr := op.call(ctx, s, fs.sc, missingID)
				requireNotFound(t, op.name+" of a missing id", missingErr)

				foreignErr := op.call(ctx, s, fs.sc, target.ID)
				requireSameError(t, op.name+" of a foreign id", foreignErr, missingErr)

				requireUnchanged(t, s, alice, target)
				// Nothing was written: Supersede's replacement is nowhere.
				for _, tenant := range []string{"acme", "globex"} {
					requireGone(t, s, memgate.Scope{Tenant: tenant, AllPrincipals: true}, nextID(fs.sc, target.ID))
				}
				if theirs != nil {
					requireIDs(t, "List of the foreign scope", listIDs(t, s, fs.sc, store.Filter{}), []string{theirs.ID})
				}

				// Control: the owner's same call on its other memory succeeds.
				if err := op.call(ctx, s, owner, control.ID); err != nil {
					t.Fatalf("%s by the owner: %v", op.name, err)
				}
				if theirs != nil {
					requireUnchanged(t, s, fs.sc, theirs)
				}
			})
		}
	}
}

func testForeignListAndCounts(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, newMemories(alice, 1, 3)...)
	mustInsert(t, s, newMemory(bob, id(10), "bob's"))
	mustInsert(t, s, newMemory(aliceGlobex, id(20), "globex alice's"))

	cases := []struct {
		name       string
		sc         memgate.Scope
		wantIDs    []string
		wantCounts map[string]int64
	}{
		{"owner", alice, newestFirst(id(1), id(2), id(3)), map[string]int64{"alice/fact/active": 3}},
		{"other principal", bob, []string{id(10)}, map[string]int64{"bob/fact/active": 1}},
		{"other tenant", aliceGlobex, []string{id(20)}, map[string]int64{"alice/fact/active": 1}},
		{"unknown principal", memgate.Scope{Tenant: "acme", Principal: "carol"}, []string{}, map[string]int64{}},
		{"unknown tenant", memgate.Scope{Tenant: "initech", Principal: "alice"}, []string{}, map[string]int64{}},
		{"all principals of acme", acmeAll, newestFirst(id(1), id(2), id(3), id(10)),
			map[string]int64{"alice/fact/active": 3, "bob/fact/active": 1}},
		{"all principals of globex", memgate.Scope{Tenant: "globex", AllPrincipals: true}, []string{id(20)},
			map[string]int64{"alice/fact/active": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireIDs(t, "List", listIDs(t, s, tc.sc, store.Filter{}), tc.wantIDs)
			if got := countsOf(t, s, tc.sc, now); fmt.Sprint(got) != fmt.Sprint(tc.wantCounts) {
				t.Fatalf("Counts: got %v, want %v", got, tc.wantCounts)
			}
		})
	}
}

// visibilityFixture is one partition with memories at every level.
var visibilityFixture = []struct{ id, agent, conv string }{
	{"wide", "", ""},
	{"a", "A", ""},
	{"b", "B", ""},
	{"a-c1", "A", "c1"},
	{"a-c2", "A", "c2"},
	{"c1", "", "c1"},
	{"b-c1", "B", "c1"},
}

func testVisibility(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	for _, f := range visibilityFixture {
		sc := memgate.Scope{Tenant: "acme", Principal: "alice", Agent: f.agent, Conversation: f.conv}
		mustInsert(t, s, newMemory(sc, f.id, "memory "+f.id))
	}
	scoped := func(agent, conv string) memgate.Scope {
		return memgate.Scope{Tenant: "acme", Principal: "alice", Agent: agent, Conversation: conv}
	}
	cases := []struct {
		name string
		sc   memgate.Scope
		want []string // in insertion order
	}{
		{"no agent, no conversation: whole partition", scoped("", ""), []string{"wide", "a", "b", "a-c1", "a-c2", "c1", "b-c1"}},
		{"agent A", scoped("A", ""), []string{"wide", "a", "a-c1", "a-c2", "c1"}},
		{"agent B", scoped("B", ""), []string{"wide", "b", "c1", "b-c1"}},
		{"unknown agent: wide level only", scoped("Z", ""), []string{"wide", "c1"}},
		{"conversation c1", scoped("", "c1"), []string{"wide", "a", "b", "a-c1", "c1", "b-c1"}},
		{"agent A, conversation c1", scoped("A", "c1"), []string{"wide", "a", "a-c1", "c1"}},
		{"agent A, conversation c2", scoped("A", "c2"), []string{"wide", "a", "a-c2"}},
		{"agent B, conversation c2", scoped("B", "c2"), []string{"wide", "b"}},
		{"all principals, agent A", memgate.Scope{Tenant: "acme", AllPrincipals: true, Agent: "A"}, []string{"wide", "a", "a-c1", "a-c2", "c1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireIDs(t, "List", listIDs(t, s, tc.sc, store.Filter{}), newestFirst(tc.want...))
			for _, f := range visibilityFixture {
				visible := slices.Contains(tc.want, f.id)
				// The table must agree with the documented rule.
				m := newMemory(scoped(f.agent, f.conv), f.id, "")
				if tc.sc.Contains(m) != visible {
					t.Fatalf("test table disagrees with Scope.Contains for %s", f.id)
				}
				got, err := s.Get(t.Context(), tc.sc, f.id)
				switch {
				case visible && err != nil:
					t.Fatalf("Get %s: %v, want it visible", f.id, err)
				case visible && got.ID != f.id:
					t.Fatalf("Get %s: got %s", f.id, got.ID)
				case !visible:
					requireNotFound(t, "Get "+f.id, err)
				}
			}
			if n := total(countsOf(t, s, tc.sc, now)); n != int64(len(tc.want)) {
				t.Fatalf("Counts total %d, want %d", n, len(tc.want))
			}
		})
	}
}

// testVisibilityOnWrites checks that a narrowed scope cannot write what it
// cannot see, and can write what it can.
func testVisibilityOnWrites(t *testing.T, newStore func(*testing.T) store.Store) {
	for _, op := range scopedOps[1:] { // every write
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			stored := map[string]*memgate.Memory{}
			for _, f := range visibilityFixture {
				sc := memgate.Scope{Tenant: "acme", Principal: "alice", Agent: f.agent, Conversation: f.conv}
				m := newMemory(sc, f.id, "memory "+f.id)
				stored[f.id] = m
				mustInsert(t, s, m)
			}
			agentA := memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "A", Conversation: "c1"}
			for _, id := range []string{"b", "b-c1", "a-c2"} {
				requireNotFound(t, op.name+" of "+id+" from agent A, conversation c1", op.call(t.Context(), s, agentA, id))
				requireUnchanged(t, s, alice, stored[id])
			}
			// Controls: its own level and the wider levels.
			for _, id := range []string{"a-c1", "a", "c1", "wide"} {
				if err := op.call(t.Context(), s, agentA, id); err != nil {
					t.Fatalf("%s of %s from agent A, conversation c1: %v", op.name, id, err)
				}
			}
		})
	}
}

func testInvalidScope(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	stored := newMemory(alice, id(1), "must survive every invalid call")
	mustInsert(t, s, stored)
	before := countsOf(t, s, acmeAll, now)

	invalid := []struct {
		name string
		sc   memgate.Scope
	}{
		{"empty tenant", memgate.Scope{Principal: "alice"}},
		{"empty tenant, all principals", memgate.Scope{AllPrincipals: true}},
		{"empty principal", memgate.Scope{Tenant: "acme"}},
		{"empty principal with agent", memgate.Scope{Tenant: "acme", Agent: "A"}},
		{"principal set with all principals", memgate.Scope{Tenant: "acme", Principal: "alice", AllPrincipals: true}},
		{"malformed tenant", memgate.Scope{Tenant: "ac me", Principal: "alice"}},
		{"malformed principal", memgate.Scope{Tenant: "acme", Principal: "alice%"}},
		{"malformed agent", memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "a' OR '1'='1"}},
	}
	ops := append(slices.Clone(scopedOps),
		scopedOp{"List", func(ctx context.Context, s store.Store, sc memgate.Scope, _ string) error {
			_, err := s.List(ctx, sc, store.Filter{})
			return err
		}},
		scopedOp{"Counts", func(ctx context.Context, s store.Store, sc memgate.Scope, _ string) error {
			_, err := s.Counts(ctx, sc, now)
			return err
		}},
		scopedOp{"Forget", func(ctx context.Context, s store.Store, sc memgate.Scope, _ string) error {
			_, err := s.Forget(ctx, sc.Tenant, sc.Principal, pseudonymOf(sc.Tenant, sc.Principal))
			return err
		}},
	)
	for _, op := range ops {
		for _, inv := range invalid {
			if op.name == "Forget" && (inv.sc.AllPrincipals || inv.sc.Agent != "") {
				continue // Forget takes only tenant and principal
			}
			t.Run(op.name+"/"+inv.name, func(t *testing.T) {
				requireCode(t, op.name, op.call(t.Context(), s, inv.sc, stored.ID), memgate.EINVALID, "")
			})
		}
	}
	requireUnchanged(t, s, alice, stored)
	if after := countsOf(t, s, acmeAll, now); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("Counts changed after invalid calls: before %v, after %v", before, after)
	}
	// Control: each call is refused for its scope, not for itself.
	for _, op := range ops {
		ctl := newMemory(alice, "ctl-"+op.name, "control for "+op.name)
		mustInsert(t, s, ctl)
		if err := op.call(t.Context(), s, alice, ctl.ID); err != nil {
			t.Fatalf("%s with a valid scope: %v", op.name, err)
		}
	}
}
