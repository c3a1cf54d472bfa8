package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// keyColumns are the columns of a key, in the order scanKey reads them.
const keyColumns = `tenant, id, hash, role, principal, agent, name, created_at, revoked_at, sources`

const selectKey = `SELECT ` + keyColumns + ` FROM keys`

func keyArgs(k *memgate.Key) []any {
	return []any{k.Tenant, k.ID, k.Hash, string(k.Role), k.Principal, k.Agent, k.Name, k.CreatedAt.UTC(), utc(k.RevokedAt), memgate.JoinSources(k.Sources)}
}

func errKeyConflict() *memgate.Error {
	return &memgate.Error{Code: memgate.ECONFLICT, Message: "a key with this id or secret already exists"}
}

// checkKey validates a key record before any I/O.
func checkKey(k *memgate.Key) error {
	if k == nil {
		return memgate.FieldError("key", "is required")
	}
	if err := k.Validate(); err != nil {
		return err
	}
	if k.CreatedAt.IsZero() {
		return memgate.FieldError("created_at", "is required")
	}
	return nil
}

// CreateKey implements store.Store. The primary key (tenant, id) and the
// unique hash decide: a reused id or hash fails the insert as a unique
// violation, reported as the key conflict, and nothing is stored.
func (s *Store) CreateKey(ctx context.Context, k *memgate.Key) error {
	if err := checkKey(k); err != nil {
		return err
	}
	err := s.d.Write(ctx, "create key", func(q Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO keys (`+keyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, keyArgs(k)...)
		return err
	})
	if memgate.ErrorCode(err) == memgate.ECONFLICT {
		return errKeyConflict()
	}
	return err
}

// CreateFirstKey implements store.Store. The transaction locks the
// decision first (Driver.Lock), so concurrent callers (several servers
// starting on a new database) queue, and each then checks for any key
// with a statement that sees the previous holder's commit: exactly one
// finds the table empty.
func (s *Store) CreateFirstKey(ctx context.Context, k *memgate.Key) (bool, error) {
	if err := checkKey(k); err != nil {
		return false, err
	}
	return write(ctx, s, "create first key", func(q Querier) (bool, error) {
		if err := s.d.Lock(ctx, q, []string{"first key"}); err != nil {
			return false, err
		}
		n, err := q.Exec(ctx, `INSERT INTO keys (`+keyColumns+`)
			SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM keys)`, keyArgs(k)...)
		return n == 1, err
	})
}

// KeyByHash implements store.Store.
func (s *Store) KeyByHash(ctx context.Context, hash string) (*memgate.Key, error) {
	if hash == "" {
		return nil, store.ErrKeyNotFound()
	}
	return read(ctx, s, "key by hash", func(q Querier) (*memgate.Key, error) {
		return scanKey(s.lookupRow(ctx, q, selectKey+` WHERE hash = ?`, hash))
	})
}

// ListKeys implements store.Store.
func (s *Store) ListKeys(ctx context.Context, tenant string) ([]*memgate.Key, error) {
	if err := memgate.CheckIdent("tenant", tenant); err != nil {
		return nil, err
	}
	return read(ctx, s, "list keys", func(q Querier) ([]*memgate.Key, error) {
		return collect(func(r Rows) (*memgate.Key, error) { return scanKey(r) })(
			q.Query(ctx, selectKey+` WHERE tenant = ? ORDER BY created_at, id`, tenant))
	})
}

// RevokeKey implements store.Store. COALESCE keeps the first revocation:
// revoking twice changes nothing.
func (s *Store) RevokeKey(ctx context.Context, tenant, id string, at time.Time) (*memgate.Key, error) {
	if err := memgate.CheckIdent("tenant", tenant); err != nil {
		return nil, err
	}
	if !memgate.ValidIdent(id) {
		return nil, store.ErrKeyNotFound()
	}
	if at.IsZero() {
		return nil, memgate.FieldError("at", "is required")
	}
	return write(ctx, s, "revoke key", func(q Querier) (*memgate.Key, error) {
		return scanKey(q.QueryRow(ctx, `UPDATE keys SET revoked_at = COALESCE(revoked_at, ?)
			WHERE tenant = ? AND id = ? RETURNING `+keyColumns, at.UTC(), tenant, id))
	})
}

// CountKeys implements store.Store.
func (s *Store) CountKeys(ctx context.Context) (int64, error) {
	return read(ctx, s, "count keys", func(q Querier) (int64, error) {
		var n int64
		err := q.QueryRow(ctx, `SELECT COUNT(*) FROM keys`).Scan(&n)
		return n, err
	})
}

// scanKey reads one row of keyColumns; no row is the one error for a key
// that does not exist.
func scanKey(row interface{ Scan(...any) error }) (*memgate.Key, error) {
	var k memgate.Key
	var role, sources string
	err := row.Scan(&k.Tenant, &k.ID, &k.Hash, &role, &k.Principal, &k.Agent, &k.Name, &k.CreatedAt, &k.RevokedAt, &sources)
	if errors.Is(err, ErrNoRows) {
		return nil, store.ErrKeyNotFound()
	}
	if err != nil {
		return nil, err
	}
	k.Sources = memgate.SplitSources(sources)
	k.Role = memgate.Role(role)
	return &k, nil
}
