package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// auditColumns are the columns of an audit event, in the order scanAudit
// reads them, qualified by the alias e every audit query uses.
const auditColumns = `e.seq, e.tenant, e.principal, e.agent, e.actor, e.action, e.at,
	e.recall_id, e.query_sha256, e.reason, e.counts, e.memory_ids, e.scores, e.content_sha256`

const insertAudit = `INSERT INTO audit_events (tenant, principal, agent, actor, action, at,
	recall_id, query_sha256, reason, counts, memory_ids, scores, content_sha256)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// INSERT OR IGNORE: an event may name a memory twice (memory_ids keeps both);
// the ref says only that the event names it.
const insertAuditRef = `INSERT OR IGNORE INTO audit_refs (tenant, memory_id, seq) VALUES (?, ?, ?)`

// jsonOrNull returns v as JSON text, or nil (NULL) when empty is true.
func jsonOrNull(v any, empty bool) (any, error) {
	if empty {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// AppendAudit implements store.Store. The batch is one transaction: every
// event is appended, or none. Seq is assigned here (an input Seq is
// ignored) and the inputs are not modified.
func (db *DB) AppendAudit(ctx context.Context, events []store.AuditEvent) error {
	rows := make([][]any, len(events))
	for i := range events {
		e := &events[i]
		if err := store.CheckAuditEvent(e); err != nil {
			return err
		}
		counts, err := jsonOrNull(e.Counts, len(e.Counts) == 0)
		if err != nil {
			return memgate.FieldError("counts", "must be serializable as JSON")
		}
		ids, err := jsonOrNull(e.MemoryIDs, len(e.MemoryIDs) == 0)
		if err != nil {
			return memgate.FieldError("memory_ids", "must be serializable as JSON")
		}
		scores, err := jsonOrNull(e.Scores, len(e.Scores) == 0)
		if err != nil {
			return memgate.FieldError("scores", "must be serializable as JSON")
		}
		rows[i] = []any{e.Tenant, e.Principal, e.Agent, e.Actor, e.Action, micros(e.At),
			e.RecallID, e.QuerySHA256, e.Reason, counts, ids, scores, e.ContentSHA256}
	}
	if len(events) == 0 {
		return nil
	}
	return db.write(ctx, "append audit", func(tx *sql.Tx) error {
		ins, err := tx.PrepareContext(ctx, insertAudit)
		if err != nil {
			return err
		}
		defer ins.Close()
		ref, err := tx.PrepareContext(ctx, insertAuditRef)
		if err != nil {
			return err
		}
		defer ref.Close()
		for i, e := range events {
			res, err := ins.ExecContext(ctx, rows[i]...)
			if err != nil {
				return err
			}
			seq, err := res.LastInsertId()
			if err != nil {
				return err
			}
			for _, id := range e.MemoryIDs {
				if _, err := ref.ExecContext(ctx, e.Tenant, id, seq); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// auditQuery builds ListAudit's statement: the tenant and every filter in
// one query, newest first, one row more than the page.
func auditQuery(tenant string, f store.AuditFilter, before int64, limit int) (string, []any) {
	var q strings.Builder
	var args []any
	seq := "e.seq"
	if f.MemoryID != "" {
		// The refs of the memory drive the query, newest first, through
		// their primary key; CROSS JOIN fixes that join order in SQLite.
		q.WriteString("SELECT " + auditColumns + " FROM audit_refs r CROSS JOIN audit_events e ON e.seq = r.seq" +
			" WHERE r.tenant = ? AND r.memory_id = ? AND e.tenant = ?")
		args = append(args, tenant, f.MemoryID, tenant)
		seq = "r.seq"
	} else {
		q.WriteString("SELECT " + auditColumns + " FROM audit_events e WHERE e.tenant = ?")
		args = append(args, tenant)
	}
	if before > 0 {
		q.WriteString(" AND " + seq + " < ?")
		args = append(args, before)
	}
	if f.Principal != "" {
		q.WriteString(" AND e.principal = ?")
		args = append(args, f.Principal)
	}
	if f.RecallID != "" {
		q.WriteString(" AND e.recall_id = ?")
		args = append(args, f.RecallID)
	}
	if f.Action != "" {
		q.WriteString(" AND e.action = ?")
		args = append(args, f.Action)
	}
	if !f.From.IsZero() {
		q.WriteString(" AND e.at >= ?")
		args = append(args, micros(f.From))
	}
	if !f.To.IsZero() {
		q.WriteString(" AND e.at < ?")
		args = append(args, micros(f.To))
	}
	q.WriteString(" ORDER BY " + seq + " DESC LIMIT ?")
	args = append(args, limit+1)
	return q.String(), args
}

// ListAudit implements store.Store. The filters are exact matches on bound
// values; From and To compare the event time, From <= at < To (a To at or
// before From matches nothing).
func (db *DB) ListAudit(ctx context.Context, tenant string, f store.AuditFilter) (*store.AuditPage, error) {
	if err := memgate.CheckIdent("tenant", tenant); err != nil {
		return nil, err
	}
	before, err := store.DecodeCursor(f.Cursor)
	if err != nil {
		return nil, err
	}
	limit, clamped := store.ClampLimit(f.Limit)
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	q, args := auditQuery(tenant, f, before, limit)
	rows, err := r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, interpretError(ctx, "list audit", err)
	}
	defer rows.Close()
	page := &store.AuditPage{Events: []store.AuditEvent{}, Limit: limit, Clamped: clamped}
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return nil, interpretError(ctx, "list audit", err)
		}
		if len(page.Events) == limit {
			page.NextCursor = store.EncodeCursor(page.Events[limit-1].Seq)
			break
		}
		page.Events = append(page.Events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, interpretError(ctx, "list audit", err)
	}
	return page, nil
}

func scanAudit(row scanner) (store.AuditEvent, error) {
	var (
		e                   store.AuditEvent
		at                  int64
		counts, ids, scores sql.NullString
	)
	if err := row.Scan(&e.Seq, &e.Tenant, &e.Principal, &e.Agent, &e.Actor, &e.Action, &at,
		&e.RecallID, &e.QuerySHA256, &e.Reason, &counts, &ids, &scores, &e.ContentSHA256); err != nil {
		return e, err
	}
	e.At = fromMicros(at)
	for _, c := range []struct {
		name string
		col  sql.NullString
		dst  any
	}{{"counts", counts, &e.Counts}, {"memory_ids", ids, &e.MemoryIDs}, {"scores", scores, &e.Scores}} {
		if c.col.Valid {
			if err := json.Unmarshal([]byte(c.col.String), c.dst); err != nil {
				return e, fmt.Errorf("audit event %d: stored %s are not valid JSON: %w", e.Seq, c.name, err)
			}
		}
	}
	return e, nil
}

// auditHistogramQuery builds AuditHistogram's statement: one aggregate over
// one range of audit_events_action (a tenant) or
// audit_events_principal_action (one principal), counting the events per
// bucket index (at − from) / bucket. at >= from, so the integer division
// rounds down.
func auditHistogramQuery(q store.AuditHistogramQuery) (string, []any) {
	from, bucket := micros(q.From), q.Bucket.Microseconds()
	var b strings.Builder
	args := []any{from, bucket, q.Tenant}
	b.WriteString("SELECT (e.at - ?) / ? AS bucket, COUNT(*) FROM audit_events e WHERE e.tenant = ?")
	if q.Principal != "" {
		b.WriteString(" AND e.principal = ?")
		args = append(args, q.Principal)
	}
	b.WriteString(" AND e.action = ? AND e.at >= ? AND e.at < ? GROUP BY bucket")
	args = append(args, q.Action, from, micros(q.To))
	return b.String(), args
}

// AuditHistogram implements store.Store.
func (db *DB) AuditHistogram(ctx context.Context, q store.AuditHistogramQuery) ([]int64, error) {
	n, err := q.Buckets()
	if err != nil {
		return nil, err
	}
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	query, args := auditHistogramQuery(q)
	rows, err := r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, interpretError(ctx, "audit histogram", err)
	}
	defer rows.Close()
	counts := make([]int64, n)
	for rows.Next() {
		var i, c int64
		if err := rows.Scan(&i, &c); err != nil {
			return nil, interpretError(ctx, "audit histogram", err)
		}
		if i < 0 || i >= int64(n) {
			// The WHERE clause bounds at to the range: a bucket outside it
			// is a bug here, not something to clamp.
			return nil, interpretError(ctx, "audit histogram", fmt.Errorf("bucket %d outside [0, %d)", i, n))
		}
		counts[i] = c
	}
	if err := rows.Err(); err != nil {
		return nil, interpretError(ctx, "audit histogram", err)
	}
	return counts, nil
}
