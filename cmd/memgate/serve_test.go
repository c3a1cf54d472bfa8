package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate/internal/logtest"
)

// syncBuffer captures log lines (or output) written while a test reads them.
type syncBuffer = logtest.Buffer

var (
	servingRE = regexp.MustCompile(`memgate: serving on (http://127\.0\.0\.1:\d+)\n`)
	secretRE  = regexp.MustCompile(`mgk_[A-Za-z0-9_-]{43}`)
)

// serving is one in-process "memgate serve".
type serving struct {
	url            string
	stdout, stderr *syncBuffer
	stop           func() int // cancels the context and returns the exit status
}

// startServe runs "memgate serve" on 127.0.0.1:0 with db and waits until it
// prints its address.
func startServe(t *testing.T, db string, extra ...string) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	done := make(chan int, 1)
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db}, extra...)
	go func() { done <- run(ctx, args, strings.NewReader(""), s.stdout, s.stderr) }()
	var once sync.Once
	code := -1
	s.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("serve did not stop within 30s; stderr:\n%s", s.stderr)
			}
		})
		return code
	}
	t.Cleanup(func() { s.stop() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := servingRE.FindStringSubmatch(s.stdout.String()); m != nil {
			s.url = m[1]
			return s
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d before serving; stdout:\n%s\nstderr:\n%s", code, s.stdout, s.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve printed no address within 30s; stdout:\n%s\nstderr:\n%s", s.stdout, s.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func get(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServeFirstStartPrintsAdminKeyOnce(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	s := startServe(t, db, "--sweep-every", "50ms")

	secrets := secretRE.FindAllString(s.stdout.String(), -1)
	if len(secrets) != 1 {
		t.Fatalf("first start printed %d keys, want 1:\n%s", len(secrets), s.stdout)
	}
	key := secrets[0]
	if !strings.Contains(s.stdout.String(), `tenant "default"`) {
		t.Errorf("the key's hint does not name its tenant:\n%s", s.stdout)
	}
	if code, body := get(t, s.url+"/healthz", ""); code != http.StatusOK {
		t.Fatalf("GET /healthz: %d %s", code, body)
	}
	// The printed key is an admin key of tenant "default"; a made-up one
	// is refused (populated control beside the refusal).
	if code, body := get(t, s.url+"/v1/stats", key); code != http.StatusOK {
		t.Fatalf("GET /v1/stats with the printed key: %d %s", code, body)
	}
	if code, _ := get(t, s.url+"/v1/stats", "mgk_"+strings.Repeat("A", 43)); code != http.StatusUnauthorized {
		t.Fatalf("GET /v1/stats with an unknown key: %d, want 401", code)
	}
	time.Sleep(120 * time.Millisecond) // let the sweeper run at least once

	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited with %d after a shutdown signal; stderr:\n%s", code, s.stderr)
	}
	// The log is JSON, one object per line, and never holds the secret.
	logs := s.stderr.String()
	if strings.Contains(logs, key) || strings.Contains(logs, key[4:]) {
		t.Fatal("the log holds the admin key's secret")
	}
	var sawShutdown, sawRequest bool
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		sawShutdown = sawShutdown || rec["msg"] == "stopped"
		sawRequest = sawRequest || rec["msg"] == "http request"
	}
	if !sawShutdown || !sawRequest {
		t.Errorf("log lacks the request or the shutdown lines:\n%s", logs)
	}
	// After the shutdown, nothing listens.
	if _, err := http.Get(s.url + "/healthz"); err == nil {
		t.Fatal("the server still answers after shutdown")
	}

	// A second start on the same database prints no new key, and the
	// first one still works.
	s2 := startServe(t, db)
	if n := len(secretRE.FindAllString(s2.stdout.String(), -1)); n != 0 {
		t.Fatalf("second start printed %d keys:\n%s", n, s2.stdout)
	}
	if code, body := get(t, s2.url+"/v1/stats", key); code != http.StatusOK {
		t.Fatalf("GET /v1/stats with the first key after a restart: %d %s", code, body)
	}
	if code := s2.stop(); code != 0 {
		t.Fatalf("second serve exited with %d; stderr:\n%s", code, s2.stderr)
	}
	// The key list has the one bootstrap key.
	out := mustCLI(t, db, "keys", "list", "--tenant", "default", "--json")
	var list struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Keys) != 1 || list.Keys[0]["role"] != "admin" {
		t.Fatalf("keys list after two starts: %s (%v)", out, err)
	}
}

func TestServeDoesNotBootstrapOverExistingKeys(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	// A database whose only key is revoked still has keys: serve must not
	// mint a fresh admin key anyone starting it could read.
	var made CreatedKey
	if err := json.Unmarshal([]byte(mustCLI(t, db, "keys", "create", "--tenant", "acme", "--role", "admin", "--json")), &made); err != nil {
		t.Fatal(err)
	}
	mustCLI(t, db, "keys", "revoke", "--tenant", "acme", made.Key.ID)
	s := startServe(t, db)
	if n := len(secretRE.FindAllString(s.stdout.String(), -1)); n != 0 {
		t.Fatalf("serve printed %d keys over a database with keys:\n%s", n, s.stdout)
	}
	if code, _ := get(t, s.url+"/v1/stats", made.Secret); code != http.StatusUnauthorized {
		t.Fatalf("revoked key: %d, want 401", code)
	}
}

func TestServeRefusesABadAddress(t *testing.T) {
	t.Parallel()
	code, _, errs := cli(t, newDB(t), "", "serve", "--addr", "127.0.0.1:notaport")
	if code != 1 || !strings.Contains(errs, "listen") {
		t.Fatalf("serve on a bad address: exit %d, %q", code, errs)
	}
}

// TestServeMaxDBBytes: --max-db-bytes caps the database, so that remembers
// end in 503 unavailable once it is full (the control: the first ones are
// stored); a negative cap and a cap with --postgres are refused.
func TestServeMaxDBBytes(t *testing.T) {
	t.Parallel()
	s := startServe(t, newDB(t), "--max-db-bytes", "1000000", "--rate", "-1")
	key := secretRE.FindString(s.stdout.String())
	filler := strings.Repeat("Alice waters the tomatoes by the south fence every second evening. ", 40)
	stored := 0
	for i := 0; ; i++ {
		if i == 500 {
			t.Fatalf("no 503 after %d remembers (%d stored): the cap does not hold", i, stored)
		}
		body := `{"principal":"alice","kind":"fact","source":"user","reason":"test","content":"note ` + strconv.Itoa(i) + " " + filler + `"}`
		req, _ := http.NewRequest("POST", s.url+"/v1/memories", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusCreated {
			stored++
			continue
		}
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), `"code":"unavailable"`) || !strings.Contains(string(b), "full") || stored == 0 {
			t.Fatalf("remember %d (%d stored): %d %s, want 503 unavailable (full) after some 201s", i, stored, resp.StatusCode, b)
		}
		break
	}
	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:0", "--max-db-bytes", "-1"},
		{"serve", "--addr", "127.0.0.1:0", "--max-db-bytes", "1000000", "--postgres", "postgres://u@127.0.0.1:1/db"},
	} {
		var out, errs bytes.Buffer
		if code := run(context.Background(), args, strings.NewReader(""), &out, &errs); code == 0 || !strings.Contains(errs.String(), "--max-db-bytes") {
			t.Errorf("%v: exit %d, %q; want a refusal naming --max-db-bytes", args, code, errs.String())
		}
	}
}

// The heap floor is off where the operator set GOGC, unless the flag is
// given too; without GOGC the flag (or its default) holds.
func TestHeapFloorYieldsToGOGC(t *testing.T) {
	for _, c := range []struct {
		name     string
		flag     int64
		explicit bool
		gogc     string
		want     int64
	}{
		{"default", 0, false, "", 0},
		{"GOGC set", 0, false, "200", -1},
		{"GOGC off", 0, false, "off", -1},
		{"GOGC set and the flag given", 32 << 20, true, "200", 32 << 20},
		{"the flag alone", 32 << 20, true, "", 32 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := heapFloor(c.flag, c.explicit, c.gogc); got != c.want {
				t.Fatalf("heapFloor(%d, %v, %q) = %d, want %d", c.flag, c.explicit, c.gogc, got, c.want)
			}
		})
	}
}
