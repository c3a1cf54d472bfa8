package sqlstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// Insert implements store.Store.
func (s *Store) Insert(ctx context.Context, ms []*memgate.Memory) error {
	rows := make([][]any, len(ms))
	for i, m := range ms {
		if err := store.CheckOwner(m); err != nil {
			return err
		}
		args, err := memoryArgs(m)
		if err != nil {
			return err
		}
		rows[i] = args
	}
	if len(ms) == 0 {
		return nil
	}
	return s.d.Write(ctx, "insert", func(q Querier) error {
		for _, args := range rows {
			if _, err := q.Exec(ctx, insertMemory, args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, sc memgate.Scope, id string) (*memgate.Memory, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	return read(ctx, s, "get", func(q Querier) (*memgate.Memory, error) {
		return s.getOne(ctx, q, sc, id, false)
	})
}

// GetByKey implements store.Store: the unique index memories_key, at
// exactly the scope's level, one source's holder.
func (s *Store) GetByKey(ctx context.Context, sc memgate.Scope, key string, prefer ...memgate.Source) (*memgate.Memory, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if sc.AllPrincipals {
		return nil, memgate.FieldError("principal", "is required to look a key up")
	}
	if err := memgate.CheckMemoryKey("key", key); err != nil {
		return nil, err
	}
	var b Query
	b.SQL(selectMemory, " WHERE tenant = ", b.Arg(sc.Tenant), " AND principal = ", b.Arg(sc.Principal),
		" AND agent = ", b.Arg(sc.Agent), " AND conversation = ", b.Arg(sc.Conversation),
		" AND key = ", b.Arg(key), " AND key <> '' AND status = 'active'")
	if sc.HideRestricted {
		b.SQL(" AND sensitivity = 'standard'")
	}
	// One holder per source (key space): the preferred sources first, in
	// their order, then the others in memgate.Sources order.
	b.SQL(" ORDER BY CASE source")
	rank := 0
	for _, src := range slices.Concat(prefer, memgate.Sources) {
		b.SQL(" WHEN ", b.Arg(string(src)), fmt.Sprintf(" THEN %d", rank))
		rank++
	}
	b.SQL(fmt.Sprintf(" ELSE %d END LIMIT 1", rank))
	return read(ctx, s, "get by key", func(q Querier) (*memgate.Memory, error) {
		m, _, err := scanMemory(q.QueryRow(ctx, b.String(), b.Args()...), false)
		if errors.Is(err, ErrNoRows) {
			return nil, memgate.ErrNotFound()
		}
		return m, err
	})
}

// List implements store.Store.
func (s *Store) List(ctx context.Context, sc memgate.Scope, f store.Filter) (*store.Page, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	before, err := store.DecodeCursor(f.Cursor)
	if err != nil {
		return nil, err
	}
	if len(f.Statuses) > 0 && f.Now.IsZero() {
		return nil, memgate.FieldError("now", "is required when filtering by status")
	}
	limit, clamped := store.ClampLimit(f.Limit)

	var b Query
	b.SQL("SELECT seq, ", memoryColumns, " FROM memories WHERE ").Scope(sc, "")
	if before > 0 {
		b.SQL(" AND seq < ", b.Arg(before))
	}
	if len(f.Kinds) > 0 {
		In(b.SQL(" AND "), "kind", f.Kinds)
	}
	if len(f.Sources) > 0 {
		In(b.SQL(" AND "), "source", f.Sources)
	}
	if len(f.Statuses) > 0 {
		now := f.Now.UTC()
		var ors []string
		for _, st := range f.Statuses {
			switch st {
			case memgate.StatusActive:
				ors = append(ors, "(status = 'active' AND (expires_at IS NULL OR expires_at > "+b.Arg(now)+"))")
			case memgate.StatusExpired:
				ors = append(ors, "(status = 'active' AND expires_at <= "+b.Arg(now)+")")
			default:
				ors = append(ors, "status = "+b.Arg(string(st)))
			}
		}
		b.SQL(" AND (", strings.Join(ors, " OR "), ")")
	}
	if f.Text != "" {
		b.SQL(" AND ", s.dl.Contains(&b, "content", f.Text))
	}
	// One row more than the page tells whether there is a next page.
	b.SQL(" ORDER BY seq DESC LIMIT ", b.Arg(limit+1))

	return read(ctx, s, "list", func(q Querier) (*store.Page, error) {
		rows, err := q.Query(ctx, b.String(), b.Args()...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		page := &store.Page{Memories: []*memgate.Memory{}, Limit: limit, Clamped: clamped}
		var lastSeq int64
		for rows.Next() {
			m, seq, err := scanMemory(rows, true)
			if err != nil {
				return nil, err
			}
			if len(page.Memories) == limit {
				page.NextCursor = store.EncodeCursor(lastSeq)
				break
			}
			page.Memories = append(page.Memories, m)
			lastSeq = seq
		}
		return page, rows.Err()
	})
}

// Update implements store.Store. It writes the dedup key with the content
// (the engine derives one from the other); seen_count and feedback are not
// the caller's to set and stay as they are. A memory not active or pending
// in m keeps its stored status (the statement's WHERE refuses to update
// one that is not, whatever m says).
func (s *Store) Update(ctx context.Context, sc memgate.Scope, m *memgate.Memory, expectedVersion int64) (*memgate.Memory, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, memgate.FieldError("memory", "is required")
	}
	md, err := store.EncodeMetadata(m.Metadata)
	if err != nil {
		return nil, err
	}
	provider, model, dim, vector := embeddingArgs(m.Embedding)
	terms, termsVersion := store.ContentTerms(m.Content)
	var status, statusReason any
	if m.Status == memgate.StatusActive || m.Status == memgate.StatusPending {
		status, statusReason = string(m.Status), m.StatusReason
	}
	var b Query
	b.SQL(`UPDATE memories SET content = `, b.Arg(m.Content),
		`, content_sha256 = `, b.Arg(m.ContentSHA256),
		`, index_terms = `, b.Arg(terms),
		`, terms_version = `, b.Arg(termsVersion),
		`, reason = `, b.Arg(m.Reason),
		`, metadata = `, b.Arg(md),
		`, kind = `, b.Arg(string(m.Kind)),
		`, sensitivity = `, b.Arg(string(m.Sensitivity)),
		`, expires_at = `, b.Arg(utc(m.ExpiresAt)),
		`, valid_from = `, b.Arg(utc(m.ValidFrom)),
		`, valid_until = `, b.Arg(utc(m.ValidUntil)),
		`, embedding_provider = `, b.Arg(provider),
		`, embedding_model = `, b.Arg(model),
		`, embedding_dim = `, b.Arg(dim),
		`, embedding_vector = `, b.Arg(vector),
		`, dedup_key = `, b.Arg(m.DedupKey),
		`, updated_at = `, b.Arg(m.UpdatedAt.UTC()),
		`, status = COALESCE(`, b.Arg(status), `, status)`,
		`, status_reason = COALESCE(`, b.Arg(statusReason), `, status_reason)`,
		`, flags = `, b.Arg(flagsArg(m.Flags)),
		`, updated_by = COALESCE(NULLIF(`, b.Arg(m.UpdatedBy), `, ''), updated_by)`,
		`, version = version + 1 WHERE `).Scope(sc, "")
	b.SQL(` AND id = `, b.Arg(m.ID), ` AND version = `, b.Arg(expectedVersion),
		` AND status IN ('active', 'pending') RETURNING `, memoryColumns)

	return write(ctx, s, "update", func(q Querier) (*memgate.Memory, error) {
		out, _, err := scanMemory(q.QueryRow(ctx, b.String(), b.Args()...), false)
		if !errors.Is(err, ErrNoRows) {
			return out, err
		}
		// Same transaction, so the answer matches the failed UPDATE.
		cur, err := s.getOne(ctx, q, sc, m.ID, false)
		if err != nil {
			return nil, err
		}
		return nil, store.UpdateConflict(cur, expectedVersion)
	})
}

// setStatusSQL moves one memory, by (tenant, id), to a status.
const setStatusSQL = `UPDATE memories SET status = ?, status_reason = ?, updated_at = ?,
	updated_by = COALESCE(NULLIF(?, ''), updated_by), version = version + 1
	WHERE tenant = ? AND id = ? RETURNING ` + memoryColumns

// SetStatus implements store.Store. The memory is read (and locked) first:
// the change is decided on what it is now.
func (s *Store) SetStatus(ctx context.Context, sc memgate.Scope, id string, ch store.StatusChange) (*memgate.Memory, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if _, err := memgate.ParseStatus(string(ch.To)); err != nil {
		return nil, err
	}
	return write(ctx, s, "set status", func(q Querier) (*memgate.Memory, error) {
		cur, err := s.getOne(ctx, q, sc, id, true)
		if err != nil {
			return nil, err
		}
		if ch.Version != 0 && cur.Version != ch.Version {
			return nil, store.VersionConflict(cur, ch.Version)
		}
		if cur.Status == ch.To {
			return cur, nil
		}
		if !slices.Contains(ch.From, cur.Status) {
			return nil, memgate.Errorf(memgate.ECONFLICT, "memory is %s; it cannot become %s", cur.Status, ch.To)
		}
		out, _, err := scanMemory(q.QueryRow(ctx, setStatusSQL, string(ch.To), ch.Reason, ch.At.UTC(), ch.By, cur.Tenant, cur.ID), false)
		return out, err
	})
}

// supersedeSQL marks one active memory of a principal superseded by
// another; no row when it is not active (or not the principal's).
const supersedeSQL = `UPDATE memories SET status = 'superseded', superseded_by = ?, updated_at = ?,
	updated_by = COALESCE(NULLIF(?, ''), updated_by), version = version + 1
	WHERE tenant = ? AND principal = ? AND id = ? AND status = 'active' RETURNING ` + memoryColumns

// Promote implements store.Store. The pending memory is read and locked
// while the approval is decided (and, keyed, the decision about its key);
// the memory it replaces is superseded only if it is still active (the
// UPDATE re-checks that).
func (s *Store) Promote(ctx context.Context, sc memgate.Scope, id string, p store.Promotion) (approved, superseded *memgate.Memory, err error) {
	if err := sc.Validate(); err != nil {
		return nil, nil, err
	}
	err = s.d.Write(ctx, "promote", func(q Querier) error {
		approved, superseded = nil, nil
		cur, err := s.getOne(ctx, q, sc, id, true)
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
		if cur.Key != "" {
			if err := s.d.Lock(ctx, q, keyLock(cur)); err != nil {
				return err
			}
		}
		// What the approval supersedes goes first (the unique index of
		// keys never sees two active): for a keyed memory, whichever
		// memory has its key in its key space now (the one it was held
		// against, or a newer one: one chain either way); otherwise, or
		// when none has (a new version in another source or level than
		// the memory it names), the memory Supersedes names, which is the principal's, in whatever
		// agent or conversation (the link was checked within the writer's
		// scope when the pending memory was stored), if still active.
		target := cur.Supersedes
		if cur.Key != "" {
			holder, _, err := keyHolder(ctx, q, cur)
			if err != nil {
				return err
			}
			if holder != "" {
				target = holder
			}
		}
		if target != "" {
			superseded, _, err = scanMemory(q.QueryRow(ctx, supersedeSQL, cur.ID, p.At.UTC(), p.By, cur.Tenant, cur.Principal, target), false)
			if errors.Is(err, ErrNoRows) {
				superseded, err = nil, nil
			}
			if err != nil {
				return err
			}
		}
		approved, _, err = scanMemory(q.QueryRow(ctx, setStatusSQL, string(memgate.StatusActive), "approved", p.At.UTC(), p.By, cur.Tenant, cur.ID), false)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return approved, superseded, nil
}

// Supersede implements store.Store. With an idempotency key, the
// transaction first locks the key's decision, so concurrent calls with it
// queue and each sees whether the one before wrote its record.
func (s *Store) Supersede(ctx context.Context, sc memgate.Scope, oldID string, next *memgate.Memory, at time.Time, keys ...store.IdempotencyKey) (*store.SupersedeResult, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if err := store.CheckSuccessor(oldID, next); err != nil {
		return nil, err
	}
	if err := store.CheckIdempotencyKeys([]*memgate.Memory{next}, keys); err != nil {
		return nil, err
	}
	key := store.IdempotencyKeyAt(keys, 0)
	nextArgs, err := memoryArgs(next)
	if err != nil {
		return nil, err
	}
	return write(ctx, s, "supersede", func(q Querier) (*store.SupersedeResult, error) {
		if key.Key != "" {
			if err := s.d.Lock(ctx, q, []string{"idempotency", next.Tenant, next.Principal, next.Agent, next.Conversation, key.Key}); err != nil {
				return nil, err
			}
			id, err := replay(ctx, q, next, key, 0, 1)
			if err != nil {
				return nil, err
			}
			if id != "" {
				m, _, err := scanMemory(q.QueryRow(ctx, selectMemory+" WHERE tenant = ? AND id = ?", next.Tenant, id), false)
				return &store.SupersedeResult{Next: m, Replayed: true}, err
			}
		}
		old, err := s.getOne(ctx, q, sc, oldID, true)
		if err != nil {
			return nil, err
		}
		if err := store.CheckSupersede(old, next); err != nil {
			return nil, err
		}
		args := nextArgs
		if old.Key != "" || next.Key != "" {
			// A new version keeps its memory's key (and takes it at its
			// own level); a key of its own is not a version of old.
			if next.Key != "" && next.Key != old.Key {
				return nil, memgate.FieldError("key", "a new version keeps the key of the memory it supersedes")
			}
			n := next.Clone()
			n.Key = old.Key
			if args, err = memoryArgs(n); err != nil {
				return nil, err
			}
			if n.Source != old.Source || n.Agent != old.Agent || n.Conversation != old.Conversation {
				// The new version takes the key in its own key space (its
				// source, at its level), where another memory may hold
				// it: that one is not what the caller asked to supersede.
				if err := s.d.Lock(ctx, q, keyLock(n)); err != nil {
					return nil, err
				}
				holder, _, err := keyHolder(ctx, q, n)
				if err != nil {
					return nil, err
				}
				if holder != "" {
					return nil, store.ErrKeyHeld()
				}
			}
		}
		// Old first: the unique index of keys never sees two active.
		res := &store.SupersedeResult{}
		if res.Old, _, err = scanMemory(q.QueryRow(ctx, supersedeSQL, next.ID, at.UTC(), next.CreatedBy, old.Tenant, old.Principal, old.ID), false); err != nil {
			return nil, err
		}
		if res.Next, _, err = scanMemory(q.QueryRow(ctx, insertMemory+" RETURNING "+memoryColumns, args...), false); err != nil {
			return nil, err
		}
		if key.Key != "" {
			if err := record(ctx, q, next, key, next.ID, 0, 1); err != nil {
				return nil, err
			}
		}
		return res, nil
	})
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, sc memgate.Scope, id string) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	var b Query
	b.SQL("DELETE FROM memories WHERE ").Scope(sc, "").SQL(" AND id = ", b.Arg(id), " RETURNING principal")
	err := s.d.Write(ctx, "delete", func(q Querier) error {
		var principal string
		err := q.QueryRow(ctx, b.String(), b.Args()...).Scan(&principal)
		if errors.Is(err, ErrNoRows) {
			return memgate.ErrNotFound()
		}
		if err != nil {
			return err
		}
		return dropIdempotency(ctx, q, []store.Ref{{Tenant: sc.Tenant, Principal: principal, ID: id}})
	})
	if err != nil {
		return err
	}
	return s.d.Erase(ctx, "delete")
}

// dropIdempotency deletes the idempotency records that name the deleted
// memories: a record keeps the caller's key, the partition's agent and
// conversation and the SHA-256 of the request (which would confirm a
// guessed content), none of which may outlive the memory. One statement
// per tenant and chunk of ids, over the index on (tenant, memory_id).
func dropIdempotency(ctx context.Context, q Querier, gone []store.Ref) error {
	const chunk = 500
	byTenant := map[string][]any{}
	for _, r := range gone {
		byTenant[r.Tenant] = append(byTenant[r.Tenant], r.ID)
	}
	for tenant, ids := range byTenant {
		for len(ids) > 0 {
			n := min(len(ids), chunk)
			args := append([]any{tenant}, ids[:n]...)
			if _, err := q.Exec(ctx, dropIdempotencySQL(n), args...); err != nil {
				return err
			}
			ids = ids[n:]
		}
	}
	return nil
}

// dropIdempotencySQL deletes the records of a tenant naming any of n
// memory ids. The records are found in a subquery, where SQLite reads the
// (tenant, memory_id) index (for the DELETE itself it would walk the
// tenant's primary key range).
func dropIdempotencySQL(n int) string {
	return `DELETE FROM idempotency_keys WHERE (tenant, principal, agent, conversation, key) IN (
		SELECT tenant, principal, agent, conversation, key FROM idempotency_keys
		WHERE tenant = ? AND memory_id IN (` + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + "))"
}

// forgetSQL deletes, in one transaction, every row that names a principal
// (two arguments each: tenant and principal) after its memories: the
// idempotency records, the retention counters, the change tombstones and
// the partition's head, whose sequence the tenant's high mark keeps (so a
// partition written again starts above every number a reader has seen).
var forgetSQL = []string{
	"DELETE FROM idempotency_keys WHERE tenant = ? AND principal = ?",
	"DELETE FROM populations WHERE tenant = ? AND principal = ?",
	`INSERT INTO tenant_heads (tenant, high)
		SELECT tenant, head FROM partition_heads WHERE tenant = ? AND principal = ?
		ON CONFLICT (tenant) DO UPDATE SET high = CASE WHEN excluded.high > tenant_heads.high
			THEN excluded.high ELSE tenant_heads.high END`,
	"DELETE FROM memory_tombstones WHERE tenant = ? AND principal = ?",
	"DELETE FROM partition_heads WHERE tenant = ? AND principal = ?",
}

// Forget implements store.Store. The memories table holds every row of the
// principal's memories (vectors included), so one DELETE erases them; the
// rows that name the principal go in the same transaction (forgetSQL), and
// the audit log's events take the pseudonym. Driver.Erase then removes
// what the database's files still hold.
func (s *Store) Forget(ctx context.Context, tenant, principal, pseudonym string) (int64, error) {
	if err := (memgate.Scope{Tenant: tenant, Principal: principal}).Validate(); err != nil {
		return 0, err
	}
	if err := store.CheckPseudonym(pseudonym); err != nil {
		return 0, err
	}
	n, err := write(ctx, s, "forget", func(q Querier) (int64, error) {
		n, err := q.Exec(ctx, "DELETE FROM memories WHERE tenant = ? AND principal = ?", tenant, principal)
		if err != nil {
			return 0, err
		}
		for _, stmt := range forgetSQL {
			if _, err := q.Exec(ctx, stmt, tenant, principal); err != nil {
				return 0, err
			}
		}
		return n, s.forgetAudit(ctx, q, tenant, principal, pseudonym)
	})
	if err != nil {
		return 0, err
	}
	return n, s.d.Erase(ctx, "forget")
}

// forgetAudit gives the principal's audit events the pseudonym, and each
// of their agents its store.AgentPseudonym. Events already under the
// pseudonym (forgotten before agents were) take their agents' too.
func (s *Store) forgetAudit(ctx context.Context, q Querier, tenant, principal, pseudonym string) error {
	var key []byte
	keyOnce := func() ([]byte, error) {
		if key != nil {
			return key, nil
		}
		var err error
		key, err = pseudonymKey(ctx, q)
		return key, err
	}
	// The events not yet drained, in the inboxes, as they are.
	if err := s.forgetInboxes(ctx, q, tenant, principal, pseudonym, keyOnce); err != nil {
		return err
	}
	agents, err := collect(scanString)(q.Query(ctx, `SELECT DISTINCT agent FROM audit_events
		WHERE tenant = ? AND principal IN (?, ?) AND agent <> '' AND agent NOT LIKE 'forgotten:%'`, tenant, principal, pseudonym))
	if err != nil {
		return err
	}
	if len(agents) > 0 {
		key, err := keyOnce()
		if err != nil {
			return err
		}
		for _, a := range agents {
			if _, err := q.Exec(ctx, "UPDATE audit_events SET principal = ?, agent = ? WHERE tenant = ? AND principal IN (?, ?) AND agent = ?",
				pseudonym, store.AgentPseudonym(key, pseudonym, a), tenant, principal, pseudonym, a); err != nil {
				return err
			}
		}
	}
	_, err = q.Exec(ctx, "UPDATE audit_events SET principal = ? WHERE tenant = ? AND principal = ?", pseudonym, tenant, principal)
	return err
}

// pseudonymKey reads the database's key in q's transaction, making it
// first if there is none.
func pseudonymKey(ctx context.Context, q Querier) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	if _, err := q.Exec(ctx, "INSERT INTO pseudonym_key (id, key) VALUES (1, ?) ON CONFLICT (id) DO NOTHING", fresh); err != nil {
		return nil, err
	}
	var key []byte
	err := q.QueryRow(ctx, "SELECT key FROM pseudonym_key WHERE id = 1").Scan(&key)
	return key, err
}

// PseudonymKey implements store.Store: made at the first call, in a write
// transaction (the primary key decides between concurrent ones), so every
// process agrees on it.
func (s *Store) PseudonymKey(ctx context.Context) ([]byte, error) {
	return write(ctx, s, "pseudonym key", func(q Querier) ([]byte, error) { return pseudonymKey(ctx, q) })
}

// Counts implements store.Store.
func (s *Store) Counts(ctx context.Context, sc memgate.Scope, now time.Time) ([]store.Count, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	var b Query
	st := "status"
	if !now.IsZero() {
		st = "CASE WHEN status = 'active' AND expires_at <= " + b.Arg(now.UTC()) + " THEN 'expired' ELSE status END"
	}
	b.SQL("SELECT principal, kind, ", st, " AS st, COUNT(*) FROM memories WHERE ").Scope(sc, "")
	b.SQL(" GROUP BY principal, kind, st ORDER BY principal, kind, st")
	return read(ctx, s, "counts", func(q Querier) ([]store.Count, error) {
		return collect(func(r Rows) (store.Count, error) {
			var c store.Count
			var kind, status string
			err := r.Scan(&c.Principal, &kind, &status, &c.N)
			c.Kind, c.Status = memgate.Kind(kind), memgate.Status(status)
			return c, err
		})(q.Query(ctx, b.String(), b.Args()...))
	})
}

// AddFeedback implements store.Store. Feedback is recorded on active and
// pending memories, the ones recall can still return (the same rule as
// Update); a revoked or superseded memory is a conflict. Neither the version
// nor updated_at changes: feedback is about the memory, not an edit of it,
// and must not make a concurrent Update conflict.
func (s *Store) AddFeedback(ctx context.Context, sc memgate.Scope, id string, value float64) (*memgate.Memory, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if err := store.CheckFeedback(value); err != nil {
		return nil, err
	}
	var b Query
	b.SQL(`UPDATE memories SET feedback_count = feedback_count + 1, feedback_sum = feedback_sum + CAST(`, b.Arg(value),
		` AS DOUBLE PRECISION) WHERE `).Scope(sc, "")
	b.SQL(` AND id = `, b.Arg(id), ` AND status IN ('active', 'pending') RETURNING `, memoryColumns)
	return write(ctx, s, "add feedback", func(q Querier) (*memgate.Memory, error) {
		out, _, err := scanMemory(q.QueryRow(ctx, b.String(), b.Args()...), false)
		if !errors.Is(err, ErrNoRows) {
			return out, err
		}
		// In scope but not updated: the status refused it. Out of scope or
		// missing: getOne answers not_found.
		cur, err := s.getOne(ctx, q, sc, id, false)
		if err != nil {
			return nil, err
		}
		return nil, memgate.Errorf(memgate.ECONFLICT, "memory is %s; feedback is recorded on active or pending memories only", cur.Status)
	})
}

// SetEmbedding implements store.Store: one UPDATE of the memory's row,
// guarded by tenant, id and content hash (re-checked under the row lock,
// so a concurrent content update wins), that writes the four embedding
// columns and nothing else: the change triggers see it, and the version
// and updated_at stay.
func (s *Store) SetEmbedding(ctx context.Context, tenant, id, contentSHA256 string, e *memgate.Embedding) (bool, error) {
	if err := store.CheckSetEmbedding(tenant, e); err != nil {
		return false, err
	}
	provider, model, dim, vector := embeddingArgs(e)
	return write(ctx, s, "set embedding", func(q Querier) (bool, error) {
		n, err := q.Exec(ctx, `UPDATE memories SET embedding_provider = ?, embedding_model = ?,
			embedding_dim = ?, embedding_vector = ? WHERE tenant = ? AND id = ? AND content_sha256 = ?`,
			provider, model, dim, vector, tenant, id, contentSHA256)
		return n == 1, err
	})
}
