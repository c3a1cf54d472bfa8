package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store/sqlstore"
)

// streamTable makes a table of n rows in db's file: i is the row's number,
// b a blob of i bytes (NULL for i = 1, empty for i = 0), s a text, t a time
// as microseconds (NULL for odd i).
func streamTable(t *testing.T, db *DB, n int) {
	t.Helper()
	if _, err := db.w.Exec("CREATE TABLE t (i INTEGER, b BLOB, s TEXT, t INTEGER)"); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		var b, tm any
		if i != 1 {
			b = streamBlob(i)
		}
		if i%2 == 0 {
			tm = int64(i) * 1_000_003
		}
		if _, err := db.w.Exec("INSERT INTO t VALUES (?, ?, ?, ?)", i, b, streamText(i), tm); err != nil {
			t.Fatal(err)
		}
	}
}

func streamBlob(i int) []byte {
	b := make([]byte, i)
	for j := range b {
		b[j] = byte(i + j)
	}
	return b
}

func streamText(i int) string { return fmt.Sprintf("row %d, ä€𝄞", i) + strings.Repeat("x", i%7) }

// TestStreamScans reads every kind of column through Stream: integers,
// times, NULL, an empty blob (not NULL), texts, and blobs up to several
// pages (overflow pages), each lent until the next row.
func TestStreamScans(t *testing.T) {
	t.Parallel()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
	const n = 300
	streamTable(t, db, n)
	db.w.Exec("UPDATE t SET b = zeroblob(20000) WHERE i = 7") // past a page
	rows, err := db.c.Stream(t.Context(), "SELECT i, b, s, t, t FROM t WHERE i >= ? ORDER BY i", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var (
			got  int64
			b, s sqlstore.Borrowed
			opt  *time.Time
			tm   time.Time
		)
		dest := []any{&got, &b, &s, &opt}
		if i%2 == 0 {
			dest = append(dest, &tm)
		} else {
			dest = append(dest, new(*time.Time))
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		want := streamBlob(i)
		switch i {
		case 1:
			want = nil
		case 7:
			want = make([]byte, 20000)
		}
		if got != int64(i) || !bytes.Equal(b, want) || (b == nil) != (want == nil) || string(s) != streamText(i) {
			t.Fatalf("row %d: %d, %d bytes (nil %v), %q", i, got, len(b), b == nil, s)
		}
		if i%2 == 0 {
			wt := time.UnixMicro(int64(i) * 1_000_003).UTC()
			if opt == nil || !opt.Equal(wt) || !tm.Equal(wt) || tm.Location() != time.UTC {
				t.Fatalf("row %d: times %v, %v, want %v", i, opt, tm, wt)
			}
		} else if opt != nil {
			t.Fatalf("row %d: NULL time read as %v", i, opt)
		}
		i++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if i != n {
		t.Fatalf("%d rows, want %d", i, n)
	}
	rows.Close()
	rows.Close() // idempotent

	// Arguments of every type bind as database/sql's do.
	at := time.UnixMicro(4 * 1_000_003)
	for _, args := range [][]any{{int64(4)}, {4}, {"4"}, {streamBlob(4)}, {at}} {
		col := "i"
		switch args[0].(type) {
		case time.Time:
			col = "t"
		case []byte:
			col = "b"
		}
		rows, err := db.c.Stream(t.Context(), "SELECT i FROM t WHERE "+col+" = ?", args...)
		if err != nil {
			t.Fatalf("%T: %v", args[0], err)
		}
		var got int64
		if !rows.Next() || rows.Scan(&got) != nil || got != 4 || rows.Next() {
			t.Fatalf("%T argument: got %d, %v", args[0], got, rows.Err())
		}
		rows.Close()
	}
	if _, err := db.c.Stream(t.Context(), "SELECT i FROM t WHERE i = ?", struct{}{}); err == nil {
		t.Fatal("an argument of an unknown type was bound")
	}
	// A NULL argument, and a NULL into a destination that cannot hold one.
	rows, err = db.c.Stream(t.Context(), "SELECT ?", nil)
	if err != nil {
		t.Fatal(err)
	}
	var x int64
	if !rows.Next() || rows.Scan(&x) == nil {
		t.Fatal("NULL scanned into an integer")
	}
	rows.Close()
}

// TestStreamSnapshot checks a stream reads one snapshot: rows written
// while it is open are not in it, and the next stream sees them.
func TestStreamSnapshot(t *testing.T) {
	t.Parallel()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
	streamTable(t, db, 200)
	count := func() (n int) {
		rows, err := db.c.Stream(t.Context(), "SELECT i FROM t")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			if n++; n == 10 {
				if _, err := db.w.Exec("INSERT INTO t (i) VALUES (1000)"); err != nil {
					t.Fatal(err)
				}
				if _, err := db.w.Exec("DELETE FROM t WHERE i = 150"); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 200 {
		t.Fatalf("a stream read %d rows of its snapshot of 200", n)
	}
	if n := count(); n != 200 { // one more, one fewer
		t.Fatalf("the next stream read %d rows, want 200", n)
	}
}

// TestStreamBoundsAndCloses checks that at most MaxReaders streams run at
// once (the next waits, and gives up with its context), that a canceled
// context ends a stream, and that a closed DB refuses streams and closes
// the connections still out when they come back.
func TestStreamBoundsAndCloses(t *testing.T) {
	t.Parallel()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"), WithMaxReaders(2))
	streamTable(t, db, 1000)
	open := func(ctx context.Context) (sqlstore.Rows, error) {
		return db.c.Stream(ctx, "SELECT i FROM t ORDER BY i")
	}
	a, err := open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b, err := open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := open(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a third stream of two readers: %v, want to wait until its deadline", err)
	}
	a.Close()
	c, err := open(t.Context())
	if err != nil {
		t.Fatalf("a stream once one is closed: %v", err)
	}
	c.Close()

	// Canceling ends a stream within a few rows.
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	d, err := open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for d.Next() {
		if n++; n == 5 {
			stop()
		}
	}
	if !errors.Is(d.Err(), context.Canceled) || n > 5+ctxEvery {
		t.Fatalf("canceled after 5 rows: read %d, %v", n, d.Err())
	}
	d.Close()

	// b is still out when the DB closes.
	if !b.Next() {
		t.Fatal(b.Err())
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := open(t.Context()); memgate.ErrorCode(interpretError(t.Context(), "stream", err)) != memgate.EUNAVAILABLE {
		t.Fatalf("a stream of a closed DB: %v", err)
	}
	var i int64
	if err := b.Scan(&i); err != nil || i != 0 {
		t.Fatalf("the open stream after Close: %d, %v", i, err)
	}
	b.Close()
	db.c.stream.mu.Lock()
	idle := len(db.c.stream.idle)
	db.c.stream.mu.Unlock()
	if idle != 0 {
		t.Fatalf("%d connections kept after Close", idle)
	}
}

// TestStreamErrors checks a stream's errors are SQLite's, interpreted as
// any other of the driver: a statement that does not compile is internal,
// and the codes that mean unavailable mean it from a stream too.
func TestStreamErrors(t *testing.T) {
	t.Parallel()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
	_, err := db.c.Stream(t.Context(), "SELECT nothing FROM nowhere")
	if err == nil || memgate.ErrorCode(interpretError(t.Context(), "stream", err)) != memgate.EINTERNAL {
		t.Fatalf("a statement that does not compile: %v", err)
	}
	var se *streamError
	if !errors.As(err, &se) || se.Code() != sqlite3.SQLITE_ERROR {
		t.Fatalf("%v is not SQLite's error", err)
	}
	for _, code := range []int{sqlite3.SQLITE_BUSY, sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR | 1<<8, sqlite3.SQLITE_READONLY} {
		got := interpretError(t.Context(), "stream", &streamError{code: code, msg: "x"})
		if memgate.ErrorCode(got) != memgate.EUNAVAILABLE {
			t.Fatalf("code %d: %v, want unavailable", code, got)
		}
	}
	// The connection is sound after the error, and a connection keeps
	// only so many statements.
	for i := range 2 * maxStreamStatements {
		rows, err := db.c.Stream(t.Context(), fmt.Sprintf("SELECT %d", i))
		if err != nil {
			t.Fatal(err)
		}
		var got int64
		if !rows.Next() || rows.Scan(&got) != nil || got != int64(i) {
			t.Fatalf("statement %d: %d, %v", i, got, rows.Err())
		}
		rows.Close()
	}
	db.c.stream.mu.Lock()
	defer db.c.stream.mu.Unlock()
	for _, c := range db.c.stream.idle {
		if len(c.stmts) > maxStreamStatements {
			t.Fatalf("a connection keeps %d statements", len(c.stmts))
		}
	}
}
