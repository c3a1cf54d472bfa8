package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"time"
)

// ErrSchemaTooNew is returned by Open for a database that a newer memgate has
// migrated: this binary does not know its schema and must not write to it.
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

// migrate applies the migrations the database lacks, all in one IMMEDIATE
// transaction (so two processes opening a new file do not both migrate it),
// recording each in schema_migrations. Reopening an up-to-date database
// changes nothing.
func migrate(ctx context.Context, w *sql.DB, ms []migration) error {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()

	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: read schema version: %w", err)
	}
	latest := ms[len(ms)-1].version
	if current > latest {
		return fmt.Errorf("%w (database is at version %d, this binary knows up to %d)", ErrSchemaTooNew, current, latest)
	}
	for _, m := range ms[current:] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migrate: apply %04d_%s: %w", m.version, m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, time.Now().UTC().UnixMicro()); err != nil {
			return fmt.Errorf("migrate: record %04d_%s: %w", m.version, m.name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}
