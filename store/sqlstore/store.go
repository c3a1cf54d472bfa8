package sqlstore

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var _ store.Store = (*Store)(nil)

// Store is a store.Store over a Driver. It is safe for concurrent use.
type Store struct {
	d  Driver
	dl *Dialect
	// ap is d as an Appender, nil when it is not one (audit.go).
	ap Appender
	// ac is d as an Autocommitter, nil when it is not one (audit.go).
	ac Autocommitter
	// appendsDeleted is the mark up to which this store has deleted
	// audit_appends (Appender; audit.go).
	appendsDeleted atomic.Int64
}

// New returns the store over d. Closing the store closes d.
func New(d Driver) *Store {
	ap, _ := d.(Appender)
	ac, _ := d.(Autocommitter)
	return &Store{d: d, dl: d.Dialect(), ap: ap, ac: ac}
}

// Close implements store.Store.
func (s *Store) Close() error { return s.d.Close() }

// Scope appends the predicate that confines a statement to sc, its
// columns qualified by alias ("" for none). Every statement that touches
// memories for a caller includes it, so the database applies the scope,
// never a filter after reading. sc must be valid.
func (q *Query) Scope(sc memgate.Scope, alias string) *Query {
	return q.scope(sc, alias, func(c string) string { return c })
}

func (q *Query) scope(sc memgate.Scope, alias string, principal func(string) string) *Query {
	c := func(col string) string {
		if alias == "" {
			return col
		}
		return alias + "." + col
	}
	q.SQL(c("tenant"), " = ", q.Arg(sc.Tenant))
	if !sc.AllPrincipals {
		q.SQL(" AND ", principal(c("principal")), " = ", q.Arg(sc.Principal))
	}
	// A memory stored at the wider level (empty agent or conversation) is
	// visible from every narrower one; an empty request field sees them all.
	switch {
	case sc.ExactAgent:
		q.SQL(" AND ", c("agent"), " = ", q.Arg(sc.Agent))
	case sc.Agent != "":
		q.SQL(" AND ", c("agent"), " IN ('', ", q.Arg(sc.Agent), ")")
	}
	if sc.Conversation != "" {
		q.SQL(" AND ", c("conversation"), " IN ('', ", q.Arg(sc.Conversation), ")")
	}
	if sc.HideRestricted {
		q.SQL(" AND ", c("sensitivity"), " = 'standard'")
	}
	return q
}

// getOne reads the memory id if sc contains it; one outside it is
// memgate.ErrNotFound, exactly like a missing one. lock asks for the row
// lock of a write that decides on it (Dialect.ForUpdate).
func (s *Store) getOne(ctx context.Context, q Querier, sc memgate.Scope, id string, lock bool) (*memgate.Memory, error) {
	var b Query
	b.SQL(selectMemory, " WHERE ").Scope(sc, "").SQL(" AND id = ", b.Arg(id))
	if lock {
		b.SQL(s.dl.ForUpdate)
	}
	m, _, err := scanMemory(q.QueryRow(ctx, b.String(), b.Args()...), false)
	if errors.Is(err, ErrNoRows) {
		return nil, memgate.ErrNotFound()
	}
	return m, err
}

// readByID reads the memories of tenant with ids, unscoped (for
// read-backs inside a write whose scope was checked), keyed by id.
func readByID(ctx context.Context, q Querier, tenant string, ids []string) (map[string]*memgate.Memory, error) {
	var b Query
	b.SQL(selectMemory, " WHERE tenant = ", b.Arg(tenant), " AND ")
	In(&b, "id", ids)
	ms, err := collect(scanOneMemory)(q.Query(ctx, b.String(), b.Args()...))
	if err != nil {
		return nil, err
	}
	out := make(map[string]*memgate.Memory, len(ms))
	for _, m := range ms {
		out[m.ID] = m
	}
	return out, nil
}

// read runs fn with the read querier, interpreting its error.
func read[T any](ctx context.Context, s *Store, op string, fn func(Querier) (T, error)) (T, error) {
	var zero T
	q, err := s.d.Read()
	if err != nil {
		return zero, err
	}
	v, err := fn(q)
	if err != nil {
		return zero, s.d.Interpret(ctx, op, err)
	}
	return v, nil
}

// lookupRow runs a query of one row looked up by key where the driver
// can (Looker), else on q. An API key and a partition's head are read on
// every request; through database/sql each spent more boxing its columns
// than SQLite did finding them (BenchmarkKeyByHash).
func (s *Store) lookupRow(ctx context.Context, q Querier, query string, args ...any) Row {
	l, ok := s.d.(Looker)
	if !ok {
		return q.QueryRow(ctx, query, args...)
	}
	return FirstRow(l.Lookup(ctx, query, args...))
}

// FirstRow is the first row of rows (the result of a query and its
// error) as a Row: its Scan reads that row, or reports the query's error
// or ErrNoRows, and closes rows. A driver whose QueryRow is a Query may
// return it.
func FirstRow(rows Rows, err error) Row { return firstRow{rows, err} }

type firstRow struct {
	rows Rows
	err  error
}

func (r firstRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	return r.rows.Err()
}

// snapshotOrRead runs fn as read does, or, with inOne, in one read
// transaction (Driver.Snapshot), for a read of several statements that
// must agree (the log and its inboxes, as of one moment).
func snapshotOrRead[T any](ctx context.Context, s *Store, inOne bool, op string, fn func(Querier) (T, error)) (T, error) {
	if !inOne {
		return read(ctx, s, op, fn)
	}
	var out T
	err := s.d.Snapshot(ctx, op, func(q Querier) error {
		var err error
		out, err = fn(q)
		return err
	})
	return out, err
}

// write runs fn in a write transaction and returns what it set.
func write[T any](ctx context.Context, s *Store, op string, fn func(Querier) (T, error)) (T, error) {
	var out T
	err := s.d.Write(ctx, op, func(q Querier) error {
		var err error
		out, err = fn(q)
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

// Tenants implements store.Store: every tenant that has a memory, an audit
// event or a key, in byte order.
func (s *Store) Tenants(ctx context.Context) ([]string, error) {
	pending, err := s.drainBeforeRead(ctx)
	if err != nil {
		return nil, err
	}
	return snapshotOrRead(ctx, s, pending, "tenants", func(q Querier) ([]string, error) {
		ts, err := collect(scanString)(q.Query(ctx, `SELECT tenant FROM memories UNION SELECT tenant FROM audit_events
			UNION SELECT tenant FROM keys`))
		if err == nil && pending {
			var evs []store.AuditEvent
			if evs, err = s.pendingAudit(ctx, q); err == nil {
				for _, e := range evs {
					ts = append(ts, e.Tenant)
				}
			}
		}
		sort.Strings(ts) // byte order, whatever the database's collation
		return slices.Compact(ts), err
	})
}

func scanString(r Rows) (string, error) {
	var v string
	err := r.Scan(&v)
	return v, err
}
