package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// auditColumns are the columns of an audit event, in the order scanAudit
// reads them, qualified by the alias e every audit query uses.
const auditColumns = `e.seq, e.tenant, e.principal, e.agent, e.actor, e.action, e.at,
	e.recall_id, e.query_sha256, e.reason, e.counts, e.memory_ids, e.scores, e.content_sha256`

const insertAudit = `INSERT INTO audit_events (tenant, principal, agent, actor, action, at,
	recall_id, query_sha256, reason, counts, memory_ids, scores, content_sha256)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`

// AppendAudit implements store.Store. The batch is one transaction: every
// event is appended, or none. Seq is assigned by the database (an input
// Seq is ignored) and the inputs are not modified. The events go in one
// batch of statements (one round trip where the driver is a Batcher), the
// refs of the memories they name in one statement per
// auditRefsPerStatement.
func (s *Store) AppendAudit(ctx context.Context, events []store.AuditEvent) error {
	rows, err := auditRows(events)
	if err != nil || len(events) == 0 {
		return err
	}
	return s.d.Write(ctx, "append audit", func(q Querier) error { return appendAudit(ctx, q, events, rows) })
}

// auditRows checks events and returns the arguments of their inserts.
func auditRows(events []store.AuditEvent) ([][]any, error) {
	rows := make([][]any, len(events))
	for i := range events {
		e := &events[i]
		if err := store.CheckAuditEvent(e); err != nil {
			return nil, err
		}
		var counts, ids, scores any
		if len(e.Counts) > 0 {
			b, err := json.Marshal(e.Counts)
			if err != nil {
				return nil, memgate.FieldError("counts", "must be serializable as JSON")
			}
			counts = string(b)
		}
		if len(e.MemoryIDs) > 0 {
			ids = e.MemoryIDs
		}
		if len(e.Scores) > 0 {
			scores = e.Scores
		}
		rows[i] = []any{e.Tenant, e.Principal, e.Agent, e.Actor, e.Action, e.At.UTC(),
			e.RecallID, e.QuerySHA256, e.Reason, counts, ids, scores, e.ContentSHA256}
	}
	return rows, nil
}

// appendAudit inserts events (with their rows, auditRows) in the
// transaction of q.
func appendAudit(ctx context.Context, q Querier, events []store.AuditEvent, rows [][]any) error {
	// The events in one round trip where the driver batches, then
	// the refs in as few statements as auditRefsPerStatement allows:
	// a statement and a round trip per event made a batch of a few
	// dozen take seconds on a loaded PostgreSQL, and a forget, which
	// waits for the queued events, waited as long (issue 27).
	seqs := make([]int64, len(events))
	qs := make([]BatchQuery, len(events))
	for i := range events {
		qs[i] = BatchQuery{SQL: insertAudit, Args: rows[i], Scan: func(r Row) error { return r.Scan(&seqs[i]) }}
	}
	if err := RowBatch(ctx, q, qs); err != nil {
		return err
	}
	var b Query
	n := 0
	var last [3]any // the last ref added, repeated to pad the statement
	insertRefs := func() error {
		if n == 0 {
			return nil
		}
		// The statement has a power of two of rows, the last ref
		// repeated to fill it: the refs of a batch come in every count,
		// and a statement text per count would crowd the driver's
		// cache of prepared statements (each count parsed and planned
		// anew). The repeats, like an event naming a memory twice
		// (memory_ids keeps both), insert nothing: the ref says only
		// that the event names it.
		for ; n&(n-1) != 0; n++ {
			b.SQL(", (", b.Arg(last[0]), ", ", b.Arg(last[1]), ", ", b.Arg(last[2]), ")")
		}
		_, err := q.Exec(ctx, b.SQL(" ON CONFLICT DO NOTHING").String(), b.Args()...)
		b, n = Query{}, 0
		return err
	}
	for i, e := range events {
		for _, id := range e.MemoryIDs {
			if n == 0 {
				b.SQL("INSERT INTO audit_refs (tenant, memory_id, seq) VALUES ")
			} else {
				b.SQL(", ")
			}
			last = [3]any{e.Tenant, id, seqs[i]}
			b.SQL("(", b.Arg(last[0]), ", ", b.Arg(last[1]), ", ", b.Arg(last[2]), ")")
			if n++; n == auditRefsPerStatement {
				if err := insertRefs(); err != nil {
					return err
				}
			}
		}
	}
	return insertRefs()
}

// auditRefsPerStatement bounds the rows of one insert of audit refs (three
// bound values each), far below every backend's limit on parameters; a
// power of two, as insertRefs pads to.
const auditRefsPerStatement = 256

// auditQuery builds ListAudit's statement: the tenant and every filter in
// one query, newest first, one row more than the page.
func auditQuery(tenant string, f store.AuditFilter, before int64, limit int) *Query {
	b := new(Query)
	seq := "e.seq"
	if f.MemoryID != "" {
		// The refs of the memory drive the query, newest first, through
		// their primary key; CROSS JOIN fixes that join order in SQLite
		// and is an inner join in PostgreSQL.
		b.SQL("SELECT ", auditColumns, " FROM audit_refs r CROSS JOIN audit_events e",
			" WHERE r.tenant = ", b.Arg(tenant), " AND r.memory_id = ", b.Arg(f.MemoryID),
			" AND e.tenant = r.tenant AND e.seq = r.seq")
		seq = "r.seq"
	} else {
		b.SQL("SELECT ", auditColumns, " FROM audit_events e WHERE e.tenant = ", b.Arg(tenant))
	}
	if before > 0 {
		b.SQL(" AND ", seq, " < ", b.Arg(before))
	}
	if f.Principal != "" {
		b.SQL(" AND e.principal = ", b.Arg(f.Principal))
	}
	if f.RecallID != "" {
		b.SQL(" AND e.recall_id = ", b.Arg(f.RecallID))
	}
	if f.Action != "" {
		b.SQL(" AND e.action = ", b.Arg(f.Action))
	}
	if !f.From.IsZero() {
		b.SQL(" AND e.at >= ", b.Arg(f.From.UTC()))
	}
	if !f.To.IsZero() {
		b.SQL(" AND e.at < ", b.Arg(f.To.UTC()))
	}
	return b.SQL(" ORDER BY ", seq, " DESC LIMIT ", b.Arg(limit+1))
}

// ListAudit implements store.Store. The filters are exact matches on bound
// values; From and To compare the event time, From <= at < To (a To at or
// before From matches nothing).
func (s *Store) ListAudit(ctx context.Context, tenant string, f store.AuditFilter) (*store.AuditPage, error) {
	if err := memgate.CheckIdent("tenant", tenant); err != nil {
		return nil, err
	}
	before, err := store.DecodeCursor(f.Cursor)
	if err != nil {
		return nil, err
	}
	limit, clamped := store.ClampLimit(f.Limit)
	b := auditQuery(tenant, f, before, limit)
	return read(ctx, s, "list audit", func(q Querier) (*store.AuditPage, error) {
		events, err := collect(scanAudit)(q.Query(ctx, b.String(), b.Args()...))
		if err != nil {
			return nil, err
		}
		page := &store.AuditPage{Events: events, Limit: limit, Clamped: clamped}
		if len(events) > limit {
			page.Events = events[:limit]
			page.NextCursor = store.EncodeCursor(events[limit-1].Seq)
		}
		return page, nil
	})
}

func scanAudit(r Rows) (store.AuditEvent, error) {
	var e store.AuditEvent
	var counts []byte
	if err := r.Scan(&e.Seq, &e.Tenant, &e.Principal, &e.Agent, &e.Actor, &e.Action, &e.At,
		&e.RecallID, &e.QuerySHA256, &e.Reason, &counts, &e.MemoryIDs, &e.Scores, &e.ContentSHA256); err != nil {
		return e, err
	}
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

// auditHistogramQuery builds AuditHistogram's statement: one aggregate over
// one range of audit_events_action (a tenant) or
// audit_events_principal_action (one principal), counting the events per
// bucket index (at − from) / bucket, in microseconds. at >= from, so the
// integer division rounds down.
func (s *Store) auditHistogramQuery(hq store.AuditHistogramQuery) *Query {
	b := new(Query)
	b.SQL("SELECT (", s.dl.Micros("e.at"), " - ", b.Arg(hq.From.UnixMicro()), ") / ", b.Arg(hq.Bucket.Microseconds()),
		" AS bucket, COUNT(*) FROM audit_events e WHERE e.tenant = ", b.Arg(hq.Tenant))
	if hq.Principal != "" {
		b.SQL(" AND e.principal = ", b.Arg(hq.Principal))
	}
	return b.SQL(" AND e.action = ", b.Arg(hq.Action), " AND e.at >= ", b.Arg(hq.From.UTC()),
		" AND e.at < ", b.Arg(hq.To.UTC()), " GROUP BY bucket")
}

// AuditHistogram implements store.Store.
func (s *Store) AuditHistogram(ctx context.Context, hq store.AuditHistogramQuery) ([]int64, error) {
	n, err := hq.Buckets()
	if err != nil {
		return nil, err
	}
	b := s.auditHistogramQuery(hq)
	return read(ctx, s, "audit histogram", func(q Querier) ([]int64, error) {
		rows, err := q.Query(ctx, b.String(), b.Args()...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		counts := make([]int64, n)
		for rows.Next() {
			var i, c int64
			if err := rows.Scan(&i, &c); err != nil {
				return nil, err
			}
			if i < 0 || i >= int64(n) {
				// The WHERE clause bounds at to the range: a bucket outside
				// it is a bug here, not something to clamp.
				return nil, fmt.Errorf("bucket %d outside [0, %d)", i, n)
			}
			counts[i] = c
		}
		return counts, rows.Err()
	})
}
