package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memgate/memgate/store"
	"github.com/memgate/memgate/store/sqlstore"
)

// TestAppendsDoNotWaitForTheWriter: while a transaction holds the writer
// (a drain, a large remember), an audit append commits, and a drain that
// follows moves it into the log. Control: a write in the same moment
// waits for the writer until its deadline.
func TestAppendsDoNotWaitForTheWriter(t *testing.T) {
	t.Parallel()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
	ctx := t.Context()
	held, release := make(chan struct{}), make(chan struct{})
	writer := make(chan error, 1)
	go func() {
		writer <- db.c.Write(ctx, "hold", func(q sqlstore.Querier) error {
			// A write of the audit log's file, as a drain's.
			if _, err := q.Exec(ctx, `INSERT INTO audit_drained (id, appends) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := db.c.Write(short, "control", func(q sqlstore.Querier) error { return nil })
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		close(release)
		t.Fatalf("control: a write while the writer is held: %v, want its deadline", err)
	}
	appended := make(chan error, 1)
	go func() {
		evs := make([]store.AuditEvent, 3)
		for i := range evs {
			evs[i] = store.AuditEvent{Tenant: "acme", Principal: "alice", Actor: "test", Action: "recall",
				MemoryIDs: []string{fmt.Sprintf("held-%02d", i)}, At: time.Now()}
		}
		appended <- db.AppendAudit(ctx, evs)
	}()
	select {
	case err := <-appended:
		if err != nil {
			close(release)
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("an append waited for the writer")
	}
	close(release)
	if err := <-writer; err != nil {
		t.Fatal(err)
	}
	if got := auditLog(t, db); len(got) != 3 {
		t.Fatalf("the log after the writer let go: %v, want the 3 events appended while it was held", got)
	}
}

// TestDrainMarkSkipsWhatItMoved: a drain moves the inbox file's rows past
// the mark and raises it with the events; rows at or below the mark (what
// a crash between the drain and the appender's delete leaves) are never
// moved again, and the next drain deletes them. Control: a row past the
// mark is moved.
func TestDrainMarkSkipsWhatItMoved(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memgate.db")
	db := openTest(t, path)
	ctx := t.Context()
	appendEvents(t, db, "a", 2)
	appendEvents(t, db, "b", 1)
	if err := db.DrainAudit(ctx); err != nil {
		t.Fatal(err)
	}
	want := auditLog(t, db)
	if len(want) != 3 {
		t.Fatalf("after the drain: %v", want)
	}
	var mark, left int64
	if err := db.r.QueryRowContext(ctx, "SELECT (SELECT appends FROM audit_drained), (SELECT COUNT(*) FROM audit_appends)").Scan(&mark, &left); err != nil {
		t.Fatal(err)
	}
	if mark != 2 || left != 0 {
		t.Fatalf("mark %d with %d rows left, want 2 and none", mark, left)
	}
	// What a crash before the delete leaves: the rows at the mark, again.
	if err := db.c.Append(ctx, "test", func(q sqlstore.Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO audit_appends (seq, at, events) VALUES (2, 1, '[{"tenant":"acme","principal":"alice","actor":"test","action":"recall","at":"2026-01-01T00:00:00Z","memory_ids":["b-00"]}]')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	appendEvents(t, db, "c", 1) // control: past the mark
	if err := db.DrainAudit(ctx); err != nil {
		t.Fatal(err)
	}
	got := auditLog(t, db)
	if len(got) != 4 || !slices.Equal(got[:3], want) || got[3] != "4:[c-00]" {
		t.Fatalf("the log: %v, want %v then 4:[c-00]", got, want)
	}
	if err := db.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM audit_appends").Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d rows left in the inbox file (%v)", left, err)
	}
}

// TestLostInboxFileKeepsAppends: an inbox file lost (or replaced by an
// empty one) while the log's mark is past 0 does not make new appends
// fall below the mark: Open raises its sequence to the mark, and they are
// drained. Control: the mark is past 0.
func TestLostInboxFileKeepsAppends(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memgate.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	appendEvents(t, db, "a", 1)
	appendEvents(t, db, "b", 1)
	appendEvents(t, db, "c", 1)
	if err := db.DrainAudit(t.Context()); err != nil {
		t.Fatal(err)
	}
	var mark int64
	if err := db.r.QueryRowContext(t.Context(), "SELECT appends FROM audit_drained").Scan(&mark); err != nil || mark != 3 {
		t.Fatalf("control: the mark is %d (%v), want 3", mark, err)
	}
	db.Close()
	for _, p := range Files(path)[6:] {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	db = openTest(t, path)
	appendEvents(t, db, "d", 1)
	got := auditLog(t, db)
	if len(got) != 4 || got[3] != "4:[d-00]" {
		t.Fatalf("the log after the inbox file was lost: %v, want d-00 fourth", got)
	}
}
