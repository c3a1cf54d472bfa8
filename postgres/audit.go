package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// auditColumns are the columns of an audit event, in the order scanAudit
// reads them, qualified by the alias e every audit query uses.
const auditColumns = `e.seq, e.tenant, e.principal, e.agent, e.actor, e.action, e.at,
	e.recall_id, e.query_sha256, e.reason, e.counts, e.memory_ids, e.scores, e.content_sha256`

// insertAudit appends one event and the refs of the memories it names, in
// one statement: the refs read the event's seq from the CTE. DISTINCT: an
// event may name a memory twice (memory_ids keeps both); the ref says only
// that the event names it.
const insertAudit = `WITH e AS (
	INSERT INTO audit_events (tenant, principal, agent, actor, action, at,
		recall_id, query_sha256, reason, counts, memory_ids, scores, content_sha256)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
	RETURNING tenant, seq)
INSERT INTO audit_refs (tenant, memory_id, seq)
	SELECT e.tenant, m.id, e.seq FROM e, (SELECT DISTINCT unnest($11::text[]) AS id) m`

// AppendAudit implements store.Store. The batch is one transaction (its
// statements sent in one round trip): every event is appended, or none.
// Seq is assigned here (an input Seq is ignored) and the inputs are not
// modified.
func (db *DB) AppendAudit(ctx context.Context, events []store.AuditEvent) error {
	rows := make([][]any, len(events))
	for i := range events {
		e := &events[i]
		if err := store.CheckAuditEvent(e); err != nil {
			return err
		}
		var counts, ids, scores any
		if len(e.Counts) > 0 {
			b, err := json.Marshal(e.Counts)
			if err != nil {
				return memgate.FieldError("counts", "must be serializable as JSON")
			}
			counts = string(b)
		}
		if len(e.MemoryIDs) > 0 {
			ids = e.MemoryIDs
		}
		if len(e.Scores) > 0 {
			scores = e.Scores
		}
		rows[i] = []any{e.Tenant, e.Principal, e.Agent, e.Actor, e.Action, ts(e.At),
			e.RecallID, e.QuerySHA256, e.Reason, counts, ids, scores, e.ContentSHA256}
	}
	if len(events) == 0 {
		return nil
	}
	return db.write(ctx, "append audit", func(tx pgx.Tx) error {
		var b pgx.Batch
		for _, args := range rows {
			b.Queue(insertAudit, args...)
		}
		return tx.SendBatch(ctx, &b).Close()
	})
}

// auditQuery builds ListAudit's statement: the tenant and every filter in
// one query, newest first, one row more than the page.
func auditQuery(tenant string, f store.AuditFilter, before int64, limit int) *query {
	q := new(query)
	seq := "e.seq"
	if f.MemoryID != "" {
		// The refs of the memory drive the query, newest first, through
		// their primary key.
		q.sql("SELECT ", auditColumns, " FROM audit_refs r JOIN audit_events e ON e.tenant = r.tenant AND e.seq = r.seq",
			" WHERE r.tenant = ", q.arg(tenant), " AND r.memory_id = ", q.arg(f.MemoryID))
		seq = "r.seq"
	} else {
		q.sql("SELECT ", auditColumns, " FROM audit_events e WHERE e.tenant = ", q.arg(tenant))
	}
	if before > 0 {
		q.sql(" AND ", seq, " < ", q.arg(before))
	}
	if f.Principal != "" {
		q.sql(" AND e.principal = ", q.arg(f.Principal))
	}
	if f.RecallID != "" {
		q.sql(" AND e.recall_id = ", q.arg(f.RecallID))
	}
	if f.Action != "" {
		q.sql(" AND e.action = ", q.arg(f.Action))
	}
	if !f.From.IsZero() {
		q.sql(" AND e.at >= ", q.arg(ts(f.From)))
	}
	if !f.To.IsZero() {
		q.sql(" AND e.at < ", q.arg(ts(f.To)))
	}
	q.sql(" ORDER BY ", seq, " DESC LIMIT ", q.arg(limit+1))
	return q
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
	q := auditQuery(tenant, f, before, limit)
	rows, err := r.Query(ctx, q.String(), q.args...)
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
		e      store.AuditEvent
		counts []byte
	)
	if err := row.Scan(&e.Seq, &e.Tenant, &e.Principal, &e.Agent, &e.Actor, &e.Action, &e.At,
		&e.RecallID, &e.QuerySHA256, &e.Reason, &counts, &e.MemoryIDs, &e.Scores, &e.ContentSHA256); err != nil {
		return e, err
	}
	e.At = e.At.UTC()
	if counts != nil {
		if err := json.Unmarshal(counts, &e.Counts); err != nil {
			return e, fmt.Errorf("audit event %d: stored counts are not a JSON object of integers: %w", e.Seq, err)
		}
	}
	if len(e.MemoryIDs) == 0 {
		e.MemoryIDs = nil
	}
	if len(e.Scores) == 0 {
		e.Scores = nil
	}
	return e, nil
}

// AuditHistogram implements store.Store: one aggregate over one range of
// audit_events_action (a tenant) or audit_events_principal_action (one
// principal). date_bin gives each event the start of its bucket counted
// from From, whatever From's alignment; the bucket's index is its offset
// from From in buckets.
func (db *DB) AuditHistogram(ctx context.Context, hq store.AuditHistogramQuery) ([]int64, error) {
	n, err := hq.Buckets()
	if err != nil {
		return nil, err
	}
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	var q query
	from := ts(hq.From)
	q.sql("SELECT date_bin(", q.arg(hq.Bucket), "::interval, e.at, ", q.arg(from), "::timestamptz) AS b, COUNT(*)",
		" FROM audit_events e WHERE e.tenant = ", q.arg(hq.Tenant))
	if hq.Principal != "" {
		q.sql(" AND e.principal = ", q.arg(hq.Principal))
	}
	q.sql(" AND e.action = ", q.arg(hq.Action), " AND e.at >= ", q.arg(from), " AND e.at < ", q.arg(ts(hq.To)), " GROUP BY b")
	rows, err := r.Query(ctx, q.String(), q.args...)
	if err != nil {
		return nil, interpretError(ctx, "audit histogram", err)
	}
	defer rows.Close()
	counts := make([]int64, n)
	for rows.Next() {
		var start time.Time
		var c int64
		if err := rows.Scan(&start, &c); err != nil {
			return nil, interpretError(ctx, "audit histogram", err)
		}
		off := start.Sub(from)
		i := int64(off / hq.Bucket)
		if off%hq.Bucket != 0 || i < 0 || i >= int64(n) {
			// The WHERE clause bounds at to the range: a bucket outside it
			// is a bug here, not something to clamp.
			return nil, interpretError(ctx, "audit histogram", fmt.Errorf("bucket start %s outside the %d buckets", start.UTC().Format(time.RFC3339Nano), n))
		}
		counts[i] = c
	}
	if err := rows.Err(); err != nil {
		return nil, interpretError(ctx, "audit histogram", err)
	}
	return counts, nil
}
