package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/memgate/memgate"
)

// dedupSQL is the one dedup predicate, shared by FindDuplicates and
// Remember (the engine skips embedding what FindDuplicates reports, so the
// two must agree): the memory a new one folds into has the same tenant,
// principal, agent, conversation, kind and key, is active (or pending when
// the new memory is pending too: an active memory, such as a person's own
// statement, must never fold into one held for approval), and
// has not expired when the new memory is created (an expired memory is
// invisible to every read, so a duplicate folded into it would be lost).
// The oldest wins if Insert has left several. Repeating the index's
// non-empty key test lets the planner use the partial index memories_dedup.
const dedupSQL = `SELECT seq, id FROM memories
	WHERE tenant = ? AND principal = ? AND kind = ? AND dedup_key = ? AND dedup_key <> ''
	AND agent = ? AND conversation = ?
	AND (status = 'active' OR (status = 'pending' AND ? = 'pending')) AND (expires_at IS NULL OR expires_at > ?)
	ORDER BY seq LIMIT 1`

// dedupArgs are dedupSQL's arguments for the new memory m.
func dedupArgs(m *memgate.Memory) []any {
	return []any{m.Tenant, m.Principal, string(m.Kind), m.DedupKey, m.Agent, m.Conversation, string(m.Status), micros(m.CreatedAt)}
}

// FindDuplicates implements store.Store. Expiry is judged at each memory's
// CreatedAt, as Remember judges it.
func (db *DB) FindDuplicates(ctx context.Context, ms []*memgate.Memory) ([]string, error) {
	for _, m := range ms {
		if m != nil && m.DedupKey != "" {
			if err := m.Scope().Validate(); err != nil {
				return nil, err
			}
		}
	}
	out := make([]string, len(ms))
	find, err := db.readStmt(ctx, dedupSQL)
	if err != nil {
		return nil, interpretError(ctx, "find duplicates", err)
	}
	for i, m := range ms {
		if m == nil || m.DedupKey == "" {
			continue
		}
		var seq int64
		err := find.QueryRowContext(ctx, dedupArgs(m)...).Scan(&seq, &out[i])
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, interpretError(ctx, "find duplicates", err)
		}
	}
	return out, nil
}
