package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store/sqlstore"
)

// conn is the sqlstore.Driver over the writer and the readers.
type conn struct {
	cfg Config
	*pools
	// The C-API connections (stream.go), set once the readers are open:
	// stream's for cold loads, lookup's for Fetch, so that a recall's
	// read never waits behind MaxReaders partitions loading.
	stream, lookup *streamPool
	ckpt           *checkpointer
	stmts          stmtCache
	closed         atomic.Bool

	closeOnce sync.Once
	closeErr  error
}

var _ sqlstore.Driver = (*conn)(nil)

// dialect is SQLite's wording (package sqlstore, Dialect).
var dialect = &sqlstore.Dialect{
	// Writes are serialized by the one writer: no row locks to take.
	ForUpdate:  "",
	SkipLocked: "",
	// Literal, case-insensitive substring test: the text is a bound value
	// compared with instr, never a LIKE, FTS or regex pattern.
	Contains: func(q *sqlstore.Query, col, text string) string {
		return "instr(" + lowerFunc + "(" + col + "), " + q.Arg(strings.ToLower(text)) + ") > 0"
	},
	MetadataEquals: metadataEquals,
	// Times are stored as unix microseconds.
	Micros: func(expr string) string { return expr },
	// A unary + keeps the planner from walking a partition through its
	// principal index instead of looking each id up in (tenant, id).
	ByID: func(col string) string { return "+" + col },
	// The audit log, and its inbox, are in a file of their own (audit.go).
	WriteInbox: true,
}

// lowerFunc is a SQL function that lower-cases text with Unicode rules (the
// built-in lower() folds ASCII only), for case-insensitive literal search.
const lowerFunc = "memgate_lower"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(lowerFunc, 1,
		func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			switch v := args[0].(type) {
			case string:
				return strings.ToLower(v), nil
			case []byte:
				return strings.ToLower(string(v)), nil
			case nil:
				return nil, nil
			default:
				return nil, fmt.Errorf("%s: want text, got %T", lowerFunc, v)
			}
		})
}

// metadataEquals matches a key of the metadata JSON with json_each, by the
// value's JSON type and value; the key and value are bound parameters.
func metadataEquals(q *sqlstore.Query, k string, v any) (string, error) {
	cond := "EXISTS (SELECT 1 FROM json_each(memories.metadata) j WHERE j.key = " + q.Arg(k) + " AND "
	switch x := v.(type) {
	case string:
		cond += "j.type = 'text' AND j.value = " + q.Arg(x)
	case bool:
		cond += "j.type = '" + strconv.FormatBool(x) + "'"
	case json.Number:
		var n any
		if i, err := x.Int64(); err == nil {
			n = i
		} else if f, err := x.Float64(); err == nil {
			n = f
		} else {
			return "", errors.New("is not a number")
		}
		cond += "j.type IN ('integer', 'real') AND j.value = " + q.Arg(n)
	case float64, int, int64:
		cond += "j.type IN ('integer', 'real') AND j.value = " + q.Arg(x)
	default:
		return "", errors.New("must be a string, a boolean or a number")
	}
	return cond + ")", nil
}

func (c *conn) Dialect() *sqlstore.Dialect { return dialect }

// Write runs fn in a write transaction (BEGIN IMMEDIATE on the one writer
// connection) and commits it if fn returns nil. Statements first seen in
// it are prepared on the writer after the commit, for the next ones.
func (c *conn) Write(ctx context.Context, op string, fn func(sqlstore.Querier) error) error {
	return c.write(ctx, c.w, op, fn)
}

// write runs fn in a write transaction on pool, the writer or the
// appender (one connection each, BEGIN IMMEDIATE), and commits it if fn
// returns nil.
func (c *conn) write(ctx context.Context, pool *sql.DB, op string, fn func(sqlstore.Querier) error) error {
	if c.isClosed() {
		return sqlstore.ErrClosed()
	}
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		return interpretError(ctx, op, err)
	}
	q := &querier{c: c, pool: pool, tx: tx}
	if err := fn(q); err != nil {
		tx.Rollback()
		return interpretError(ctx, op, err)
	}
	if err := tx.Commit(); err != nil {
		return interpretError(ctx, op, err)
	}
	c.prepareFresh(ctx, pool, q.fresh)
	return nil
}

// Read implements sqlstore.Driver: the read pool.
func (c *conn) Read() (sqlstore.Querier, error) {
	if c.isClosed() {
		return nil, sqlstore.ErrClosed()
	}
	return &querier{c: c, pool: c.r}, nil
}

// Snapshot implements sqlstore.Driver: one read transaction on a reader
// (WAL gives it one snapshot). Statements first seen in it are prepared
// on the readers after it ends, as Write does on the writer.
func (c *conn) Snapshot(ctx context.Context, op string, fn func(sqlstore.Querier) error) error {
	if c.isClosed() {
		return sqlstore.ErrClosed()
	}
	tx, err := c.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return interpretError(ctx, op, err)
	}
	q := &querier{c: c, pool: c.r, tx: tx}
	err = fn(q)
	tx.Rollback() // read-only: nothing to commit
	if err != nil {
		return interpretError(ctx, op, err)
	}
	c.prepareFresh(ctx, c.r, q.fresh)
	return nil
}

// prepareFresh prepares on pool the statements a transaction of it
// prepared on its own connection, for the next ones; it holds no
// connection of pool, so it may wait for one. A failure only leaves a
// statement unprepared.
func (c *conn) prepareFresh(ctx context.Context, pool *sql.DB, queries []string) {
	for _, query := range queries {
		c.stmts.get(ctx, pool, query)
	}
}

// Interpret implements sqlstore.Driver.
func (c *conn) Interpret(ctx context.Context, op string, err error) error {
	return interpretError(ctx, op, err)
}

// Lock implements sqlstore.Driver: the one writer serializes every write,
// so a decision made by reading first cannot race another.
func (c *conn) Lock(context.Context, sqlstore.Querier, ...[]string) error { return nil }

// Erase implements sqlstore.Driver. The writer deletes securely
// (secure_delete: freed pages are zeroed); the write-ahead log, which
// still holds the pages as they were, is checkpointed and truncated.
func (c *conn) Erase(ctx context.Context, op string) error { return c.truncateWAL(ctx, op) }

// truncateWAL checkpoints the write-ahead logs into their files and
// truncates them to nothing, so the page images they held (deleted content
// as it was) are gone from them: the database's and the audit log's on
// the writer, the inbox's on the appender. It waits for readers as any
// write does (the busy timeout); a reader that keeps it from finishing is
// an unavailable error saying what is done and what is not.
func (c *conn) truncateWAL(ctx context.Context, op string) error {
	// Not while the checkpointer checkpoints: SQLite would answer busy.
	c.ckpt.mu.Lock()
	defer c.ckpt.mu.Unlock()
	for _, f := range []struct {
		pool   *sql.DB
		schema string
	}{{c.w, "main"}, {c.w, "audit"}, {c.a, "main"}} {
		var busy, logFrames, done int
		if err := f.pool.QueryRowContext(ctx, "PRAGMA "+f.schema+".wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil {
			return interpretError(ctx, op+": checkpoint", err)
		}
		if busy != 0 {
			return &memgate.Error{Code: memgate.EUNAVAILABLE, Message: op + " is done, but the write-ahead log still holds the erased pages " +
				"(a long read kept it from being truncated); retry " + op + " to truncate it"}
		}
	}
	return nil
}

// querier runs statements on a pool or in a transaction of it, through
// the statement cache, mapping values (bind, scanDest).
type querier struct {
	c     *conn
	pool  *sql.DB
	tx    *sql.Tx
	inTx  map[string]*sql.Stmt // the statements bound to tx so far
	fresh []string             // statements tx prepared, to prepare on pool after it
}

// stmt returns the prepared statement for query, or nil to run it
// unprepared (the cache is full).
func (q *querier) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := q.inTx[query]; ok {
		return s, nil
	}
	var s *sql.Stmt
	var err error
	switch cached := q.c.stmts.lookup(q.pool, query); {
	case cached != nil && q.tx != nil:
		s = q.tx.StmtContext(ctx, cached)
	case cached != nil:
		return cached, nil
	case q.tx != nil:
		// Prepared on the transaction's own connection, and on the pool
		// only after the transaction ends (fresh). Preparing on the pool
		// takes another of its connections while this one is held: on the
		// writer's one connection that waits for itself, and on the
		// readers a pool's worth of snapshots doing it at once wait for
		// each other until their contexts end (issue 27, BENCHMARKS.md).
		if s, err = q.tx.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		if !q.c.stmts.full() {
			q.fresh = append(q.fresh, query)
		}
	default:
		// No connection is held: the pool lends one to prepare on.
		return q.c.stmts.get(ctx, q.pool, query)
	}
	if q.inTx == nil {
		q.inTx = map[string]*sql.Stmt{}
	}
	q.inTx[query] = s
	return s, nil
}

func (q *querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	args, err := bind(args)
	if err != nil {
		return 0, err
	}
	s, err := q.stmt(ctx, query)
	if err != nil {
		return 0, err
	}
	var res sql.Result
	switch {
	case s != nil:
		res, err = s.ExecContext(ctx, args...)
	case q.tx != nil:
		res, err = q.tx.ExecContext(ctx, query, args...)
	default:
		res, err = q.pool.ExecContext(ctx, query, args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q *querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	args, err := bind(args)
	if err != nil {
		return nil, err
	}
	s, err := q.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	var rs *sql.Rows
	switch {
	case s != nil:
		rs, err = s.QueryContext(ctx, args...)
	case q.tx != nil:
		rs, err = q.tx.QueryContext(ctx, query, args...)
	default:
		rs, err = q.pool.QueryContext(ctx, query, args...)
	}
	if err != nil {
		return nil, err
	}
	return rows{rs}, nil
}

func (q *querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return sqlstore.FirstRow(q.Query(ctx, query, args...))
}

type rows struct{ *sql.Rows }

func (r rows) Scan(dest ...any) error { return r.Rows.Scan(scanDest(dest)...) }
func (r rows) Close()                 { r.Rows.Close() }

// bind maps the values sqlstore gives to SQLite's column types: a time to
// unix microseconds (INTEGER), a list to its JSON text; nil stays NULL.
func bind(args []any) ([]any, error) {
	var out []any
	var err error
	for i, a := range args {
		var v any
		switch x := a.(type) {
		case time.Time:
			v = x.UnixMicro()
		case *time.Time:
			if x != nil {
				v = x.UnixMicro()
			}
		case []string:
			if v, err = jsonText(x, x == nil); err != nil {
				return nil, err
			}
		case []float64:
			if v, err = jsonText(x, x == nil); err != nil {
				return nil, err
			}
		default:
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = v
	}
	if out == nil {
		return args, nil
	}
	return out, nil
}

// jsonText returns v as JSON text, or nil (NULL) when null.
func jsonText(v any, null bool) (any, error) {
	if null {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// scanDest maps scan destinations the same way back.
func scanDest(dest []any) []any {
	out, copied := dest, false
	for i, d := range dest {
		var s sql.Scanner
		switch p := d.(type) {
		case *time.Time:
			s = microsDest{p}
		case **time.Time:
			s = optMicrosDest{p}
		case *[]string, *[]float64:
			s = jsonDest{p}
		case *sqlstore.Borrowed:
			// database/sql hands a RawBytes the driver's own slice.
			if !copied {
				out, copied = append([]any(nil), dest...), true
			}
			out[i] = (*sql.RawBytes)(p)
			continue
		default:
			continue
		}
		if !copied {
			out, copied = append([]any(nil), dest...), true
		}
		out[i] = s
	}
	return out
}

type microsDest struct{ t *time.Time }

func (d microsDest) Scan(v any) error {
	us, ok := v.(int64)
	if !ok {
		return fmt.Errorf("stored time is %T, not an integer", v)
	}
	*d.t = time.UnixMicro(us).UTC()
	return nil
}

type optMicrosDest struct{ t **time.Time }

func (d optMicrosDest) Scan(v any) error {
	if v == nil {
		*d.t = nil
		return nil
	}
	var t time.Time
	if err := (microsDest{&t}).Scan(v); err != nil {
		return err
	}
	*d.t = &t
	return nil
}

type jsonDest struct{ p any }

func (d jsonDest) Scan(v any) error {
	var b []byte
	switch x := v.(type) {
	case nil:
		switch p := d.p.(type) {
		case *[]string:
			*p = nil
		case *[]float64:
			*p = nil
		}
		return nil
	case string:
		b = []byte(x)
	case []byte:
		b = x
	default:
		return fmt.Errorf("stored list is %T, not JSON text", v)
	}
	if err := json.Unmarshal(b, d.p); err != nil {
		return fmt.Errorf("stored list is not a JSON array: %w", err)
	}
	return nil
}

// maxCachedStatements bounds the prepared statements kept: the texts
// depend on which filters a request sets and on the id bucket, so the set
// is small in practice; beyond the bound, statements are prepared per call.
const maxCachedStatements = 256

// stmtCache keeps prepared statements: preparing (parsing and planning) a
// statement costs more than running it for the small statements memgate
// issues, and the driver does not cache them itself. Statements are
// prepared once on the pool they belong to (database/sql re-prepares them
// on each connection as needed) and closed with the database.
type stmtCache struct {
	mu    sync.Mutex
	stmts map[stmtKey]*sql.Stmt
}

type stmtKey struct {
	pool  *sql.DB
	query string
}

func (c *stmtCache) lookup(pool *sql.DB, query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stmts[stmtKey{pool, query}]
}

func (c *stmtCache) full() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.stmts) >= maxCachedStatements
}

// get returns the statement for query on pool, preparing it if needed;
// nil, with no error, when the cache is full. The lock is not held while
// preparing: that waits for a connection, whose holder may be looking a
// statement up.
func (c *stmtCache) get(ctx context.Context, pool *sql.DB, query string) (*sql.Stmt, error) {
	k := stmtKey{pool, query}
	c.mu.Lock()
	s, ok := c.stmts[k]
	n := len(c.stmts)
	c.mu.Unlock()
	if ok || n >= maxCachedStatements {
		return s, nil
	}
	s, err := pool.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.stmts[k]; ok {
		s.Close() // prepared twice at once: keep the first
		return prev, nil
	}
	if c.stmts == nil {
		c.stmts = map[stmtKey]*sql.Stmt{}
	}
	c.stmts[k] = s
	return s, nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.stmts {
		s.Close()
	}
	c.stmts = nil
}
