package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"time"
)

// ErrSchemaTooNew is returned by a backend's Open for a database that a
// newer memgate has migrated: this binary does not know its schema and
// must not write to it.
var ErrSchemaTooNew = errors.New("database schema is newer than this memgate binary supports; upgrade memgate")

// Migration is one file migrations/NNNN_name.sql of a backend.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// LoadMigrations reads the migrations in fsys (directory "migrations"),
// sorted by version. Versions must run 1, 2, 3... without gaps or repeats,
// so a misnamed file fails every test instead of being skipped.
func LoadMigrations(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []Migration
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
		ms = append(ms, Migration{Version: v, Name: match[2], SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %04d_%s: want version %d (versions must be 1, 2, 3... without gaps or repeats)", m.Version, m.Name, i+1)
		}
	}
	if len(ms) == 0 {
		return nil, errors.New("no migrations")
	}
	return ms, nil
}

// Migrate applies, through q (inside the caller's transaction, which keeps
// two processes from migrating one database at once), the migrations the
// database lacks, recording each in schema_migrations, which table is the
// backend's DDL for it. An up-to-date database changes nothing; one
// migrated further than ms is ErrSchemaTooNew.
func Migrate(ctx context.Context, q Querier, table string, ms []Migration) error {
	if _, err := q.Exec(ctx, table); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var current int
	if err := q.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: read schema version: %w", err)
	}
	latest := ms[len(ms)-1].Version
	if current > latest {
		return fmt.Errorf("%w (database is at version %d, this binary knows up to %d)", ErrSchemaTooNew, current, latest)
	}
	for _, m := range ms[current:] {
		if _, err := q.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("migrate: apply %04d_%s: %w", m.Version, m.Name, err)
		}
		if _, err := q.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.Version, m.Name, time.Now().UTC()); err != nil {
			return fmt.Errorf("migrate: record %04d_%s: %w", m.Version, m.Name, err)
		}
	}
	return nil
}
