// Package sqlite is memgate's embedded storage backend: a store.Store over one
// SQLite database file, in pure Go (modernc.org/sqlite, no cgo), the default
// for a single memgate process.
//
// It stores and reads faithfully and applies the caller's scope inside every
// SQL statement. It must never filter by scope after reading, never pass user
// text to LIKE, FTS MATCH or regex syntax (text search is a literal substring
// test), and never let a driver error reach a caller untranslated:
// interpretError is the one place driver errors become memgate errors.
// The audit log is append-only: triggers in the schema abort any UPDATE or
// DELETE of it, whoever issues it. Validation, gating, IDs and timestamps
// are the engine's job, not this one's.
//
// Concurrency: one writer connection (every write is a BEGIN IMMEDIATE
// transaction on it, so writers queue in Go instead of meeting SQLITE_BUSY
// lock-upgrade deadlocks) and a separate pool of read-only connections, which
// WAL lets run alongside the writer.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var _ store.Store = (*DB)(nil)

// Defaults for Config.
const (
	// DefaultBusyTimeout is how long a statement waits for a lock held by
	// another process (or by a WAL checkpoint) before it fails as unavailable.
	DefaultBusyTimeout = 5 * time.Second
	// DefaultMaxReaders is the size of the read connection pool.
	DefaultMaxReaders = 4
)

// Config tunes a DB. The zero value is valid and means the defaults.
type Config struct {
	BusyTimeout time.Duration // default DefaultBusyTimeout
	MaxReaders  int           // default DefaultMaxReaders
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.BusyTimeout <= 0 {
		c.BusyTimeout = DefaultBusyTimeout
	}
	if c.MaxReaders <= 0 {
		c.MaxReaders = DefaultMaxReaders
	}
	return c
}

// Option changes the Config of Open.
type Option func(*Config)

// WithBusyTimeout sets Config.BusyTimeout.
func WithBusyTimeout(d time.Duration) Option { return func(c *Config) { c.BusyTimeout = d } }

// WithMaxReaders sets Config.MaxReaders.
func WithMaxReaders(n int) Option { return func(c *Config) { c.MaxReaders = n } }

// DB is a memgate store in one SQLite file. It is safe for concurrent use.
type DB struct {
	path string
	cfg  Config

	w *sql.DB // exactly one connection: every write goes through it
	r *sql.DB // read-only connections (PRAGMA query_only)

	stmts stmtCache // prepared statements of the hot paths

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating if needed) the database file at path and brings its
// schema up to date. It refuses a database whose schema is newer than this
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
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	// A file: URI keeps a path with '?' or '#' from being read as parameters.
	uri := "file:" + (&url.URL{Path: abs}).EscapedPath()
	busy := fmt.Sprintf("_pragma=busy_timeout(%d)", cfg.BusyTimeout.Milliseconds())

	db := &DB{path: path, cfg: cfg}
	db.w, err = sql.Open("sqlite", uri+"?"+busy+
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// One writer: the connection lives forever so its pragmas do too.
	db.w.SetMaxOpenConns(1)
	db.w.SetMaxIdleConns(1)
	db.w.SetConnMaxLifetime(0)
	db.w.SetConnMaxIdleTime(0)

	if err := db.setUp(ctx); err != nil {
		db.w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := db.prepareWriter(ctx); err != nil {
		db.stmts.close()
		db.w.Close()
		return nil, fmt.Errorf("sqlite: open %s: prepare: %w", path, err)
	}

	// Readers open after the writer has switched the file to WAL.
	// Readers map the file (no read syscall per page) and keep a larger
	// page cache: recall reads a few rows at random on every call.
	db.r, err = sql.Open("sqlite", uri+"?"+busy+"&_pragma=foreign_keys(ON)&_pragma=query_only(ON)"+
		"&_pragma=mmap_size(268435456)&_pragma=cache_size(-16384)")
	if err != nil {
		db.w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.r.SetMaxOpenConns(cfg.MaxReaders)
	db.r.SetMaxIdleConns(cfg.MaxReaders)
	if err := db.r.PingContext(ctx); err != nil {
		db.w.Close()
		db.r.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return db, nil
}

// setUp checks the writer's journal mode and applies pending migrations.
func (db *DB) setUp(ctx context.Context) error {
	var mode string
	if err := db.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal_mode is %q, want wal (is the file on a filesystem without shared memory?)", mode)
	}
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return err
	}
	return migrate(ctx, db.w, ms)
}

// Path returns the path the database was opened with.
func (db *DB) Path() string { return db.path }

// Close closes the database. It is idempotent: later calls return the result
// of the first. Every method called after Close fails as unavailable.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.closed.Store(true)
		db.stmts.close()
		db.closeErr = errors.Join(db.r.Close(), db.w.Close())
	})
	return db.closeErr
}

// The errors interpretError produces. Each call makes a new value, so no
// caller can alter another's error.
func errClosed() *memgate.Error {
	return &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "the database is closed"}
}

func errBusy() *memgate.Error {
	return &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "the database is busy, try again"}
}

func errDuplicateID() *memgate.Error {
	return &memgate.Error{Code: memgate.ECONFLICT, Field: "id", Message: "is already used by another memory"}
}

func errInternal() *memgate.Error {
	return &memgate.Error{Code: memgate.EINTERNAL, Message: "internal error"}
}

// interpretError is the one place a driver error becomes a memgate error.
// Application errors pass unchanged, and so does the context's own error when
// ctx is done (a cancelled request is not a database failure). Otherwise the
// result wraps both a *memgate.Error, so ErrorCode and ErrorMessage see a
// code and a caller-safe message, and the driver error with op, for logs.
func interpretError(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	var appErr *memgate.Error
	if errors.As(err, &appErr) {
		return err
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	code := errInternal()
	var se *sqlite.Error
	switch {
	case errors.As(err, &se):
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			code = errDuplicateID()
		default:
			switch se.Code() & 0xff {
			case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
				code = errBusy()
			}
		}
	case errors.Is(err, sql.ErrConnDone), strings.Contains(err.Error(), "sql: database is closed"):
		// database/sql has no exported error for a closed *sql.DB.
		code = errClosed()
	}
	return fmt.Errorf("sqlite %s: %w: %w", op, code, err)
}
