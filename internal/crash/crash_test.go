package crash

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
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
	t.Logf("backend %s replicas %d seed %d: %d kills, %d requests / %d memories acknowledged, %d in flight at kill, %d retried (%d replayed), "+
		"lost %d, corrupt %d, duplicates %d, strays %d, refused %d, integrity %s (%d checks, p50 %.1f ms), restart p50 %.1f ms p99 %.1f ms, %.1f s",
		rep.Backend, rep.Replicas, rep.Seed, rep.Kills, rep.Requests, rep.Acknowledged, rep.InFlightAtKill, rep.Retried, rep.Replayed,
		rep.Lost, rep.Corrupt, rep.Duplicates, rep.Strays, rep.Refused, rep.Integrity, rep.IntegrityChecks, rep.CheckP50ms,
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
// the checks stay quiet on intact data and report a loss for an
// acknowledged id that is not stored, a corrupt memory for an id stored
// with another content than acknowledged, a duplicate for a second memory
// with an acknowledged content, a stray for a memory no request
// acknowledged; and the file check fails on a damaged database.
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
	if s := w.stats(); s.refused != 0 || r.led.acked() != 8 {
		t.Fatalf("%d of 8 requests acknowledged, %d refused: %v", r.led.acked(), s.refused, r.problems)
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
		return f
	}
	want := func(name string, got findings, lost, corrupt, dups, strays []string) {
		t.Helper()
		norm := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
		if !slices.Equal(norm(got.lost), norm(lost)) || !slices.Equal(norm(got.corrupt), norm(corrupt)) ||
			!slices.Equal(norm(got.dups), norm(dups)) || !slices.Equal(norm(got.strays), norm(strays)) {
			t.Fatalf("%s: found lost %v corrupt %v duplicates %v strays %v; want lost %v corrupt %v duplicates %v strays %v",
				name, got.lost, got.corrupt, got.dups, got.strays, lost, corrupt, dups, strays)
		}
	}
	ids := r.led.allIDs()
	if len(ids) < 8 {
		t.Fatalf("%d memories acknowledged for 8 requests", len(ids))
	}
	want("intact", checkNow(ids), nil, nil, nil, nil)

	// Loss: an acknowledged id the server never stored (a valid id, so
	// that GET answers 404).
	missing := memgate.NewID(time.Now())
	withMissing := r.led.allIDs()
	withMissing[missing] = ref{r.led.request(0), 0}
	want("an acknowledged id not stored", checkNow(withMissing), []string{missing}, nil, nil, nil)

	// Corruption: two acknowledged ids whose contents are swapped.
	q0, q1 := r.led.request(0), r.led.request(1)
	a, b := q0.ids[0], q1.ids[0]
	swapped := r.led.allIDs()
	swapped[a], swapped[b] = ref{q1, 0}, ref{q0, 0}
	want("contents swapped", checkNow(swapped), nil, []string{a, b}, nil, nil)

	// Duplicate: request 0 sent again under another key is stored again.
	again := *q0
	again.key = "control-again"
	dupIDs := r.postControl(ctx, t, &again)
	want("a request stored twice", checkNow(r.led.allIDs()), nil, nil, dupIDs, nil)

	// Stray: a memory of a request never acknowledged.
	stray := newRequest(9999, rng, 4)
	strayIDs := r.postControl(ctx, t, stray)
	want("a memory of no acknowledged request", checkNow(r.led.allIDs()), nil, nil, dupIDs, strayIDs)

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
