package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// keyColumns are the columns of a key, in the order scanKey reads them.
const keyColumns = `tenant, id, hash, role, principal, agent, name, created_at, revoked_at, sources`

const insertKey = `INSERT INTO keys (` + keyColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

func keyArgs(k *memgate.Key) []any {
	return []any{k.Tenant, k.ID, k.Hash, string(k.Role), k.Principal, k.Agent, k.Name, ts(k.CreatedAt), optTS(k.RevokedAt), memgate.JoinSources(k.Sources)}
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
// violation, which interpretError reports as the key conflict, and nothing
// is stored.
func (db *DB) CreateKey(ctx context.Context, k *memgate.Key) error {
	if err := checkKey(k); err != nil {
		return err
	}
	return db.write(ctx, "create key", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, insertKey, keyArgs(k)...)
		return err
	})
}

// firstKeyLockClass is the first key of the advisory lock CreateFirstKey
// takes ("fk"); the second is derived from the schema.
const firstKeyLockClass = 0x666b

// CreateFirstKey implements store.Store. The transaction takes an advisory
// lock first, so concurrent callers (several servers starting on a new
// database) queue; each then checks for any key with a statement that
// starts after the previous holder committed, so exactly one finds the
// table empty.
func (db *DB) CreateFirstKey(ctx context.Context, k *memgate.Key) (bool, error) {
	if err := checkKey(k); err != nil {
		return false, err
	}
	created := false
	err := db.write(ctx, "create first key", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, int32(firstKeyLockClass), int32(db.lockKey("first key"))); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO keys (`+keyColumns+`)
			SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 WHERE NOT EXISTS (SELECT 1 FROM keys)`, keyArgs(k)...)
		created = err == nil && tag.RowsAffected() == 1
		return err
	})
	return created, err
}

// KeyByHash implements store.Store.
func (db *DB) KeyByHash(ctx context.Context, hash string) (*memgate.Key, error) {
	if hash == "" {
		return nil, store.ErrKeyNotFound()
	}
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	k, err := scanKey(r.QueryRow(ctx, `SELECT `+keyColumns+` FROM keys WHERE hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrKeyNotFound()
	}
	if err != nil {
		return nil, interpretError(ctx, "key by hash", err)
	}
	return k, nil
}

// ListKeys implements store.Store.
func (db *DB) ListKeys(ctx context.Context, tenant string) ([]*memgate.Key, error) {
	if err := memgate.CheckIdent("tenant", tenant); err != nil {
		return nil, err
	}
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	rows, err := r.Query(ctx, `SELECT `+keyColumns+` FROM keys WHERE tenant = $1 ORDER BY created_at, id`, tenant)
	if err != nil {
		return nil, interpretError(ctx, "list keys", err)
	}
	defer rows.Close()
	keys := []*memgate.Key{}
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, interpretError(ctx, "list keys", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, interpretError(ctx, "list keys", err)
	}
	return keys, nil
}

// RevokeKey implements store.Store.
func (db *DB) RevokeKey(ctx context.Context, tenant, id string, at time.Time) (*memgate.Key, error) {
	if err := memgate.CheckIdent("tenant", tenant); err != nil {
		return nil, err
	}
	if !memgate.ValidIdent(id) {
		return nil, store.ErrKeyNotFound()
	}
	if at.IsZero() {
		return nil, memgate.FieldError("at", "is required")
	}
	var k *memgate.Key
	err := db.write(ctx, "revoke key", func(tx pgx.Tx) error {
		// COALESCE keeps the first revocation: revoking twice changes nothing.
		var err error
		k, err = scanKey(tx.QueryRow(ctx, `UPDATE keys SET revoked_at = COALESCE(revoked_at, $1)
			WHERE tenant = $2 AND id = $3 RETURNING `+keyColumns, ts(at), tenant, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrKeyNotFound()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// CountKeys implements store.Store.
func (db *DB) CountKeys(ctx context.Context) (int64, error) {
	r, err := db.reader()
	if err != nil {
		return 0, err
	}
	var n int64
	if err := r.QueryRow(ctx, `SELECT COUNT(*) FROM keys`).Scan(&n); err != nil {
		return 0, interpretError(ctx, "count keys", err)
	}
	return n, nil
}

func scanKey(row scanner) (*memgate.Key, error) {
	var (
		k       memgate.Key
		role    string
		revoked *time.Time
		sources string
	)
	if err := row.Scan(&k.Tenant, &k.ID, &k.Hash, &role, &k.Principal, &k.Agent, &k.Name, &k.CreatedAt, &revoked, &sources); err != nil {
		return nil, err
	}
	k.Sources = memgate.SplitSources(sources)
	k.Role = memgate.Role(role)
	k.CreatedAt = k.CreatedAt.UTC()
	k.RevokedAt = optTS(revoked)
	return &k, nil
}
