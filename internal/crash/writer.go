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

// principals is how many principals the requests spread over.
const principals = 8

// request is one remember: a single memory or a batch, with its own
// idempotency key. Every item's content is unique to the run (it carries
// the request's number and the item's index), so a stored copy can be
// traced to its request without the harness ever printing a content.
type request struct {
	seq       int
	principal string
	key       string // the Idempotency-Key header
	body      []byte // sent unchanged on every retry
	contents  []string
	hashes    []string // hex SHA-256 of each content
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
	q := &request{seq: seq, principal: "crash-p" + strconv.Itoa(seq%principals), key: fmt.Sprintf("crash-%07d", seq)}
	type item struct {
		Principal string `json:"principal"`
		Kind      string `json:"kind"`
		Source    string `json:"source"`
		Content   string `json:"content"`
	}
	principal := q.principal
	items := make([]item, n)
	for i := range items {
		c := fmt.Sprintf("%s [c%07d.%d] %s", principal, seq, i, sentences[rng.IntN(len(sentences))])
		q.contents = append(q.contents, c)
		q.hashes = append(q.hashes, memgate.ContentHash(c))
		items[i] = item{Principal: principal, Kind: "fact", Source: "user", Content: c}
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
	n, _ := l.totals()
	return n
}

// totals returns the acknowledged requests and memories.
func (l *ledger) totals() (requests, memories int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range l.reqs {
		if q.ids != nil {
			requests++
			memories += len(q.ids)
		}
	}
	return requests, memories
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

func (w *writers) loop(ctx context.Context, r *run, rng *rand.Rand) {
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
		q := r.led.next(rng, r.cfg.MaxBatch)
		r.send(ctx, q, w)
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
	Replayed      bool   `json:"replayed"`
}

// send sends q until it is acknowledged: a failed connection or a 5xx is
// re-sent, with the same key and body, to a replica that is up (over one
// child, once it is restarted); a 4xx is a refusal, recorded as a
// problem. It returns early only when ctx ends.
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
	}
	if replayed {
		w.add(func(s *writerStats) { s.replayed++ })
	}
	r.led.ack(q, ids)
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
