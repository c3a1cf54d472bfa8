// Package auth turns an API key into what a request may do: it mints keys
// (only their SHA-256 is ever stored), authenticates a presented secret, and
// holds the one permission table (Allowed) and the one rule that derives a
// request's scope from its key (ScopeFor).
//
// Every surface that serves remote callers (the HTTP API, the MCP server,
// the inspector) authenticates with an Authorizer and passes the scope
// ScopeFor returns to the engine; it never builds a scope from request
// fields itself. This package must never log or return a secret after
// NewKey, never tell a caller why a key was refused (missing, malformed,
// unknown and revoked keys get one error), and never let a request field
// widen what the key grants: request fields may only narrow.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/memgate/memgate"
)

// Key formats.
const (
	// SecretPrefix starts every secret, so a leaked key is recognisable
	// (secret scanners, the write gate's own detector).
	SecretPrefix = "mgk_"
	// IDPrefix starts every public key id.
	IDPrefix = "key_"
	// secretBytes is the entropy of a secret: 256 bits.
	secretBytes = 32
	// SecretLen is the length of a secret: the prefix and 43 base64url
	// characters (32 bytes, unpadded).
	SecretLen = len(SecretPrefix) + 43
	idBytes   = 8
)

// NewKey mints a key from the template k (tenant, role, binding and name;
// the rest is assigned). It returns the secret, to be shown to its owner
// once and never stored, and the record to store, whose Hash is Hash(secret).
// The id is "key_" followed by 16 hex characters; CreatedAt is now unless
// the template sets it. The template is validated (memgate.Key.Validate):
// tenant required, role known, a user key bound to a principal, only agent
// keys bound to an agent, admin keys tenant-wide, names limited.
func NewKey(k memgate.Key) (secret string, rec *memgate.Key, err error) {
	var raw [secretBytes]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", nil, fmt.Errorf("auth: crypto/rand: %w", err)
	}
	var idb [idBytes]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return "", nil, fmt.Errorf("auth: crypto/rand: %w", err)
	}
	secret = SecretPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	k.ID = IDPrefix + hex.EncodeToString(idb[:])
	k.Hash = Hash(secret)
	k.RevokedAt = nil
	if k.CreatedAt.IsZero() {
		k.CreatedAt = time.Now()
	}
	k.CreatedAt = memgate.Now(k.CreatedAt)
	if err := k.Validate(); err != nil {
		return "", nil, err
	}
	return secret, &k, nil
}

// Hash returns what is stored of a secret: its SHA-256 in lower-case hex.
// A secret has 256 bits of entropy, so a fast hash is enough: there is
// nothing to brute-force.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// wellFormed reports whether s has the shape of a secret NewKey mints.
func wellFormed(s string) bool {
	if len(s) != SecretLen || !strings.HasPrefix(s, SecretPrefix) {
		return false
	}
	for i := len(SecretPrefix); i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ErrUnauthenticated is the one error for a request without a usable key:
// missing, malformed, unknown or revoked keys all get it, with the same
// message, so a caller learns nothing about which keys exist.
func ErrUnauthenticated() *memgate.Error {
	return &memgate.Error{Code: memgate.EUNAUTHORIZED, Message: "a valid API key is required (Authorization: Bearer KEY)"}
}

// KeyStore is what an Authorizer reads: store.Store satisfies it.
type KeyStore interface {
	KeyByHash(ctx context.Context, hash string) (*memgate.Key, error)
}

// Authorizer authenticates API keys against a key store. It is safe for
// concurrent use. It caches nothing: a revoked key is refused on the next
// request.
type Authorizer struct {
	keys KeyStore
}

// New returns an Authorizer over keys.
func New(keys KeyStore) *Authorizer {
	return &Authorizer{keys: keys}
}

// Authenticate returns the key a request presents. bearer is the value of
// the Authorization header ("Bearer mgk_…"; the scheme is matched without
// regard to case) or the bare secret. A missing, malformed, unknown or
// revoked key is ErrUnauthenticated; a store failure is returned as it is
// (unavailable or internal), so an outage is not reported as a bad key.
func (a *Authorizer) Authenticate(ctx context.Context, bearer string) (*memgate.Key, error) {
	secret := bearer
	if scheme, rest, ok := strings.Cut(bearer, " "); ok {
		if !strings.EqualFold(scheme, "Bearer") {
			return nil, ErrUnauthenticated()
		}
		secret = strings.TrimLeft(rest, " ")
	}
	if !wellFormed(secret) {
		return nil, ErrUnauthenticated()
	}
	h := Hash(secret)
	k, err := a.keys.KeyByHash(ctx, h)
	if err != nil {
		if memgate.ErrorCode(err) == memgate.ENOTFOUND {
			return nil, ErrUnauthenticated()
		}
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	// The store found the row by hash; compare again in constant time so
	// that a backend matching loosely (collation, prefix) cannot admit a
	// different secret, and so the comparison itself leaks no timing.
	if k == nil || subtle.ConstantTimeCompare([]byte(k.Hash), []byte(h)) != 1 {
		return nil, ErrUnauthenticated()
	}
	if k.RevokedAt != nil {
		return nil, ErrUnauthenticated()
	}
	// A record that fails validation (edited by hand, a bug elsewhere)
	// grants nothing.
	if k.Validate() != nil {
		return nil, ErrUnauthenticated()
	}
	return k, nil
}
