package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memgate/memgate/postgres/pgtest"
	"github.com/memgate/memgate/server"
)

// tcpProxy forwards TCP connections to a target. Cut closes every
// connection and the listener, so new connections are refused, as by a
// PostgreSQL server that went away; Restore listens again on the same
// address.
type tcpProxy struct {
	t      *testing.T
	target string
	addr   string

	frozen atomic.Bool // bytes are held, connections stay open (Freeze)

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	p := &tcpProxy{t: t, target: target, conns: map[net.Conn]struct{}{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.start(ln)
	t.Cleanup(func() {
		p.frozen.Store(false)
		p.Cut()
		p.wg.Wait()
	})
	return p
}

func (p *tcpProxy) start(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Go(func() { p.pipe(c) })
		}
	})
}

// track adds c to the open connections, or closes it when the proxy has
// been cut since it was accepted.
func (p *tcpProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *tcpProxy) pipe(client net.Conn) {
	if !p.track(client) {
		return
	}
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil || !p.track(server) {
		client.Close()
		return
	}
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			client.Close()
			server.Close()
			p.mu.Lock()
			delete(p.conns, client)
			delete(p.conns, server)
			p.mu.Unlock()
		})
	}
	var wg sync.WaitGroup
	wg.Go(func() { p.copy(server, client); closeBoth() })
	wg.Go(func() { p.copy(client, server); closeBoth() })
	wg.Wait()
}

// copy forwards src to dst, holding what it read while the proxy is
// frozen.
func (p *tcpProxy) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for p.frozen.Load() {
			time.Sleep(5 * time.Millisecond)
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Freeze stops forwarding without closing anything: a database that stops
// answering (hung, or a network that drops packets). Thaw resumes.
func (p *tcpProxy) Freeze() { p.frozen.Store(true) }
func (p *tcpProxy) Thaw()   { p.frozen.Store(false) }

// Cut closes the listener and every open connection.
func (p *tcpProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Restore listens again on the proxy's address.
func (p *tcpProxy) Restore() {
	p.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port may take a moment to be free again
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			p.start(ln)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Fatalf("listen again on %s: %v", p.addr, err)
}

// outcome is one request of the load.
type outcome struct {
	op         string   // "remember", "batch" or "recall"
	tokens     []string // content tokens of a remember
	start, end time.Time
	status     int // 0: transport error
	code       string
	transport  error
	ids        []string
}

// Bounds of TestPostgresOutage.
const (
	// outageAnswerBound: every request answers within it, during the
	// outage too (a refused connection fails at once; nothing may wait
	// for a connect timeout or hang).
	outageAnswerBound = 5 * time.Second
	// outageRecoveryBound: after the database returns, requests succeed
	// again within it, with the same server process.
	outageRecoveryBound = 10 * time.Second
)

// TestPostgresOutage runs a server over PostgreSQL through a TCP proxy and
// drives remembers (single and batches) and recalls through it from
// several workers. The proxy is cut (every connection closed, new ones
// refused) for two seconds, then restored. It checks: before the cut every
// request succeeds (the control); every request answers within
// outageAnswerBound with 2xx or 503 unavailable (never a 500, never a
// transport error); requests that ran wholly inside the outage all fail;
// after the restore the same server process recovers within
// outageRecoveryBound and then every request succeeds; every acknowledged
// memory is stored once; and a failed batch is stored whole or not at all
// (a write cut during its COMMIT may have committed: such requests are
// counted, not failed, since the client cannot know).
//
// It does not run in parallel with the package's other tests, so that
// they do not stretch its timings.
func TestPostgresOutage(t *testing.T) {
	dbURL := pgtest.SchemaURL(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newProxy(t, u.Host)
	u.Host = proxy.addr
	s := startServer(t, server.Config{Postgres: u.String(), SweepEvery: -1}, "")
	a := newAPI(t, s.base, s.key)
	a.ok(http.StatusCreated, "POST", "/v1/memories", batchJSON("seed", 4))

	hc := &http.Client{Timeout: 30 * time.Second}
	var seq atomic.Int64
	call := func(op string) outcome {
		o := outcome{op: op}
		var body, path string
		switch op {
		case "remember":
			o.tokens = []string{fmt.Sprintf("r%05d", seq.Add(1))}
			path, body = "/v1/memories", memoryJSON(o.tokens[0])
		case "batch":
			n := seq.Add(1)
			var items []string
			for i := range 3 {
				tok := fmt.Sprintf("b%05d-%d", n, i)
				o.tokens = append(o.tokens, tok)
				items = append(items, memoryJSON(tok))
			}
			path, body = "/v1/memories", `{"memories":[`+strings.Join(items, ",")+`]}`
		default:
			path, body = "/v1/recall", `{"principal":"alice","query":"When do the tomatoes by the south fence want water?"}`
		}
		req, _ := http.NewRequest("POST", s.base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+s.key)
		o.start = time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			o.end, o.transport = time.Now(), err
			return o
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		o.end, o.status = time.Now(), resp.StatusCode
		if resp.StatusCode/100 == 2 {
			if op != "recall" {
				o.ids = idsOf(t, b)
			}
		} else {
			o.code, _ = errorOf(b)
		}
		return o
	}

	var mu sync.Mutex
	var outcomes []outcome
	stop := make(chan struct{})
	var workers sync.WaitGroup
	for w := range 6 {
		workers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				op := []string{"remember", "batch", "recall", "recall"}[r.IntN(4)]
				o := call(op)
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
				if o.status != http.StatusOK && o.status != http.StatusCreated {
					time.Sleep(10 * time.Millisecond) // a failing client backs off a little
				}
			}
		})
	}
	snapshot := func() []outcome {
		mu.Lock()
		defer mu.Unlock()
		return append([]outcome(nil), outcomes...)
	}

	// Warm up: a second and at least a dozen answered requests (a slow
	// machine takes longer), so the control has something to check.
	for start := time.Now(); time.Since(start) < time.Second || len(snapshot()) < 12; {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("%d requests answered in 30 s before the outage", len(snapshot()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	cutAt := time.Now()
	proxy.Cut()
	time.Sleep(2 * time.Second)
	restoredAt := time.Now()
	proxy.Restore()

	// Run until two seconds pass with every request succeeding, or the
	// recovery bound runs out.
	var recoveredAt time.Time
	for {
		time.Sleep(100 * time.Millisecond)
		var lastFail time.Time
		for _, o := range snapshot() {
			if o.status/100 != 2 && o.end.After(lastFail) {
				lastFail = o.end
			}
		}
		if lastFail.Before(restoredAt) {
			lastFail = restoredAt
		}
		if time.Since(lastFail) >= 2*time.Second {
			recoveredAt = lastFail
			break
		}
		if time.Since(restoredAt) > outageRecoveryBound+2*time.Second {
			break
		}
	}
	close(stop)
	workers.Wait()
	all := snapshot()

	var before, during, failed, after int
	statuses := map[string]int{}
	var maxTook time.Duration
	for _, o := range all {
		took := o.end.Sub(o.start)
		maxTook = max(maxTook, took)
		key := fmt.Sprint(o.status)
		if o.code != "" {
			key += " " + o.code
		}
		if o.transport != nil {
			key = "transport error"
		}
		if !o.start.Before(cutAt) && o.end.Before(restoredAt) {
			statuses[key]++
		}
		switch {
		case o.transport != nil:
			t.Errorf("%s: transport error after %v: %v", o.op, took, o.transport)
		case o.status/100 != 2 && (o.status != http.StatusServiceUnavailable || o.code != "unavailable"):
			t.Errorf("%s: %d %s, want 2xx or 503 unavailable", o.op, o.status, o.code)
		}
		if took > outageAnswerBound {
			t.Errorf("%s took %v to answer (%d), more than %v", o.op, took, o.status, outageAnswerBound)
		}
		switch {
		case o.end.Before(cutAt):
			before++
			if o.status/100 != 2 {
				t.Errorf("control: %s before the outage: %d %s", o.op, o.status, o.code)
			}
		case o.start.After(cutAt.Add(100*time.Millisecond)) && o.end.Before(restoredAt):
			during++
			if o.status/100 == 2 {
				t.Errorf("%s succeeded while the database was unreachable", o.op)
			}
		}
		if o.status/100 != 2 {
			failed++
		}
		if !recoveredAt.IsZero() && o.start.After(recoveredAt) {
			after++
		}
	}
	if before == 0 || during == 0 {
		t.Fatalf("%d requests before the outage, %d inside it: the load did not cover both", before, during)
	}
	if recoveredAt.IsZero() {
		t.Fatalf("no recovery: requests still failed %v after the database returned", outageRecoveryBound)
	}
	recovery := recoveredAt.Sub(restoredAt)
	if recovery > outageRecoveryBound {
		t.Errorf("recovery took %v, more than %v", recovery, outageRecoveryBound)
	}
	if after == 0 {
		t.Fatal("no request after the recovery")
	}
	t.Logf("%d requests (%d before the cut, %d wholly inside the 2 s outage: %v; %d failed in all; %d after recovery, all 2xx); slowest answer %v; recovered %v after the database returned",
		len(all), before, during, statuses, failed, after, maxTook.Round(time.Millisecond), recovery.Round(time.Millisecond))

	// What is stored: every acknowledged memory, once; each failed batch
	// whole or not at all.
	stored := map[string]int{} // content token -> memories holding it
	cursor := ""
	for {
		var page struct {
			Memories []struct {
				Content string `json:"content"`
			} `json:"memories"`
			NextCursor string `json:"next_cursor"`
		}
		path := "/v1/memories?principal=alice&limit=1000"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if err := json.Unmarshal(a.ok(http.StatusOK, "GET", path, ""), &page); err != nil {
			t.Fatal(err)
		}
		for _, m := range page.Memories {
			tok, _, _ := strings.Cut(m.Content, " ")
			stored[tok]++
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	var acked, ambiguous int
	for _, o := range all {
		if o.op == "recall" {
			continue
		}
		n := 0
		for _, tok := range o.tokens {
			if stored[tok] > 1 {
				t.Errorf("%s is stored %d times", tok, stored[tok])
			}
			n += min(stored[tok], 1)
		}
		switch {
		case o.status/100 == 2:
			acked++
			if n != len(o.tokens) || len(o.ids) != len(o.tokens) {
				t.Errorf("acknowledged %s %v: %d of %d memories stored", o.op, o.tokens, n, len(o.tokens))
			}
		case n != 0 && n != len(o.tokens):
			t.Errorf("failed %s %v stored %d of %d memories: a partial write", o.op, o.tokens, n, len(o.tokens))
		case n != 0:
			ambiguous++
		}
	}
	for _, o := range all {
		for _, id := range o.ids {
			if status, b := a.do("GET", "/v1/memories/"+id+"?principal=alice", ""); status != http.StatusOK {
				t.Errorf("acknowledged memory %s: %d %s", id, status, b)
			}
		}
	}
	t.Logf("%d acknowledged writes all stored; %d failed writes stored whole (cut during COMMIT), none partly", acked, ambiguous)
}

// TestPostgresStopsAnswering: a PostgreSQL that stops answering without
// closing its connections holds a request no longer than the request
// timeout, which answers 503 unavailable; once it answers again, so does
// the server, with nothing restarted.
func TestPostgresStopsAnswering(t *testing.T) {
	dbURL := pgtest.SchemaURL(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newProxy(t, u.Host)
	u.Host = proxy.addr
	const timeout = 2 * time.Second
	s := startServer(t, server.Config{Postgres: u.String(), SweepEvery: -1, RequestTimeout: timeout}, "")
	a := newAPI(t, s.base, s.key)
	a.ok(http.StatusCreated, "POST", "/v1/memories", batchJSON("seed", 2))
	recall := `{"principal":"alice","query":"When do the tomatoes by the south fence want water?"}`
	// Control: answered at once while the database answers.
	start := time.Now()
	a.ok(http.StatusOK, "POST", "/v1/recall", recall)
	if took := time.Since(start); took > timeout {
		t.Fatalf("control recall took %s", took)
	}

	proxy.Freeze()
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/recall", recall},
		{"POST", "/v1/memories", memoryJSON("frozen")},
		{"GET", "/v1/memories?principal=alice", ""},
	} {
		start := time.Now()
		status, body := a.do(c.method, c.path, c.body)
		took := time.Since(start)
		code, msg := errorOf(body)
		if status != http.StatusServiceUnavailable || code != "unavailable" || !strings.Contains(msg, "did not finish within 2s") {
			t.Fatalf("%s %s with the database not answering: %d %s %q after %s; want 503 unavailable naming the timeout", c.method, c.path, status, code, msg, took)
		}
		if took < timeout || took > timeout+3*time.Second {
			t.Fatalf("%s %s answered after %s; want about the %s timeout", c.method, c.path, took, timeout)
		}
	}
	proxy.Thaw()
	deadline := time.Now().Add(15 * time.Second)
	for {
		status, _ := a.do("POST", "/v1/recall", recall)
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not recover within 15 s of the database answering again (last status %d)", status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The frozen remember stored nothing it acknowledged; a new one works.
	a.ok(http.StatusCreated, "POST", "/v1/memories", memoryJSON("after"))
}

// TestReadyzFollowsPostgres: /readyz answers 200 while PostgreSQL answers
// and 503 naming the store while it is gone (the proxy cut refuses every
// connection, as a stopped server does), then 200 again once it returns,
// with the same process; /healthz (liveness) answers 200 throughout.
func TestReadyzFollowsPostgres(t *testing.T) {
	dbURL := pgtest.SchemaURL(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newProxy(t, u.Host)
	u.Host = proxy.addr
	s := startServer(t, server.Config{Postgres: u.String(), SweepEvery: -1}, "")
	type health struct {
		Status  string `json:"status"`
		Version string `json:"version"`
		Checks  []struct {
			Part  string `json:"part"`
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		} `json:"checks"`
	}
	get := func(path string) (int, health) {
		t.Helper()
		res, err := (&http.Client{Timeout: 10 * time.Second}).Get(s.base + path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		defer res.Body.Close()
		var h health
		if err := json.NewDecoder(res.Body).Decode(&h); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return res.StatusCode, h
	}
	failing := func(h health) []string {
		var parts []string
		for _, c := range h.Checks {
			if !c.OK {
				parts = append(parts, c.Part)
			}
		}
		return parts
	}
	if code, h := get("/readyz"); code != http.StatusOK || h.Status != "ok" || len(h.Checks) != 2 || len(failing(h)) != 0 || h.Version == "" {
		t.Fatalf("readyz with PostgreSQL up: %d %+v", code, h)
	}
	proxy.Cut()
	code, h := get("/readyz")
	if code != http.StatusServiceUnavailable || h.Status != "unavailable" || fmt.Sprint(failing(h)) != "[store]" {
		t.Fatalf("readyz with PostgreSQL gone: %d %+v, want 503 naming the store", code, h)
	}
	if strings.Contains(fmt.Sprint(h), "memgate:memgate") {
		t.Fatalf("readyz shows the database password: %+v", h)
	}
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Fatalf("healthz with PostgreSQL gone: %d, want 200 (liveness)", code)
	}
	proxy.Restore()
	deadline := time.Now().Add(outageRecoveryBound)
	for {
		code, h := get("/readyz")
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz after PostgreSQL returned: %d %+v", code, h)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
