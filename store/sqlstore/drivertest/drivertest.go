// Package drivertest is the driver-level suite of package sqlstore: what a
// Driver promises on its own, below the portable store. Every backend runs
// it beside the conformance suite (store/storetest), which checks the
// store built over the driver:
//
//   - Write commits when its function returns nil and keeps nothing of a
//     transaction that failed; errors pass through Interpret;
//   - values map both ways: times (microseconds, UTC), nullable times,
//     lists of strings and numbers, bytes, booleans; an empty read is
//     ErrNoRows and Exec counts the rows it changed;
//   - RowBatch (one round trip where the driver is a Batcher) scans each
//     row in order, ErrNoRows for a statement without one, and stops at a
//     Scan's error;
//   - Interpret: a unique violation is a conflict, the context's own
//     error passes, application errors pass unchanged;
//   - Snapshot reads one snapshot while writers commit, and snapshots
//     open at once never wait for each other's connections;
//   - Lock makes two writers of one decision queue: no lost update;
//   - the Dialect: Contains is a literal, Unicode case-insensitive
//     substring test (no wildcard), MetadataEquals tells types apart,
//     Micros is unix microseconds;
//   - a blob scanned into sqlstore.Borrowed is the row's own, row after
//     row, and nil for NULL;
//   - after Close, reads and writes are unavailable.
//
// It writes to the schema's own tables (keys, audit_events, memories),
// which every driver's migrations create.
package drivertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/store"
	"github.com/memgate/memgate/store/sqlstore"
	"github.com/memgate/memgate/store/storetest"
)

// Run runs the suite; newDriver returns a driver over a new, migrated,
// empty database, closed by the test's cleanup.
func Run(t *testing.T, newDriver func(t *testing.T) sqlstore.Driver) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, sqlstore.Driver)
	}{
		{"WriteCommitsOrKeepsNothing", testWrite},
		{"ValuesRoundTrip", testValues},
		{"NoRowsAndRowsAffected", testNoRows},
		{"RowBatchInOrder", testRowBatch},
		{"Interpret", testInterpret},
		{"SnapshotIsOneSnapshot", testSnapshot},
		{"SnapshotsDoNotWaitForEachOther", testConcurrentSnapshots},
		{"LockQueuesWriters", testLock},
		{"ContainsIsLiteral", testContains},
		{"MetadataEqualsTellsTypesApart", testMetadata},
		{"MicrosIsUnixMicroseconds", testMicros},
		{"ClosedIsUnavailable", testClosed},
		{"IndexTermsNeverStale", testIndexTerms},
		{"BorrowedIsEachRowsBlob", testBorrowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newDriver(t))
		})
	}
}

var at = time.Date(2026, 3, 4, 5, 6, 7, 891234000, time.FixedZone("X", 3600))

func insertKey(ctx context.Context, q sqlstore.Querier, id string, revoked *time.Time) error {
	_, err := q.Exec(ctx, `INSERT INTO keys (tenant, id, hash, role, principal, agent, name, created_at, revoked_at, sources)
		VALUES (?, ?, ?, 'admin', '', '', ?, ?, ?, '')`, "acme", id, memgate.ContentHash(id), "name of "+id, at, revoked)
	return err
}

func countKeys(t *testing.T, q sqlstore.Querier) int64 {
	t.Helper()
	var n int64
	if err := q.QueryRow(t.Context(), "SELECT COUNT(*) FROM keys WHERE tenant = ?", "acme").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func reader(t *testing.T, d sqlstore.Driver) sqlstore.Querier {
	t.Helper()
	q, err := d.Read()
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func testWrite(t *testing.T, d sqlstore.Driver) {
	ctx := t.Context()
	if err := d.Write(ctx, "test", func(q sqlstore.Querier) error { return insertKey(ctx, q, "k-1", nil) }); err != nil {
		t.Fatal(err)
	}
	mine := memgate.Errorf(memgate.ECONFLICT, "the function's own error")
	err := d.Write(ctx, "test", func(q sqlstore.Querier) error {
		if err := insertKey(ctx, q, "k-2", nil); err != nil {
			return err
		}
		if n := countKeys(t, q); n != 2 {
			t.Errorf("inside the transaction: %d keys, want 2", n)
		}
		return mine
	})
	if !errors.Is(err, mine) {
		t.Fatalf("Write returned %v, want the function's error unchanged", err)
	}
	if n := countKeys(t, reader(t, d)); n != 1 {
		t.Fatalf("%d keys after a failed write, want the 1 committed before it", n)
	}
}

func testValues(t *testing.T, d sqlstore.Driver) {
	ctx := t.Context()
	revoked := at.Add(time.Hour)
	err := d.Write(ctx, "test", func(q sqlstore.Querier) error {
		if err := insertKey(ctx, q, "k-null", nil); err != nil {
			return err
		}
		if err := insertKey(ctx, q, "k-set", &revoked); err != nil {
			return err
		}
		for i, ev := range []struct {
			ids    []string
			scores []float64
		}{{nil, nil}, {[]string{"m-1", "m-2"}, []float64{0.25, -1e-9}}} {
			if _, err := q.Exec(ctx, `INSERT INTO audit_events (tenant, principal, agent, actor, action, at,
				recall_id, query_sha256, reason, counts, memory_ids, scores, content_sha256)
				VALUES (?, '', '', 'k-1', ?, ?, '', '', '', NULL, ?, ?, '')`, "acme", fmt.Sprintf("a%d", i), at, ev.ids, ev.scores); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	q := reader(t, d)
	for _, tc := range []struct {
		id   string
		want *time.Time
	}{{"k-null", nil}, {"k-set", &revoked}} {
		var created time.Time
		var got *time.Time
		var name string
		if err := q.QueryRow(ctx, "SELECT created_at, revoked_at, name FROM keys WHERE tenant = ? AND id = ?", "acme", tc.id).Scan(&created, &got, &name); err != nil {
			t.Fatal(err)
		}
		want := at.Truncate(time.Microsecond).UTC()
		if !created.Equal(want) || created.Location() != time.UTC {
			t.Errorf("%s: created_at %v, want %v in UTC", tc.id, created, want)
		}
		switch {
		case tc.want == nil && got != nil:
			t.Errorf("%s: revoked_at %v, want NULL", tc.id, got)
		case tc.want != nil && (got == nil || !got.Equal(tc.want.Truncate(time.Microsecond)) || got.Location() != time.UTC):
			t.Errorf("%s: revoked_at %v, want %v in UTC", tc.id, got, tc.want)
		}
		if name != "name of "+tc.id {
			t.Errorf("%s: name %q", tc.id, name)
		}
	}
	for i, want := range []struct {
		ids    []string
		scores []float64
	}{{nil, nil}, {[]string{"m-1", "m-2"}, []float64{0.25, -1e-9}}} {
		var ids []string
		var scores []float64
		var isNull bool
		if err := q.QueryRow(ctx, "SELECT memory_ids, scores, memory_ids IS NULL FROM audit_events WHERE tenant = ? AND action = ?",
			"acme", fmt.Sprintf("a%d", i)).Scan(&ids, &scores, &isNull); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ids) != fmt.Sprint(want.ids) || fmt.Sprint(scores) != fmt.Sprint(want.scores) || isNull != (want.ids == nil) {
			t.Errorf("event %d: ids %v scores %v (NULL %v), want %v %v", i, ids, scores, isNull, want.ids, want.scores)
		}
	}
	key := make([]byte, 32) // the table's one row holds 32 bytes
	key[1], key[31] = 1, 0xff
	var b []byte
	var n *int64
	if err := d.Write(ctx, "test", func(q sqlstore.Querier) error {
		if _, err := q.Exec(ctx, "INSERT INTO pseudonym_key (id, key) VALUES (1, ?)", key); err != nil {
			return err
		}
		return q.QueryRow(ctx, "SELECT key, NULL FROM pseudonym_key WHERE id = 1").Scan(&b, &n)
	}); err != nil {
		t.Fatal(err)
	}
	if string(b) != string(key) || n != nil {
		t.Errorf("bytes %x and a NULL read as %x and %v", key, b, n)
	}
}

func testNoRows(t *testing.T, d sqlstore.Driver) {
	ctx := t.Context()
	var s string
	if err := reader(t, d).QueryRow(ctx, "SELECT name FROM keys WHERE tenant = ?", "nobody").Scan(&s); !errors.Is(err, sqlstore.ErrNoRows) {
		t.Fatalf("an empty read: %v, want ErrNoRows", err)
	}
	err := d.Write(ctx, "test", func(q sqlstore.Querier) error {
		for _, id := range []string{"k-1", "k-2", "k-3"} {
			if err := insertKey(ctx, q, id, nil); err != nil {
				return err
			}
		}
		n, err := q.Exec(ctx, "UPDATE keys SET name = ? WHERE tenant = ? AND id <> ?", "renamed", "acme", "k-3")
		if err == nil && n != 2 {
			t.Errorf("Exec changed %d rows, want 2", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func testRowBatch(t *testing.T, d sqlstore.Driver) {
	ctx := t.Context()
	if err := d.Write(ctx, "test", func(q sqlstore.Querier) error {
		for _, id := range []string{"k-1", "k-2"} {
			if err := insertKey(ctx, q, id, nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	q := reader(t, d)
	var got []string
	lookup := func(id string) sqlstore.BatchQuery {
		return sqlstore.BatchQuery{SQL: "SELECT name FROM keys WHERE tenant = ? AND id = ?", Args: []any{"acme", id}, Scan: func(r sqlstore.Row) error {
			var name string
			switch err := r.Scan(&name); {
			case errors.Is(err, sqlstore.ErrNoRows):
				got = append(got, "none")
			case err != nil:
				return err
			default:
				got = append(got, name)
			}
			return nil
		}}
	}
	if err := sqlstore.RowBatch(ctx, q, []sqlstore.BatchQuery{lookup("k-2"), lookup("k-9"), lookup("k-1")}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[name of k-2 none name of k-1]" {
		t.Fatalf("a batch scanned %v", got)
	}
	stop := errors.New("stop")
	n := 0
	failing := sqlstore.BatchQuery{SQL: "SELECT name FROM keys WHERE tenant = ? AND id = ?", Args: []any{"acme", "k-1"}, Scan: func(sqlstore.Row) error { n++; return stop }}
	if err := sqlstore.RowBatch(ctx, q, []sqlstore.BatchQuery{failing, failing}); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("a failing Scan: %v after %d scans, want stop after 1", err, n)
	}
}

func testInterpret(t *testing.T, d sqlstore.Driver) {
	ctx := t.Context()
	if err := d.Write(ctx, "test", func(q sqlstore.Querier) error { return insertKey(ctx, q, "k-1", nil) }); err != nil {
		t.Fatal(err)
	}
	err := d.Write(ctx, "test", func(q sqlstore.Querier) error { return insertKey(ctx, q, "k-1", nil) })
	if memgate.ErrorCode(err) != memgate.ECONFLICT {
		t.Fatalf("a unique violation: %v (code %q), want conflict", err, memgate.ErrorCode(err))
	}
	app := memgate.FieldError("x", "is wrong")
	if got := d.Interpret(ctx, "test", app); !errors.Is(got, app) {
		t.Fatalf("an application error became %v", got)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if got := d.Interpret(cancelled, "test", errors.New("driver noise")); !errors.Is(got, context.Canceled) {
		t.Fatalf("a cancelled context's failure: %v, want context.Canceled", got)
	}
	if got := d.Interpret(ctx, "test", errors.New("driver noise")); memgate.ErrorCode(got) != memgate.EINTERNAL || memgate.ErrorMessage(got) == "driver noise" {
		t.Fatalf("an unknown error: %v (code %q, message %q), want internal without the driver's words", got, memgate.ErrorCode(got), memgate.ErrorMessage(got))
	}
}

func testSnapshot(t *testing.T, d sqlstore.Driver) {
	ctx := t.Context()
	if err := d.Write(ctx, "test", func(q sqlstore.Querier) error { return insertKey(ctx, q, "k-1", nil) }); err != nil {
		t.Fatal(err)
	}
	err := d.Snapshot(ctx, "test", func(q sqlstore.Querier) error {
		before := countKeys(t, q)
		if err := d.Write(ctx, "test", func(w sqlstore.Querier) error { return insertKey(ctx, w, "k-2", nil) }); err != nil {
			return err
		}
		if after := countKeys(t, q); after != before {
			t.Errorf("one snapshot read %d keys, then %d after another writer committed", before, after)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Control: the write did commit.
	if n := countKeys(t, reader(t, d)); n != 2 {
		t.Fatalf("%d keys after the snapshot, want 2", n)
	}
}

// testConcurrentSnapshots opens more snapshots at once than a driver has
// read connections; each one, once every snapshot that can be open at the
// same time is, runs a statement no one has run before (as a recall's
// first catch-up of a partition does). None may wait for a connection
// another snapshot holds: SQLite's snapshots once prepared a new statement
// on the reader pool while holding a reader, so a pool's worth of them
// waited for each other until their contexts ended (issue 27, the 30 s
// stall). The control: the same statements after, outside any snapshot.
func testConcurrentSnapshots(t *testing.T, d sqlstore.Driver) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := d.Write(ctx, "test", func(q sqlstore.Querier) error { return insertKey(ctx, q, "k-1", nil) }); err != nil {
		t.Fatal(err)
	}
	// A query text of its own per snapshot and per run of the suite, so
	// no statement cache holds it yet.
	tag := time.Now().UnixNano()
	count := func(q sqlstore.Querier, i int) error {
		var n, got int64
		err := q.QueryRow(ctx, fmt.Sprintf("SELECT COUNT(*), %d FROM keys WHERE tenant = ? AND %d > 0", i, tag), "acme").Scan(&n, &got)
		switch {
		case err != nil:
			return err
		case n != 1 || got != int64(i):
			return fmt.Errorf("snapshot %d read (%d, %d), want (1, %d)", i, n, got, i)
		}
		return nil
	}
	const snapshots = 16
	var open atomic.Int32
	errs := make(chan error, snapshots)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range snapshots {
		wg.Go(func() {
			errs <- d.Snapshot(ctx, "test", func(q sqlstore.Querier) error {
				open.Add(1)
				defer open.Add(-1)
				// Hold it until no other snapshot has begun for a moment.
				for n := open.Load(); ; {
					time.Sleep(50 * time.Millisecond)
					if m := open.Load(); m == n || ctx.Err() != nil {
						break
					} else {
						n = m
					}
				}
				return count(q, i)
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("%d snapshots at once, after %s: %v", snapshots, time.Since(start).Round(time.Millisecond), err)
		}
	}
	for i := range snapshots {
		if err := count(reader(t, d), i); err != nil {
			t.Fatal(err)
		}
	}
}

// testLock runs writers that each read a counter and write it back raised
// by one, after locking the decision: none may lose another's update.
func testLock(t *testing.T, d sqlstore.Driver) {
	ctx := t.Context()
	if err := d.Write(ctx, "test", func(q sqlstore.Querier) error {
		_, err := q.Exec(ctx, "INSERT INTO tenant_heads (tenant, high) VALUES (?, 0)", "acme")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			errs <- d.Write(ctx, "test", func(q sqlstore.Querier) error {
				if err := d.Lock(ctx, q, []string{"counter", "acme"}, []string{"other", "acme"}); err != nil {
					return err
				}
				var n int64
				if err := q.QueryRow(ctx, "SELECT high FROM tenant_heads WHERE tenant = ?", "acme").Scan(&n); err != nil {
					return err
				}
				time.Sleep(2 * time.Millisecond) // let the others reach their read
				_, err := q.Exec(ctx, "UPDATE tenant_heads SET high = ? WHERE tenant = ?", n+1, "acme")
				return err
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var n int64
	if err := reader(t, d).QueryRow(ctx, "SELECT high FROM tenant_heads WHERE tenant = ?", "acme").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != writers {
		t.Fatalf("the counter is %d after %d locked increments: an update was lost", n, writers)
	}
}

// insertMemories stores memories of tenant acme with the given contents
// and metadata through the portable store.
func insertMemories(t *testing.T, d sqlstore.Driver, ms map[string]memgate.Memory) {
	t.Helper()
	var in []*memgate.Memory
	for id, m := range ms {
		m.ID, m.Tenant, m.Principal = id, "acme", "alice"
		m.Kind, m.Source, m.Sensitivity, m.Status = memgate.KindFact, memgate.SourceUser, memgate.SensitivityStandard, memgate.StatusActive
		m.ContentSHA256, m.CreatedAt, m.UpdatedAt, m.Version, m.SeenCount = memgate.ContentHash(m.Content), at, at, 1, 1
		in = append(in, &m)
	}
	if err := sqlstore.New(d).Insert(t.Context(), in); err != nil {
		t.Fatal(err)
	}
}

// matching returns the ids of the memories of acme for which cond holds,
// in id order.
func matching(t *testing.T, d sqlstore.Driver, build func(*sqlstore.Query) (string, error)) []string {
	t.Helper()
	var b sqlstore.Query
	b.SQL("SELECT id FROM memories WHERE tenant = ", b.Arg("acme"), " AND ")
	cond, err := build(&b)
	if err != nil {
		t.Fatal(err)
	}
	b.SQL(cond, " ORDER BY id")
	rows, err := reader(t, d).Query(t.Context(), b.String(), b.Args()...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func testContains(t *testing.T, d sqlstore.Driver) {
	insertMemories(t, d, map[string]memgate.Memory{
		"m-1": {Content: "Über 50% of users"},
		"m-2": {Content: "over 50 of users"},
		"m-3": {Content: "a_b and ab"},
	})
	for _, tc := range []struct {
		text string
		want string
	}{
		{"über", "[m-1]"},     // Unicode case folding, both ways
		{"ÜBER 50%", "[m-1]"}, // % is a character, not a wildcard
		{"50%", "[m-1]"},
		{"a_b", "[m-3]"}, // _ is a character, not a wildcard
		{"users", "[m-1 m-2]"},
		{"nothing like it", "[]"},
	} {
		got := matching(t, d, func(b *sqlstore.Query) (string, error) { return d.Dialect().Contains(b, "content", tc.text), nil })
		if fmt.Sprint(got) != tc.want {
			t.Errorf("Contains %q: %v, want %s", tc.text, got, tc.want)
		}
	}
}

func testMetadata(t *testing.T, d sqlstore.Driver) {
	insertMemories(t, d, map[string]memgate.Memory{
		"m-str":  {Content: "a", Metadata: map[string]any{"v": "3", "w": "x"}},
		"m-num":  {Content: "b", Metadata: map[string]any{"v": 3}},
		"m-bool": {Content: "c", Metadata: map[string]any{"v": true}},
		"m-none": {Content: "d"},
	})
	for _, tc := range []struct {
		key  string
		v    any
		want string
	}{
		{"v", "3", "[m-str]"},
		{"v", 3, "[m-num]"},
		{"v", 3.0, "[m-num]"},
		{"v", int64(3), "[m-num]"},
		{"v", true, "[m-bool]"},
		{"v", false, "[]"},
		{"w", "x", "[m-str]"},
		{"missing", "x", "[]"},
	} {
		got := matching(t, d, func(b *sqlstore.Query) (string, error) { return d.Dialect().MetadataEquals(b, tc.key, tc.v) })
		if fmt.Sprint(got) != tc.want {
			t.Errorf("MetadataEquals %s = %#v: %v, want %s", tc.key, tc.v, got, tc.want)
		}
	}
	var b sqlstore.Query
	if _, err := d.Dialect().MetadataEquals(&b, "v", []string{"x"}); err == nil {
		t.Error("MetadataEquals accepted a list")
	}
}

func testMicros(t *testing.T, d sqlstore.Driver) {
	ctx := t.Context()
	if err := d.Write(ctx, "test", func(q sqlstore.Querier) error { return insertKey(ctx, q, "k-1", nil) }); err != nil {
		t.Fatal(err)
	}
	var us int64
	if err := reader(t, d).QueryRow(ctx, "SELECT "+d.Dialect().Micros("created_at")+" FROM keys WHERE tenant = ?", "acme").Scan(&us); err != nil {
		t.Fatal(err)
	}
	if us != at.UnixMicro() {
		t.Fatalf("Micros: %d, want %d", us, at.UnixMicro())
	}
}

func testClosed(t *testing.T, d sqlstore.Driver) {
	ctx := t.Context()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if _, err := d.Read(); memgate.ErrorCode(err) != memgate.EUNAVAILABLE {
		t.Fatalf("Read after Close: %v, want unavailable", err)
	}
	if err := d.Write(ctx, "test", func(sqlstore.Querier) error { return nil }); memgate.ErrorCode(err) != memgate.EUNAVAILABLE {
		t.Fatalf("Write after Close: %v, want unavailable", err)
	}
}

// testIndexTerms: LoadIndex never uses terms that are missing (a row
// written before the column) or of another analysis version: it analyses
// the content instead and writes the terms back.
func testIndexTerms(t *testing.T, d sqlstore.Driver) {
	ctx := t.Context()
	s := sqlstore.New(d)
	var ms []*memgate.Memory
	for i, content := range []string{"Alice waters the tomatoes.", "Bees visit the orchard at dawn.", "The garden needs rain."} {
		ms = append(ms, &memgate.Memory{ID: fmt.Sprintf("m-%d", i), Tenant: "acme", Principal: "alice", Kind: memgate.KindFact,
			Source: memgate.SourceUser, Sensitivity: memgate.SensitivityStandard, Status: memgate.StatusActive,
			Content: content, ContentSHA256: memgate.ContentHash(content), CreatedAt: at.Add(time.Duration(i) * time.Second),
			UpdatedAt: at, Version: 1})
	}
	if err := s.Insert(ctx, ms); err != nil {
		t.Fatal(err)
	}
	stale := store.EncodeTerms([]string{"stale"})
	if err := d.Write(ctx, "age terms", func(q sqlstore.Querier) error {
		if _, err := q.Exec(ctx, `UPDATE memories SET index_terms = NULL, terms_version = NULL WHERE tenant = ? AND id = ?`, "acme", "m-0"); err != nil {
			return err
		}
		_, err := q.Exec(ctx, `UPDATE memories SET index_terms = ?, terms_version = ? WHERE tenant = ? AND id = ?`, stale, "analysis-v0", "acme", "m-1")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	versions := func() map[string]string {
		out := map[string]string{}
		q, err := d.Read()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			var v *string
			if err := q.QueryRow(ctx, `SELECT terms_version FROM memories WHERE tenant = ? AND id = ?`, "acme", m.ID).Scan(&v); err != nil {
				t.Fatal(err)
			}
			if v != nil {
				out[m.ID] = *v
			}
		}
		return out
	}
	if v := versions(); v["m-0"] != "" || v["m-1"] != "analysis-v0" || v["m-2"] != analysis.TermsVersion {
		t.Fatalf("terms versions before the load: %v", v)
	}
	for range 2 { // the first load analyses and fills, the second reads the filled terms
		storetest.RequireIndexRows(t, "LoadIndex", storetest.LoadIndexRows(t, s, "acme", "alice", store.EmbeddingModel{}), ms, store.EmbeddingModel{})
		if v := versions(); v["m-0"] != analysis.TermsVersion || v["m-1"] != analysis.TermsVersion || v["m-2"] != analysis.TermsVersion {
			t.Fatalf("terms versions after the load: %v", v)
		}
	}
}

// testBorrowed: a blob scanned into Borrowed holds the current row's bytes,
// whatever the rows before it held (longer, shorter, NULL), beside a
// []byte destination of the same column.
func testBorrowed(t *testing.T, d sqlstore.Driver) {
	ctx := t.Context()
	s := sqlstore.New(d)
	vectors := [][]float32{{1, 2, 3, 4, 5, 6, 7, 8}, nil, {-0.5, 0.25}, make([]float32, 484), {3}}
	vectors[3][0], vectors[3][483] = 1, -1
	var ms []*memgate.Memory
	for i, v := range vectors {
		content := fmt.Sprintf("memory number %d", i)
		m := &memgate.Memory{ID: fmt.Sprintf("m-%d", i), Tenant: "acme", Principal: "alice", Kind: memgate.KindFact,
			Source: memgate.SourceUser, Sensitivity: memgate.SensitivityStandard, Status: memgate.StatusActive,
			Content: content, ContentSHA256: memgate.ContentHash(content), CreatedAt: at, UpdatedAt: at, Version: 1}
		if v != nil {
			m.Embedding = &memgate.Embedding{Provider: "test", Model: "m", Dim: len(v), Vector: v}
		}
		ms = append(ms, m)
	}
	if err := s.Insert(ctx, ms); err != nil {
		t.Fatal(err)
	}
	rs, err := reader(t, d).Query(ctx, "SELECT id, embedding_vector, embedding_vector FROM memories WHERE tenant = ? ORDER BY seq", "acme")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	n := 0
	for rs.Next() {
		var id string
		var b sqlstore.Borrowed
		var c []byte
		if err := rs.Scan(&id, &b, &c); err != nil {
			t.Fatal(err)
		}
		want := vectors[n]
		switch {
		case id != ms[n].ID:
			t.Fatalf("row %d is %s, want %s", n, id, ms[n].ID)
		case want == nil && (b != nil || c != nil):
			t.Errorf("%s: a NULL vector read as %x and %x", id, b, c)
		case want != nil && (string(b) != string(store.EncodeVector(want)) || string(c) != string(b)):
			t.Errorf("%s: borrowed %x, copied %x, want %x", id, []byte(b), c, store.EncodeVector(want))
		}
		n++
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(vectors) {
		t.Fatalf("%d rows, want %d", n, len(vectors))
	}
}
