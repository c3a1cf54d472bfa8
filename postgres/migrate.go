package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memgate/memgate/store/sqlstore"
)

// ErrSchemaTooNew is returned by Open for a database that a newer memgate
// has migrated: this binary does not know its schema and must not write to
// it.
var ErrSchemaTooNew = sqlstore.ErrSchemaTooNew

//go:embed migrations/*.sql
var migrationFiles embed.FS

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
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, ms []sqlstore.Migration) error {
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
		return sqlstore.Migrate(ctx, querier{new(conn), tx}, schemaMigrations, ms)
	})
}

// schemaMigrations is the table the migrations are recorded in.
const schemaMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    integer     PRIMARY KEY,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`
