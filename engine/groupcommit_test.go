package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
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
