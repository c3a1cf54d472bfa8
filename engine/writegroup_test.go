package engine_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/sqlite"
	"github.com/memgate/memgate/store"
)

// gatedStore is a real store whose first RememberAudited waits until
// release is closed (so the requests that come meanwhile queue up for the
// next group), and which records the size of every RememberAudited.
type gatedStore struct {
	*sqlite.DB
	release chan struct{}
	eng     *engine.Engine
	mu      sync.Mutex
	calls   []int
}

func (g *gatedStore) RememberAudited(ctx context.Context, ms []*memgate.Memory, caps map[memgate.Kind]int, audit func(*store.WriteResult) []store.AuditEvent, keys ...store.IdempotencyKey) (*store.WriteResult, error) {
	g.mu.Lock()
	first := len(g.calls) == 0
	g.calls = append(g.calls, len(ms))
	g.mu.Unlock()
	if first {
		<-g.release
	}
	return g.DB.RememberAudited(ctx, ms, caps, audit, keys...)
}

// gatedEngine is an engine over a gatedStore, and remember, a single
// remember of content for alice with an idempotency key (or none) as
// actor.
func gatedEngine(t *testing.T) (*gatedStore, func(actor, content, key string) (*engine.Remembered, error)) {
	t.Helper()
	g := &gatedStore{DB: openDB(t), release: make(chan struct{})}
	eng, err := engine.New(engine.Config{Store: g, Embedder: builtin.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	g.eng = eng
	return g, func(actor, content, key string) (*engine.Remembered, error) {
		return eng.Remember(engine.WithActor(t.Context(), actor), memgate.RememberRequest{
			Memory:         memgate.Memory{Tenant: "t", Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: content},
			IdempotencyKey: key,
		})
	}
}

// holdFirst starts first (a remember) and returns once its store call
// waits for release, with a channel of its error.
func (g *gatedStore) holdFirst(first func() error) chan error {
	done := make(chan error, 1)
	go func() { done <- first() }()
	for len(g.sizes()) == 0 {
		time.Sleep(time.Millisecond)
	}
	return done
}

func (g *gatedStore) sizes() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.calls)
}

// TestConcurrentRemembersShareATransaction (issue 27): single remembers
// that come while a write transaction runs are stored together in the
// next one, each answered with its own memory, and each audited as its
// own request (its actor, its memory), as one by one. The group keeps the
// order of one by one: the same content twice folds into the first, and
// an idempotency key sent twice in one group stores once and replays
// (the group fails on the shared key, and each is then stored alone).
// Control: the first remember, alone, is a transaction of its own.
func TestConcurrentRemembersShareATransaction(t *testing.T) {
	t.Parallel()
	g, remember := gatedEngine(t)
	firstDone := g.holdFirst(func() error { _, err := remember("key_first", "Alice waters the ferns on Sundays.", ""); return err })
	// The first transaction is running: these queue for the next.
	const n = 6
	type answer struct {
		who string
		r   *engine.Remembered
		err error
	}
	answers := make(chan answer, n+3)
	var wg sync.WaitGroup
	for i := range n {
		who := fmt.Sprintf("key_%d", i)
		wg.Go(func() {
			r, err := remember(who, fmt.Sprintf("Alice's cousin number %d lives in town %d.", i, i*7), "")
			answers <- answer{who, r, err}
		})
	}
	wg.Go(func() {
		r, err := remember("key_dup_a", "Alice keeps a jar of honey from Porto.", "")
		answers <- answer{"key_dup_a", r, err}
	})
	wg.Go(func() {
		r, err := remember("key_dup_b", "Alice keeps a jar of honey from Porto.", "")
		answers <- answer{"key_dup_b", r, err}
	})
	time.Sleep(200 * time.Millisecond) // let them queue behind the first
	close(g.release)
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(answers)
	byWho := map[string]answer{}
	for a := range answers {
		if a.err != nil {
			t.Fatalf("%s: %v", a.who, a.err)
		}
		byWho[a.who] = a
	}
	sizes := g.sizes()
	if sizes[0] != 1 || len(sizes) != 2 || sizes[1] != n+2 {
		t.Fatalf("store calls of %v memories; want the first alone, then the %d queued in one", sizes, n+2)
	}
	a, b := byWho["key_dup_a"], byWho["key_dup_b"]
	if a.r.ID != b.r.ID || a.r.Deduplicated == b.r.Deduplicated {
		t.Fatalf("the same content twice in one group: %s (folded %v) and %s (folded %v), want one memory and one fold", a.r.ID, a.r.Deduplicated, b.r.ID, b.r.Deduplicated)
	}
	// Each request's audit event names its memory under its actor.
	page, err := g.eng.Audit(t.Context(), memgate.Scope{Tenant: "t", AllPrincipals: true}, memgate.AuditFilter{Action: engine.ActionRemember, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	byActor := map[string][]string{}
	for _, e := range page.Events {
		byActor[e.Actor] = append(byActor[e.Actor], e.MemoryIDs...)
	}
	for who, a := range byWho {
		if got := byActor[who]; !slices.Equal(got, []string{a.r.ID}) {
			t.Errorf("%s's remember events name %v, want [%s]", who, got, a.r.ID)
		}
	}
	if len(byActor["key_first"]) != 1 {
		t.Errorf("the first remember's events: %v", byActor["key_first"])
	}
}

// TestGroupFailureAnswersEachAlone: a group the store refuses (two
// requests with one idempotency key in one partition) is stored one by
// one: the first stores, the second replays it, and the others of the
// group are stored as if nothing had happened.
func TestGroupFailureAnswersEachAlone(t *testing.T) {
	t.Parallel()
	g, remember := gatedEngine(t)
	firstDone := g.holdFirst(func() error { _, err := remember("key_first", "Alice sings in a choir.", ""); return err })
	var wg sync.WaitGroup
	results := make([]*engine.Remembered, 3)
	errs := make([]error, 3)
	for i, c := range []struct{ content, key string }{
		{"Alice's flight is on Tuesday.", "retry-1"},
		{"Alice's flight is on Tuesday.", "retry-1"},
		{"Alice likes oolong.", ""},
	} {
		wg.Go(func() { results[i], errs[i] = remember("key_1", c.content, c.key) })
	}
	time.Sleep(200 * time.Millisecond)
	close(g.release)
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if results[0].ID != results[1].ID || results[0].Replayed == results[1].Replayed {
		t.Fatalf("one key twice: %s (replayed %v) and %s (replayed %v), want one memory, once replayed", results[0].ID, results[0].Replayed, results[1].ID, results[1].Replayed)
	}
	if sizes := g.sizes(); len(sizes) < 3 || sizes[1] != 3 {
		t.Fatalf("store calls of %v memories; want the group of 3 tried, then each alone", sizes)
	}
}

// TestWriterGathersAsManyAsLastTime: after a group of several requests,
// the committer waits (within its bound) until the next group is as large
// as that one, so concurrent writers that come back a little apart share
// a transaction again; a single request is held until the others come.
// Controls: a lone writer (no group of several before) is stored at once,
// and the wait ends at its bound, the request then stored alone.
func TestWriterGathersAsManyAsLastTime(t *testing.T) {
	t.Parallel()
	// gatherAfterThree returns an engine whose committer waits up to
	// wait, and whose last group held three requests.
	gatherAfterThree := func(t *testing.T, wait time.Duration) (*gatedStore, func(actor, content, key string) (*engine.Remembered, error)) {
		t.Helper()
		g, remember := gatedEngine(t)
		engine.SetWriteGatherWait(g.eng, wait)
		firstDone := g.holdFirst(func() error { _, err := remember("key_first", "Alice waters the ferns on Sundays.", ""); return err })
		var wg sync.WaitGroup
		for i := range 3 {
			wg.Go(func() {
				if _, err := remember(fmt.Sprintf("key_%d", i), fmt.Sprintf("Alice's cousin number %d lives in town %d.", i, i*7), ""); err != nil {
					t.Error(err)
				}
			})
		}
		time.Sleep(200 * time.Millisecond) // let them queue behind the first
		close(g.release)
		if err := <-firstDone; err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if got := g.sizes(); !slices.Equal(got, []int{1, 3}) {
			t.Fatalf("store calls of %v memories, want the first alone, then the three queued in one", got)
		}
		return g, remember
	}

	t.Run("the next group waits for as many", func(t *testing.T) {
		t.Parallel()
		g, remember := gatherAfterThree(t, time.Minute)
		errs := make(chan error, 3)
		send := func(i int) {
			go func() {
				_, err := remember(fmt.Sprintf("key_b%d", i), fmt.Sprintf("Alice's neighbour number %d plays the cello.", i), "")
				errs <- err
			}()
		}
		send(0)
		time.Sleep(300 * time.Millisecond)
		if got := g.sizes(); len(got) != 2 {
			t.Fatalf("store calls of %v memories: a single request after a group of three was stored without waiting for more", got)
		}
		send(1)
		send(2)
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if got := g.sizes(); !slices.Equal(got, []int{1, 3, 3}) {
			t.Fatalf("store calls of %v memories, want the three that came apart in one", got)
		}
	})

	t.Run("control: the wait ends at its bound", func(t *testing.T) {
		t.Parallel()
		g, remember := gatherAfterThree(t, 50*time.Millisecond)
		within30s(t, func() error {
			_, err := remember("key_alone", "Alice's neighbour plays the cello alone.", "")
			return err
		}, func() string {
			return fmt.Sprintf("a single request after a group of three waited 30s with a wait of 50ms (store calls %v)", g.sizes())
		})
		if got := g.sizes(); !slices.Equal(got, []int{1, 3, 1}) {
			t.Fatalf("store calls of %v memories, want the single request stored alone after the wait", got)
		}
	})

	t.Run("control: a lone writer does not wait", func(t *testing.T) {
		t.Parallel()
		g, remember := gatedEngine(t)
		engine.SetWriteGatherWait(g.eng, time.Hour)
		close(g.release)
		for i := range 3 {
			within30s(t, func() error {
				_, err := remember("key_lone", fmt.Sprintf("Alice's note number %d.", i), "")
				return err
			}, func() string {
				return fmt.Sprintf("remember %d of a lone writer waited for others (store calls %v)", i, g.sizes())
			})
		}
		if got := g.sizes(); !slices.Equal(got, []int{1, 1, 1}) {
			t.Fatalf("store calls of %v memories, want one a request", got)
		}
	})
}

// within30s runs f and fails t with what() if f has not returned
// within 30 s, or with f's error.
func within30s(t *testing.T, f func() error, what func() string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal(what())
	}
}
