package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memgate/memgate/store/sqlstore"
)

// conn is the sqlstore.Driver over the pool.
type conn struct {
	pool       *pgxpool.Pool
	cfg        Config
	lockSpace  uint64 // mixes the schema into advisory lock keys
	dialect    *sqlstore.Dialect
	closed     atomic.Bool
	maxRetries int

	rebound  sync.Map // statement text with ? → with $n
	nRebound atomic.Int64

	writes atomic.Int64 // Write's calls, for tests
}

var _ sqlstore.Driver = (*conn)(nil)

// newDialect returns PostgreSQL's wording (package sqlstore, Dialect);
// lowerColl is the collation clause text search folds case with.
func newDialect(lowerColl string) *sqlstore.Dialect {
	return &sqlstore.Dialect{
		ForUpdate:  " FOR UPDATE",
		SkipLocked: " FOR UPDATE SKIP LOCKED",
		// strpos is a literal substring test: the text is never a LIKE,
		// regex or full-text pattern.
		Contains: func(q *sqlstore.Query, col, text string) string {
			return "strpos(lower(" + col + lowerColl + "), lower(CAST(" + q.Arg(text) + " AS text)" + lowerColl + ")) > 0"
		},
		MetadataEquals: metadataEquals,
		Micros: func(expr string) string {
			return "CAST(EXTRACT(EPOCH FROM " + expr + ") * 1000000 AS bigint)"
		},
		// Without statistics (a table filled since its last ANALYZE) the
		// planner takes tenant and principal for a selective pair, and
		// status = 'active' for the predicate of memories_retention, and
		// walks the partition rather than look each id up in the primary
		// key. An expression over a text column is in no index.
		ByID:   func(col string) string { return "(" + col + " || '')" },
		Remote: true,
	}
}

// metadataEquals writes the condition "metadata holds key k with a value
// equal to v, of the same JSON type". The key and the value are bound
// parameters: neither is ever part of the SQL text or of a JSON path.
//
// The column is json (its text kept as written), compared with json
// operators: a string through ->> (unescaped), a boolean or a number
// through its JSON text (a number as numeric, so 12345678901234567 is
// exact and 3 equals 3.0). CASE fixes the order of evaluation: a value is
// unescaped or cast only once its type is known. A stored string holding
// \u0000 (which text cannot hold) never equals a query value.
func metadataEquals(q *sqlstore.Query, k string, v any) (string, error) {
	val := func() string { return "(metadata -> CAST(" + q.Arg(k) + " AS text))" }
	switch x := v.(type) {
	case string:
		return "CASE WHEN json_typeof(" + val() + ") = 'string' AND strpos(CAST(" + val() + " AS text), CAST(" + q.Arg(`\u0000`) + " AS text)) = 0" +
			" THEN (metadata ->> CAST(" + q.Arg(k) + " AS text)) = CAST(" + q.Arg(x) + " AS text) ELSE false END", nil
	case bool:
		return "json_typeof(" + val() + ") = 'boolean' AND CAST(" + val() + " AS text) = CAST(" + q.Arg(strconv.FormatBool(x)) + " AS text)", nil
	}
	var num string
	switch x := v.(type) {
	case json.Number:
		if _, err := strconv.ParseFloat(x.String(), 64); err != nil || !json.Valid([]byte(x.String())) {
			return "", errors.New("is not a number")
		}
		num = x.String()
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", errors.New("must be a finite number")
		}
		num = strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		num = strconv.Itoa(x)
	case int64:
		num = strconv.FormatInt(x, 10)
	default:
		return "", errors.New("must be a string, a boolean or a number")
	}
	return "CASE WHEN json_typeof(" + val() + ") = 'number' THEN CAST(CAST(" + val() + " AS text) AS numeric) = CAST(" + q.Arg(num) + " AS numeric) ELSE false END", nil
}

func (c *conn) Dialect() *sqlstore.Dialect { return c.dialect }

// retryable reports a transaction that failed only because of another one
// and may succeed if run again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	return false
}

// Write implements sqlstore.Driver: one READ COMMITTED transaction. A
// deadlock or serialization failure re-runs it, up to the configured
// retries, with a short random backoff.
func (c *conn) Write(ctx context.Context, op string, fn func(sqlstore.Querier) error) error {
	if c.closed.Load() {
		return sqlstore.ErrClosed()
	}
	c.writes.Add(1)
	return c.retry(ctx, op, func() error {
		return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error { return fn(querier{c, tx}) })
	})
}

// Autocommit implements sqlstore.Autocommitter: the statement is sent
// alone, and PostgreSQL runs a statement outside a transaction block as a
// transaction of its own, committed before it answers.
func (c *conn) Autocommit(ctx context.Context, op, query string, args ...any) (int64, error) {
	if c.closed.Load() {
		return 0, sqlstore.ErrClosed()
	}
	var n int64
	err := c.retry(ctx, op, func() error {
		var err error
		n, err = querier{c, c.pool}.Exec(ctx, query, args...)
		return err
	})
	return n, err
}

var _ sqlstore.Autocommitter = (*conn)(nil)

// retry runs run until it succeeds, fails with an error that is not
// retryable, or has been retried the configured times, with a short random
// backoff between attempts; the error goes through interpretError.
func (c *conn) retry(ctx context.Context, op string, run func() error) error {
	for attempt := 0; ; attempt++ {
		err := run()
		if err == nil {
			return nil
		}
		if !retryable(err) || attempt >= c.maxRetries || ctx.Err() != nil {
			return interpretError(ctx, op, err)
		}
		backoff := time.Duration(1+rand.IntN(10<<attempt)) * time.Millisecond
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
}

// Read implements sqlstore.Driver: the pool.
func (c *conn) Read() (sqlstore.Querier, error) {
	if c.closed.Load() {
		return nil, sqlstore.ErrClosed()
	}
	return querier{c, c.pool}, nil
}

// Snapshot implements sqlstore.Driver: one REPEATABLE READ, read-only
// transaction.
func (c *conn) Snapshot(ctx context.Context, op string, fn func(sqlstore.Querier) error) error {
	if c.closed.Load() {
		return sqlstore.ErrClosed()
	}
	err := pgx.BeginTxFunc(ctx, c.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error { return fn(querier{c, tx}) })
	return interpretError(ctx, op, err)
}

// Interpret implements sqlstore.Driver.
func (c *conn) Interpret(ctx context.Context, op string, err error) error {
	return interpretError(ctx, op, err)
}

// Lock implements sqlstore.Driver with transaction-scoped advisory locks,
// taken in key order (so two transactions never wait for each other in a
// cycle): concurrent writers of one decision queue, and each, at READ
// COMMITTED, reads with statements that start after the previous holder
// committed. SELECT ... FOR UPDATE could not do this: it cannot lock a
// row that does not exist yet (the first copy of a duplicate).
func (c *conn) Lock(ctx context.Context, q sqlstore.Querier, keys ...[]string) error {
	ids := make([]int64, 0, len(keys))
	for _, k := range keys {
		if id := c.lockKey(k...); !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	// unnest yields the sorted keys in order, one lock after another.
	_, err := q.Exec(ctx, `SELECT pg_advisory_xact_lock(k) FROM unnest(CAST(? AS bigint[])) AS k`, ids)
	return err
}

// forgetTables are the tables Forget writes, vacuumed after it.
const forgetTables = "memories, idempotency_keys, populations, memory_tombstones, partition_heads, audit_events, audit_inbox"

// Erase implements sqlstore.Driver: after a forget, a VACUUM of the tables
// it wrote (unless Config.NoVacuum) marks the dead rows' space free; README
// says what stays on disk until PostgreSQL reuses it. It does not truncate
// (TRUNCATE false): truncation waits up to 5 s per table for an exclusive
// lock that concurrent readers keep taking, which made a forget under load
// take 4-8 s (issue 27), and returning empty trailing pages to the file
// system erases nothing more than marking them free.
func (c *conn) Erase(ctx context.Context, op string) error {
	if op != "forget" || c.cfg.NoVacuum {
		return nil
	}
	if _, err := c.pool.Exec(ctx, "VACUUM (TRUNCATE false) "+forgetTables); err != nil {
		return interpretError(ctx, op+": vacuum", err)
	}
	return nil
}

// Close implements sqlstore.Driver.
func (c *conn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.pool.Close()
	}
	return nil
}

// maxRebound bounds the statement texts whose rewrite is kept.
const maxRebound = 1024

// rebind returns query with $n placeholders.
func (c *conn) rebind(query string) string {
	if v, ok := c.rebound.Load(query); ok {
		return v.(string)
	}
	out := sqlstore.NumberedRebind(query)
	if c.nRebound.Load() < maxRebound {
		if _, loaded := c.rebound.LoadOrStore(query, out); !loaded {
			c.nRebound.Add(1)
		}
	}
	return out
}

// pgxQuerier is what a pool and a transaction share.
type pgxQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// querier is a sqlstore.Querier: pgx maps every Go value sqlstore uses to
// its column type itself. A statement without arguments is sent as it is
// (a migration, which may hold several statements and ? in its text).
type querier struct {
	c *conn
	q pgxQuerier
}

func (q querier) sql(query string, args []any) string {
	if len(args) == 0 {
		return query
	}
	return q.c.rebind(query)
}

func (q querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := q.q.Exec(ctx, q.sql(query, args), args...)
	return tag.RowsAffected(), err
}

func (q querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rs, err := q.q.Query(ctx, q.sql(query, args), args...)
	if err != nil {
		return nil, err
	}
	return rows{rs}, nil
}

// rows maps sqlstore.Borrowed to pgx's DriverBytes, which points into the
// connection's read buffer instead of copying.
type rows struct{ pgx.Rows }

func (r rows) Scan(dest ...any) error {
	out, copied := dest, false
	for i, d := range dest {
		if p, ok := d.(*sqlstore.Borrowed); ok {
			if !copied {
				out, copied = append([]any(nil), dest...), true
			}
			out[i] = (*pgtype.DriverBytes)(p)
		}
	}
	return r.Rows.Scan(out...)
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return row{q.q.QueryRow(ctx, q.sql(query, args), args...)}
}

// QueryRowBatch implements sqlstore.Batcher: one pgx batch, one round
// trip.
func (q querier) QueryRowBatch(ctx context.Context, qs []sqlstore.BatchQuery) error {
	var b pgx.Batch
	for _, x := range qs {
		b.Queue(q.sql(x.SQL, x.Args), x.Args...).QueryRow(func(r pgx.Row) error { return x.Scan(row{r}) })
	}
	return q.q.SendBatch(ctx, &b).Close()
}

var _ sqlstore.Batcher = querier{}

type row struct{ pgx.Row }

func (r row) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sqlstore.ErrNoRows
	}
	return err
}
