package engine_test

import (
	"slices"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/store"
)

// A memory the write gate holds may carry the intent to replace another:
// it is stored pending with the link, the old memory stays active and
// recalled, and only approval performs the supersession, keeping the old
// memory in the chain.
func TestPendingSupersedesOnlyWhenApproved(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := scope("t", "p")
	paris := h.remember(t, "t", "p", "Dana lives in Paris.")
	// The control: another principal's memory with the same words.
	other := h.remember(t, "t", "q", "Dana lives in Paris.")

	recalled := func() []string {
		t.Helper()
		res, err := h.eng.Recall(ctx, memgate.RecallRequest{Scope: s, Query: "Where does Dana live?"})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, hit := range res.Results {
			ids = append(ids, hit.Memory.ID)
		}
		return ids
	}

	// The assistant's proposal: facts from the assistant wait for approval
	// under the default policy.
	got, err := h.eng.Remember(ctx, memgate.RememberRequest{
		Memory:     memgate.Memory{Tenant: "t", Principal: "p", Kind: memgate.KindFact, Source: memgate.SourceAssistant, Content: "Dana lives in Berlin."},
		Supersedes: paris.ID,
	})
	if err != nil {
		t.Fatalf("remember a pending replacement: %v", err)
	}
	berlin := got.Memory
	if berlin.Status != memgate.StatusPending || berlin.Supersedes != paris.ID {
		t.Fatalf("proposal: status %s, supersedes %q; want pending with the link", berlin.Status, berlin.Supersedes)
	}
	if old, _ := h.eng.Get(ctx, s, paris.ID); old.Status != memgate.StatusActive || old.SupersededBy != "" {
		t.Fatalf("before approval the old memory is %s superseded by %q; want active", old.Status, old.SupersededBy)
	}
	if ids := recalled(); !slices.Contains(ids, paris.ID) || slices.Contains(ids, berlin.ID) {
		t.Fatalf("before approval recall = %v; want Paris and not the pending Berlin", ids)
	}

	approved, err := h.eng.Approve(ctx, s, berlin.ID, berlin.Version)
	if err != nil {
		t.Fatal(err)
	}
	if approved.Status != memgate.StatusActive || approved.Supersedes != paris.ID {
		t.Fatalf("approved: %s, supersedes %q", approved.Status, approved.Supersedes)
	}
	old, _ := h.eng.Get(ctx, s, paris.ID)
	if old.Status != memgate.StatusSuperseded || old.SupersededBy != berlin.ID {
		t.Fatalf("after approval the old memory is %s superseded by %q; want superseded by %s", old.Status, old.SupersededBy, berlin.ID)
	}
	if ids := recalled(); slices.Contains(ids, paris.ID) || !slices.Contains(ids, berlin.ID) {
		t.Fatalf("after approval recall = %v; want Berlin and not Paris", ids)
	}
	if q, _ := h.eng.Get(ctx, scope("t", "q"), other.ID); q.Status != memgate.StatusActive {
		t.Fatalf("another principal's memory became %s", q.Status)
	}
	page, err := h.eng.Audit(ctx, s, memgate.AuditFilter{MemoryID: paris.ID, Action: engine.ActionSupersede})
	if err != nil || len(page.Events) != 1 {
		t.Fatalf("supersede audit events of the old memory: %v, %v", page, err)
	}
}

func TestPendingSupersedeRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := scope("t", "p")
	assistant := func(content, supersedes string) (*memgate.Remembered, error) {
		return h.eng.Remember(ctx, memgate.RememberRequest{
			Memory:     memgate.Memory{Tenant: "t", Principal: "p", Kind: memgate.KindFact, Source: memgate.SourceAssistant, Content: content},
			Supersedes: supersedes,
		})
	}
	revoked := h.remember(t, "t", "p", "Eli works at the bakery.")
	if _, err := h.eng.Revoke(ctx, s, revoked.ID, "left"); err != nil {
		t.Fatal(err)
	}
	if _, err := assistant("Eli works at the library.", revoked.ID); memgate.ErrorCode(err) != memgate.ECONFLICT {
		t.Fatalf("a pending replacement of a revoked memory: %v, want conflict", err)
	}
	foreign := h.remember(t, "t", "q", "Eli's sister works at the bank.")
	_, errForeign := assistant("Eli's sister works at the school.", foreign.ID)
	_, errMissing := assistant("Eli's sister works at the school.", "m_00000000000000000000000000")
	if memgate.ErrorCode(errForeign) != memgate.ENOTFOUND || errForeign.Error() != errMissing.Error() {
		t.Fatalf("a replacement of another principal's memory: %v; of a missing one: %v; want the same not_found", errForeign, errMissing)
	}
	// The two refusals wrote nothing; the control: a valid proposal does.
	if n := h.count(t, s, memgate.StatusPending); n != 0 {
		t.Fatalf("%d pending memories after refused proposals", n)
	}
	active := h.remember(t, "t", "p", "Eli works at the market.")
	if _, err := assistant("Eli works at the harbour.", active.ID); err != nil {
		t.Fatal(err)
	}
	if n := h.count(t, s, memgate.StatusPending); n != 1 {
		t.Fatalf("%d pending memories after a valid proposal, want 1", n)
	}
	// Approving when the old memory was revoked meanwhile: the approval
	// stands, nothing is superseded.
	p2, err := assistant("Eli works at the station.", active.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.eng.Revoke(ctx, s, active.ID, "changed"); err != nil {
		t.Fatal(err)
	}
	got, err := h.eng.Approve(ctx, s, p2.ID, p2.Version)
	if err != nil || got.Status != memgate.StatusActive {
		t.Fatalf("approve after the old one was revoked: %v, %v", got, err)
	}
	if old, _ := h.eng.Get(ctx, s, active.ID); old.Status != memgate.StatusRevoked || old.SupersededBy != "" {
		t.Fatalf("revoked memory became %s superseded by %q", old.Status, old.SupersededBy)
	}
}

func (h *harness) count(t *testing.T, s memgate.Scope, st memgate.Status) int {
	t.Helper()
	p, err := h.eng.List(ctx, s, store.Filter{Statuses: []memgate.Status{st}, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return len(p.Memories)
}
