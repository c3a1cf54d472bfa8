package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/guard"
	"github.com/memgate/memgate/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxBodyBytes bounds an MCP request body on /mcp (the REST API's
// default bound on a JSON body).
const DefaultMaxBodyBytes = 1 << 20

// HTTPConfig configures NewHTTPHandler. Guard is required.
type HTTPConfig struct {
	// Guard authenticates every request, takes it from the key's rate
	// (the REST API's limiter: one bucket per key for every surface),
	// bounds it by the request deadline and authorizes every tool call.
	Guard *guard.Guard
	// AllowForget offers forget_me to the keys whose role may forget
	// (off by default, as on stdio: erasing a person is a tool a model
	// should only see where the operator chose so).
	AllowForget bool
	// Logger receives a line per refused request and per tool call
	// (default: discard).
	Logger *slog.Logger
	// MaxBodyBytes bounds a request body (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
	Version      string
}

// queryParams are what the URL of /mcp may hold: the narrowing fields of
// the REST API (tenant only to repeat the key's), and the source that
// remembered memories are attributed to.
var queryParams = map[string]bool{"tenant": true, "principal": true, "agent": true, "conversation": true, "source": true}

// httpHandler serves the streamable HTTP transport without sessions: each
// request is authenticated with its own bearer key and served by a server
// made for that key, so nothing of one request (or one key) outlives it.
type httpHandler struct {
	cfg        HTTPConfig
	log        *slog.Logger
	streamable http.Handler // the SDK's, in stateless mode
}

type serverKey struct{}

// NewHTTPHandler returns the handler of /mcp: the streamable HTTP
// transport, in stateless mode. Every request must carry
// "Authorization: Bearer KEY", authenticated with auth.Authorizer exactly
// as the REST API does (401 with WWW-Authenticate otherwise, in the REST
// error shape). The key decides, through auth.ScopeFor, what each tool may
// do; the URL's query may name, as the REST API's request fields do, the
// principal (for a key not bound to one), agent and conversation (only
// narrowing), and the source of remembered memories (default assistant).
//
// There are no sessions to bind to a key: no Mcp-Session-Id is issued or
// honoured, and each request is served by a server made for its own key, so
// a request can never act with another request's key. The Authorization
// header is removed before the request reaches the MCP SDK: the key is
// passed on to nothing.
func NewHTTPHandler(cfg HTTPConfig) (http.Handler, error) {
	if cfg.Guard == nil {
		return nil, errors.New("mcpserver: guard is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	h := &httpHandler{cfg: cfg, log: cfg.Logger}
	h.streamable = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		// The server ServeHTTP made for this request's key; nil (never
		// expected) is answered 400 by the SDK, not served.
		s, _ := r.Context().Value(serverKey{}).(*mcp.Server)
		return s
	}, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		MaxRequestBodyBytes: cfg.MaxBodyBytes,
	})
	return h, nil
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	w.Header().Set("Cache-Control", "no-store")
	// One deadline for every surface: the REST API's (guard.Deadline).
	ctx, cancel := h.cfg.Guard.Deadline(r.Context(), "")
	defer cancel()
	r = r.WithContext(ctx)
	client := h.cfg.Guard.ClientAddr(r.RemoteAddr, r.Header.Values("X-Forwarded-For"))
	sess, err := h.cfg.Guard.AuthenticateFrom(r.Context(), r.Header.Get("Authorization"), client)
	if err != nil {
		var rl *guard.RateLimitError
		switch {
		case errors.As(err, &rl):
			w.Header().Set("Retry-After", fmt.Sprint(int64(math.Ceil(rl.RetryAfter.Seconds()))))
		case memgate.ErrorCode(err) == memgate.EUNAUTHORIZED:
			w.Header().Set("WWW-Authenticate", `Bearer realm="memgate"`)
		}
		h.refuse(w, r, "", err, start)
		return
	}
	keyID := sess.Key().ID
	req, source, err := requestScope(r.URL.RawQuery, sess.Key().Tenant)
	if err != nil {
		h.refuse(w, r, keyID, err, start)
		return
	}
	if source == "" {
		// None asked for: the model's own (assistant), or for a key that
		// may not claim it (a user key) the first source it may.
		source = DefaultSource
		if srcs := sess.Grant().Sources; !sess.MayClaim(source) && len(srcs) > 0 {
			source = srcs[0]
		}
	}
	caller := SessionCaller{Session: sess, Request: req, AllowForget: h.cfg.AllowForget}
	// A connection that can reach no one (a principal outside the key's
	// binding, none named for a key bound to none) is refused here, once,
	// rather than on every tool call. Every role may recall, so this
	// checks the binding alone; each tool checks again for its own
	// operation.
	if _, err := caller.Scope(auth.OpRecall); err != nil {
		h.refuse(w, r, keyID, err, start)
		return
	}
	// A source the key may not claim is refused for the connection, as
	// the REST API refuses it for a remember (the guard checks again on
	// every remember).
	if sess.Allowed(auth.OpRemember) && !sess.MayClaim(source) {
		h.refuse(w, r, keyID, auth.ErrSource("source"), start)
		return
	}
	srv, err := New(Config{
		Backend: sess,
		Caller:  caller,
		Source:  source,
		Logger:  h.log,
		Version: h.cfg.Version,
	})
	if err != nil {
		h.refuse(w, r, keyID, err, start)
		return
	}
	r2 := r.Clone(context.WithValue(r.Context(), serverKey{}, srv))
	r2.Header.Del("Authorization")
	h.streamable.ServeHTTP(w, r2)
}

// requestScope reads the query of /mcp: each parameter known and given
// once, valid UTF-8; a tenant other than the key's is forbidden, as in the
// REST API. The source is "" when the query names none.
func requestScope(rawQuery, tenant string) (memgate.Scope, memgate.Source, error) {
	v, err := url.ParseQuery(rawQuery)
	if err != nil {
		return memgate.Scope{}, "", memgate.FieldError("", "malformed query string")
	}
	for k, vals := range v {
		if !queryParams[k] {
			return memgate.Scope{}, "", memgate.FieldError(wire.Clip(k), "is not a known query parameter (tenant, principal, agent, conversation, source)")
		}
		if len(vals) > 1 {
			return memgate.Scope{}, "", memgate.FieldError(k, "must be given once")
		}
		if !utf8.ValidString(vals[0]) {
			return memgate.Scope{}, "", memgate.FieldError(k, "must be valid UTF-8")
		}
	}
	if t := v.Get("tenant"); t != "" && t != tenant {
		return memgate.Scope{}, "", errOtherTenant()
	}
	var source memgate.Source
	if s := v.Get("source"); s != "" {
		if source, err = memgate.ParseSource(s); err != nil {
			return memgate.Scope{}, "", err
		}
	}
	return memgate.Scope{Principal: v.Get("principal"), Agent: v.Get("agent"), Conversation: v.Get("conversation")}, source, nil
}

// refuse answers a request that never reached the MCP layer, in the REST
// API's error shape and status, and logs it (ids and codes only).
func (h *httpHandler) refuse(w http.ResponseWriter, r *http.Request, keyID string, err error, start time.Time) {
	d, status, internal := wire.Describe(err)
	attrs := []slog.Attr{slog.String("method", r.Method), slog.Int("status", status), slog.String("code", d.Code), slog.Duration("took", time.Since(start))}
	if keyID != "" {
		attrs = append(attrs, slog.String("key_id", keyID))
	}
	level := slog.LevelInfo
	if internal {
		level = slog.LevelError
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	h.log.LogAttrs(r.Context(), level, "mcp request refused", attrs...)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write([]byte(errorJSON(d) + "\n"))
}
