// Package httpapi serves the engine over HTTP and JSON: the REST endpoints
// under /v1, /healthz, /metrics and /openapi.json.
//
// Every /v1 request goes through the same steps: authenticate the bearer
// key, check its rate limit, check that its role may do the operation
// (auth.Allowed), derive the scope from the key (auth.ScopeFor: the tenant
// always comes from the key, request fields may only narrow within its
// binding), then call the engine with the key's id as the audit actor.
//
// It must never trust a tenant named by a request, answer a foreign id
// differently from a missing one, echo an internal error to a caller, or log
// a request body, memory content or query text: its log line per request
// carries ids, the route, the status and timings only.
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
	"github.com/memgate/memgate/engine"
)

// Defaults for Config.
const (
	// DefaultMaxBodyBytes bounds a JSON request body (a batch of
	// engine.DefaultMaxBatch memories must fit in it: about 2 KiB each).
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxImportBytes bounds a JSONL import body.
	DefaultMaxImportBytes = 64 << 20
	// DefaultRatePerSecond and DefaultRateBurst are the token bucket of
	// each key: sustained requests per second, and how many may come at
	// once after a quiet period.
	DefaultRatePerSecond = 200
	DefaultRateBurst     = 400
	// MetricsRefreshEvery is how often, at most, /metrics recounts the
	// memories by status through the engine.
	MetricsRefreshEvery = 10 * time.Second
)

// RateLimit is the token bucket every key gets. The zero value means the
// defaults (DefaultRatePerSecond, DefaultRateBurst); a negative PerSecond
// turns rate limiting off. Burst 0 with PerSecond set means twice
// PerSecond (at least 1).
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// Config configures the handler. Engine and Auth are required.
type Config struct {
	Engine *engine.Engine
	Auth   *auth.Authorizer
	// Logger receives one line per request (default: discard).
	Logger *slog.Logger
	// MaxBodyBytes bounds a JSON request body (default DefaultMaxBodyBytes);
	// a larger body is refused with 413 too_large.
	MaxBodyBytes int64
	// MaxImportBytes bounds a POST /v1/import body (default
	// DefaultMaxImportBytes).
	MaxImportBytes int64
	RateLimit      RateLimit
	// DisableMetrics removes GET /metrics (it needs no key when enabled).
	DisableMetrics bool
	// Now is the clock of the rate limiter and of the metrics refresh
	// (default time.Now).
	Now func() time.Time
	// Agent answers POST /v1/chat (package agent: recall, a model call,
	// the exchange remembered). Nil (a server without --llm) answers it
	// 503 unavailable, saying how to start one with a model.
	Agent *agent.Agent
	// ChatTimeout bounds one POST /v1/chat (default DefaultChatTimeout).
	ChatTimeout time.Duration
	// RequestTimeout bounds every other /v1 call but import and export
	// (default DefaultRequestTimeout; negative: no bound). A call still
	// running then is abandoned and answered 503 unavailable: a database
	// that stops answering without closing its connections holds a
	// request no longer than this.
	RequestTimeout time.Duration
}

// DefaultRequestTimeout is the default Config.RequestTimeout: far above
// any call's normal time (milliseconds), below the server's write timeout.
const DefaultRequestTimeout = 60 * time.Second

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
	if c.RateLimit == (RateLimit{}) {
		c.RateLimit = RateLimit{PerSecond: DefaultRatePerSecond, Burst: DefaultRateBurst}
	}
	if c.RateLimit.PerSecond > 0 && c.RateLimit.Burst == 0 {
		c.RateLimit.Burst = max(1, int(math.Ceil(2*c.RateLimit.PerSecond)))
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.ChatTimeout == 0 {
		c.ChatTimeout = DefaultChatTimeout
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	return c
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Engine == nil:
		return errors.New("httpapi: engine is required")
	case c.Auth == nil:
		return errors.New("httpapi: authorizer is required")
	case c.MaxBodyBytes < 0:
		return errors.New("httpapi: max body bytes must not be negative")
	case c.MaxImportBytes < 0:
		return errors.New("httpapi: max import bytes must not be negative")
	case math.IsNaN(c.RateLimit.PerSecond) || math.IsInf(c.RateLimit.PerSecond, 0):
		return errors.New("httpapi: rate limit per second must be a finite number")
	case c.RateLimit.Burst < 0:
		return errors.New("httpapi: rate limit burst must not be negative")
	case c.RateLimit.PerSecond > 0 && c.RateLimit.Burst < 1:
		return errors.New("httpapi: rate limit burst must be at least 1")
	case c.ChatTimeout < 0:
		return errors.New("httpapi: chat timeout must not be negative")
	}
	return nil
}

// server is the handler New returns. It is safe for concurrent use.
type server struct {
	cfg     Config
	eng     *engine.Engine
	auth    *auth.Authorizer
	log     *slog.Logger
	mux     *http.ServeMux
	limit   *limiter
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
		cfg:  cfg,
		eng:  cfg.Engine,
		auth: cfg.Auth,
		log:  cfg.Logger,
		mux:  http.NewServeMux(),
	}
	if cfg.RateLimit.PerSecond > 0 {
		s.limit = newLimiter(cfg.RateLimit, cfg.Now)
	}
	s.metrics = newMetrics(cfg.Engine, cfg.Now)
	s.register()
	return s, nil
}

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
		{method: "POST", path: "/v1/chat", op: auth.OpChat, handle: s.chat},
		{method: "GET", path: "/healthz", public: s.healthz},
		{method: "GET", path: "/openapi.json", public: s.openapi},
	}
	if !s.cfg.DisableMetrics {
		rs = append(rs, route{method: "GET", path: "/metrics", public: s.serveMetrics})
	}
	return rs
}

func (s *server) register() {
	methods := map[string][]string{}
	var paths []string
	for _, rt := range s.routes() {
		var h http.Handler
		if rt.public != nil {
			h = rt.public
		} else {
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
		s.mux.Handle(p, s.named(p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allowed)
			s.writeError(w, r, &memgate.Error{Code: codeMethodNotAllowed, Message: "method not allowed on this path (allowed: " + allowed + ")"})
		})))
	}
	s.mux.Handle("/", s.named("unmatched", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &memgate.Error{Code: memgate.ENOTFOUND, Message: "no such route"})
	})))
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
		if id := r.PathValue("id"); id != "" && memgate.ValidIdent(id) {
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
	s   *server
	w   http.ResponseWriter
	r   *http.Request
	ctx context.Context
	key *memgate.Key
	op  auth.Op
}

// serveAPI authenticates, rate-limits and authorizes a request, then runs
// the route's handler and writes its error, if any.
func (s *server) serveAPI(w http.ResponseWriter, r *http.Request, rt route) {
	w.Header().Set("Cache-Control", "no-store")
	switch rt.op {
	case auth.OpChat, auth.OpImport, auth.OpExport:
		// Chat has its own bound; bulk transfers are bounded by the
		// server's read and write timeouts.
	default:
		if d := s.cfg.RequestTimeout; d > 0 {
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			r = r.WithContext(ctx)
		}
	}
	key, err := s.authenticate(r)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="memgate"`)
		s.writeError(w, r, err)
		return
	}
	if info := infoOf(r.Context()); info != nil {
		info.keyID = key.ID
	}
	s.metrics.sawTenant(key.Tenant)
	if s.limit != nil {
		// Key ids are unique within a tenant: the bucket is the pair's.
		if ok, wait := s.limit.allow(key.Tenant + "/" + key.ID); !ok {
			w.Header().Set("Retry-After", fmt.Sprint(int64(math.Ceil(wait.Seconds()))))
			s.writeError(w, r, memgate.Errorf(memgate.ERATELIMITED, "rate limit exceeded for this key; retry later"))
			return
		}
	}
	if !auth.Allowed(key.Role, rt.op) {
		s.writeError(w, r, auth.ErrForbidden(rt.op))
		return
	}
	c := &call{s: s, w: w, r: r, key: key, op: rt.op, ctx: engine.WithActor(r.Context(), key.ID)}
	if err := rt.handle(c); err != nil {
		s.writeError(w, r, err)
	}
}

// authenticate returns the key of r's Authorization header. Every
// refusal (missing, malformed, unknown, revoked) is auth's one
// unauthenticated error, so a caller learns nothing about which keys exist.
func (s *server) authenticate(r *http.Request) (*memgate.Key, error) {
	key, err := s.auth.Authenticate(r.Context(), r.Header.Get("Authorization"))
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, auth.ErrUnauthenticated()
	}
	return key, nil
}

// scope returns the effective scope of a request that names tenant and
// req: the tenant is the key's (a request naming another is refused before
// anything is read), the rest narrowed within the key's binding.
func (c *call) scope(tenant string, req memgate.Scope) (memgate.Scope, error) {
	if tenant != "" && tenant != c.key.Tenant {
		return memgate.Scope{}, &memgate.Error{Code: memgate.EFORBIDDEN, Field: "tenant", Message: "is fixed by the key; another tenant may not be named"}
	}
	req.Tenant = c.key.Tenant
	s, err := auth.ScopeFor(c.key, c.op, req)
	if err != nil {
		return memgate.Scope{}, err
	}
	if s.Tenant != c.key.Tenant {
		// auth.ScopeFor never widens; this is a second lock, not a branch
		// any request is expected to take.
		return memgate.Scope{}, fmt.Errorf("scope for key %s names tenant other than the key's", c.key.ID)
	}
	return s, nil
}

func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *server) openapi(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(openAPIDocument)
}
