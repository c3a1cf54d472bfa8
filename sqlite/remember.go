package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// foldSQL records one more sighting of a memory. Neither version nor content
// changes: a concurrent Update of the memory is not made to conflict.
const foldSQL = `UPDATE memories SET seen_count = seen_count + 1, updated_at = ? WHERE seq = ?`

// populationSQL is the one predicate retention counts and evicts with: the
// active or pending memories of one partition and kind. It is written
// exactly as memories_retention's WHERE clause, so both statements read that
// index and nothing else.
const populationSQL = `tenant = ? AND principal = ? AND agent = ? AND kind = ? AND status IN ('active', 'pending')`

const (
	// populationCountSQL reads the live count the populations triggers
	// keep (migration 0004) instead of counting the population each time.
	// (no row: nobody of that population was ever counted, so 0).
	populationCountSQL = `SELECT n FROM populations WHERE tenant = ? AND principal = ? AND agent = ? AND kind = ?`
	evictSQL           = `DELETE FROM memories WHERE seq IN (
		SELECT seq FROM memories WHERE ` + populationSQL + ` ORDER BY seq LIMIT ?)
		RETURNING seq, id`
)

// population is one (tenant, principal, agent, kind) a retention cap
// applies to: each writer's agent (or the principal-wide level) is its own
// population, so one never evicts another's memories.
type population struct {
	tenant, principal, agent string
	kind                     memgate.Kind
}

// Remember implements store.Store. Inputs are checked before the
// transaction; inside it, each input is looked up for dedup (seeing the
// inputs inserted before it), then inserted or folded, then every population
// written is brought down to its cap. Memories[i] is read back from the
// transaction after the writes (a copy; the inputs are not modified), so it
// carries the stored seen_count and defaults; a memory evicted by the same
// call is reported as it stood before the eviction.
func (db *DB) Remember(ctx context.Context, ms []*memgate.Memory, caps map[memgate.Kind]int, keys ...store.IdempotencyKey) (*store.WriteResult, error) {
	rows := make([][]any, len(ms))
	for i, m := range ms {
		if err := store.CheckNew(m); err != nil {
			return nil, err
		}
		args, err := memoryArgs(m)
		if err != nil {
			return nil, err
		}
		rows[i] = args
	}
	if err := store.CheckIdempotencyKeys(ms, keys); err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return &store.WriteResult{Memories: []*memgate.Memory{}, Deduplicated: []bool{}, Replayed: []bool{}, Evicted: []store.Ref{}}, nil
	}

	var res *store.WriteResult
	err := db.write(ctx, "remember", func(tx *sql.Tx) error {
		res = &store.WriteResult{
			Memories:     make([]*memgate.Memory, len(ms)),
			Deduplicated: make([]bool, len(ms)),
			Replayed:     make([]bool, len(ms)),
			Evicted:      []store.Ref{},
		}
		ins, err := db.txStmt(ctx, tx, insertMemory)
		if err != nil {
			return err
		}
		find, err := db.txStmt(ctx, tx, dedupSQL)
		if err != nil {
			return err
		}
		fold, err := db.txStmt(ctx, tx, foldSQL)
		if err != nil {
			return err
		}
		read, err := db.txStmt(ctx, tx, readByID)
		if err != nil {
			return err
		}

		standing := make([]string, len(ms)) // id of the memory that stands for each input
		var pops []population
		for i, m := range ms {
			if p := (population{m.Tenant, m.Principal, m.Agent, m.Kind}); !slices.Contains(pops, p) {
				pops = append(pops, p)
			}
			key := store.IdempotencyKeyAt(keys, i)
			if key.Key != "" {
				id, err := replay(ctx, tx, m, key, i, len(ms))
				if err != nil {
					return err
				}
				if id != "" {
					standing[i], res.Replayed[i] = id, true
					continue
				}
			}
			if m.DedupKey != "" {
				var seq int64
				var id string
				err := find.QueryRowContext(ctx, dedupArgs(m)...).Scan(&seq, &id)
				switch {
				case err == nil:
					if _, err := fold.ExecContext(ctx, micros(m.UpdatedAt), seq); err != nil {
						return err
					}
					standing[i], res.Deduplicated[i] = id, true
				case !errors.Is(err, sql.ErrNoRows):
					return err
				}
			}
			if standing[i] == "" {
				if _, err := ins.ExecContext(ctx, rows[i]...); err != nil {
					return err
				}
				standing[i] = m.ID
			}
			if key.Key != "" {
				// SQLite has one writer: nobody took the key since replay.
				if _, err := tx.ExecContext(ctx, recordIdempotencySQL, m.Tenant, m.Principal, m.Agent, m.Conversation,
					key.Key, key.RequestSHA256, standing[i], micros(time.Now())); err != nil {
					return err
				}
			}
		}

		// Read back before evicting: eviction only deletes, so what is read
		// now is the final state of every memory that survives it.
		for i, m := range ms {
			if res.Memories[i], _, err = scanMemory(read.QueryRowContext(ctx, m.Tenant, standing[i]), false); err != nil {
				return err
			}
		}

		for _, p := range pops {
			limit := caps[p.kind]
			if limit <= 0 {
				continue
			}
			evicted, err := db.evict(ctx, tx, p, limit)
			if err != nil {
				return err
			}
			res.Evicted = append(res.Evicted, evicted...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

const (
	recordIdempotencySQL = `INSERT INTO idempotency_keys
		(tenant, principal, agent, conversation, key, request_sha256, memory_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	pruneIdempotencySQL = `DELETE FROM idempotency_keys WHERE (tenant, principal, agent, conversation, key) IN (
		SELECT tenant, principal, agent, conversation, key FROM idempotency_keys
		WHERE created_at < ? ORDER BY created_at LIMIT ?)`
)

// lookupIdempotencySQL reads a partition's record of a key, and whether its
// memory still exists.
const lookupIdempotencySQL = `SELECT k.request_sha256, k.memory_id, m.id IS NOT NULL FROM idempotency_keys k
	LEFT JOIN memories m ON m.tenant = k.tenant AND m.id = k.memory_id
	WHERE k.tenant = ? AND k.principal = ? AND k.agent = ? AND k.conversation = ? AND k.key = ?`

// replay looks up the record of key in m's partition: the id of the memory
// an earlier call stored for the same request, "" when there is none, or
// the conflict of input i of n (another request, or a deleted memory).
func replay(ctx context.Context, tx *sql.Tx, m *memgate.Memory, key store.IdempotencyKey, i, n int) (string, error) {
	var hash, id string
	var exists bool
	err := tx.QueryRowContext(ctx, lookupIdempotencySQL, m.Tenant, m.Principal, m.Agent, m.Conversation, key.Key).Scan(&hash, &id, &exists)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil
	case err != nil:
		return "", err
	case hash != key.RequestSHA256:
		return "", store.IdempotencyConflict(i, n, store.IdempotencyOtherRequest)
	case !exists:
		return "", store.IdempotencyConflict(i, n, store.IdempotencyDeleted)
	}
	return id, nil
}

// PruneIdempotency implements store.Store: the oldest records first.
func (db *DB) PruneIdempotency(ctx context.Context, before time.Time, limit int) (int64, error) {
	return db.prune(ctx, "prune idempotency", pruneIdempotencySQL, before, limit)
}

// evict deletes the oldest memories of p until at most limit remain, and
// returns them oldest first.
func (db *DB) evict(ctx context.Context, tx *sql.Tx, p population, limit int) ([]store.Ref, error) {
	count, err := db.txStmt(ctx, tx, populationCountSQL)
	if err != nil {
		return nil, err
	}
	var n int
	if err := count.QueryRowContext(ctx, p.tenant, p.principal, p.agent, string(p.kind)).Scan(&n); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if n <= limit {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, evictSQL, p.tenant, p.principal, p.agent, string(p.kind), n-limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type gone struct {
		seq int64
		ref store.Ref
	}
	var out []gone
	for rows.Next() {
		g := gone{ref: store.Ref{Tenant: p.tenant, Principal: p.principal, Kind: p.kind}}
		if err := rows.Scan(&g.seq, &g.ref.ID); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// RETURNING yields rows in no promised order.
	slices.SortFunc(out, func(a, b gone) int { return cmp.Compare(a.seq, b.seq) })
	refs := make([]store.Ref, len(out))
	for i, g := range out {
		refs[i] = g.ref
	}
	return refs, nil
}

// AddFeedback implements store.Store. Feedback is recorded on active and
// pending memories, the ones recall can still return (the same rule as
// Update); a revoked or superseded memory is a conflict. Neither the version
// nor updated_at changes: feedback is about the memory, not an edit of it,
// and must not make a concurrent Update conflict.
func (db *DB) AddFeedback(ctx context.Context, s memgate.Scope, id string, value float64) (*memgate.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := store.CheckFeedback(value); err != nil {
		return nil, err
	}
	where, wargs := scopeSQL(s)
	args := append(append([]any{value}, wargs...), id)
	var out *memgate.Memory
	err := db.write(ctx, "add feedback", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE memories SET feedback_count = feedback_count + 1,
			feedback_sum = feedback_sum + ? WHERE `+where+` AND id = ? AND status IN ('active', 'pending')`, args...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			// In scope but not updated: the status refused it. Out of
			// scope or missing: getOne answers not_found.
			cur, err := getOne(ctx, tx, where, wargs, id)
			if err != nil {
				return err
			}
			return memgate.Errorf(memgate.ECONFLICT, "memory is %s; feedback is recorded on active or pending memories only", cur.Status)
		}
		out, err = getOne(ctx, tx, where, wargs, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// sweepSQL deletes the memories that expired first, at most a limit of
// them, reading memories_expiry in order (seq, the rowid, ends every index,
// so the ORDER BY needs no sort).
const sweepSQL = `DELETE FROM memories WHERE seq IN (
	SELECT seq FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ?
	ORDER BY expires_at, seq LIMIT ?)
	RETURNING seq, tenant, principal, id, kind`

// DeleteExpired implements store.Store: whatever the status, earliest
// expiry first. The refs are returned in insertion order. A limit of zero or
// less deletes nothing.
func (db *DB) DeleteExpired(ctx context.Context, before time.Time, limit int) ([]store.Ref, error) {
	if limit <= 0 {
		return nil, nil
	}
	type gone struct {
		seq int64
		ref store.Ref
	}
	var out []gone
	err := db.write(ctx, "delete expired", func(tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, sweepSQL, micros(before), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var g gone
			var kind string
			if err := rows.Scan(&g.seq, &g.ref.Tenant, &g.ref.Principal, &g.ref.ID, &kind); err != nil {
				return err
			}
			g.ref.Kind = memgate.Kind(kind)
			out = append(out, g)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b gone) int { return cmp.Compare(a.seq, b.seq) })
	refs := make([]store.Ref, len(out))
	for i, g := range out {
		refs[i] = g.ref
	}
	return refs, nil
}
