package sqlite

import (
	"context"
	"database/sql"
	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// Promote implements store.Store.
func (db *DB) Promote(ctx context.Context, s memgate.Scope, id string, p store.Promotion) (approved, superseded *memgate.Memory, err error) {
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	where, wargs := scopeSQL(s)
	err = db.write(ctx, "promote", func(tx *sql.Tx) error {
		cur, err := getOne(ctx, tx, where, wargs, id)
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
		args := append([]any{micros(p.At), p.By}, wargs...)
		if _, err := tx.ExecContext(ctx, `UPDATE memories SET status = 'active', status_reason = 'approved', updated_at = ?, updated_by = COALESCE(NULLIF(?, ''), updated_by),
			version = version + 1 WHERE `+where+` AND id = ?`, append(args, id)...); err != nil {
			return err
		}
		if cur.Supersedes != "" {
			// The replaced memory is the principal's, in whatever agent or
			// conversation: the link was checked within the writer's scope
			// when the pending memory was stored.
			owner := memgate.Scope{Tenant: cur.Tenant, Principal: cur.Principal}
			ow, oargs := scopeSQL(owner)
			res, err := tx.ExecContext(ctx, `UPDATE memories SET status = 'superseded', superseded_by = ?, updated_at = ?, updated_by = COALESCE(NULLIF(?, ''), updated_by),
				version = version + 1 WHERE `+ow+` AND id = ? AND status = 'active'`,
				append(append([]any{id, micros(p.At), p.By}, oargs...), cur.Supersedes)...)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 1 {
				if superseded, err = getOne(ctx, tx, ow, oargs, cur.Supersedes); err != nil {
					return err
				}
			}
		}
		approved, err = getOne(ctx, tx, where, wargs, id)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return approved, superseded, nil
}
