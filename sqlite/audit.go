package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// The audit log lives in a file of its own beside the database (AuditPath),
// attached to every connection as schema audit; statements name its tables
// unqualified (audit_events, audit_refs), which SQLite resolves there.
//
// Why a second file: in WAL mode every commit to a file makes each reader of
// that file drop its page cache at its next transaction. Every recall
// commits its audit event before it answers, so with one file every recall
// emptied the readers' caches of memories, keys and partition heads, and
// the next read parsed every page anew (btreeInitPage, and unmapping the
// memory map, were about a third of a server's CPU under a recall load).
// Apart, an audit commit writes only the audit file, and the memories'
// pages stay cached until a memory is written.
//
// Transactions that write both files (a remember and its events, a forget)
// commit each file atomically, but in WAL mode not both as one: SQLite
// commits the database first, so a crash in between can keep a write
// without its event (never acknowledged: the answer waits for both).

// AuditPath is the path of the audit log file of the database at path.
func AuditPath(path string) string { return path + "-audit" }

// auditTables are the audit log's tables, parents first.
var auditTables = []string{"audit_events", "audit_refs"}

// errNoAuditLog is a database whose audit log has been moved to its own
// file, opened without that file.
var errNoAuditLog = errors.New("the audit log file is missing or holds no audit log")

// relocateAudit moves the audit log's tables (with their indexes, triggers
// and sequence) from the database file into the audit file, where the
// migrations created them or an older memgate, or a backup (which holds the
// log in its one file), kept them. It does so in two transactions, the
// first writing only the audit file and the second only the database, so a
// crash in between leaves the log whole in the database, and the next Open
// copies it again over what the first wrote. A database whose log has moved
// must have it in the audit file (errNoAuditLog otherwise).
func relocateAudit(ctx context.Context, w *sql.DB) error {
	// Each step checks what it finds inside its transaction (a write
	// transaction: IMMEDIATE), so two Opens of one file, in one process or
	// two, take turns and the second finds the work done.
	moved := false
	err := inTx(ctx, w, func(tx *sql.Tx) error {
		inMain, err := hasAuditLog(ctx, tx, "main")
		if err != nil || !inMain {
			return err
		}
		ddl, err := auditDDL(ctx, tx)
		if err != nil {
			return err
		}
		for _, t := range []string{"audit_refs", "audit_events"} {
			if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS audit."+t); err != nil {
				return err
			}
		}
		for _, stmt := range ddl {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("%s: %w", strings.SplitN(stmt, "(", 2)[0], err)
			}
		}
		for _, t := range auditTables {
			if _, err := tx.ExecContext(ctx, "INSERT INTO audit."+t+" SELECT * FROM main."+t); err != nil {
				return fmt.Errorf("copy %s: %w", t, err)
			}
		}
		// The next seq is the one the database would have given: seq is
		// never reused, even for an event rolled back.
		if _, err := tx.ExecContext(ctx, "DELETE FROM audit.sqlite_sequence WHERE name = 'audit_events'"); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "INSERT INTO audit.sqlite_sequence (name, seq) SELECT name, seq FROM main.sqlite_sequence WHERE name = 'audit_events'")
		moved = err == nil
		return err
	})
	if err != nil {
		return fmt.Errorf("move the audit log to its file: %w", err)
	}
	if moved {
		err = inTx(ctx, w, func(tx *sql.Tx) error {
			if inMain, err := hasAuditLog(ctx, tx, "main"); err != nil || !inMain {
				return err
			}
			// Children first: with foreign keys on, dropping a parent
			// deletes its rows first (without firing triggers).
			for _, t := range []string{"audit_refs", "audit_events"} {
				if _, err := tx.ExecContext(ctx, "DROP TABLE main."+t); err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, "DELETE FROM main.sqlite_sequence WHERE name = 'audit_events'")
			return err
		})
		if err != nil {
			return fmt.Errorf("move the audit log to its file: drop it from the database: %w", err)
		}
	}
	var inAudit bool
	if err := inTx(ctx, w, func(tx *sql.Tx) (err error) {
		inAudit, err = hasAuditLog(ctx, tx, "audit")
		return err
	}); err != nil {
		return fmt.Errorf("read the audit log's schema: %w", err)
	}
	if !inAudit {
		return errNoAuditLog
	}
	return nil
}

// hasAuditLog reports whether schema holds the audit log's table.
func hasAuditLog(ctx context.Context, tx *sql.Tx, schema string) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+schema+".sqlite_schema WHERE type = 'table' AND name = 'audit_events'").Scan(&n)
	return n > 0, err
}

// auditDDL returns the statements that create the audit log's tables,
// indexes and triggers as the database file has them, in the audit schema
// (SQLite keeps each statement's text without its schema name).
func auditDDL(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT type, name, sql FROM main.sqlite_schema
		WHERE tbl_name IN ('audit_events', 'audit_refs') AND sql IS NOT NULL
		ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, tbl_name <> 'audit_events', rowid`)
	if err != nil {
		return nil, fmt.Errorf("read the audit log's schema: %w", err)
	}
	defer rows.Close()
	var ddl []string
	for rows.Next() {
		var typ, name, text string
		if err := rows.Scan(&typ, &name, &text); err != nil {
			return nil, err
		}
		var prefix string
		for _, p := range []string{"CREATE TABLE ", "CREATE INDEX ", "CREATE UNIQUE INDEX ", "CREATE TRIGGER "} {
			if strings.HasPrefix(text, p+name) {
				prefix = p
			}
		}
		if prefix == "" {
			return nil, fmt.Errorf("the audit log's %s %s is declared in a way memgate cannot move", typ, name)
		}
		ddl = append(ddl, prefix+"audit."+text[len(prefix):])
	}
	return ddl, rows.Err()
}

// inTx runs fn in a transaction on the writer and commits it.
func inTx(ctx context.Context, w *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// Files returns the paths of the files of the database at path, whether
// they exist or not: the database, its audit log, and the write-ahead log
// and shared-memory index beside each.
func Files(path string) []string {
	var fs []string
	for _, p := range []string{path, AuditPath(path)} {
		fs = append(fs, p, p+"-wal", p+"-shm")
	}
	return fs
}
