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
	{"DeleteDropsTheMemorysKeys", testIdempotentDeleted},
	{"BatchAllOrNone", testIdempotentBatch},
	{"ForgetDropsThePrincipalsKeys", testIdempotentForget},
	{"PruneOldestFirst", testIdempotentPrune},
	{"ConcurrentRetriesStoreOnce", testIdempotentConcurrent},
	{"RefusesInvalidKeys", testIdempotentInvalid},
	{"SupersedeRetryReplays", testIdempotentSupersedeReplay},
	{"SupersedeOtherRequestSameKeyConflicts", testIdempotentSupersedeOtherRequest},
	{"SupersedeDeleteDropsTheMemorysKeys", testIdempotentSupersedeDeleted},
	{"SupersedeKeyIsPerPartition", testIdempotentSupersedePartition},
	{"SupersedeForgetDropsThePrincipalsKeys", testIdempotentSupersedeForget},
	{"SupersedeKeyIsPruned", testIdempotentSupersedePrune},
	{"SupersedeConcurrentRetriesSupersedeOnce", testIdempotentSupersedeConcurrent},
	{"SupersedeAnswersAKeyRememberRecorded", testIdempotentSupersedeApproved},
	{"SupersedeRefusesInvalidKeys", testIdempotentSupersedeInvalid},
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

// testIdempotentDeleted: every way a memory is deleted (Delete, the
// sweep's DeleteExpired, a retention eviction) drops the records that name
// it, key and request hash with them (the hash would confirm a guessed
// content): a retry with the same key, even with another request's hash,
// is a new request. The control: the record of a memory that stays still
// replays.
func testIdempotentDeleted(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-1", "a fact")}, idem("k", "req"))
	rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-keep", "another fact")}, idem("k-keep", "req"))
	if err := s.Delete(t.Context(), alice, "m-1"); err != nil {
		t.Fatal(err)
	}
	if res := rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-2", "another request")}, idem("k", "other")); res.Replayed[0] || res.Memories[0].ID != "m-2" {
		t.Fatalf("another request with the deleted memory's key: replayed %v, %s; want a new memory (no record left)", res.Replayed[0], res.Memories[0].ID)
	}
	if res := rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-3", "another fact")}, idem("k-keep", "req")); !res.Replayed[0] || res.Memories[0].ID != "m-keep" {
		t.Fatalf("control: retry of a memory that stays: replayed %v, %s; want a replay of m-keep", res.Replayed[0], res.Memories[0].ID)
	}

	// The sweep's delete.
	exp := newMemory(alice, "m-exp", "expires")
	exp.ExpiresAt = ptr(t1)
	rememberKeyed(t, s, []*memgate.Memory{exp}, idem("k-exp", "req"))
	if refs, err := s.DeleteExpired(t.Context(), t2, 10); err != nil || len(refs) != 1 || refs[0].ID != "m-exp" {
		t.Fatalf("DeleteExpired: %+v, %v", refs, err)
	}
	if res := rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-exp2", "expires")}, idem("k-exp", "other")); res.Replayed[0] {
		t.Fatal("a key of a swept memory replayed: its record outlived it")
	}

	// A retention eviction (bob's facts, capped at 1).
	caps := map[memgate.Kind]int{memgate.KindFact: 1}
	first := newMemory(bob, "m-b1", "bob's first")
	if _, err := s.Remember(t.Context(), []*memgate.Memory{first}, caps, idem("k-ev", "req")); err != nil {
		t.Fatal(err)
	}
	second := newMemory(bob, "m-b2", "bob's second")
	second.CreatedAt, second.UpdatedAt = t1, t1
	res, err := s.Remember(t.Context(), []*memgate.Memory{second}, caps, idem("k-ev2", "req"))
	if err != nil || len(res.Evicted) != 1 || res.Evicted[0].ID != "m-b1" {
		t.Fatalf("eviction: %+v, %v; want m-b1 evicted", res, err)
	}
	third := newMemory(bob, "m-b3", "bob's third")
	third.CreatedAt, third.UpdatedAt = t2, t2
	if res, err := s.Remember(t.Context(), []*memgate.Memory{third}, nil, idem("k-ev", "other")); err != nil || res.Replayed[0] {
		t.Fatalf("a key of an evicted memory: %+v, %v; want a new memory (no record left)", res, err)
	}
	if res := rememberKeyed(t, s, []*memgate.Memory{newMemory(bob, "m-b4", "bob's second")}, idem("k-ev2", "req")); !res.Replayed[0] || res.Memories[0].ID != "m-b2" {
		t.Fatalf("control: retry of bob's standing memory: replayed %v, %s; want a replay of m-b2", res.Replayed[0], res.Memories[0].ID)
	}
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
	if _, err := s.Forget(t.Context(), "acme", "alice", pseudonymOf("acme", "alice")); err != nil {
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
	storedOnce(t, s, "concurrent calls with one key", func(w int) (string, bool, error) {
		res, err := s.Remember(t.Context(), []*memgate.Memory{newMemory(alice, fmt.Sprintf("m-w%d", w), "the same request")}, nil, idem("k", "req"))
		if err != nil {
			return "", false, err
		}
		return res.Memories[0].ID, res.Replayed[0], nil
	})
	if n := countAll(t, s, alice); n != 1 {
		t.Fatalf("alice has %d memories, want 1", n)
	}
}

// storedOnce runs call(w) for 8 workers at once and requires that exactly
// one stored (replayed false) and that all answered its id, which it
// returns. The calls start together, on a store that has just served as
// many reads at once (a pool opens its connections then): without both, they
// can run one after another while the pool dials, and pass without ever
// overlapping.
func storedOnce(t *testing.T, s store.Store, what string, call func(w int) (id string, replayed bool, err error)) string {
	t.Helper()
	const workers = 8
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { _, errs[w] = s.Get(t.Context(), alice, "m-warm-up") })
	}
	wg.Wait()
	for w, err := range errs {
		if memgate.ErrorCode(err) != memgate.ENOTFOUND {
			t.Fatalf("warm-up read %d: %v, want not_found", w, err)
		}
	}
	ids := make([]string, workers)
	replayed := make([]bool, workers)
	start := make(chan struct{})
	for w := range workers {
		wg.Go(func() {
			<-start
			ids[w], replayed[w], errs[w] = call(w)
		})
	}
	close(start)
	wg.Wait()
	stored, id := 0, ""
	for w := range workers {
		if errs[w] != nil {
			t.Fatalf("worker %d: %v", w, errs[w])
		}
		if !replayed[w] {
			stored++
			id = ids[w]
		}
	}
	if stored != 1 {
		t.Fatalf("%d of %d %s stored, want exactly 1", stored, workers, what)
	}
	for w := range workers {
		if ids[w] != id {
			t.Fatalf("worker %d got %s, want %s", w, ids[w], id)
		}
	}
	return id
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

// superseding returns the memory id with content that supersedes oldID in
// sc, as the engine hands it to Supersede.
func superseding(sc memgate.Scope, oldID, id, content string) *memgate.Memory {
	m := newMemory(sc, id, content)
	m.Supersedes = oldID
	return m
}

// supersedeKeyed calls Supersede with keys and fails on error.
func supersedeKeyed(t *testing.T, s store.Store, sc memgate.Scope, oldID string, next *memgate.Memory, keys ...store.IdempotencyKey) *store.SupersedeResult {
	t.Helper()
	res, err := s.Supersede(t.Context(), sc, oldID, next, t1, keys...)
	if err != nil {
		t.Fatalf("Supersede %s by %s with keys: %v", oldID, next.ID, err)
	}
	if res == nil || res.Next == nil || (res.Old == nil) != res.Replayed {
		t.Fatalf("Supersede %s by %s: result %+v; want next, and old unless replayed", oldID, next.ID, res)
	}
	return res
}

// requireNoChange fails unless sc's partition (tenant, principal) is
// still at the change sequence before, with no change after it.
func requireNoChange(t *testing.T, s store.Store, what string, sc memgate.Scope, before int64) {
	t.Helper()
	ch, err := s.ChangesSince(t.Context(), sc.Tenant, sc.Principal, before, 100)
	if err != nil {
		t.Fatal(err)
	}
	if got := head(t, s, sc); got != before || len(ch.Memories) != 0 || len(ch.Deleted) != 0 || ch.Head != before {
		t.Fatalf("%s: head %d → %d, changes %v deleted %v; want nothing changed", what, before, got, idsOf(ch.Memories), ch.Deleted)
	}
}

func testIdempotentSupersedeReplay(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, newMemory(alice, "m-old", "lives in Paris"))
	first := supersedeKeyed(t, s, alice, "m-old", superseding(alice, "m-old", "m-next", "lives in Lyon"), idem("k", "req"))
	if first.Replayed || first.Next.ID != "m-next" || first.Old.Status != memgate.StatusSuperseded {
		t.Fatalf("first call: replayed %v, next %s, old %s; want m-next superseding m-old", first.Replayed, first.Next.ID, first.Old.Status)
	}
	before := head(t, s, alice)

	// The retry comes with a new id and new times, as the engine makes
	// them; the old memory is superseded now.
	retry := superseding(alice, "m-old", "m-retry", "lives in Lyon")
	retry.CreatedAt, retry.UpdatedAt = t2, t2
	again, err := s.Supersede(t.Context(), alice, "m-old", retry, t2, idem("k", "req"))
	if err != nil {
		t.Fatalf("retry: %v; want a replay", err)
	}
	if !again.Replayed || again.Old != nil {
		t.Fatalf("retry: replayed %v, old %v; want a replay without old", again.Replayed, again.Old)
	}
	requireEqualMemory(t, "replayed next", first.Next, again.Next)
	requireUnchanged(t, s, alice, first.Old)
	requireUnchanged(t, s, alice, first.Next)
	requireGone(t, s, alice, "m-retry")
	requireNoChange(t, s, "after a replay", alice, before)

	// The record names the memory as it stands, whatever became of the
	// old one.
	if _, err := s.SetStatus(t.Context(), alice, "m-next", revoke("wrong", t2)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context(), alice, "m-old"); err != nil {
		t.Fatal(err)
	}
	before = head(t, s, alice)
	late := supersedeKeyed(t, s, alice, "m-old", superseding(alice, "m-old", "m-late", "lives in Lyon"), idem("k", "req"))
	if !late.Replayed || late.Next.ID != "m-next" || late.Next.Status != memgate.StatusRevoked {
		t.Fatalf("retry after revoke and delete: replayed %v, %s %s; want m-next as it stands, revoked", late.Replayed, late.Next.ID, late.Next.Status)
	}
	requireGone(t, s, alice, "m-late")
	requireNoChange(t, s, "after a late replay", alice, before)

	// Control: another key on a superseded memory is a new request, and
	// fails as one.
	mustInsert(t, s, newMemory(alice, "m-old2", "drinks tea"))
	supersedeKeyed(t, s, alice, "m-old2", superseding(alice, "m-old2", "m-next2", "drinks coffee"), idem("k2", "req"))
	_, err = s.Supersede(t.Context(), alice, "m-old2", superseding(alice, "m-old2", "m-next3", "drinks coffee"), t2, idem("k3", "req"))
	requireCode(t, "another key on a superseded memory", err, memgate.ECONFLICT, "")
	requireGone(t, s, alice, "m-next3")
}

func testIdempotentSupersedeOtherRequest(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, newMemory(alice, "m-old", "lives in Paris"), newMemory(alice, "m-other", "drinks tea"))
	first := supersedeKeyed(t, s, alice, "m-old", superseding(alice, "m-old", "m-next", "lives in Lyon"), idem("k", "first"))
	other := mustGet(t, s, alice, "m-other")
	before := head(t, s, alice)
	cases := []struct {
		name  string
		oldID string
	}{
		// The key is looked up first: a conflict on the key, not on the
		// old memory's status.
		{"same old memory", "m-old"},
		{"active old memory", "m-other"},
	}
	for _, c := range cases {
		_, err := s.Supersede(t.Context(), alice, c.oldID, superseding(alice, c.oldID, "m-2", "something else"), t2, idem("k", "second"))
		requireCode(t, c.name, err, memgate.ECONFLICT, "idempotency_key")
		if !strings.HasSuffix(memgate.ErrorMessage(err), store.IdempotencyOtherRequest) {
			t.Fatalf("%s: message %q, want %q", c.name, memgate.ErrorMessage(err), store.IdempotencyOtherRequest)
		}
		requireGone(t, s, alice, "m-2")
		requireUnchanged(t, s, alice, first.Old)
		requireUnchanged(t, s, alice, other)
		requireNoChange(t, s, c.name, alice, before)
	}
	// A Remember with the key is another request too: records are shared.
	_, err := s.Remember(t.Context(), []*memgate.Memory{newMemory(alice, "m-3", "something else")}, nil, idem("k", "second"))
	requireCode(t, "Remember with the key", err, memgate.ECONFLICT, "idempotency_key")
	// Control: the first request's hash replays, in Remember too, and a
	// new key supersedes the active memory.
	if res := rememberKeyed(t, s, []*memgate.Memory{newMemory(alice, "m-4", "lives in Lyon")}, idem("k", "first")); !res.Replayed[0] || res.Memories[0].ID != "m-next" {
		t.Fatalf("Remember with the key and the first hash: replayed %v, %s; want a replay of m-next", res.Replayed[0], res.Memories[0].ID)
	}
	if res := supersedeKeyed(t, s, alice, "m-other", superseding(alice, "m-other", "m-2", "something else"), idem("k2", "second")); res.Replayed {
		t.Fatal("a new key replayed")
	}
}

// testIdempotentSupersedeDeleted: deleting the memory a supersession wrote
// drops its record; a retry is then a new supersession, refused as one
// because the old memory is no longer active.
func testIdempotentSupersedeDeleted(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, newMemory(alice, "m-old", "lives in Paris"))
	first := supersedeKeyed(t, s, alice, "m-old", superseding(alice, "m-old", "m-next", "lives in Lyon"), idem("k", "req"))
	if err := s.Delete(t.Context(), alice, "m-next"); err != nil {
		t.Fatal(err)
	}
	before := head(t, s, alice)
	_, err := s.Supersede(t.Context(), alice, "m-old", superseding(alice, "m-old", "m-retry", "lives in Lyon"), t2, idem("k", "req"))
	requireCode(t, "retry after delete", err, memgate.ECONFLICT, "")
	if memgate.ErrorField(err) == "idempotency_key" {
		t.Fatalf("retry after delete: %v; want the old memory's conflict (the record went with the memory)", err)
	}
	requireGone(t, s, alice, "m-retry")
	requireUnchanged(t, s, alice, first.Old)
	requireNoChange(t, s, "after a refused retry", alice, before)
}

func testIdempotentSupersedePartition(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, newMemory(alice, "m-a", "alice's"))
	first := supersedeKeyed(t, s, alice, "m-a", superseding(alice, "m-a", "m-a-next", "alice's, again"), idem("k", "req"))
	// The same key and request hash in every other partition of the new
	// memory supersedes anew and never returns alice's memory.
	withAgent := alice
	withAgent.Agent = "bot"
	for i, sc := range []memgate.Scope{bob, aliceGlobex, withAgent} {
		oldID, nextID := fmt.Sprintf("m-p%d", i), fmt.Sprintf("m-p%d-next", i)
		mustInsert(t, s, newMemory(memgate.Scope{Tenant: sc.Tenant, Principal: sc.Principal}, oldID, "someone else's"))
		res := supersedeKeyed(t, s, sc, oldID, superseding(sc, oldID, nextID, "someone else's, again"), idem("k", "req"))
		if res.Replayed || res.Next.ID != nextID || res.Old.SupersededBy != nextID {
			t.Fatalf("%+v: replayed %v, next %s; want its own supersession by %s", sc, res.Replayed, res.Next.ID, nextID)
		}
	}
	// Control: alice's own retry still replays.
	res := supersedeKeyed(t, s, alice, "m-a", superseding(alice, "m-a", "m-a-retry", "alice's, again"), idem("k", "req"))
	if !res.Replayed || res.Next.ID != first.Next.ID {
		t.Fatalf("alice's retry: replayed %v, %s; want a replay of %s", res.Replayed, res.Next.ID, first.Next.ID)
	}
}

func testIdempotentSupersedeForget(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	for _, sc := range []memgate.Scope{alice, bob} {
		mustInsert(t, s, newMemory(sc, "m-"+sc.Principal, "old"))
		supersedeKeyed(t, s, sc, "m-"+sc.Principal, superseding(sc, "m-"+sc.Principal, "m-"+sc.Principal+"-next", "new"), idem("k", "req"))
	}
	if _, err := s.Forget(t.Context(), "acme", "alice", pseudonymOf("acme", "alice")); err != nil {
		t.Fatal(err)
	}
	// alice's record went with her memories: the key is free again.
	mustInsert(t, s, newMemory(alice, "m-alice", "old"))
	if res := supersedeKeyed(t, s, alice, "m-alice", superseding(alice, "m-alice", "m-alice-again", "new"), idem("k", "req")); res.Replayed || res.Next.ID != "m-alice-again" {
		t.Fatalf("after forget: replayed %v, %s; want a new supersession", res.Replayed, res.Next.ID)
	}
	// Control: bob's record stays.
	if res := supersedeKeyed(t, s, bob, "m-bob", superseding(bob, "m-bob", "m-bob-again", "new"), idem("k", "req")); !res.Replayed || res.Next.ID != "m-bob-next" {
		t.Fatalf("bob after alice's forget: replayed %v, %s; want a replay of m-bob-next", res.Replayed, res.Next.ID)
	}
}

func testIdempotentSupersedePrune(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, newMemory(alice, "m-old", "old"))
	supersedeKeyed(t, s, alice, "m-old", superseding(alice, "m-old", "m-next", "new"), idem("k", "req"))
	// Records are stamped with the store's clock: control first.
	if n, err := s.PruneIdempotency(t.Context(), time.Now().Add(-time.Hour), 100); err != nil || n != 0 {
		t.Fatalf("PruneIdempotency of records older than an hour: %d, %v", n, err)
	}
	supersedeKeyed(t, s, alice, "m-old", superseding(alice, "m-old", "m-retry", "new"), idem("k", "req"))
	if n, err := s.PruneIdempotency(t.Context(), time.Now().Add(time.Hour), 100); err != nil || n != 1 {
		t.Fatalf("PruneIdempotency: %d, %v; want the supersession's record", n, err)
	}
	// Without its record a retry is a new request: its old memory is
	// superseded.
	_, err := s.Supersede(t.Context(), alice, "m-old", superseding(alice, "m-old", "m-retry", "new"), t2, idem("k", "req"))
	requireCode(t, "retry after pruning", err, memgate.ECONFLICT, "")
	requireGone(t, s, alice, "m-retry")
}

func testIdempotentSupersedeConcurrent(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, newMemory(alice, "m-old", "lives in Paris"))
	id := storedOnce(t, s, "concurrent supersessions with one key", func(w int) (string, bool, error) {
		res, err := s.Supersede(t.Context(), alice, "m-old", superseding(alice, "m-old", fmt.Sprintf("m-w%d", w), "lives in Lyon"), t1, idem("k", "req"))
		if err != nil {
			return "", false, err
		}
		return res.Next.ID, res.Replayed, nil
	})
	if old := mustGet(t, s, alice, "m-old"); old.SupersededBy != id || old.Version != 2 {
		t.Fatalf("old memory superseded by %s at version %d, want by %s at version 2", old.SupersededBy, old.Version, id)
	}
	if n := countAll(t, s, alice); n != 2 {
		t.Fatalf("alice has %d memories, want 2 (the old one and its successor)", n)
	}
}

func testIdempotentSupersedeApproved(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, newMemory(alice, "m-old", "lives in Paris"))
	// A supersession the write gate held: a pending memory with the link,
	// remembered with the key, then approved.
	pending := superseding(alice, "m-old", "m-pending", "lives in Lyon")
	pending.Status, pending.StatusReason = memgate.StatusPending, "instruction_like"
	rememberKeyed(t, s, []*memgate.Memory{pending}, idem("k", "req"))
	if _, _, err := s.Promote(t.Context(), alice, "m-pending", store.Promotion{At: t1}); err != nil {
		t.Fatal(err)
	}
	before := head(t, s, alice)
	// Its retry, held again, reaches Supersede: the record answers.
	retry := superseding(alice, "m-old", "m-retry", "lives in Lyon")
	retry.Status, retry.StatusReason = memgate.StatusPending, "instruction_like"
	res := supersedeKeyed(t, s, alice, "m-old", retry, idem("k", "req"))
	if !res.Replayed || res.Next.ID != "m-pending" || res.Next.Status != memgate.StatusActive {
		t.Fatalf("retry after approval: replayed %v, %s %s; want a replay of m-pending, active", res.Replayed, res.Next.ID, res.Next.Status)
	}
	requireGone(t, s, alice, "m-retry")
	requireNoChange(t, s, "after a replay", alice, before)
	// Control: without the record, the same call is refused, and a
	// pending memory never supersedes an active one.
	_, err := s.Supersede(t.Context(), alice, "m-old", retry, t2, idem("k2", "req"))
	requireCode(t, "a pending memory on a superseded one", err, memgate.ECONFLICT, "")
	mustInsert(t, s, newMemory(alice, "m-active", "drinks tea"))
	held := superseding(alice, "m-active", "m-held", "drinks coffee")
	held.Status = memgate.StatusPending
	_, err = s.Supersede(t.Context(), alice, "m-active", held, t2, idem("k3", "req"))
	requireCode(t, "a pending memory on an active one", err, memgate.ECONFLICT, "")
	requireGone(t, s, alice, "m-held")
	if m := mustGet(t, s, alice, "m-active"); m.Status != memgate.StatusActive {
		t.Fatalf("m-active is %s after a refused supersession, want active", m.Status)
	}
}

func testIdempotentSupersedeInvalid(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, newMemory(alice, "m-old", "old"))
	cases := []struct {
		name string
		keys []store.IdempotencyKey
	}{
		{"two keys", []store.IdempotencyKey{idem("k1", "r"), idem("k2", "r")}},
		{"space in a key", []store.IdempotencyKey{idem("a b", "r")}},
		{"no request hash", []store.IdempotencyKey{{Key: "k"}}},
	}
	for _, c := range cases {
		_, err := s.Supersede(t.Context(), alice, "m-old", superseding(alice, "m-old", "m-next", "new"), t1, c.keys...)
		requireCode(t, c.name, err, memgate.EINVALID, "")
		requireGone(t, s, alice, "m-next")
	}
	// Control: one valid key supersedes.
	supersedeKeyed(t, s, alice, "m-old", superseding(alice, "m-old", "m-next", "new"), idem("k", "r"))
}
