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
// limiter per key for every surface, one per client address for the
// requests that present no valid key, and the request deadline.
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
	"net/netip"
	"strings"
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
	// DefaultAnonRatePerSecond and DefaultAnonRateBurst are the token
	// bucket of each client address for the requests that present no
	// valid key (AuthenticateFrom, AllowAnonymous): far above what a
	// health probe or a person typing a key needs, far below a flood.
	DefaultAnonRatePerSecond = 20
	DefaultAnonRateBurst     = 100
	// DefaultAnonClients bounds the anonymous limiter's table: past it,
	// the addresses it has no room for share one bucket.
	DefaultAnonClients = 4096
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
	// AnonRateLimit is the token bucket of each client address for the
	// requests without a valid key (AuthenticateFrom, AllowAnonymous;
	// zero: DefaultAnonRatePerSecond and DefaultAnonRateBurst, a negative
	// PerSecond: no limit). The table holds DefaultAnonClients addresses
	// (an IPv6 address counts by its /64).
	AnonRateLimit RateLimit
	// TrustedProxies are the proxies in front of the server whose
	// X-Forwarded-For header names the client (ClientAddr). None by
	// default: the connection's address is the client, and the header,
	// which any client can send, is ignored.
	TrustedProxies []netip.Prefix
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
	anon  *limiter // per client address, for requests without a valid key
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
	rl, err := rateLimit("rate limit", cfg.RateLimit, RateLimit{PerSecond: DefaultRatePerSecond, Burst: DefaultRateBurst})
	if err != nil {
		return nil, err
	}
	anon, err := rateLimit("anonymous rate limit", cfg.AnonRateLimit, RateLimit{PerSecond: DefaultAnonRatePerSecond, Burst: DefaultAnonRateBurst})
	if err != nil {
		return nil, err
	}
	cfg.RateLimit, cfg.AnonRateLimit = rl, anon
	g := &Guard{cfg: cfg, log: cfg.Logger, eng: cfg.Engine, auth: auth.New(cfg.Keys)}
	if rl.PerSecond > 0 {
		g.limit = newLimiter(rl, cfg.Now)
	}
	if anon.PerSecond > 0 {
		g.anon = newLimiter(anon, cfg.Now)
		g.anon.max = DefaultAnonClients
	}
	return g, nil
}

// rateLimit is rl with its defaults (def when zero; a burst of twice the
// rate when only the rate is set), or what is wrong with it.
func rateLimit(what string, rl, def RateLimit) (RateLimit, error) {
	if rl == (RateLimit{}) {
		rl = def
	}
	switch {
	case math.IsNaN(rl.PerSecond) || math.IsInf(rl.PerSecond, 0):
		return rl, fmt.Errorf("guard: %s per second must be a finite number", what)
	case rl.Burst < 0:
		return rl, fmt.Errorf("guard: %s burst must not be negative", what)
	}
	if rl.PerSecond > 0 && rl.Burst == 0 {
		rl.Burst = max(1, int(math.Ceil(2*rl.PerSecond)))
	}
	return rl, nil
}

// RateLimitError is the error of a key over its rate: ERATELIMITED (it
// unwraps to the *memgate.Error), with how long until the next call may
// pass.
type RateLimitError struct {
	RetryAfter time.Duration
	// Anonymous: the limit is the client address's, for requests without
	// a valid key (AuthenticateFrom, AllowAnonymous).
	Anonymous bool
}

func (e *RateLimitError) Error() string {
	if e.Anonymous {
		return "too many requests without a valid API key from this address; retry later"
	}
	return "rate limit exceeded for this key; retry later"
}

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

// anonLimited is the error of a client address over the rate of requests
// without a valid key.
func anonLimited(wait time.Duration) error {
	return &RateLimitError{RetryAfter: wait, Anonymous: true}
}

// AuthenticateFrom is Authenticate for a request from client (ClientAddr):
// a request that presents no valid key (missing, malformed, unknown or
// revoked) takes one call from the client address's anonymous bucket, and
// once that is empty is answered *RateLimitError (429 with Retry-After)
// instead of unauthenticated, so guessing keys or flooding the server
// without one is bounded per address. A valid key is never charged to its
// address: clients behind one address each have their key's own rate.
func (g *Guard) AuthenticateFrom(ctx context.Context, bearer, client string) (*Session, error) {
	sess, err := g.Authenticate(ctx, bearer)
	if err != nil && memgate.ErrorCode(err) == memgate.EUNAUTHORIZED {
		if lerr := g.AllowAnonymous(client); lerr != nil {
			return nil, lerr
		}
	}
	return sess, err
}

// AllowAnonymous takes one call from the anonymous bucket of client (a
// ClientAddr) for a request that needs no key (the public routes: the
// OpenAPI document, readiness, public metrics, unknown paths): nil, or a
// *RateLimitError once the bucket is empty. An empty client (unknown)
// shares one bucket.
func (g *Guard) AllowAnonymous(client string) error {
	if g == nil || g.anon == nil {
		return nil
	}
	if ok, wait := g.anon.allow("addr " + client); !ok {
		return anonLimited(wait)
	}
	return nil
}

// ClientAddr is the client address of a request from remoteAddr (the
// connection's "ip:port") with the X-Forwarded-For values forwardedFor:
// the connection's IP, unless it is one of Config.TrustedProxies; then the
// right-most address of X-Forwarded-For that is not a trusted proxy (the
// first a trusted proxy saw; whatever a client wrote left of it is not
// believed). An IPv6 address is its /64 (one host's addresses share a
// bucket). "" when the address cannot be read.
func (g *Guard) ClientAddr(remoteAddr string, forwardedFor []string) string {
	ap, err := netip.ParseAddrPort(remoteAddr)
	var ip netip.Addr
	if err == nil {
		ip = ap.Addr()
	} else if ip, err = netip.ParseAddr(remoteAddr); err != nil {
		return ""
	}
	ip = ip.Unmap()
	if g.trusted(ip) {
		var hops []string
		for _, v := range forwardedFor {
			hops = append(hops, strings.Split(v, ",")...)
		}
		for i := len(hops) - 1; i >= 0; i-- {
			hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break // a malformed hop: stop at the last address believed
			}
			ip = hop.Unmap()
			if !g.trusted(ip) {
				break
			}
		}
	}
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

func (g *Guard) trusted(ip netip.Addr) bool {
	if g == nil {
		return false
	}
	for _, p := range g.cfg.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// ParseTrustedProxies reads a comma-separated list of addresses and CIDR
// prefixes (10.0.0.0/8, 127.0.0.1, fd00::/8) for Config.TrustedProxies.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: want an IP address or a CIDR prefix", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
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
