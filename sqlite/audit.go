package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

// auditTables are the audit log's tables, parents first: the events, the
// refs (which memories each names) and the inbox (store/sqlstore/audit.go).
var auditTables = []string{"audit_events", "audit_refs", "audit_inbox"}

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
	// two, take turns and the second finds the work done. What moves is
	// each of the log's tables the database file has (the inbox may be in
	// the audit file already: migration 0016 creates it there).
	var moving []string
	err := inTx(ctx, w, func(tx *sql.Tx) error {
		inMain, err := auditTablesIn(ctx, tx, "main")
		if err != nil || !slices.Contains(inMain, "audit_events") {
			return err
		}
		ddl, err := auditDDL(ctx, tx, inMain)
		if err != nil {
			return err
		}
		for _, t := range dropOrder(inMain) {
			if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS audit."+t); err != nil {
				return err
			}
		}
		for _, stmt := range ddl {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("%s: %w", strings.SplitN(stmt, "(", 2)[0], err)
			}
		}
		for _, t := range inMain {
			if _, err := tx.ExecContext(ctx, "INSERT INTO audit."+t+" SELECT * FROM main."+t); err != nil {
				return fmt.Errorf("copy %s: %w", t, err)
			}
			// The next seq is the one the database would have given: seq
			// is never reused, even for an event rolled back.
			if _, err := tx.ExecContext(ctx, "DELETE FROM audit.sqlite_sequence WHERE name = ?", t); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO audit.sqlite_sequence (name, seq) SELECT name, seq FROM main.sqlite_sequence WHERE name = ?", t); err != nil {
				return err
			}
		}
		moving = inMain
		return nil
	})
	if err != nil {
		return fmt.Errorf("move the audit log to its file: %w", err)
	}
	if len(moving) > 0 {
		err = inTx(ctx, w, func(tx *sql.Tx) error {
			inMain, err := auditTablesIn(ctx, tx, "main")
			if err != nil || !slices.Equal(inMain, moving) {
				return err // another Open moved it meanwhile
			}
			// Children first: with foreign keys on, dropping a parent
			// deletes its rows first (without firing triggers).
			for _, t := range dropOrder(inMain) {
				if _, err := tx.ExecContext(ctx, "DROP TABLE main."+t); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, "DELETE FROM main.sqlite_sequence WHERE name = ?", t); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("move the audit log to its file: drop it from the database: %w", err)
		}
	}
	var inAudit []string
	if err := inTx(ctx, w, func(tx *sql.Tx) (err error) {
		inAudit, err = auditTablesIn(ctx, tx, "audit")
		return err
	}); err != nil {
		return fmt.Errorf("read the audit log's schema: %w", err)
	}
	if !slices.Equal(inAudit, auditTables) {
		return errNoAuditLog
	}
	return nil
}

// auditTablesIn returns the audit log's tables that schema holds, in the
// order of auditTables.
func auditTablesIn(ctx context.Context, tx *sql.Tx, schema string) ([]string, error) {
	var in []string
	for _, t := range auditTables {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+schema+".sqlite_schema WHERE type = 'table' AND name = ?", t).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			in = append(in, t)
		}
	}
	return in, nil
}

// dropOrder is tables in an order they can be dropped in: audit_refs,
// which references audit_events, before it.
func dropOrder(tables []string) []string {
	out := slices.Clone(tables)
	slices.Reverse(out)
	return out
}

// auditDDL returns the statements that create the audit log's tables,
// indexes and triggers as the database file has them, in the audit schema
// (SQLite keeps each statement's text without its schema name).
func auditDDL(ctx context.Context, tx *sql.Tx, tables []string) ([]string, error) {
	// Tables first, in auditTables' order (parents first), then their
	// indexes, then their triggers.
	rows, err := tx.QueryContext(ctx, `SELECT type, name, sql FROM main.sqlite_schema
		WHERE tbl_name IN (SELECT value FROM json_each(?)) AND sql IS NOT NULL
		ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END,
			CASE tbl_name WHEN 'audit_events' THEN 0 WHEN 'audit_refs' THEN 1 ELSE 2 END, rowid`, jsonList(tables))
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

// jsonList is ss as a JSON array of strings.
func jsonList(ss []string) string {
	b, _ := json.Marshal(ss)
	return string(b)
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
// they exist or not: the database, its audit log, the log's inbox
// (inbox.go), and the write-ahead log and shared-memory index beside
// each.
func Files(path string) []string {
	var fs []string
	for _, p := range []string{path, AuditPath(path), InboxPath(path)} {
		fs = append(fs, p, p+"-wal", p+"-shm")
	}
	return fs
}
