package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// keyColumns are the columns of a key, in the order scanKey reads them.
const keyColumns = `tenant, id, hash, role, principal, agent, name, created_at, revoked_at, sources`

func errKeyConflict() *memgate.Error {
	return &memgate.Error{Code: memgate.ECONFLICT, Message: "a key with this id or secret already exists"}
}

// CreateKey implements store.Store. The conflict check runs inside the write
// transaction (the one writer, BEGIN IMMEDIATE), so it cannot race another
// CreateKey; the UNIQUE constraints stay as the last word.
func (db *DB) CreateKey(ctx context.Context, k *memgate.Key) error {
	if k == nil {
		return memgate.FieldError("key", "is required")
	}
	if err := k.Validate(); err != nil {
		return err
	}
	if k.CreatedAt.IsZero() {
		return memgate.FieldError("created_at", "is required")
	}
	return db.write(ctx, "create key", func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM keys WHERE (tenant = ? AND id = ?) OR hash = ?`,
			k.Tenant, k.ID, k.Hash).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return errKeyConflict()
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO keys (`+keyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			k.Tenant, k.ID, k.Hash, string(k.Role), k.Principal, k.Agent, k.Name, micros(k.CreatedAt), optMicros(k.RevokedAt), memgate.JoinSources(k.Sources))
		return err
	})
}

// CreateFirstKey implements store.Store. The check and the insert share the
// one write transaction, so two callers cannot both see an empty table.
func (db *DB) CreateFirstKey(ctx context.Context, k *memgate.Key) (bool, error) {
	if k == nil {
		return false, memgate.FieldError("key", "is required")
	}
	if err := k.Validate(); err != nil {
		return false, err
	}
	if k.CreatedAt.IsZero() {
		return false, memgate.FieldError("created_at", "is required")
	}
	created := false
	err := db.write(ctx, "create first key", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO keys (`+keyColumns+`)
			SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM keys)`,
			k.Tenant, k.ID, k.Hash, string(k.Role), k.Principal, k.Agent, k.Name, micros(k.CreatedAt), optMicros(k.RevokedAt), memgate.JoinSources(k.Sources))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		created = n == 1
		return err
	})
	return created, err
}

// KeyByHash implements store.Store.
func (db *DB) KeyByHash(ctx context.Context, hash string) (*memgate.Key, error) {
	if hash == "" {
		return nil, store.ErrKeyNotFound()
	}
	// Every API request looks its key up: the statement is prepared once.
	stmt, err := db.readStmt(ctx, `SELECT `+keyColumns+` FROM keys WHERE hash = ?`)
	if err != nil {
		return nil, interpretError(ctx, "key by hash", err)
	}
	k, err := scanKey(stmt.QueryRowContext(ctx, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrKeyNotFound()
	}
	return k, interpretError(ctx, "key by hash", err)
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
	rows, err := r.QueryContext(ctx, `SELECT `+keyColumns+` FROM keys WHERE tenant = ? ORDER BY created_at, id`, tenant)
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
	err := db.write(ctx, "revoke key", func(tx *sql.Tx) error {
		// COALESCE keeps the first revocation: revoking twice changes nothing.
		if _, err := tx.ExecContext(ctx, `UPDATE keys SET revoked_at = COALESCE(revoked_at, ?) WHERE tenant = ? AND id = ?`,
			micros(at), tenant, id); err != nil {
			return err
		}
		var err error
		k, err = scanKey(tx.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM keys WHERE tenant = ? AND id = ?`, tenant, id))
		if errors.Is(err, sql.ErrNoRows) {
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
	if err := r.QueryRowContext(ctx, `SELECT COUNT(*) FROM keys`).Scan(&n); err != nil {
		return 0, interpretError(ctx, "count keys", err)
	}
	return n, nil
}

func scanKey(row scanner) (*memgate.Key, error) {
	var (
		k       memgate.Key
		role    string
		created int64
		revoked sql.NullInt64
		sources string
	)
	if err := row.Scan(&k.Tenant, &k.ID, &k.Hash, &role, &k.Principal, &k.Agent, &k.Name, &created, &revoked, &sources); err != nil {
		return nil, err
	}
	k.Sources = memgate.SplitSources(sources)
	k.Role = memgate.Role(role)
	k.CreatedAt = fromMicros(created)
	k.RevokedAt = optFromMicros(revoked)
	return &k, nil
}
