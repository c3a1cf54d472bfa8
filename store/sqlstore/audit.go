package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

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

// The audit inbox. AppendAudit inserts one row into audit_inbox: the
// batch's events as one JSON array; a write's events appended in its own
// transaction go the same way, or, where the inbox is in another file than
// the memories (Dialect.WriteInbox), into audit_write_inbox beside them.
// DrainAudit moves the inboxes, oldest row first, into audit_events and
// audit_refs, in transactions of drainRows rows, and every read of the log
// (ListAudit, AuditHistogram, Tenants) drains first, so a read sees every
// event appended before it, as if the events had gone into the tables at
// once; an event's seq is assigned as it is drained, in the order the
// appends committed.
//
// That order: each inbox row carries a stamp (at, unix microseconds, never
// the same twice in a process) taken inside its transaction, so on SQLite,
// whose writes hold the one write lock from BEGIN to COMMIT, stamps follow
// commits. A drain first copies the write inbox (taking its own stamp T in
// that transaction: every write committed before it is copied, every
// later one has a later stamp), then moves the inbox's rows stamped before
// T in stamp order. A write's events and the recalls around it land in
// the log in the order they were acknowledged.
//
// Why: a recall answers only once its event is committed. Into the tables
// that commit wrote the events table, its five indexes and one random
// page of audit_refs per memory the recall named (about 25 pages for a
// batch of four recalls); into the inbox it writes one row. The drain
// writes those pages once for many batches, in the background (the
// engine's drainer) or before a read (issue 27, BENCHMARKS.md).
//
// Where the driver is an Appender (SQLite), AppendAudit's rows go to
// audit_appends instead, through the appender, so that an append never
// waits for a drain, which holds the writer (package sqlite, inbox.go).
// A drain moves them with the inbox's rows, in stamp order: audit_drained
// holds the last seq of audit_appends moved (the mark), written in the
// drain's transaction, and the appender deletes the rows up to the mark
// after it. The stamps order appends among the writer's commits as above:
// an append stamped before T and committed after the drain read the file
// is moved by a later drain; its recall was answered after that, so the
// log keeps the order of what was acknowledged before what began.
const (
	insertInbox      = `INSERT INTO audit_inbox (events, at) VALUES (?, ?)`
	insertWriteInbox = `INSERT INTO audit_write_inbox (events, at) VALUES (?, ?)`
	insertAppend     = `INSERT INTO audit_appends (at, events) VALUES (?, ?)`
	// appendsMark is the mark: the last seq of audit_appends drained.
	appendsMark = `SELECT COALESCE(MAX(appends), 0) FROM audit_drained`
	// drainRows bounds the inbox rows one drain transaction moves, so
	// that a drain holds the writer (and the writes that wait for it)
	// for tens of milliseconds, not for a whole backlog.
	drainRows = 64
	// drainRowsApart is drainRows where appends wait for no drain
	// (Appender): a larger transaction writes each page of audit_refs
	// once for more events. On SQLite, against 64, both p99s of
	// bench/load went down (BENCHMARKS.md, "The audit inbox's own
	// file"); 1,024 did no better than 256. PostgreSQL, where appends
	// never waited for a drain, keeps drainRows: its figures gave no
	// reason to change.
	drainRowsApart = 256
)

// AppendAudit implements store.Store. The batch is one transaction: every
// event is appended, or none, as one row of the inbox (above), written by
// one statement (alone, where the driver is an Autocommitter). Seq is
// assigned by the database when the event is drained (an input Seq is
// ignored) and the inputs are not modified.
func (s *Store) AppendAudit(ctx context.Context, events []store.AuditEvent) error {
	if len(events) == 0 {
		return nil
	}
	row, err := inboxRow(events)
	if err != nil {
		return err
	}
	if s.ap != nil {
		return s.ap.Append(ctx, "append audit", func(q Querier) error {
			_, err := q.Exec(ctx, insertAppend, inboxStamp(), row)
			return err
		})
	}
	if s.ac != nil {
		_, err := s.ac.Autocommit(ctx, "append audit", insertInbox, row, inboxStamp())
		return err
	}
	return s.d.Write(ctx, "append audit", func(q Querier) error {
		_, err := q.Exec(ctx, insertInbox, row, inboxStamp())
		return err
	})
}

// lastStamp is the last inbox stamp this process took.
var lastStamp atomic.Int64

// inboxStamp returns the time now in unix microseconds, above every stamp
// this process took before.
func inboxStamp() int64 {
	for {
		last, now := lastStamp.Load(), time.Now().UnixMicro()
		if now <= last {
			now = last + 1
		}
		if lastStamp.CompareAndSwap(last, now) {
			return now
		}
	}
}

// appendWriteAudit appends a write's events in the write's transaction.
func (s *Store) appendWriteAudit(ctx context.Context, q Querier, events []store.AuditEvent) error {
	row, err := inboxRow(events)
	if err != nil {
		return err
	}
	stmt := insertInbox
	if s.dl.WriteInbox {
		stmt = insertWriteInbox
	}
	_, err = q.Exec(ctx, stmt, row, inboxStamp())
	return err
}

// inboxRow checks events (auditRows) and returns them as an inbox row.
func inboxRow(events []store.AuditEvent) (string, error) {
	if _, err := auditRows(events); err != nil {
		return "", err
	}
	evs := make([]store.AuditEvent, len(events))
	for i, e := range events {
		e.Seq = 0
		e.At = e.At.UTC()
		evs[i] = e
	}
	b, err := json.Marshal(evs)
	if err != nil {
		return "", fmt.Errorf("audit events: %w", err)
	}
	return string(b), nil
}

// DrainAudit implements store.AuditDrainer: it moves every row of the
// inboxes committed before it began into the audit log's tables, in the
// order they committed (above), drainRows (drainRowsApart) rows a
// transaction, and returns once they are moved (or ctx ends). Drains in
// several processes (replicas, the CLI beside a server) take turns on a
// lock.
func (s *Store) DrainAudit(ctx context.Context) error {
	// With one inbox (PostgreSQL: replicas on other machines stamp with
	// their own clocks) every row is moved, in the inbox's order.
	before := int64(math.MaxInt64)
	if s.dl.WriteInbox {
		// Copy the write inbox into the inbox (a transaction of the audit
		// file), then delete what was copied (one of the memories' file).
		if err := s.d.Write(ctx, "drain audit", func(q Querier) error {
			before = inboxStamp() // under the write lock: after every commit before it
			_, err := q.Exec(ctx, `INSERT INTO audit_inbox (events, origin, at)
				SELECT w.events, w.seq, w.at FROM audit_write_inbox w
				WHERE NOT EXISTS (SELECT 1 FROM audit_inbox a WHERE a.origin = w.seq) ORDER BY w.seq`)
			return err
		}); err != nil {
			return err
		}
		if err := s.d.Write(ctx, "drain audit", func(q Querier) error {
			_, err := q.Exec(ctx, `DELETE FROM audit_write_inbox WHERE seq IN (SELECT origin FROM audit_inbox WHERE origin IS NOT NULL)`)
			return err
		}); err != nil {
			return err
		}
	}
	limit := drainRows
	if s.ap != nil {
		limit = drainRowsApart
	}
	mark := int64(-1) // the mark as the last drain transaction left it
	for {
		// The appends are read before the writer's transaction, on a
		// reader: the writer never reads their file, so no write holds
		// it, and a checkpoint that truncates its log (Driver.Erase)
		// waits for no write.
		var apps []inboxEntry
		if s.ap != nil {
			var err error
			apps, err = read(ctx, s, "drain audit", func(q Querier) ([]inboxEntry, error) {
				return collect(scanInboxRow)(q.Query(ctx, "SELECT seq, at, events FROM audit_appends WHERE seq > ("+appendsMark+") ORDER BY seq LIMIT ?", limit))
			})
			if err != nil {
				return err
			}
		}
		var moved int
		err := s.d.Write(ctx, "drain audit", func(q Querier) error {
			if err := s.d.Lock(ctx, q, []string{"audit", "drain"}); err != nil {
				return err
			}
			var err error
			moved, mark, err = s.drainAudit(ctx, q, before, limit, apps)
			return err
		})
		if err != nil {
			return err
		}
		if moved < limit {
			break
		}
	}
	if s.ap == nil || mark <= s.appendsDeleted.Load() {
		return nil
	}
	// The rows moved, out of the appends' file (a crash before this
	// leaves rows at or below the mark, which no drain reads again).
	err := s.ap.Append(ctx, "drain audit", func(q Querier) error {
		_, err := q.Exec(ctx, "DELETE FROM audit_appends WHERE seq <= ?", mark)
		return err
	})
	if err == nil {
		s.appendsDeleted.Store(mark)
	}
	return err
}

// drainBeforeRead drains the inboxes when they hold anything (one cheap
// read otherwise), so that the read that follows sees every appended
// event. A drain that finds the database unavailable (full: a drain needs
// room for the events' rows) reports pending: the read then adds the
// inboxes' events itself (pendingAudit), so reads of the log keep
// answering, whole, while writes cannot.
func (s *Store) drainBeforeRead(ctx context.Context) (pending bool, err error) {
	pending, err = read(ctx, s, "read the audit inbox", func(q Querier) (bool, error) {
		query := `SELECT COUNT(*) FROM (SELECT 1 FROM audit_inbox LIMIT 1) AS i`
		if s.dl.WriteInbox {
			query = `SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM audit_inbox LIMIT 1) AS i) + (SELECT COUNT(*) FROM (SELECT 1 FROM audit_write_inbox LIMIT 1) AS w)`
		}
		if s.ap != nil {
			query += ` + (SELECT COUNT(*) FROM (SELECT 1 FROM audit_appends WHERE seq > (` + appendsMark + `) LIMIT 1) AS a)`
		}
		var n int
		err := q.QueryRow(ctx, query).Scan(&n)
		return n > 0, err
	})
	if err != nil || !pending {
		return false, err
	}
	switch err := s.DrainAudit(ctx); {
	case err == nil:
		return false, nil
	case memgate.ErrorCode(err) == memgate.EUNAVAILABLE:
		return true, nil
	default:
		return false, err
	}
}

// pendingAudit returns the events still in the inboxes, oldest first, with
// the seqs they would take if drained now (after the log's last), in q's
// snapshot: what a read adds when the inboxes cannot be drained. A row
// copied from the write inbox is read once, from there.
func (s *Store) pendingAudit(ctx context.Context, q Querier) ([]store.AuditEvent, error) {
	var last int64
	if err := q.QueryRow(ctx, "SELECT COALESCE(MAX(seq), 0) FROM audit_events").Scan(&last); err != nil {
		return nil, err
	}
	query := "SELECT events FROM audit_inbox ORDER BY seq"
	if s.dl.WriteInbox {
		appends := ""
		if s.ap != nil {
			appends = "UNION ALL SELECT events, at, seq, 2 FROM audit_appends WHERE seq > (" + appendsMark + ")"
		}
		query = `SELECT events FROM (
			SELECT a.events, a.at, a.seq, 0 AS w FROM audit_inbox a WHERE NOT EXISTS (SELECT 1 FROM audit_write_inbox w WHERE w.seq = a.origin)
			UNION ALL SELECT events, at, seq, 1 FROM audit_write_inbox ` + appends + `) AS i ORDER BY at, w, seq`
	}
	var out []store.AuditEvent
	{
		rows, err := collect(scanString)(q.Query(ctx, query))
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			var evs []store.AuditEvent
			if err := json.Unmarshal([]byte(row), &evs); err != nil {
				return nil, fmt.Errorf("audit inbox: %w", err)
			}
			for _, e := range evs {
				last++
				e.Seq = last
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// auditMatches reports whether e is one of tenant's events f asks for
// (auditQuery's conditions, in Go).
func auditMatches(e *store.AuditEvent, tenant string, f store.AuditFilter) bool {
	switch {
	case e.Tenant != tenant,
		f.MemoryID != "" && !slices.Contains(e.MemoryIDs, f.MemoryID),
		f.Principal != "" && e.Principal != f.Principal,
		f.RecallID != "" && e.RecallID != f.RecallID,
		f.Action != "" && e.Action != f.Action,
		!f.From.IsZero() && e.At.Before(f.From),
		!f.To.IsZero() && !e.At.Before(f.To):
		return false
	}
	return true
}

// drainAudit moves up to limit rows of audit_inbox stamped before before,
// and, where the driver is an Appender, of apps (audit_appends in seq
// order, read before q's transaction) past the mark, in stamp order, into
// audit_events and audit_refs in q's transaction, raises the mark past
// the appends it moved, and returns how many rows it moved and the mark.
// A row copied from the write inbox waits there until its origin is
// deleted (DrainAudit).
func (s *Store) drainAudit(ctx context.Context, q Querier, before int64, limit int, apps []inboxEntry) (int, int64, error) {
	query := "SELECT a.seq, a.at, a.events FROM audit_inbox a WHERE a.at < ? ORDER BY a.seq LIMIT ?"
	if s.dl.WriteInbox {
		query = `SELECT a.seq, a.at, a.events FROM audit_inbox a WHERE a.at < ?
			AND NOT EXISTS (SELECT 1 FROM audit_write_inbox w WHERE w.seq = a.origin) ORDER BY a.at, a.seq LIMIT ?`
	}
	inbox, err := collect(scanInboxRow)(q.Query(ctx, query, before, limit))
	if err != nil {
		return 0, 0, err
	}
	// The rows moved, in stamp order: a prefix of inbox and one of apps.
	moving, copies, appended := inbox, inbox, apps[:0]
	var mark int64
	if s.ap != nil {
		if err := q.QueryRow(ctx, appendsMark).Scan(&mark); err != nil {
			return 0, 0, err
		}
		// Past the mark as it is now (another process's drain may have
		// moved some since they were read): every row below the first
		// was committed before it, and is at or below the mark.
		for len(apps) > 0 && apps[0].seq <= mark {
			apps = apps[1:]
		}
		// In seq order, up to the first stamped at or after before: the
		// mark moves over a prefix only.
		n := 0
		for n < len(apps) && apps[n].at < before {
			n++
		}
		// Merged with the inbox's rows by stamp, the first limit.
		moving = nil
		i, j := 0, 0
		for len(moving) < limit && (i < len(inbox) || j < n) {
			if j == n || (i < len(inbox) && inbox[i].at <= apps[j].at) {
				moving = append(moving, inbox[i])
				i++
			} else {
				moving = append(moving, apps[j])
				j++
			}
		}
		copies, appended = inbox[:i], apps[:j]
	}
	if len(moving) == 0 {
		return 0, mark, nil
	}
	var events []store.AuditEvent
	for _, e := range moving {
		var evs []store.AuditEvent
		if err := json.Unmarshal([]byte(e.events), &evs); err != nil {
			return 0, 0, fmt.Errorf("audit inbox row %d: %w", e.seq, err)
		}
		events = append(events, evs...)
	}
	rows, err := auditRows(events)
	if err != nil {
		return 0, 0, fmt.Errorf("audit inbox: %w", err)
	}
	for i := 0; i < len(events); i += auditBatchEvents {
		j := min(i+auditBatchEvents, len(events))
		if err := appendAudit(ctx, q, events[i:j], rows[i:j]); err != nil {
			return 0, 0, err
		}
	}
	if len(copies) > 0 {
		b := new(Query)
		b.SQL("DELETE FROM audit_inbox WHERE seq IN (")
		for i, e := range copies {
			if i > 0 {
				b.SQL(", ")
			}
			b.SQL(b.Arg(e.seq))
		}
		if _, err := q.Exec(ctx, b.SQL(")").String(), b.Args()...); err != nil {
			return 0, 0, err
		}
	}
	if len(appended) > 0 {
		mark = appended[len(appended)-1].seq
		if _, err := q.Exec(ctx, `INSERT INTO audit_drained (id, appends) VALUES (1, ?)
			ON CONFLICT (id) DO UPDATE SET appends = excluded.appends`, mark); err != nil {
			return 0, 0, err
		}
	}
	return len(moving), mark, nil
}

// inboxEntry is a row of an inbox: its seq, its stamp and its events as
// JSON.
type inboxEntry struct {
	seq, at int64
	events  string
}

func scanInboxRow(r Rows) (inboxEntry, error) {
	var e inboxEntry
	err := r.Scan(&e.seq, &e.at, &e.events)
	return e, err
}

// forgetInboxes gives the principal's events still in the inboxes the
// pseudonym, and each of their agents its store.AgentPseudonym, as
// forgetAudit does to the log's tables, rewriting the rows in place (a
// move to the tables here would span two files where the write inbox is
// apart, which commit separately). audit_appends is rewritten through
// the appender, in a transaction of its own that commits before q's:
// drains, which hold the writer, cannot run in between, and one that ran
// before moved its rows into the tables that q's transaction rewrites. A
// forget that fails after it leaves those rows under the pseudonym, as a
// retry would.
func (s *Store) forgetInboxes(ctx context.Context, q Querier, tenant, principal, pseudonym string, key func() ([]byte, error)) error {
	tables := []string{"audit_inbox"}
	if s.dl.WriteInbox {
		tables = append(tables, "audit_write_inbox")
	}
	for _, table := range tables {
		if err := forgetInbox(ctx, q, s.dl, table, tenant, principal, pseudonym, key); err != nil {
			return err
		}
	}
	if s.ap == nil {
		return nil
	}
	// key reads the database's key in q's transaction, which this one
	// runs inside of.
	return s.ap.Append(ctx, "forget", func(aq Querier) error {
		return forgetInbox(ctx, aq, s.dl, "audit_appends", tenant, principal, pseudonym, key)
	})
}

// forgetInbox rewrites the principal's events in the inbox table in q's
// transaction (forgetInboxes).
func forgetInbox(ctx context.Context, q Querier, dl *Dialect, table, tenant, principal, pseudonym string, key func() ([]byte, error)) error {
	// A superset, cheaply: the rows whose text holds the principal. (An
	// event already under the pseudonym, forgotten before its agent was,
	// takes its agent's now.)
	b := new(Query)
	b.SQL("SELECT seq, at, events FROM ", table, " WHERE ", dl.Contains(b, "events", principal), " OR ", dl.Contains(b, "events", pseudonym))
	entries, err := collect(scanInboxRow)(q.Query(ctx, b.String(), b.Args()...))
	if err != nil {
		return err
	}
	for _, e := range entries {
		var evs []store.AuditEvent
		if err := json.Unmarshal([]byte(e.events), &evs); err != nil {
			return fmt.Errorf("audit inbox row %d: %w", e.seq, err)
		}
		changed := false
		for i := range evs {
			ev := &evs[i]
			if ev.Tenant != tenant || (ev.Principal != principal && ev.Principal != pseudonym) {
				continue
			}
			ev.Principal, changed = pseudonym, true
			if ev.Agent != "" && !strings.HasPrefix(ev.Agent, "forgotten:") {
				k, err := key()
				if err != nil {
					return err
				}
				ev.Agent = store.AgentPseudonym(k, pseudonym, ev.Agent)
			}
		}
		if !changed {
			continue
		}
		row, err := json.Marshal(evs)
		if err != nil {
			return err
		}
		if _, err := q.Exec(ctx, "UPDATE "+table+" SET events = ? WHERE seq = ?", string(row), e.seq); err != nil {
			return err
		}
	}
	return nil
}

// auditBatchEvents bounds the events appendAudit inserts in one batch of
// statements.
const auditBatchEvents = 256

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

// appendAudit inserts events (with their rows, auditRows) into the audit
// log's tables in the transaction of q: the drain's half of an append.
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
	pending, err := s.drainBeforeRead(ctx)
	if err != nil {
		return nil, err
	}
	op := "list audit"
	if pending {
		op = "list audit and its inbox"
	}
	return snapshotOrRead(ctx, s, pending, op, func(q Querier) (*store.AuditPage, error) {
		events, err := collect(scanAudit)(q.Query(ctx, b.String(), b.Args()...))
		if err != nil {
			return nil, err
		}
		if pending {
			// Newest first: the inboxes' events come after the log's.
			evs, err := s.pendingAudit(ctx, q)
			if err != nil {
				return nil, err
			}
			var add []store.AuditEvent
			for i := len(evs) - 1; i >= 0; i-- {
				if e := &evs[i]; auditMatches(e, tenant, f) && (before <= 0 || e.Seq < before) {
					add = append(add, *e)
				}
			}
			events = append(add, events...)
			if len(events) > limit+1 {
				events = events[:limit+1]
			}
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
	pending, err := s.drainBeforeRead(ctx)
	if err != nil {
		return nil, err
	}
	return snapshotOrRead(ctx, s, pending, "audit histogram", func(q Querier) ([]int64, error) {
		counts := make([]int64, n)
		if pending {
			evs, err := s.pendingAudit(ctx, q)
			if err != nil {
				return nil, err
			}
			f := store.AuditFilter{Principal: hq.Principal, Action: hq.Action, From: hq.From, To: hq.To}
			for i := range evs {
				if auditMatches(&evs[i], hq.Tenant, f) {
					counts[evs[i].At.Sub(hq.From)/hq.Bucket]++
				}
			}
		}
		rows, err := q.Query(ctx, b.String(), b.Args()...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
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
			counts[i] += c
		}
		return counts, rows.Err()
	})
}
