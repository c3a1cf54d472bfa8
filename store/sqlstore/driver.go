// Package sqlstore is memgate's portable store: every algorithm of the
// storage port (store.Store) written once, above a driver that runs one SQL
// statement at a time inside a transaction. Remember with its replay,
// dedup, records and eviction; supersede; promote; forget; the sweeper's
// deletions; change tracking; the audit log; keys and calibrations: each
// is here, in SQL that SQLite and PostgreSQL both accept, and a backend
// (package sqlite, package postgres) is only what differs between them:
// how it opens and pools connections, runs a transaction, maps Go values
// to its column types, words a few expressions (its Dialect), locks a
// decision, erases freed bytes, interprets its errors, and migrates its
// schema.
//
// The shape follows go-cloud's portable type over a driver and River's
// executor: Store validates every input before any I/O and owns the
// contract's rules; a Driver owns nothing but its database.
//
// Rules the SQL here keeps, for every backend:
//   - The caller's scope is part of every statement that touches memories
//     for a caller (Query.Scope), never applied after reading.
//   - Every value a caller gives is a bound parameter; no caller's text is
//     ever part of SQL, a LIKE pattern, a full-text query or a JSON path.
//   - Statements use ? placeholders in order; a driver whose parameters
//     are numbered rewrites them (NumberedRebind).
package sqlstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
)

// ErrNoRows is what Row.Scan returns when the statement returned no row:
// drivers translate their own (sql.ErrNoRows, pgx.ErrNoRows) into it.
var ErrNoRows = errors.New("sqlstore: no rows in result set")

// Querier runs one statement. Arguments and scan destinations are Go
// values, which the driver maps to its column types:
//
//   - time.Time and *time.Time (nil: NULL) for times, stored with
//     microsecond precision and read back in UTC;
//   - []string and []float64 (nil: NULL) for lists;
//   - string, []byte, bool, int, int64, float64, and nil;
//   - scan destinations are pointers to those (*time.Time, *[]string,
//     *[]float64, *string, *int64, *bool, *[]byte...) or pointers to
//     pointers (**string, **int64, **time.Time) for nullable columns;
//   - *Borrowed, in Rows.Scan only, for a blob read without a copy.
//
// A driver translates nothing else: errors go back as the database gave
// them, for Driver.Interpret.
type Querier interface {
	// Exec runs a statement and returns the number of rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Query runs a statement that returns rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow runs a statement and returns its first row.
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Batcher is a capability a Querier may have: it runs several statements
// that return one row each in one round trip, calling each one's Scan with
// its row (which reports ErrNoRows for none), in order. A Scan's error
// ends the batch and is returned. Without it, the store runs them one by
// one (RowBatch).
type Batcher interface {
	QueryRowBatch(ctx context.Context, qs []BatchQuery) error
}

// BatchQuery is one statement of a batch.
type BatchQuery struct {
	SQL  string
	Args []any
	Scan func(Row) error
}

// RowBatch runs qs through q: in one round trip when q is a Batcher, else
// one after the other.
func RowBatch(ctx context.Context, q Querier, qs []BatchQuery) error {
	if len(qs) == 0 {
		return nil
	}
	if b, ok := q.(Batcher); ok {
		return b.QueryRowBatch(ctx, qs)
	}
	for _, x := range qs {
		if err := x.Scan(q.QueryRow(ctx, x.SQL, x.Args...)); err != nil {
			return err
		}
	}
	return nil
}

// Borrowed is a scan destination for a blob that the driver lends instead
// of copying (database/sql's RawBytes, pgx's DriverBytes): nil for NULL,
// and valid only until the next Rows.Next or Rows.Close. It saves a copy
// and an allocation per row where a statement streams large blobs
// (LoadIndex's vectors) that the caller decodes at once.
type Borrowed []byte

// Streamer is a capability a Driver may have: Stream runs a read of many
// rows outside any transaction, like a statement of Read's querier, and
// returns rows whose Scan reads each column where the database holds it
// instead of boxing it into a Go value first. Its Scan accepts *int64,
// *time.Time, **time.Time and *Borrowed (a text or a blob) destinations
// only. LoadIndex streams where the driver can: a cold load reads every
// row of a partition, and SQLite through database/sql spent more time
// boxing and copying each column than reading it.
type Streamer interface {
	Stream(ctx context.Context, query string, args ...any) (Rows, error)
}

// Looker is a capability a Driver may have: Lookup runs a short read (a
// few rows looked up by key, anywhere in the table) outside any
// transaction, like a statement of Read's querier, and returns rows whose
// Scan reads each column where the database holds it, into any
// destination Querier's accepts. Fetch looks its rows up where the driver
// can: a recall's verified read, on SQLite through database/sql, spent
// more time boxing and copying the columns of its rows (each with its
// content and vector) than SQLite spent finding them. Where a driver
// tunes its connections for long reads (Streamer), a lookup runs with the
// settings of short ones.
type Looker interface {
	Lookup(ctx context.Context, query string, args ...any) (Rows, error)
}

// Appender is a capability a Driver may have: Append runs fn in a write
// transaction of a file that holds the audit log's appends (table
// audit_appends: seq, at, events) and nothing else, on a connection of
// its own, so that an append never waits for Write's writer, which a
// drain holds while it moves appends into the log (audit.go). Write's
// transactions read audit_appends, and never write it.
type Appender interface {
	Append(ctx context.Context, op string, fn func(Querier) error) error
}

// Autocommitter is a capability a Driver may have: Autocommit runs one
// statement as a transaction of its own, as Write would run it alone
// (retried as Write retries, its error through Interpret with op), in one
// exchange with the database where Write makes three: BEGIN, the
// statement, COMMIT. AppendAudit writes through it where it can: every
// recall appends, and on PostgreSQL the two extra round trips were two of
// a recall's six.
type Autocommitter interface {
	Autocommit(ctx context.Context, op, query string, args ...any) (int64, error)
}

// Rows is the result of Querier.Query.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is the result of Querier.QueryRow; Scan reports ErrNoRows for none.
type Row interface {
	Scan(dest ...any) error
}

// Driver is a backend: its connections, transactions and dialect. A
// Driver must be safe for concurrent use.
type Driver interface {
	// Write runs fn in a read-write transaction and commits it when fn
	// returns nil (and rolls it back otherwise). A driver may run fn more
	// than once (PostgreSQL re-runs it after a deadlock or a
	// serialization failure), so fn starts from scratch each time. The
	// error is fn's or the commit's, through Interpret, with op naming the
	// operation for logs.
	Write(ctx context.Context, op string, fn func(Querier) error) error
	// Read returns the querier for a read outside any transaction, or
	// unavailable once the driver is closed.
	Read() (Querier, error)
	// Snapshot runs fn in a read-only transaction whose statements all see
	// one snapshot of the database.
	Snapshot(ctx context.Context, op string, fn func(Querier) error) error
	// Interpret is the one place a database error becomes a memgate
	// error: application errors (*memgate.Error) and the context's own
	// error pass unchanged; a unique violation is a conflict; a database
	// that is busy, full, unreachable or closed is unavailable; anything
	// else is internal. The result keeps the driver's error, with op, for
	// logs; its message names no path and no password.
	Interpret(ctx context.Context, op string, err error) error
	// Lock takes, inside the transaction of q, a lock on each decision
	// named by keys (for example a retention population: "population",
	// tenant, principal, kind), held until the transaction ends, so that
	// concurrent writers deciding about the same thing by reading first
	// queue and each sees the one before. A driver whose writes are
	// serialized anyway (SQLite's one writer) does nothing.
	Lock(ctx context.Context, q Querier, keys ...[]string) error
	// Erase runs after a delete (op "delete") or a forget (op "forget")
	// has committed, so that no byte of the deleted content stays in the
	// database's files where the backend can prevent it.
	Erase(ctx context.Context, op string) error
	// Dialect words what the backends' SQL does not share.
	Dialect() *Dialect
	// Close releases the driver's connections.
	Close() error
}

// Dialect is what a backend's SQL words its own way. Every field is set.
type Dialect struct {
	// ForUpdate ends a SELECT that reads a row a write transaction will
	// decide on ("" when writes are serialized anyway).
	ForUpdate string
	// SkipLocked ends the sub-SELECT of a sweeper's DELETE, so several
	// sweepers share the rows instead of queueing ("" when writes are
	// serialized anyway).
	SkipLocked string
	// Contains returns a condition that holds when column col holds text
	// as a literal, case-insensitive substring (Unicode case folding),
	// binding text through q: never a LIKE, regex or full-text pattern.
	Contains func(q *Query, col, text string) string
	// MetadataEquals returns a condition that holds when the metadata
	// column (a JSON object) holds key with a value equal to v and of v's
	// JSON type, binding key and v through q. v is a string, a bool, a
	// json.Number, a float64, an int or an int64; anything else is an
	// error saying what it must be.
	MetadataEquals func(q *Query, key string, v any) (string, error)
	// Micros returns the expression of a time column as unix
	// microseconds (an integer).
	Micros func(expr string) string
	// ByID returns col written so that the planner does not pick an index
	// on it, nor a partial index whose predicate names it, for a lookup by
	// id (SQLite's unary +, an empty concatenation in PostgreSQL); the
	// value compared is col's.
	ByID func(col string) string
	// Remote is set when every statement is a round trip to a server:
	// the store then prefers one larger statement to two small ones
	// (remember inserts unless a duplicate stands in one). In-process
	// (SQLite) the two small ones are faster.
	Remote bool
	// WriteInbox is set when the audit log's inbox is in another file
	// than the memories (SQLite): a write's events then go to
	// audit_write_inbox, beside the memories, so that the write and its
	// events commit together, and the drain moves them on (audit.go).
	WriteInbox bool
}

// Query builds a statement: every value a caller gives is bound with Arg,
// never written into the text.
type Query struct {
	b    strings.Builder
	args []any
}

// Arg binds v and returns its placeholder.
func (q *Query) Arg(v any) string {
	q.args = append(q.args, v)
	return "?"
}

// SQL appends text.
func (q *Query) SQL(s ...string) *Query {
	for _, p := range s {
		q.b.WriteString(p)
	}
	return q
}

// String returns the statement; Args its arguments.
func (q *Query) String() string { return q.b.String() }

// Args returns the bound values, in placeholder order.
func (q *Query) Args() []any { return q.args }

// In appends "col IN (?, ?, ...)" for vs, padded (with its last value) to
// a bucket of 8, 16, 32... values so that a backend that prepares
// statements sees few distinct texts. vs must not be empty.
func In[T ~string](q *Query, col string, vs []T) *Query {
	n := bucket(len(vs))
	q.SQL(col, " IN (")
	for i := range n {
		if i > 0 {
			q.SQL(", ")
		}
		q.SQL(q.Arg(string(vs[min(i, len(vs)-1)])))
	}
	return q.SQL(")")
}

// bucket rounds n up to the next of 8, 16, 32, ...
func bucket(n int) int {
	b := 8
	for b < n {
		b *= 2
	}
	return b
}

// NumberedRebind is a Dialect.Rebind for backends whose placeholders are
// $1, $2...: it rewrites every ? outside a quoted literal or identifier.
func NumberedRebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
