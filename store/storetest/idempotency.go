package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var idempotencyTests = []test{
	{"RetryReplaysTheFirstMemory", testIdempotentReplay},
	{"OtherRequestSameKeyConflicts", testIdempotentOtherRequest},
	{"KeyIsPerPartition", testIdempotentPartition},
	{"DedupFoldIsRecordedToo", testIdempotentFold},
	{"ReplayShowsTheMemoryAsItStands", testIdempotentStatus},
	{"DeletedMemoryConflicts", testIdempotentDeleted},
	{"BatchAllOrNone", testIdempotentBatch},
	{"ForgetDropsThePrincipalsKeys", testIdempotentForget},
	{"PruneOldestFirst", testIdempotentPrune},
	{"ConcurrentRetriesStoreOnce", testIdempotentConcurrent},
	{"RefusesInvalidKeys", testIdempotentInvalid},
}

// idem is an idempotency key with the hash of a request named req.
func idem(key, req string) store.IdempotencyKey {
	sum := sha256.Sum256([]byte(req))
	return store.IdempotencyKey{Key: key, RequestSHA256: hex.EncodeToString(sum[:])}
}

// rememberKeyed calls Remember with keys and fails on error.
func rememberKeyed(t *testing.T, s store.Store, ms []*memgate.Memory, keys ...store.IdempotencyKey) *store.WriteResult {
	t.Helper()
	res, err := s.Remember(t.Context(), ms, nil, keys...)
	if err != nil {
		t.Fatalf("Remember %v with keys: %v", idsOf(ms), err)
	}
	if len(res.Memories) != len(ms) || len(res.Deduplicated) != len(ms) || len(res.Replayed) != len(ms) {
		t.Fatalf("Remember %v: result %+v does not have one memory and flags per input", idsOf(ms), res)
	}
	return res
}

func countAll(t *testing.T, s store.Store, sc memgate.Scope) int {
	t.Helper()
	return len(listAll(t, s, sc, store.Filter{Statuses: memgate.Statuses, Now: now}))
}

func testIdempotentReplay(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	first := rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-first", "a fact")}, idem("k1", "req"))
	if first.Replayed[0] || first.Memories[0].ID != "m-first" {
		t.Fatalf("first call: replayed %v, id %s; want a new memory m-first", first.Replayed[0], first.Memories[0].ID)
	}
	// The retry comes with a new id and new times, as the engine makes them.
	retry := newMemory(alice, "m-retry", "a fact")
	retry.CreatedAt, retry.UpdatedAt = t1, t1
	again := rememberKeyed(t, s, []*memgate.Memory{retry}, idem("k1", "req"))
	if !again.Replayed[0] || again.Deduplicated[0] {
		t.Fatalf("retry: replayed %v, deduplicated %v; want replayed only", again.Replayed[0], again.Deduplicated[0])
	}
	requireEqualMemory(t, "replayed memory", first.Memories[0], again.Memories[0])
	requireGone(t, s, alice, "m-retry")
	if n := countAll(t, s, alice); n != 1 {
		t.Fatalf("after a retry alice has %d memories, want 1", n)
	}
	// Control: another key stores anew.
	other := rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-other", "a fact again")}, idem("k2", "req"))
	if other.Replayed[0] || other.Memories[0].ID != "m-other" {
		t.Fatalf("another key: replayed %v, id %s; want the new memory", other.Replayed[0], other.Memories[0].ID)
	}
	// And no key at all asks for nothing.
	none := rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-none", "no key")}, store.IdempotencyKey{})
	if none.Replayed[0] {
		t.Fatal("an empty key replayed")
	}
}

func testIdempotentOtherRequest(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-1", "first request")}, idem("k", "first"))
	_, err := s.Remember(t.Context(), []*memgate.Memory{newMemory(alice, "m-2", "second request")}, nil, idem("k", "second"))
	requireCode(t, "same key, other request", err, memgate.ECONFLICT, "idempotency_key")
	if !strings.HasSuffix(memgate.ErrorMessage(err), store.IdempotencyOtherRequest) {
		t.Fatalf("conflict message %q, want %q", memgate.ErrorMessage(err), store.IdempotencyOtherRequest)
	}
	requireGone(t, s, alice, "m-2")
	// The whole call fails: an input before it is not stored either.
	_, err = s.Remember(t.Context(), []*memgate.Memory{newMemory(alice, "m-3", "fine"), newMemory(alice, "m-4", "second request")},
		nil, idem("k3", "fine"), idem("k", "second"))
	requireCode(t, "batch with a reused key", err, memgate.ECONFLICT, "memories[1].idempotency_key")
	requireGone(t, s, alice, "m-3")
	// Control: k3 was not recorded, and works now.
	if res := rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-3", "fine")}, idem("k3", "fine")); res.Replayed[0] {
		t.Fatal("k3 replayed although the call that named it failed")
	}
}

func testIdempotentPartition(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	withAgent := alice
	withAgent.Agent = "bot"
	inConv := alice
	inConv.Conversation = "c1"
	rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-a", "alice's")}, idem("k", "req"))
	// The same key and request hash in every other partition stores anew
	// and never returns alice's memory.
	for i, sc := range []memgate.Scope{bob, aliceGlobex, withAgent, inConv} {
		mid := fmt.Sprintf("m-p%d", i)
		res := rememberKeyed(t, s, []*memgate.Memory{newMemory(sc, mid, "someone else's")}, idem("k", "req"))
		if res.Replayed[0] || res.Memories[0].ID != mid {
			t.Fatalf("%+v: replayed %v, got %s; want its own new memory %s", sc, res.Replayed[0], res.Memories[0].ID, mid)
		}
	}
	// Control: alice's own retry still replays.
	if res := rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-a2", "alice's")}, idem("k", "req")); !res.Replayed[0] || res.Memories[0].ID != "m-a" {
		t.Fatalf("alice's retry: replayed %v, got %s; want m-a", res.Replayed[0], res.Memories[0].ID)
	}
}

func testIdempotentFold(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	remember(t, s, nil, keyed(alice, "m-orig", "the fact", "sig:fact"))
	res := rememberKeyed(t, s, []*memgate.Memory{keyed(alice, "m-dup", "the fact", "sig:fact")}, idem("k", "req"))
	if !res.Deduplicated[0] || res.Memories[0].ID != "m-orig" || res.Memories[0].SeenCount != 2 {
		t.Fatalf("first keyed call: deduplicated %v into %s seen %d; want folded into m-orig, seen 2",
			res.Deduplicated[0], res.Memories[0].ID, res.Memories[0].SeenCount)
	}
	again := rememberKeyed(t, s, []*memgate.Memory{keyed(alice, "m-dup2", "the fact", "sig:fact")}, idem("k", "req"))
	if !again.Replayed[0] || again.Deduplicated[0] || again.Memories[0].ID != "m-orig" || again.Memories[0].SeenCount != 2 {
		t.Fatalf("retry: replayed %v deduplicated %v, %s seen %d; want a replay of m-orig still seen twice",
			again.Replayed[0], again.Deduplicated[0], again.Memories[0].ID, again.Memories[0].SeenCount)
	}
	// Control: without the key the same memory folds again.
	if res := remember(t, s, nil, keyed(alice, "m-dup3", "the fact", "sig:fact")); res.Memories[0].SeenCount != 3 {
		t.Fatalf("unkeyed fold: seen %d, want 3", res.Memories[0].SeenCount)
	}
}

func testIdempotentStatus(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-1", "a fact")}, idem("k", "req"))
	if _, err := s.SetStatus(t.Context(), alice, "m-1", store.StatusChange{
		From: []memgate.Status{memgate.StatusActive}, To: memgate.StatusRevoked, Reason: "wrong", At: t1,
	}); err != nil {
		t.Fatal(err)
	}
	res := rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-2", "a fact")}, idem("k", "req"))
	if !res.Replayed[0] || res.Memories[0].ID != "m-1" || res.Memories[0].Status != memgate.StatusRevoked {
		t.Fatalf("retry after revoke: replayed %v, %s %s; want m-1 as it stands, revoked", res.Replayed[0], res.Memories[0].ID, res.Memories[0].Status)
	}
	requireGone(t, s, alice, "m-2")
}

func testIdempotentDeleted(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-1", "a fact")}, idem("k", "req"))
	if err := s.Delete(t.Context(), alice, "m-1"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Remember(t.Context(), []*memgate.Memory{newMemory(alice, "m-2", "a fact")}, nil, idem("k", "req"))
	requireCode(t, "retry after delete", err, memgate.ECONFLICT, "idempotency_key")
	if !strings.HasSuffix(memgate.ErrorMessage(err), store.IdempotencyDeleted) {
		t.Fatalf("message %q, want %q", memgate.ErrorMessage(err), store.IdempotencyDeleted)
	}
	requireGone(t, s, alice, "m-2")
}

func testIdempotentBatch(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	batch := func(suffix string) []*memgate.Memory {
		return []*memgate.Memory{newMemory(alice, "m-a"+suffix, "first"), newMemory(alice, "m-b"+suffix, "second"), newMemory(bob, "m-c"+suffix, "third")}
	}
	keys := []store.IdempotencyKey{idem("k#0", "a"), idem("k#1", "b"), idem("k#2", "c")}
	first := rememberKeyed(t, s, batch(""), keys...)
	again := rememberKeyed(t, s, batch("-retry"), keys...)
	for i := range 3 {
		if first.Replayed[i] || !again.Replayed[i] || again.Memories[i].ID != first.Memories[i].ID {
			t.Fatalf("item %d: first replayed %v, retry replayed %v with %s; want the retry to replay %s",
				i, first.Replayed[i], again.Replayed[i], again.Memories[i].ID, first.Memories[i].ID)
		}
	}
	if n := countAll(t, s, acmeAll); n != 3 {
		t.Fatalf("acme has %d memories after a batch and its retry, want 3", n)
	}
	// Mixed: one new item and one retry in a call.
	mixed := rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-new", "new"), newMemory(alice, "m-x", "first")}, idem("n#0", "n"), idem("k#0", "a"))
	if mixed.Replayed[0] || !mixed.Replayed[1] || mixed.Memories[1].ID != "m-a" {
		t.Fatalf("mixed call: replayed %v, second is %s; want new then a replay of m-a", mixed.Replayed, mixed.Memories[1].ID)
	}
	_, err := s.Remember(t.Context(), batch("-twice"), nil, idem("d", "a"), idem("d", "b"), store.IdempotencyKey{})
	requireCode(t, "one key twice in a call", err, memgate.EINVALID, "memories[1].idempotency_key")
	requireGone(t, s, alice, "m-a-twice")
}

func testIdempotentForget(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-a", "alice's")}, idem("k", "req"))
	rememberKeyed(t, s, []*memgate.Memory{newMemory(bob, "m-b", "bob's")}, idem("k", "req"))
	if _, err := s.Forget(t.Context(), "acme", "alice"); err != nil {
		t.Fatal(err)
	}
	// alice's record went with her memories: the key is free again (a
	// replay would otherwise answer that its memory was deleted).
	if res := rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-a2", "alice's")}, idem("k", "req")); res.Replayed[0] || res.Memories[0].ID != "m-a2" {
		t.Fatalf("after forget: replayed %v, %s; want a new memory", res.Replayed[0], res.Memories[0].ID)
	}
	// Control: bob's record stays.
	if res := rememberKeyed(t, s, []*memgate.Memory{newMemory(bob, "m-b2", "bob's")}, idem("k", "req")); !res.Replayed[0] || res.Memories[0].ID != "m-b" {
		t.Fatalf("bob after alice's forget: replayed %v, %s; want a replay of m-b", res.Replayed[0], res.Memories[0].ID)
	}
}

func testIdempotentPrune(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	for i := range 5 {
		rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, id(i), fmt.Sprintf("fact %d", i))}, idem(fmt.Sprintf("k%d", i), "req"))
	}
	for _, limit := range []int{0, -1} {
		if n, err := s.PruneIdempotency(t.Context(), time.Now().Add(time.Hour), limit); err != nil || n != 0 {
			t.Fatalf("PruneIdempotency limit %d: %d, %v; want nothing", limit, n, err)
		}
	}
	// Records are stamped with the store's clock: none is an hour old.
	if n, err := s.PruneIdempotency(t.Context(), time.Now().Add(-time.Hour), 100); err != nil || n != 0 {
		t.Fatalf("PruneIdempotency of records older than an hour: %d, %v", n, err)
	}
	if n, err := s.PruneIdempotency(t.Context(), time.Now().Add(time.Hour), 2); err != nil || n != 2 {
		t.Fatalf("PruneIdempotency limit 2: %d, %v", n, err)
	}
	// The oldest went first: k0 and k1 store anew, k2 still replays.
	for i, wantReplay := range []bool{false, false, true} {
		res := rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, fmt.Sprintf("m-again-%d", i), fmt.Sprintf("fact %d", i))}, idem(fmt.Sprintf("k%d", i), "req"))
		if res.Replayed[0] != wantReplay {
			t.Fatalf("k%d after pruning two: replayed %v, want %v", i, res.Replayed[0], wantReplay)
		}
	}
	// Memories are untouched by pruning.
	if n := countAll(t, s, alice); n != 7 {
		t.Fatalf("alice has %d memories, want 7 (5, and 2 stored again)", n)
	}
}

func testIdempotentConcurrent(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	const workers = 8
	res := make([]*store.WriteResult, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			res[w], errs[w] = s.Remember(t.Context(), []*memgate.Memory{newMemory(alice, fmt.Sprintf("m-w%d", w), "the same request")}, nil, idem("k", "req"))
		})
	}
	wg.Wait()
	stored, id := 0, ""
	for w := range workers {
		if errs[w] != nil {
			t.Fatalf("worker %d: %v", w, errs[w])
		}
		if !res[w].Replayed[0] {
			stored++
			id = res[w].Memories[0].ID
		}
	}
	if stored != 1 {
		t.Fatalf("%d of %d concurrent calls with one key stored, want exactly 1", stored, workers)
	}
	for w := range workers {
		if res[w].Memories[0].ID != id {
			t.Fatalf("worker %d got %s, want %s", w, res[w].Memories[0].ID, id)
		}
	}
	if n := countAll(t, s, alice); n != 1 {
		t.Fatalf("alice has %d memories, want 1", n)
	}
}

func testIdempotentInvalid(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	two := []*memgate.Memory{newMemory(alice, "m-1", "one"), newMemory(alice, "m-2", "two")}
	cases := []struct {
		name  string
		keys  []store.IdempotencyKey
		field string
	}{
		{"one key for two memories", []store.IdempotencyKey{idem("k", "r")}, "idempotency_key"},
		{"space in a key", []store.IdempotencyKey{idem("a b", "r"), {}}, "memories[0].idempotency_key"},
		{"key too long", []store.IdempotencyKey{{}, idem(string(make([]byte, 200)), "r")}, "memories[1].idempotency_key"},
		{"no request hash", []store.IdempotencyKey{{Key: "k"}, {}}, "memories[0].idempotency_key"},
		{"upper-case hash", []store.IdempotencyKey{{Key: "k", RequestSHA256: "AB" + idem("k", "r").RequestSHA256[2:]}, {}}, "memories[0].idempotency_key"},
	}
	for _, c := range cases {
		_, err := s.Remember(t.Context(), two, nil, c.keys...)
		requireCode(t, c.name, err, memgate.EINVALID, c.field)
	}
	requireGone(t, s, alice, "m-1")
	// Control: the same memories with valid keys are stored.
	rememberKeyed(t, s, two, idem("k1", "r"), idem("k2", "r"))
}
