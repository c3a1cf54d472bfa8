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

// scannerDest is an sql.Scanner that keeps a copy of what it was given.
type scannerDest struct{ v any }

func (d *scannerDest) Scan(src any) error {
	if b, ok := src.([]byte); ok {
		src = string(b) // database/sql gives a text as a string: compared as one
	}
	d.v = src
	return nil
}

// TestLookupScansAsQuery reads every kind of destination sqlstore.Querier
// accepts through Lookup and through the readers' querier (database/sql),
// NULLs included, and requires the same values: Fetch's rows scan with
// scanMemory either way.
func TestLookupScansAsQuery(t *testing.T) {
	t.Parallel()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
	if _, err := db.w.Exec(`CREATE TABLE v (k INTEGER, s TEXT, i INTEGER, f REAL, b BLOB, l TEXT, n TEXT, t INTEGER)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec(`INSERT INTO v VALUES
		(1, 'ä€𝄞 text', -7, 0.1, x'00ff10', '["a","ünï \"b\""]', '[1.5,-2]', 1700000000123456),
		(2, '', 0, -2.5e-300, x'', '[]', '[]', 0),
		(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
		(4, 'x', 9223372036854775807, 3, x'01', '["c"]', '[3]', -1)`); err != nil {
		t.Fatal(err)
	}
	type row struct {
		s             string
		ps            *string
		i             int64
		pi            *int64
		f             float64
		ok            bool
		b             []byte
		strs          []string
		nums          []float64
		tm            time.Time
		ptm           *time.Time
		sc1, sc2, sc3 scannerDest
		bNil, strsNil bool
		numsNil       bool
	}
	read := func(rows sqlstore.Rows, err error) []row {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []row
		for rows.Next() {
			var r row
			var k int64
			// Columns that may be NULL go to destinations that hold one;
			// the others are read again where they are not NULL.
			if err := rows.Scan(&k, &r.ps, &r.pi, &r.b, &r.strs, &r.ptm, &r.sc1, &r.sc2, &r.sc3, &r.nums); err != nil {
				t.Fatalf("row: %v", err)
			}
			r.bNil, r.strsNil, r.numsNil = r.b == nil, r.strs == nil, r.nums == nil
			out = append(out, r)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	const all = "SELECT k, s, i, b, l, t, s, b, f, n FROM v WHERE k >= ? ORDER BY k"
	q, err := db.c.Read()
	if err != nil {
		t.Fatal(err)
	}
	want := read(q.Query(t.Context(), all, 1))
	got := read(db.c.Lookup(t.Context(), all, 1))
	show := func(rs []row) string {
		var b strings.Builder
		for _, r := range rs {
			fmt.Fprintf(&b, "%#v\n", []any{deref(r.ps), deref(r.pi), deref(r.ptm), r.b, r.bNil, r.strs, r.strsNil, r.nums, r.numsNil, r.sc1, r.sc2, r.sc3})
		}
		return b.String()
	}
	if len(want) != 4 || show(got) != show(want) {
		t.Fatalf("Lookup scanned\n%s\nthe querier\n%s", show(got), show(want))
	}
	// Destinations that cannot hold a NULL, on the rows without one.
	const set = "SELECT s, i, f, k % 2, n, t FROM v WHERE k IN (1, 2, 4) ORDER BY k"
	scanSet := func(rows sqlstore.Rows, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []any
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.s, &r.i, &r.f, &r.ok, &r.nums, &r.tm); err != nil {
				t.Fatal(err)
			}
			out = append(out, r.s, r.i, r.f, r.ok, r.nums, r.nums == nil, r.tm, r.tm.Location())
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%#v", out)
	}
	if g, w := scanSet(db.c.Lookup(t.Context(), set)), scanSet(q.Query(t.Context(), set)); g != w {
		t.Fatalf("Lookup scanned\n%s\nthe querier\n%s", g, w)
	}
	// A NULL into a destination that cannot hold one is an error either way.
	for _, dest := range []any{new(string), new(int64), new(float64), new(bool), new(time.Time)} {
		for name, rows := range map[string]func() (sqlstore.Rows, error){
			"Lookup": func() (sqlstore.Rows, error) { return db.c.Lookup(t.Context(), "SELECT s FROM v WHERE k = 3") },
			"Query":  func() (sqlstore.Rows, error) { return q.Query(t.Context(), "SELECT s FROM v WHERE k = 3") },
		} {
			rs, err := rows()
			if err != nil {
				t.Fatal(err)
			}
			if !rs.Next() || rs.Scan(dest) == nil {
				t.Errorf("%s: NULL scanned into %T", name, dest)
			}
			rs.Close()
		}
	}
	// A float argument binds as database/sql's does.
	rs, err := db.c.Lookup(t.Context(), "SELECT k FROM v WHERE f = ?", -2.5e-300)
	if err != nil {
		t.Fatal(err)
	}
	var k int64
	if !rs.Next() || rs.Scan(&k) != nil || k != 2 || rs.Next() {
		t.Fatalf("a float argument: row %d, %v", k, rs.Err())
	}
	rs.Close()
}

// TestLookupReadsWithoutTheMap checks the connections' memory map: a
// stream (a long read) maps the file, a lookup (a short one) does not, as
// the readers do not, whichever kind of read the connection served last.
func TestLookupReadsWithoutTheMap(t *testing.T) {
	t.Parallel()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"), WithMaxReaders(1))
	n := 0
	mmap := func(read func(context.Context, string, ...any) (sqlstore.Rows, error)) int64 {
		t.Helper()
		n++ // a text of its own: a pragma's value is read when it is prepared
		rows, err := read(t.Context(), fmt.Sprintf("PRAGMA mmap_size -- %d", n))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var v int64
		if !rows.Next() || rows.Scan(&v) != nil {
			t.Fatalf("PRAGMA mmap_size: %v", rows.Err())
		}
		return v
	}
	for i, tc := range []struct {
		name string
		read func(context.Context, string, ...any) (sqlstore.Rows, error)
		want int64
	}{
		{"lookup", db.c.Lookup, 0},
		{"stream", db.c.Stream, streamMmap},
		{"stream again", db.c.Stream, streamMmap},
		{"lookup after a stream", db.c.Lookup, 0},
		{"stream after a lookup", db.c.Stream, streamMmap},
	} {
		if got := mmap(tc.read); got != tc.want {
			t.Fatalf("%d %s: mmap_size %d, want %d", i, tc.name, got, tc.want)
		}
	}
}

// TestLookupBesideStreams: with every stream connection held by a long
// read (cold loads of as many partitions as MaxReaders), a lookup (a
// recall's Fetch) still answers at once. Control: another stream waits
// until its deadline.
func TestLookupBesideStreams(t *testing.T) {
	t.Parallel()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"), WithMaxReaders(2))
	streamTable(t, db, 1000)
	for range 2 {
		rows, err := db.c.Stream(t.Context(), "SELECT i FROM t ORDER BY i")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		if !rows.Next() {
			t.Fatal(rows.Err())
		}
	}
	wait := func(read func(context.Context, string, ...any) (sqlstore.Rows, error)) (int64, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		rows, err := read(ctx, "SELECT i FROM t WHERE i = ?", int64(7))
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		var i int64
		if !rows.Next() {
			return 0, fmt.Errorf("no row: %v", rows.Err())
		}
		return i, rows.Scan(&i)
	}
	if _, err := wait(db.c.Stream); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("control: a third stream beside two of two readers: %v, want to wait until its deadline", err)
	}
	for range 3 { // more lookups than readers, one after another
		if _, err := wait(db.c.Lookup); err != nil {
			t.Fatalf("a lookup beside two streams of two readers: %v", err)
		}
	}
}

// deref is *p, or nil.
func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
