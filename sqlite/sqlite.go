// Package sqlite is memgate's embedded storage backend, one SQLite database
// in pure Go (modernc.org/sqlite, no cgo), the default for a single
// memgate process: a driver of the portable store (package sqlstore, which
// holds every algorithm and statement of store.Store), and DB, the store
// over it.
//
// The driver is what is SQLite's own: the writer and the readers, the
// prepared statement cache, the mapping of times to unix microseconds and
// of lists to JSON text, the dialect (a literal, Unicode case-folding
// substring test with instr, never LIKE, FTS MATCH or regex syntax;
// metadata matched with json_each), secure deletion and the truncated
// write-ahead log after a forget, and interpretError, the one place driver
// errors become memgate errors. The audit log is append-only: triggers in
// the schema abort any UPDATE or DELETE of it, whoever issues it. It lives
// in a file of its own beside the database (AuditPath), attached to every
// connection, so that a recall's audit commit leaves the readers' cache of
// the database file valid (see audit.go); Files names every file.
//
// Faults: a full disk, a size cap reached (Config.MaxBytes), an I/O error,
// a file that cannot be opened or has become read-only are unavailable, with
// a message naming the condition. A write that meets one is rolled back
// (by SQLite, or by the Rollback that follows any failed write), so nothing
// of it is committed; the read connections keep answering, and writes
// succeed again once the condition is gone: nothing needs reopening.
//
// Concurrency: one writer connection (every write is a BEGIN IMMEDIATE
// transaction on it, so writers queue in Go instead of meeting SQLITE_BUSY
// lock-upgrade deadlocks), a separate pool of read-only connections, which
// WAL lets run alongside the writer, and a checkpointer's connection, which
// copies the write-ahead logs into the files beside the writer instead of in
// its commits (checkpoint.go).
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
	"github.com/memgate/memgate/store/sqlstore"
)

var _ store.Store = (*DB)(nil)

// Defaults for Config.
const (
	// DefaultBusyTimeout is how long a statement waits for a lock held by
	// another process (or by a WAL checkpoint) before it fails as unavailable.
	DefaultBusyTimeout = 5 * time.Second
	// DefaultMaxReaders is the size of each read connection pool: the
	// readers', the cold loads' streams' and Fetch's lookups' (stream.go),
	// so a DB opens at most 3·MaxReaders read connections, lazily.
	DefaultMaxReaders = 4
)

// Config tunes a DB. The zero value is valid and means the defaults.
type Config struct {
	BusyTimeout time.Duration // default DefaultBusyTimeout
	MaxReaders  int           // each read pool's connections; default DefaultMaxReaders
	// MaxBytes caps the size of each of the database's three files, the
	// database, its audit log and the log's inbox: every connection runs PRAGMA
	// max_page_count on each with MaxBytes divided by the page size, so a
	// write that would grow one past it fails as unavailable ("the
	// database is full") and stores nothing; deleting memories frees pages
	// for new ones, and reopening with a larger cap raises it. The WAL
	// files are not counted (they are reset at checkpoints). A file
	// already larger than the cap opens, and cannot grow. 0 means no cap;
	// negative is refused.
	MaxBytes int64

	// checkpointPages is how many pages the writer writes between
	// checkpoints (checkpoint.go); 0 means checkpointPages, negative
	// never: the tests' control, whose logs grow.
	checkpointPages int64
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.BusyTimeout <= 0 {
		c.BusyTimeout = DefaultBusyTimeout
	}
	if c.MaxReaders <= 0 {
		c.MaxReaders = DefaultMaxReaders
	}
	if c.checkpointPages == 0 {
		c.checkpointPages = checkpointPages
	}
	return c
}

// Option changes the Config of Open.
type Option func(*Config)

// WithBusyTimeout sets Config.BusyTimeout.
func WithBusyTimeout(d time.Duration) Option { return func(c *Config) { c.BusyTimeout = d } }

// WithMaxReaders sets Config.MaxReaders.
func WithMaxReaders(n int) Option { return func(c *Config) { c.MaxReaders = n } }

// WithMaxBytes sets Config.MaxBytes.
func WithMaxBytes(n int64) Option { return func(c *Config) { c.MaxBytes = n } }

// DB is a memgate store in one SQLite file: the portable store
// (sqlstore.Store) over this package's driver. It is safe for concurrent
// use.
type DB struct {
	*sqlstore.Store
	*pools
	c    *conn
	path string
}

// pools are the writer, the readers and the appender.
type pools struct {
	w *sql.DB // exactly one connection: every write goes through it
	r *sql.DB // read-only connections (PRAGMA query_only)
	a *sql.DB // exactly one connection, to the inbox file: audit appends (inbox.go)
}

// Open opens (creating if needed) the database file at path, with its
// audit log file (AuditPath), and brings its schema up to date; an audit
// log found in the database file (an older memgate's, or a backup's) is
// moved to the audit log file, and a database whose log has moved but
// whose audit log file is missing is refused. It refuses a database whose schema is newer than this
// binary knows (ErrSchemaTooNew) and in-memory databases (the writer and the
// readers are separate connections, which must share one file).
//
// The connections run in WAL mode with synchronous=NORMAL: a commit is
// appended to the WAL without an fsync, and the WAL is synced at checkpoints.
// That is durable against a crash of the process (the OS has the WAL pages)
// and keeps the database consistent on power loss, which can at worst lose the
// last transactions since a checkpoint, never corrupt the file.
func Open(ctx context.Context, path string, opts ...Option) (*DB, error) {
	var cfg Config
	for _, o := range opts {
		o(&cfg)
	}
	cfg = cfg.WithDefaults()

	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlite: open %q: need a plain file path (no in-memory database, no URI)", path)
	}
	if cfg.MaxBytes < 0 {
		return nil, fmt.Errorf("sqlite: open %s: the size cap must not be negative", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	// A file: URI keeps a path with '?' or '#' from being read as parameters.
	uri := "file:" + (&url.URL{Path: abs}).EscapedPath()
	auditURI := "file:" + (&url.URL{Path: AuditPath(abs)}).EscapedPath()
	inboxURI := "file:" + (&url.URL{Path: InboxPath(abs)}).EscapedPath()
	busy := fmt.Sprintf("_pragma=busy_timeout(%d)", cfg.BusyTimeout.Milliseconds())
	_, statErr := os.Stat(AuditPath(abs))
	auditExisted := statErr == nil
	_, statErr = os.Stat(InboxPath(abs))
	inboxExisted := statErr == nil

	db := &DB{path: path, pools: new(pools)}
	db.c = &conn{cfg: cfg, pools: db.pools, ckpt: newCheckpointer(cfg.checkpointPages)}
	db.Store = sqlstore.New(db.c)
	// The appender first: it creates the inbox file, which every other
	// connection attaches (inbox.go).
	db.a, err = openPool(inboxURI+"?"+busy+
		"&_pragma=synchronous(NORMAL)&_pragma=secure_delete(ON)&_txlock=immediate", nil, nil, cfg.MaxBytes, db.c.ckpt)
	if err == nil {
		db.a.SetMaxOpenConns(1)
		db.a.SetMaxIdleConns(1)
		db.a.SetConnMaxLifetime(0)
		db.a.SetConnMaxIdleTime(0)
		err = setUpInbox(ctx, db.a, cfg.BusyTimeout)
		if err != nil {
			db.a.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: the audit inbox: %w", path, err)
	}
	// The writer does not checkpoint: the checkpointer does (checkpoint.go).
	// Its page cache of the audit log is the readers' size: the drain
	// inserts a reference per memory a recall named into audit_refs, one
	// random leaf each, and with SQLite's default 2 MB, once the log held
	// 50,000 recalls, reading leaves back from the file was a quarter of
	// the drain's CPU (BENCHMARKS.md). A size set in the DSN would be the
	// main schema's only. It does not open the inbox file: a drain reads
	// the appends on a reader, so no write holds the file.
	db.w, err = openPool(uri+"?"+busy+
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)&_pragma=secure_delete(ON)&_pragma=temp_store(MEMORY)&_txlock=immediate",
		[]attachment{{"audit", auditURI}},
		[]string{"PRAGMA audit.synchronous = NORMAL", "PRAGMA audit.secure_delete = ON", "PRAGMA audit.cache_size = -16384"}, cfg.MaxBytes, db.c.ckpt)
	if err != nil {
		db.a.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// One writer: the connection lives forever so its pragmas do too.
	db.w.SetMaxOpenConns(1)
	db.w.SetMaxIdleConns(1)
	db.w.SetConnMaxLifetime(0)
	db.w.SetConnMaxIdleTime(0)

	if err := db.setUp(ctx); err != nil {
		db.w.Close()
		db.a.Close()
		if !auditExisted && errors.Is(err, errNoAuditLog) {
			// Attaching created the audit file, and opening the appender
			// the inbox file if there was none (one left by a process that
			// had the log holds its events); this Open created nothing
			// else.
			created := Files(abs)[3:6]
			if !inboxExisted {
				created = Files(abs)[3:]
			}
			for _, p := range created {
				os.Remove(p)
			}
		}
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := floorInbox(ctx, db.w, db.a); err != nil {
		db.w.Close()
		db.a.Close()
		return nil, fmt.Errorf("sqlite: open %s: the audit inbox: %w", path, err)
	}
	// Readers open after the writer has switched the files to WAL.
	// They keep a larger page cache (recall reads a few rows at random on
	// every call) and read pages with read(2), not through a memory map:
	// a read transaction that finds the WAL changed since the
	// connection's last one unmaps the whole file (pagerBeginReadTransaction
	// calls sqlite3OsUnfetch(fd, 0, 0)), so under writes every read
	// mapped it again and took a page fault on every page it touched (14 %
	// of the server's CPU in a mixed soak: BENCHMARKS.md, "Readers without
	// a memory map"). Streams (stream.go) still map: a cold load is one
	// long read; Fetch's lookups, on the same connections, do not.
	db.r, err = openPool(uri+"?"+busy+"&_pragma=foreign_keys(ON)&_pragma=query_only(ON)"+
		"&_pragma=mmap_size(0)&_pragma=cache_size(-16384)&_pragma=temp_store(MEMORY)",
		[]attachment{{"audit", auditURI}, {"inbox", inboxURI + "?mode=ro"}}, nil, cfg.MaxBytes, nil)
	if err != nil {
		db.w.Close()
		db.a.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.r.SetMaxOpenConns(cfg.MaxReaders)
	db.r.SetMaxIdleConns(cfg.MaxReaders)
	db.c.stream = newStreamPool(uri, cfg.BusyTimeout, cfg.MaxReaders, true)
	db.c.lookup = newStreamPool(uri, cfg.BusyTimeout, cfg.MaxReaders, false)
	if err := db.r.PingContext(ctx); err != nil {
		db.w.Close()
		db.r.Close()
		db.a.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// The checkpointer's connection syncs as the writer's does: a
	// checkpoint fsyncs the log before it copies it, and the database
	// file after. It needs no size cap: a checkpoint copies pages the
	// writer has written within it.
	ckpt, err := openPool(uri+"?"+busy+"&_pragma=synchronous(NORMAL)", []attachment{{"audit", auditURI}, {"inbox", inboxURI}},
		[]string{"PRAGMA audit.synchronous = NORMAL", "PRAGMA inbox.synchronous = NORMAL"}, 0, nil)
	if err == nil {
		ckpt.SetMaxOpenConns(1)
		ckpt.SetMaxIdleConns(1)
		ckpt.SetConnMaxLifetime(0)
		ckpt.SetConnMaxIdleTime(0)
		err = ckpt.PingContext(ctx)
		if err != nil {
			ckpt.Close()
		}
	}
	if err != nil {
		db.w.Close()
		db.r.Close()
		db.a.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// What opening wrote (migrations) is counted: the hook ran.
	db.c.ckpt.start(ckpt, db.w, db.a)
	return db, nil
}

// openPool returns a connection pool for dsn whose every connection has
// the files of attach attached (the audit log's as schema audit, the
// inbox's as schema inbox), then runs pragmas (the attached schemas' own
// settings), and, when maxBytes > 0, has the size cap set on every file
// it writes (dbConnector); with a checkpointer (the writer's and the
// appender's pools), the connection leaves its checkpoints to it.
func openPool(dsn string, attach []attachment, pragmas []string, maxBytes int64, ckpt *checkpointer) (*sql.DB, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(dbConnector{Connector: c, attach: attach, pragmas: pragmas, maxBytes: maxBytes, ckpt: ckpt}), nil
}

// attachment is a file a connection attaches: its schema name and URI
// (with mode=ro where the connection only reads it).
type attachment struct{ schema, uri string }

// dbConnector sets up each connection database/sql opens (a replaced one
// included): ATTACH of the other files, their pragmas, PRAGMA
// max_page_count on each file it writes, and the writer's and the
// appender's checkpoint settings (checkpointer.attach). Attachments and
// these pragmas last as long as their connection, so they are set here
// rather than once.
type dbConnector struct {
	driver.Connector
	attach   []attachment
	pragmas  []string
	maxBytes int64
	ckpt     *checkpointer // the writer's and the appender's pools only
}

func (c dbConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.setUp(ctx, conn); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

func (c dbConnector) setUp(ctx context.Context, conn driver.Conn) error {
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		return errors.New("the driver's connection cannot execute statements")
	}
	for _, a := range c.attach {
		if _, err := ex.ExecContext(ctx, "ATTACH DATABASE ? AS "+a.schema, []driver.NamedValue{{Ordinal: 1, Value: a.uri}}); err != nil {
			return fmt.Errorf("attach the %s file: %w", a.schema, err)
		}
	}
	for _, p := range c.pragmas {
		if _, err := ex.ExecContext(ctx, p, nil); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	if c.maxBytes > 0 {
		schemas := []string{"main"}
		for _, a := range c.attach {
			if !strings.HasSuffix(a.uri, "mode=ro") {
				schemas = append(schemas, a.schema)
			}
		}
		for _, schema := range schemas {
			if err := setMaxPageCount(ctx, conn, schema, c.maxBytes); err != nil {
				return fmt.Errorf("set the size cap: %w", err)
			}
		}
	}
	if c.ckpt != nil {
		if err := c.ckpt.attach(ctx, conn); err != nil {
			return fmt.Errorf("leave checkpoints to the checkpointer: %w", err)
		}
	}
	return nil
}

func setMaxPageCount(ctx context.Context, conn driver.Conn, schema string, maxBytes int64) error {
	q, ok := conn.(driver.QueryerContext)
	if !ok {
		return errors.New("the driver's connection cannot query")
	}
	one := func(query string) (int64, error) {
		rows, err := q.QueryContext(ctx, query, nil)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		v := make([]driver.Value, len(rows.Columns()))
		if err := rows.Next(v); err != nil {
			return 0, err
		}
		n, ok := v[0].(int64)
		if !ok {
			return 0, fmt.Errorf("%s: got %T", query, v[0])
		}
		return n, nil
	}
	pageSize, err := one("PRAGMA " + schema + ".page_size")
	if err != nil {
		return err
	}
	// SQLite keeps the cap at the current size when it is asked for less.
	_, err = one(fmt.Sprintf("PRAGMA %s.max_page_count = %d", schema, max(maxBytes/pageSize, 1)))
	return err
}

// setUp switches the file to WAL and applies pending migrations.
func (db *DB) setUp(ctx context.Context) error {
	// The database and its audit log (the appender switched the inbox).
	if err := setWAL(ctx, db.w, db.c.cfg.BusyTimeout, "main", "audit"); err != nil {
		return err
	}
	ms, err := sqlstore.LoadMigrations(migrationFiles)
	if err != nil {
		return err
	}
	if err := migrate(ctx, db.w, ms); err != nil {
		return err
	}
	// A log in the database file is an older memgate's or a backup's:
	// an inbox file beside it holds appends of another log (a backup
	// restored over a database), which must not join this one. Cleared
	// before the move, so that a crash in between clears it again.
	var inMain int
	if err := db.w.QueryRowContext(ctx, "SELECT COUNT(*) FROM main.sqlite_schema WHERE type = 'table' AND name = 'audit_events'").Scan(&inMain); err != nil {
		return err
	}
	if inMain > 0 {
		if err := inTx(ctx, db.a, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "DELETE FROM audit_appends")
			return err
		}); err != nil {
			return fmt.Errorf("clear the audit inbox of another log: %w", err)
		}
	}
	return relocateAudit(ctx, db.w)
}

// setWAL switches the files of schemas on db's connection to WAL mode (a
// no-op for a file that is already).
//
// Switching takes an exclusive lock, and SQLite answers SQLITE_BUSY at once,
// without its busy handler, when another connection holds the file then:
// two processes, or two Opens in one, creating the same new file together.
// So the switch is retried here, for as long as the busy timeout, as any
// other statement would wait for its lock. It is not a DSN pragma for this
// reason: that one runs when the connection opens, where nothing retries it.
func setWAL(ctx context.Context, db *sql.DB, busyTimeout time.Duration, schemas ...string) error {
	deadline := time.Now().Add(busyTimeout)
	pause := time.Millisecond
	for _, schema := range schemas {
		for {
			var mode string
			err := db.QueryRowContext(ctx, "PRAGMA "+schema+".journal_mode=WAL").Scan(&mode)
			if err == nil {
				if !strings.EqualFold(mode, "wal") {
					return fmt.Errorf("journal_mode is %q, want wal (is the file on a filesystem without shared memory?)", mode)
				}
				break
			}
			var se *sqlite.Error
			if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().Add(pause).After(deadline) {
				return err
			}
			t := time.NewTimer(pause)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
			pause = min(2*pause, 50*time.Millisecond)
		}
	}
	return nil
}

// Path returns the path the database was opened with.
func (db *DB) Path() string { return db.path }

// Close closes the database (DB.Close is the store's, which closes its
// driver). It is idempotent: later calls return the result of the first.
// Every method called after Close fails as unavailable.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		// The checkpointer first: the writer, closed last, checkpoints
		// the logs and removes them.
		ckptErr := c.ckpt.close()
		c.stmts.close()
		if c.stream != nil {
			c.stream.close()
			c.lookup.close()
		}
		// The appender after the writer and the readers, which read its
		// file: the last connection to a file checkpoints its log and
		// removes it, and only the appender can write the inbox's.
		c.closeErr = errors.Join(ckptErr, c.r.Close(), c.w.Close(), c.a.Close())
	})
	return c.closeErr
}

func (c *conn) isClosed() bool { return c.closed.Load() }

// reader returns the read pool, or unavailable once the DB is closed.
func (c *conn) reader() (*sql.DB, error) {
	if c.isClosed() {
		return nil, sqlstore.ErrClosed()
	}
	return c.r, nil
}

// The errors interpretError produces. Each call makes a new value, so no
// caller can alter another's error.

func errFull() *memgate.Error {
	return &memgate.Error{Code: memgate.EUNAVAILABLE,
		Message: "the database is full: its disk has no space left or it reached its size cap; free space and try again"}
}

func errIO() *memgate.Error {
	return &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "the database had an I/O error on its disk, try again"}
}

func errCantOpen() *memgate.Error {
	return &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "the database file cannot be opened"}
}

func errReadOnly() *memgate.Error {
	return &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "the database file is read-only"}
}

// interpretError is the one place a driver error becomes a memgate error.
// Application errors pass unchanged, and so does the context's own error when
// ctx is done (a cancelled request is not a database failure). Otherwise the
// result wraps both a *memgate.Error, so ErrorCode and ErrorMessage see a
// code and a caller-safe message, and the driver error with op, for logs.
//
//   - unique or primary key violation: conflict (the id)
//   - busy or locked (after the busy timeout): unavailable
//   - disk full or size cap reached (SQLITE_FULL), any I/O error
//     (SQLITE_IOERR and its extended codes: a failed read, write, fsync or
//     truncate, a file size limit), a file that cannot be opened
//     (SQLITE_CANTOPEN) or written (SQLITE_READONLY: opened read-only by
//     the file system, or moved or deleted under the process; a write on
//     a query_only reader would show the same, and no code path makes
//     one): unavailable, each with its own message
//   - a closed database: unavailable
//   - anything else: internal
//
// No message holds a path or anything the driver said: the driver's error
// is kept for the log line only.
func interpretError(ctx context.Context, op string, err error) error {
	if settled, ok := sqlstore.Settled(ctx, err); ok {
		return settled
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	code := sqlstore.ErrInternal()
	var se *sqlite.Error
	var sterr *streamError
	var rc int
	switch {
	case errors.As(err, &se):
		rc = se.Code()
	case errors.As(err, &sterr):
		rc = sterr.Code()
	}
	switch {
	case rc != 0:
		switch rc {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			code = sqlstore.ErrDuplicateID()
			if strings.Contains(err.Error(), "memories.key") {
				code = sqlstore.ErrKeyTaken() // the index of memory keys
			}
		default:
			switch rc & 0xff {
			case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
				code = sqlstore.ErrBusy()
			case sqlite3.SQLITE_FULL:
				code = errFull()
			case sqlite3.SQLITE_IOERR:
				code = errIO()
			case sqlite3.SQLITE_CANTOPEN:
				code = errCantOpen()
			case sqlite3.SQLITE_READONLY:
				code = errReadOnly()
			}
		}
	case errors.Is(err, sql.ErrConnDone), strings.Contains(err.Error(), "sql: database is closed"):
		// database/sql has no exported error for a closed *sql.DB.
		code = sqlstore.ErrClosed()
	}
	return fmt.Errorf("sqlite %s: %w: %w", op, code, err)
}
