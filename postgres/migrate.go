package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"regexp"
	"sort"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrSchemaTooNew is returned by Open for a database that a newer memgate
// has migrated: this binary does not know its schema and must not write to
// it.
var ErrSchemaTooNew = errors.New("database schema is newer than this memgate binary supports; upgrade memgate")

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one file migrations/NNNN_name.sql.
type migration struct {
	version int
	name    string
	sql     string
}

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// loadMigrations reads the migrations in fsys (directory "migrations"),
// sorted by version. Versions must run 1, 2, 3... without gaps or repeats,
// so a misnamed file fails every test instead of being skipped.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		match := migrationName.FindStringSubmatch(e.Name())
		if match == nil || e.IsDir() {
			return nil, fmt.Errorf("migration %q: name must be NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(match[1])
		b, err := fs.ReadFile(fsys, "migrations/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: match[2], sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %04d_%s: want version %d (versions must be 1, 2, 3... without gaps or repeats)", m.version, m.name, i+1)
		}
	}
	if len(ms) == 0 {
		return nil, errors.New("no migrations")
	}
	return ms, nil
}

// migrateLockClass is the first key of the advisory lock migrations take
// ("mg" in ASCII); the second is a hash of the schema name.
const migrateLockClass = 0x6d67

// migrate applies the migrations the database lacks, all in one
// transaction (PostgreSQL's DDL is transactional: a failed migration leaves
// nothing behind), recording each in schema_migrations. The transaction
// first takes an advisory lock on (migrateLockClass, hash of the schema),
// so several processes opening a new database queue there: the first
// migrates, the others then find the schema up to date. Reopening an
// up-to-date database changes nothing.
//
// schema_migrations is the one table without a tenant: it describes the
// database, not a tenant's data (under Citus it stays a local table of the
// coordinator).
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, ms []migration) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		name := schema
		if name == "" {
			var cur *string
			if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&cur); err != nil {
				return fmt.Errorf("migrate: read current schema: %w", err)
			}
			if cur == nil {
				return errors.New("migrate: no schema on the search_path exists (create one, or set a schema)")
			}
			name = *cur
		}
		h := fnv.New32a()
		h.Write([]byte(name))
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, int32(migrateLockClass), int32(h.Sum32())); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
		if schema != "" {
			// Checked first: CREATE SCHEMA IF NOT EXISTS needs the CREATE
			// privilege on the database even when the schema exists.
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists); err != nil {
				return fmt.Errorf("migrate: look up schema: %w", err)
			}
			if !exists {
				if _, err := tx.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()); err != nil {
					return fmt.Errorf("migrate: create schema: %w", err)
				}
			}
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer     PRIMARY KEY,
			name       text        NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return fmt.Errorf("migrate: create schema_migrations: %w", err)
		}
		var current int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
			return fmt.Errorf("migrate: read schema version: %w", err)
		}
		latest := ms[len(ms)-1].version
		if current > latest {
			return fmt.Errorf("%w (database is at version %d, this binary knows up to %d)", ErrSchemaTooNew, current, latest)
		}
		for _, m := range ms[current:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migrate: apply %04d_%s: %w", m.version, m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return fmt.Errorf("migrate: record %04d_%s: %w", m.version, m.name, err)
			}
		}
		return nil
	})
}
