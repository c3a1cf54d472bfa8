package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// Promote implements store.Store. The pending memory is locked while the
// approval is decided; the memory it replaces is superseded only if it is
// still active (the UPDATE re-checks that under its row lock).
func (db *DB) Promote(ctx context.Context, s memgate.Scope, id string, p store.Promotion) (approved, superseded *memgate.Memory, err error) {
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	err = db.write(ctx, "promote", func(tx pgx.Tx) error {
		approved, superseded = nil, nil
		cur, err := getOne(ctx, tx, s, id, true)
		if err != nil {
			return err
		}
		if p.Version != 0 && cur.Version != p.Version {
			return store.VersionConflict(cur, p.Version)
		}
		switch cur.Status {
		case memgate.StatusActive:
			approved = cur
			return nil
		case memgate.StatusPending:
		default:
			return memgate.Errorf(memgate.ECONFLICT, "memory is %s; only a pending memory can be approved", cur.Status)
		}
		approved, _, err = scanMemory(tx.QueryRow(ctx, `UPDATE memories SET status = 'active', status_reason = 'approved',
			updated_at = $1, updated_by = COALESCE(NULLIF($2, ''), updated_by), version = version + 1 WHERE tenant = $3 AND id = $4 RETURNING `+memoryColumns,
			ts(p.At), p.By, cur.Tenant, cur.ID), false)
		if err != nil || cur.Supersedes == "" {
			return err
		}
		// The replaced memory is the principal's, in whatever agent or
		// conversation: the link was checked within the writer's scope
		// when the pending memory was stored.
		superseded, _, err = scanMemory(tx.QueryRow(ctx, `UPDATE memories SET status = 'superseded', superseded_by = $1,
			updated_at = $2, updated_by = COALESCE(NULLIF($3, ''), updated_by), version = version + 1
			WHERE tenant = $4 AND principal = $5 AND id = $6 AND status = 'active' RETURNING `+memoryColumns,
			cur.ID, ts(p.At), p.By, cur.Tenant, cur.Principal, cur.Supersedes), false)
		if errors.Is(err, pgx.ErrNoRows) {
			superseded = nil
			return nil
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return approved, superseded, nil
}
