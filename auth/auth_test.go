package auth_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
)

// memKeys is an in-memory KeyStore that matches hashes exactly, like a real
// store; loose makes it return its first key for any hash (a broken
// backend), to check that Authenticate does not trust the store's match
// alone.
type memKeys struct {
	mu    sync.Mutex
	keys  []*memgate.Key
	loose bool
	err   error
}

func (m *memKeys) KeyByHash(_ context.Context, hash string) (*memgate.Key, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	for _, k := range m.keys {
		if k.Hash == hash || m.loose {
			c := *k
			return &c, nil
		}
	}
	return nil, &memgate.Error{Code: memgate.ENOTFOUND, Message: "key not found"}
}

func mint(t *testing.T, ks *memKeys, k memgate.Key) (string, *memgate.Key) {
	t.Helper()
	secret, rec, err := auth.NewKey(k)
	if err != nil {
		t.Fatalf("NewKey %+v: %v", k, err)
	}
	ks.mu.Lock()
	ks.keys = append(ks.keys, rec)
	ks.mu.Unlock()
	return secret, rec
}

func TestNewKeyShape(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 50 {
		secret, rec, err := auth.NewKey(memgate.Key{Tenant: "acme", Role: memgate.RoleAgent, Principal: "alice", Agent: "helper", Name: "support bot"})
		if err != nil {
			t.Fatal(err)
		}
		if len(secret) != 47 || !strings.HasPrefix(secret, "mgk_") {
			t.Fatalf("secret %q: want mgk_ and 43 characters", secret)
		}
		raw, err := base64.RawURLEncoding.DecodeString(secret[4:])
		if err != nil || len(raw) != 32 {
			t.Fatalf("secret %q: not 32 bytes of base64url (%v)", secret, err)
		}
		if len(rec.ID) != 20 || !strings.HasPrefix(rec.ID, "key_") || strings.Trim(rec.ID[4:], "0123456789abcdef") != "" {
			t.Fatalf("id %q: want key_ and 16 hex characters", rec.ID)
		}
		if rec.Hash != auth.Hash(secret) || len(rec.Hash) != 64 {
			t.Fatalf("hash %q is not the SHA-256 of the secret", rec.Hash)
		}
		if strings.Contains(rec.Hash, secret) || strings.Contains(rec.ID, secret[4:12]) {
			t.Fatal("the record carries the secret")
		}
		if rec.Tenant != "acme" || rec.Role != memgate.RoleAgent || rec.Principal != "alice" || rec.Agent != "helper" || rec.Name != "support bot" {
			t.Fatalf("record lost the template: %+v", rec)
		}
		if rec.CreatedAt.IsZero() || rec.CreatedAt.Location() != time.UTC || rec.RevokedAt != nil {
			t.Fatalf("record times: %+v", rec)
		}
		if seen[secret] || seen[rec.ID] {
			t.Fatal("NewKey repeated a secret or an id")
		}
		seen[secret], seen[rec.ID] = true, true
	}
	// Assigned fields of the template are replaced.
	revoked := time.Now()
	_, rec, err := auth.NewKey(memgate.Key{ID: "key_mine", Hash: "abc", RevokedAt: &revoked, Tenant: "acme", Role: memgate.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	if rec.ID == "key_mine" || rec.Hash == "abc" || rec.RevokedAt != nil {
		t.Fatalf("NewKey kept assigned fields of the template: %+v", rec)
	}
	if auth.Hash("x") != "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" {
		t.Fatal("Hash is not hex SHA-256")
	}
}

func TestNewKeyValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		k     memgate.Key
		code  string
		field string
	}{
		{"admin", memgate.Key{Tenant: "acme", Role: memgate.RoleAdmin, Name: "ops"}, "", ""},
		{"agent unbound", memgate.Key{Tenant: "acme", Role: memgate.RoleAgent}, "", ""},
		{"agent bound to principal and agent", memgate.Key{Tenant: "acme", Role: memgate.RoleAgent, Principal: "alice", Agent: "a1"}, "", ""},
		{"user", memgate.Key{Tenant: "acme", Role: memgate.RoleUser, Principal: "alice"}, "", ""},
		{"name at the limit", memgate.Key{Tenant: "acme", Role: memgate.RoleAdmin, Name: strings.Repeat("n", memgate.MaxKeyNameBytes)}, "", ""},

		{"no tenant", memgate.Key{Role: memgate.RoleAdmin}, memgate.EINVALID, "tenant"},
		{"malformed tenant", memgate.Key{Tenant: "a b", Role: memgate.RoleAdmin}, memgate.EINVALID, "tenant"},
		{"no role", memgate.Key{Tenant: "acme"}, memgate.EINVALID, "role"},
		{"unknown role", memgate.Key{Tenant: "acme", Role: "root"}, memgate.EINVALID, "role"},
		{"role in another case", memgate.Key{Tenant: "acme", Role: "Admin"}, memgate.EINVALID, "role"},
		{"user without principal", memgate.Key{Tenant: "acme", Role: memgate.RoleUser}, memgate.EINVALID, "principal"},
		{"user bound to an agent", memgate.Key{Tenant: "acme", Role: memgate.RoleUser, Principal: "alice", Agent: "a1"}, memgate.EINVALID, "agent"},
		{"admin bound to an agent", memgate.Key{Tenant: "acme", Role: memgate.RoleAdmin, Agent: "a1"}, memgate.EINVALID, "agent"},
		{"admin bound to a principal", memgate.Key{Tenant: "acme", Role: memgate.RoleAdmin, Principal: "alice"}, memgate.EINVALID, "principal"},
		{"malformed principal", memgate.Key{Tenant: "acme", Role: memgate.RoleUser, Principal: "al ice"}, memgate.EINVALID, "principal"},
		{"malformed agent", memgate.Key{Tenant: "acme", Role: memgate.RoleAgent, Agent: "a/1"}, memgate.EINVALID, "agent"},
		{"name too long", memgate.Key{Tenant: "acme", Role: memgate.RoleAdmin, Name: strings.Repeat("n", memgate.MaxKeyNameBytes+1)}, memgate.ETOOLARGE, "name"},
		{"name with a newline", memgate.Key{Tenant: "acme", Role: memgate.RoleAdmin, Name: "a\nb"}, memgate.EINVALID, "name"},
		{"name with NUL", memgate.Key{Tenant: "acme", Role: memgate.RoleAdmin, Name: "a\x00b"}, memgate.EINVALID, "name"},
		{"name not UTF-8", memgate.Key{Tenant: "acme", Role: memgate.RoleAdmin, Name: "a\xffb"}, memgate.EINVALID, "name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			secret, rec, err := auth.NewKey(tc.k)
			if tc.code == "" {
				if err != nil || secret == "" || rec == nil {
					t.Fatalf("NewKey: %v", err)
				}
				return
			}
			if memgate.ErrorCode(err) != tc.code || memgate.ErrorField(err) != tc.field {
				t.Fatalf("NewKey: %v (%s, field %q), want %s naming %q", err, memgate.ErrorCode(err), memgate.ErrorField(err), tc.code, tc.field)
			}
			if secret != "" || rec != nil {
				t.Fatal("NewKey returned a key with the error")
			}
		})
	}
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	ks := &memKeys{}
	a := auth.New(ks)
	secret, rec := mint(t, ks, memgate.Key{Tenant: "acme", Role: memgate.RoleAgent, Principal: "alice"})
	revokedSecret, revoked := mint(t, ks, memgate.Key{Tenant: "acme", Role: memgate.RoleAdmin})
	at := time.Now().Add(time.Hour) // even a revocation dated later counts now
	revoked.RevokedAt = &at
	unknown, _, _ := auth.NewKey(memgate.Key{Tenant: "acme", Role: memgate.RoleAdmin}) // never stored

	// Populated controls: the key itself, bare or in any Bearer spelling.
	for _, bearer := range []string{secret, "Bearer " + secret, "bearer " + secret, "BEARER  " + secret} {
		k, err := a.Authenticate(t.Context(), bearer)
		if err != nil {
			t.Fatalf("Authenticate %q: %v", strings.Replace(bearer, secret, "<secret>", 1), err)
		}
		if k.ID != rec.ID || k.Tenant != "acme" || k.Principal != "alice" {
			t.Fatalf("Authenticate returned %+v, want %+v", k, rec)
		}
	}

	refused := map[string]string{
		"empty":              "",
		"scheme only":        "Bearer",
		"scheme and space":   "Bearer ",
		"basic scheme":       "Basic " + secret,
		"token scheme":       "Token " + secret,
		"unknown key":        unknown,
		"revoked key":        revokedSecret,
		"the hash":           rec.Hash,
		"bearer the hash":    "Bearer " + rec.Hash,
		"the id":             rec.ID,
		"truncated":          secret[:len(secret)-1],
		"extended":           secret + "A",
		"trailing garbage":   "Bearer " + secret + " x",
		"other prefix":       "mgx_" + secret[4:],
		"no prefix":          secret[4:],
		"padding":            secret[:len(secret)-1] + "=",
		"standard base64":    secret[:len(secret)-1] + "+",
		"upper-cased":        strings.ToUpper(secret),
		"NUL inside":         secret[:10] + "\x00" + secret[11:],
		"a newline":          secret + "\n",
		"unicode":            secret[:len(secret)-2] + "é",
		"very long":          "Bearer " + strings.Repeat("A", 1<<16),
		"secret twice":       secret + secret,
		"bearer bearer":      "Bearer Bearer " + secret,
		"sql-looking":        "mgk_' OR '1'='1' --                            ",
		"another key's case": strings.Replace(secret, secret[5:6], strings.ToUpper(secret[5:6]), 1) + "",
	}
	if strings.ToUpper(secret[5:6]) == secret[5:6] {
		delete(refused, "another key's case") // not a different secret then
	}
	want := auth.ErrUnauthenticated()
	for name, bearer := range refused {
		k, err := a.Authenticate(t.Context(), bearer)
		if k != nil {
			t.Fatalf("%s: Authenticate returned key %s", name, k.ID)
		}
		// One error for every reason: same code, field and message.
		var me *memgate.Error
		if !errors.As(err, &me) || me.Code != want.Code || me.Field != want.Field || me.Message != want.Message {
			t.Fatalf("%s: Authenticate error %v, want exactly %q", name, err, want.Message)
		}
		if me.Code != memgate.EUNAUTHORIZED {
			t.Fatalf("%s: code %s, want unauthenticated", name, me.Code)
		}
		if strings.Contains(err.Error(), secret) || (len(bearer) > 8 && strings.Contains(err.Error(), bearer)) {
			t.Fatalf("%s: the error echoes the presented key", name)
		}
	}
}

func TestAuthenticateDoesNotTrustALooseStore(t *testing.T) {
	t.Parallel()
	ks := &memKeys{loose: true}
	a := auth.New(ks)
	secret, _ := mint(t, ks, memgate.Key{Tenant: "acme", Role: memgate.RoleAdmin})
	if _, err := a.Authenticate(t.Context(), secret); err != nil {
		t.Fatalf("control: %v", err)
	}
	other, _, _ := auth.NewKey(memgate.Key{Tenant: "globex", Role: memgate.RoleAdmin})
	if k, err := a.Authenticate(t.Context(), other); memgate.ErrorCode(err) != memgate.EUNAUTHORIZED || k != nil {
		t.Fatalf("Authenticate admitted another secret the store matched: %v, %v", k, err)
	}
}

func TestAuthenticateStoreFailureIsNotUnauthenticated(t *testing.T) {
	t.Parallel()
	ks := &memKeys{err: &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "the database is busy, try again"}}
	secret, _, _ := auth.NewKey(memgate.Key{Tenant: "acme", Role: memgate.RoleAdmin})
	_, err := auth.New(ks).Authenticate(t.Context(), secret)
	if memgate.ErrorCode(err) != memgate.EUNAVAILABLE {
		t.Fatalf("Authenticate with a failing store: %v, want unavailable", err)
	}
	// A malformed key is refused before the store is asked.
	_, err = auth.New(ks).Authenticate(t.Context(), "nonsense")
	if memgate.ErrorCode(err) != memgate.EUNAUTHORIZED {
		t.Fatalf("Authenticate of a malformed key: %v, want unauthenticated", err)
	}
}

func TestAuthenticateRefusesInvalidRecords(t *testing.T) {
	t.Parallel()
	ks := &memKeys{}
	a := auth.New(ks)
	secret, rec := mint(t, ks, memgate.Key{Tenant: "acme", Role: memgate.RoleUser, Principal: "alice"})
	if _, err := a.Authenticate(t.Context(), secret); err != nil {
		t.Fatalf("control: %v", err)
	}
	rec.Principal = "" // a user key bound to nobody would widen to the tenant
	if k, err := a.Authenticate(t.Context(), secret); memgate.ErrorCode(err) != memgate.EUNAUTHORIZED || k != nil {
		t.Fatalf("Authenticate of a user key without principal: %v, %v", k, err)
	}
}
