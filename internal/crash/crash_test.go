package crash

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/postgres/pgtest"
)

// buildOnce builds cmd/memgate and the file checker once per test binary,
// without -race (the children are the system under test, not this
// package; and the race detector makes the pure-Go SQLite too slow to
// check the file after every kill).
var buildOnce = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	dir, err := os.MkdirTemp("", "memgate-crash-bin-")
	if err != nil {
		return "", err
	}
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/memgate", "./internal/crash/sqlitecheck")
	build.Dir = root
	var stderr bytes.Buffer
	build.Stderr = &stderr
	if err := build.Run(); err != nil {
		return "", &buildError{err, stderr.String()}
	}
	return dir, nil
})

type buildError struct {
	err    error
	output string
}

func (e *buildError) Error() string {
	return "go build ./cmd/memgate: " + e.err.Error() + "\n" + e.output
}

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := buildOnce(); err == nil {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// binaries returns the paths of memgate and sqlitecheck.
func binaries(t *testing.T) (memgate, checker string) {
	t.Helper()
	dir, err := buildOnce()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "memgate"), filepath.Join(dir, "sqlitecheck")
}

// requireClean fails the test for every broken guarantee in rep, and when
// the run did not do what it was asked (so that a harness that silently
// stopped killing or writing cannot pass).
func requireClean(t *testing.T, rep *Report, kills int) {
	t.Helper()
	t.Logf("backend %s replicas %d seed %d: %d kills, %d requests / %d memories acknowledged (%d supersessions), %d in flight at kill, "+
		"%d retried (%d replayed, %d of them supersessions), lost %d, corrupt %d, duplicates %d, strays %d, half done %d, two successors %d, "+
		"wrong state %d, refused %d, conflicts %d, integrity %s (%d checks, p50 %.1f ms), restart p50 %.1f ms p99 %.1f ms, %.1f s",
		rep.Backend, rep.Replicas, rep.Seed, rep.Kills, rep.Requests, rep.Acknowledged, rep.Supersessions, rep.InFlightAtKill,
		rep.Retried, rep.Replayed, rep.SupersessionsReplayed, rep.Lost, rep.Corrupt, rep.Duplicates, rep.Strays, rep.HalfDone, rep.DoubleSuccessors,
		rep.WrongState, rep.Refused, rep.Conflicts, rep.Integrity, rep.IntegrityChecks, rep.CheckP50ms,
		rep.RestartP50ms, rep.RestartP99ms, rep.WallSecs)
	if err := rep.Err(); err != nil {
		t.Fatalf("crash run broke a guarantee (seed %d, logs in %s):\n%v", rep.Seed, rep.Dir, err)
	}
	if rep.Kills != kills {
		t.Fatalf("%d kills, want %d", rep.Kills, kills)
	}
	if rep.Requests < kills || rep.StoredAtEnd != rep.Acknowledged {
		t.Fatalf("%d requests acknowledged, %d memories acknowledged, %d stored: the run wrote too little or the counts disagree", rep.Requests, rep.Acknowledged, rep.StoredAtEnd)
	}
	if rep.Supersessions < kills {
		t.Fatalf("%d supersessions acknowledged in %d kills: the run superseded too little", rep.Supersessions, kills)
	}
}

func TestCrashSQLite(t *testing.T) {
	t.Parallel()
	bin, checker := binaries(t)
	const kills = 20
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{
		Binary: bin, FileChecker: checker, SQLite: filepath.Join(t.TempDir(), "crash.db"),
		Kills: kills, Writers: 3, MinDelay: 10 * time.Millisecond, MaxDelay: 120 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	requireClean(t, rep, kills)
	if rep.InFlightAtKill == 0 {
		t.Fatal("no kill met a request in flight: the run did not test a crash mid-write")
	}
	if rep.IntegrityChecks != kills+1 || rep.Integrity != "ok" {
		t.Fatalf("integrity %s after %d checks, want ok after %d", rep.Integrity, rep.IntegrityChecks, kills+1)
	}
}

func TestCrashPostgresReplicas(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.SchemaURL(t)
	bin, _ := binaries(t)
	const kills = 5
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{
		Binary: bin, Postgres: dbURL, Replicas: 2,
		Kills: kills, Writers: 3, MinDelay: 10 * time.Millisecond, MaxDelay: 120 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	requireClean(t, rep, kills)
	if rep.Integrity != "n/a" || rep.IntegrityChecks != 0 {
		t.Fatalf("integrity %q with %d checks on PostgreSQL, want n/a", rep.Integrity, rep.IntegrityChecks)
	}
}

// TestCheckerCatches is the control beside the runs: over a live server,
// the checks stay quiet on intact data (remembers, batches and
// supersessions, one of them chained) and report a loss for an
// acknowledged id that is not stored, a corrupt memory for an id stored
// with another content than acknowledged, a duplicate for a second memory
// with an acknowledged content, a stray for a memory no request
// acknowledged. For acknowledged supersessions they report a half-done
// supersession and a wrong state for an old memory left active (in the
// final check and in the round's) and for a new memory stored without its
// link, a loss and a half-done supersession for a new memory deleted, two
// successors for a second memory naming an old one (in the final check
// and in a later round), a wrong state for a new memory revoked; and a
// half-done supersession for memories of no acknowledged request that name
// an active memory or one not stored, or are superseded by a memory not
// stored, by one that does not name them, by none. A retried supersession
// answered 409 is counted, and acknowledged only with its own memory. The
// file check fails on a damaged database.
func TestCheckerCatches(t *testing.T) {
	t.Parallel()
	bin, checker := binaries(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	dbPath := filepath.Join(t.TempDir(), "control.db")
	r, err := newRun(Config{Binary: bin, SQLite: dbPath, Kills: 1, Dir: t.TempDir(), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.killAll()
	defer r.hc.CloseIdleConnections()
	if err := r.startAll(ctx); err != nil {
		t.Fatal(err)
	}
	var w writers
	rng := rand.New(rand.NewPCG(1, 1))
	for range 8 {
		r.send(ctx, r.led.next(rng, 4), &w)
	}
	// Supersessions of acknowledged memories, one of them of the memory a
	// supersession stored (a chain).
	supersede := func(old *request) *request {
		t.Helper()
		q := r.led.nextSupersession(rng, ref{old, 0})
		r.send(ctx, q, &w)
		if q.ids == nil {
			t.Fatalf("supersession of %s not acknowledged: %v", old.ids[0], r.problems)
		}
		return q
	}
	q2, q3, q4, q5, q6 := r.led.request(2), r.led.request(3), r.led.request(4), r.led.request(5), r.led.request(6)
	chainHead := supersede(q2)
	chainTail := supersede(chainHead)
	sActive, sMissing, sDouble := supersede(q3), supersede(q4), supersede(q5)
	if s := w.stats(); s.refused != 0 || r.led.acked() != 13 {
		t.Fatalf("%d of 13 requests acknowledged, %d refused: %v", r.led.acked(), s.refused, r.problems)
	}
	confirm := r.confirm(ctx)
	checkNow := func(expected map[string]ref) findings {
		t.Helper()
		all, err := r.listAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f, err := check(all, expected, r.led.request, confirm)
		if err != nil {
			t.Fatal(err)
		}
		lf, err := checkLinks(all, expected, &r.led, r.getter(ctx), map[string][]string{})
		if err != nil {
			t.Fatal(err)
		}
		f.merge(lf)
		return f
	}
	// checkRound checks supersessions as a round does: the listing holds
	// only the round's memories ids, the others are read by id, and named
	// is what earlier rounds saw.
	checkRound := func(ids []string, principal string, expected map[string]ref, named map[string][]string) findings {
		t.Helper()
		var fresh []listed
		for _, id := range ids {
			m, err := r.get(ctx, id, principal)
			if err != nil || m == nil {
				t.Fatalf("get %s: %v %v", id, m, err)
			}
			fresh = append(fresh, *m)
		}
		f, err := checkLinks(fresh, expected, &r.led, r.getter(ctx), named)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	// want compares every list of got with the one of w.
	want := func(name string, got, w findings) {
		t.Helper()
		norm := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
		wl := w.lists()
		for i, l := range got.lists() {
			if !slices.Equal(norm(*l.ids), norm(*wl[i].ids)) {
				t.Errorf("%s: found %s %v, want %v", name, l.what, *l.ids, *wl[i].ids)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	ids := r.led.allIDs()
	if len(ids) < 13 {
		t.Fatalf("%d memories acknowledged for 13 requests", len(ids))
	}
	want("intact", checkNow(ids), findings{})

	// Loss: an acknowledged id the server never stored (a valid id, so
	// that GET answers 404).
	missing := memgate.NewID(time.Now())
	withMissing := r.led.allIDs()
	withMissing[missing] = ref{r.led.request(0), 0}
	want("an acknowledged id not stored", checkNow(withMissing), findings{lost: []string{missing}})

	// Corruption: two acknowledged ids whose contents are swapped.
	q0, q1 := r.led.request(0), r.led.request(1)
	a, b := q0.ids[0], q1.ids[0]
	swapped := r.led.allIDs()
	swapped[a], swapped[b] = ref{q1, 0}, ref{q0, 0}
	want("contents swapped", checkNow(swapped), findings{corrupt: []string{a, b}})

	// Duplicate: request 0 sent again under another key is stored again.
	again := *q0
	again.key = "control-again"
	dupIDs := r.postControl(ctx, t, &again)
	faults := findings{dups: dupIDs}
	want("a request stored twice", checkNow(r.led.allIDs()), faults)

	// Stray: a memory of a request never acknowledged.
	stray := newRequest(9999, rng, 4)
	faults.strays = r.postControl(ctx, t, stray)
	want("a memory of no acknowledged request", checkNow(r.led.allIDs()), faults)

	// An acknowledged supersession whose old memory is left active (the
	// new one names it): half done, and the old memory in the wrong state.
	// The API cannot do this; the file is written beside the server, then
	// restored.
	oldActive := q3.ids[0]
	var status, by string
	sqlRow(t, dbPath, "SELECT status, superseded_by FROM memories WHERE id = ?", []any{oldActive}, &status, &by)
	if status != "superseded" || by != sActive.ids[0] {
		t.Fatalf("%s is %s by %q, want superseded by %s", oldActive, status, by, sActive.ids[0])
	}
	sqlExec(t, dbPath, "UPDATE memories SET status = 'active', superseded_by = '' WHERE id = ?", oldActive)
	planted := faults
	planted.halfDone, planted.wrong = []string{oldActive}, []string{oldActive}
	want("an old memory left active", checkNow(r.led.allIDs()), planted)
	want("an old memory left active, in the round of its supersession", checkRound([]string{sActive.ids[0]}, q3.principal,
		map[string]ref{sActive.ids[0]: {sActive, 0}}, map[string][]string{}), findings{halfDone: planted.halfDone, wrong: planted.wrong})
	sqlExec(t, dbPath, "UPDATE memories SET status = ?, superseded_by = ? WHERE id = ?", status, by, oldActive)
	want("the old memory superseded again", checkNow(r.led.allIDs()), faults)

	// The same supersession with its new memory stored without the link:
	// the old memory superseded by a memory that does not name it, and the
	// new one in the wrong state.
	sqlExec(t, dbPath, "UPDATE memories SET supersedes = '' WHERE id = ?", sActive.ids[0])
	planted.wrong = []string{sActive.ids[0]}
	want("a new memory without its link", checkNow(r.led.allIDs()), planted)
	sqlExec(t, dbPath, "UPDATE memories SET supersedes = ? WHERE id = ?", oldActive, sActive.ids[0])
	want("the link restored", checkNow(r.led.allIDs()), faults)

	// An acknowledged supersession whose new memory is deleted: lost, and
	// the old memory superseded by a memory not stored.
	r.apiControl(ctx, t, "DELETE", "/v1/memories/"+sMissing.ids[0]+"?principal="+sMissing.principal, "", 200)
	faults.lost, faults.halfDone = []string{sMissing.ids[0]}, []string{q4.ids[0]}
	want("a successor missing", checkNow(r.led.allIDs()), faults)

	// A second memory naming an old one in supersedes (imported with the
	// link, the content of no acknowledged request): two successors, and
	// a stray.
	second := newRequest(9998, rng, 4)
	faults.strays = append(faults.strays, r.importControl(ctx, t, q5.principal, second.contents[0], map[string]string{"supersedes": q5.ids[0]}))
	faults.doubles = []string{q5.ids[0]}
	want("a second successor", checkNow(r.led.allIDs()), faults)
	want("a second successor, in a later round than the first", checkRound(faults.strays[len(faults.strays)-1:], q5.principal,
		map[string]ref{}, map[string][]string{q5.ids[0]: {sDouble.ids[0]}}), findings{doubles: faults.doubles})

	// The new memory of an acknowledged supersession revoked: wrong state.
	r.apiControl(ctx, t, "POST", "/v1/memories/"+chainTail.ids[0]+"/revoke?principal="+chainTail.principal, `{"reason": "control"}`, 200)
	faults.wrong = []string{chainTail.ids[0]}
	want("a new memory not active", checkNow(r.led.allIDs()), faults)

	// Supersessions of no acknowledged request, half done (each memory a
	// stray): memories naming in supersedes an active memory, a memory not
	// stored; memories superseded by a memory not stored, by one that does
	// not name them, by none.
	q7 := r.led.request(7)
	neverStored := memgate.NewID(time.Now())
	for i, old := range []string{q6.ids[0], neverStored} {
		id := r.importControl(ctx, t, q6.principal, newRequest(9990+i, rng, 4).contents[0], map[string]string{"supersedes": old})
		faults.strays = append(faults.strays, id)
		faults.halfDone = append(faults.halfDone, old)
	}
	for i, fields := range []map[string]string{
		{"status": "superseded", "superseded_by": memgate.NewID(time.Now())},
		{"status": "superseded", "superseded_by": q7.ids[0]},
		{"status": "superseded"},
	} {
		id := r.importControl(ctx, t, q7.principal, newRequest(9995-i, rng, 4).contents[0], fields)
		faults.strays = append(faults.strays, id)
		faults.halfDone = append(faults.halfDone, id)
	}
	want("unacknowledged supersessions half done", checkNow(r.led.allIDs()), faults)

	// A retried supersession answered 409 conflict (a retry without key
	// whose first send committed) is counted and acknowledged with the
	// memory its first send stored; one whose old memory another memory
	// superseded is counted and refused.
	var cw writers
	retried := r.led.nextSupersession(rng, ref{q1, 0})
	first := r.postControl(ctx, t, retried)
	r.resolveConflict(ctx, retried, 2, &cw)
	if s := cw.stats(); s.conflicts != 1 || s.refused != 0 || !slices.Equal(retried.ids, first) {
		t.Fatalf("a retried supersession stored as %v: acknowledged as %v, %d conflicts, %d refused; want %v, 1, 0", first, retried.ids, s.conflicts, s.refused, first)
	}
	other := newSupersession(9989, rng, ref{q1, 0})
	r.resolveConflict(ctx, other, 2, &cw)
	if s := cw.stats(); s.conflicts != 2 || s.refused != 1 || other.ids != nil {
		t.Fatalf("a supersession whose old memory another superseded: acknowledged as %v, %d conflicts, %d refused; want none, 2, 1", other.ids, s.conflicts, s.refused)
	}

	// The file check after a SIGKILL reads the write-ahead log without
	// recovering or checkpointing it: the next child does that itself.
	stored, err := r.listAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.children[0].kill()
	before, err := os.Stat(dbPath + "-wal")
	if err != nil || before.Size() == 0 {
		t.Fatalf("no write-ahead log after SIGKILL (%v): the test does not exercise recovery", err)
	}
	if err := CheckSQLite(ctx, dbPath); err != nil {
		t.Fatalf("database after SIGKILL: %v", err)
	}
	if n := countRO(t, dbPath); n != len(stored) {
		t.Fatalf("a read-only open after SIGKILL counts %d memories, the server listed %d: it does not read the log", n, len(stored))
	}
	after, err := os.Stat(dbPath + "-wal")
	if err != nil || after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("the check changed the write-ahead log: %d bytes before, after %v %v", before.Size(), after, err)
	}

	// Clean after a graceful stop (which checkpoints), failing once the
	// file is damaged.
	c, err := r.start(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	c.stop()
	if err := CheckSQLite(ctx, dbPath); err != nil {
		t.Fatalf("intact database: %v", err)
	}
	if err := runChecker(ctx, checker, dbPath); err != nil {
		t.Fatalf("intact database, checked by %s: %v", checker, err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSQLite(ctx, rel); err != nil {
		t.Fatalf("intact database by its relative path %s: %v", rel, err)
	}
	damaged := filepath.Join(t.TempDir(), "damaged.db")
	damage(t, dbPath, damaged)
	err = CheckSQLite(ctx, damaged)
	if err == nil || !strings.Contains(err.Error(), "PRAGMA integrity_check:") {
		t.Fatalf("damaged database: the check answered %v, want integrity_check's findings", err)
	}
	t.Logf("damaged database: %v", err)
	if err := runChecker(ctx, checker, damaged); err == nil || !strings.Contains(err.Error(), "PRAGMA integrity_check:") {
		t.Fatalf("damaged database, checked by %s: %v, want integrity_check's findings", checker, err)
	}
}

// postControl sends q as the writers would (its own key) and returns the
// ids the server answered with, failing the test on anything but 201.
func (r *run) postControl(ctx context.Context, t *testing.T, q *request) []string {
	t.Helper()
	status, body, err := r.post(ctx, r.children[0].url+"/v1/memories", q)
	if err != nil || status != 201 {
		t.Fatalf("control remember: HTTP %d %s %v", status, errorCode(body), err)
	}
	var out struct {
		Memories []rememberedItem `json:"memories"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range out.Memories {
		ids = append(ids, m.ID)
	}
	return ids
}

// apiControl sends body (none when empty) to path with the admin key and
// returns the answer, failing the test on another status than want.
func (r *run) apiControl(ctx context.Context, t *testing.T, method, path, body string, want int) []byte {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.children[0].url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", r.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != want {
		t.Fatalf("control %s %s: HTTP %d %s %v, want %d", method, strings.SplitN(path, "?", 2)[0], resp.StatusCode, errorCode(b), err, want)
	}
	return b
}

// importControl stores, through /v1/import, a memory of principal with
// content and the given fields (which may set what a remember cannot: a
// link, a status), and returns its id.
func (r *run) importControl(ctx context.Context, t *testing.T, principal, content string, fields map[string]string) string {
	t.Helper()
	id := memgate.NewID(time.Now())
	line := map[string]any{"id": id, "principal": principal, "kind": "fact", "source": "user", "content": content}
	for k, v := range fields {
		line[k] = v
	}
	b, err := json.Marshal(line)
	if err != nil {
		t.Fatal(err)
	}
	r.apiControl(ctx, t, "POST", "/v1/import", string(b), 200)
	return id
}

// sqlExec runs stmt on the SQLite database at path, beside the server
// that serves it (which reads the change on its next transaction).
func sqlExec(t *testing.T, path, stmt string, args ...any) {
	t.Helper()
	db := openSQL(t, path)
	defer db.Close()
	if res, err := db.Exec(stmt, args...); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%s: %d rows changed, want 1", stmt, n)
	}
}

// sqlRow reads one row of query into dest from the SQLite database at path.
func sqlRow(t *testing.T, path, query string, args []any, dest ...any) {
	t.Helper()
	db := openSQL(t, path)
	defer db.Close()
	if err := db.QueryRow(query, args...).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func openSQL(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// damage copies the database file src (checkpointed: no WAL) to dst and
// points two indexes of the memories table at each other's b-tree, the
// kind of damage a torn write leaves: every page is well formed, but the
// indexes no longer match the table.
func damage(t *testing.T, src, dst string) {
	t.Helper()
	if fi, err := os.Stat(src + "-wal"); err == nil && fi.Size() > 0 {
		t.Fatalf("%s-wal is not empty: the database was not checkpointed", src)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dst)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var tenant, partition int
	if err := db.QueryRow("SELECT rootpage FROM sqlite_schema WHERE name = 'memories_tenant'").Scan(&tenant); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT rootpage FROM sqlite_schema WHERE name = 'memories_partition'").Scan(&partition); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"PRAGMA writable_schema = ON",
		fmt.Sprintf("UPDATE sqlite_schema SET rootpage = %d WHERE name = 'memories_tenant'", partition),
		fmt.Sprintf("UPDATE sqlite_schema SET rootpage = %d WHERE name = 'memories_partition'", tenant),
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("damage %s: %v", dst, err)
		}
	}
}

// countRO counts the memories of the database at path, opened read-only as
// CheckSQLite opens it.
func countRO(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM memories").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
