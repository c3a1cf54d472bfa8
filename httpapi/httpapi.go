// Package httpapi serves the engine over HTTP and JSON: the REST endpoints
// under /v1, /healthz, /metrics and /openapi.json.
//
// Every /v1 request goes through the same steps: authenticate the bearer
// key and take one call from its rate (guard.Guard.Authenticate), bound the
// call by the guard's deadline, check that its role may do the operation,
// then hand the request's own fields to the key's guard.Session, which
// alone decides what the key may do (the scope, the sources it may claim,
// restricted memories, the agent-bound write rule) and calls the engine
// with the key's id as the audit actor. This package holds no engine.
//
// It must never trust a tenant named by a request, answer a foreign id
// differently from a missing one, echo an internal error to a caller, or log
// a request body, memory content, query text or an identifier a caller
// chose (a principal, agent or conversation): its log line per request
// carries memgate's own ids, the route, the status and timings only.
package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/guard"
	"github.com/memgate/memgate/internal/buildinfo"
	"github.com/memgate/memgate/internal/wire"
)

// Defaults for Config.
const (
	// DefaultMaxBodyBytes bounds a JSON request body (a batch of
	// a batch of the engine's DefaultMaxBatch memories must fit in it: about 2 KiB each).
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxImportBytes bounds a JSONL import body.
	DefaultMaxImportBytes = 64 << 20
	// MetricsRefreshEvery is how often, at most, /metrics recounts the
	// memories by status.
	MetricsRefreshEvery = 10 * time.Second
)

// Metrics modes: where GET /metrics is served.
const (
	// MetricsPublic serves /metrics without a key (the default: its
	// figures are counts and timings, no ids or content).
	MetricsPublic = "public"
	// MetricsKey serves /metrics to an admin key only.
	MetricsKey = "key"
	// MetricsOff removes /metrics from the API; MetricsHandler serves it
	// elsewhere (a separate listener).
	MetricsOff = "off"
)

// Config configures the handler. Guard is required.
type Config struct {
	// Guard authenticates, rate-limits and authorizes every /v1 call.
	Guard *guard.Guard
	// Logger receives one line per request (default: discard).
	Logger *slog.Logger
	// MaxBodyBytes bounds a JSON request body (default DefaultMaxBodyBytes);
	// a larger body is refused with 413 too_large.
	MaxBodyBytes int64
	// MaxImportBytes bounds a POST /v1/import body (default
	// DefaultMaxImportBytes).
	MaxImportBytes int64
	// Metrics is where GET /metrics is served: MetricsPublic (default),
	// MetricsKey or MetricsOff.
	Metrics string
	// Now is the clock of the metrics refresh (default time.Now).
	Now func() time.Time
	// Agent answers POST /v1/chat (package agent: recall, a model call,
	// the exchange remembered). Nil (a server without --llm) answers it
	// 503 unavailable, saying how to start one with a model.
	Agent *agent.Agent
	// ChatTimeout bounds one POST /v1/chat (default DefaultChatTimeout).
	ChatTimeout time.Duration
	// PublicURL is the URL clients reach the API at, named in the servers
	// of /openapi.json (CheckPublicURL; empty: the document's
	// {scheme}://{host} template). package server sets it from --public-url
	// or the listen address.
	PublicURL string
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxImportBytes == 0 {
		c.MaxImportBytes = DefaultMaxImportBytes
	}
	if c.Metrics == "" {
		c.Metrics = MetricsPublic
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.ChatTimeout == 0 {
		c.ChatTimeout = DefaultChatTimeout
	}
	return c
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Guard == nil:
		return errors.New("httpapi: guard is required")
	case c.MaxBodyBytes < 0:
		return errors.New("httpapi: max body bytes must not be negative")
	case c.MaxImportBytes < 0:
		return errors.New("httpapi: max import bytes must not be negative")
	case c.ChatTimeout < 0:
		return errors.New("httpapi: chat timeout must not be negative")
	case c.Metrics != MetricsPublic && c.Metrics != MetricsKey && c.Metrics != MetricsOff:
		return fmt.Errorf("httpapi: metrics must be %s, %s or %s", MetricsPublic, MetricsKey, MetricsOff)
	}
	if c.PublicURL != "" {
		u, err := CheckPublicURL(c.PublicURL)
		if err != nil {
			return fmt.Errorf("httpapi: %w", err)
		}
		if u != c.PublicURL {
			return fmt.Errorf("httpapi: public URL %q: want %q", c.PublicURL, u)
		}
	}
	return nil
}

// server is the handler New returns. It is safe for concurrent use.
type server struct {
	cfg     Config
	guard   *guard.Guard
	log     *slog.Logger
	mux     *http.ServeMux
	metrics *metrics
}

// New returns the API handler. The caller owns the engine and serves the
// handler (timeouts and graceful shutdown belong to the http.Server).
func New(cfg Config) (http.Handler, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &server{
		cfg:   cfg,
		guard: cfg.Guard,
		log:   cfg.Logger,
		mux:   http.NewServeMux(),
	}
	s.metrics = newMetrics(cfg.Guard, cfg.Now)
	s.register()
	return s, nil
}

// byKeyPath is where a memory is addressed by its key (?key=…).
const byKeyPath = "/v1/memories/by-key"

// route is one endpoint. op is empty for the public routes (no key).
type route struct {
	method, path string
	op           auth.Op
	public       http.HandlerFunc
	handle       func(*call) error
}

// routes is the API: what New registers and what /openapi.json documents
// (a test holds the two equal).
func (s *server) routes() []route {
	rs := []route{
		{method: "POST", path: "/v1/memories", op: auth.OpRemember, handle: s.remember},
		{method: "GET", path: "/v1/memories", op: auth.OpList, handle: s.list},
		{method: "GET", path: byKeyPath, op: auth.OpGet, handle: s.byKey(s.get)},
		{method: "PATCH", path: byKeyPath, op: auth.OpUpdate, handle: s.byKey(s.update)},
		{method: "DELETE", path: byKeyPath, op: auth.OpDelete, handle: s.byKey(s.delete)},
		{method: "GET", path: "/v1/memories/{id}", op: auth.OpGet, handle: s.get},
		{method: "PATCH", path: "/v1/memories/{id}", op: auth.OpUpdate, handle: s.update},
		{method: "DELETE", path: "/v1/memories/{id}", op: auth.OpDelete, handle: s.delete},
		{method: "POST", path: "/v1/memories/{id}/revoke", op: auth.OpRevoke, handle: s.revoke},
		{method: "POST", path: "/v1/memories/{id}/approve", op: auth.OpApprove, handle: s.approve},
		{method: "POST", path: "/v1/memories/{id}/reject", op: auth.OpReject, handle: s.reject},
		{method: "POST", path: "/v1/memories/{id}/feedback", op: auth.OpFeedback, handle: s.feedback},
		{method: "POST", path: "/v1/recall", op: auth.OpRecall, handle: s.recall},
		{method: "POST", path: "/v1/forget", op: auth.OpForget, handle: s.forget},
		{method: "GET", path: "/v1/audit", op: auth.OpAudit, handle: s.audit},
		{method: "GET", path: "/v1/audit/histogram", op: auth.OpAudit, handle: s.auditHistogram},
		{method: "GET", path: "/v1/stats", op: auth.OpStats, handle: s.stats},
		{method: "POST", path: "/v1/import", op: auth.OpImport, handle: s.importJSONL},
		{method: "GET", path: "/v1/export", op: auth.OpExport, handle: s.export},
		{method: "GET", path: "/v1/whoami", op: auth.OpWhoami, handle: s.whoami},
		{method: "POST", path: "/v1/keys", op: auth.OpKeys, handle: s.createKey},
		{method: "GET", path: "/v1/keys", op: auth.OpKeys, handle: s.listKeys},
		{method: "POST", path: "/v1/keys/{id}/revoke", op: auth.OpKeys, handle: s.revokeKey},
		{method: "POST", path: "/v1/chat", op: auth.OpChat, handle: s.chat},
		{method: "POST", path: "/v1/conversations/{id}/messages", op: auth.OpRemember, handle: s.ingest},
		{method: "GET", path: "/healthz", public: s.healthz},
		{method: "GET", path: "/readyz", public: s.readyz},
		{method: "GET", path: "/openapi.json", public: s.openapi},
	}
	switch s.cfg.Metrics {
	case MetricsPublic:
		rs = append(rs, route{method: "GET", path: "/metrics", public: s.serveMetrics})
	case MetricsKey:
		rs = append(rs, route{method: "GET", path: "/metrics", public: s.keyedMetrics})
	}
	return rs
}

// clientOf is the client address of r (guard.Guard.ClientAddr).
func (s *server) clientOf(r *http.Request) string {
	return s.guard.ClientAddr(r.RemoteAddr, r.Header.Values("X-Forwarded-For"))
}

// anonymous takes a call from the client address's anonymous rate
// (guard.Guard.AllowAnonymous) before h, which needs no key: over it, 429
// with Retry-After. /healthz is not limited (a liveness probe must never
// restart a server for another client's flood; it costs nothing).
func (s *server) anonymous(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.guard.AllowAnonymous(s.clientOf(r)); err != nil {
			var rl *guard.RateLimitError
			if errors.As(err, &rl) {
				w.Header().Set("Retry-After", fmt.Sprint(int64(math.Ceil(rl.RetryAfter.Seconds()))))
			}
			s.writeError(w, r, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *server) register() {
	methods := map[string][]string{}
	var paths []string
	for _, rt := range s.routes() {
		var h http.Handler
		switch {
		case rt.public != nil && rt.path == "/healthz":
			h = rt.public
		case rt.public != nil:
			h = s.anonymous(rt.public)
		default:
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serveAPI(w, r, rt) })
		}
		pattern := rt.method + " " + rt.path
		s.mux.Handle(pattern, s.named(rt.path, h))
		if methods[rt.path] == nil {
			paths = append(paths, rt.path)
		}
		methods[rt.path] = append(methods[rt.path], rt.method)
	}
	// A known path with another method answers 405 with Allow, in the API's
	// error shape; anything else 404.
	for _, p := range paths {
		allow := slices.Clone(methods[p])
		if slices.Contains(allow, "GET") {
			allow = append(allow, "HEAD")
		}
		sort.Strings(allow)
		allowed := strings.Join(allow, ", ")
		notAllowed := s.named(p, s.anonymous(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allowed)
			s.writeError(w, r, &memgate.Error{Code: wire.CodeMethodNotAllowed, Message: "method not allowed on this path (allowed: " + allowed + ")"})
		})))
		if p != byKeyPath {
			s.mux.Handle(p, notAllowed)
			continue
		}
		// A pattern of every method on /v1/memories/by-key would overlap
		// GET /v1/memories/{id} with neither more specific: the other
		// methods are named one by one.
		for _, m := range []string{"POST", "PUT", "OPTIONS", "TRACE", "CONNECT"} {
			s.mux.Handle(m+" "+p, notAllowed)
		}
	}
	s.mux.Handle("/", s.named("unmatched", s.anonymous(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &memgate.Error{Code: memgate.ENOTFOUND, Message: "no such route"})
	}))))
}

// named records the route of a request for its log line and metrics.
func (s *server) named(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info := infoOf(r.Context()); info != nil {
			info.route = route
		}
		h.ServeHTTP(w, r)
	})
}

// reqInfo is what the outer handler logs about a request; the inner
// handlers fill it in.
type reqInfo struct {
	id       string
	route    string
	keyID    string
	errCode  string
	cause    string // an unavailable answer's message (the store's own words: no content), for the log
	internal error  // logged, never echoed
}

type infoKey struct{}

func infoOf(ctx context.Context) *reqInfo {
	i, _ := ctx.Value(infoKey{}).(*reqInfo)
	return i
}

var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// newRequestID returns a random request id.
func newRequestID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("httpapi: crypto/rand failed: " + err.Error())
	}
	return "req_" + hex.EncodeToString(b[:])
}

// ServeHTTP assigns the request id, recovers panics, and writes the log
// line and the metrics of every request.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	info := &reqInfo{id: r.Header.Get("X-Request-Id")}
	if !requestIDRE.MatchString(info.id) {
		info.id = newRequestID()
	}
	w.Header().Set("X-Request-Id", info.id)
	rec := &recorder{ResponseWriter: w}
	r = r.WithContext(context.WithValue(r.Context(), infoKey{}, info))
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			info.internal = fmt.Errorf("panic: %v", p)
			if !rec.wroteHeader {
				s.writeError(rec, r, errors.New("panic"))
			}
		}
		took := time.Since(start)
		if info.route == "" {
			info.route = "unmatched"
		}
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		s.metrics.observeRequest(info.route, r.Method, status, took)
		attrs := []slog.Attr{
			slog.String("request_id", info.id),
			slog.String("method", r.Method),
			slog.String("route", info.route),
			slog.Int("status", status),
			slog.Duration("took", took),
			slog.Int64("bytes", rec.bytes),
		}
		if id := r.PathValue("id"); id != "" && memgate.ValidIdent(id) && loggedID(info.route) {
			attrs = append(attrs, slog.String("id", id))
		}
		if info.keyID != "" {
			attrs = append(attrs, slog.String("key_id", info.keyID))
		}
		level := slog.LevelInfo
		if info.errCode != "" {
			attrs = append(attrs, slog.String("code", info.errCode))
		}
		if info.cause != "" {
			attrs = append(attrs, slog.String("cause", info.cause))
		}
		if info.internal != nil {
			level = slog.LevelError
			attrs = append(attrs, slog.String("error", info.internal.Error()))
		}
		s.log.LogAttrs(r.Context(), level, "http request", attrs...)
	}()
	s.mux.ServeHTTP(rec, r)
}

// loggedID reports whether the {id} of route is one memgate made (a
// memory's or a key's id), which the log line may carry. A caller's own
// identifier in a route (the conversation of
// /v1/conversations/{id}/messages) is never logged: it would outlive the
// person's forget in the logs.
func loggedID(route string) bool {
	return strings.HasPrefix(route, "/v1/memories/") || strings.HasPrefix(route, "/v1/keys/")
}

// recorder remembers the status and size of a response.
type recorder struct {
	http.ResponseWriter
	status      int
	bytes       int64
	wroteHeader bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// call is one authenticated API request.
type call struct {
	s    *server
	w    http.ResponseWriter
	r    *http.Request
	ctx  context.Context
	sess *guard.Session
	op   auth.Op
}

// serveAPI authenticates and rate-limits a request (the guard), bounds it
// by the guard's deadline, refuses an operation the key's role may not
// perform, then runs the route's handler and writes its error, if any.
func (s *server) serveAPI(w http.ResponseWriter, r *http.Request, rt route) {
	w.Header().Set("Cache-Control", "no-store")
	ctx, cancel := s.guard.Deadline(r.Context(), rt.op)
	defer cancel()
	r = r.WithContext(ctx)
	sess, err := s.authenticate(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !sess.Allowed(rt.op) {
		s.writeError(w, r, auth.ErrForbidden(rt.op))
		return
	}
	c := &call{s: s, w: w, r: r, sess: sess, op: rt.op, ctx: r.Context()}
	if err := rt.handle(c); err != nil {
		s.writeError(w, r, err)
	}
}

// authenticate returns the session of r's Authorization header, recording
// the key for the log line and metrics. Every refusal (missing, malformed,
// unknown, revoked) is auth's one unauthenticated error, so a caller
// learns nothing about which keys exist; a key over its rate is answered
// 429 with Retry-After.
func (s *server) authenticate(w http.ResponseWriter, r *http.Request) (*guard.Session, error) {
	sess, err := s.guard.AuthenticateFrom(r.Context(), r.Header.Get("Authorization"), s.clientOf(r))
	var rl *guard.RateLimitError
	switch {
	case errors.As(err, &rl):
		w.Header().Set("Retry-After", fmt.Sprint(int64(math.Ceil(rl.RetryAfter.Seconds()))))
		return nil, err
	case err != nil:
		if memgate.ErrorCode(err) == memgate.EUNAUTHORIZED {
			w.Header().Set("WWW-Authenticate", `Bearer realm="memgate"`)
		}
		return nil, err
	}
	k := sess.Key()
	if info := infoOf(r.Context()); info != nil {
		info.keyID = k.ID
	}
	s.metrics.sawTenant(k.Tenant)
	return sess, nil
}

// key is the call's key record.
func (c *call) key() memgate.Key { return c.sess.Key() }

// healthz is liveness: the process serves HTTP. It says nothing of the
// store (that is readyz), so a replica whose database is away is not
// restarted for it.
func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	b := buildinfo.Get()
	writeJSON(w, http.StatusOK, healthResponse{Status: "ok", Version: b.Version, Revision: b.Revision})
}

// healthResponse is the body of /healthz and /readyz.
type healthResponse struct {
	Status   string               `json:"status"` // ok, or unavailable (readyz)
	Version  string               `json:"version"`
	Revision string               `json:"revision,omitempty"`
	Checks   []memgate.ReadyCheck `json:"checks,omitempty"`
}

// readyTimeout bounds a readiness check: a load balancer's probe must get
// an answer, and a store that does not answer within it is not ready.
const readyTimeout = 5 * time.Second

// readyz is readiness: 200 when the store answers a query and the
// embedder its probe, 503 naming the failing part otherwise, so a load
// balancer takes a replica whose PostgreSQL is gone out of rotation.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	b := buildinfo.Get()
	out := healthResponse{Status: "ok", Version: b.Version, Revision: b.Revision, Checks: s.cfg.Guard.Ready(ctx)}
	status := http.StatusOK
	for _, c := range out.Checks {
		if !c.OK {
			out.Status, status = "unavailable", http.StatusServiceUnavailable
			if info := infoOf(r.Context()); info != nil {
				info.errCode, info.cause = memgate.EUNAVAILABLE, c.Part+": "+c.Error
			}
		}
	}
	if status != http.StatusOK {
		w.Header().Set("Retry-After", "5")
	}
	writeJSON(w, status, out)
}

// openapi serves the document with its servers naming the configured
// public URL (Config.PublicURL), so a client generated from it calls this
// server; never the request's Host, which the client chose.
func (s *server) openapi(w http.ResponseWriter, r *http.Request) {
	doc, err := documentFor(s.cfg.PublicURL)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(doc)
}
