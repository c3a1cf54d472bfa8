package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// TestDiskErrorsAreUnavailable feeds interpretError the errors the driver
// really returns for a full database, a file that cannot be opened and a
// read-only file: each is unavailable with its own message, which holds no
// path and nothing the driver said, and the driver's error stays wrapped
// for the log. (An I/O error needs a failing disk: server's fault tests
// make one with a file size limit and a read-only remount.)
func TestDiskErrorsAreUnavailable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secretDir := filepath.Join(dir, "private-dir-name")
	driverErr := func(dsn string, stmts ...string) error {
		t.Helper()
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		for _, s := range stmts {
			if _, err := db.Exec(s); err != nil {
				return err
			}
		}
		return nil
	}
	rw := "file:" + filepath.Join(dir, "rw.db")
	if err := driverErr(rw, "CREATE TABLE t (b BLOB)"); err != nil {
		t.Fatalf("control: %v", err)
	}
	cases := []struct {
		name string
		err  error
		want *memgate.Error
	}{
		{"full", driverErr(rw+"?_pragma=max_page_count(2)", "INSERT INTO t VALUES (zeroblob(100000))"), errFull()},
		{"cannot open", driverErr("file:"+filepath.Join(secretDir, "missing", "m.db"), "CREATE TABLE t (a)"), errCantOpen()},
		{"read-only", driverErr(rw+"?mode=ro", "INSERT INTO t VALUES (1)"), errReadOnly()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("the driver returned no error")
			}
			got := interpretError(context.Background(), "write", tc.err)
			if memgate.ErrorCode(got) != memgate.EUNAVAILABLE || memgate.ErrorMessage(got) != tc.want.Message {
				t.Fatalf("got %s %q, want unavailable %q (driver: %v)", memgate.ErrorCode(got), memgate.ErrorMessage(got), tc.want.Message, tc.err)
			}
			if msg := memgate.ErrorMessage(got); strings.Contains(msg, dir) || strings.Contains(msg, "private-dir-name") || strings.Contains(msg, tc.err.Error()) {
				t.Fatalf("the message %q shows the driver's detail", msg)
			}
			if !strings.Contains(got.Error(), tc.err.Error()) {
				t.Fatalf("%v does not keep the driver error for the log", got)
			}
		})
	}
	// Control: a driver error outside the list stays internal.
	syntax := driverErr(rw, "SELEC 1")
	if got := interpretError(context.Background(), "read", syntax); memgate.ErrorCode(got) != memgate.EINTERNAL {
		t.Fatalf("a syntax error: %s, want internal", memgate.ErrorCode(got))
	}
}

// bigMemory is a memory of about 2 KiB, so that a few hundred fill a
// small cap.
func bigMemory(id string) *memgate.Memory {
	m := testMemory(id, id+" "+strings.Repeat("filler text to take room in the database. ", 48))
	m.DedupKey = ""
	return m
}

// checkCap holds n connections of pool at once (so each is a distinct
// connection) and checks each carries a size cap of about capBytes.
func checkCap(t *testing.T, pool *sql.DB, n int, capBytes int64) {
	t.Helper()
	for i := range n {
		conn, err := pool.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// Each file is capped: the memories' and the audit log's.
		for _, schema := range []string{"main", "audit"} {
			var pages, size int64
			if err := conn.QueryRowContext(t.Context(), "PRAGMA "+schema+".max_page_count").Scan(&pages); err != nil {
				t.Fatal(err)
			}
			if err := conn.QueryRowContext(t.Context(), "PRAGMA "+schema+".page_size").Scan(&size); err != nil {
				t.Fatal(err)
			}
			if pages*size > capBytes || pages*size < capBytes-size {
				t.Fatalf("connection %d: %s.max_page_count %d of %d bytes, want about %d bytes", i, schema, pages, size, capBytes)
			}
		}
	}
}

// TestMaxBytes fills a database to its size cap and checks what a full
// database must do: a write that needs room fails as unavailable naming
// the condition and stores nothing (a batch, all or none: the count, the
// partition's change sequence and the change feed stay as they were), the
// database does not grow past the cap and stays sound, every read keeps
// answering, and writes succeed again after a delete frees pages or a
// reopen raises the cap. Each "stores nothing" sits beside a control that
// stores the same batch when there is room.
func TestMaxBytes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "memgate.db")
	const capBytes = 640 << 10
	db := openTest(t, path, WithMaxBytes(capBytes))

	// Every connection carries the cap: the writer and each reader.
	checkCap(t, db.w, 1, capBytes)
	checkCap(t, db.r, DefaultMaxReaders, capBytes)

	batch := func(prefix string, n int) []*memgate.Memory {
		ms := make([]*memgate.Memory, n)
		for i := range ms {
			ms[i] = bigMemory(fmt.Sprintf("%s-%03d", prefix, i))
		}
		return ms
	}
	// Control: a batch of 8 is stored whole while there is room.
	if _, err := db.Remember(ctx, batch("control", 8), nil); err != nil {
		t.Fatalf("control batch: %v", err)
	}

	// Fill: batches while they fit, then single memories to the brim.
	stored, size := 8, 8
	var fullErr error
	for i := 0; fullErr == nil; i++ {
		if i > 1000 {
			t.Fatal("the database never filled up: the cap does not hold")
		}
		_, err := db.Remember(ctx, batch(fmt.Sprintf("fill%04d", i), size), nil)
		switch {
		case err == nil:
			stored += size
		case size > 1 && memgate.ErrorCode(err) == memgate.EUNAVAILABLE:
			size = 1 // no room for a batch any more: one at a time from here
		default:
			fullErr = err
		}
	}
	if memgate.ErrorCode(fullErr) != memgate.EUNAVAILABLE || memgate.ErrorMessage(fullErr) != errFull().Message {
		t.Fatalf("a write past the cap: %s %q (%v), want unavailable %q", memgate.ErrorCode(fullErr), memgate.ErrorMessage(fullErr), fullErr, errFull().Message)
	}
	t.Logf("%d memories stored before the cap", stored)
	if stored < 100 {
		t.Fatalf("only %d memories before the cap: the cap is not what was asked", stored)
	}

	var pageCount, pageSize int64
	db.r.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pageCount)
	db.r.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize)
	if pageCount*pageSize > capBytes {
		t.Fatalf("the database is %d bytes, past its cap of %d", pageCount*pageSize, capBytes)
	}

	type snapshot struct {
		count int64
		head  int64
		feed  int
	}
	snap := func() snapshot {
		t.Helper()
		counts, err := db.Counts(ctx, alice, time.Time{})
		if err != nil {
			t.Fatalf("Counts while full: %v", err)
		}
		var s snapshot
		for _, c := range counts {
			s.count += c.N
		}
		if s.head, err = db.PartitionHead(ctx, "acme", "alice"); err != nil {
			t.Fatalf("PartitionHead while full: %v", err)
		}
		ch, err := db.ChangesSince(ctx, "acme", "alice", 0, 10000)
		if err != nil {
			t.Fatalf("ChangesSince while full: %v", err)
		}
		s.feed = len(ch.Memories) + len(ch.Deleted)
		return s
	}
	before := snap()
	if before.count != int64(stored) || before.head == 0 || before.feed != stored {
		t.Fatalf("before: %+v, want %d memories in the count and the feed", before, stored)
	}

	// A batch that needs room fails whole; so does a single memory.
	failed := batch("refused", 8)
	if _, err := db.Remember(ctx, failed, nil); memgate.ErrorCode(err) != memgate.EUNAVAILABLE {
		t.Fatalf("batch while full: %v, want unavailable", err)
	}
	if err := db.Insert(ctx, batch("inserted", 3)); memgate.ErrorCode(err) != memgate.EUNAVAILABLE {
		t.Fatalf("Insert while full: %v, want unavailable", err)
	}
	// Audit appends go to a file of their own (the inbox), capped apart:
	// an append still fits while the memories' file is full (control),
	// and once its own file is full an append fails whole, as
	// unavailable naming the condition.
	big := make([]store.AuditEvent, 200)
	for i := range big {
		big[i] = store.AuditEvent{Tenant: "acme", Principal: "alice", Actor: "test", Action: "remember",
			MemoryIDs: []string{fmt.Sprintf("m-%03d-%s", i, strings.Repeat("x", 40))}, At: time.Now()}
	}
	if err := db.AppendAudit(ctx, big); err != nil {
		t.Fatalf("AppendAudit while the memories' file is full: %v", err)
	}
	var auditFull error
	for i := 0; auditFull == nil; i++ {
		if i > 1000 {
			t.Fatal("the audit log never filled up: its cap does not hold")
		}
		auditFull = db.AppendAudit(ctx, big)
	}
	if memgate.ErrorCode(auditFull) != memgate.EUNAVAILABLE || memgate.ErrorMessage(auditFull) != errFull().Message {
		t.Fatalf("AppendAudit past the audit log's cap: %v, want unavailable %q", auditFull, errFull().Message)
	}
	var events int
	if err := db.r.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM audit_events) + (SELECT COALESCE(SUM(json_array_length(events)), 0) FROM audit_inbox)
		+ (SELECT COALESCE(SUM(json_array_length(events)), 0) FROM audit_appends)`).Scan(&events); err != nil {
		t.Fatal(err)
	}
	if events == 0 || events%len(big) != 0 {
		t.Fatalf("%d events in the log: a refused append left part of its batch", events)
	}
	for _, schema := range []string{"audit", "inbox"} {
		var pages, pageSize int64
		db.r.QueryRowContext(ctx, "PRAGMA "+schema+".page_count").Scan(&pages)
		db.r.QueryRowContext(ctx, "PRAGMA "+schema+".page_size").Scan(&pageSize)
		if pages*pageSize > capBytes {
			t.Fatalf("the %s file is %d bytes, past its cap of %d", schema, pages*pageSize, capBytes)
		}
	}
	if after := snap(); after != before {
		t.Fatalf("a refused write changed the database: before %+v, after %+v", before, after)
	}
	for _, m := range failed {
		if _, err := db.Get(ctx, alice, m.ID); memgate.ErrorCode(err) != memgate.ENOTFOUND {
			t.Fatalf("Get %s of the refused batch: %v, want not_found", m.ID, err)
		}
	}

	// Reads keep answering: the control batch is there.
	if m, err := db.Get(ctx, alice, "control-003"); err != nil || m.ID != "control-003" {
		t.Fatalf("Get while full: %v", err)
	}
	if p, err := db.List(ctx, alice, store.Filter{Limit: 5}); err != nil || len(p.Memories) != 5 {
		t.Fatalf("List while full: %v", err)
	}
	if ms, err := db.LoadPartition(ctx, "acme", "alice"); err != nil || len(ms) != stored {
		t.Fatalf("LoadPartition while full: %d memories, %v", len(ms), err)
	}
	if ms, err := db.Fetch(ctx, alice, []string{"control-000", "control-007"}, store.ReadGate{Now: time.Now(), AsOf: time.Now()}); err != nil || len(ms) != 2 {
		t.Fatalf("Fetch while full: %d memories, %v", len(ms), err)
	}
	if _, err := db.ListAudit(ctx, "acme", store.AuditFilter{}); err != nil {
		t.Fatalf("ListAudit while full: %v", err)
	}
	requireIntegrity(t, db)

	// A delete needs no new page: it frees room, and a write fits again.
	if err := db.Delete(ctx, alice, "control-000"); err != nil {
		t.Fatalf("Delete while full: %v", err)
	}
	if _, err := db.Remember(ctx, []*memgate.Memory{bigMemory("after-delete")}, nil); err != nil {
		t.Fatalf("Remember after a delete freed room: %v", err)
	}
	requireIntegrity(t, db)

	// Reopening with a larger cap lets the refused batch in.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openTest(t, path, WithMaxBytes(2*capBytes))
	if _, err := db.Remember(ctx, failed, nil); err != nil {
		t.Fatalf("the refused batch after raising the cap: %v", err)
	}
	if n, err := db.LoadPartition(ctx, "acme", "alice"); err != nil || len(n) != stored+len(failed) {
		t.Fatalf("after raising the cap: %d memories, %v; want %d", len(n), err, stored+len(failed))
	}
	requireIntegrity(t, db)
}

// TestMaxBytesBelowCurrentSize opens a database already larger than the
// cap: it opens and reads, and cannot grow; without the cap it grows.
func TestMaxBytesBelowCurrentSize(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "memgate.db")
	db := openTest(t, path)
	ms := make([]*memgate.Memory, 200)
	for i := range ms {
		ms[i] = bigMemory(fmt.Sprintf("m-%03d", i))
	}
	if err := db.Insert(ctx, ms); err != nil {
		t.Fatal(err)
	}
	db.Close()

	capped := openTest(t, path, WithMaxBytes(64<<10))
	if _, err := capped.Get(ctx, alice, "m-100"); err != nil {
		t.Fatalf("Get under a cap below the size: %v", err)
	}
	err := capped.Insert(ctx, []*memgate.Memory{bigMemory("grow-1"), bigMemory("grow-2"), bigMemory("grow-3")})
	if memgate.ErrorCode(err) != memgate.EUNAVAILABLE || memgate.ErrorMessage(err) != errFull().Message {
		t.Fatalf("growing past a cap below the size: %v, want unavailable (full)", err)
	}
	capped.Close()

	// Control: without the cap the same write succeeds.
	free := openTest(t, path)
	if err := free.Insert(ctx, []*memgate.Memory{bigMemory("grow-1"), bigMemory("grow-2"), bigMemory("grow-3")}); err != nil {
		t.Fatalf("control without a cap: %v", err)
	}
}

func TestMaxBytesNegativeRefused(t *testing.T) {
	t.Parallel()
	if _, err := Open(t.Context(), filepath.Join(t.TempDir(), "m.db"), WithMaxBytes(-1)); err == nil {
		t.Fatal("a negative cap was accepted")
	}
}
