package guard

import (
	"context"
	"log/slog"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/store"
)

// MaxKeysListed bounds ListKeys: a tenant with more keys than this is told
// so rather than answered with an unbounded list.
const MaxKeysListed = 10_000

// CreateKey mints a key in the session's tenant from the template t (role,
// principal, agent, granted sources, name; the rest is assigned) and
// stores it. It returns the secret, to be shown once and never again, and
// the stored record. Only a tenant-wide key (an admin's) administers keys;
// a template naming another tenant is forbidden, naming "tenant". The
// template is validated as auth.NewKey validates it (a user key bound to a
// principal, only agent keys bound to an agent, admin keys tenant-wide,
// sources known and not repeated).
func (s *Session) CreateKey(ctx context.Context, t memgate.Key) (secret string, k *memgate.Key, err error) {
	sc, err := s.Scope(auth.OpKeys, memgate.Scope{Tenant: t.Tenant})
	if err != nil {
		return "", nil, err
	}
	if !sc.AllPrincipals {
		return "", nil, memgate.Errorf(memgate.EFORBIDDEN, "key administration needs a tenant-wide key")
	}
	t.Tenant = sc.Tenant
	t.ID, t.Hash, t.RevokedAt = "", "", nil
	t.CreatedAt = s.g.cfg.Now()
	secret, rec, err := auth.NewKey(t)
	if err != nil {
		return "", nil, err
	}
	if err := s.g.cfg.Keys.CreateKey(ctx, rec); err != nil {
		return "", nil, err
	}
	s.g.log.InfoContext(ctx, "key created", slog.String("tenant", rec.Tenant), slog.String("key_id", rec.ID),
		slog.String("role", string(rec.Role)), slog.String("by", s.key.ID))
	out := *rec
	out.Hash = ""
	return secret, &out, nil
}

// ListKeys returns every key of the session's tenant, revoked ones
// included, oldest first, without hashes.
func (s *Session) ListKeys(ctx context.Context) ([]*memgate.Key, error) {
	sc, err := s.Scope(auth.OpKeys, memgate.Scope{})
	if err != nil {
		return nil, err
	}
	if !sc.AllPrincipals {
		return nil, memgate.Errorf(memgate.EFORBIDDEN, "key administration needs a tenant-wide key")
	}
	ks, err := s.g.cfg.Keys.ListKeys(ctx, sc.Tenant)
	if err != nil {
		return nil, err
	}
	if len(ks) > MaxKeysListed {
		return nil, memgate.Errorf(memgate.ETOOLARGE, "the tenant has %d keys, more than the %d a list holds", len(ks), MaxKeysListed)
	}
	out := make([]*memgate.Key, len(ks))
	for i, k := range ks {
		c := *k
		c.Hash = ""
		out[i] = &c
	}
	return out, nil
}

// RevokeKey revokes the key id of the session's tenant: it authenticates
// no more, on every replica, from the next request. A key of another
// tenant is not_found, exactly like a missing one. Revoking a revoked key
// returns it unchanged.
func (s *Session) RevokeKey(ctx context.Context, id string) (*memgate.Key, error) {
	sc, err := s.Scope(auth.OpKeys, memgate.Scope{})
	if err != nil {
		return nil, err
	}
	if !sc.AllPrincipals {
		return nil, memgate.Errorf(memgate.EFORBIDDEN, "key administration needs a tenant-wide key")
	}
	if !memgate.ValidIdent(id) {
		return nil, store.ErrKeyNotFound()
	}
	k, err := s.g.cfg.Keys.RevokeKey(ctx, sc.Tenant, id, s.g.cfg.Now())
	if err != nil {
		return nil, err
	}
	s.g.log.InfoContext(ctx, "key revoked", slog.String("tenant", k.Tenant), slog.String("key_id", k.ID), slog.String("by", s.key.ID))
	c := *k
	c.Hash = ""
	return &c, nil
}
