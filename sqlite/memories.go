package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// scopeSQL returns the predicate that confines a statement to s, and its
// arguments. Every statement that touches memories for a caller includes it,
// so scope is applied by SQLite and never after reading. s must be valid.
func scopeSQL(s memgate.Scope) (string, []any) {
	var b strings.Builder
	args := []any{s.Tenant}
	b.WriteString("tenant = ?")
	if !s.AllPrincipals {
		b.WriteString(" AND principal = ?")
		args = append(args, s.Principal)
	}
	// A memory stored at the wider level (empty agent or conversation) is
	// visible from every narrower one; an empty request field sees them all.
	switch {
	case s.ExactAgent:
		b.WriteString(" AND agent = ?")
		args = append(args, s.Agent)
	case s.Agent != "":
		b.WriteString(" AND agent IN ('', ?)")
		args = append(args, s.Agent)
	}
	if s.Conversation != "" {
		b.WriteString(" AND conversation IN ('', ?)")
		args = append(args, s.Conversation)
	}
	if s.HideRestricted {
		b.WriteString(" AND sensitivity = 'standard'")
	}
	return b.String(), args
}

// reader returns the read pool, or unavailable once the DB is closed.
func (db *DB) reader() (*sql.DB, error) {
	if db.closed.Load() {
		return nil, errClosed()
	}
	return db.r, nil
}

// write runs fn in a write transaction (BEGIN IMMEDIATE on the one writer
// connection) and commits it if fn returns nil. Errors go through
// interpretError.
func (db *DB) write(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	if db.closed.Load() {
		return errClosed()
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return interpretError(ctx, op, err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return interpretError(ctx, op, err)
	}
	return interpretError(ctx, op, tx.Commit())
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// getOne reads the memory id within the scope predicate where; a row outside
// it is memgate.ErrNotFound, exactly like a missing one.
func getOne(ctx context.Context, q querier, where string, args []any, id string) (*memgate.Memory, error) {
	row := q.QueryRowContext(ctx, "SELECT "+memoryColumns+" FROM memories WHERE "+where+" AND id = ?",
		append(slices.Clip(args), id)...)
	m, _, err := scanMemory(row, false)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memgate.ErrNotFound()
	}
	return m, err
}

// Insert implements store.Store.
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
	return db.write(ctx, "insert", func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, insertMemory)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, args := range rows {
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				return err
			}
		}
		return nil
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
	where, args := scopeSQL(s)
	m, err := getOne(ctx, r, where, args, id)
	return m, interpretError(ctx, "get", err)
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

	where, args := scopeSQL(s)
	var q strings.Builder
	q.WriteString("SELECT seq, " + memoryColumns + " FROM memories WHERE " + where)
	if before > 0 {
		q.WriteString(" AND seq < ?")
		args = append(args, before)
	}
	if len(f.Kinds) > 0 {
		q.WriteString(" AND kind IN (" + placeholders(len(f.Kinds)) + ")")
		for _, k := range f.Kinds {
			args = append(args, string(k))
		}
	}
	if len(f.Sources) > 0 {
		q.WriteString(" AND source IN (" + placeholders(len(f.Sources)) + ")")
		for _, src := range f.Sources {
			args = append(args, string(src))
		}
	}
	if len(f.Statuses) > 0 {
		now := micros(f.Now)
		var ors []string
		for _, st := range f.Statuses {
			switch st {
			case memgate.StatusActive:
				ors = append(ors, "(status = 'active' AND (expires_at IS NULL OR expires_at > ?))")
				args = append(args, now)
			case memgate.StatusExpired:
				ors = append(ors, "(status = 'active' AND expires_at <= ?)")
				args = append(args, now)
			default:
				ors = append(ors, "status = ?")
				args = append(args, string(st))
			}
		}
		q.WriteString(" AND (" + strings.Join(ors, " OR ") + ")")
	}
	if f.Text != "" {
		// Literal, case-insensitive substring test: the text is a bound
		// value compared with instr, never a LIKE, FTS or regex pattern.
		q.WriteString(" AND instr(" + lowerFunc + "(content), ?) > 0")
		args = append(args, strings.ToLower(f.Text))
	}
	// One row more than the page tells whether there is a next page.
	q.WriteString(" ORDER BY seq DESC LIMIT ?")
	args = append(args, limit+1)

	rows, err := r.QueryContext(ctx, q.String(), args...)
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

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// Update implements store.Store. It writes the dedup key with the content
// (the engine derives one from the other); seen_count, flags and feedback
// are not the caller's to set and stay as they are.
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
	where, wargs := scopeSQL(s)
	flags, err := encodeFlags(m.Flags)
	if err != nil {
		return nil, err
	}
	// The write gate's verdict on the new content; a memory not active
	// or pending in m keeps its stored status (the statement's WHERE
	// refuses to update one that is not, whatever m says).
	var status, statusReason any
	if m.Status == memgate.StatusActive || m.Status == memgate.StatusPending {
		status, statusReason = string(m.Status), m.StatusReason
	}
	args := []any{
		m.Content, m.ContentSHA256, m.Reason, md, string(m.Kind), string(m.Sensitivity),
		optMicros(m.ExpiresAt), optMicros(m.ValidFrom), optMicros(m.ValidUntil),
		provider, model, dim, vector, m.DedupKey, micros(m.UpdatedAt),
		status, statusReason, flags, m.UpdatedBy,
	}
	args = append(append(args, wargs...), m.ID, expectedVersion)

	var out *memgate.Memory
	err = db.write(ctx, "update", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE memories SET
			content = ?, content_sha256 = ?, reason = ?, metadata = ?, kind = ?, sensitivity = ?,
			expires_at = ?, valid_from = ?, valid_until = ?,
			embedding_provider = ?, embedding_model = ?, embedding_dim = ?, embedding_vector = ?,
			dedup_key = ?, updated_at = ?, status = COALESCE(?, status), status_reason = COALESCE(?, status_reason),
			flags = ?, updated_by = COALESCE(NULLIF(?, ''), updated_by),
			version = version + 1
			WHERE `+where+` AND id = ? AND version = ? AND status IN ('active', 'pending')`, args...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			// Same transaction, so the answer matches the failed UPDATE.
			cur, err := getOne(ctx, tx, where, wargs, m.ID)
			if err != nil {
				return err
			}
			return store.UpdateConflict(cur, expectedVersion)
		}
		out, err = getOne(ctx, tx, where, wargs, m.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetStatus implements store.Store.
func (db *DB) SetStatus(ctx context.Context, s memgate.Scope, id string, ch store.StatusChange) (*memgate.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if _, err := memgate.ParseStatus(string(ch.To)); err != nil {
		return nil, err
	}
	where, wargs := scopeSQL(s)
	var out *memgate.Memory
	err := db.write(ctx, "set status", func(tx *sql.Tx) error {
		cur, err := getOne(ctx, tx, where, wargs, id)
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
		args := append([]any{string(ch.To), ch.Reason, micros(ch.At), ch.By}, wargs...)
		if _, err := tx.ExecContext(ctx, `UPDATE memories SET status = ?, status_reason = ?, updated_at = ?, updated_by = COALESCE(NULLIF(?, ''), updated_by),
			version = version + 1 WHERE `+where+` AND id = ?`, append(args, id)...); err != nil {
			return err
		}
		out, err = getOne(ctx, tx, where, wargs, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Supersede implements store.Store. SQLite has one writer: the key's
// record, read first, cannot be taken by another call before this one
// commits.
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
	where, wargs := scopeSQL(s)
	var res *store.SupersedeResult
	err = db.write(ctx, "supersede", func(tx *sql.Tx) error {
		read, err := db.txStmt(ctx, tx, readByID)
		if err != nil {
			return err
		}
		if key.Key != "" {
			id, err := replay(ctx, tx, next, key, 0, 1)
			if err != nil {
				return err
			}
			if id != "" {
				m, _, err := scanMemory(read.QueryRowContext(ctx, next.Tenant, id), false)
				res = &store.SupersedeResult{Next: m, Replayed: true}
				return err
			}
		}
		old, err := getOne(ctx, tx, where, wargs, oldID)
		if err != nil {
			return err
		}
		if err := store.CheckSupersede(old, next); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, insertMemory, nextArgs...); err != nil {
			return err
		}
		args := append([]any{next.ID, micros(at), next.CreatedBy}, wargs...)
		if _, err := tx.ExecContext(ctx, `UPDATE memories SET status = 'superseded', superseded_by = ?,
			updated_at = ?, updated_by = COALESCE(NULLIF(?, ''), updated_by), version = version + 1 WHERE `+where+` AND id = ?`, append(args, oldID)...); err != nil {
			return err
		}
		if key.Key != "" {
			if _, err := tx.ExecContext(ctx, recordIdempotencySQL, next.Tenant, next.Principal, next.Agent, next.Conversation,
				key.Key, key.RequestSHA256, next.ID, micros(time.Now())); err != nil {
				return err
			}
		}
		res = &store.SupersedeResult{}
		if res.Old, err = getOne(ctx, tx, where, wargs, oldID); err != nil {
			return err
		}
		res.Next, _, err = scanMemory(read.QueryRowContext(ctx, next.Tenant, next.ID), false)
		return err
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
	where, args := scopeSQL(s)
	err := db.write(ctx, "delete", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM memories WHERE "+where+" AND id = ?", append(args, id)...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			return memgate.ErrNotFound()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return db.truncateWAL(ctx, "delete")
}

// Forget implements store.Store. The memories table holds every row of the
// principal's memories (vectors included), so one DELETE erases them; the
// rows that name the principal go in the same transaction: idempotency
// records, retention counters, change tombstones and the partition's head
// (tenant_heads keeps the sequence going past it, migration 0009), and the
// audit log's events take the pseudonym. The writer deletes securely
// (secure_delete: freed space is zeroed), and the write-ahead log, which
// still holds the pages as they were, is checkpointed and truncated after
// the commit.
func (db *DB) Forget(ctx context.Context, tenant, principal, pseudonym string) (int64, error) {
	s := memgate.Scope{Tenant: tenant, Principal: principal}
	if err := s.Validate(); err != nil {
		return 0, err
	}
	if err := store.CheckPseudonym(pseudonym); err != nil {
		return 0, err
	}
	where, args := scopeSQL(s)
	var n int64
	err := db.write(ctx, "forget", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM memories WHERE "+where, args...)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		for _, q := range []string{
			"DELETE FROM idempotency_keys WHERE tenant = ? AND principal = ?",
			"DELETE FROM populations WHERE tenant = ? AND principal = ?",
			`INSERT INTO tenant_heads (tenant, high)
				SELECT tenant, head FROM partition_heads WHERE tenant = ?1 AND principal = ?2
				ON CONFLICT (tenant) DO UPDATE SET high = max(high, excluded.high)`,
			"DELETE FROM memory_tombstones WHERE tenant = ? AND principal = ?",
			"DELETE FROM partition_heads WHERE tenant = ? AND principal = ?",
		} {
			if _, err := tx.ExecContext(ctx, q, tenant, principal); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, "UPDATE audit_events SET principal = ? WHERE tenant = ? AND principal = ?", pseudonym, tenant, principal)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, db.truncateWAL(ctx, "forget")
}

// truncateWAL checkpoints the write-ahead log into the database file and
// truncates it to nothing, so the page images it held (deleted content as
// it was) are gone from it. It waits for readers as any write does (the
// busy timeout); a reader that keeps it from finishing is an unavailable
// error saying what is done and what is not.
func (db *DB) truncateWAL(ctx context.Context, op string) error {
	var busy, logFrames, done int
	if err := db.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil {
		return interpretError(ctx, op+": checkpoint", err)
	}
	if busy != 0 {
		return &memgate.Error{Code: memgate.EUNAVAILABLE, Message: op + " is done, but the write-ahead log still holds the erased pages " +
			"(a long read kept it from being truncated); retry " + op + " to truncate it"}
	}
	return nil
}

// PseudonymKey implements store.Store: made at the first call, in the
// writer's transaction, so two processes agree on it.
func (db *DB) PseudonymKey(ctx context.Context) ([]byte, error) {
	var key []byte
	err := db.write(ctx, "pseudonym key", func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, "SELECT key FROM pseudonym_key WHERE id = 1").Scan(&key)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "INSERT INTO pseudonym_key (id, key) VALUES (1, ?)", key)
		return err
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
	where, wargs := scopeSQL(s)
	args := append([]any{!now.IsZero(), micros(now)}, wargs...)
	rows, err := r.QueryContext(ctx, `SELECT principal, kind,
		CASE WHEN ? AND status = 'active' AND expires_at <= ? THEN 'expired' ELSE status END AS st,
		COUNT(*)
		FROM memories WHERE `+where+`
		GROUP BY principal, kind, st ORDER BY principal, kind, st`, args...)
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
