package postgres

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/memgate/memgate/store/sqlstore"
)

// TestStreamScans compares what Stream scans with what the querier (pgx's
// scan plans) scans, for every type a stream decodes itself and a few it
// leaves to pgx, NULLs and edge values included.
func TestStreamScans(t *testing.T) {
	t.Parallel()
	db := openTest(t, freshSchema(t))
	ctx := t.Context()
	const query = `SELECT v.t, v.b, CAST(v.i AS integer), CAST(v.i AS bigint), v.ts, v.ts, CAST(v.t AS varchar), CAST(v.i AS numeric)
		FROM (VALUES
			(CAST('memory' AS text), CAST('\x00ff10' AS bytea), 7, CAST('2026-12-06 21:40:15.123456+00' AS timestamptz)),
			('', '\x', -2147483648, '1969-07-20 20:17:40.000001+00'),
			('ä€𝄞', NULL, 0, '2000-01-01 00:00:00+00'),
			(NULL, '\x01', 2147483647, '1999-12-31 23:59:59.999999+00')) AS v(t, b, i, ts)
		WHERE CAST(v.i AS bigint) > ? ORDER BY v.i`
	type row struct {
		t, b, vc       []byte
		i4, i8, n      int64
		ts             time.Time
		tsp            *time.Time
		tNull, bNull   bool
		vcNull, tsNull bool
	}
	read := func(rows sqlstore.Rows, err error) []row {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []row
		for rows.Next() {
			var (
				r         row
				tx, b, vc sqlstore.Borrowed
			)
			if err := rows.Scan(&tx, &b, &r.i4, &r.i8, &r.ts, &r.tsp, &vc, &r.n); err != nil {
				t.Fatal(err)
			}
			r.t, r.b, r.vc = bytes.Clone(tx), bytes.Clone(b), bytes.Clone(vc)
			r.tNull, r.bNull, r.vcNull = tx == nil, b == nil, vc == nil
			out = append(out, r)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	q, err := db.c.Read()
	if err != nil {
		t.Fatal(err)
	}
	want := read(q.Query(ctx, query, int64(-1<<31-1)))
	got := read(db.c.Stream(ctx, query, int64(-1<<31-1)))
	if len(got) != 4 || len(want) != 4 {
		t.Fatalf("%d and %d rows, want 4", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !bytes.Equal(g.t, w.t) || !bytes.Equal(g.b, w.b) || !bytes.Equal(g.vc, w.vc) || g.tNull != w.tNull || g.bNull != w.bNull || g.vcNull != w.vcNull ||
			g.i4 != w.i4 || g.i8 != w.i8 || g.n != w.n || !g.ts.Equal(w.ts) || g.ts.Location() != w.ts.Location() || !g.tsp.Equal(*w.tsp) {
			t.Fatalf("row %d: streamed %+v, scanned %+v", i, g, w)
		}
	}
	if got[0].i4 != -2147483648 || got[0].bNull || len(got[0].b) != 0 || !got[1].bNull || !got[3].tNull || got[0].ts.UnixMicro() != -14182940*1e6+1 {
		t.Fatalf("edge values: %+v", got)
	}
	// NULL into an integer, and an infinite time, are errors as in pgx.
	for _, bad := range []string{"SELECT CAST(NULL AS bigint)", "SELECT CAST('infinity' AS timestamptz)"} {
		rows, err := db.c.Stream(ctx, bad)
		if err != nil {
			t.Fatal(err)
		}
		var i int64
		var ts time.Time
		dest := any(&i)
		if bad[len(bad)-12:] == "timestamptz)" {
			dest = &ts
		}
		if !rows.Next() || rows.Scan(dest) == nil {
			t.Fatalf("%s scanned", bad)
		}
		rows.Close()
	}
	// A cold load reads every column itself, none through pgx.
	var load sqlstore.Statement
	for _, st := range sqlstore.Statements(db.c.dialect) {
		if st.Name == "load index" {
			load = st
		}
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO memories (tenant, id, principal, kind, source, sensitivity, status, content,
		created_at, updated_at, expires_at, version, content_sha256, embedding_provider, embedding_model, embedding_dim, embedding_vector,
		index_terms, terms_version)
		VALUES ('acme', 'm-1', 'alice', 'fact', 'user', 'standard', 'active', 'c', now(), now(), now(), 1, 'h',
			'builtin', 'hybrid-v2', 1, '\x0000803f', '\x00', 'analysis-v0')`); err != nil {
		t.Fatal(err)
	}
	before := slowScans.Load()
	for _, version := range []string{"analysis-v0", "analysis-v1"} { // content NULL, and not
		args := append([]any(nil), load.Args...)
		args[0], args[1], args[2], args[3] = "builtin", "hybrid-v2", int64(1), version
		lr, err := db.c.Stream(ctx, load.SQL, args...)
		if err != nil {
			t.Fatal(err)
		}
		var (
			id, agent, conv, kind, source, sens, vec, terms, content sqlstore.Borrowed
			created                                                  time.Time
			expires, from, until                                     *time.Time
			ofModel                                                  int64
		)
		n := 0
		for lr.Next() {
			if err := lr.Scan(&id, &agent, &conv, &kind, &source, &sens, &created, &expires, &from, &until, &vec, &ofModel, &terms, &content); err != nil {
				t.Fatal(err)
			}
			if string(id) != "m-1" || ofModel != 1 || len(vec) != 4 || expires == nil || from != nil || (content == nil) != (version == "analysis-v0") {
				t.Fatalf("load row: %q %d %v %v %v %q", id, ofModel, vec, expires, from, content)
			}
			n++
		}
		if err := lr.Err(); err != nil || n != 1 {
			t.Fatalf("%d rows, %v", n, err)
		}
		lr.Close()
	}
	if n := slowScans.Load() - before; n != 0 {
		t.Fatalf("%d columns of a load's kinds went through pgx", n)
	}
	db.Close()
	if _, err := db.c.Stream(ctx, "SELECT 1"); err == nil {
		t.Fatal("a stream of a closed DB")
	}
}

// TestBufferedReads reads through the connection's read buffer
// (bufferedFrontend) what pgx reads: a stream of rows of every size around
// the buffer's, one message larger than it, each byte checked; then a
// stream stopped part way, by Close and by a cancelled context, after
// which the pool's one connection (or its replacement) answers the next
// query exactly, so nothing of the stopped stream is left in the buffer
// for the next reader.
func TestBufferedReads(t *testing.T) {
	t.Parallel()
	db, err := Open(t.Context(), Config{URL: testURL(t), Schema: freshSchema(t), MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	const rows = 3000
	const big = 3 * readBuffer / 2
	size := func(i int64) int {
		if i == rows/2 {
			return big
		}
		return int(i*37) % (readBuffer / 8)
	}
	const query = `SELECT i, repeat(chr(65 + i % 26), CASE WHEN i = ? THEN ? ELSE i * 37 % ? END)
		FROM generate_series(1, ?) AS i ORDER BY i`
	args := []any{int64(rows / 2), int64(big), int64(readBuffer / 8), int64(rows)}
	// read streams the query, checking each row, and stops after stop rows
	// (0: none) by calling halt; it returns the rows read.
	read := func(ctx context.Context, stop int, halt func()) int {
		t.Helper()
		rs, err := db.c.Stream(ctx, query, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		n := 0
		for rs.Next() {
			var i int64
			var text sqlstore.Borrowed
			if err := rs.Scan(&i, &text); err != nil {
				t.Fatal(err)
			}
			n++
			if i != int64(n) || len(text) != size(i) || len(text) > 0 && (text[0] != byte('A'+i%26) || text[len(text)-1] != text[0] ||
				bytes.Count(text, text[:1]) != len(text)) {
				t.Fatalf("row %d: i %d, %d bytes, want %d bytes of %c", n, i, len(text), size(int64(n)), 'A'+n%26)
			}
			if n == stop {
				halt()
			}
		}
		if stop == 0 {
			if err := rs.Err(); err != nil || n != rows {
				t.Fatalf("%d rows, %v; want %d", n, err, rows)
			}
		}
		return n
	}
	count := func() {
		t.Helper()
		var n int64
		if err := db.pool.QueryRow(ctx, "SELECT count(*) FROM generate_series(1, $1::bigint)", int64(rows)).Scan(&n); err != nil || n != rows {
			t.Fatalf("the query after: %d, %v; want %d", n, err, rows)
		}
	}
	read(ctx, 0, nil) // control: the whole stream
	count()
	rs, err := db.c.Stream(ctx, query, args...)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		rs.Next()
	}
	rs.Close() // part way
	count()
	cctx, cancel := context.WithCancel(ctx)
	if n := read(cctx, 100, cancel); n >= rows {
		t.Fatalf("the cancelled stream read %d rows", n)
	}
	count()
	read(ctx, 0, nil)
}
