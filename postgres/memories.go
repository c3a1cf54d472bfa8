package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// getOne reads the memory id within scope s; a row outside it is
// memgate.ErrNotFound, exactly like a missing one. lock adds FOR UPDATE
// (inside a write transaction).
func getOne(ctx context.Context, q querier, s memgate.Scope, id string, lock bool) (*memgate.Memory, error) {
	var b query
	b.sql("SELECT ", memoryColumns, " FROM memories WHERE ").scope(s, "").sql(" AND id = ", b.arg(id))
	if lock {
		b.sql(" FOR UPDATE")
	}
	m, _, err := scanMemory(q.QueryRow(ctx, b.String(), b.args...), false)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, memgate.ErrNotFound()
	}
	return m, err
}

// Insert implements store.Store. The rows go in one batch (one round trip)
// inside one transaction.
func (db *DB) Insert(ctx context.Context, ms []*memgate.Memory) error {
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
	return db.write(ctx, "insert", func(tx pgx.Tx) error {
		var b pgx.Batch
		for _, args := range rows {
			b.Queue(insertMemory, args...)
		}
		return tx.SendBatch(ctx, &b).Close()
	})
}

// Get implements store.Store.
func (db *DB) Get(ctx context.Context, s memgate.Scope, id string) (*memgate.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	m, err := getOne(ctx, r, s, id, false)
	if err != nil {
		return nil, interpretError(ctx, "get", err)
	}
	return m, nil
}

// List implements store.Store.
func (db *DB) List(ctx context.Context, s memgate.Scope, f store.Filter) (*store.Page, error) {
	if err := s.Validate(); err != nil {
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
	r, err := db.reader()
	if err != nil {
		return nil, err
	}

	var q query
	q.sql("SELECT seq, ", memoryColumns, " FROM memories WHERE ").scope(s, "")
	if before > 0 {
		q.sql(" AND seq < ", q.arg(before))
	}
	if len(f.Kinds) > 0 {
		q.sql(" AND kind = ANY(", q.arg(kindStrings(f.Kinds)), "::text[])")
	}
	if len(f.Sources) > 0 {
		q.sql(" AND source = ANY(", q.arg(sourceStrings(f.Sources)), "::text[])")
	}
	if len(f.Statuses) > 0 {
		now := ts(f.Now)
		var ors []string
		for _, st := range f.Statuses {
			switch st {
			case memgate.StatusActive:
				ors = append(ors, "(status = 'active' AND (expires_at IS NULL OR expires_at > "+q.arg(now)+"))")
			case memgate.StatusExpired:
				ors = append(ors, "(status = 'active' AND expires_at <= "+q.arg(now)+")")
			default:
				ors = append(ors, "status = "+q.arg(string(st)))
			}
		}
		q.sql(" AND (", strings.Join(ors, " OR "), ")")
	}
	if f.Text != "" {
		// Literal, case-insensitive substring test: the text is a bound
		// value compared with strpos, never a LIKE, regex or full-text
		// pattern. Both sides fold case with the same function.
		q.sql(" AND strpos(lower(content", db.lowerColl, "), lower(", q.arg(f.Text), "::text", db.lowerColl, ")) > 0")
	}
	// One row more than the page tells whether there is a next page.
	q.sql(" ORDER BY seq DESC LIMIT ", q.arg(limit+1))

	rows, err := r.Query(ctx, q.String(), q.args...)
	if err != nil {
		return nil, interpretError(ctx, "list", err)
	}
	defer rows.Close()
	page := &store.Page{Memories: []*memgate.Memory{}, Limit: limit, Clamped: clamped}
	var lastSeq int64
	for rows.Next() {
		m, seq, err := scanMemory(rows, true)
		if err != nil {
			return nil, interpretError(ctx, "list", err)
		}
		if len(page.Memories) == limit {
			page.NextCursor = store.EncodeCursor(lastSeq)
			break
		}
		page.Memories = append(page.Memories, m)
		lastSeq = seq
	}
	if err := rows.Err(); err != nil {
		return nil, interpretError(ctx, "list", err)
	}
	return page, nil
}

func kindStrings(ks []memgate.Kind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

func sourceStrings(ss []memgate.Source) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// Update implements store.Store: a compare-and-set on the version. Two
// concurrent updates expecting the same version both reach the row; the
// second waits for the first's row lock and PostgreSQL then re-checks its
// WHERE clause against the committed row, whose version has moved on, so
// exactly one succeeds. seen_count, flags and feedback are not the
// caller's to set and stay as they are.
func (db *DB) Update(ctx context.Context, s memgate.Scope, m *memgate.Memory, expectedVersion int64) (*memgate.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, memgate.FieldError("memory", "is required")
	}
	md, err := store.EncodeMetadata(m.Metadata)
	if err != nil {
		return nil, err
	}
	provider, model, dim, vector := encodeEmbedding(m.Embedding)
	// The write gate's verdict on the new content; a memory not active
	// or pending in m keeps its stored status (the statement's WHERE
	// refuses to update one that is not, whatever m says).
	var status, statusReason *string
	if m.Status == memgate.StatusActive || m.Status == memgate.StatusPending {
		st := string(m.Status)
		status, statusReason = &st, &m.StatusReason
	}
	var q query
	q.sql(`UPDATE memories SET content = `, q.arg(m.Content),
		`, content_sha256 = `, q.arg(m.ContentSHA256),
		`, reason = `, q.arg(m.Reason),
		`, metadata = `, q.arg(md),
		`, kind = `, q.arg(string(m.Kind)),
		`, sensitivity = `, q.arg(string(m.Sensitivity)),
		`, expires_at = `, q.arg(optTS(m.ExpiresAt)),
		`, valid_from = `, q.arg(optTS(m.ValidFrom)),
		`, valid_until = `, q.arg(optTS(m.ValidUntil)),
		`, embedding_provider = `, q.arg(provider),
		`, embedding_model = `, q.arg(model),
		`, embedding_dim = `, q.arg(dim),
		`, embedding_vector = `, q.arg(vector),
		`, dedup_key = `, q.arg(m.DedupKey),
		`, updated_at = `, q.arg(ts(m.UpdatedAt)),
		`, status = COALESCE(`, q.arg(status), `, status)`,
		`, status_reason = COALESCE(`, q.arg(statusReason), `, status_reason)`,
		`, flags = `, q.arg(encodeFlags(m.Flags)),
		`, updated_by = COALESCE(NULLIF(`, q.arg(m.UpdatedBy), `, ''), updated_by)`,
		`, version = version + 1 WHERE `).scope(s, "")
	q.sql(` AND id = `, q.arg(m.ID), ` AND version = `, q.arg(expectedVersion),
		` AND status IN ('active', 'pending') RETURNING `, memoryColumns)

	var out *memgate.Memory
	err = db.write(ctx, "update", func(tx pgx.Tx) error {
		var err error
		out, _, err = scanMemory(tx.QueryRow(ctx, q.String(), q.args...), false)
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		// Same transaction, and a statement that starts after the failed
		// UPDATE: it sees the row that refused it.
		cur, err := getOne(ctx, tx, s, m.ID, false)
		if err != nil {
			return err
		}
		return store.UpdateConflict(cur, expectedVersion)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetStatus implements store.Store. The row is locked (FOR UPDATE) while
// the transition is decided, so a concurrent change cannot slip between
// the check and the write.
func (db *DB) SetStatus(ctx context.Context, s memgate.Scope, id string, ch store.StatusChange) (*memgate.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if _, err := memgate.ParseStatus(string(ch.To)); err != nil {
		return nil, err
	}
	var out *memgate.Memory
	err := db.write(ctx, "set status", func(tx pgx.Tx) error {
		cur, err := getOne(ctx, tx, s, id, true)
		if err != nil {
			return err
		}
		if ch.Version != 0 && cur.Version != ch.Version {
			return store.VersionConflict(cur, ch.Version)
		}
		if cur.Status == ch.To {
			out = cur
			return nil
		}
		if !slices.Contains(ch.From, cur.Status) {
			return memgate.Errorf(memgate.ECONFLICT, "memory is %s; it cannot become %s", cur.Status, ch.To)
		}
		out, _, err = scanMemory(tx.QueryRow(ctx, `UPDATE memories SET status = $1, status_reason = $2, updated_at = $3, updated_by = COALESCE(NULLIF($4, ''), updated_by),
			version = version + 1 WHERE tenant = $5 AND id = $6 RETURNING `+memoryColumns,
			string(ch.To), ch.Reason, ts(ch.At), ch.By, cur.Tenant, cur.ID), false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readOneSQL reads one memory by (tenant, id), unscoped: for the memory an
// idempotency record of the caller's partition names.
const readOneSQL = `SELECT ` + memoryColumns + ` FROM memories WHERE tenant = $1 AND id = $2`

// Supersede implements store.Store, in one transaction.
//
// Concurrency: with a key, the transaction first takes a
// transaction-scoped advisory lock on (next's partition, key), then reads
// the key's record. Concurrent retries of one request queue on that lock,
// and each reads the record with a statement that starts after the
// previous holder committed: it replays what that one stored. Without the
// lock, a retry would wait on the old memory's row lock instead and find
// it superseded: a conflict, not a replay. A call with the same key in the
// same partition but another old memory takes the same lock; one that
// races a Remember with the key is refused by the records' primary key
// (interpretError makes it the idempotency conflict).
func (db *DB) Supersede(ctx context.Context, s memgate.Scope, oldID string, next *memgate.Memory, at time.Time, keys ...store.IdempotencyKey) (*store.SupersedeResult, error) {
	if err := s.Validate(); err != nil {
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
	var res *store.SupersedeResult
	err = db.write(ctx, "supersede", func(tx pgx.Tx) error {
		if key.Key != "" {
			lock := db.lockKey("idempotency", next.Tenant, next.Principal, next.Agent, next.Conversation, key.Key)
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lock); err != nil {
				return err
			}
			id, err := replay(ctx, tx, next, key, 0, 1)
			if err != nil {
				return err
			}
			if id != "" {
				m, _, err := scanMemory(tx.QueryRow(ctx, readOneSQL, next.Tenant, id), false)
				res = &store.SupersedeResult{Next: m, Replayed: true}
				return err
			}
		}
		old, err := getOne(ctx, tx, s, oldID, true)
		if err != nil {
			return err
		}
		if err := store.CheckSupersede(old, next); err != nil {
			return err
		}
		res = &store.SupersedeResult{}
		if res.Next, _, err = scanMemory(tx.QueryRow(ctx, insertMemory+` RETURNING `+memoryColumns, nextArgs...), false); err != nil {
			return err
		}
		if res.Old, _, err = scanMemory(tx.QueryRow(ctx, `UPDATE memories SET status = 'superseded', superseded_by = $1,
			updated_at = $2, updated_by = COALESCE(NULLIF($5, ''), updated_by), version = version + 1 WHERE tenant = $3 AND id = $4 RETURNING `+memoryColumns,
			next.ID, ts(at), old.Tenant, old.ID, next.CreatedBy), false); err != nil {
			return err
		}
		if key.Key != "" {
			if _, err := tx.Exec(ctx, recordIdempotencySQL, next.Tenant, next.Principal, next.Agent, next.Conversation,
				key.Key, key.RequestSHA256, next.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Delete implements store.Store.
func (db *DB) Delete(ctx context.Context, s memgate.Scope, id string) error {
	if err := s.Validate(); err != nil {
		return err
	}
	var q query
	q.sql("DELETE FROM memories WHERE ").scope(s, "").sql(" AND id = ", q.arg(id))
	return db.write(ctx, "delete", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, q.String(), q.args...)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return memgate.ErrNotFound()
		}
		return nil
	})
}

// Forget implements store.Store. Every row about the principal's memories
// lives in the memories table (vectors included), so one DELETE erases them
// all. The audit log is kept: it holds ids and counts, no content, and it is
// the record that the forget happened.
func (db *DB) Forget(ctx context.Context, tenant, principal, pseudonym string) (int64, error) {
	s := memgate.Scope{Tenant: tenant, Principal: principal}
	if err := s.Validate(); err != nil {
		return 0, err
	}
	if err := store.CheckPseudonym(pseudonym); err != nil {
		return 0, err
	}
	var n int64
	err := db.write(ctx, "forget", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM memories WHERE tenant = $1 AND principal = $2", tenant, principal)
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		for _, q := range []string{
			"DELETE FROM idempotency_keys WHERE tenant = $1 AND principal = $2",
			"DELETE FROM populations WHERE tenant = $1 AND principal = $2",
			`INSERT INTO tenant_heads AS th (tenant, high)
				SELECT tenant, head FROM partition_heads WHERE tenant = $1 AND principal = $2
				ON CONFLICT (tenant) DO UPDATE SET high = GREATEST(th.high, excluded.high)`,
			"DELETE FROM memory_tombstones WHERE tenant = $1 AND principal = $2",
			"DELETE FROM partition_heads WHERE tenant = $1 AND principal = $2",
		} {
			if _, err := tx.Exec(ctx, q, tenant, principal); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, "UPDATE audit_events SET principal = $1 WHERE tenant = $2 AND principal = $3", pseudonym, tenant, principal)
		return err
	})
	if err != nil {
		return 0, err
	}
	if db.cfg.NoVacuum {
		return n, nil
	}
	// VACUUM runs outside any transaction, after the commit: it makes the
	// dead rows' space reusable and drops them from the indexes. What it
	// cannot erase (freed space is not zeroed; WAL, replicas, backups) is
	// in README.
	if _, err := db.pool.Exec(ctx, "VACUUM "+forgetTables); err != nil {
		return n, interpretError(ctx, "forget: vacuum", err)
	}
	return n, nil
}

// forgetTables are the tables Forget writes, vacuumed after it.
const forgetTables = "memories, idempotency_keys, populations, memory_tombstones, partition_heads, audit_events"

// PseudonymKey implements store.Store: made at the first call; concurrent
// first calls agree (the insert that loses reads the winner's).
func (db *DB) PseudonymKey(ctx context.Context) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	var key []byte
	err := db.write(ctx, "pseudonym key", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO pseudonym_key (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING", fresh); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT key FROM pseudonym_key WHERE id = 1").Scan(&key)
	})
	return key, err
}

// Counts implements store.Store.
func (db *DB) Counts(ctx context.Context, s memgate.Scope, now time.Time) ([]store.Count, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	var q query
	st := "status"
	if !now.IsZero() {
		st = "CASE WHEN status = 'active' AND expires_at <= " + q.arg(ts(now)) + " THEN 'expired' ELSE status END"
	}
	q.sql("SELECT principal, kind, ", st, " AS st, COUNT(*) FROM memories WHERE ").scope(s, "")
	q.sql(" GROUP BY principal, kind, st ORDER BY principal, kind, st")
	rows, err := r.Query(ctx, q.String(), q.args...)
	if err != nil {
		return nil, interpretError(ctx, "counts", err)
	}
	defer rows.Close()
	counts := []store.Count{}
	for rows.Next() {
		var c store.Count
		var kind, status string
		if err := rows.Scan(&c.Principal, &kind, &status, &c.N); err != nil {
			return nil, interpretError(ctx, "counts", err)
		}
		c.Kind, c.Status = memgate.Kind(kind), memgate.Status(status)
		counts = append(counts, c)
	}
	if err := rows.Err(); err != nil {
		return nil, interpretError(ctx, "counts", err)
	}
	return counts, nil
}
