package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/memgate/memgate/store/sqlstore"
)

// The audit inbox's file.
//
// A recall answers once its audit event is committed: the engine's
// committer appends a batch of events as one row. In the audit log's file
// that append waited for the one writer, and the drain, which moves the
// inbox into the log's tables, holds the writer 10–50 ms a transaction
// (a random page of audit_refs per memory a recall named): the recall p99
// under load was the drain's (BENCHMARKS.md, issue 27). So appends go to a
// file of their own (InboxPath), table audit_appends, through a
// connection of their own, the appender, and nothing else writes that
// file but the appender: an append waits only for other appends.
//
// The writer reads the file (attached read-only as schema inbox: its
// BEGIN IMMEDIATE takes no lock there). A drain reads appends past a high
// water mark, moves them into the log's tables and raises the mark
// (audit_drained, in the audit file) in one transaction of the audit
// file, then has the appender delete the rows up to the mark. A crash
// between the two leaves rows the mark skips, deleted by the next drain:
// an event is never lost or doubled. Each connection that opens the file
// sees its sequence raised to the mark first (floorInbox), so an inbox
// file lost or replaced never has its new rows skipped.

// InboxPath is the path of the audit inbox file of the database at path.
func InboxPath(path string) string { return path + "-inbox" }

// createAppends is the inbox file's one table. at comes before events, so
// a drain reads each row's stamp without reading its events' overflow
// pages.
const createAppends = `CREATE TABLE IF NOT EXISTS audit_appends (
	seq    INTEGER PRIMARY KEY AUTOINCREMENT,
	at     INTEGER NOT NULL,
	events TEXT    NOT NULL
) STRICT`

// createDrained is the mark: the last seq of audit_appends moved into the
// log. It is in the audit log's file, written with the events it moved.
// Open creates it where it is missing: a new database, or a backup, whose
// one file holds the log without it.
const createDrained = `CREATE TABLE IF NOT EXISTS audit.audit_drained (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	appends INTEGER NOT NULL
) STRICT`

// setUpInbox switches the inbox file to WAL and creates its table, on the
// appender's connection.
func setUpInbox(ctx context.Context, a *sql.DB, busyTimeout time.Duration) error {
	if err := setWAL(ctx, a, busyTimeout, "main"); err != nil {
		return err
	}
	return inTx(ctx, a, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, createAppends)
		return err
	})
}

// floorInbox creates the mark where it is missing (on the writer) and
// raises the inbox's sequence to it (on the appender), so that every row
// appended from now on is past the mark.
func floorInbox(ctx context.Context, w, a *sql.DB) error {
	var mark int64
	if err := inTx(ctx, w, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, createDrained); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(appends), 0) FROM audit.audit_drained").Scan(&mark)
	}); err != nil {
		return err
	}
	return inTx(ctx, a, func(tx *sql.Tx) error {
		var last int64
		if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'audit_appends'").Scan(&last); err != nil {
			return err
		}
		if last >= mark {
			return nil
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM sqlite_sequence WHERE name = 'audit_appends'"); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO sqlite_sequence (name, seq) VALUES ('audit_appends', ?)", mark)
		return err
	})
}

// Append implements sqlstore.Appender: fn in a write transaction (BEGIN
// IMMEDIATE) on the appender, committed if fn returns nil.
func (c *conn) Append(ctx context.Context, op string, fn func(sqlstore.Querier) error) error {
	return c.write(ctx, c.a, op, fn)
}

var _ sqlstore.Appender = (*conn)(nil)
