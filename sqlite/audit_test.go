package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// rawConn opens the database file at path alone (nothing attached), as a
// tool or an older memgate would, with the audit log file attached as
// schema audit when attach is set.
func rawConn(t *testing.T, path string, attach bool) *sql.Conn {
	t.Helper()
	pool, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	conn, err := pool.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if attach {
		if _, err := conn.ExecContext(t.Context(), "ATTACH DATABASE ? AS audit", "file:"+AuditPath(path)); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

// tablesIn returns the audit log's tables that schema of conn holds.
func tablesIn(t *testing.T, conn *sql.Conn, schema string) []string {
	t.Helper()
	rows, err := conn.QueryContext(t.Context(), "SELECT name FROM "+schema+".sqlite_schema WHERE type = 'table' AND name IN ('audit_events', 'audit_refs', 'audit_inbox') ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	return names
}

// appendEvents appends n events naming a memory each.
func appendEvents(t *testing.T, db *DB, prefix string, n int) {
	t.Helper()
	evs := make([]store.AuditEvent, n)
	for i := range evs {
		evs[i] = store.AuditEvent{Tenant: "acme", Principal: "alice", Actor: "test", Action: "recall",
			MemoryIDs: []string{fmt.Sprintf("%s-%02d", prefix, i)}, At: time.Now()}
	}
	if err := db.AppendAudit(t.Context(), evs); err != nil {
		t.Fatal(err)
	}
}

// auditLog returns "seq:memory ids" of every event, oldest first.
func auditLog(t *testing.T, db *DB) []string {
	t.Helper()
	p, err := db.ListAudit(t.Context(), "acme", store.AuditFilter{Limit: store.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range p.Events {
		out = append(out, fmt.Sprintf("%d:%v", e.Seq, e.MemoryIDs))
	}
	slices.Reverse(out)
	return out
}

// TestAuditLogInItsOwnFile: the audit log's tables are in the audit file,
// not in the database file, and an audit append writes the audit file
// only: the database file's write-ahead log does not grow (which is what
// keeps the readers' cache of memories valid across recalls). Control: a
// memory written grows it.
func TestAuditLogInItsOwnFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memgate.db")
	db := openTest(t, path)
	appendEvents(t, db, "m", 3)
	if err := db.DrainAudit(t.Context()); err != nil {
		t.Fatal(err)
	}
	conn := rawConn(t, path, true)
	if got := tablesIn(t, conn, "main"); len(got) != 0 {
		t.Fatalf("the database file holds %v", got)
	}
	if got := tablesIn(t, conn, "audit"); !slices.Equal(got, []string{"audit_events", "audit_inbox", "audit_refs"}) {
		t.Fatalf("the audit file holds %v", got)
	}
	var n int
	if err := conn.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM audit.audit_events").Scan(&n); err != nil || n != 3 {
		t.Fatalf("the audit file holds %d events (%v), want 3", n, err)
	}
	conn.Close()

	walSize := func() int64 {
		st, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	before := walSize()
	appendEvents(t, db, "n", 20)
	if after := walSize(); after != before {
		t.Fatalf("an audit append wrote %d bytes to the database's write-ahead log", after-before)
	}
	if _, err := db.Remember(t.Context(), []*memgate.Memory{bigMemory("control")}, nil); err != nil {
		t.Fatal(err)
	}
	if after := walSize(); after == before {
		t.Fatal("control: a remember did not write the database's write-ahead log")
	}
}

// toOldLayout gives the database at path (closed) the layout of a memgate
// before the audit log had a file of its own, or of a backup: the log's
// tables, indexes, triggers and sequence in the database file. With
// keepAudit the audit file stays beside it (what an interrupted move
// leaves, or a backup restored over a database), holding stale.
func toOldLayout(t *testing.T, path string, keepAudit bool, stale func(*sql.Conn)) {
	t.Helper()
	conn := rawConn(t, path, true)
	ctx := t.Context()
	rows, err := conn.QueryContext(ctx, `SELECT sql FROM audit.sqlite_schema WHERE tbl_name IN ('audit_events', 'audit_refs', 'audit_inbox') AND sql IS NOT NULL
		ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END,
			CASE tbl_name WHEN 'audit_events' THEN 0 WHEN 'audit_refs' THEN 1 ELSE 2 END, rowid`)
	if err != nil {
		t.Fatal(err)
	}
	var ddl []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		ddl = append(ddl, s)
	}
	rows.Close()
	for _, s := range append(ddl,
		"INSERT INTO main.audit_events SELECT * FROM audit.audit_events",
		"INSERT INTO main.audit_refs SELECT * FROM audit.audit_refs",
		"INSERT INTO main.audit_inbox SELECT * FROM audit.audit_inbox",
		"INSERT INTO main.sqlite_sequence (name, seq) SELECT name, seq FROM audit.sqlite_sequence WHERE name IN ('audit_events', 'audit_inbox')") {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if stale != nil {
		stale(conn)
	}
	if _, err := conn.ExecContext(ctx, "DETACH DATABASE audit"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if !keepAudit {
		for _, f := range Files(path)[3:] {
			os.Remove(f)
		}
	}
}

// TestAuditLogMovedFromTheDatabase: a database whose audit log is in its
// one file (an older memgate's, or a backup) has it moved to the audit
// file on Open, whole: the same events and seqs, the refs (what happened
// to a memory), and the next seq after the last. A move interrupted after
// the audit file was written (it holds a copy, or anything else) is done
// again from the database, which is kept until the move is complete.
func TestAuditLogMovedFromTheDatabase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		keepAudit bool
		stale     func(*sql.Conn)
	}{
		{"no audit file", false, nil},
		{"interrupted: the audit file holds a copy", true, nil},
		{"interrupted: the audit file holds other events", true, func(c *sql.Conn) {
			if _, err := c.ExecContext(context.Background(), `INSERT INTO audit.audit_events (tenant, actor, action, at) VALUES ('acme', 'x', 'stale', 0)`); err != nil {
				panic(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "memgate.db")
			db, err := Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			appendEvents(t, db, "m", 5)
			want := auditLog(t, db)
			refs, err := db.ListAudit(t.Context(), "acme", store.AuditFilter{MemoryID: "m-03"})
			if err != nil || len(refs.Events) != 1 {
				t.Fatalf("events naming m-03: %+v %v", refs, err)
			}
			db.Close()
			toOldLayout(t, path, tc.keepAudit, tc.stale)

			db = openTest(t, path)
			if got := auditLog(t, db); !slices.Equal(got, want) {
				t.Fatalf("after the move the log is %v, want %v", got, want)
			}
			if refs, err := db.ListAudit(t.Context(), "acme", store.AuditFilter{MemoryID: "m-03"}); err != nil || len(refs.Events) != 1 {
				t.Fatalf("after the move, events naming m-03: %+v %v", refs, err)
			}
			appendEvents(t, db, "n", 1)
			got := auditLog(t, db)
			var last, next int64
			fmt.Sscanf(want[len(want)-1], "%d:", &last)
			fmt.Sscanf(got[len(got)-1], "%d:", &next)
			if next != last+1 {
				t.Fatalf("the first event after the move has seq %d, the last before %d", next, last)
			}
			conn := rawConn(t, path, true)
			if got := tablesIn(t, conn, "main"); len(got) != 0 {
				t.Fatalf("after the move the database file still holds %v", got)
			}
		})
	}
}

// TestAuditLogFileMissing: a database whose log has moved, opened without
// its audit file (copied alone), is refused naming the audit log, and the
// refused Open leaves no audit file behind. Control: with the file, it
// opens.
func TestAuditLogFileMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "memgate.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	appendEvents(t, db, "m", 2)
	db.Close()
	copyPath := filepath.Join(dir, "copy.db")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Open(t.Context(), copyPath)
	if !errors.Is(err, errNoAuditLog) {
		t.Fatalf("Open of a database without its audit log file: %v, want %v", err, errNoAuditLog)
	}
	for _, f := range Files(copyPath)[3:] {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the refused Open left %s (%v)", f, err)
		}
	}
	// An inbox file that was there (with the two events, not yet
	// drained) stays: it is no file the refused Open made.
	inbox, err := os.ReadFile(InboxPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(InboxPath(copyPath), inbox, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err = Open(t.Context(), copyPath); !errors.Is(err, errNoAuditLog) {
		t.Fatalf("Open of a database without its audit log file, with an inbox file: %v, want %v", err, errNoAuditLog)
	}
	if b, err := os.ReadFile(InboxPath(copyPath)); err != nil || !bytes.Equal(b, inbox) {
		t.Fatalf("the refused Open changed the inbox file that was there (%v)", err)
	}
	// Control.
	db = openTest(t, path)
	if got := auditLog(t, db); len(got) != 2 {
		t.Fatalf("the database with its audit file: %v", got)
	}
}

// TestWriteInboxMovesOnce: a write's events wait in audit_write_inbox,
// beside the memories, and a drain copies them to the audit log's inbox,
// then deletes them there, then moves them into the log. A drain
// interrupted after the copy (the copy committed, the delete not) and
// done again moves each event once: the copy is skipped by its origin.
// Control: the same events with no interruption are in the log once too.
func TestWriteInboxMovesOnce(t *testing.T) {
	t.Parallel()
	for _, interrupted := range []bool{false, true} {
		t.Run(fmt.Sprintf("interrupted=%v", interrupted), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
			ev := func(r *store.WriteResult) []store.AuditEvent {
				return []store.AuditEvent{{Tenant: "acme", Principal: "alice", Actor: "test", Action: "remember", At: time.Now(), MemoryIDs: []string{r.Memories[0].ID}}}
			}
			for _, id := range []string{"w-001", "w-002"} {
				if _, err := db.RememberAudited(ctx, []*memgate.Memory{bigMemory(id)}, nil, ev); err != nil {
					t.Fatal(err)
				}
			}
			count := func(table string) int {
				var n int
				if err := db.w.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			if count("main.audit_write_inbox") != 2 || count("audit.audit_events") != 0 {
				t.Fatalf("before a drain: %d rows in the write inbox, %d events", count("main.audit_write_inbox"), count("audit.audit_events"))
			}
			if interrupted {
				// The first step of a drain, committed alone.
				if _, err := db.w.ExecContext(ctx, "INSERT INTO audit_inbox (events, origin, at) SELECT events, seq, at FROM audit_write_inbox"); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.DrainAudit(ctx); err != nil {
				t.Fatal(err)
			}
			if n := count("main.audit_write_inbox") + count("audit.audit_inbox"); n != 0 {
				t.Fatalf("after the drain the inboxes hold %d rows", n)
			}
			log := auditLog(t, db)
			if len(log) != 2 || !strings.Contains(log[0], "w-001") || !strings.Contains(log[1], "w-002") {
				t.Fatalf("the log after the drain: %v, want the two events once, in order", log)
			}
		})
	}
}

// TestAuditLogFollowsCommits: the events of a write (which wait beside
// the memories) and of the recalls around it (which wait in the audit
// log's file) are in the log in the order they were committed, however
// the drains fall: a write, two appends, a write, each drained at once or
// all at the end. Control: the appends alone keep their order too.
func TestAuditLogFollowsCommits(t *testing.T) {
	t.Parallel()
	for _, drainEach := range []bool{false, true} {
		t.Run(fmt.Sprintf("drain each=%v", drainEach), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
			step := func(name string, write bool) {
				t.Helper()
				ev := []store.AuditEvent{{Tenant: "acme", Principal: "alice", Actor: "test", Action: "recall", At: time.Now(), MemoryIDs: []string{name}}}
				if write {
					if _, err := db.RememberAudited(ctx, []*memgate.Memory{bigMemory(name)}, nil, func(*store.WriteResult) []store.AuditEvent { return ev }); err != nil {
						t.Fatal(err)
					}
				} else if err := db.AppendAudit(ctx, ev); err != nil {
					t.Fatal(err)
				}
				if drainEach {
					if err := db.DrainAudit(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			step("w-1", true)
			step("r-2", false)
			step("r-3", false)
			step("w-4", true)
			step("r-5", false)
			var got []string
			for _, e := range auditLog(t, db) {
				got = append(got, e[strings.Index(e, ":")+1:])
			}
			want := []string{"[w-1]", "[r-2]", "[r-3]", "[w-4]", "[r-5]"}
			if !slices.Equal(got, want) {
				t.Fatalf("the log, oldest first: %v, want %v", got, want)
			}
		})
	}
	// More rows than a drain transaction moves (drainRows), writes
	// and appends interleaved: each transaction takes the oldest of both.
	t.Run("past a drain transaction", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
		var want []string
		for i := range 400 {
			name := fmt.Sprintf("%03d", i)
			ev := []store.AuditEvent{{Tenant: "acme", Principal: "alice", Actor: "test", Action: "recall", At: time.Now(), MemoryIDs: []string{name}}}
			if i%5 < 2 {
				if _, err := db.RememberAudited(ctx, []*memgate.Memory{bigMemory(name)}, nil, func(*store.WriteResult) []store.AuditEvent { return ev }); err != nil {
					t.Fatal(err)
				}
			} else if err := db.AppendAudit(ctx, ev); err != nil {
				t.Fatal(err)
			}
			want = append(want, "["+name+"]")
		}
		if err := db.DrainAudit(ctx); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range auditLog(t, db) {
			got = append(got, e[strings.Index(e, ":")+1:])
		}
		if !slices.Equal(got, want) {
			t.Fatalf("the log, oldest first: %v, want %v", got, want)
		}
	})
}
