package postgres

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// dedupSQL is the one dedup predicate, shared by FindDuplicates and
// Remember (the engine skips embedding what FindDuplicates reports, so the
// two must agree): the memory a new one folds into has the same tenant,
// principal, agent, conversation, kind and key, is active (or pending when
// the new memory is pending too: an active memory, such as a person's own
// statement, must never fold into one held for approval), and has not
// expired when the new memory is created (an expired memory is invisible
// to every read, so a duplicate folded into it would be lost). The oldest
// wins if Insert has left several. Repeating the index's non-empty key test
// lets the planner use the partial index memories_dedup.
const dedupSQL = `SELECT id FROM memories
	WHERE tenant = $1 AND principal = $2 AND kind = $3 AND dedup_key = $4 AND dedup_key <> ''
	AND agent = $5 AND conversation = $6
	AND (status = 'active' OR (status = 'pending' AND $7::text = 'pending')) AND (expires_at IS NULL OR expires_at > $8)
	ORDER BY seq LIMIT 1`

// dedupArgs are dedupSQL's arguments for the new memory m.
func dedupArgs(m *memgate.Memory) []any {
	return []any{m.Tenant, m.Principal, string(m.Kind), m.DedupKey, m.Agent, m.Conversation, string(m.Status), ts(m.CreatedAt)}
}

// FindDuplicates implements store.Store. Expiry is judged at each memory's
// CreatedAt, as Remember judges it. The lookups go in one batch.
func (db *DB) FindDuplicates(ctx context.Context, ms []*memgate.Memory) ([]string, error) {
	for _, m := range ms {
		if m != nil && m.DedupKey != "" {
			if err := m.Scope().Validate(); err != nil {
				return nil, err
			}
		}
	}
	out := make([]string, len(ms))
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	var b pgx.Batch
	for i, m := range ms {
		if m == nil || m.DedupKey == "" {
			continue
		}
		b.Queue(dedupSQL, dedupArgs(m)...).QueryRow(func(row pgx.Row) error {
			err := row.Scan(&out[i])
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			return err
		})
	}
	if b.Len() == 0 {
		return out, nil
	}
	if err := r.SendBatch(ctx, &b).Close(); err != nil {
		return nil, interpretError(ctx, "find duplicates", err)
	}
	return out, nil
}

// foldSQL records one more sighting of a memory. Neither version nor content
// changes: a concurrent Update of the memory is not made to conflict.
const foldSQL = `UPDATE memories SET seen_count = seen_count + 1, updated_at = $1 WHERE tenant = $2 AND id = $3`

// populationSQL is the one predicate retention counts and evicts with: the
// active or pending memories of one partition and kind, written exactly as
// memories_retention's WHERE clause so the eviction reads that index. The
// populations triggers (migration 0004) count with the same status test.
const populationSQL = `tenant = $1 AND principal = $2 AND agent = $3 AND kind = $4 AND status IN ('active', 'pending')`

const (
	// populationCountSQL reads the live count the populations triggers
	// keep instead of counting the population each time (no row: nobody
	// of that population was ever counted, so 0).
	populationCountSQL = `SELECT n FROM populations WHERE tenant = $1 AND principal = $2 AND agent = $3 AND kind = $4`
	evictSQL           = `DELETE FROM memories WHERE tenant = $1 AND id IN (
		SELECT id FROM memories WHERE ` + populationSQL + ` ORDER BY seq LIMIT $5)
		RETURNING seq, id`
	// readBackSQL reads memories by (tenant, id) pairs, unscoped: for the
	// read-back inside Remember, whose inputs name their owners.
	readBackSQL = `SELECT ` + memoryColumns + ` FROM memories
		WHERE (tenant, id) IN (SELECT * FROM unnest($1::text[], $2::text[]))`
)

// population is one (tenant, principal, agent, kind) a retention cap
// applies to: each writer's agent (or the principal-wide level) is its own
// population, so one never evicts another's memories.
type population struct {
	tenant, principal, agent string
	kind                     memgate.Kind
}

// Remember implements store.Store, in one transaction.
//
// Concurrency: the transaction first takes a transaction-scoped advisory
// lock per (tenant, principal, kind) it writes, in key order (so two calls
// never wait for each other in a cycle). That triple is exactly the unit of
// both decisions Remember takes by reading first: the dedup predicate
// (same kind in the partition) and the retention population. Concurrent
// calls on one population queue on the lock, and each, running at READ
// COMMITTED, reads with statements that start after the previous holder
// committed: it sees the memory the previous call inserted and folds into
// it, and counts the population as that call left it. Calls on other
// populations run in parallel. The alternatives do worse here: SELECT ...
// FOR UPDATE cannot lock a row that does not exist yet (the first copy of a
// duplicate), and SERIALIZABLE would abort and retry most of a burst of
// identical calls instead of queueing them. A deadlock with another kind of
// writer (the sweeper deleting across populations) is retried by write.
//
// Inside the transaction, each input is looked up for dedup (seeing the
// inputs inserted before it), then inserted or folded; every memory that
// stands for an input is read back; then every population written is
// brought down to its cap. Memories[i] is read back from the transaction
// (a copy; the inputs are not modified), so it carries the stored
// seen_count and defaults; a memory evicted by the same call is reported
// as it stood before the eviction.
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
	var pops []population
	for _, m := range ms {
		if p := (population{m.Tenant, m.Principal, m.Agent, m.Kind}); !slices.Contains(pops, p) {
			pops = append(pops, p)
		}
	}
	locks := make([]int64, 0, len(pops))
	for _, p := range pops {
		if k := db.lockKey("population", p.tenant, p.principal, string(p.kind)); !slices.Contains(locks, k) {
			locks = append(locks, k)
		}
	}
	slices.Sort(locks)

	var res *store.WriteResult
	err := db.write(ctx, "remember", func(tx pgx.Tx) error {
		res = &store.WriteResult{
			Memories:     make([]*memgate.Memory, len(ms)),
			Deduplicated: make([]bool, len(ms)),
			Replayed:     make([]bool, len(ms)),
			Evicted:      []store.Ref{},
		}
		// unnest yields the sorted keys in order, one lock after another.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(k) FROM unnest($1::bigint[]) AS k`, locks); err != nil {
			return err
		}
		tenants, ids := make([]string, len(ms)), make([]string, len(ms))
		for i, m := range ms {
			tenants[i], ids[i] = m.Tenant, m.ID
			key := store.IdempotencyKeyAt(keys, i)
			if key.Key != "" {
				// A retry of the same request writes the same population,
				// whose lock is held: the earlier call has committed or
				// rolled back by now, and this statement sees which.
				id, err := replay(ctx, tx, m, key, i, len(ms))
				if err != nil {
					return err
				}
				if id != "" {
					ids[i], res.Replayed[i] = id, true
					continue
				}
			}
			folded := false
			if m.DedupKey != "" {
				var id string
				err := tx.QueryRow(ctx, dedupSQL, dedupArgs(m)...).Scan(&id)
				switch {
				case err == nil:
					if _, err := tx.Exec(ctx, foldSQL, ts(m.UpdatedAt), m.Tenant, id); err != nil {
						return err
					}
					ids[i], res.Deduplicated[i], folded = id, true, true
				case !errors.Is(err, pgx.ErrNoRows):
					return err
				}
			}
			if !folded {
				if _, err := tx.Exec(ctx, insertMemory, rows[i]...); err != nil {
					return err
				}
			}
			if key.Key != "" {
				// Another request with the same key in another population
				// may race this one: the primary key refuses the second
				// (interpretError makes it this conflict).
				if _, err := tx.Exec(ctx, recordIdempotencySQL, m.Tenant, m.Principal, m.Agent, m.Conversation,
					key.Key, key.RequestSHA256, ids[i]); err != nil {
					return err
				}
			}
		}

		// Read back before evicting: eviction only deletes, so what is read
		// now is the final state of every memory that survives it.
		read, err := tx.Query(ctx, readBackSQL, tenants, ids)
		if err != nil {
			return err
		}
		byKey := map[[2]string]*memgate.Memory{}
		for read.Next() {
			m, _, err := scanMemory(read, false)
			if err != nil {
				read.Close()
				return err
			}
			byKey[[2]string{m.Tenant, m.ID}] = m
		}
		read.Close()
		if err := read.Err(); err != nil {
			return err
		}
		for i := range ms {
			m, ok := byKey[[2]string{tenants[i], ids[i]}]
			if !ok {
				return errors.New("remember: a written memory is missing from the read-back")
			}
			if slices.Contains(res.Memories[:i], m) {
				m = m.Clone() // each input gets its own copy
			}
			res.Memories[i] = m
		}

		for _, p := range pops {
			limit := caps[p.kind]
			if limit <= 0 {
				continue
			}
			evicted, err := evict(ctx, tx, p, limit)
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
	lookupIdempotencySQL = `SELECT k.request_sha256, k.memory_id, m.id IS NOT NULL FROM idempotency_keys k
		LEFT JOIN memories m ON m.tenant = k.tenant AND m.id = k.memory_id
		WHERE k.tenant = $1 AND k.principal = $2 AND k.agent = $3 AND k.conversation = $4 AND k.key = $5`
	recordIdempotencySQL = `INSERT INTO idempotency_keys
		(tenant, principal, agent, conversation, key, request_sha256, memory_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`
	pruneIdempotencySQL = `DELETE FROM idempotency_keys WHERE (tenant, principal, agent, conversation, key) IN (
		SELECT tenant, principal, agent, conversation, key FROM idempotency_keys
		WHERE created_at < $1 ORDER BY created_at LIMIT $2)`
)

// replay looks up the record of key in m's partition: the id of the memory
// an earlier call stored for the same request, "" when there is none, or
// the conflict of input i of n (another request, or a deleted memory).
func replay(ctx context.Context, tx pgx.Tx, m *memgate.Memory, key store.IdempotencyKey, i, n int) (string, error) {
	var hash, id string
	var exists bool
	err := tx.QueryRow(ctx, lookupIdempotencySQL, m.Tenant, m.Principal, m.Agent, m.Conversation, key.Key).Scan(&hash, &id, &exists)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
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
func evict(ctx context.Context, tx pgx.Tx, p population, limit int) ([]store.Ref, error) {
	var n int64
	if err := tx.QueryRow(ctx, populationCountSQL, p.tenant, p.principal, p.agent, string(p.kind)).Scan(&n); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	}
	if n <= int64(limit) {
		return nil, nil
	}
	rows, err := tx.Query(ctx, evictSQL, p.tenant, p.principal, p.agent, string(p.kind), n-int64(limit))
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
	var q query
	q.sql(`UPDATE memories SET feedback_count = feedback_count + 1, feedback_sum = feedback_sum + `, q.arg(value),
		`::double precision WHERE `).scope(s, "")
	q.sql(` AND id = `, q.arg(id), ` AND status IN ('active', 'pending') RETURNING `, memoryColumns)
	var out *memgate.Memory
	err := db.write(ctx, "add feedback", func(tx pgx.Tx) error {
		var err error
		out, _, err = scanMemory(tx.QueryRow(ctx, q.String(), q.args...), false)
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		// In scope but not updated: the status refused it. Out of scope or
		// missing: getOne answers not_found.
		cur, err := getOne(ctx, tx, s, id, false)
		if err != nil {
			return err
		}
		return memgate.Errorf(memgate.ECONFLICT, "memory is %s; feedback is recorded on active or pending memories only", cur.Status)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// sweepSQL deletes the memories that expired first, at most a limit of
// them, reading memories_expiry in order. SKIP LOCKED lets several
// replicas sweep at once without queueing on each other's rows (or on a
// row a writer holds: it is swept next time).
const sweepSQL = `DELETE FROM memories m USING (
	SELECT tenant, id FROM memories WHERE expires_at IS NOT NULL AND expires_at <= $1
	ORDER BY expires_at, seq LIMIT $2 FOR UPDATE SKIP LOCKED) x
	WHERE m.tenant = x.tenant AND m.id = x.id
	RETURNING m.seq, m.tenant, m.principal, m.id, m.kind`

// DeleteExpired implements store.Store: whatever the status, earliest
// expiry first. The refs are returned in insertion order. A limit of zero
// or less deletes nothing.
func (db *DB) DeleteExpired(ctx context.Context, before time.Time, limit int) ([]store.Ref, error) {
	if limit <= 0 {
		return nil, nil
	}
	type gone struct {
		seq int64
		ref store.Ref
	}
	var out []gone
	err := db.write(ctx, "delete expired", func(tx pgx.Tx) error {
		out = out[:0]
		rows, err := tx.Query(ctx, sweepSQL, ts(before), limit)
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
