package sqlstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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
//
// A keyed memory folds only into the memory that has its key (the same
// content under the same key is no new version), and a memory without a
// key only into one without: a key is never lost to a fold. A memory folds
// only into one of its own source, as a keyed write replaces only the
// holder of its own source's key (keyHolderSQL): a fold counts a sighting
// on the memory it folds into and answers with it, and a writer may do
// that only to a memory it could itself have written (an agent's
// duplicate of what the person said is the agent's own memory).
const dedupSQL = `SELECT id FROM memories
	WHERE tenant = ? AND principal = ? AND kind = ? AND dedup_key = ? AND dedup_key <> ''
	AND agent = ? AND conversation = ? AND key = ? AND source = ?
	AND (status = 'active' OR (status = 'pending' AND CAST(? AS TEXT) = 'pending')) AND (expires_at IS NULL OR expires_at > ?)
	ORDER BY seq LIMIT 1`

// insertUnlessDuplicateSQL inserts a new memory (memoryArgs, then
// dedupArgs) unless dedupSQL finds the memory it folds into, and returns
// its id when it inserted: no row means a duplicate stands.
var insertUnlessDuplicateSQL = `INSERT INTO memories (` + writeColumns + `)
	SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
	?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
	WHERE NOT EXISTS (` + strings.TrimSuffix(dedupSQL, "\n\tORDER BY seq LIMIT 1") + `) RETURNING id`

// dedupArgs are dedupSQL's arguments for the new memory m.
func dedupArgs(m *memgate.Memory) []any {
	return []any{m.Tenant, m.Principal, string(m.Kind), m.DedupKey, m.Agent, m.Conversation, m.Key, string(m.Source), string(m.Status), m.CreatedAt.UTC()}
}

// foldSQL records one more sighting of a memory. Neither version nor content
// changes: a concurrent Update of the memory is not made to conflict.
const foldSQL = `UPDATE memories SET seen_count = seen_count + 1, updated_at = ? WHERE tenant = ? AND id = ?`

// populationSQL is the one predicate retention counts and evicts with: the
// active or pending memories of one partition, agent, kind and source,
// written exactly as memories_retention's WHERE clause so the eviction
// reads that index. The populations triggers of both schemas count with
// the same status test. The source makes each writer class its own
// population: a write evicts only memories of the source it claims, so an
// agent's flood (assistant, tool) never evicts what a person (user) or an
// admin (system) said, and a key that may claim a source could supersede
// every memory its writes may evict.
const populationSQL = `tenant = ? AND principal = ? AND agent = ? AND kind = ? AND source = ? AND status IN ('active', 'pending')`

const (
	// populationCountSQL reads the live count the populations triggers
	// keep instead of counting the population each time (no row: nobody
	// of that population was ever counted, so 0).
	populationCountSQL = `SELECT n FROM populations WHERE tenant = ? AND principal = ? AND agent = ? AND kind = ? AND source = ?`
	// evictSQL's limit is how far the population is over its cap: 1
	// after a remember, more after a batch or a group commit. SQLite
	// plans a bare "LIMIT ?" for the value bound when it was compiled,
	// and compiles the statement again (its triggers included) whenever
	// a new value crosses between 0 or 1 and the rest: on a cap, a
	// remember in two re-prepared the eviction, 7 % of the server's CPU
	// in bench/load's remember phase (BENCHMARKS.md). A cast is not
	// planned on; the plan is the same for every limit.
	evictSQL = `DELETE FROM memories WHERE tenant = ? AND id IN (
		SELECT id FROM memories WHERE ` + populationSQL + ` ORDER BY seq LIMIT CAST(? AS BIGINT))
		RETURNING seq, id`
)

// keyHolderSQL finds the active memory that has a key in a key space
// (tenant, principal, agent, conversation, key, source): the unique index
// memories_key. Each source is its own key space: a keyed write replaces
// only the memory of the source it claims that has the key, one its
// writer may claim and so could itself have superseded; a memory of
// another source with the same key (a person's, for an agent's write) is
// neither replaced nor named.
const keyHolderSQL = `SELECT id, sensitivity FROM memories WHERE tenant = ? AND principal = ? AND agent = ? AND conversation = ?
	AND key = ? AND source = ? AND key <> '' AND status = 'active'`

// keyHolder returns the id and sensitivity of the active memory with m's
// key in m's key space, or "".
func keyHolder(ctx context.Context, q Querier, m *memgate.Memory) (string, memgate.Sensitivity, error) {
	var id, sens string
	err := q.QueryRow(ctx, keyHolderSQL, m.Tenant, m.Principal, m.Agent, m.Conversation, m.Key, string(m.Source)).Scan(&id, &sens)
	if errors.Is(err, ErrNoRows) {
		return "", "", nil
	}
	return id, memgate.Sensitivity(sens), err
}

// keyLock names the decision about a key in m's key space.
func keyLock(m *memgate.Memory) []string {
	return []string{"key", m.Tenant, m.Principal, m.Agent, m.Conversation, m.Key, string(m.Source)}
}

// population is one (tenant, principal, agent, kind, source) a retention
// cap applies to: each writer's agent (or the principal-wide level) and
// each source is its own population, so one writer class never evicts
// another's memories.
type population struct {
	tenant, principal, agent string
	kind                     memgate.Kind
	source                   memgate.Source
}

// Remember implements store.Store, in one transaction.
//
// Concurrency: the transaction first locks, in order, the decision about
// each (tenant, principal, kind) it writes (Driver.Lock). That triple is
// the unit of the dedup predicate (same kind in the partition) and holds
// every retention population Remember counts by reading first (agent and
// source only narrow it). Concurrent calls on one population queue on the lock, and
// each sees the memory the previous call inserted and folds into it, and
// counts the population as that call left it; calls on other populations
// run in parallel. A retry of the same request writes the same
// population, so its replay sees whether the earlier call committed.
//
// Inside the transaction, each input is looked up for dedup (seeing the
// inputs inserted before it), then inserted or folded; every memory that
// stands for an input is read back, unless the call inserted it and nothing
// in the call changed it since (asStored); then every population written
// is brought down to its cap. Memories[i] is the memory as stored (a copy;
// the inputs are not modified), so it carries the stored seen_count and
// defaults; a memory evicted by the same call is reported as it stood
// before the eviction.
func (s *Store) Remember(ctx context.Context, ms []*memgate.Memory, caps map[memgate.Kind]int, keys ...store.IdempotencyKey) (*store.WriteResult, error) {
	return s.RememberAudited(ctx, ms, caps, nil, keys...)
}

// RememberAudited implements store.AuditedRememberer: Remember, with the
// events audit returns for the result appended in the same transaction
// (none when audit is nil).
func (s *Store) RememberAudited(ctx context.Context, ms []*memgate.Memory, caps map[memgate.Kind]int, audit func(*store.WriteResult) []store.AuditEvent, keys ...store.IdempotencyKey) (*store.WriteResult, error) {
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
		return &store.WriteResult{Memories: []*memgate.Memory{}, Deduplicated: []bool{}, Replayed: []bool{}, Superseded: []string{}, Evicted: []store.Ref{}}, nil
	}
	var pops []population
	var locks [][]string
	for _, m := range ms {
		if p := (population{m.Tenant, m.Principal, m.Agent, m.Kind, m.Source}); !slices.Contains(pops, p) {
			pops = append(pops, p)
		}
		ls := [][]string{{"population", m.Tenant, m.Principal, string(m.Kind)}}
		if m.Key != "" {
			ls = append(ls, keyLock(m))
		}
		for _, l := range ls {
			if !slices.ContainsFunc(locks, func(k []string) bool { return slices.Equal(k, l) }) {
				locks = append(locks, l)
			}
		}
	}

	return write(ctx, s, "remember", func(q Querier) (*store.WriteResult, error) {
		res := &store.WriteResult{
			Memories:     make([]*memgate.Memory, len(ms)),
			Deduplicated: make([]bool, len(ms)),
			Replayed:     make([]bool, len(ms)),
			Superseded:   make([]string, len(ms)),
			Evicted:      []store.Ref{},
		}
		if err := s.d.Lock(ctx, q, locks...); err != nil {
			return nil, err
		}
		standing := make([]string, len(ms))          // id of the memory that stands for each input
		inserted := make([]*memgate.Memory, len(ms)) // the memory input i inserted, as bound
		var err error
		for i, m := range ms {
			key := store.IdempotencyKeyAt(keys, i)
			if key.Key != "" {
				id, err := replay(ctx, q, m, key, i, len(ms))
				if err != nil {
					return nil, err
				}
				if id != "" {
					standing[i], res.Replayed[i] = id, true
					continue
				}
			}
			if m.DedupKey != "" && m.Key == "" && s.dl.Remote {
				// The common case in one round trip: insert unless a
				// duplicate stands.
				var id string
				switch err := q.QueryRow(ctx, insertUnlessDuplicateSQL, append(slices.Clip(rows[i]), dedupArgs(m)...)...).Scan(&id); {
				case err == nil:
					standing[i], inserted[i] = m.ID, m
				case !errors.Is(err, ErrNoRows):
					return nil, err
				}
			}
			if m.DedupKey != "" && standing[i] == "" {
				var id string
				switch err := q.QueryRow(ctx, dedupSQL, dedupArgs(m)...).Scan(&id); {
				case err == nil:
					if _, err := q.Exec(ctx, foldSQL, m.UpdatedAt.UTC(), m.Tenant, id); err != nil {
						return nil, err
					}
					standing[i], res.Deduplicated[i] = id, true
				case !errors.Is(err, ErrNoRows):
					return nil, err
				}
			}
			if standing[i] == "" {
				args, as := rows[i], m
				if m.Key != "" && (m.Status == memgate.StatusActive || m.Status == memgate.StatusPending) {
					// A revoked or superseded memory (an import's history)
					// takes no key from the memory that has it.
					if args, as, res.Superseded[i], err = s.takeKey(ctx, q, m, args); err != nil {
						return nil, store.ItemError(i, len(ms), err)
					}
				}
				if _, err := q.Exec(ctx, insertMemory, args...); err != nil {
					return nil, err
				}
				standing[i], inserted[i] = m.ID, as
			}
			if key.Key != "" {
				if err := record(ctx, q, m, key, standing[i], i, len(ms)); err != nil {
					return nil, err
				}
			}
		}

		// Answer before evicting: eviction only deletes, so what is read
		// now is the final state of every memory that survives it.
		if err := answer(ctx, q, ms, standing, inserted, res); err != nil {
			return nil, err
		}
		for _, p := range pops {
			if limit := caps[p.kind]; limit > 0 {
				evicted, err := evict(ctx, q, p, limit)
				if err != nil {
					return nil, err
				}
				res.Evicted = append(res.Evicted, evicted...)
			}
		}
		if audit != nil {
			if evs := audit(res); len(evs) > 0 {
				if err := s.appendWriteAudit(ctx, q, evs); err != nil {
					return nil, err
				}
			}
		}
		return res, nil
	})
}

// takeKey makes way for the keyed memory m, about to be inserted with
// args: the active memory that has its key in its key space, if any, is
// superseded by m when m is active (first, so that the unique index never
// sees two), or named as the memory m supersedes on approval when m is
// held. It returns the arguments to insert m with (Supersedes set), the
// memory they are the arguments of (m, or a copy with Supersedes set) and
// the id of the memory m superseded ("" for none, or held). A restricted
// holder and a writer that may not read it (m.KeyHidesRestricted) is
// store.ErrKeyHeld, which names nothing.
func (s *Store) takeKey(ctx context.Context, q Querier, m *memgate.Memory, args []any) ([]any, *memgate.Memory, string, error) {
	holder, sens, err := keyHolder(ctx, q, m)
	if err != nil || holder == "" {
		return args, m, "", err
	}
	if m.KeyHidesRestricted && sens == memgate.SensitivityRestricted {
		return nil, nil, "", store.ErrKeyHeld()
	}
	if m.Supersedes != "" && m.Supersedes != holder {
		// A held new version of another memory (Supersede, pending),
		// taking that memory's key in a key space where a third memory
		// has it: not the one the caller named, so neither replaced nor
		// named, as Supersede refuses it when the version is active.
		return nil, nil, "", store.ErrKeyHeld()
	}
	superseded := ""
	if m.Status == memgate.StatusActive {
		if _, err := q.Exec(ctx, supersedeSQL, m.ID, m.CreatedAt.UTC(), m.CreatedBy, m.Tenant, m.Principal, holder); err != nil {
			return nil, nil, "", err
		}
		superseded = holder
	}
	n := m.Clone()
	n.Supersedes = holder
	args, err = memoryArgs(n)
	return args, n, superseded, err
}

// answer sets res.Memories[i] to the memory standing[i] of ms[i] as
// stored. A memory input i inserted (inserted[i]) is answered from what
// was bound (asStored), without reading it back, when no other input of
// the call stands for it (a later duplicate folded into it: its seen count
// and update time moved) or superseded it (a later input with its key),
// and when the store keeps its times exactly; every other memory is read
// back (readBack). The read-back was about a sixth of the writer's
// statement time in bench/load's remember phase: a memory's whole row,
// its vector included, decoded again.
func answer(ctx context.Context, q Querier, ms []*memgate.Memory, standing []string, inserted []*memgate.Memory, res *store.WriteResult) error {
	// How many inputs each memory stands for, and the memories superseded,
	// counted once: a batch (RememberBatch, an import) holds hundreds of
	// inputs, and this runs in the writer's transaction.
	stands := make(map[string]int, len(ms))
	for _, id := range standing {
		stands[id]++
	}
	for _, id := range res.Superseded {
		if id != "" {
			stands[id] = -1 // never answered from what was bound
		}
	}
	var read []int // inputs to read back
	for i := range ms {
		if m := inserted[i]; m != nil && stands[m.ID] == 1 {
			if res.Memories[i] = asStored(m); res.Memories[i] != nil {
				continue
			}
		}
		read = append(read, i)
	}
	if len(read) == 0 {
		return nil
	}
	sub := make([]*memgate.Memory, len(read))
	ids := make([]string, len(read))
	for j, i := range read {
		sub[j], ids[j] = ms[i], standing[i]
	}
	out := make([]*memgate.Memory, len(read))
	if err := readBack(ctx, q, sub, ids, out); err != nil {
		return err
	}
	for j, i := range read {
		res.Memories[i] = out[j]
	}
	return nil
}

// readBack sets out[i] to the memory standing[i] of ms[i]'s tenant, as
// stored, one query per tenant; each input gets its own copy.
func readBack(ctx context.Context, q Querier, ms []*memgate.Memory, standing []string, out []*memgate.Memory) error {
	byTenant := map[string][]string{}
	for i, m := range ms {
		byTenant[m.Tenant] = append(byTenant[m.Tenant], standing[i])
	}
	read := map[string]map[string]*memgate.Memory{}
	for tenant, ids := range byTenant {
		got, err := readByID(ctx, q, tenant, slices.Compact(slices.Sorted(slices.Values(ids))))
		if err != nil {
			return err
		}
		read[tenant] = got
	}
	for i, m := range ms {
		got, ok := read[m.Tenant][standing[i]]
		if !ok {
			return fmt.Errorf("remember: memory %s is missing from the read-back", standing[i])
		}
		if slices.Contains(out[:i], got) {
			got = got.Clone()
		}
		out[i] = got
	}
	return nil
}

const (
	lookupIdempotencySQL = `SELECT k.request_sha256, k.memory_id, m.id IS NOT NULL FROM idempotency_keys k
		LEFT JOIN memories m ON m.tenant = k.tenant AND m.id = k.memory_id
		WHERE k.tenant = ? AND k.principal = ? AND k.agent = ? AND k.conversation = ? AND k.key = ?`
	// A record another call wrote since replay read (another population's
	// lock, or none taken) is left as it is: the write conflicts.
	recordIdempotencySQL = `INSERT INTO idempotency_keys
		(tenant, principal, agent, conversation, key, request_sha256, memory_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	pruneIdempotencySQL = `DELETE FROM idempotency_keys WHERE (tenant, principal, agent, conversation, key) IN (
		SELECT tenant, principal, agent, conversation, key FROM idempotency_keys
		WHERE created_at < ? ORDER BY created_at LIMIT ?`
)

// replay looks up the record of key in m's partition: the id of the memory
// an earlier call stored for the same request, "" when there is none, or
// the conflict of input i of n (another request, or a deleted memory).
func replay(ctx context.Context, q Querier, m *memgate.Memory, key store.IdempotencyKey, i, n int) (string, error) {
	var hash, id string
	var exists bool
	err := q.QueryRow(ctx, lookupIdempotencySQL, m.Tenant, m.Principal, m.Agent, m.Conversation, key.Key).Scan(&hash, &id, &exists)
	switch {
	case errors.Is(err, ErrNoRows):
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

// record writes the record (m's partition, key) → id; a record written
// meanwhile by another call is input i's conflict.
func record(ctx context.Context, q Querier, m *memgate.Memory, key store.IdempotencyKey, id string, i, n int) error {
	wrote, err := q.Exec(ctx, recordIdempotencySQL, m.Tenant, m.Principal, m.Agent, m.Conversation,
		key.Key, key.RequestSHA256, id, time.Now().UTC())
	if err == nil && wrote == 0 {
		return store.IdempotencyConflict(i, n, store.IdempotencyOtherRequest)
	}
	return err
}

// evict deletes the oldest memories of p until at most limit remain, and
// returns them oldest first.
func evict(ctx context.Context, q Querier, p population, limit int) ([]store.Ref, error) {
	var n int64
	if err := q.QueryRow(ctx, populationCountSQL, p.tenant, p.principal, p.agent, string(p.kind), string(p.source)).Scan(&n); err != nil && !errors.Is(err, ErrNoRows) {
		return nil, err
	}
	if n <= int64(limit) {
		return nil, nil
	}
	gone, err := collect(func(r Rows) (seqRef, error) {
		g := seqRef{ref: store.Ref{Tenant: p.tenant, Principal: p.principal, Kind: p.kind}}
		return g, r.Scan(&g.seq, &g.ref.ID)
	})(q.Query(ctx, evictSQL, p.tenant, p.tenant, p.principal, p.agent, string(p.kind), string(p.source), n-int64(limit)))
	if err != nil {
		return nil, err
	}
	refs := inSeqOrder(gone)
	return refs, dropIdempotency(ctx, q, refs)
}

// seqRef is a deleted memory and its insertion order.
type seqRef struct {
	seq int64
	ref store.Ref
}

// inSeqOrder returns the refs in insertion order: RETURNING yields rows in
// no promised order.
func inSeqOrder(gone []seqRef) []store.Ref {
	slices.SortFunc(gone, func(a, b seqRef) int { return cmp.Compare(a.seq, b.seq) })
	refs := make([]store.Ref, len(gone))
	for i, g := range gone {
		refs[i] = g.ref
	}
	return refs
}

// FindDuplicates implements store.Store. Expiry is judged at each memory's
// CreatedAt, as Remember judges it. The lookups go in one batch where the
// driver can send one.
func (s *Store) FindDuplicates(ctx context.Context, ms []*memgate.Memory) ([]string, error) {
	for _, m := range ms {
		if m != nil && m.DedupKey != "" {
			if err := m.Scope().Validate(); err != nil {
				return nil, err
			}
		}
	}
	return read(ctx, s, "find duplicates", func(q Querier) ([]string, error) {
		out := make([]string, len(ms))
		var qs []BatchQuery
		for i, m := range ms {
			if m == nil || m.DedupKey == "" {
				continue
			}
			qs = append(qs, BatchQuery{SQL: dedupSQL, Args: dedupArgs(m), Scan: func(r Row) error {
				if err := r.Scan(&out[i]); !errors.Is(err, ErrNoRows) {
					return err
				}
				return nil
			}})
		}
		return out, RowBatch(ctx, q, qs)
	})
}

// sweepSQL deletes the memories that expired first, at most a limit of
// them, reading memories_expiry in order; Dialect.SkipLocked ends the
// sub-SELECT.
const sweepSQL = `DELETE FROM memories WHERE (tenant, id) IN (
	SELECT tenant, id FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ?
	ORDER BY expires_at, seq LIMIT ?%s)
	RETURNING seq, tenant, principal, id, kind`

// DeleteExpired implements store.Store: whatever the status, earliest
// expiry first. The refs are returned in insertion order. A limit of zero or
// less deletes nothing.
func (s *Store) DeleteExpired(ctx context.Context, before time.Time, limit int) ([]store.Ref, error) {
	if limit <= 0 {
		return nil, nil
	}
	return write(ctx, s, "delete expired", func(q Querier) ([]store.Ref, error) {
		gone, err := collect(func(r Rows) (seqRef, error) {
			var g seqRef
			var kind string
			err := r.Scan(&g.seq, &g.ref.Tenant, &g.ref.Principal, &g.ref.ID, &kind)
			g.ref.Kind = memgate.Kind(kind)
			return g, err
		})(q.Query(ctx, fmt.Sprintf(sweepSQL, s.dl.SkipLocked), before.UTC(), limit))
		if err != nil {
			return nil, err
		}
		refs := inSeqOrder(gone)
		return refs, dropIdempotency(ctx, q, refs)
	})
}

// PruneIdempotency implements store.Store: the oldest records first.
func (s *Store) PruneIdempotency(ctx context.Context, before time.Time, limit int) (int64, error) {
	return s.prune(ctx, "prune idempotency", pruneIdempotencySQL, before, limit)
}

// prune runs a pruning DELETE whose arguments are a time (records made
// before it go) and a limit, and whose sub-SELECT is left open for
// Dialect.SkipLocked, in a write transaction, and returns how many rows it
// deleted; a limit of 0 or less deletes nothing.
func (s *Store) prune(ctx context.Context, op, query string, before time.Time, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	return write(ctx, s, op, func(q Querier) (int64, error) {
		return q.Exec(ctx, query+s.dl.SkipLocked+")", before.UTC(), limit)
	})
}
