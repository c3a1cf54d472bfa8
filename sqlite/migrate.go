package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"

	"github.com/memgate/memgate/store/sqlstore"
)

// ErrSchemaTooNew is returned by Open for a database that a newer memgate has
// migrated: this binary does not know its schema and must not write to it.
var ErrSchemaTooNew = sqlstore.ErrSchemaTooNew

//go:embed migrations/*.sql
var migrationFiles embed.FS

// schemaMigrations is the table the migrations are recorded in.
const schemaMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL,
	applied_at INTEGER NOT NULL
) STRICT`

// migrate applies the migrations the database lacks, all in one IMMEDIATE
// transaction on the writer (so two processes opening a new file do not
// both migrate it). Reopening an up-to-date database changes nothing.
func migrate(ctx context.Context, w *sql.DB, ms []sqlstore.Migration) error {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	if err := sqlstore.Migrate(ctx, &querier{c: new(conn), pool: w, tx: tx}, schemaMigrations, ms); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}
