package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/sqlite"
	"github.com/memgate/memgate/store"
)

// auditStore is a store whose AppendAudit can be held (until release is
// closed) and made to fail, and which records the size of each append.
type auditStore struct {
	store.Store
	hold    atomic.Bool   // the next append waits for release
	held    chan struct{} // closed when a held append has begun
	release chan struct{}
	fail    atomic.Bool // appends fail without writing
	mu      sync.Mutex
	sizes   []int
}

var errPlanted = &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "planted audit failure"}

func (s *auditStore) AppendAudit(ctx context.Context, evs []store.AuditEvent) error {
	s.mu.Lock()
	s.sizes = append(s.sizes, len(evs))
	s.mu.Unlock()
	failing := s.fail.Load() // decided when the append begins
	if s.hold.CompareAndSwap(true, false) {
		close(s.held)
		<-s.release
	}
	if failing {
		return errPlanted
	}
	return s.Store.AppendAudit(ctx, evs)
}

func newGroupEngine(t *testing.T) (*Engine, *auditStore) {
	t.Helper()
	return newGroupEngineWaiting(t, auditGatherWait)
}

// newGroupEngineWaiting is newGroupEngine with the committer's gather
// wait (auditGatherWait) set to wait.
func newGroupEngineWaiting(t *testing.T, wait time.Duration) (*Engine, *auditStore) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := &auditStore{Store: db, held: make(chan struct{}), release: make(chan struct{})}
	e, err := New(Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	e.auditWait = wait
	t.Cleanup(func() { e.Close() })
	s := memgate.Scope{Tenant: "acme", Principal: "alice"}
	for i := range 20 {
		if _, err := e.Remember(context.Background(), memgate.RememberRequest{Memory: memgate.Memory{Tenant: s.Tenant, Principal: s.Principal,
			Kind: memgate.KindFact, Source: memgate.SourceUser, Content: fmt.Sprintf("the garden shed number %s keeps the blue watering can", spell(i))}}); err != nil {
			t.Fatal(err)
		}
	}
	return e, st
}

// spell spells n in letters (digits could look like a secret to the gate).
func spell(n int) string { return string(rune('a'+n%26)) + string(rune('a'+n/26)) }

func recallReq() RecallRequest {
	off := 0.0 // the floor off: every recall returns memories
	return RecallRequest{Scope: memgate.Scope{Tenant: "acme", Principal: "alice"}, Query: "where is the blue watering can?", K: 3, MinScore: &off}
}

// audited reports whether the store (not the engine, whose Audit waits for
// the queue) holds the audit event of recall id.
func audited(t *testing.T, st store.Store, id string) bool {
	t.Helper()
	p, err := st.ListAudit(context.Background(), "acme", memgate.AuditFilter{RecallID: id})
	if err != nil {
		t.Fatal(err)
	}
	return len(p.Events) == 1
}

// An acknowledged recall's audit event is in the database the moment the
// recall returns, under concurrent recalls and remembers; and commits are
// shared: fewer appends than events.
func TestAcknowledgedRecallIsAudited(t *testing.T) {
	e, st := newGroupEngine(t)
	st.mu.Lock()
	st.sizes = nil
	st.mu.Unlock()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for w := range 8 {
		wg.Go(func() {
			for i := range 15 {
				if w == 0 {
					// A writer among the readers: its event is committed
					// before it returns too.
					if _, err := e.Remember(context.Background(), memgate.RememberRequest{Memory: memgate.Memory{Tenant: "acme", Principal: "alice",
						Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "the red kettle sits on shelf " + spell(i)}}); err != nil {
						errs <- err
					}
					continue
				}
				res, err := e.Recall(context.Background(), recallReq())
				if err != nil {
					errs <- err
					continue
				}
				if len(res.Results) == 0 {
					errs <- errors.New("a recall found nothing")
				}
				if !audited(t, st, res.RecallID) {
					errs <- fmt.Errorf("recall %s returned before its audit event was committed", res.RecallID)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	events := 0
	for _, n := range st.sizes {
		events += n
	}
	if events != 7*15+15 {
		t.Fatalf("%d events appended, want %d", events, 7*15+15)
	}
	t.Logf("%d events in %d appends", events, len(st.sizes))
}

// A commit that fails fails every request of its batch: none is
// acknowledged, none is in the audit log; the batch before it and the
// requests after it are unaffected.
func TestFailedAuditCommitFailsItsBatch(t *testing.T) {
	e, st := newGroupEngine(t)
	// Control: a recall is answered and audited.
	res, err := e.Recall(context.Background(), recallReq())
	if err != nil || !audited(t, st, res.RecallID) {
		t.Fatalf("control recall: %v (audited: %v)", err, err == nil && audited(t, st, res.RecallID))
	}

	// Hold the committer inside one append (the first batch), queue six
	// recalls behind it, then fail the next append: the six are its batch.
	st.hold.Store(true)
	first := make(chan error, 1)
	var firstID atomic.Value
	go func() {
		r, err := e.Recall(context.Background(), recallReq())
		if err == nil {
			firstID.Store(r.RecallID)
		}
		first <- err
	}()
	<-st.held
	const n = 6
	type answer struct {
		res *RecallResult
		err error
	}
	answers := make(chan answer, n)
	for range n {
		go func() {
			r, err := e.Recall(context.Background(), recallReq())
			answers <- answer{r, err}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(e.auditq) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d recalls queued, want %d", len(e.auditq), n)
		}
		time.Sleep(time.Millisecond)
	}
	// The held append succeeds; the next one, the six, fails.
	st.fail.Store(true)
	close(st.release)
	if err := <-first; err != nil {
		t.Fatalf("the recall of the held batch: %v", err)
	}
	if id, _ := firstID.Load().(string); !audited(t, st, id) {
		t.Fatal("the held batch's recall was answered but is not audited")
	}
	for range n {
		a := <-answers
		if a.err == nil {
			t.Fatalf("a recall of the failed batch was answered (%s)", a.res.RecallID)
		}
		if memgate.ErrorCode(a.err) != memgate.EUNAVAILABLE || !errors.Is(a.err, errPlanted) {
			t.Fatalf("a recall of the failed batch: %v, want the append's unavailable error", a.err)
		}
	}
	st.mu.Lock()
	last := st.sizes[len(st.sizes)-1]
	st.mu.Unlock()
	if last != n {
		t.Fatalf("the failed append held %d events, want the %d queued recalls in one batch", last, n)
	}
	p, err := st.ListAudit(context.Background(), "acme", memgate.AuditFilter{Action: ActionRecall})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) != 2 {
		t.Fatalf("%d recall events in the log, want 2 (the control and the held batch's)", len(p.Events))
	}

	// The next request after the failure is answered and audited.
	st.fail.Store(false)
	res, err = e.Recall(context.Background(), recallReq())
	if err != nil || !audited(t, st, res.RecallID) {
		t.Fatalf("recall after the failure: %v", err)
	}
}

// After Close, an operation's audit event fails it (never a hang, never
// an acknowledgement of an event nobody will commit).
func TestAuditAfterCloseFails(t *testing.T) {
	e, st := newGroupEngine(t)
	if _, err := e.Recall(context.Background(), recallReq()); err != nil {
		t.Fatalf("control recall: %v", err)
	}
	e.Close()
	done := make(chan error, 1)
	go func() {
		_, err := e.Recall(context.Background(), recallReq())
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, errAuditClosed) {
			t.Fatalf("recall after Close: %v, want the closed audit log", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("recall after Close hangs")
	}
	_ = st
}

// TestAuditGathersAsManyAsLastTime: after a batch of several recalls'
// events, the committer waits (within its bound) until the next batch
// holds as many requests, as the write committer does; a single recall is
// held until the others come. Controls: a lone recaller (no batch of
// several before) is committed at once, and the wait ends at its bound,
// the event then committed alone.
func TestAuditGathersAsManyAsLastTime(t *testing.T) {
	t.Parallel()
	recall := func(e *Engine, errs chan<- error) {
		go func() {
			_, err := e.Recall(context.Background(), recallReq())
			errs <- err
		}()
	}
	answered := func(t *testing.T, errs <-chan error, n int, what string) {
		t.Helper()
		for range n {
			select {
			case err := <-errs:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: not answered within 30s", what)
			}
		}
	}
	sizes := func(st *auditStore) []int {
		st.mu.Lock()
		defer st.mu.Unlock()
		return slices.Clone(st.sizes)
	}
	// afterThree returns an engine whose committer waits up to wait, and
	// whose last batch held three recalls.
	afterThree := func(t *testing.T, wait time.Duration) (*Engine, *auditStore) {
		t.Helper()
		e, st := newGroupEngineWaiting(t, wait)
		st.mu.Lock()
		st.sizes = nil
		st.mu.Unlock()
		st.hold.Store(true)
		errs := make(chan error, 4)
		recall(e, errs)
		<-st.held
		for range 3 {
			recall(e, errs)
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(e.auditq) < 3 {
			if time.Now().After(deadline) {
				t.Fatalf("%d recalls queued, want 3", len(e.auditq))
			}
			time.Sleep(time.Millisecond)
		}
		close(st.release)
		answered(t, errs, 4, "the held recall and the three behind it")
		if got := sizes(st); !slices.Equal(got, []int{1, 3}) {
			t.Fatalf("appends of %v events, want the first alone, then the three queued in one", got)
		}
		return e, st
	}

	t.Run("the next batch waits for as many", func(t *testing.T) {
		t.Parallel()
		e, st := afterThree(t, time.Minute)
		errs := make(chan error, 3)
		recall(e, errs)
		time.Sleep(300 * time.Millisecond)
		if got := sizes(st); len(got) != 2 {
			t.Fatalf("appends of %v events: a single recall after a batch of three was committed without waiting for more", got)
		}
		recall(e, errs)
		recall(e, errs)
		answered(t, errs, 3, "three recalls that came apart")
		if got := sizes(st); !slices.Equal(got, []int{1, 3, 3}) {
			t.Fatalf("appends of %v events, want the three that came apart in one", got)
		}
	})

	t.Run("control: the wait ends at its bound", func(t *testing.T) {
		t.Parallel()
		e, st := afterThree(t, 50*time.Millisecond)
		errs := make(chan error, 1)
		recall(e, errs)
		answered(t, errs, 1, "a single recall after a batch of three, with a wait of 50ms")
		if got := sizes(st); !slices.Equal(got, []int{1, 3, 1}) {
			t.Fatalf("appends of %v events, want the single recall committed alone after the wait", got)
		}
	})

	t.Run("control: a lone recaller does not wait", func(t *testing.T) {
		t.Parallel()
		e, st := newGroupEngineWaiting(t, time.Hour)
		st.mu.Lock()
		st.sizes = nil
		st.mu.Unlock()
		for range 3 {
			errs := make(chan error, 1)
			recall(e, errs)
			answered(t, errs, 1, "a lone recaller's recall, with a wait of an hour")
		}
		if got := sizes(st); !slices.Equal(got, []int{1, 1, 1}) {
			t.Fatalf("appends of %v events, want one a recall", got)
		}
	})
}
