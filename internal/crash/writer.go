package crash

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/memgate/memgate"
)

const (
	// principals is how many principals the requests spread over.
	principals = 8
	// supersedeOneIn: a writer that has memories of its own to supersede
	// sends a supersession one request in supersedeOneIn.
	supersedeOneIn = 4
)

// request is one remember: a single memory or a batch, with its own
// idempotency key; or a supersession, one memory that replaces one the
// same writer stored and had acknowledged. Every item's content is unique
// to the run (it carries the request's number and the item's index), so a
// stored copy can be traced to its request without the harness ever
// printing a content.
type request struct {
	seq       int
	principal string
	key       string // the Idempotency-Key header
	body      []byte // sent unchanged on every retry
	contents  []string
	hashes    []string // hex SHA-256 of each content
	// supersedes is the id of the acknowledged memory a supersession
	// replaces ("" for a remember). The harness supersedes a memory at
	// most once: only a retry of the same request names it again.
	supersedes string
	// Set when acknowledged: the ids, one per item, and the round.
	ids   []string
	round int
}

// sentences make the contents read like facts; the write gate has nothing
// to say about them (no secret, nothing instruction-like).
var sentences = []string{
	"prefers tea in the afternoon",
	"walks the dog before work",
	"is learning to play the cello",
	"plans a trip to Lisbon in May",
	"keeps a vegetable garden behind the house",
	"reads two novels a month",
	"likes meetings kept short",
	"moved to a new flat last spring",
}

// newRequest builds request seq: one memory, or one time in three a batch
// of 2 to maxBatch, all for one principal (kind fact, source user: stored
// active, no expiry, no retention cap by default).
func newRequest(seq int, rng *rand.Rand, maxBatch int) *request {
	n := 1
	if rng.IntN(3) == 0 {
		n = 2 + rng.IntN(maxBatch-1)
	}
	return buildRequest(seq, "crash-p"+strconv.Itoa(seq%principals), n, "", rng)
}

// newSupersession builds request seq: one memory of old's principal that
// supersedes old (an acknowledged item).
func newSupersession(seq int, rng *rand.Rand, old ref) *request {
	return buildRequest(seq, old.q.principal, 1, old.q.ids[old.item], rng)
}

// buildRequest builds request seq: n memories for principal; one that
// supersedes the memory oldID when it is set (n is 1 then).
func buildRequest(seq int, principal string, n int, oldID string, rng *rand.Rand) *request {
	q := &request{seq: seq, principal: principal, key: fmt.Sprintf("crash-%07d", seq), supersedes: oldID}
	type item struct {
		Principal  string `json:"principal"`
		Kind       string `json:"kind"`
		Source     string `json:"source"`
		Content    string `json:"content"`
		Supersedes string `json:"supersedes,omitempty"`
	}
	items := make([]item, n)
	for i := range items {
		c := fmt.Sprintf("%s [c%07d.%d] %s", principal, seq, i, sentences[rng.IntN(len(sentences))])
		q.contents = append(q.contents, c)
		q.hashes = append(q.hashes, memgate.ContentHash(c))
		items[i] = item{Principal: principal, Kind: "fact", Source: "user", Content: c, Supersedes: oldID}
	}
	var err error
	if n == 1 {
		q.body, err = json.Marshal(items[0])
	} else {
		q.body, err = json.Marshal(struct {
			Memories []item `json:"memories"`
		}{items})
	}
	if err != nil {
		panic(err) // strings only: cannot fail
	}
	return q
}

// parseToken reads the request number and item index a content carries
// ("[c0000123.1]"); ok is false for a content the harness did not write.
func parseToken(content string) (seq, item int, ok bool) {
	i := bytes.Index([]byte(content), []byte(" [c"))
	if i < 0 {
		return 0, 0, false
	}
	rest := content[i+3:]
	dot, end := -1, -1
	for j := 0; j < len(rest); j++ {
		if rest[j] == '.' && dot < 0 {
			dot = j
		}
		if rest[j] == ']' {
			end = j
			break
		}
	}
	if dot != 7 || end <= dot+1 {
		return 0, 0, false
	}
	s, err1 := strconv.Atoi(rest[:dot])
	it, err2 := strconv.Atoi(rest[dot+1 : end])
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return s, it, true
}

// ledger is every request of the run and what was acknowledged. Safe for
// concurrent use.
type ledger struct {
	mu   sync.Mutex
	reqs []*request // by seq
	byID map[string]ref
	// successors maps an acknowledged id to the supersession sent for it
	// (acknowledged or not).
	successors map[string]*request
	// round counts the rounds verified (roundIDs); an acknowledgement
	// belongs to round+1.
	round int
}

// ref is one item of a request.
type ref struct {
	q    *request
	item int
}

// next returns a new request with the next number.
func (l *ledger) next(rng *rand.Rand, maxBatch int) *request {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := newRequest(len(l.reqs), rng, maxBatch)
	l.reqs = append(l.reqs, q)
	return q
}

// nextSupersession returns a new request with the next number that
// supersedes old, an acknowledged item; nil when a supersession of it was
// made already (the harness supersedes a memory once).
func (l *ledger) nextSupersession(rng *rand.Rand, old ref) *request {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := old.q.ids[old.item]
	if l.successors[id] != nil {
		return nil
	}
	if l.successors == nil {
		l.successors = map[string]*request{}
	}
	q := newSupersession(len(l.reqs), rng, old)
	l.reqs = append(l.reqs, q)
	l.successors[id] = q
	return q
}

// successor returns the supersession sent for id, or nil.
func (l *ledger) successor(id string) *request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.successors[id]
}

// acknowledged returns the item acknowledged as id.
func (l *ledger) acknowledged(id string) (ref, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.byID[id]
	return e, ok
}

// ack records q as acknowledged with ids.
func (l *ledger) ack(q *request, ids []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byID == nil {
		l.byID = map[string]ref{}
	}
	q.ids, q.round = ids, l.round+1
	for i, id := range ids {
		l.byID[id] = ref{q, i}
	}
}

// request returns request seq, or nil.
func (l *ledger) request(seq int) *request {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seq < 0 || seq >= len(l.reqs) {
		return nil
	}
	return l.reqs[seq]
}

// roundIDs returns the ids acknowledged in the current round and moves to
// the next. Call it with the writers paused.
func (l *ledger) roundIDs() map[string]ref {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]ref{}
	for _, q := range l.reqs {
		if q.round == l.round+1 {
			for i, id := range q.ids {
				out[id] = ref{q, i}
			}
		}
	}
	l.round++
	return out
}

// allIDs returns every acknowledged id.
func (l *ledger) allIDs() map[string]ref {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]ref, len(l.byID))
	for id, r := range l.byID {
		out[id] = r
	}
	return out
}

// acked is the number of acknowledged requests.
func (l *ledger) acked() int {
	n, _, _ := l.totals()
	return n
}

// totals returns the acknowledged requests (supersessions included), the
// memories they stored, and the acknowledged supersessions.
func (l *ledger) totals() (requests, memories, supersessions int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range l.reqs {
		if q.ids != nil {
			requests++
			memories += len(q.ids)
			if q.supersedes != "" {
				supersessions++
			}
		}
	}
	return requests, memories, supersessions
}

// writers runs Config.Writers goroutines that send remembers until
// stopped, and can be paused at a point where every request they sent is
// acknowledged.
type writers struct {
	mu      sync.Mutex
	cond    *sync.Cond
	paused  bool
	parked  int
	n       int
	wg      sync.WaitGroup
	counts  writerStats
	stopped bool
}

type writerStats struct {
	retried, resends, replayed, serverErrors, refused int
	// supersedeReplayed: supersessions among replayed; conflicts: retried
	// supersessions answered 409 (see resolveConflict).
	supersedeReplayed, conflicts int
}

// start runs the writers, paused: resume lets them go.
func (w *writers) start(ctx context.Context, r *run) {
	w.cond = sync.NewCond(&w.mu)
	w.paused = true
	w.n = r.cfg.Writers
	for i := range w.n {
		rng := rand.New(rand.NewPCG(r.cfg.Seed, uint64(i)+1))
		w.wg.Go(func() { w.loop(ctx, r, rng) })
	}
	// Wake parked writers when the context ends.
	go func() {
		<-ctx.Done()
		w.mu.Lock()
		w.stopped = true
		w.cond.Broadcast()
		w.mu.Unlock()
	}()
}

// loop sends requests until stopped. One in supersedeOneIn, when the
// writer has any, supersedes one of the memories it stored and had
// acknowledged (and has not superseded yet; a new memory joins them once
// acknowledged, so chains grow): a writer supersedes only its own, so no
// two requests of the run supersede one memory.
func (w *writers) loop(ctx context.Context, r *run, rng *rand.Rand) {
	var own []ref
	for {
		w.mu.Lock()
		for w.paused && !w.stopped {
			w.parked++
			w.cond.Broadcast()
			w.cond.Wait()
			w.parked--
		}
		stopped := w.stopped
		w.mu.Unlock()
		if stopped {
			return
		}
		var q *request
		if len(own) > 0 && rng.IntN(supersedeOneIn) == 0 {
			i := rng.IntN(len(own))
			old := own[i]
			own[i] = own[len(own)-1]
			own = own[:len(own)-1]
			q = r.led.nextSupersession(rng, old)
		}
		if q == nil {
			q = r.led.next(rng, r.cfg.MaxBatch)
		}
		r.send(ctx, q, w)
		// q.ids is set (by this goroutine, in send) when q was acknowledged.
		for i := range q.ids {
			own = append(own, ref{q, i})
		}
	}
}

// resume lets the writers go on.
func (w *writers) resume() {
	w.mu.Lock()
	w.paused = false
	w.cond.Broadcast()
	w.mu.Unlock()
}

// pause stops the writers at their next request and waits until all are
// parked: every request sent so far is then acknowledged (or refused).
func (w *writers) pause() {
	w.mu.Lock()
	w.paused = true
	for w.parked < w.n && !w.stopped {
		w.cond.Wait()
	}
	w.mu.Unlock()
}

// pauseCtx is pause, cut short when ctx ends.
func (w *writers) pauseCtx(ctx context.Context) error {
	w.pause()
	return ctx.Err()
}

func (w *writers) wait() { w.wg.Wait() }

func (w *writers) add(f func(*writerStats)) {
	w.mu.Lock()
	f(&w.counts)
	w.mu.Unlock()
}

func (w *writers) stats() writerStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counts
}

// rememberedItem is the part of an answered memory the harness reads.
type rememberedItem struct {
	ID            string `json:"id"`
	ContentSHA256 string `json:"content_sha256"`
	Supersedes    string `json:"supersedes"`
	Replayed      bool   `json:"replayed"`
}

// send sends q until it is acknowledged: a failed connection or a 5xx is
// re-sent, with the same key and body, to a replica that is up (over one
// child, once it is restarted); a 4xx is a refusal, recorded as a
// problem, except a 409 conflict to a retried supersession (see
// resolveConflict). It returns early only when ctx ends.
func (r *run) send(ctx context.Context, q *request, w *writers) {
	avoid := -1
	for sent := 0; ; {
		i, url, wait, ok := r.tg.pick(avoid)
		if !ok {
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return
			}
		}
		if sent > 0 {
			w.add(func(s *writerStats) {
				s.resends++
				if sent == 1 {
					s.retried++
				}
			})
		}
		sent++
		status, body, err := r.post(ctx, url+"/v1/memories", q)
		r.tg.done(i)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err == nil && (status == http.StatusCreated || status == http.StatusOK):
			r.acknowledge(q, status, body, w)
			return
		case err == nil && (status >= 500 || status == http.StatusTooManyRequests):
			if status >= 500 {
				w.add(func(s *writerStats) { s.serverErrors++ })
			}
		case err == nil && status == http.StatusConflict && q.supersedes != "" && sent > 1 && errorCode(body) == "conflict":
			r.resolveConflict(ctx, q, sent, w)
			return
		case err == nil:
			w.add(func(s *writerStats) { s.refused++ })
			r.problem("request %d (key %s, send %d) refused: HTTP %d %s", q.seq, q.key, sent, status, errorCode(body))
			return
		}
		// Failed: the replica was killed (or answered 5xx). Try another
		// replica at once; over one child, wait a little (it is being
		// restarted, and is marked down once reaped).
		avoid = i
		if len(r.children) == 1 || sent > 1 {
			select {
			case <-time.After(time.Duration(min(sent, 10)) * 5 * time.Millisecond):
			case <-ctx.Done():
				return
			}
		}
	}
}

// acknowledge reads a 2xx answer: one memory per item, each with the hash
// of the content sent.
func (r *run) acknowledge(q *request, status int, body []byte, w *writers) {
	var out struct {
		Memories []rememberedItem `json:"memories"`
	}
	if err := json.Unmarshal(body, &out); err != nil || len(out.Memories) != len(q.contents) {
		w.add(func(s *writerStats) { s.refused++ })
		r.problem("request %d (key %s): HTTP %d with %d memories for %d items (%v)", q.seq, q.key, status, len(out.Memories), len(q.contents), err)
		return
	}
	ids := make([]string, len(out.Memories))
	replayed := false
	for i, m := range out.Memories {
		ids[i] = m.ID
		replayed = replayed || m.Replayed
		if m.ContentSHA256 != q.hashes[i] {
			if r.mark(r.corrupt, m.ID) {
				r.problem("acknowledgement: corrupt %s: request %d item %d answered with content_sha256 %s, sent %s", m.ID, q.seq, i, m.ContentSHA256, q.hashes[i])
			}
		}
		if m.Supersedes != q.supersedes {
			if r.mark(r.wrong, m.ID) {
				r.problem("acknowledgement: wrong state %s: request %d answered with supersedes %q, sent %q", m.ID, q.seq, m.Supersedes, q.supersedes)
			}
		}
	}
	if replayed {
		w.add(func(s *writerStats) {
			s.replayed++
			if q.supersedes != "" {
				s.supersedeReplayed++
			}
		})
	}
	r.led.ack(q, ids)
}

// resolveConflict handles a 409 conflict answered to a retry of the
// supersession q. With its key a retry of a supersession that committed
// replays it; without (Config.NoIdempotencyKey) the server cannot tell the
// retry from a second supersession of a memory the first send superseded,
// and refuses it. The conflict is counted (it is the wrong answer the key
// prevents); then the old memory's successor is read, and when it is q's
// memory (q's content, naming q's old memory) q is acknowledged with it,
// as a client without a key would have to find out, so that the stored
// state is checked as for any acknowledged supersession. Otherwise q is
// refused.
func (r *run) resolveConflict(ctx context.Context, q *request, sent int, w *writers) {
	w.add(func(s *writerStats) { s.conflicts++ })
	var next *listed
	var err error
	for deadline := time.Now().Add(r.cfg.ReadyTimeout); ; {
		// The replica that answered may be killed meanwhile: read again
		// until one is up.
		if next, err = r.successorOf(ctx, q); err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			break
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	if ctx.Err() != nil {
		return
	}
	if err == nil && next != nil && next.Content == q.contents[0] && next.Supersedes == q.supersedes {
		r.problem("request %d (send %d): a retried supersession of %s answered 409 conflict; its first send had committed it as %s", q.seq, sent, q.supersedes, next.ID)
		r.led.ack(q, []string{next.ID})
		return
	}
	w.add(func(s *writerStats) { s.refused++ })
	succ := "(not read)"
	if next != nil {
		succ = next.ID
	}
	r.problem("request %d (send %d): a retried supersession of %s answered 409 conflict, and its successor %s is not this request's memory (%v)", q.seq, sent, q.supersedes, succ, err)
}

// successorOf reads the memory that superseded q's old memory: nil when
// it is not superseded.
func (r *run) successorOf(ctx context.Context, q *request) (*listed, error) {
	old, err := r.get(ctx, q.supersedes, q.principal)
	if err != nil || old == nil || old.Status != memgate.StatusSuperseded || old.SupersededBy == "" {
		return nil, err
	}
	return r.get(ctx, old.SupersededBy, q.principal)
}

// post sends q's body with its Idempotency-Key and reads the answer.
func (r *run) post(ctx context.Context, url string, q *request) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(q.body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", r.key)
	req.Header.Set("Content-Type", "application/json")
	if !r.cfg.NoIdempotencyKey {
		req.Header.Set("Idempotency-Key", q.key)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return 0, nil, err // the answer was cut: not acknowledged
	}
	return resp.StatusCode, b, nil
}

// errorCode is the code and field of an API error body, never its message
// (which could quote a request).
func errorCode(body []byte) string {
	var e struct {
		Error struct {
			Code  string `json:"code"`
			Field string `json:"field"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Code == "" {
		return "(no API error)"
	}
	if e.Error.Field != "" {
		return e.Error.Code + " (field " + e.Error.Field + ")"
	}
	return e.Error.Code
}

// newHTTPClient returns a client for conns concurrent requests. Its
// timeout bounds a request to a replica that hangs rather than dies.
func newHTTPClient(conns int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        2 * conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}}
}
