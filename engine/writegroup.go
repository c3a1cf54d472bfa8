package engine

import (
	"context"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// Group commit of single remembers. A store writes one transaction at a
// time on SQLite (one writer), and a transaction's fixed costs (the
// commit's write-ahead log frames, the locks) dominate a remember of one
// memory: concurrent requests queued behind one another each paid them.
// So a write of one memory with its events (store.AuditedRememberer) goes
// to the write committer, which stores every such write queued while the
// previous transaction ran in one RememberAudited call (up to
// writeGroupMax), and answers each request with its own part of the
// result, its own audit events (actor, time) committed in the same
// transaction. The store applies inputs in order, as if one after another
// (dedup, keys and idempotency records see the earlier inputs), so the
// group stores what the requests would have stored one by one; where the
// group fails (one input the store refuses, an idempotency key two
// inputs share, a full database), each request is stored alone instead,
// and gets its own answer (issue 27: single remembers per second).
//
// A group costs the write-ahead log about as many pages as one memory
// does: at a retention cap, 28.6 pages a memory alone, 15.2 in groups of
// four (sqlite BenchmarkRememberAtCap). So the committer gathers its
// groups as a gatherer does: when the previous group held more than one
// request, it waits at most writeGatherWait for one as large.
const (
	writeGroupMax   = 64   // memories in one group transaction, at most
	writeGroupQueue = 1024 // requests waiting for the write committer
	// writeGatherWait bounds the committer's wait for a group as large
	// as the previous one.
	writeGatherWait = time.Millisecond
)

// writeReq is one request's write and where the committer answers it.
type writeReq struct {
	m      *memgate.Memory
	key    store.IdempotencyKey
	events func(*store.WriteResult) []store.AuditEvent // of the request's own result
	actor  string
	at     time.Time
	done   chan writeAnswer // buffered: the committer never waits
}

// writeAnswer is a request's part of a group's result, or the group's
// error (alone: the request then stores itself alone).
type writeAnswer struct {
	res   *store.WriteResult
	err   error
	alone bool
}

func (e *Engine) startWriter() {
	e.writeq = make(chan *writeReq, writeGroupQueue)
	e.writeDone = make(chan struct{})
	go e.writer()
}

// groupWrite stores m through the write committer when the store can take
// a write and its events in one transaction; ok is false when it cannot
// (the caller stores m itself) or when the group failed, so that the
// caller stores m alone and gets its own error.
func (e *Engine) groupWrite(ctx context.Context, ar store.AuditedRememberer, m *memgate.Memory, key store.IdempotencyKey,
	events func(*store.WriteResult) []store.AuditEvent) (res *store.WriteResult, ok bool, err error) {
	e.writeOnce.Do(e.startWriter)
	r := &writeReq{m: m, key: key, events: events, actor: actorOf(ctx), at: e.now(), done: make(chan writeAnswer, 1)}
	select {
	case e.writeq <- r:
	case <-e.auditStop:
		return nil, false, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	select {
	case a := <-r.done:
		if a.alone {
			return nil, false, nil
		}
		return a.res, true, a.err
	case <-ctx.Done():
		// The group may still store it: the caller must not acknowledge
		// it (a retry with an idempotency key replays it).
		return nil, false, ctx.Err()
	}
}

// writer is the write committer. It stops with the engine (Close); a
// request that comes after is stored alone by its caller.
func (e *Engine) writer() {
	defer close(e.writeDone)
	ar := e.store.(store.AuditedRememberer)
	caps := e.retentionCaps()
	var group []*writeReq
	g := newGatherer(e.writeWait)
	for {
		select {
		case r := <-e.writeq:
			group = append(group[:0], r)
			gather(g, e.writeq, e.auditStop, func() int { return len(group) }, func() bool { return len(group) >= writeGroupMax },
				func(r *writeReq) { group = append(group, r) })
			e.commitGroup(ar, caps, group)
			clear(group)
		case <-e.auditStop:
			for {
				select {
				case r := <-e.writeq:
					r.done <- writeAnswer{alone: true}
				default:
					return
				}
			}
		}
	}
}

// commitGroup stores group in one transaction and answers each request
// with its part of the result.
//
// A group of one is committed here too, so that the committer is busy
// for the length of a transaction whenever requests come, and those that
// come meanwhile form the next group.
func (e *Engine) commitGroup(ar store.AuditedRememberer, caps map[memgate.Kind]int, group []*writeReq) {
	ms := make([]*memgate.Memory, len(group))
	keys := make([]store.IdempotencyKey, len(group))
	anyKey := false
	for i, r := range group {
		ms[i], keys[i] = r.m, r.key
		anyKey = anyKey || r.key.Key != ""
	}
	if !anyKey {
		keys = nil
	}
	res, err := ar.RememberAudited(context.Background(), ms, caps, func(res *store.WriteResult) []store.AuditEvent {
		var evs []store.AuditEvent
		for i, part := range splitResult(res, ms) {
			r := group[i]
			own := append(r.events(part), supersedeEvents(part)...)
			for j := range own {
				own[j].Actor, own[j].At = r.actor, r.at
			}
			evs = append(evs, own...)
		}
		return evs
	}, keys...)
	switch {
	case err != nil && len(group) == 1:
		group[0].done <- writeAnswer{err: err} // its own error
		return
	case err != nil:
		for _, r := range group {
			r.done <- writeAnswer{alone: true}
		}
		return
	}
	for i, part := range splitResult(res, ms) {
		group[i].done <- writeAnswer{res: part}
	}
}

// splitResult is each input's part of a group's result: its memory and
// flags, and the evictions of its population (tenant, principal, kind),
// given to the first input of that population.
func splitResult(res *store.WriteResult, ms []*memgate.Memory) []*store.WriteResult {
	parts := make([]*store.WriteResult, len(ms))
	for i := range ms {
		parts[i] = &store.WriteResult{
			Memories: res.Memories[i : i+1], Deduplicated: res.Deduplicated[i : i+1],
			Replayed: res.Replayed[i : i+1], Superseded: res.Superseded[i : i+1], Evicted: []store.Ref{},
		}
	}
	for _, ev := range res.Evicted {
		owner := 0
		for i, m := range ms {
			if m.Tenant == ev.Tenant && m.Principal == ev.Principal && m.Kind == ev.Kind {
				owner = i
				break
			}
		}
		parts[owner].Evicted = append(parts[owner].Evicted, ev)
	}
	return parts
}
