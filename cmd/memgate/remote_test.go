package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// These tests set MEMGATE_API_KEY with t.Setenv, so they do not run in
// parallel (parallel tests start only after them).

// remote runs memgate in-process against the server at url (no --db).
func remote(t *testing.T, url string, stdin string, args ...string) (int, string, string) {
	return runWith("--server", url, stdin, args...)
}

func mustRemote(t *testing.T, url string, args ...string) string {
	t.Helper()
	return mustRunWith(t, "--server", url, args...)
}

// serverKey starts a server on a fresh database and returns it with the
// admin key (tenant "default") it prints on first start, set as
// MEMGATE_API_KEY.
func serverKey(t *testing.T) (s *serving, db, key string) {
	t.Helper()
	t.Setenv("MEMGATE_SERVER", "")
	db = newDB(t)
	s = startServe(t, db)
	key = secretRE.FindString(s.stdout.String())
	if key == "" {
		t.Fatalf("serve printed no admin key:\n%s", s.stdout)
	}
	t.Setenv(apiKeyEnv, key)
	return s, db, key
}

var recallIDRE = regexp.MustCompile(`"recall_id": "[^"]*"`)

// pseudonymRE matches a forget receipt's audit pseudonym, keyed per
// database: two databases give the same principal different ones.
var pseudonymRE = regexp.MustCompile(`"forgotten:[0-9a-f]+"`)

// TestRemoteMatchesLocal runs the lifecycle through a server and reads the
// same data with the CLI on the server's database: text and --json agree.
func TestRemoteMatchesLocal(t *testing.T) {
	s, db, _ := serverKey(t)
	u := s.url
	local := func(args ...string) string {
		t.Helper()
		return mustCLI(t, db, append(args, "--tenant", "default")...)
	}
	same := func(what, remoteOut, localOut string) {
		t.Helper()
		if remoteOut != localOut {
			t.Fatalf("%s: remote and local differ:\n--- remote\n%s\n--- local\n%s", what, remoteOut, localOut)
		}
		if strings.TrimSpace(remoteOut) == "" {
			t.Fatalf("%s: empty output", what)
		}
	}

	// remember (no --tenant: the key's), then get: the same memory.
	var made map[string]any
	out := mustRemote(t, u, "remember", "--principal", "alice", "--kind", "preference", "--reason", "said so",
		"--metadata", `{"topic":"drinks","big":12345678901234567}`, "--json", "Alice drinks green tea, no sugar.")
	if err := json.Unmarshal([]byte(out), &made); err != nil {
		t.Fatalf("remember --json: %q: %v", out, err)
	}
	id, _ := made["id"].(string)
	if id == "" || made["tenant"] != "default" || made["deduplicated"] != false || made["status"] != "active" {
		t.Fatalf("remember --json: %s", out)
	}
	second := strings.TrimSpace(mustRemote(t, u, "remember", "--principal", "alice", "--kind", "fact", "Alice lives in Lisbon."))

	getR := mustRemote(t, u, "get", id, "--principal", "alice", "--json")
	same("get --json", getR, local("get", id, "--principal", "alice", "--json"))
	if !strings.Contains(getR, `"big": 12345678901234567`) {
		t.Errorf("metadata number not exact through the server: %s", getR)
	}
	same("get", mustRemote(t, u, "get", id, "--principal", "alice"), local("get", id, "--principal", "alice"))

	// update (CAS on the version read just before), feedback.
	if got := mustRemote(t, u, "update", id, "--principal", "alice", "--reason", "confirmed"); got != id+" version 2\n" {
		t.Fatalf("update: %q", got)
	}
	if code, _, errs := remote(t, u, "", "update", id, "--principal", "alice", "--version", "1", "--reason", "stale"); code != 1 || !strings.Contains(errs, "conflict") {
		t.Fatalf("stale update: exit %d %q", code, errs)
	}
	if got := mustRemote(t, u, "feedback", id, "--principal", "alice", "--value", "0.5"); !strings.HasPrefix(got, id+" feedback: 1 reports") {
		t.Fatalf("feedback: %q", got)
	}

	// list and counts.
	same("list --json", mustRemote(t, u, "list", "--principal", "alice", "--json"), local("list", "--principal", "alice", "--json"))
	same("list", mustRemote(t, u, "list", "--principal", "alice"), local("list", "--principal", "alice"))
	same("counts --json", mustRemote(t, u, "counts", "--json"), local("counts", "--json"))
	same("counts", mustRemote(t, u, "counts"), local("counts"))

	// recall: the same results (recall ids differ per call).
	recR := mustRemote(t, u, "recall", "--principal", "alice", "--json", "What does Alice drink?")
	if !strings.Contains(recR, id) {
		t.Fatalf("recall did not find the memory: %s", recR)
	}
	same("recall --json", recallIDRE.ReplaceAllString(recR, ""),
		recallIDRE.ReplaceAllString(local("recall", "--principal", "alice", "--json", "What does Alice drink?"), ""))
	same("recall", mustRemote(t, u, "recall", "--principal", "alice", "What does Alice drink?"),
		local("recall", "--principal", "alice", "What does Alice drink?"))
	if got := mustRemote(t, u, "recall", "--principal", "alice", "--render", "What does Alice drink?"); !strings.Contains(got, "<memories>") || !strings.Contains(got, "green tea") {
		t.Fatalf("recall --render: %q", got)
	}

	// supersede, both forms.
	next := strings.TrimSpace(mustRemote(t, u, "supersede", "--principal", "alice", second, "Alice lives in Porto."))
	third := strings.TrimSpace(mustRemote(t, u, "remember", "--principal", "alice", "--kind", "fact", "--supersedes", next, "Alice lives in Braga."))
	for old, by := range map[string]string{second: next, next: third} {
		got := mustRemote(t, u, "get", old, "--principal", "alice", "--json")
		if !strings.Contains(got, `"status": "superseded"`) || !strings.Contains(got, `"superseded_by": "`+by+`"`) {
			t.Fatalf("after supersede, %s: %s", old, got)
		}
	}

	// revoke: the memory is no longer recalled, through either path.
	if got := mustRemote(t, u, "revoke", id, "--principal", "alice", "--reason", "user asked"); got != id+" revoked\n" {
		t.Fatalf("revoke: %q", got)
	}
	if got := mustRemote(t, u, "recall", "--principal", "alice", "--json", "What does Alice drink?"); strings.Contains(got, id) {
		t.Fatalf("revoked memory recalled: %s", got)
	}
	same("recall after revoke", mustRemote(t, u, "recall", "--principal", "alice", "green tea"),
		local("recall", "--principal", "alice", "green tea"))

	// audit and export read the same log and memories.
	same("audit --json", mustRemote(t, u, "audit", "--principal", "alice", "--json"), local("audit", "--principal", "alice", "--json"))
	same("export", mustRemote(t, u, "export", "--principal", "alice"), local("export", "--principal", "alice"))
	file := filepath.Join(t.TempDir(), "out.jsonl")
	if code, _, errs := remote(t, u, "", "export", "--out", file); code != 0 || errs != "exported 4 memories to "+file+"\n" {
		t.Fatalf("export --out: exit %d %q", code, errs)
	}

	// approve and reject a memory the write gate holds.
	n := 0
	pending := func() string {
		t.Helper()
		n++
		var m map[string]any
		out := mustRemote(t, u, "remember", "--principal", "alice", "--source", "assistant", "--kind", "fact", "--json", fmt.Sprintf("Alice likes jazz record %d.", n))
		if err := json.Unmarshal([]byte(out), &m); err != nil || m["status"] != "pending" {
			t.Fatalf("assistant fact not pending: %s", out)
		}
		return m["id"].(string)
	}
	p1, p2 := pending(), pending()
	if got := mustRemote(t, u, "approve", p1, "--principal", "alice", "--version", "1"); got != p1+" approved\n" {
		t.Fatalf("approve: %q", got)
	}
	rej := mustRemote(t, u, "reject", p2, "--principal", "alice", "--version", "1", "--reason", "not true", "--json")
	same("reject --json then get", rej, local("get", p2, "--principal", "alice", "--json"))

	// delete, then the id is gone.
	if got := mustRemote(t, u, "delete", p2, "--principal", "alice"); got != p2+" deleted\n" {
		t.Fatalf("delete: %q", got)
	}
	if code, _, errs := remote(t, u, "", "get", p2, "--principal", "alice"); code != 1 || errs != "memgate get: not_found: memory not found\n" {
		t.Fatalf("get after delete: exit %d %q", code, errs)
	}

	// import the same file remotely and into a fresh local database.
	jsonl := filepath.Join(t.TempDir(), "in.jsonl")
	lines := `{"principal":"carol","kind":"fact","source":"import","content":"Carol keeps bees."}
{"principal":"carol","kind":"preference","source":"import","content":"Carol prefers mornings."}
`
	if err := os.WriteFile(jsonl, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := newDB(t)
	same("import", mustRemote(t, u, "import", jsonl), mustCLI(t, fresh, "import", "--tenant", "default", jsonl))
	more := `{"principal":"carol","kind":"fact","source":"import","content":"Carol sails on Sundays."}` + "\n"
	code, outR, errs := remote(t, u, more, "import", "--json", "-")
	if code != 0 {
		t.Fatalf("import - --server: exit %d %s", code, errs)
	}
	code, outL, errs := cli(t, fresh, more, "import", "--tenant", "default", "--json", "-")
	if code != 0 {
		t.Fatalf("import - local: exit %d %s", code, errs)
	}
	same("import --json", outR, outL)

	// forget: the receipt of the server's forget is the one a local forget
	// of the same memories gives.
	forgetR := mustRemote(t, u, "forget", "--principal", "carol", "--json")
	forgetL := mustCLI(t, fresh, "forget", "--tenant", "default", "--principal", "carol", "--json")
	if !pseudonymRE.MatchString(forgetR) || !pseudonymRE.MatchString(forgetL) {
		t.Fatalf("forget receipts without the audit pseudonym:\n%s\n%s", forgetR, forgetL)
	}
	same("forget --json", pseudonymRE.ReplaceAllString(forgetR, `"forgotten:X"`), pseudonymRE.ReplaceAllString(forgetL, `"forgotten:X"`))
	if !strings.Contains(forgetR, `"forgotten": 3`) {
		t.Fatalf("forget receipt: %s", forgetR)
	}
	if got := mustRemote(t, u, "list", "--principal", "carol", "--json"); !strings.Contains(got, `"memories": []`) {
		t.Fatalf("list after forget: %s", got)
	}
}

// TestRemoteErrors: the key is checked, a foreign id answers like a
// missing one, a --tenant other than the key's is refused, and errors
// print on one line as locally.
func TestRemoteErrors(t *testing.T) {
	t.Setenv("MEMGATE_SERVER", "")
	db := newDB(t)
	mkKey := func(tenant string) string {
		t.Helper()
		var k CreatedKey
		if err := json.Unmarshal([]byte(mustCLI(t, db, "keys", "create", "--tenant", tenant, "--role", "admin", "--json")), &k); err != nil {
			t.Fatal(err)
		}
		return k.Secret
	}
	acme, other := mkKey("acme"), mkKey("other")
	s := startServe(t, db)
	u := s.url

	t.Setenv(apiKeyEnv, acme)
	id := strings.TrimSpace(mustRemote(t, u, "remember", "--tenant", "acme", "--principal", "alice", "Alice drinks green tea."))
	oneLine := func(what string, code, wantCode int, errs, want string) {
		t.Helper()
		if code != wantCode || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, want) {
			t.Fatalf("%s: exit %d (want %d), stderr %q (want one line with %q)", what, code, wantCode, errs, want)
		}
	}

	// A --tenant other than the key's is refused, and nothing is written.
	code, _, errs := remote(t, u, "", "remember", "--tenant", "other", "--principal", "alice", "Alice drinks coffee.")
	oneLine("remember --tenant other", code, 1, errs, "memgate remember: forbidden: tenant: is fixed by the key")
	for _, args := range [][]string{
		{"get", id, "--tenant", "other", "--principal", "alice"},
		{"list", "--tenant", "other", "--principal", "alice"},
		{"recall", "--tenant", "other", "--principal", "alice", "green tea"},
		{"revoke", id, "--tenant", "other", "--principal", "alice"},
		{"forget", "--tenant", "other", "--principal", "alice"},
		{"counts", "--tenant", "other"},
	} {
		code, _, errs := remote(t, u, "", args...)
		oneLine(strings.Join(args, " "), code, 1, errs, "forbidden: tenant: is fixed by the key")
	}
	if got := mustRemote(t, u, "list", "--principal", "alice", "--json"); strings.Count(got, `"id"`) != 1 || !strings.Contains(got, id) {
		t.Fatalf("after refused writes, list: %s", got)
	}

	// Field errors read as they do locally.
	for _, args := range [][]string{
		{"remember", "--principal", "alice", "--kind", "bogus", "Alice drinks coffee."},
		{"remember", "--principal", "alice", "my password: hunter2hunter2"},
		{"recall", "--principal", "alice", "--k", "100000", "tea"},
	} {
		code, _, errs := remote(t, u, "", args...)
		lcode, _, lerrs := cli(t, db, "", append(args, "--tenant", "acme")...)
		if code != 1 || code != lcode || errs != lerrs {
			t.Fatalf("%v: remote exit %d %q, local exit %d %q", args, code, errs, lcode, lerrs)
		}
	}

	// A foreign id is exactly a missing id, remotely and locally.
	t.Setenv(apiKeyEnv, other)
	_, _, foreign := remote(t, u, "", "get", id, "--principal", "alice")
	_, _, missing := remote(t, u, "", "get", "m_01jzzzzzzzzzzzzzzzzzzzzzzz", "--principal", "alice")
	_, _, localMissing := cli(t, db, "", "get", "m_01jzzzzzzzzzzzzzzzzzzzzzzz", "--tenant", "acme", "--principal", "alice")
	if foreign != missing || foreign != localMissing || foreign != "memgate get: not_found: memory not found\n" {
		t.Fatalf("foreign %q, missing %q, local missing %q", foreign, missing, localMissing)
	}
	code, _, errs = remote(t, u, "", "revoke", id, "--principal", "alice")
	oneLine("revoke a foreign id", code, 1, errs, "memgate revoke: not_found: memory not found")

	// A wrong key, a missing key.
	t.Setenv(apiKeyEnv, "mgk_"+strings.Repeat("A", 43))
	code, _, errs = remote(t, u, "", "list", "--principal", "alice")
	oneLine("wrong key", code, 1, errs, "memgate list: unauthenticated")
	t.Setenv(apiKeyEnv, "")
	code, _, errs = remote(t, u, "", "list", "--principal", "alice")
	oneLine("no key", code, 1, errs, "memgate list: unauthenticated: MEMGATE_API_KEY: is not set")

	// --server from the environment; local-only flags and commands refuse it.
	t.Setenv(apiKeyEnv, acme)
	t.Setenv("MEMGATE_SERVER", u)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"get", id, "--principal", "alice"}, strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(out.String(), "green tea") {
		t.Fatalf("MEMGATE_SERVER: exit %d %q %q", code, out.String(), errb.String())
	}
	t.Setenv("MEMGATE_SERVER", "")
	code, _, errs = remote(t, u, "", "get", id, "--principal", "alice", "--db", db)
	oneLine("--db with --server", code, 2, errs, "--db applies to the local database")
	code, _, errs = remote(t, u, "", "import", "--batch", "10", "-")
	oneLine("import --batch with --server", code, 2, errs, "--batch applies to the local database")
	code, _, errs = remote(t, u, "", "sweep")
	oneLine("sweep --server", code, 2, errs, "no --server form")

	// A server that is not there: one line, unavailable, exit 1.
	s.stop()
	code, _, errs = remote(t, u, "", "list", "--principal", "alice")
	oneLine("server down", code, 1, errs, "memgate list: unavailable: GET /v1/memories: the memgate server could not be reached")
	if strings.Contains(errs, acme) || strings.Contains(errs, acme[4:]) {
		t.Fatal("an error line holds the key")
	}
}

// TestKeyedRemember: remember --key supersedes the memory that has the key,
// and get --key finds the newest, through a server and on its database.
func TestKeyedRemember(t *testing.T) {
	s, db, _ := serverKey(t)
	first := strings.TrimSpace(mustRemote(t, s.url, "remember", "--principal", "alice", "--kind", "preference", "--key", "pref:tea", "Alice drinks green tea."))
	second := strings.TrimSpace(mustRemote(t, s.url, "remember", "--principal", "alice", "--kind", "preference", "--key", "pref:tea", "Alice drinks oolong now."))
	third := strings.TrimSpace(mustCLI(t, db, "remember", "--tenant", "default", "--principal", "alice", "--kind", "preference", "--key", "pref:tea", "Alice drinks black tea now."))
	for what, out := range map[string]string{
		"remote": mustRemote(t, s.url, "get", "--principal", "alice", "--key", "pref:tea", "--json"),
		"local":  mustCLI(t, db, "get", "--tenant", "default", "--principal", "alice", "--key", "pref:tea", "--json"),
	} {
		var m struct{ ID, Key, Supersedes string }
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		if m.ID != third || m.Key != "pref:tea" || m.Supersedes != second {
			t.Fatalf("%s get --key: %+v, want %s superseding %s", what, m, third, second)
		}
	}
	if out := mustCLI(t, db, "get", first, "--tenant", "default", "--principal", "alice"); !strings.Contains(out, "superseded by "+second) && !strings.Contains(out, second) {
		t.Fatalf("the first memory: %s", out)
	}
	if code, _, errs := remote(t, s.url, "", "get", "--principal", "bob", "--key", "pref:tea"); code != 1 || !strings.Contains(errs, "not found") {
		t.Fatalf("another principal's key: exit %d %s", code, errs)
	}
	if code, _, errs := cli(t, db, "", "get", "x", "--tenant", "default", "--principal", "alice", "--key", "pref:tea"); code != 2 || !strings.Contains(errs, "not both") {
		t.Fatalf("an ID and a key: exit %d %s", code, errs)
	}
}
