package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// Audit actions.
const (
	ActionRemember  = "remember"
	ActionRecall    = "recall"
	ActionUpdate    = "update"
	ActionSupersede = "supersede"
	ActionRevoke    = "revoke"
	ActionApprove   = "approve"
	ActionReject    = "reject"
	ActionDelete    = "delete"
	ActionForget    = "forget"
	ActionImport    = "import"
	ActionFeedback  = "feedback"
	ActionSweep     = "sweep"
	ActionEvict     = "evict"

	// ActionRecallPreview is a recall with Preview set: nothing reached a
	// prompt, so a memory's recall history (action recall) leaves it out.
	ActionRecallPreview = "recall_preview"
)

type actorKey struct{}

// WithActor returns a context whose operations the audit log attributes to
// actor (a key id, "cli", an agent name). It is an identifier, never a
// secret: the HTTP layer passes the key's id, not the key.
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// writerOf is what a memory records as created_by and updated_by: the
// actor WithActor named, or "" (a library caller that named none).
func writerOf(ctx context.Context) string {
	a, _ := ctx.Value(actorKey{}).(string)
	return a
}

func actorOf(ctx context.Context) string {
	if a, ok := ctx.Value(actorKey{}).(string); ok && a != "" {
		return a
	}
	return "engine"
}

// QueryHash is what the audit log keeps of a query: its SHA-256, never its
// text.
func QueryHash(q string) string {
	sum := sha256.Sum256([]byte(q))
	return hex.EncodeToString(sum[:])
}

// audit appends one event of an operation that has already committed,
// through the group commit (commitAudit), and returns once it is
// committed: a failure to append is logged (ids only) and does not undo
// the operation.
func (e *Engine) audit(ctx context.Context, evs ...store.AuditEvent) {
	_ = e.commitAudit(context.WithoutCancel(ctx), evs...)
}

// Group commit of audit events. Every operation's audit events go to one
// goroutine, the committer, and the operation waits until they are
// committed before it answers: an acknowledged recall or remember has its
// event in the database (a process killed at any moment loses only events
// of operations it had not acknowledged). The committer appends, in one
// store transaction, every event queued while the previous transaction ran
// (up to auditBatch): under load one commit carries the events of many
// concurrent requests, so the single writer of SQLite (or a round trip to
// PostgreSQL) is paid once per batch, not once per request. And it gathers
// its batches as the write committer does (gatherer): when the previous
// batch held more than one request, it waits at most auditGatherWait for
// one as large. Recalls finish a few hundred microseconds apart, and
// without the wait eight at once committed 1.1–1.2 events an append, at
// about 0.2 ms of CPU each (BenchmarkRecallConcurrent, BENCHMARKS.md). A
// failed append fails every request of its batch (issue 27).
const (
	auditQueue = 4096 // requests waiting for the committer
	auditBatch = 256  // events per transaction, at most (a larger request goes alone)
	// auditGatherWait bounds the committer's wait for a batch of as many
	// requests as the previous one (gatherer).
	auditGatherWait = 500 * time.Microsecond
)

// auditReq is one request's events and where the committer answers.
type auditReq struct {
	evs  []store.AuditEvent
	done chan error // buffered: the committer never waits for the request
}

// errAuditClosed answers a request that came after Close.
var errAuditClosed = &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "the audit log is closed (the server is shutting down)"}

// commitAudit appends evs (none: it waits for the events queued before it)
// through the group commit and waits until they are committed. It returns
// the append's error (of the whole batch), ctx's when ctx ends first, or
// errAuditClosed after Close; then the events may or may not be committed,
// and the caller must not acknowledge its operation as audited. An event
// the store would refuse is refused before it joins a batch, so it fails
// only its own request.
func (e *Engine) commitAudit(ctx context.Context, evs ...store.AuditEvent) error {
	r, err := e.submitAudit(ctx, evs...)
	if err != nil {
		return err
	}
	return e.awaitAudit(ctx, r)
}

// submitAudit is the first half of commitAudit: it queues evs for the
// committer and returns without waiting, so the caller can finish its
// answer while the batch commits; it must then call awaitAudit before it
// answers.
func (e *Engine) submitAudit(ctx context.Context, evs ...store.AuditEvent) (*auditReq, error) {
	actor := actorOf(ctx)
	for i := range evs {
		evs[i].Actor = actor
		if evs[i].At.IsZero() {
			evs[i].At = e.now()
		}
		if err := store.CheckAuditEvent(&evs[i]); err != nil {
			e.log.ErrorContext(ctx, "audit append failed", "events", len(evs), "action", evs[i].Action, "err", memgate.ErrorCode(err))
			return nil, err
		}
	}
	e.auditOnce.Do(e.startAuditor)
	r := &auditReq{evs: evs, done: make(chan error, 1)}
	select {
	case e.auditq <- r:
		return r, nil
	case <-e.auditDone:
		return nil, errAuditClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// awaitAudit is the second half of commitAudit: it waits until r's batch
// is committed and returns its error.
func (e *Engine) awaitAudit(ctx context.Context, r *auditReq) error {
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-e.auditDone:
		select {
		case err := <-r.done: // answered just before the committer stopped
			return err
		default:
			return errAuditClosed
		}
	}
}

func (e *Engine) startAuditor() {
	e.auditq = make(chan *auditReq, auditQueue)
	e.auditDone = make(chan struct{})
	e.drainKick = make(chan struct{}, 1)
	e.drainDone = make(chan struct{})
	go e.auditor()
	if d, ok := e.store.(store.AuditDrainer); ok {
		go e.drainer(d)
	} else {
		close(e.drainDone)
	}
}

// The drainer moves the store's audit inbox into its log
// (store.AuditDrainer) in the background, so that a read of the log finds
// little to move and the inbox stays small: every drainEvery while events
// come, and at once when the committer has committed drainAfter batches
// since the last drain.
const (
	drainEvery = time.Second
	drainAfter = 256
)

// drainer runs until the committer has stopped, then drains once more.
func (e *Engine) drainer(d store.AuditDrainer) {
	defer close(e.drainDone)
	t := time.NewTicker(drainEvery)
	defer t.Stop()
	drain := func() {
		if n := e.undrained.Swap(0); n == 0 {
			return
		}
		if err := d.DrainAudit(context.Background()); err != nil {
			e.undrained.Add(1) // try again
			e.log.Error("audit drain failed", "err", memgate.ErrorCode(err))
		}
	}
	for {
		select {
		case <-t.C:
			drain()
		case <-e.drainKick:
			drain()
		case <-e.auditDone:
			drain()
			return
		}
	}
}

// auditor is the committer.
func (e *Engine) auditor() {
	defer close(e.auditDone)
	var (
		batch []store.AuditEvent
		reqs  []*auditReq
	)
	take := func(r *auditReq) {
		reqs = append(reqs, r)
		batch = append(batch, r.evs...)
	}
	commit := func() {
		var err error
		if len(batch) > 0 {
			if err = e.store.AppendAudit(context.Background(), batch); err != nil {
				e.log.Error("audit append failed", "events", len(batch), "requests", len(reqs), "action", batch[0].Action, "err", memgate.ErrorCode(err))
			} else if e.undrained.Add(1) >= drainAfter {
				select {
				case e.drainKick <- struct{}{}:
				default:
				}
			}
		}
		for _, r := range reqs {
			r.done <- err
		}
		clear(batch) // let the events go
		clear(reqs)
		batch, reqs = batch[:0], reqs[:0]
	}
	g := newGatherer(e.auditWait)
	gatherBatch := func() {
		gather(g, e.auditq, e.auditStop, func() int { return len(reqs) }, func() bool { return len(batch) >= auditBatch }, take)
	}
	for {
		select {
		case r := <-e.auditq:
			take(r)
			gatherBatch()
			commit()
		case <-e.auditStop:
			// The producers are done: commit what is queued, up to empty
			// (gather waits for nothing once stop is closed).
			for {
				gatherBatch()
				if len(reqs) == 0 {
					return
				}
				commit()
			}
		}
	}
}

// flushAudit waits until every event queued before it is committed. An
// acknowledged operation's events are committed already; this orders a
// read of the audit log after operations still answering.
func (e *Engine) flushAudit() {
	_ = e.commitAudit(context.Background())
}

// Close commits the queued audit events and stops the engine's background
// work; an audit event that comes later fails its operation. It does not
// close the store, which the caller owns.
func (e *Engine) Close() error {
	e.auditOnce.Do(e.startAuditor)
	e.closeOnce.Do(func() { close(e.auditStop) })
	<-e.auditDone
	<-e.drainDone
	e.writeOnce.Do(func() {}) // no write committer starts after Close
	if e.writeDone != nil {
		<-e.writeDone
	}
	return nil
}

// Audit returns audit events of a tenant, newest first. Scope must name
// the tenant; a principal in scope restricts to that principal's events.
func (e *Engine) Audit(ctx context.Context, s memgate.Scope, f memgate.AuditFilter) (*memgate.AuditPage, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if !s.AllPrincipals {
		if f.Principal != "" && f.Principal != s.Principal {
			return &memgate.AuditPage{Events: []store.AuditEvent{}}, nil
		}
		f.Principal = s.Principal
	}
	if f.MemoryID != "" && !memgate.ValidIdent(f.MemoryID) {
		return nil, memgate.FieldError("memory_id", "must match [A-Za-z0-9._:@-]{1,128}")
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		return nil, memgate.FieldError("to", "must be after from")
	}
	if f.Limit < 0 {
		return nil, memgate.FieldError("limit", "must not be negative")
	}
	e.flushAudit()
	return e.store.ListAudit(ctx, s.Tenant, f)
}

// Audit histogram defaults and limits.
const (
	// DefaultHistogramBuckets is the number of buckets of a histogram
	// whose request leaves From unset.
	DefaultHistogramBuckets = 14
	// MaxHistogramBuckets bounds the buckets of one histogram.
	MaxHistogramBuckets = store.MaxHistogramBuckets
	// DefaultHistogramBucket is the bucket of a request that sets none.
	DefaultHistogramBucket = 24 * time.Hour
)

// AuditHistogramRequest is memgate.AuditHistogramRequest (the callers' contract).
type AuditHistogramRequest = memgate.AuditHistogramRequest

// AuditHistogram is memgate.AuditHistogram (the callers' contract).
type AuditHistogram = memgate.AuditHistogram

// HistogramBucket is memgate.HistogramBucket (the callers' contract).
type HistogramBucket = memgate.HistogramBucket

// AuditHistogram counts the audit events of the scope's tenant with the
// request's action, per UTC hour or day: of the scope's principal, or of
// every principal (and events naming none) when the scope has
// AllPrincipals. Like Audit it flushes the queued events first, so a
// recall just made is counted. The counting is the store's (one aggregate
// query), never a walk over the events. A range of more than
// MaxHistogramBuckets buckets is invalid_argument naming "from".
func (e *Engine) AuditHistogram(ctx context.Context, s memgate.Scope, req AuditHistogramRequest) (*AuditHistogram, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if req.Action == "" {
		req.Action = ActionRecall
	}
	if !memgate.ValidIdent(req.Action) {
		return nil, memgate.FieldError("action", "must match [A-Za-z0-9._:@-]{1,128}")
	}
	b := req.Bucket
	switch b {
	case 0:
		b = DefaultHistogramBucket
	case time.Hour, 24 * time.Hour:
	default:
		return nil, memgate.FieldError("bucket", "must be an hour or a day")
	}
	if !req.From.IsZero() && !req.To.IsZero() && !req.To.After(req.From) {
		return nil, memgate.FieldError("to", "must be after from")
	}
	// Truncate counts from the zero time, which is a UTC midnight: whole
	// multiples of an hour or a day from it are UTC hours and midnights.
	to := req.To.UTC().Truncate(b)
	switch {
	case req.To.IsZero():
		to = e.now().Truncate(b).Add(b)
	case to.Before(req.To):
		to = to.Add(b)
	}
	from := req.From.UTC().Truncate(b)
	if req.From.IsZero() {
		from = to.Add(-DefaultHistogramBuckets * b)
	}
	if !to.After(from) {
		return nil, memgate.FieldError("to", "must be after from")
	}
	if n := to.Sub(from) / b; n > MaxHistogramBuckets || !from.Add(to.Sub(from)).Equal(to) {
		return nil, memgate.FieldError("from", "the range holds more than %d buckets of %s", MaxHistogramBuckets, bucketName(b))
	}
	q := store.AuditHistogramQuery{Tenant: s.Tenant, Action: req.Action, From: from, To: to, Bucket: b}
	if !s.AllPrincipals {
		q.Principal = s.Principal
	}
	e.flushAudit()
	counts, err := e.store.AuditHistogram(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &AuditHistogram{Action: req.Action, BucketSeconds: int64(b / time.Second), From: from, To: to, Buckets: make([]HistogramBucket, len(counts))}
	for i, c := range counts {
		out.Buckets[i] = HistogramBucket{Start: from.Add(time.Duration(i) * b), Count: c}
	}
	return out, nil
}

func bucketName(b time.Duration) string {
	if b == time.Hour {
		return "an hour"
	}
	return "a day"
}

// Sweep deletes memories that expired more than grace ago, in batches, and
// returns how many. Reads exclude expired memories already; the sweep only
// reclaims space. It then prunes the records of deletions older than
// Config.ChangeRetention (see store.Store.PruneChanges) and the
// idempotency keys older than Config.IdempotencyWindow.
func (e *Engine) Sweep(ctx context.Context, grace time.Duration) (int, error) {
	if grace < 0 {
		return 0, memgate.FieldError("grace", "must not be negative")
	}
	n, err := e.sweepExpired(ctx, e.now().Add(-grace))
	if err != nil {
		return n, err
	}
	if err := e.prune(ctx, "prune changes", e.store.PruneChanges, e.now().Add(-e.cfg.ChangeRetention)); err != nil {
		return n, err
	}
	return n, e.prune(ctx, "prune idempotency keys", e.store.PruneIdempotency, e.now().Add(-e.cfg.IdempotencyWindow))
}

// prune calls a store's prune method for records older than before, 500 at
// a time so the writer is never held long.
func (e *Engine) prune(ctx context.Context, what string, prune func(context.Context, time.Time, int) (int64, error), before time.Time) error {
	var total int64
	for {
		n, err := prune(ctx, before, 500)
		if err != nil {
			return err
		}
		total += n
		if n < 500 {
			if total > 0 {
				e.log.InfoContext(ctx, what, "pruned", total)
			}
			return nil
		}
	}
}

func (e *Engine) sweepExpired(ctx context.Context, before time.Time) (int, error) {
	total := 0
	for {
		refs, err := e.store.DeleteExpired(ctx, before, 500)
		if err != nil {
			return total, err
		}
		if len(refs) == 0 {
			return total, nil
		}
		total += len(refs)
		byTenant := map[string][]string{}
		for _, r := range refs {
			e.rec.idx.Remove(r.Tenant, r.Principal, r.ID)
			byTenant[r.Tenant] = append(byTenant[r.Tenant], r.ID)
		}
		for t, ids := range byTenant {
			e.audit(ctx, store.AuditEvent{Tenant: t, Action: ActionSweep, MemoryIDs: ids, Counts: map[string]int64{"deleted": int64(len(ids))}})
		}
		e.log.InfoContext(ctx, "sweep", "deleted", len(refs))
		if len(refs) < 500 {
			return total, nil
		}
	}
}

// RunSweeper sweeps every interval until ctx ends.
func (e *Engine) RunSweeper(ctx context.Context, interval, grace time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := e.Sweep(ctx, grace); err != nil && ctx.Err() == nil {
				e.log.ErrorContext(ctx, "sweep failed", "err", memgate.ErrorCode(err))
			}
		}
	}
}
