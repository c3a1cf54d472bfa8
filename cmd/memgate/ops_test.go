package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeOnABusyPortCreatesNothing: serve binds before it opens the
// database, so a port in use fails the start with the bind error and
// leaves no database and no admin key behind; on a free port the same
// command creates both (the populated control).
func TestServeOnABusyPortCreatesNothing(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	db := newDB(t)
	for _, extra := range [][]string{{"--addr", busy.Addr().String()}, {"--addr", "127.0.0.1:0", "--metrics-addr", busy.Addr().String()}} {
		code, out, errs := runMemgate(append([]string{"serve", "--db", db}, extra...)...)
		if code == 0 || !strings.Contains(errs, "address already in use") {
			t.Fatalf("serve %v on a busy port: exit %d, stderr %q; want the bind error", extra, code, errs)
		}
		if secretRE.MatchString(out) || strings.Contains(out, "admin key") {
			t.Fatalf("serve %v on a busy port printed a key:\n%s", extra, out)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Fatalf("serve %v on a busy port left a database behind (%v)", extra, err)
		}
		if strings.Contains(errs, "created a new database") {
			t.Fatalf("serve %v on a busy port logged a creation:\n%s", extra, errs)
		}
	}
	s := startServe(t, db)
	if !secretRE.MatchString(s.stdout.String()) {
		t.Fatalf("serve on a free port printed no key:\n%s", s.stdout)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("serve on a free port made no database: %v", err)
	}
}

// TestServeRestartSaysHowToMakeAnAdminKey: a start over a database that has
// keys prints no key but the command that makes a new admin key, and that
// command, run as printed, makes one the server accepts. A first start does
// not print it (it prints the key).
func TestServeRestartSaysHowToMakeAnAdminKey(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	s := startServe(t, db)
	if strings.Contains(s.stdout.String(), "keys create --db") {
		t.Fatalf("a first start printed the new-key hint:\n%s", s.stdout)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	s = startServe(t, db)
	out := s.stdout.String()
	if secretRE.MatchString(out) {
		t.Fatalf("a restart printed a key:\n%s", out)
	}
	m := regexp.MustCompile(`(?m)^  memgate (keys create --db \S+ --tenant default --role admin)$`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "if its admin key is lost") {
		t.Fatalf("a restart does not say how to make a new admin key:\n%s", out)
	}
	args := strings.Fields(m[1])
	if args[3] != db {
		t.Fatalf("the hint names database %s, not %s", args[3], db)
	}
	code, made, errs := runMemgate(args...)
	key := secretRE.FindString(made)
	if code != 0 || key == "" {
		t.Fatalf("memgate %s: exit %d, %s %s", m[1], code, made, errs)
	}
	if code, body := get(t, s.url+"/v1/stats", key); code != http.StatusOK {
		t.Fatalf("GET /v1/stats with the new admin key: %d %s", code, body)
	}
}

// TestMissingDatabaseDirectorySaysSo: a --db in a directory that does not
// exist fails serve and the commands that create a database with a message
// naming the directory, and creates nothing; in an existing directory the
// same commands work (the control).
func TestMissingDatabaseDirectorySaysSo(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "no", "such")
	db := filepath.Join(dir, "memgate.db")
	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:0", "--db", db},
		{"remember", "--db", db, "--tenant", "t", "--principal", "p", "Alice drinks tea."},
		{"list", "--db", db, "--tenant", "t", "--principal", "p"},
	} {
		code, _, errs := runMemgate(args...)
		if code == 0 || !strings.Contains(errs, "the directory "+dir+" does not exist") || !strings.Contains(errs, "mkdir -p") {
			t.Fatalf("memgate %s: exit %d, stderr %q; want it to name the missing directory", args[0], code, errs)
		}
		if _, err := os.Stat(filepath.Dir(dir)); !os.IsNotExist(err) {
			t.Fatalf("memgate %s made a directory", args[0])
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mustRunWith(t, "--db", db, "remember", "--tenant", "t", "--principal", "p", "Alice drinks tea.")
	mustRunWith(t, "--db", db, "list", "--tenant", "t", "--principal", "p")
}

// TestServeLogOrderAndDurations: on a first start "created a new database"
// is logged before "serving", and every duration of the log (the request
// lines' "took", the engine's, "sweep_every", "stopped") is a Go duration
// string, never integer nanoseconds.
func TestServeLogOrderAndDurations(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	s := startServe(t, db)
	key := secretRE.FindString(s.stdout.String())
	for _, body := range []string{
		`{"principal":"alice","kind":"preference","source":"user","reason":"said so","content":"Alice drinks green tea."}`,
	} {
		req, _ := http.NewRequest("POST", s.url+"/v1/memories", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if code, body := get(t, s.url+"/v1/stats", key); code != http.StatusOK {
		t.Fatalf("GET /v1/stats: %d %s", code, body)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	var msgs []string
	durations := 0
	for _, line := range strings.Split(strings.TrimSpace(s.stderr.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line is not JSON: %q", line)
		}
		msgs = append(msgs, rec["msg"].(string))
		for k, v := range rec {
			if k != "took" && !strings.HasSuffix(k, "_took") && k != "sweep_every" && k != "timeout" {
				continue
			}
			str, ok := v.(string)
			if _, err := time.ParseDuration(str); !ok || err != nil {
				t.Errorf("%q in %q is %v, not a Go duration string", k, rec["msg"], v)
			}
			durations++
		}
	}
	created, serving := -1, -1
	for i, m := range msgs {
		switch {
		case m == "created a new database" && created < 0:
			created = i
		case m == "serving" && serving < 0:
			serving = i
		}
	}
	if created < 0 || serving < 0 || created > serving {
		t.Errorf("log order %q: want \"created a new database\" before \"serving\"", msgs)
	}
	if durations < 4 { // sweep_every, two requests' took, the shutdown's timeout, stopped
		t.Errorf("only %d durations in the log:\n%s", durations, s.stderr)
	}
}

// TestReembedProgressOnce: a reembed of one batch prints its progress line
// once, not once for the batch and again as the final line; one of several
// batches ends with the final count (populated control: the line is there).
func TestReembedProgressOnce(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	for _, f := range walkFacts {
		mustCLI(t, db, "remember", "--tenant", "acme", "--principal", "alice", f)
	}
	srv := fakeOllama(t, "fake-minilm")
	for _, batch := range []string{"100", "2"} {
		code, _, errs := cli(t, db, "", "reembed", "--tenant", "acme", "--batch", batch,
			"--embedder", "ollama:fake-minilm", "--embedder-url", srv.URL, "--json")
		if code != 0 {
			t.Fatalf("reembed --batch %s: exit %d: %s", batch, code, errs)
		}
		lines := regexp.MustCompile(`(?m)^reembed: .*$`).FindAllString(errs, -1)
		if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], "reembed: 5/5 examined") {
			t.Fatalf("reembed --batch %s: progress %q, want it to end with 5/5", batch, lines)
		}
		for i := 1; i < len(lines); i++ {
			if lines[i] == lines[i-1] {
				t.Fatalf("reembed --batch %s printed %q twice", batch, lines[i])
			}
		}
		if batch == "100" && len(lines) != 1 {
			t.Fatalf("reembed of one batch printed %d progress lines: %q", len(lines), lines)
		}
	}
}
