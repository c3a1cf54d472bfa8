package engine_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/sqlite"
)

// previewFacts: for previewQuery at previewFloor, the first clears the
// floor and the next two fall below it with a score above zero (measured:
// about 0.99, 0.51 and 0.49); the last shares nothing with the query.
var previewFacts = []string{
	"Biscuit the dog needs his rabies vaccination renewed every year at the vet.",
	"Alice adopted a golden retriever puppy named Biscuit in March.",
	"Alice walks her dog Biscuit along the river every morning before work.",
	"The quarterly report is due on Friday.",
}

const (
	previewQuery = "rabies vaccination for Biscuit"
	previewFloor = 0.6
)

func hitIDs(hs []engine.RecallHit) []string {
	ids := make([]string, len(hs))
	for i, h := range hs {
		ids[i] = h.Memory.ID
	}
	return ids
}

// TestRecallPreview: a preview answers what the same recall answers, plus
// the best candidates below the floor, each below it, best first, with its
// explanation, and none of them rendered.
func TestRecallPreview(t *testing.T) {
	t.Parallel()
	eng := newRecallEngine(t, nil, nil)
	ms := rememberAll(t, eng, "t", "alice", previewFacts...)
	floor := previewFloor
	req := memgate.RecallRequest{Scope: scope("t", "alice"), Query: previewQuery, K: 5, MinScore: &floor, Render: true}

	normal, err := eng.Recall(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if normal.BelowFloorResults != nil {
		t.Fatalf("a recall without preview lists below-floor results: %v", hitIDs(normal.BelowFloorResults))
	}
	if b, _ := json.Marshal(normal); strings.Contains(string(b), "below_floor_results") {
		t.Fatalf("a recall without preview carries below_floor_results: %s", b)
	}

	req.Preview = true
	pre, err := eng.Recall(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	// Everything of the recall is as without preview.
	if got, want := hitIDs(pre.Results), hitIDs(normal.Results); strings.Join(got, ",") != strings.Join(want, ",") || len(got) != 1 || got[0] != ms[0].ID {
		t.Fatalf("preview results %v, recall results %v; want [%s]", got, want, ms[0].ID)
	}
	for i := range pre.Results {
		if pre.Results[i].Score != normal.Results[i].Score {
			t.Fatalf("result %d: preview score %v, recall score %v", i, pre.Results[i].Score, normal.Results[i].Score)
		}
	}
	if pre.MinScore != normal.MinScore || pre.BelowFloor != normal.BelowFloor || pre.MinScore != previewFloor {
		t.Fatalf("preview floor %v below %d, recall floor %v below %d", pre.MinScore, pre.BelowFloor, normal.MinScore, normal.BelowFloor)
	}
	if strings.ReplaceAll(pre.Context, pre.RecallID, "") != strings.ReplaceAll(normal.Context, normal.RecallID, "") {
		t.Fatalf("preview context differs:\n%s\n%s", pre.Context, normal.Context)
	}

	// The memories below the floor, best first, each below it and above
	// zero, with its explanation.
	below := hitIDs(pre.BelowFloorResults)
	if len(below) != 2 || !contains(below, ms[1].ID) || !contains(below, ms[2].ID) {
		t.Fatalf("below-floor results %v, want %s and %s", below, ms[1].ID, ms[2].ID)
	}
	prev := pre.Results[len(pre.Results)-1].Score
	for _, h := range pre.BelowFloorResults {
		if !(h.Score > 0 && h.Score < previewFloor && h.Score <= prev) {
			t.Fatalf("below-floor %s scores %v (floor %v, previous %v)", h.Memory.ID, h.Score, previewFloor, prev)
		}
		prev = h.Score
		if h.Explain == nil || h.Explain.Fused <= 0 || h.Explain.Text <= 0 {
			t.Fatalf("below-floor %s without its explanation: %+v", h.Memory.ID, h.Explain)
		}
		if h.Memory.Content == "" || h.Memory.Status != memgate.StatusActive {
			t.Fatalf("below-floor memory %+v", h.Memory)
		}
		// Never rendered: the context holds the result only.
		if strings.Contains(pre.Context, h.Memory.ID) || strings.Contains(pre.Context, h.Memory.Content) {
			t.Fatalf("below-floor %s rendered into the context:\n%s", h.Memory.ID, pre.Context)
		}
	}
	if !strings.Contains(pre.Context, ms[0].ID) {
		t.Fatalf("control: the result is not in the context:\n%s", pre.Context)
	}

	// k bounds them too.
	req.K = 1
	if one, err := eng.Recall(ctx, req); err != nil || len(one.BelowFloorResults) != 1 || one.BelowFloorResults[0].Memory.ID != below[0] {
		t.Fatalf("k=1: %v, %v; want [%s]", one, err, below[0])
	}
	// With the floor off nothing is below it.
	off := 0.0
	req.K, req.MinScore = 5, &off
	if all, err := eng.Recall(ctx, req); err != nil || len(all.BelowFloorResults) != 0 || len(all.Results) < 3 {
		t.Fatalf("floor off: %d results, %d below the floor, %v", len(all.Results), len(all.BelowFloorResults), err)
	}
}

// TestRecallPreviewReadsThroughTheGate: two engines over one database; A
// has the partition cached, B revokes a memory that A's preview listed
// below the floor. A's index still proposes it, but the store's read gate
// keeps it out of the preview.
func TestRecallPreviewReadsThroughTheGate(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a := newRecallEngine(t, db, nil)
	b := newRecallEngine(t, db, nil)
	ms := rememberAll(t, a, "t", "alice", previewFacts...)
	floor := previewFloor
	req := memgate.RecallRequest{Scope: scope("t", "alice"), Query: previewQuery, K: 5, MinScore: &floor, Preview: true}
	preview := func() *memgate.RecallResult {
		t.Helper()
		res, err := a.Recall(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Control: before the revoke, A lists it below the floor.
	if below := hitIDs(preview().BelowFloorResults); !contains(below, ms[1].ID) {
		t.Fatalf("control: %s not below the floor before the revoke: %v", ms[1].ID, below)
	}
	if _, err := b.Revoke(ctx, scope("t", "alice"), ms[1].ID, "wrong"); err != nil {
		t.Fatal(err)
	}
	res := preview()
	if contains(hitIDs(res.BelowFloorResults), ms[1].ID) || contains(hitIDs(res.Results), ms[1].ID) {
		t.Fatalf("revoked on B, previewed on A: results %v, below the floor %v", hitIDs(res.Results), hitIDs(res.BelowFloorResults))
	}
	// Control: the preview is not simply empty.
	if !contains(hitIDs(res.BelowFloorResults), ms[2].ID) || !contains(hitIDs(res.Results), ms[0].ID) {
		t.Fatalf("after the revoke: results %v, below the floor %v", hitIDs(res.Results), hitIDs(res.BelowFloorResults))
	}
	// Forgotten on B: nothing at all through A.
	if _, err := b.Forget(ctx, memgate.Scope{Tenant: "t", Principal: "alice"}); err != nil {
		t.Fatal(err)
	}
	if res := preview(); len(res.Results) != 0 || len(res.BelowFloorResults) != 0 {
		t.Fatalf("forgotten on B, previewed on A: results %v, below the floor %v", hitIDs(res.Results), hitIDs(res.BelowFloorResults))
	}
}

// TestRecallPreviewIsAuditedApart: a preview is audited as recall_preview,
// a recall as recall, so a memory's recall history counts injections only.
func TestRecallPreviewIsAuditedApart(t *testing.T) {
	t.Parallel()
	eng := newRecallEngine(t, nil, nil)
	ms := rememberAll(t, eng, "t", "alice", previewFacts...)
	req := memgate.RecallRequest{Scope: scope("t", "alice"), Query: previewQuery}
	normal, err := eng.Recall(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	req.Preview = true
	pre, err := eng.Recall(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !contains(hitIDs(normal.Results), ms[0].ID) || !contains(hitIDs(pre.Results), ms[0].ID) {
		t.Fatalf("control: %s recalled %v, previewed %v", ms[0].ID, hitIDs(normal.Results), hitIDs(pre.Results))
	}
	for _, tc := range []struct {
		recallID, action string
	}{{normal.RecallID, engine.ActionRecall}, {pre.RecallID, engine.ActionRecallPreview}} {
		p, err := eng.Audit(ctx, scope("t", "alice"), memgate.AuditFilter{RecallID: tc.recallID})
		if err != nil || len(p.Events) != 1 {
			t.Fatalf("audit of %s: %+v, %v", tc.recallID, p, err)
		}
		if ev := p.Events[0]; ev.Action != tc.action || len(ev.MemoryIDs) == 0 || ev.MemoryIDs[0] != ms[0].ID {
			t.Fatalf("audit of %s: %+v, want action %s naming %s", tc.recallID, ev, tc.action, ms[0].ID)
		}
	}
	history, err := eng.Audit(ctx, scope("t", "alice"), memgate.AuditFilter{MemoryID: ms[0].ID, Action: engine.ActionRecall})
	if err != nil || len(history.Events) != 1 || history.Events[0].RecallID != normal.RecallID {
		t.Fatalf("recall history of %s: %+v, %v; want the recall %s only", ms[0].ID, history, err, normal.RecallID)
	}
}
