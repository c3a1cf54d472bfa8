package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/memgate/memgate/store/sqlstore"
)

// Streaming reads (sqlstore.Streamer)
//
// A cold load reads every row of a partition. Through database/sql, the
// driver copied each text and blob of each row into a new Go allocation
// and boxed every column into a driver.Value, and that cost more than
// SQLite's own work: for 10,000 memories about 55 ms against 25 ms
// (BENCHMARKS.md, "Cold first recall, third pass"). Stream runs such a
// read on connections of its own through SQLite's C API, as
// modernc.org/sqlite/lib exposes it (the functions the driver calls), and
// its rows' Scan reads each column where SQLite holds it: a blob or a text
// is lent as SQLite's bytes, valid until the next step.
//
// Lookup (sqlstore.Looker) runs Fetch's short reads the same way: a few
// rows by id, where database/sql cost more than SQLite's step (statement
// lookup, locking in Rows.Next, every column boxed and every text and
// blob copied).
//
// The connections open the database file only (not the audit log), read
// only (query_only) with the readers' page cache. A stream maps the file
// (mmap_size) for as long as it runs: a cold load is one long read. A
// lookup reads without the map, as the readers do (sqlite.go, "Readers
// open after the writer"): under writes, a read transaction after a
// commit unmaps the whole file, and the few pages a lookup touches would
// each fault in again. Streams and lookups have a pool each, so that a
// Fetch never waits for cold loads to end; a pool's connections are
// opened with its setting of the map. In each pool at most
// Config.MaxReaders run at once; idle ones are kept for the next read.
// Each is used by one goroutine at a time, which is all SQLite asks of a
// connection opened without its mutex.

// streamPool holds the streaming connections.
type streamPool struct {
	uri  string
	busy time.Duration
	mmap int           // each connection's mmap_size: streamMmap or 0
	sem  chan struct{} // a token per connection in use

	mu     sync.Mutex
	idle   []*streamConn
	closed bool
}

// newStreamPool returns a pool of at most max connections, mapping the file
// (a pool of streams) or not (of lookups).
func newStreamPool(uri string, busy time.Duration, max int, mapped bool) *streamPool {
	p := &streamPool{uri: uri, busy: busy, sem: make(chan struct{}, max)}
	if mapped {
		p.mmap = streamMmap
	}
	return p
}

// get returns a connection, waiting while MaxReaders are in use.
func (p *streamPool) get(ctx context.Context) (*streamConn, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.sem
		return nil, sqlstore.ErrClosed()
	}
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	c, err := openStreamConn(p.uri, p.busy, p.mmap)
	if err != nil {
		<-p.sem
		return nil, err
	}
	return c, nil
}

// put gives c back; broken (an error left it in an unknown state) closes it.
func (p *streamPool) put(c *streamConn, broken bool) {
	p.mu.Lock()
	if p.closed || broken {
		p.mu.Unlock()
		c.close()
	} else {
		p.idle = append(p.idle, c)
		p.mu.Unlock()
	}
	<-p.sem
}

// close closes the idle connections, and the others as they come back.
func (p *streamPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, c := range idle {
		c.close()
	}
}

// streamConn is a database connection of the C API, with its statements.
type streamConn struct {
	tls   *libc.TLS
	db    uintptr
	stmts map[string]uintptr
}

// maxStreamStatements bounds the statements a connection keeps prepared:
// Fetch's texts vary with the id bucket and the filters a recall sets.
const maxStreamStatements = 32

// streamMmap is the memory map of a stream (a long read), in bytes.
const streamMmap = 268435456

func openStreamConn(uri string, busy time.Duration, mmap int) (_ *streamConn, err error) {
	c := &streamConn{tls: libc.NewTLS(), stmts: map[string]uintptr{}}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	pp := c.tls.Alloc(ptrSize)
	defer c.tls.Free(ptrSize)
	name, err := libc.CString(uri)
	if err != nil {
		return nil, err
	}
	defer c.free(name)
	// No mutex: a connection serves one goroutine at a time (streamPool).
	rc := sqlite3.Xsqlite3_open_v2(c.tls, name, pp, sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_URI|sqlite3.SQLITE_OPEN_NOMUTEX, 0)
	c.db = *(*uintptr)(cptr(pp))
	if rc != sqlite3.SQLITE_OK {
		if c.db == 0 {
			return nil, &streamError{code: int(rc), msg: libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc))}
		}
		return nil, c.errorOf(rc)
	}
	sqlite3.Xsqlite3_extended_result_codes(c.tls, c.db, 1)
	sqlite3.Xsqlite3_busy_timeout(c.tls, c.db, int32(busy.Milliseconds()))
	for _, pragma := range []string{"PRAGMA query_only = ON", fmt.Sprintf("PRAGMA mmap_size = %d", mmap), "PRAGMA cache_size = -16384"} {
		if err := c.exec(pragma); err != nil {
			return nil, fmt.Errorf("%s: %w", pragma, err)
		}
	}
	return c, nil
}

func (c *streamConn) close() {
	for _, s := range c.stmts {
		sqlite3.Xsqlite3_finalize(c.tls, s)
	}
	c.stmts = nil
	if c.db != 0 {
		sqlite3.Xsqlite3_close_v2(c.tls, c.db)
		c.db = 0
	}
	c.tls.Close()
}

// ptrSize is the size of a C pointer, for the out-parameters of the C API.
const ptrSize = int(unsafe.Sizeof(uintptr(0)))

// free frees memory of libc.CString.
func (c *streamConn) free(p uintptr) { libc.Xfree(c.tls, p) }

// exec runs a statement that returns nothing worth reading.
func (c *streamConn) exec(query string) error {
	s, err := c.prepare(query, false)
	if err != nil {
		return err
	}
	defer sqlite3.Xsqlite3_finalize(c.tls, s)
	for {
		switch rc := sqlite3.Xsqlite3_step(c.tls, s); rc {
		case sqlite3.SQLITE_ROW:
		case sqlite3.SQLITE_DONE:
			return nil
		default:
			return c.errorOf(rc)
		}
	}
}

// prepare compiles query; persistent for a statement to keep.
func (c *streamConn) prepare(query string, persistent bool) (uintptr, error) {
	z, err := libc.CString(query)
	if err != nil {
		return 0, err
	}
	defer c.free(z)
	pp := c.tls.Alloc(ptrSize)
	defer c.tls.Free(ptrSize)
	var flags uint32
	if persistent {
		flags = sqlite3.SQLITE_PREPARE_PERSISTENT
	}
	if rc := sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, z, int32(len(query)), flags, pp, 0); rc != sqlite3.SQLITE_OK {
		return 0, c.errorOf(rc)
	}
	s := *(*uintptr)(cptr(pp))
	if s == 0 {
		return 0, errors.New("sqlite: empty statement")
	}
	return s, nil
}

// stmt returns the prepared statement of query, preparing it once.
func (c *streamConn) stmt(query string) (uintptr, error) {
	if s, ok := c.stmts[query]; ok {
		return s, nil
	}
	s, err := c.prepare(query, true)
	if err != nil {
		return 0, err
	}
	if len(c.stmts) >= maxStreamStatements {
		for q, old := range c.stmts { // any one: the set is small in practice
			sqlite3.Xsqlite3_finalize(c.tls, old)
			delete(c.stmts, q)
			break
		}
	}
	c.stmts[query] = s
	return s, nil
}

// bind binds args (mapped as bind maps them for database/sql) to s.
func (c *streamConn) bind(s uintptr, args []any) error {
	args, err := bind(args)
	if err != nil {
		return err
	}
	for i, a := range args {
		n := int32(i + 1)
		var rc int32
		switch v := a.(type) {
		case nil:
			rc = sqlite3.Xsqlite3_bind_null(c.tls, s, n)
		case int64:
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, s, n, v)
		case int:
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, s, n, int64(v))
		case float64:
			rc = sqlite3.Xsqlite3_bind_double(c.tls, s, n, v)
		case bool:
			var b int64
			if v {
				b = 1
			}
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, s, n, b)
		case string:
			rc, err = c.bindBytes(s, n, v, true)
		case []byte:
			if v == nil {
				rc = sqlite3.Xsqlite3_bind_null(c.tls, s, n)
			} else {
				rc, err = c.bindBytes(s, n, string(v), false)
			}
		default:
			return fmt.Errorf("sqlite: stream: argument %d is %T, which a stream does not bind", n, a)
		}
		if err != nil {
			return err
		}
		if rc != sqlite3.SQLITE_OK {
			return c.errorOf(rc)
		}
	}
	return nil
}

// bindBytes binds v as a text or a blob, which SQLite copies
// (SQLITE_TRANSIENT).
func (c *streamConn) bindBytes(s uintptr, n int32, v string, text bool) (int32, error) {
	p, err := libc.CString(v) // v's bytes, whatever they are, and a NUL
	if err != nil {
		return 0, err
	}
	defer c.free(p)
	if text {
		return sqlite3.Xsqlite3_bind_text(c.tls, s, n, p, int32(len(v)), sqlite3.SQLITE_TRANSIENT), nil
	}
	return sqlite3.Xsqlite3_bind_blob(c.tls, s, n, p, int32(len(v)), sqlite3.SQLITE_TRANSIENT), nil
}

// errorOf is the error of a failed call that returned rc.
func (c *streamConn) errorOf(rc int32) error {
	code := int(sqlite3.Xsqlite3_extended_errcode(c.tls, c.db))
	if code&0xff != int(rc)&0xff {
		code = int(rc)
	}
	return &streamError{code: code, msg: libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db))}
}

// streamError is an error of a streaming connection: SQLite's (extended)
// result code, read by interpretError as a *sqlite.Error's.
type streamError struct {
	code int
	msg  string
}

func (e *streamError) Error() string {
	return fmt.Sprintf("%s (%d)", e.msg, e.code)
}

// Code returns the SQLite result code.
func (e *streamError) Code() int { return e.code }

// Stream implements sqlstore.Streamer: a long read, through the memory map.
func (c *conn) Stream(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	return c.streamRead(ctx, c.stream, query, args)
}

// Lookup implements sqlstore.Looker: a short read, without the memory map.
func (c *conn) Lookup(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	return c.streamRead(ctx, c.lookup, query, args)
}

// streamRead runs query on a connection of pool. A context already done
// fails it, as database/sql fails a query: the pool's get may find a free
// connection as well, and a short read checks the context no later.
func (c *conn) streamRead(ctx context.Context, pool *streamPool, query string, args []any) (sqlstore.Rows, error) {
	if c.isClosed() || pool == nil {
		return nil, sqlstore.ErrClosed()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sc, err := pool.get(ctx)
	if err != nil {
		return nil, err
	}
	s, err := sc.stmt(query)
	if err == nil {
		err = sc.bind(s, args)
	}
	if err != nil {
		if s != 0 {
			sqlite3.Xsqlite3_clear_bindings(sc.tls, s)
		}
		pool.put(sc, false)
		return nil, err
	}
	return &streamRows{pool: pool, c: sc, s: s, ctx: ctx}, nil
}

// streamRows are the rows of a Stream, until Close gives the connection
// back.
type streamRows struct {
	pool *streamPool
	c    *streamConn
	s    uintptr
	ctx  context.Context
	n    int
	err  error
	done bool
}

// ctxEvery is how many rows Next reads between looks at the context.
const ctxEvery = 64

func (r *streamRows) Next() bool {
	if r.done {
		return false
	}
	if r.n++; r.n%ctxEvery == 0 {
		if err := r.ctx.Err(); err != nil {
			r.err = err
			r.finish()
			return false
		}
	}
	switch rc := sqlite3.Xsqlite3_step(r.c.tls, r.s); rc {
	case sqlite3.SQLITE_ROW:
		return true
	case sqlite3.SQLITE_DONE:
	default:
		r.err = r.c.errorOf(rc)
	}
	r.finish()
	return false
}

// finish ends the statement (and so its read transaction).
func (r *streamRows) finish() {
	if !r.done {
		r.done = true
		sqlite3.Xsqlite3_reset(r.c.tls, r.s)
		sqlite3.Xsqlite3_clear_bindings(r.c.tls, r.s)
	}
}

// empty is what a lent zero-length value points at: not nil, which is NULL.
var empty = []byte{}

// Scan implements sqlstore.Rows: every destination of sqlstore.Querier,
// each read where SQLite holds it. A text or blob is copied once, into a
// string or []byte destination, or lent: to a *Borrowed, or to an
// sql.Scanner (which must not keep it, as database/sql's contract says)
// and a list's JSON decoder. A NULL into a destination that cannot hold
// one is an error, as it is through database/sql.
func (r *streamRows) Scan(dest ...any) error {
	if r.done {
		return errors.New("sqlite: stream: Scan without a row")
	}
	tls, s := r.c.tls, r.s
	if int(sqlite3.Xsqlite3_column_count(tls, s)) != len(dest) {
		return fmt.Errorf("sqlite: stream: %d destinations for %d columns", len(dest), sqlite3.Xsqlite3_column_count(tls, s))
	}
	for i, d := range dest {
		col := int32(i)
		typ := sqlite3.Xsqlite3_column_type(tls, s, col)
		null := typ == sqlite3.SQLITE_NULL
		switch d := d.(type) {
		case *sqlstore.Borrowed:
			if null {
				*d = nil
				continue
			}
			*d = r.bytes(col)
		case *int64:
			if null {
				return fmt.Errorf("sqlite: stream: column %d is NULL", i)
			}
			*d = sqlite3.Xsqlite3_column_int64(tls, s, col)
		case **int64:
			if null {
				*d = nil
				continue
			}
			v := sqlite3.Xsqlite3_column_int64(tls, s, col)
			*d = &v
		case *float64:
			if null {
				return fmt.Errorf("sqlite: stream: column %d is NULL", i)
			}
			*d = sqlite3.Xsqlite3_column_double(tls, s, col)
		case *bool:
			if null {
				return fmt.Errorf("sqlite: stream: column %d is NULL", i)
			}
			switch v := sqlite3.Xsqlite3_column_int64(tls, s, col); v {
			case 0, 1:
				*d = v == 1
			default:
				return fmt.Errorf("sqlite: stream: column %d is %d, not a boolean", i, v)
			}
		case *time.Time:
			if null {
				return fmt.Errorf("sqlite: stream: column %d is NULL", i)
			}
			*d = time.UnixMicro(sqlite3.Xsqlite3_column_int64(tls, s, col)).UTC()
		case **time.Time:
			if null {
				*d = nil
				continue
			}
			t := time.UnixMicro(sqlite3.Xsqlite3_column_int64(tls, s, col)).UTC()
			*d = &t
		case *string:
			if null {
				return fmt.Errorf("sqlite: stream: column %d is NULL", i)
			}
			*d = string(r.bytes(col))
		case **string:
			if null {
				*d = nil
				continue
			}
			v := string(r.bytes(col))
			*d = &v
		case *[]byte:
			// An empty blob is nil, as database/sql reads it from the
			// driver (an empty text is not).
			if null || typ == sqlite3.SQLITE_BLOB && sqlite3.Xsqlite3_column_bytes(tls, s, col) == 0 {
				*d = nil
				continue
			}
			*d = append([]byte{}, r.bytes(col)...)
		case *[]string, *[]float64:
			var v any // NULL
			if !null {
				v = r.bytes(col)
			}
			if err := (jsonDest{d}).Scan(v); err != nil {
				return err
			}
		case sql.Scanner:
			var v any
			switch typ {
			case sqlite3.SQLITE_INTEGER:
				v = sqlite3.Xsqlite3_column_int64(tls, s, col)
			case sqlite3.SQLITE_FLOAT:
				v = sqlite3.Xsqlite3_column_double(tls, s, col)
			case sqlite3.SQLITE_TEXT, sqlite3.SQLITE_BLOB:
				v = r.bytes(col)
			}
			if err := d.Scan(v); err != nil {
				return fmt.Errorf("sqlite: stream: column %d: %w", i, err)
			}
		default:
			return fmt.Errorf("sqlite: stream: cannot scan into %T", d)
		}
	}
	return nil
}

// bytes lends the bytes of column col of the current row (a text's as
// they are), valid until the next step; not nil, for a column not NULL.
func (r *streamRows) bytes(col int32) []byte {
	p := sqlite3.Xsqlite3_column_blob(r.c.tls, r.s, col)
	n := int(sqlite3.Xsqlite3_column_bytes(r.c.tls, r.s, col))
	if p == 0 || n == 0 {
		return empty
	}
	return cbytes(p, n)
}

func (r *streamRows) Err() error { return r.err }

// Close gives the connection back; a statement that failed closes it.
func (r *streamRows) Close() {
	if r.c == nil {
		return
	}
	r.finish()
	r.pool.put(r.c, r.err != nil && r.ctx.Err() == nil)
	r.c = nil
}

// cptr is the address p of C memory (libc's or SQLite's) as a pointer.
func cptr(p uintptr) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(nil), p) }

// cbytes is the n bytes of C memory at p.
func cbytes(p uintptr, n int) []byte { return unsafe.Slice((*byte)(cptr(p)), n) }
