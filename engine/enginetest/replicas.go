// Package enginetest holds engine tests that every store backend runs,
// where a property needs engines and not just a store: replica
// consistency, with two engines over one database, as two memgate serve
// replicas (or two processes over one SQLite file) run.
//
// It lives outside engine's test files so that backend packages can call
// it: a backend's test is a few lines that open two handles on one new
// database,
//
//	func TestReplicas(t *testing.T) {
//		enginetest.RunReplicas(t, func(t *testing.T) (store.Store, store.Store) {
//			path := filepath.Join(t.TempDir(), "m.db")
//			return open(t, path), open(t, path)
//		})
//	}
//
// It uses only the exported API of memgate, engine and store, and the
// built-in embedder; it must never depend on a particular backend.
package enginetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/store"
)

// RunReplicas runs the replica consistency tests. newPair must return two
// handles on one new, empty database (each as a separate process would
// open it: its own connections) and close them when the test ends
// (t.Cleanup). Subtests run in parallel, each with its own pair.
//
// The guarantees tested, for engines A and B over one database:
//   - a memory remembered, approved or updated on A is recalled on B by
//     B's very next recall, with its current content;
//   - a memory revoked, deleted, superseded or forgotten on A is never
//     returned by B again, not even once, however stale B's index;
//   - of two updates of one memory with the same expected version, on A
//     and on B at once, exactly one succeeds and the other is a conflict;
//   - a B whose index is older than the pruned history of deletions
//     reloads and still answers correctly.
func RunReplicas(t *testing.T, newPair func(t *testing.T) (store.Store, store.Store)) {
	t.Helper()
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, a, b *engine.Engine, sa, sb store.Store)
	}{
		{"RememberedOnAIsRecalledOnBAtOnce", testRememberedAtOnce},
		{"ApprovedOnAIsRecalledOnBAtOnce", testApprovedAtOnce},
		{"UpdatedOnAIsSearchedOnBByItsNewWords", testUpdatedContent},
		{"ManyChangesOnA", testManyChanges},
		{"LeftOnANeverReturnsFromB", testNeverReturns},
		{"ForgottenOnAThenRememberedAgain", testForgetThenRemember},
		{"ConcurrentUpdatesOneWins", testConcurrentUpdates},
		{"ResetAfterPrunedHistory", testResetAfterPrune},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sa, sb := newPair(t)
			tc.run(t, newEngine(t, sa), newEngine(t, sb), sa, sb)
		})
	}
}

func newEngine(t *testing.T, s store.Store) *engine.Engine {
	t.Helper()
	eng, err := engine.New(engine.Config{Store: s, Embedder: builtin.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

const tenant = "acme"

var alice = memgate.Scope{Tenant: tenant, Principal: "alice"}

// Contents on distinct topics: a query for one shares no word with the
// others.
var topics = []struct{ content, query string }{
	{"Alice adopted a golden retriever puppy named Biscuit in March.", "golden retriever puppy Biscuit adopted"},
	{"The quarterly budget review happens in the Lisbon office every April.", "quarterly budget review Lisbon office"},
	{"Alice is learning to play the cello with a teacher from Vienna.", "cello lessons teacher Vienna"},
	{"Her favourite hiking trail climbs through the pine forest above Chamonix.", "hiking trail pine forest Chamonix"},
}

// noFloor turns the relevance floor off: whatever the index proposes and
// the store admits comes back, so a test sees exactly what the index held.
var noFloor = func() *float64 { f := 0.0; return &f }()

func remember(t *testing.T, eng *engine.Engine, sc memgate.Scope, contents ...string) []*memgate.Memory {
	t.Helper()
	rs := make([]engine.RememberRequest, len(contents))
	for i, c := range contents {
		rs[i] = engine.RememberRequest{Memory: memgate.Memory{Tenant: sc.Tenant, Principal: sc.Principal, Kind: memgate.KindFact, Source: memgate.SourceUser, Content: c}}
	}
	out, err := eng.RememberBatch(t.Context(), rs)
	if err != nil {
		t.Fatalf("remember: %v", err)
	}
	ms := make([]*memgate.Memory, len(out))
	for i, r := range out {
		if r.Deduplicated {
			t.Fatalf("remember %q: folded into %s", contents[i], r.ID)
		}
		ms[i] = r.Memory
	}
	return ms
}

// recall returns the ids B's recall of query returns, with the floor off
// (minScore nil) or at its default.
func recall(t *testing.T, eng *engine.Engine, sc memgate.Scope, query string, minScore *float64) []string {
	t.Helper()
	res, err := eng.Recall(t.Context(), engine.RecallRequest{Scope: sc, Query: query, K: engine.MaxK, MinScore: minScore})
	if err != nil {
		t.Fatalf("recall %q: %v", query, err)
	}
	ids := make([]string, len(res.Results))
	for i, h := range res.Results {
		ids[i] = h.Memory.ID
	}
	return ids
}

func testRememberedAtOnce(t *testing.T, a, b *engine.Engine, _, _ store.Store) {
	base := remember(t, a, alice, topics[0].content)
	// B has the partition in its index before A remembers, and finds
	// nothing for the query yet.
	if ids := recall(t, b, alice, topics[0].query, nil); !slices.Contains(ids, base[0].ID) {
		t.Fatalf("control: B does not recall what A remembered before B loaded: %v", ids)
	}
	if ids := recall(t, b, alice, topics[1].query, nil); len(ids) != 0 {
		t.Fatalf("control: B recalls %v before A remembers", ids)
	}
	m := remember(t, a, alice, topics[1].content)[0]
	if ids := recall(t, b, alice, topics[1].query, nil); !slices.Contains(ids, m.ID) {
		t.Fatalf("remembered on A, not recalled on B's next recall: %v", ids)
	}
	// A batch, and a principal B never loaded.
	bob := memgate.Scope{Tenant: tenant, Principal: "bob"}
	for _, sc := range []memgate.Scope{alice, bob} {
		ms := remember(t, a, sc, topics[2].content, topics[3].content)
		for i, m := range ms {
			if ids := recall(t, b, sc, topics[2+i].query, nil); !slices.Contains(ids, m.ID) {
				t.Fatalf("%s: remembered on A in a batch, not recalled on B: %v", sc.Principal, ids)
			}
		}
	}
}

func testApprovedAtOnce(t *testing.T, a, b *engine.Engine, _, _ store.Store) {
	remember(t, a, alice, topics[0].content)
	held, err := a.Remember(t.Context(), engine.RememberRequest{Memory: memgate.Memory{Tenant: tenant, Principal: "alice",
		Kind: memgate.KindPreference, Source: memgate.SourceAssistant, Content: topics[1].content}})
	if err != nil {
		t.Fatal(err)
	}
	if held.Status != memgate.StatusPending {
		t.Fatalf("control: an assistant's preference is %s, want pending", held.Status)
	}
	if ids := recall(t, b, alice, topics[1].query, noFloor); slices.Contains(ids, held.ID) {
		t.Fatal("pending memory recalled on B")
	}
	if _, err := a.Approve(t.Context(), alice, held.ID, held.Version); err != nil {
		t.Fatal(err)
	}
	if ids := recall(t, b, alice, topics[1].query, nil); !slices.Contains(ids, held.ID) {
		t.Fatalf("approved on A, not recalled on B's next recall: %v", ids)
	}
}

func testUpdatedContent(t *testing.T, a, b *engine.Engine, _, _ store.Store) {
	m := remember(t, a, alice, topics[1].content, topics[0].content)[0]
	if ids := recall(t, b, alice, topics[1].query, nil); !slices.Contains(ids, m.ID) {
		t.Fatalf("control: B does not recall the memory by its words: %v", ids)
	}
	if ids := recall(t, b, alice, topics[2].query, nil); slices.Contains(ids, m.ID) {
		t.Fatalf("control: B recalls the memory by words it does not hold yet: %v", ids)
	}
	content := topics[2].content
	if _, err := a.Update(t.Context(), alice, m.ID, m.Version, engine.Patch{Content: &content}); err != nil {
		t.Fatal(err)
	}
	if ids := recall(t, b, alice, topics[2].query, nil); !slices.Contains(ids, m.ID) {
		t.Fatalf("updated on A, not found on B by its new words: %v", ids)
	}
	if ids := recall(t, b, alice, topics[1].query, nil); slices.Contains(ids, m.ID) {
		t.Fatalf("updated on A, still found on B by its old words: %v", ids)
	}
}

// testManyChanges: more changes than one read of changes returns, while B
// holds the partition. B holds more memories than the changes, so that it
// catches up across reads rather than loading the partition anew (which a
// partition further behind than it is large does).
func testManyChanges(t *testing.T, a, b *engine.Engine, _, _ store.Store) {
	var held []string
	for i := range 1250 {
		held = append(held, fmt.Sprintf("Background fact %d about the quarterly calendar.", i))
	}
	for chunk := range slices.Chunk(held, 500) {
		remember(t, a, alice, chunk...)
	}
	remember(t, a, alice, topics[0].content)
	recall(t, b, alice, topics[0].query, nil)
	var contents []string
	for i := range 1200 {
		contents = append(contents, fmt.Sprintf("Routine note %d about the weekly grocery list.", i))
	}
	var last *memgate.Memory
	for chunk := range slices.Chunk(contents, 400) {
		ms := remember(t, a, alice, chunk...)
		last = ms[len(ms)-1]
	}
	first := remember(t, a, alice, topics[3].content)[0]
	if ids := recall(t, b, alice, topics[3].query, nil); !slices.Contains(ids, first.ID) {
		t.Fatalf("after 1200 changes on A, B does not recall the last memory: %v", ids)
	}
	if ids := recall(t, b, alice, "Routine note 1199 about the weekly grocery list", noFloor); !slices.Contains(ids, last.ID) {
		t.Fatalf("after 1200 changes on A, B does not propose the 1200th: %v", ids)
	}
}

// testNeverReturns: A revokes, deletes and supersedes memories while B
// recalls in a loop (two recalls at a time, so catch-ups race): no recall
// of B that starts after a change on A has returned returns the memory
// that left.
func testNeverReturns(t *testing.T, a, b *engine.Engine, _, _ store.Store) {
	const n = 24
	var contents []string
	for i := range n {
		contents = append(contents, fmt.Sprintf("Shared garden plot %d grows tomatoes, basil and courgettes.", i))
	}
	ms := remember(t, a, alice, contents...)
	const query = "garden plot tomatoes basil courgettes"
	ids := recall(t, b, alice, query, noFloor)
	for _, m := range ms {
		if !slices.Contains(ids, m.ID) {
			t.Fatalf("control: B does not recall %s before anything changes: %v", m.ID, ids)
		}
	}

	var mu sync.Mutex
	gone := map[string]string{} // id → how it left
	var nonEmpty int
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				mu.Lock()
				left := make(map[string]string, len(gone))
				for id, how := range gone {
					left[id] = how
				}
				mu.Unlock()
				res, err := b.Recall(t.Context(), engine.RecallRequest{Scope: alice, Query: query, K: engine.MaxK, MinScore: noFloor})
				if err != nil {
					t.Errorf("recall on B: %v", err)
					return
				}
				for _, h := range res.Results {
					if how, ok := left[h.Memory.ID]; ok {
						t.Errorf("B returned %s, %s on A before the recall began", h.Memory.ID, how)
					}
				}
				mu.Lock()
				if len(res.Results) > 0 {
					nonEmpty++
				}
				mu.Unlock()
				// Leave A room to write: the loops would otherwise take
				// most of a small machine.
				time.Sleep(time.Millisecond)
			}
		})
	}

	ctx := t.Context()
	for i, m := range ms {
		var how string
		var err error
		switch i % 3 {
		case 0:
			how = "revoked"
			_, err = a.Revoke(ctx, alice, m.ID, "wrong")
		case 1:
			how = "deleted"
			err = a.Delete(ctx, alice, m.ID)
		case 2:
			how = "superseded"
			_, _, err = a.Supersede(ctx, alice, m.ID, engine.RememberRequest{Memory: memgate.Memory{Source: memgate.SourceUser,
				Content: fmt.Sprintf("Shared garden plot %d now grows only basil and courgettes, no tomatoes.", i)}})
		}
		if err != nil {
			close(done)
			wg.Wait()
			t.Fatalf("%s %s on A: %v", how, m.ID, err)
		}
		mu.Lock()
		gone[m.ID] = how
		mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	close(done)
	wg.Wait()
	if nonEmpty == 0 {
		t.Fatal("control: no recall on B returned anything while A changed the partition")
	}
	t.Logf("%d recalls on B returned memories while A changed %d", nonEmpty, n)
	// Every superseding memory is recalled on B, and nothing that left.
	ids = recall(t, b, alice, query, noFloor)
	if len(ids) != n/3 {
		t.Fatalf("after the changes B recalls %d memories, want the %d that superseded others: %v", len(ids), n/3, ids)
	}
	for _, id := range ids {
		if _, ok := gone[id]; ok {
			t.Fatalf("B recalls %s, %s", id, gone[id])
		}
	}
}

func testForgetThenRemember(t *testing.T, a, b *engine.Engine, _, _ store.Store) {
	old := remember(t, a, alice, topics[0].content, topics[1].content)
	if ids := recall(t, b, alice, topics[0].query, nil); !slices.Contains(ids, old[0].ID) {
		t.Fatalf("control: %v", ids)
	}
	if _, err := a.Forget(t.Context(), memgate.Scope{Tenant: tenant, Principal: "alice"}); err != nil {
		t.Fatal(err)
	}
	if ids := recall(t, b, alice, topics[0].query+" "+topics[1].query, noFloor); len(ids) != 0 {
		t.Fatalf("forgotten on A, recalled on B: %v", ids)
	}
	m := remember(t, a, alice, topics[0].content)[0]
	if ids := recall(t, b, alice, topics[0].query, noFloor); len(ids) != 1 || ids[0] != m.ID {
		t.Fatalf("remembered on A after a forget: B recalls %v, want only %s", ids, m.ID)
	}
}

// testConcurrentUpdates: A and B update one memory at once with the same
// expected version, round after round: one wins, the other is a conflict,
// and both then see the winner's content.
func testConcurrentUpdates(t *testing.T, a, b *engine.Engine, _, _ store.Store) {
	m := remember(t, a, alice, topics[0].content)[0]
	version := m.Version
	for round := range 15 {
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, 2)
		outs := make([]*memgate.Memory, 2)
		for i, eng := range []*engine.Engine{a, b} {
			wg.Go(func() {
				content := fmt.Sprintf("%s Round %d was written by %c.", topics[0].content, round, 'A'+i)
				<-start
				outs[i], errs[i] = eng.Update(t.Context(), alice, m.ID, version, engine.Patch{Content: &content})
			})
		}
		close(start)
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil:
				if won >= 0 {
					t.Fatalf("round %d: both updates at version %d succeeded", round, version)
				}
				won = i
			case memgate.ErrorCode(err) != memgate.ECONFLICT:
				t.Fatalf("round %d: update on %c: %v, want a conflict or success", round, 'A'+i, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: both updates at version %d failed: %v", round, version, errs)
		}
		if outs[won].Version != version+1 {
			t.Fatalf("round %d: winner at version %d, want %d", round, outs[won].Version, version+1)
		}
		for _, eng := range []*engine.Engine{a, b} {
			got, err := eng.Get(t.Context(), alice, m.ID)
			if err != nil || got.Content != outs[won].Content || got.Version != version+1 {
				t.Fatalf("round %d: stored %+v (%v), want the winner's", round, got, err)
			}
		}
		version++
	}
}

// testResetAfterPrune: B holds the partition at some version; A deletes a
// memory and the record of that deletion is pruned, so the store cannot
// tell B what changed. B reloads, and answers as if it had followed.
func testResetAfterPrune(t *testing.T, a, b *engine.Engine, sa, _ store.Store) {
	ms := remember(t, a, alice, topics[0].content, topics[1].content)
	if ids := recall(t, b, alice, topics[0].query, nil); !slices.Contains(ids, ms[0].ID) {
		t.Fatalf("control: %v", ids)
	}
	if err := a.Delete(t.Context(), alice, ms[1].ID); err != nil {
		t.Fatal(err)
	}
	added := remember(t, a, alice, topics[2].content)[0]
	n, err := sa.PruneChanges(t.Context(), time.Now().Add(time.Hour), 100)
	if err != nil || n != 1 {
		t.Fatalf("control: PruneChanges: %d, %v; want the one deletion", n, err)
	}
	ch, err := sa.ChangesSince(t.Context(), tenant, "alice", 1, 100)
	if err != nil || !ch.Reset {
		t.Fatalf("control: the store can still tell the changes: %+v, %v", ch, err)
	}
	if ids := recall(t, b, alice, topics[2].query, nil); !slices.Contains(ids, added.ID) {
		t.Fatalf("after a reset B does not recall what A added: %v", ids)
	}
	ids := recall(t, b, alice, topics[0].query+" "+topics[1].query+" "+topics[2].query, noFloor)
	slices.Sort(ids)
	want := []string{ms[0].ID, added.ID}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("after a reset B recalls %v, want %v", ids, want)
	}
}
