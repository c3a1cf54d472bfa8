package main

import (
	"context"
	"fmt"
	"io"

	"github.com/memgate/memgate/server"
	"github.com/memgate/memgate/sqlite"
)

// The CLI never creates a database by accident. sqlite.Open creates a
// missing file, so a mistyped --db (or a command run in another directory
// than the database's, with the default ./memgate.db) would otherwise read
// an empty new database and answer "nothing", or write where nobody reads.
// So only the commands meant to create one (serve, remember, import, keys
// create, migrate --to) open a missing file, and they say where they
// created it; every other command refuses it, and leaves nothing behind
// (no file, no -wal or -shm).

// noDatabaseError is a missing database file, named by a command that
// does not create one.
type noDatabaseError struct{ path string }

func (e noDatabaseError) Error() string {
	return fmt.Sprintf("no database at %s: create one with memgate serve, remember or import (or name another with --db or $MEMGATE_DB)", e.path)
}

// needDatabase returns a noDatabaseError when nothing is at path.
func needDatabase(path string) error {
	ok, err := server.DatabaseExists(path)
	if err != nil {
		return err
	}
	if !ok {
		return noDatabaseError{path}
	}
	return nil
}

// openSQLite opens the database file at path for a command. With created
// nil the file must exist (noDatabaseError otherwise, and nothing is
// created); with it set, a missing file is created and the fact written to
// created once, naming the path.
func openSQLite(ctx context.Context, path string, created io.Writer, opts ...sqlite.Option) (*sqlite.DB, error) {
	existed, err := server.DatabaseExists(path)
	if err != nil {
		return nil, err
	}
	if !existed && created == nil {
		return nil, noDatabaseError{path}
	}
	db, err := sqlite.Open(ctx, path, opts...)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if !existed {
		fmt.Fprintf(created, "memgate: created a new database at %s\n", path)
	}
	return db, nil
}
