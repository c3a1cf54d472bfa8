package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/guard"
	"github.com/memgate/memgate/httpapi"
	"github.com/memgate/memgate/internal/logtest"
	"github.com/memgate/memgate/policy"
	"github.com/memgate/memgate/sqlite"
)

// Markers planted in content and query text: no log line may ever hold
// them.
var planted = []string{"zqxjvarnish", "quokkablimp"}

// harness is a real server on a loopback listener over a real SQLite
// store in a temporary directory, with the built-in embedder. Every log
// line of the server and the engine is captured; when the test ends, the
// logs must hold no planted marker and must hold every request id the
// test saw.
type harness struct {
	t    *testing.T
	url  string
	db   *sqlite.DB
	path string // the database file
	eng  *engine.Engine
	logs *lockedBuffer

	mu     sync.Mutex
	reqIDs []string
}

// lockedBuffer captures the log lines.
type lockedBuffer = logtest.Buffer

// setup is what a harness option may change before the server starts:
// the API's and the guard's configurations, over the harness's engine.
type setup struct {
	api   httpapi.Config
	guard guard.Config
	eng   *engine.Engine
	// policy, when set by an option, is the engine's write-gate policy
	// (read before the engine is made; the other fields after).
	policy *policy.Config
}

// Options run twice: once before the engine exists (eng nil; only policy
// is read), once after. An option that needs the engine returns when it is
// nil.

// withPolicy sets the engine's write-gate policy.
func withPolicy(p policy.Config) func(*setup) { return func(s *setup) { s.policy = &p } }

// withAPI changes the API's configuration.
func withAPI(f func(*httpapi.Config)) func(*setup) { return func(s *setup) { f(&s.api) } }

func newHarness(t *testing.T, opts ...func(*setup)) *harness {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var pre setup
	for _, o := range opts {
		o(&pre) // only policy is read from this pass
	}
	ecfg := engine.Config{Store: db, Embedder: builtin.New(), Logger: logger}
	if pre.policy != nil {
		ecfg.Policy = *pre.policy
	}
	eng, err := engine.New(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	st := setup{
		api:   httpapi.Config{Logger: logger},
		guard: guard.Config{Engine: eng, RateLimit: guard.RateLimit{PerSecond: -1}, Logger: logger},
		eng:   eng,
	}
	for _, o := range opts {
		o(&st)
	}
	g, err := guard.New(st.guard)
	if err != nil {
		t.Fatal(err)
	}
	st.api.Guard = g
	h, err := httpapi.New(st.api)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	hs := &harness{t: t, url: srv.URL, db: db, path: path, eng: eng, logs: logs}
	t.Cleanup(func() {
		srv.Close()
		eng.Close()
		db.Close()
		hs.checkLogs()
	})
	return hs
}

// checkLogs is the log guarantee: ids and timings, never content or query
// text. The control: the logs do hold the request ids.
func (h *harness) checkLogs() {
	t := h.t
	logs := h.logs.String()
	low := strings.ToLower(logs)
	for _, m := range planted {
		if strings.Contains(low, m) {
			t.Errorf("logs hold the planted marker %q:\n%s", m, logs)
		}
	}
	h.mu.Lock()
	ids := h.reqIDs
	h.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	for _, id := range ids {
		if !strings.Contains(logs, `"request_id":"`+id+`"`) {
			t.Errorf("logs do not hold request id %s", id)
			return
		}
	}
}

// key creates a key directly through the store and returns its secret.
func (h *harness) key(tenant string, role memgate.Role, principal, agent string) string {
	h.t.Helper()
	return mintKey(h.t, h.db, tenant, role, principal, agent)
}

// keyWith is key with the sources the key is granted at creation.
func (h *harness) keyWith(tenant string, role memgate.Role, principal, agent string, sources ...memgate.Source) string {
	h.t.Helper()
	return mintKey(h.t, h.db, tenant, role, principal, agent, sources...)
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request. body is sent as is when it is a string or []byte,
// as JSON otherwise (nil: no body). hdr holds header name/value pairs.
func (h *harness) do(method, path, key string, body any, hdr ...string) resp {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	if id := res.Header.Get("X-Request-Id"); id != "" {
		h.mu.Lock()
		h.reqIDs = append(h.reqIDs, id)
		h.mu.Unlock()
	} else {
		h.t.Errorf("%s %s: no X-Request-Id", method, path)
	}
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// want fails the test unless r has status.
func (r resp) want(t *testing.T, status int) resp {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	return r
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("response is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// decode decodes the body into v.
func (r resp) decode(t *testing.T, v any) {
	t.Helper()
	reflect.ValueOf(v).Elem().SetZero() // no field survives from a previous decode
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %T: %v: %s", v, err, r.body)
	}
}

// apiError is the error of a response, or the zero value.
func (r resp) apiError(t *testing.T) (code, field, message string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Field, Message string } `json:"error"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("error response is not JSON: %s", r.body)
	}
	return e.Error.Code, e.Error.Field, e.Error.Message
}

// wantError fails the test unless r is an error with status and code (and
// field, when not empty; in a batch, the field of an item matches too).
func (r resp) wantError(t *testing.T, status int, code, field string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	c, f, msg := r.apiError(t)
	if c != code {
		t.Fatalf("code %q, want %q: %s", c, code, r.body)
	}
	if field != "" && f != field && !strings.HasSuffix(f, "]."+field) {
		t.Fatalf("field %q, want %q: %s", f, field, r.body)
	}
	if msg == "" {
		t.Fatalf("error without a message: %s", r.body)
	}
}

// remembered is the response of POST /v1/memories.
type remembered struct {
	Memories []struct {
		memgate.Memory
		Deduplicated bool `json:"deduplicated"`
		Replayed     bool `json:"replayed"`
	} `json:"memories"`
}

// remember stores one memory through the API and returns it.
func (h *harness) remember(key string, body map[string]any) memgate.Memory {
	h.t.Helper()
	var out remembered
	h.do("POST", "/v1/memories", key, body).want(h.t, http.StatusCreated).decode(h.t, &out)
	if len(out.Memories) != 1 {
		h.t.Fatalf("remember returned %d memories", len(out.Memories))
	}
	return out.Memories[0].Memory
}

// count is the number of memories of a tenant, read from the store.
func (h *harness) count(tenant string) int64 {
	h.t.Helper()
	cs, err := h.db.Counts(context.Background(), memgate.Scope{Tenant: tenant, AllPrincipals: true}, memgate.Now(timeNow()))
	if err != nil {
		h.t.Fatal(err)
	}
	var n int64
	for _, c := range cs {
		n += c.N
	}
	return n
}

// get reads a memory from the store directly (whatever the API says).
func (h *harness) get(tenant, id string) *memgate.Memory {
	h.t.Helper()
	m, err := h.db.Get(context.Background(), memgate.Scope{Tenant: tenant, AllPrincipals: true}, id)
	if err != nil {
		h.t.Fatalf("get %s: %v", id, err)
	}
	return m
}
