package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/postgres/pgtest"
	"github.com/memgate/memgate/sqlite"
	"github.com/memgate/memgate/store"
)

// runMemgate runs memgate in-process with args.
func runMemgate(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// seedSource writes a SQLite database holding every status, every field
// (embeddings, metadata with exact numbers, flags, feedback, seen counts,
// supersession links, times), two tenants, an audit log and keys, revoked
// ones included.
func seedSource(t *testing.T, path string) {
	t.Helper()
	ctx := t.Context()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 123456000, time.UTC)
	ptr := func(t time.Time) *time.Time { return &t }
	var ms []*memgate.Memory
	n := 0
	for _, tenant := range []string{"acme", "globex"} {
		for _, principal := range []string{"alice", "bob"} {
			for _, st := range memgate.Statuses {
				n++
				content := fmt.Sprintf("memory %d of %s/%s: ünïcödé \"quoted\" %s", n, tenant, principal, st)
				m := &memgate.Memory{
					ID: fmt.Sprintf("m-%03d", n), Tenant: tenant, Principal: principal, Agent: "agent-1", Conversation: "c-1",
					Kind: memgate.Kinds[n%len(memgate.Kinds)], Source: memgate.Sources[n%len(memgate.Sources)],
					Sensitivity: memgate.Sensitivities[n%2], Status: st, StatusReason: "because " + string(st),
					Content: content, ContentSHA256: memgate.ContentHash(content), Reason: "seeded",
					CreatedAt: t0.Add(time.Duration(n) * time.Minute), UpdatedAt: t0.Add(time.Duration(n)*time.Minute + time.Microsecond),
					Version: int64(n), DedupKey: fmt.Sprintf("sig-v1:%d", n), SeenCount: int64(n),
					Flags:    []string{"instruction_like:role_tag"},
					Feedback: memgate.Feedback{Count: 3, Sum: -0.1 + 0.7 + 1},
					Embedding: &memgate.Embedding{Provider: "builtin", Model: "hash-v1", Dim: 4,
						Vector: []float32{0.25, -1, math.SmallestNonzeroFloat32, float32(n)}},
				}
				m.Metadata, _ = memgate.DecodeMetadata([]byte(`{"big":12345678901234567,"f":3.141592653589793,"nested":{"x":[1,"two",null]}}`))
				if n%3 == 0 {
					m.ExpiresAt, m.ValidFrom, m.ValidUntil = ptr(t0.Add(30*24*time.Hour)), ptr(t0.Add(-time.Hour)), ptr(t0.Add(time.Hour))
					m.Metadata, m.Flags, m.Embedding = nil, nil, nil
				}
				if st == memgate.StatusSuperseded {
					m.SupersededBy = fmt.Sprintf("m-%03d", n+100)
				}
				ms = append(ms, m)
			}
		}
	}
	if err := db.Insert(ctx, ms); err != nil {
		t.Fatal(err)
	}
	var evs []store.AuditEvent
	for i := range 7 {
		evs = append(evs, store.AuditEvent{Tenant: []string{"acme", "globex"}[i%2], Principal: "alice", Agent: "agent-1",
			Actor: "key-1", Action: "recall", At: t0.Add(time.Duration(i) * time.Second),
			MemoryIDs: []string{"m-001", "m-002"}, Scores: []float64{0.9, 1.0 / 3}, RecallID: fmt.Sprintf("rc-%d", i),
			QuerySHA256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
			Counts:      map[string]int64{"candidates": int64(100 + i)}, Reason: "ok"})
	}
	evs = append(evs, store.AuditEvent{Tenant: "auditonly", Actor: "cli", Action: "forget", At: t0})
	if err := db.AppendAudit(ctx, evs); err != nil {
		t.Fatal(err)
	}
	for i, k := range []*memgate.Key{
		{ID: "key_admin", Tenant: "acme", Role: memgate.RoleAdmin, Name: "first", CreatedAt: t0},
		{ID: "key_user", Tenant: "acme", Role: memgate.RoleUser, Principal: "alice", CreatedAt: t0.Add(time.Second), RevokedAt: ptr(t0.Add(time.Hour))},
		{ID: "key_agent", Tenant: "keysonly", Role: memgate.RoleAgent, Agent: "helper", CreatedAt: t0},
	} {
		k.Hash = memgate.ContentHash(fmt.Sprintf("secret-%d", i))
		if err := db.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
}

// storeDump is everything a store holds for the tenants, as the port
// reads it: memories (with vectors and dedup keys, which export leaves
// out) in insertion order, audit events without their seq (each database
// numbers its own), keys.
func storeDump(t *testing.T, path string, tenants ...string) string {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b strings.Builder
	for _, tenant := range tenants {
		p, err := db.List(t.Context(), memgate.Scope{Tenant: tenant, AllPrincipals: true}, store.Filter{Limit: store.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range p.Memories {
			js, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			var vec []float32
			if m.Embedding != nil {
				vec = m.Embedding.Vector
			}
			fmt.Fprintf(&b, "%s dedup=%q vector=%v\n", js, m.DedupKey, vec)
		}
		a, err := db.ListAudit(t.Context(), tenant, memgate.AuditFilter{Limit: store.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range a.Events {
			e.Seq = 0
			js, _ := json.Marshal(e)
			fmt.Fprintf(&b, "%s\n", js)
		}
		ks, err := db.ListKeys(t.Context(), tenant)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			js, _ := json.Marshal(k)
			fmt.Fprintf(&b, "%s hash=%s\n", js, k.Hash)
		}
	}
	return b.String()
}

var allTenants = []string{"acme", "auditonly", "globex", "keysonly"}

// TestMigrateRoundTripThroughPostgres copies SQLite to PostgreSQL and back
// to a new SQLite file: the exports and everything the port reads (vectors
// included) are the same, byte for byte.
func TestMigrateRoundTripThroughPostgres(t *testing.T) {
	t.Parallel()
	pg := pgtest.SchemaURL(t)
	dir := t.TempDir()
	src, back := filepath.Join(dir, "src.db"), filepath.Join(dir, "back.db")
	seedSource(t, src)

	code, out, errs := runMemgate("migrate", "--from", "sqlite:"+src, "--to", "postgres:"+pg, "--batch", "3")
	if code != 0 {
		t.Fatalf("migrate sqlite -> postgres: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"tenant acme: copied 8 memories, 4 audit events, 2 keys", "verify globex: memories 8 -> 8",
		"migrated 4 tenants: 16 memories (active 4, pending 4, revoked 4, superseded 4), 8 audit events, 3 keys; verified"} {
		if !strings.Contains(out, want) {
			t.Fatalf("migrate output lacks %q:\n%s", want, out)
		}
	}
	if u, _ := url.Parse(pg); u != nil {
		if pw, ok := u.User.Password(); ok && strings.Contains(out+errs, ":"+pw+"@") {
			t.Fatalf("output holds the password:\n%s", out)
		}
	}
	code, out, errs = runMemgate("migrate", "--from", "postgres:"+pg, "--to", "sqlite:"+back)
	if code != 0 {
		t.Fatalf("migrate postgres -> sqlite: exit %d\n%s%s", code, out, errs)
	}

	for _, tenant := range allTenants {
		_, a, _ := runMemgate("export", "--db", src, "--tenant", tenant)
		_, b, _ := runMemgate("export", "--db", back, "--tenant", tenant)
		if a != b {
			t.Fatalf("export of %s differs after the round trip:\n%s\n---\n%s", tenant, a, b)
		}
		if tenant == "acme" && strings.Count(a, "\n") != 8 {
			t.Fatalf("control: export of acme has %d lines:\n%s", strings.Count(a, "\n"), a)
		}
	}
	if a, b := storeDump(t, src, allTenants...), storeDump(t, back, allTenants...); a != b {
		t.Fatalf("stores differ after the round trip:\n%s\n---\n%s", a, b)
	}

	// The destination now holds data: a second copy is refused, and with
	// --into-nonempty the ids it holds are conflicts.
	code, _, errs = runMemgate("migrate", "--from", "sqlite:"+src, "--to", "postgres:"+pg)
	if code != 1 || !strings.Contains(errs, "holds data already") {
		t.Fatalf("migrate into a non-empty database: exit %d: %s", code, errs)
	}
	code, _, errs = runMemgate("migrate", "--from", "sqlite:"+src, "--to", "postgres:"+pg, "--into-nonempty")
	if code != 1 || !strings.Contains(errs, "conflict") {
		t.Fatalf("migrate --into-nonempty over the same ids: exit %d: %s", code, errs)
	}
}

// TestMigrateSQLiteToSQLite needs no server: the copy is verified and the
// exports agree.
func TestMigrateSQLiteToSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db")
	seedSource(t, src)
	code, out, errs := runMemgate("migrate", "--from", "sqlite:"+src, "--to", "sqlite:"+dst)
	if code != 0 || !strings.Contains(out, "; verified") {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, errs)
	}
	if a, b := storeDump(t, src, allTenants...), storeDump(t, dst, allTenants...); a != b {
		t.Fatalf("stores differ:\n%s\n---\n%s", a, b)
	}
	// Into the non-empty copy, with other ids: allowed with the flag, and
	// verified against the source's own memories only.
	other := filepath.Join(dir, "other.db")
	if c, o, e := runMemgate("remember", "--db", other, "--tenant", "acme", "--principal", "carol", "Carol likes jazz."); c != 0 {
		t.Fatalf("remember: %s%s", o, e)
	}
	code, out, errs = runMemgate("migrate", "--from", "sqlite:"+other, "--to", "sqlite:"+dst, "--into-nonempty")
	if code != 0 || !strings.Contains(out, "; verified") {
		t.Fatalf("migrate --into-nonempty: exit %d\n%s%s", code, out, errs)
	}
	// Usage mistakes.
	for _, args := range [][]string{
		{"migrate", "--to", "sqlite:" + dst},
		{"migrate", "--from", "mysql:x", "--to", "sqlite:" + dst},
		{"migrate", "--from", "sqlite:" + src, "--to", "sqlite:" + dst, "--batch", "0"},
	} {
		if code, _, _ := runMemgate(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, _, errs := runMemgate("migrate", "--from", "sqlite:"+filepath.Join(dir, "missing.db"), "--to", "sqlite:"+dst); code != 1 || !strings.Contains(errs, "missing.db") {
		t.Errorf("migrate from a missing file: exit %d: %s", code, errs)
	}
}

// lossyStore drops the last memory of every Insert: a destination that
// loses data, which the verification must catch.
type lossyStore struct{ store.Store }

func (l lossyStore) Insert(ctx context.Context, ms []*memgate.Memory) error {
	return l.Store.Insert(ctx, ms[:len(ms)-1])
}

func TestMigrateVerificationCatchesLoss(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db")
	seedSource(t, src)
	ctx := t.Context()
	s, err := openMigrationEnd(ctx, "sqlite:"+src, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.st.Close()
	d, err := openMigrationEnd(ctx, "sqlite:"+dst, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer d.st.Close()
	d.st = lossyStore{d.st}
	var out bytes.Buffer
	err = (&migrator{ctx: ctx, src: s, dst: d, batch: 100, out: &out}).run(false)
	if err == nil || !strings.Contains(err.Error(), "verification failed for tenants acme, globex") {
		t.Fatalf("a lossy copy: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "MISMATCH") || !strings.Contains(out.String(), "verify auditonly") {
		t.Fatalf("figures:\n%s", out.String())
	}
	if strings.Count(out.String(), ": ok\n") != 2 { // auditonly and keysonly
		t.Fatalf("figures:\n%s", out.String())
	}
}
