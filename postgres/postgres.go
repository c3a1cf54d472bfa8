// Package postgres is memgate's PostgreSQL storage backend, for several
// memgate processes sharing one database (the scale-out deployment; package
// sqlite is the embedded one): a driver of the portable store (package
// sqlstore, which holds every algorithm and statement of store.Store) over
// a pgx connection pool, and DB, the store over it. It needs stock
// PostgreSQL 15 or later and no extension: vectors are bytea, ranking runs
// in Go over the engine's index.
//
// The driver is what is PostgreSQL's own: the pool, transactions and their
// retries, $n placeholders, times read in UTC, the dialect (a literal
// substring test with strpos, never LIKE, regex or full-text syntax; json
// operators for metadata; row locks and SKIP LOCKED), advisory locks for
// decisions, the VACUUM after a forget, and interpretError, the one place
// driver errors become memgate errors. It never logs. Error text never holds the
// database password (RedactURL). The audit log is append-only: triggers in
// the schema raise on any UPDATE, DELETE or TRUNCATE of it, whoever issues
// it. Validation, gating, IDs and timestamps are the engine's job.
//
// Concurrency: every write is one READ COMMITTED transaction. Where a
// decision reads before it writes (Remember's dedup and retention caps,
// CreateFirstKey), the transaction first takes a transaction-scoped
// advisory lock on exactly what the decision is about, so concurrent
// writers of the same population queue and each sees the previous one's
// commit; compare-and-set writes (Update) rely on the row lock and
// PostgreSQL's re-check of the WHERE clause. Deadlocks and serialization
// failures are retried a few times before they surface as unavailable.
// Migrations run under an advisory lock, so replicas starting together on
// a new database apply them once.
//
// Faults: a server that restarts, refuses or drops connections, or does
// not answer a connect within the connect timeout makes the operation
// unavailable (the transaction is rolled back by the server; one cut
// during COMMIT may have committed, which the caller cannot know). The
// pool discards a connection that failed and dials anew on the next
// acquire, so the store recovers on its own when the server returns:
// nothing reconnects by hand.
package postgres

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
	"github.com/memgate/memgate/store/sqlstore"
)

var _ store.Store = (*DB)(nil)

// Defaults for Config.
const (
	// DefaultMaxConns is the pool size when neither Config.MaxConns nor the
	// URL's pool_max_conns sets one.
	DefaultMaxConns = 16
	// DefaultConnectTimeout bounds one connection attempt when the URL has
	// no connect_timeout.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultMaxConnLifetime recycles connections (so a failover or a
	// rebalanced pooler is picked up) when the URL has no
	// pool_max_conn_lifetime.
	DefaultMaxConnLifetime = time.Hour
	// DefaultMaxRetries is how many times a write transaction is re-run
	// after a deadlock or serialization failure before it fails as
	// unavailable.
	DefaultMaxRetries = 5
)

// Config configures Open. Only URL is required. A zero field means the
// URL's setting when it has one (pgxpool's pool_max_conns, pool_min_conns,
// pool_max_conn_lifetime, pool_max_conn_idle_time, connect_timeout,
// search_path...) and otherwise the default.
type Config struct {
	// URL is a PostgreSQL connection string (postgres://user:pass@host/db
	// or key=value form). It may hold a password: it is never logged and
	// every error shows it redacted.
	URL string
	// Schema is the schema memgate's tables live in, created if missing
	// and put first on every connection's search_path; "" means the
	// connection's own search_path (normally public).
	Schema string
	// MaxConns and MinConns size the pool (default DefaultMaxConns and 0).
	MaxConns int32
	MinConns int32
	// MaxConnLifetime and MaxConnIdleTime recycle connections (default
	// DefaultMaxConnLifetime and pgxpool's 30 minutes).
	MaxConnLifetime time.Duration
	MaxConnIdleTime time.Duration
	// ConnectTimeout bounds one connection attempt (default
	// DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// MaxRetries bounds the re-runs of a write transaction after a
	// deadlock or serialization failure (default DefaultMaxRetries;
	// negative: none).
	MaxRetries int
	// NoVacuum leaves out the VACUUM Forget runs after its commit (for a
	// role that does not own the tables, or a schedule of its own; README
	// says what stays until a vacuum).
	NoVacuum bool
}

// WithDefaults returns c with every zero field that the URL does not set
// given its default.
func (c Config) WithDefaults() Config {
	has := func(param string) bool { return strings.Contains(c.URL, param) }
	if c.MaxConns == 0 && !has("pool_max_conns") {
		c.MaxConns = DefaultMaxConns
	}
	if c.ConnectTimeout == 0 && !has("connect_timeout") {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.MaxConnLifetime == 0 && !has("pool_max_conn_lifetime") {
		c.MaxConnLifetime = DefaultMaxConnLifetime
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	return c
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	switch {
	case c.URL == "":
		return errors.New("a PostgreSQL URL is required")
	case c.MaxConns < 0 || c.MinConns < 0:
		return errors.New("pool sizes must not be negative")
	case c.MaxConns > 0 && c.MinConns > c.MaxConns:
		return errors.New("min conns must not exceed max conns")
	case c.MaxConnLifetime < 0 || c.MaxConnIdleTime < 0 || c.ConnectTimeout < 0:
		return errors.New("durations must not be negative")
	case c.Schema != "" && (len(c.Schema) > 63 || strings.ContainsRune(c.Schema, 0)):
		return errors.New("schema must be a PostgreSQL identifier of at most 63 bytes")
	}
	return nil
}

// DB is a memgate store in one PostgreSQL database (one schema of it): the
// portable store (sqlstore.Store) over this package's driver. It is safe
// for concurrent use, by any number of processes.
type DB struct {
	*sqlstore.Store
	c        *conn
	pool     *pgxpool.Pool
	redacted string // the URL, password masked, for errors
	schema   string // current_schema() of every connection
}

// Open connects to the database at cfg.URL and brings the schema up to date
// (under an advisory lock, so concurrent first starts migrate once). It
// refuses a schema newer than this binary knows (ErrSchemaTooNew).
func Open(ctx context.Context, cfg Config) (*DB, error) {
	cfg = cfg.WithDefaults()
	redacted := RedactURL(cfg.URL)
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("postgres: open %s: %w", redacted, err)
	}
	pcfg, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		// pgconn redacts the password of the string it quotes.
		return nil, fmt.Errorf("postgres: open %s: %w", redacted, err)
	}
	if cfg.Schema != "" {
		pcfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{cfg.Schema}.Sanitize()
	}
	if cfg.MaxConns > 0 {
		pcfg.MaxConns = cfg.MaxConns
	}
	if cfg.MinConns > 0 {
		pcfg.MinConns = cfg.MinConns
	}
	if cfg.MaxConnLifetime > 0 {
		pcfg.MaxConnLifetime = cfg.MaxConnLifetime
	}
	if cfg.MaxConnIdleTime > 0 {
		pcfg.MaxConnIdleTime = cfg.MaxConnIdleTime
	}
	if cfg.ConnectTimeout > 0 {
		pcfg.ConnConfig.ConnectTimeout = cfg.ConnectTimeout
	}
	// Times read back in UTC, as sqlstore.Querier has them.
	pcfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		c.TypeMap().RegisterType(&pgtype.Type{Name: "timestamptz", OID: pgtype.TimestamptzOID,
			Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC}})
		return nil
	}
	pcfg.ConnConfig.BuildFrontend = bufferedFrontend
	if pcfg.ConnConfig.RuntimeParams["application_name"] == "" {
		pcfg.ConnConfig.RuntimeParams["application_name"] = "memgate"
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open %s: %w", redacted, err)
	}
	db := &DB{pool: pool, redacted: redacted}
	db.c = &conn{pool: pool, cfg: cfg, maxRetries: max(cfg.MaxRetries, 0)}
	if err := db.setUp(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: open %s: %w", redacted, err)
	}
	db.Store = sqlstore.New(db.c)
	return db, nil
}

// readBuffer is the read buffer of a connection, in bytes.
const readBuffer = 64 << 10

// bufferedFrontend is pgx's frontend reading through a buffer of
// readBuffer bytes. pgx reads the socket into a buffer of 8 kB, so a cold
// load (10,000 rows of about 2.3 kB for a 484-d partition) took a read
// system call for every three or four rows, about 16 ms of the load's CPU
// (a profile of engine's BenchmarkColdPartition); a read now takes what
// the socket holds, up to 64 kB.
// The buffer sits below pgx's own, so pgx sees the same bytes in the same
// order, errors and deadlines included (bufio keeps what it read before an
// error). Only SyncConn, for Hijack and Conn, cannot see this buffer: the
// store uses neither.
func bufferedFrontend(r io.Reader, w io.Writer) *pgproto3.Frontend {
	return pgproto3.NewFrontend(bufio.NewReaderSize(r, readBuffer), w)
}

// setUp migrates, then reads what the queries need to know about the
// connection: its schema and how it folds case.
func (db *DB) setUp(ctx context.Context) error {
	ms, err := sqlstore.LoadMigrations(migrationFiles)
	if err != nil {
		return err
	}
	if err := migrate(ctx, db.pool, db.c.cfg.Schema, ms); err != nil {
		return err
	}
	var schema *string
	if err := db.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fmt.Errorf("read current schema: %w", err)
	}
	if schema == nil {
		return errors.New("no schema on the search_path exists")
	}
	db.schema = *schema
	h := fnv.New64a()
	io.WriteString(h, db.schema)
	db.c.lockSpace = h.Sum64()
	lowerColl, err := caseFolding(ctx, db.pool)
	db.c.dialect = newDialect(lowerColl)
	return err
}

// caseFolding returns the collation clause text search folds case with:
// the database's own when its lower() folds beyond ASCII (a UTF-8 locale
// such as C.UTF-8 or en_US.UTF-8), else ICU's root locale when the server
// has ICU, else the database's (ASCII-only folding; documented in the
// README).
func caseFolding(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	const probe, want = "ÜΆ", "üά"
	var got string
	if err := pool.QueryRow(ctx, `SELECT lower($1::text)`, probe).Scan(&got); err != nil {
		return "", fmt.Errorf("probe lower(): %w", err)
	}
	if got == want {
		return "", nil
	}
	var icu bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu')`).Scan(&icu); err != nil {
		return "", fmt.Errorf("probe collations: %w", err)
	}
	if icu {
		return ` COLLATE "und-x-icu"`, nil
	}
	return "", nil
}

// Schema returns the schema the tables live in.
func (db *DB) Schema() string { return db.schema }

// RedactURL returns a connection string with its password masked, for
// errors and logs.
func RedactURL(s string) string {
	if u, err := url.Parse(s); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		for _, k := range []string{"password", "sslpassword"} {
			if q.Has(k) {
				q.Set(k, "xxxxx")
			}
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	if strings.Contains(s, "://") {
		// An unparsable URL: keep only what precedes the credentials.
		scheme, _, _ := strings.Cut(s, "://")
		return scheme + "://(unparsable URL)"
	}
	// key=value form: mask every password value.
	fields := strings.Fields(s)
	for i, f := range fields {
		if k, _, ok := strings.Cut(f, "="); ok && (k == "password" || k == "sslpassword") {
			fields[i] = k + "=xxxxx"
		}
	}
	return strings.Join(fields, " ")
}

// The errors interpretError produces. Each call makes a new value, so no
// caller can alter another's error.

func errUnreachable() *memgate.Error {
	return &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "the database cannot be reached, try again"}
}

func errKeyConflict() *memgate.Error {
	return &memgate.Error{Code: memgate.ECONFLICT, Message: "a key with this id or secret already exists"}
}

func errBadText() *memgate.Error {
	return &memgate.Error{Code: memgate.EINVALID, Message: "text must be valid UTF-8 without NUL bytes"}
}

// interpretError is the one place a driver error becomes a memgate error.
// Application errors pass unchanged, and so does the context's own error
// when ctx is done (a cancelled request is not a database failure).
// Otherwise the result wraps both a *memgate.Error, so ErrorCode and
// ErrorMessage see a code and a caller-safe message, and the driver error
// with op, for logs (pgx's errors name no password).
//
//   - unique violation: conflict (a key's constraint: the key conflict; a
//     memory's: the id conflict)
//   - deadlock, serialization failure (after the retries), lock or
//     statement timeout, too many connections, server shutting down,
//     connection failures (a connect timeout included), a closed pool:
//     unavailable
//   - a NUL byte or invalid UTF-8 in text: invalid_argument
//   - anything else: internal
func interpretError(ctx context.Context, op string, err error) error {
	if settled, ok := sqlstore.Settled(ctx, err); ok {
		return settled
	}
	// A deadline the caller's ctx did not set is the driver's own (the
	// connect timeout: a server that does not answer), so it falls
	// through to unavailable rather than passing as the caller's.
	if errors.Is(err, context.Canceled) {
		return err
	}
	code := sqlstore.ErrInternal()
	var pe *pgconn.PgError
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &pe):
		switch {
		case pe.Code == "23505":
			switch {
			case pe.TableName == "keys":
				code = errKeyConflict()
			case pe.ConstraintName == "memories_key":
				code = sqlstore.ErrKeyTaken()
			default:
				code = sqlstore.ErrDuplicateID()
			}
		case pe.Code == "40001", pe.Code == "40P01", pe.Code == "55P03", pe.Code == "57014":
			code = sqlstore.ErrBusy()
		case pe.Code == "22021", pe.Code == "22P05":
			code = errBadText()
		case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "53"), strings.HasPrefix(pe.Code, "57P"):
			code = errUnreachable()
		}
	case errors.As(err, &ce), errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		pgconn.Timeout(err), pgconn.SafeToRetry(err):
		code = errUnreachable()
	case strings.Contains(err.Error(), "closed pool"):
		// pgxpool has no exported error for a closed pool.
		code = sqlstore.ErrClosed()
	}
	return fmt.Errorf("postgres %s: %w: %w", op, code, err)
}

// lockKey is the advisory lock key of a decision about parts (for example
// a population: tenant, principal, kind), in this schema: distinct schemas
// of one database never contend.
func (c *conn) lockKey(parts ...string) int64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(c.lockSpace >> (8 * i))
	}
	h.Write(b[:])
	for _, p := range parts {
		io.WriteString(h, p)
		h.Write([]byte{0}) // idents hold no NUL: parts cannot run together
	}
	return int64(h.Sum64())
}
