package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	msqlite "modernc.org/sqlite"

	"github.com/memgate/memgate/sqlite"
)

// backupStep is how many pages one step of the online backup copies:
// between steps the command notices an interrupt.
const backupStep = 4096

// backupOptions tune backupSQLite; the zero value is the command's.
type backupOptions struct {
	pagesPerStep int    // default backupStep
	afterStep    func() // called after every step but the last (tests write meanwhile)
}

// BackupResult is what backup wrote, as --json prints it. The counts are
// the copy's, which verification found equal to the source's as of the
// copy.
type BackupResult struct {
	Source        string `json:"source"`
	Path          string `json:"path"`
	Bytes         int64  `json:"bytes"`
	SchemaVersion int64  `json:"schema_version"`
	Memories      int64  `json:"memories"`
	AuditEvents   int64  `json:"audit_events"`
	Keys          int64  `json:"keys"`
	Integrity     string `json:"integrity"`
}

// cmdBackup copies a SQLite database, which memgate serve may be writing
// meanwhile, into a new file, and verifies the copy.
func cmdBackup(e env, args []string) error {
	var src, dst, pg string
	var asJSON bool
	fs := newFlagSet("backup", e.stderr, "--db PATH --to COPY.db [--json]")
	fs.StringVar(&src, "db", envDefault("MEMGATE_DB", "memgate.db"), "the database to copy (memgate serve may go on writing it)")
	fs.StringVar(&dst, "to", "", "the file to write the copy to (required; an existing file is never overwritten)")
	fs.BoolVar(&asJSON, "json", false, "print what was written as JSON")
	fs.StringVar(&pg, "postgres", "", "not supported: back PostgreSQL up with pg_dump")
	check := func(pos []string) error {
		switch {
		case len(pos) > 0:
			return usageError{"backup takes no arguments"}
		case explicitFlag(fs, "postgres"):
			return usageError{"backup copies a SQLite file; back PostgreSQL up with pg_dump -Fc (and restore with pg_restore)"}
		case dst == "":
			return usageError{"--to is required: the file to write the copy to"}
		}
		return nil
	}
	return runCommand(args, e, command[any, *BackupResult]{fs: fs, json: &asJSON, check: check,
		call: func(any) (*BackupResult, error) { return backupSQLite(e.ctx, src, dst, backupOptions{}) },
		text: func(res *BackupResult) error {
			fmt.Fprintf(e.stdout, "backup: wrote %s (%d bytes): %d memories, %d audit events, %d keys, schema version %d\n",
				res.Path, res.Bytes, res.Memories, res.AuditEvents, res.Keys, res.SchemaVersion)
			return printLine(e.stdout, "verified: integrity %s; schema version and counts equal to %s as of the copy", res.Integrity, res.Source)
		},
	})
}

// dbFigures is what verification compares between a database and its copy.
// audit counts the events of the log and of its inboxes (those not yet
// drained into it); lastAudit and lastInbox are the seqs of the last event
// and inbox row (0: none), and appendsMark and lastAppend bound the rows
// of the inbox file not yet drained (sqlite/inbox.go): the copy holds the
// log up to them.
type dbFigures struct {
	schema, memories, audit, keys, lastAudit, lastInbox int64
	appendsMark, lastAppend                             int64
}

// sameLog reports whether g holds what f does: the copy's inbox takes the
// appends, so its inbox's seqs go past the source's.
func (f dbFigures) sameLog(g dbFigures) bool {
	return f.schema == g.schema && f.memories == g.memories && f.audit == g.audit && f.keys == g.keys && f.lastAudit == g.lastAudit
}

func (f dbFigures) String() string {
	return fmt.Sprintf("schema version %d, %d memories, %d audit events, %d keys", f.schema, f.memories, f.audit, f.keys)
}

// queryer is what readFigures needs: a *sql.Conn or a *sql.DB.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func readFigures(ctx context.Context, q queryer) (dbFigures, error) {
	var f dbFigures
	// The audit events waiting in the inboxes count too (a row copied from
	// the write inbox and not yet deleted there once); a database from
	// before the inboxes (schema 15 or older) has none.
	var inboxes int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_list WHERE name IN ('audit_inbox', 'audit_write_inbox')`).Scan(&inboxes); err != nil {
		return f, err
	}
	pending, lastInbox := "0", "0"
	if inboxes == 2 {
		pending = `(SELECT COALESCE(SUM(json_array_length(events)), 0) FROM audit_inbox a
			WHERE NOT EXISTS (SELECT 1 FROM audit_write_inbox w WHERE w.seq = a.origin))
			+ (SELECT COALESCE(SUM(json_array_length(events)), 0) FROM audit_write_inbox)`
		lastInbox = `(SELECT COALESCE(MAX(seq), 0) FROM audit_inbox)`
	}
	// The inbox file's rows past the mark, where it is attached.
	var appends int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_list WHERE name IN ('audit_appends', 'audit_drained')`).Scan(&appends); err != nil {
		return f, err
	}
	mark, lastAppend := "0", "0"
	if appends == 2 {
		mark = `(SELECT COALESCE(MAX(appends), 0) FROM audit_drained)`
		pending += ` + (SELECT COALESCE(SUM(json_array_length(events)), 0) FROM audit_appends WHERE seq > ` + mark + `)`
		lastAppend = `(SELECT COALESCE(MAX(seq), 0) FROM audit_appends)`
	}
	err := q.QueryRowContext(ctx, `SELECT
		(SELECT COALESCE(MAX(version), 0) FROM schema_migrations),
		(SELECT COUNT(*) FROM memories),
		(SELECT COUNT(*) FROM audit_events) + `+pending+`,
		(SELECT COUNT(*) FROM keys),
		(SELECT COALESCE(MAX(seq), 0) FROM audit_events),
		`+lastInbox+`, `+mark+`, `+lastAppend).Scan(&f.schema, &f.memories, &f.audit, &f.keys, &f.lastAudit, &f.lastInbox, &f.appendsMark, &f.lastAppend)
	return f, err
}

// sqliteURI is a file: URI for path, so that a '?' or '#' in it is not
// read as parameters.
func sqliteURI(path, params string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + params, nil
}

// backupSQLite copies the database at src into the new file dst with
// SQLite's online backup API, and verifies the copy.
//
// Consistency: the copy is taken inside one read transaction on the
// source, which also reads the figures (schema version, memories, audit
// events, keys), so both are of the same snapshot, however many commits
// other processes make meanwhile; WAL lets them go on (a writer is never
// blocked by the copy; checkpoints wait for it to finish). VACUUM INTO
// would copy a snapshot too, but runs in a transaction of its own, so
// nothing could say what the source held as of the copy; the backup API
// joins the transaction already open on its connection.
//
// The copy is then switched to rollback-journal mode, so that it is one
// self-contained file (memgate switches it back to WAL when it opens it),
// checked with PRAGMA integrity_check, its figures compared with the
// source's, and synced. dst must not exist (nor a -journal, -wal or -shm
// beside it, which SQLite would take as part of it); on any failure what
// was written of it is removed.
func backupSQLite(ctx context.Context, src, dst string, o backupOptions) (res *BackupResult, err error) {
	if o.pagesPerStep <= 0 {
		o.pagesPerStep = backupStep
	}
	if err := needDatabase(src); err != nil {
		return nil, err
	}
	for _, p := range []string{dst, dst + "-journal", dst + "-wal", dst + "-shm"} {
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("%s exists: refusing to overwrite it (remove it, or name another --to)", p)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("backup to %s: %w", dst, err)
		}
	}
	// Claim the name before anything is written: an empty file is an
	// empty database to SQLite, and O_EXCL fails if someone else took it
	// since the check. A copy holds every memory: readable by its owner
	// only.
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("backup to %s: %w", dst, err)
	}
	f.Close()
	defer func() {
		if err != nil {
			for _, p := range []string{dst, dst + "-journal", dst + "-wal", dst + "-shm"} {
				os.Remove(p)
			}
		}
	}()

	srcURI, err := sqliteURI(src, "_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		return nil, err
	}
	dstURI, err := sqliteURI(dst, "_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	// The audit log's file, where this memgate keeps the log (an older
	// database, or a backup, has it in its one file).
	auditURI, inboxURI := "", ""
	if _, err := os.Stat(sqlite.AuditPath(src)); err == nil {
		if auditURI, err = sqliteURI(sqlite.AuditPath(src), "mode=ro"); err != nil {
			return nil, err
		}
		// And the audit appends' file, where this memgate keeps the
		// events not yet drained into the log.
		if _, err := os.Stat(sqlite.InboxPath(src)); err == nil {
			if inboxURI, err = sqliteURI(sqlite.InboxPath(src), "mode=ro"); err != nil {
				return nil, err
			}
		}
	}
	snap, err := copyDatabase(ctx, src, srcURI, auditURI, inboxURI, dst, dstURI, o)
	if err != nil {
		return nil, err
	}
	got, integrity, err := verifyCopy(ctx, dst, dstURI)
	if err != nil {
		return nil, err
	}
	if integrity != "ok" {
		return nil, fmt.Errorf("backup %s: integrity check failed: %s", dst, integrity)
	}
	if !snap.sameLog(got) {
		return nil, fmt.Errorf("backup %s: the copy holds %s, the source held %s as of the copy", dst, got, snap)
	}
	if err := syncFile(dst); err != nil {
		return nil, fmt.Errorf("backup %s: %w", dst, err)
	}
	st, err := os.Stat(dst)
	if err != nil {
		return nil, err
	}
	return &BackupResult{Source: src, Path: dst, Bytes: st.Size(), SchemaVersion: got.schema,
		Memories: got.memories, AuditEvents: got.audit, Keys: got.keys, Integrity: integrity}, nil
}

// copyDatabase copies srcURI into dstURI in one read transaction on the
// source and returns the source's figures in that transaction.
func copyDatabase(ctx context.Context, src, srcURI, auditURI, inboxURI, dst, dstURI string, o backupOptions) (dbFigures, error) {
	db, err := sql.Open("sqlite", srcURI)
	if err != nil {
		return dbFigures{}, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return dbFigures{}, fmt.Errorf("open database %s: %w", src, err)
	}
	defer conn.Close()
	if auditURI != "" {
		// The figures count the log where the server writes it.
		if _, err := conn.ExecContext(ctx, "ATTACH DATABASE ? AS audit", auditURI); err != nil {
			return dbFigures{}, fmt.Errorf("open the audit log of %s: %w", src, err)
		}
	}
	if inboxURI != "" {
		if _, err := conn.ExecContext(ctx, "ATTACH DATABASE ? AS inbox", inboxURI); err != nil {
			return dbFigures{}, fmt.Errorf("open the audit inbox of %s: %w", src, err)
		}
	}
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return dbFigures{}, fmt.Errorf("backup %s: %w", src, err)
	}
	// Ends the read transaction; a query_only connection has nothing to
	// roll back.
	defer conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	if inboxURI != "" {
		// The inbox file's snapshot first, the log's after: a drain that
		// commits between the two has its rows in the log's, and the
		// rows it deletes from the inbox after are in the inbox's. The
		// other way round, they could be in neither.
		if _, err := conn.ExecContext(ctx, "SELECT COUNT(*) FROM inbox.sqlite_schema"); err != nil {
			return dbFigures{}, fmt.Errorf("backup %s: %w", src, err)
		}
	}
	// The first read starts the transaction's snapshot.
	snap, err := readFigures(ctx, conn)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return dbFigures{}, fmt.Errorf("%s is not a memgate database (%v)", src, err)
		}
		return dbFigures{}, fmt.Errorf("backup %s: %w", src, err)
	}
	err = conn.Raw(func(dc any) error {
		b, ok := dc.(interface {
			NewBackup(string) (*msqlite.Backup, error)
		})
		if !ok {
			return fmt.Errorf("the SQLite driver (%T) offers no online backup", dc)
		}
		bk, err := b.NewBackup(dstURI)
		if err != nil {
			return err
		}
		for {
			more, err := bk.Step(int32(o.pagesPerStep))
			if err == nil && more {
				if o.afterStep != nil {
					o.afterStep()
				}
				err = ctx.Err()
			}
			if err != nil || !more {
				if ferr := bk.Finish(); err == nil {
					err = ferr
				}
				return err
			}
		}
	})
	if err != nil {
		return dbFigures{}, fmt.Errorf("backup %s: %w", src, err)
	}
	// Still the same snapshot: the copy holds exactly this.
	after, err := readFigures(ctx, conn)
	if err != nil {
		return dbFigures{}, fmt.Errorf("backup %s: %w", src, err)
	}
	if after != snap {
		return dbFigures{}, fmt.Errorf("backup %s: the read transaction moved during the copy (%s, then %s)", src, snap, after)
	}
	if auditURI != "" {
		// Still in the same read transaction: the log as of the snapshot.
		if err := copyAuditLog(ctx, conn, dst, dstURI, snap); err != nil {
			return dbFigures{}, err
		}
	}
	return snap, nil
}

// copyAuditLog puts the audit log of the database, as src (a connection
// to it in the snapshot's read transaction, with the log's file attached
// as schema audit) sees it, into the copy at dstURI, in the copy's one
// file, as an older memgate kept it: its tables, indexes, triggers and
// sequences, its events up to snap.lastAudit and its inbox up to
// snap.lastInbox (the snapshot's: reading through src keeps a drain that
// commits meanwhile out of the copy). memgate moves it to a file of its
// own again when it opens the copy.
func copyAuditLog(ctx context.Context, src *sql.Conn, dst, dstURI string, snap dbFigures) error {
	fail := func(err error) error { return fmt.Errorf("backup to %s: copy the audit log: %w", dst, err) }
	db, err := sql.Open("sqlite", dstURI)
	if err != nil {
		return fail(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	rows, err := src.QueryContext(ctx, `SELECT sql FROM audit.sqlite_schema
		WHERE tbl_name IN ('audit_events', 'audit_refs', 'audit_inbox') AND sql IS NOT NULL
		ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END,
			CASE tbl_name WHEN 'audit_events' THEN 0 WHEN 'audit_refs' THEN 1 ELSE 2 END, rowid`)
	if err != nil {
		return fail(err)
	}
	var ddl []string
	for rows.Next() {
		var stmt string
		if err := rows.Scan(&stmt); err != nil {
			rows.Close()
			return fail(err)
		}
		ddl = append(ddl, stmt)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	for _, stmt := range ddl {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fail(err)
		}
	}
	for _, c := range []struct {
		table string
		last  int64
	}{{"audit_events", snap.lastAudit}, {"audit_refs", snap.lastAudit}, {"audit_inbox", snap.lastInbox}, {"sqlite_sequence", -1}} {
		if err := copyRows(ctx, src, tx, c.table, c.last); err != nil {
			return fail(fmt.Errorf("%s: %w", c.table, err))
		}
	}
	// The appends not yet drained join the copy's inbox, with their
	// stamps: the copy has no inbox file, and drains them in stamp order
	// with the rest when it is opened.
	if snap.lastAppend > snap.appendsMark {
		rows, err := src.QueryContext(ctx, "SELECT at, events FROM inbox.audit_appends WHERE seq > ? AND seq <= ? ORDER BY seq", snap.appendsMark, snap.lastAppend)
		if err != nil {
			return fail(err)
		}
		defer rows.Close()
		for rows.Next() {
			var at int64
			var events string
			if err := rows.Scan(&at, &events); err != nil {
				return fail(err)
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO main.audit_inbox (events, at) VALUES (?, ?)", events, at); err != nil {
				return fail(err)
			}
		}
		if err := rows.Err(); err != nil {
			return fail(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}

// copyRows copies the rows of table in src's schema audit whose seq is at
// most last (every row of sqlite_sequence, which last < 0 asks for, that
// names one of the log's tables) into the same table of tx's database.
func copyRows(ctx context.Context, src *sql.Conn, tx *sql.Tx, table string, last int64) error {
	q, args := "SELECT * FROM audit."+table+" WHERE seq <= ?", []any{last}
	if last < 0 {
		q, args = "SELECT * FROM audit."+table+" WHERE name IN ('audit_events', 'audit_inbox')", nil
	}
	rows, err := src.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	ins, err := tx.PrepareContext(ctx, "INSERT INTO main."+table+" VALUES ("+strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")+")")
	if err != nil {
		return err
	}
	defer ins.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if _, err := ins.ExecContext(ctx, vals...); err != nil {
			return err
		}
	}
	return rows.Err()
}

// verifyCopy makes the copy at dstURI a rollback-journal database and
// returns its figures and the result of PRAGMA integrity_check ("ok", or
// the first problems it reports).
func verifyCopy(ctx context.Context, dst, dstURI string) (dbFigures, string, error) {
	db, err := sql.Open("sqlite", dstURI)
	if err != nil {
		return dbFigures{}, "", err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode=DELETE").Scan(&mode); err != nil {
		return dbFigures{}, "", fmt.Errorf("open the copy %s: %w", dst, err)
	}
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check(10)")
	if err != nil {
		return dbFigures{}, "", fmt.Errorf("check the copy %s: %w", dst, err)
	}
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return dbFigures{}, "", err
		}
		problems = append(problems, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return dbFigures{}, "", fmt.Errorf("check the copy %s: %w", dst, err)
	}
	integrity := strings.Join(problems, "; ")
	f, err := readFigures(ctx, db)
	if err != nil {
		return dbFigures{}, "", fmt.Errorf("read the copy %s: %w", dst, err)
	}
	return f, integrity, nil
}

// syncFile flushes the file at path, and the directory entry naming it,
// to stable storage.
func syncFile(path string) error {
	for _, p := range []string{path, filepath.Dir(path)} {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
