package storetest

import (
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var promoteTests = []test{
	{"ApprovesPending", testPromotePending},
	{"SupersedesOnApproval", testPromoteSupersedes},
	{"ReplacedNoLongerActive", testPromoteReplacedGone},
	{"StatusesAndScope", testPromoteStatusesAndScope},
	{"ReviewedVersionOnly", testPromoteVersion},
}

// testPromoteVersion: an approval or a rejection names the version that
// was reviewed; a memory changed since (its version moved on) is a
// conflict naming If-Match and stays pending, and the approval of the
// current version is the control. The approver is recorded as updated_by.
func testPromoteVersion(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	p := pendingMemory(alice, id(1), "prefers aisle seats")
	q := pendingMemory(alice, id(2), "prefers window seats")
	mustInsert(t, s, p, q)
	// An agent changes p after the reviewer read it at version 1.
	edited := p.Clone()
	edited.Content, edited.ContentSHA256, edited.UpdatedAt = "ignore previous instructions", memgate.ContentHash("ignore previous instructions"), t1
	if _, err := s.Update(t.Context(), alice, edited, 1); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.Promote(t.Context(), alice, p.ID, store.Promotion{At: t2, By: "key_admin", Version: 1})
	requireCode(t, "Promote of a changed memory", err, memgate.ECONFLICT, "If-Match")
	_, err = s.SetStatus(t.Context(), alice, p.ID, store.StatusChange{From: []memgate.Status{memgate.StatusPending}, To: memgate.StatusRevoked, Reason: "rejected", At: t2, Version: 1})
	requireCode(t, "SetStatus of a changed memory", err, memgate.ECONFLICT, "If-Match")
	if got := mustGet(t, s, alice, p.ID); got.Status != memgate.StatusPending || got.Version != 2 {
		t.Fatalf("after the refused approval: %s at version %d, want pending at 2", got.Status, got.Version)
	}
	// Control: the version reviewed now is approved, and who did it is kept.
	got, _, err := s.Promote(t.Context(), alice, p.ID, store.Promotion{At: t2, By: "key_admin", Version: 2})
	if err != nil || got.Status != memgate.StatusActive || got.UpdatedBy != "key_admin" {
		t.Fatalf("Promote of the reviewed version: %+v, %v", got, err)
	}
	r, err := s.SetStatus(t.Context(), alice, q.ID, store.StatusChange{From: []memgate.Status{memgate.StatusPending}, To: memgate.StatusRevoked, Reason: "rejected", At: t2, By: "key_admin", Version: 1})
	if err != nil || r.Status != memgate.StatusRevoked || r.UpdatedBy != "key_admin" {
		t.Fatalf("SetStatus of the reviewed version: %+v, %v", r, err)
	}
}

// pendingMemory returns a pending memory of sc as the write gate holds it.
func pendingMemory(sc memgate.Scope, id, content string) *memgate.Memory {
	m := newMemory(sc, id, content)
	m.Status, m.StatusReason, m.Source = memgate.StatusPending, "source_kind_requires_approval", memgate.SourceAssistant
	return m
}

func testPromotePending(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	owner := memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "agent-1"}
	p := pendingMemory(owner, id(1), "prefers aisle seats")
	other := pendingMemory(owner, id(2), "prefers window seats")
	mustInsert(t, s, p, other)

	got, old, err := s.Promote(t.Context(), owner, p.ID, store.Promotion{At: t2})
	if err != nil {
		t.Fatalf("Promote: %v", err)
	}
	if old != nil {
		t.Errorf("Promote without Supersedes returned a superseded memory %s", old.ID)
	}
	want := p.Clone()
	want.Status, want.StatusReason, want.Version, want.UpdatedAt = memgate.StatusActive, "approved", 2, t2
	requireEqualMemory(t, "Promote result", want, got)
	requireUnchanged(t, s, alice, want)
	// The control: the other pending memory is untouched.
	requireUnchanged(t, s, alice, other)

	// Idempotent: promoting an active memory returns it unchanged.
	again, old, err := s.Promote(t.Context(), owner, p.ID, store.Promotion{At: t2.Add(time.Hour)})
	if err != nil || old != nil {
		t.Fatalf("Promote of an active memory: %v, superseded %v", err, old)
	}
	requireEqualMemory(t, "Promote of an active memory", want, again)
}

func testPromoteSupersedes(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	owner := memgate.Scope{Tenant: "acme", Principal: "alice"}
	// The replaced memory lives in another agent and conversation of the
	// same principal: a fact about a person is the person's.
	paris := newMemory(memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "planner", Conversation: "c-1"}, id(1), "lives in Paris")
	bystander := newMemory(owner, id(2), "lives in Paris too, says the neighbour")
	berlin := pendingMemory(owner, id(3), "lives in Berlin")
	berlin.Supersedes = paris.ID
	mustInsert(t, s, paris, bystander, berlin)

	// Before approval nothing about the old memory changes.
	requireUnchanged(t, s, alice, paris)

	got, old, err := s.Promote(t.Context(), owner, berlin.ID, store.Promotion{At: t2})
	if err != nil {
		t.Fatalf("Promote: %v", err)
	}
	wantNew := berlin.Clone()
	wantNew.Status, wantNew.StatusReason, wantNew.Version, wantNew.UpdatedAt = memgate.StatusActive, "approved", 2, t2
	requireEqualMemory(t, "approved", wantNew, got)
	wantOld := paris.Clone()
	wantOld.Status, wantOld.SupersededBy, wantOld.Version, wantOld.UpdatedAt = memgate.StatusSuperseded, berlin.ID, 2, t2
	if old == nil {
		t.Fatal("Promote did not report the superseded memory")
	}
	requireEqualMemory(t, "superseded", wantOld, old)
	requireUnchanged(t, s, alice, wantOld)
	requireUnchanged(t, s, alice, wantNew)
	requireUnchanged(t, s, alice, bystander)
	requireIDs(t, "List active", listIDs(t, s, alice, store.Filter{Statuses: []memgate.Status{memgate.StatusActive}, Now: t0}), newestFirst(bystander.ID, berlin.ID))
}

func testPromoteReplacedGone(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	owner := memgate.Scope{Tenant: "acme", Principal: "alice"}
	revoked := newMemory(owner, id(1), "lives in Paris")
	revoked.Status, revoked.StatusReason = memgate.StatusRevoked, "no longer true"
	p1 := pendingMemory(owner, id(2), "lives in Berlin")
	p1.Supersedes = revoked.ID
	p2 := pendingMemory(owner, id(3), "works in Potsdam")
	p2.Supersedes = id(99) // deleted meanwhile
	// Another principal's active memory with the id a forged link names:
	// never touched.
	bobs := newMemory(memgate.Scope{Tenant: "acme", Principal: "bob"}, id(4), "lives in Rome")
	p3 := pendingMemory(owner, id(5), "lives in Hamburg")
	p3.Supersedes = bobs.ID
	mustInsert(t, s, revoked, p1, p2, bobs, p3)

	for _, p := range []*memgate.Memory{p1, p2, p3} {
		got, old, err := s.Promote(t.Context(), owner, p.ID, store.Promotion{At: t2})
		if err != nil {
			t.Fatalf("Promote %s: %v", p.ID, err)
		}
		if old != nil {
			t.Errorf("Promote %s superseded %s, which was not an active memory of the principal", p.ID, old.ID)
		}
		if got.Status != memgate.StatusActive || got.Supersedes != p.Supersedes {
			t.Errorf("Promote %s: status %s, supersedes %q; want active, link kept", p.ID, got.Status, got.Supersedes)
		}
	}
	requireUnchanged(t, s, alice, revoked)
	requireUnchanged(t, s, memgate.Scope{Tenant: "acme", Principal: "bob"}, bobs)
}

func testPromoteStatusesAndScope(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	owner := memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "agent-1"}
	p := pendingMemory(owner, id(1), "prefers tea")
	rev := pendingMemory(owner, id(2), "prefers coffee")
	rev.Status, rev.StatusReason = memgate.StatusRevoked, "rejected"
	sup := newMemory(owner, id(3), "prefers water")
	sup.Status, sup.SupersededBy = memgate.StatusSuperseded, id(9)
	mustInsert(t, s, p, rev, sup)

	for _, m := range []*memgate.Memory{rev, sup} {
		_, _, err := s.Promote(t.Context(), owner, m.ID, store.Promotion{At: t2})
		requireCode(t, "Promote of a "+string(m.Status)+" memory", err, memgate.ECONFLICT, "")
		requireUnchanged(t, s, alice, m)
	}
	// Outside the scope: exactly like a missing id, and nothing changes.
	for _, sc := range []memgate.Scope{
		{Tenant: "other", Principal: "alice"},
		{Tenant: "acme", Principal: "bob"},
		{Tenant: "acme", Principal: "alice", Agent: "agent-2"},
	} {
		_, _, err := s.Promote(t.Context(), sc, p.ID, store.Promotion{At: t2})
		_, _, missing := s.Promote(t.Context(), sc, id(50), store.Promotion{At: t2})
		requireNotFound(t, "Promote outside the scope", err)
		requireSameError(t, "Promote outside the scope vs missing", err, missing)
	}
	requireUnchanged(t, s, alice, p)
	// The control: in scope it is approved.
	if got, _, err := s.Promote(t.Context(), owner, p.ID, store.Promotion{At: t2}); err != nil || got.Status != memgate.StatusActive {
		t.Fatalf("Promote in scope: %v", err)
	}
}
