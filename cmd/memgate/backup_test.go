package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/sqlite"
	"github.com/memgate/memgate/store"
)

// sourceFigures reads db's figures through a connection of its own.
func sourceFigures(t *testing.T, db string) dbFigures {
	t.Helper()
	uri, err := sqliteURI(db, "mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := sql.Open("sqlite", uri)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	conn, err := pool.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The audit log's own file, when the database has one (a copy keeps
	// the log in its one file).
	if _, err := os.Stat(sqlite.AuditPath(db)); err == nil {
		auditURI, err := sqliteURI(sqlite.AuditPath(db), "mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(t.Context(), "ATTACH DATABASE ? AS audit", auditURI); err != nil {
			t.Fatal(err)
		}
		inboxURI, err := sqliteURI(sqlite.InboxPath(db), "mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(t.Context(), "ATTACH DATABASE ? AS inbox", inboxURI); err != nil {
			t.Fatal(err)
		}
	}
	f, err := readFigures(t.Context(), conn)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBackupWhileServing: a backup of the database memgate serve is
// writing is a snapshot: writes committed while the copy runs are in the
// source afterwards and not in the copy, which opens, passes the integrity
// check and holds counts between the source's before and after. The copy
// goes one page per step, and after its first step waits for the writer
// to commit five more memories, so writes land in the middle of it every
// time.
func TestBackupWhileServing(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	s := startServe(t, db, "--rate", "-1")
	key := secretRE.FindString(s.stdout.String())
	c, err := client.New(s.url, key)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	var written atomic.Int64
	var writeErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			_, err := c.Remember(ctx, client.Memory{Principal: "alice", Kind: memgate.KindTask, Source: memgate.SourceUser,
				Content: fmt.Sprintf("Task %d: water the plant on shelf %d.", i, i*7)})
			if err != nil {
				if ctx.Err() == nil {
					writeErr = err
				}
				return
			}
			written.Add(1)
		}
	})
	waitWrites := func(n int64) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for written.Load() < n {
			if time.Now().After(deadline) {
				t.Errorf("the writer stopped at %d memories (%v)", written.Load(), writeErr)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitWrites(20)

	before := sourceFigures(t, db)
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	steps := 0
	res, err := backupSQLite(t.Context(), db, copyPath, backupOptions{pagesPerStep: 1, afterStep: func() {
		if steps++; steps == 1 {
			waitWrites(written.Load() + 5)
		}
	}})
	after := sourceFigures(t, db)
	stop()
	wg.Wait()
	if err != nil {
		t.Fatalf("backup while serving: %v", err)
	}
	if writeErr != nil {
		t.Fatalf("writer: %v", writeErr)
	}
	if steps < 10 {
		t.Fatalf("the copy took %d steps; want many, to write between them", steps)
	}
	if res.Memories < before.memories || res.Memories+5 > after.memories {
		t.Fatalf("copy holds %d memories; the source had %d before, %d after (5 or more written during the copy)", res.Memories, before.memories, after.memories)
	}
	if res.AuditEvents < before.audit || res.AuditEvents > after.audit || res.Keys != 1 || res.SchemaVersion != before.schema {
		t.Fatalf("copy %+v; source before %v, after %v", res, before, after)
	}

	// The copy, on its own: intact, with the figures reported, and a
	// database memgate opens.
	if got := sourceFigures(t, copyPath); got.schema != res.SchemaVersion || got.memories != res.Memories || got.audit != res.AuditEvents || got.keys != res.Keys {
		t.Fatalf("copy reads %v, backup reported %+v", got, res)
	}
	out := mustCLI(t, copyPath, "counts", "--tenant", "default", "--json")
	var counts struct{ Counts []struct{ N int64 } }
	if err := json.Unmarshal([]byte(out), &counts); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range counts.Counts {
		n += c.N
	}
	if n != res.Memories {
		t.Fatalf("memgate counts on the copy: %d memories, want %d", n, res.Memories)
	}
	// Opened, the copy's audit log moved to a file of its own, whole.
	if _, err := os.Stat(sqlite.AuditPath(copyPath)); err != nil {
		t.Fatalf("the copy, opened, has no audit log file: %v", err)
	}
	if got := sourceFigures(t, copyPath); got.audit != res.AuditEvents || got.memories != res.Memories {
		t.Fatalf("the copy, opened, reads %v; backup reported %+v", got, res)
	}
	if st, err := os.Stat(copyPath); err != nil || st.Mode().Perm() != 0o600 || st.Size() != res.Bytes {
		t.Fatalf("copy file: %v %v, want mode 0600 and %d bytes", st, err, res.Bytes)
	}
}

// TestBackupCommand: the CLI prints what it wrote, never overwrites a
// file, and removes what it wrote of a copy that fails.
func TestBackupCommand(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	for i := range 3 {
		mustCLI(t, db, "remember", "--tenant", "t", "--principal", "p", fmt.Sprintf("memory number %d", i))
	}
	mustCLI(t, db, "keys", "create", "--tenant", "t", "--role", "admin")
	dir := t.TempDir()
	copyPath := filepath.Join(dir, "copy.db")

	code, out, errs := runMemgate("backup", "--db", db, "--to", copyPath, "--json")
	var res BackupResult
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil {
		t.Fatalf("backup --json: exit %d, %q, %q (%v)", code, out, errs, err)
	}
	if res.Path != copyPath || res.Memories != 3 || res.Keys != 1 || res.AuditEvents < 3 || res.Integrity != "ok" || res.Bytes <= 0 || res.SchemaVersion <= 0 {
		t.Fatalf("backup --json: %+v", res)
	}
	if got := mustCLI(t, copyPath, "list", "--tenant", "t", "--principal", "p"); strings.Count(got, "memory number") != 3 {
		t.Fatalf("list on the copy: %s", got)
	}

	text := filepath.Join(dir, "text.db")
	code, out, _ = runMemgate("backup", "--db", db, "--to", text)
	if code != 0 || !strings.Contains(out, "wrote "+text+" (") || !strings.Contains(out, "3 memories") || !strings.Contains(out, "integrity ok") {
		t.Fatalf("backup: exit %d, %q", code, out)
	}

	// An existing file, or a sidecar SQLite would read as part of the
	// copy, is never overwritten.
	precious := filepath.Join(dir, "precious.db")
	if err := os.WriteFile(precious, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fresh.db-wal"), []byte("keep me too"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{precious, copyPath, filepath.Join(dir, "fresh.db"), db} {
		code, _, errs := runMemgate("backup", "--db", db, "--to", to)
		if code != 1 || !strings.Contains(errs, "exists: refusing to overwrite it") {
			t.Fatalf("backup onto %s: exit %d, %q", to, code, errs)
		}
	}
	if b, _ := os.ReadFile(precious); string(b) != "keep me" {
		t.Fatalf("precious.db now holds %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "fresh.db")); err == nil {
		t.Fatal("a copy was written beside a -wal file")
	}

	// A source that is no memgate database: an error, and no copy left.
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, []byte("not a database, only some text that is long enough to look like a header"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := existingDB(t)
	os.Truncate(empty, 0)
	for _, src := range []string{notDB, empty} {
		to := filepath.Join(dir, "failed.db")
		code, _, errs := runMemgate("backup", "--db", src, "--to", to)
		if code != 1 || errs == "" {
			t.Fatalf("backup of %s: exit %d, %q", src, code, errs)
		}
		for _, p := range []string{to, to + "-journal", to + "-wal", to + "-shm"} {
			if _, err := os.Stat(p); err == nil {
				t.Fatalf("backup of %s failed (%s) and left %s", src, errs, p)
			}
		}
	}
}

// TestBackupHoldsUndrainedAppends: audit events still in the inbox file
// (appended, not yet drained into the log) are in the copy, after those
// drained, in order; the source holds the same log (control). Restoring
// the copy over the database, whose inbox file still holds those appends,
// does not add them twice: the inbox of another log is cleared.
func TestBackupHoldsUndrainedAppends(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	db, err := sqlite.Open(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	appendN := func(prefix string, n int) {
		for i := range n {
			ev := store.AuditEvent{Tenant: "acme", Principal: "alice", Actor: "test", Action: "recall", At: time.Now(),
				RecallID: fmt.Sprintf("%s-%02d", prefix, i), MemoryIDs: []string{fmt.Sprintf("m-%02d", i)}}
			if err := db.AppendAudit(ctx, []store.AuditEvent{ev}); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendN("drained", 4)
	if err := db.DrainAudit(ctx); err != nil {
		t.Fatal(err)
	}
	appendN("pending", 3)
	db.Close() // the three stay in the inbox file: only a drain moves them
	recalls := func(path string) []string {
		t.Helper()
		db, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		page, err := db.ListAudit(ctx, "acme", store.AuditFilter{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range page.Events {
			ids = append(ids, e.RecallID)
		}
		return ids
	}
	if f := sourceFigures(t, src); f.audit != 7 || f.lastAppend <= f.appendsMark {
		t.Fatalf("the source's figures: %+v, want 7 events, 3 of them past the mark", f)
	}
	copyPath := filepath.Join(dir, "copy.db")
	if code, out, errs := runMemgate("backup", "--db", src, "--to", copyPath, "--json"); code != 0 {
		t.Fatalf("backup: exit %d, %q, %q", code, out, errs)
	}
	b, err := os.ReadFile(copyPath) // as written: opening it moves its log out
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pending-02", "pending-01", "pending-00", "drained-03", "drained-02", "drained-01", "drained-00"}
	if got := recalls(copyPath); !slices.Equal(got, want) {
		t.Fatalf("the copy's log: %v, want %v", got, want)
	}
	// Control: the source (whose next drain moves them) holds the same.
	if got := recalls(src); !slices.Equal(got, want) {
		t.Fatalf("the source's log: %v, want %v", got, want)
	}

	// Restored over a database whose inbox file holds appends.
	again := filepath.Join(dir, "again.db")
	if db, err = sqlite.Open(ctx, again); err != nil {
		t.Fatal(err)
	}
	appendN("pending", 3)
	db.Close()
	if f := sourceFigures(t, again); f.lastAppend != 3 {
		t.Fatalf("the database restored over holds %+v, want 3 appends in its inbox", f)
	}
	for _, p := range sqlite.Files(again)[:6] {
		os.Remove(p)
	}
	if err := os.WriteFile(again, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := recalls(again); !slices.Equal(got, want) {
		t.Fatalf("the copy restored over a database: %v, want %v", got, want)
	}
}

// TestBackupVerificationCatchesCorruption: the check that vouches for a
// copy fails on a damaged one (control: the same copy, undamaged, passes).
func TestBackupVerificationCatchesCorruption(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	for i := range 50 {
		mustCLI(t, db, "remember", "--tenant", "t", "--principal", "p", fmt.Sprintf("memory number %d about the garden", i))
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	if _, err := backupSQLite(t.Context(), db, copyPath, backupOptions{}); err != nil {
		t.Fatal(err)
	}
	uri, err := sqliteURI(copyPath, "_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, integrity, err := verifyCopy(t.Context(), copyPath, uri); err != nil || integrity != "ok" {
		t.Fatalf("control: integrity %q, %v", integrity, err)
	}
	b, err := os.ReadFile(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	// Overwrite the middle of every page after the first few (the schema
	// stays readable, the b-trees do not).
	const page = 4096
	for off := 4 * page; off+page <= len(b); off += page {
		copy(b[off+100:off+200], strings.Repeat("\xff", 100))
	}
	if err := os.WriteFile(copyPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, integrity, err := verifyCopy(t.Context(), copyPath, uri); err == nil && integrity == "ok" {
		t.Fatal("a damaged copy passed the verification")
	}
}
