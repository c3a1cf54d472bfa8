// Package guard is memgate's one authorization layer. Every surface that
// acts for a credential (the HTTP API and the inspector that uses it, the
// MCP server over HTTP and stdio, the agent middleware's chat, the CLI
// against a server) holds a Session of this package, never the engine: a
// Session is one API key, and each of its methods narrows the operation to
// what that key may do before the engine sees it. A new surface therefore
// cannot forget a check: it has nothing else to call.
//
// For every operation a Session applies, in this order: the permission
// table (auth.Allowed); the scope (auth.ScopeFor: the tenant from the key,
// request fields only narrowing within its binding, one principal where an
// operation acts for one person, restricted memories out of an agent
// key's reach, an agent-bound key's writes to its own agent's memories);
// the sources the key may claim (auth.MayClaim) for what it writes and for
// the memories it changes; who may lower a memory's sensitivity, ask for
// restricted memories or mark a recall as a preview; and the audit actor
// (the key's id, recorded as the memory's created_by and updated_by).
// Key administration (create, list, revoke) goes through it too.
//
// The Guard also holds what every surface shares: authentication, one rate
// limiter per key for every surface, and the request deadline.
//
// It must never widen what a key grants, answer a memory outside the
// key's reach differently from a missing one, or log content, queries or
// secrets.
package guard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/store"
)

// Defaults for Config.
const (
	// DefaultRatePerSecond and DefaultRateBurst are the token bucket of
	// each key: sustained requests per second, and how many may come at
	// once after a quiet period.
	DefaultRatePerSecond = 200
	DefaultRateBurst     = 400
	// DefaultRequestTimeout bounds one call (Deadline): far above any
	// call's normal time (milliseconds), below a server's write timeout.
	DefaultRequestTimeout = 60 * time.Second
)

// RateLimit is the token bucket every key gets. The zero value means the
// defaults (DefaultRatePerSecond, DefaultRateBurst); a negative PerSecond
// turns rate limiting off. Burst 0 with PerSecond set means twice
// PerSecond (at least 1).
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// KeyStore is where keys live: store.Store satisfies it.
type KeyStore interface {
	auth.KeyStore
	CreateKey(ctx context.Context, k *memgate.Key) error
	ListKeys(ctx context.Context, tenant string) ([]*memgate.Key, error)
	RevokeKey(ctx context.Context, tenant, id string, at time.Time) (*memgate.Key, error)
}

// Config configures a Guard. Engine is required.
type Config struct {
	Engine *engine.Engine
	// Keys is where keys are authenticated and administered (default the
	// engine's store).
	Keys      KeyStore
	RateLimit RateLimit
	// RequestTimeout bounds every call but chat, import and export
	// (Deadline; default DefaultRequestTimeout, negative: no bound).
	RequestTimeout time.Duration
	// Now is the clock of the rate limiter and of key revocations
	// (default time.Now).
	Now func() time.Time
	// Logger receives a line per key created or revoked: ids only
	// (default: discard).
	Logger *slog.Logger
}

// Guard authenticates keys and hands out their Sessions. It is safe for
// concurrent use.
type Guard struct {
	cfg   Config
	log   *slog.Logger
	eng   *engine.Engine
	auth  *auth.Authorizer
	limit *limiter
}

// New returns a Guard over cfg.Engine.
func New(cfg Config) (*Guard, error) {
	if cfg.Engine == nil {
		return nil, errors.New("guard: engine is required")
	}
	if cfg.Keys == nil {
		cfg.Keys = cfg.Engine.Store()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	rl := cfg.RateLimit
	if rl == (RateLimit{}) {
		rl = RateLimit{PerSecond: DefaultRatePerSecond, Burst: DefaultRateBurst}
	}
	switch {
	case math.IsNaN(rl.PerSecond) || math.IsInf(rl.PerSecond, 0):
		return nil, errors.New("guard: rate limit per second must be a finite number")
	case rl.Burst < 0:
		return nil, errors.New("guard: rate limit burst must not be negative")
	}
	if rl.PerSecond > 0 && rl.Burst == 0 {
		rl.Burst = max(1, int(math.Ceil(2*rl.PerSecond)))
	}
	cfg.RateLimit = rl
	g := &Guard{cfg: cfg, log: cfg.Logger, eng: cfg.Engine, auth: auth.New(cfg.Keys)}
	if rl.PerSecond > 0 {
		g.limit = newLimiter(rl, cfg.Now)
	}
	return g, nil
}

// RateLimitError is the error of a key over its rate: ERATELIMITED (it
// unwraps to the *memgate.Error), with how long until the next call may
// pass.
type RateLimitError struct {
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string { return "rate limit exceeded for this key; retry later" }

// Unwrap is the error as callers are shown it.
func (e *RateLimitError) Unwrap() error {
	return &memgate.Error{Code: memgate.ERATELIMITED, Message: e.Error()}
}

// Authenticate returns the Session of the key a request presents (bearer:
// the Authorization header's value, or the bare secret) and takes one call
// from its rate. A missing, malformed, unknown or revoked key is
// auth.ErrUnauthenticated; a key over its rate is a *RateLimitError; a
// store failure is returned as it is.
func (g *Guard) Authenticate(ctx context.Context, bearer string) (*Session, error) {
	k, err := g.auth.Authenticate(ctx, bearer)
	if err != nil {
		return nil, err
	}
	if k == nil {
		return nil, auth.ErrUnauthenticated()
	}
	if g.limit != nil {
		// Key ids are unique within a tenant: the bucket is the pair's.
		if ok, wait := g.limit.allow(k.Tenant + "/" + k.ID); !ok {
			return nil, &RateLimitError{RetryAfter: wait}
		}
	}
	return &Session{g: g, key: *k}, nil
}

// Local returns the Session of a key that no request presented: the local
// command line's (memgate mcp over stdio, memgate keys on a database file),
// made from its flags and never stored. k needs a tenant and a known role
// and a binding that validates as a stored key's would; its id is the
// audit actor ("cli" when empty). It is not rate-limited.
func (g *Guard) Local(k memgate.Key) (*Session, error) {
	if k.ID == "" {
		k.ID = "cli"
	}
	k.Hash = auth.Hash(k.ID) // a placeholder: Validate wants one; nothing authenticates with it
	k.CreatedAt, k.RevokedAt = g.cfg.Now(), nil
	if err := k.Validate(); err != nil {
		return nil, err
	}
	k.Hash = ""
	return &Session{g: g, key: k}, nil
}

// Deadline bounds a call of op by the request timeout: every call but chat
// (bounded by its own timeout) and the bulk transfers (import, export,
// bounded by the server's read and write timeouts). Every surface applies
// it, so no surface holds a request longer than another.
func (g *Guard) Deadline(ctx context.Context, op auth.Op) (context.Context, context.CancelFunc) {
	switch op {
	case auth.OpChat, auth.OpImport, auth.OpExport:
		return ctx, func() {}
	}
	if d := g.cfg.RequestTimeout; d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return ctx, func() {}
}

// RequestTimeout is the bound Deadline applies (negative: none).
func (g *Guard) RequestTimeout() time.Duration { return g.cfg.RequestTimeout }

// Counts is the engine's count of one tenant's memories for metrics: a
// server-wide figure (no key involved), ids and numbers only.
func (g *Guard) Counts(ctx context.Context, tenant string) ([]store.Count, error) {
	return g.eng.Counts(ctx, memgate.Scope{Tenant: tenant, AllPrincipals: true})
}

// Ready is the engine's readiness report (engine.Engine.Ready) for
// /readyz: no key involved, parts and their errors only.
func (g *Guard) Ready(ctx context.Context) []engine.ReadyCheck { return g.eng.Ready(ctx) }

// errOtherTenant is the error for a request naming a tenant other than
// the key's.
func errOtherTenant(field string) *memgate.Error {
	return &memgate.Error{Code: memgate.EFORBIDDEN, Field: field, Message: "is fixed by the key; another tenant may not be named"}
}

func errOnePrincipal(what string) *memgate.Error {
	return memgate.FieldError("principal", "is required: %s", what)
}

// itemError names the batch item an error is about.
func itemError(i int, err error) error {
	var me *memgate.Error
	if !errors.As(err, &me) {
		return err
	}
	c := *me
	if c.Field != "" {
		c.Field = fmt.Sprintf("memories[%d].%s", i, c.Field)
	} else {
		c.Field = fmt.Sprintf("memories[%d]", i)
	}
	return &c
}
